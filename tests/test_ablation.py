"""The ablation benchmark: variants of the strong preset, training for a time budget."""

from __future__ import annotations

from benchmarks import ablation

import config
import funcs
import runs


def test_each_variant_changes_only_its_lever_and_trains_in_its_own_folder(tmp_path):
    bookkeeping = {"RUN_FOLDER", "EVAL_POSITIONS", "LOGGERS"}
    for name, (_, changes) in ablation.VARIANTS.items():
        cfg = ablation.variantConfig(name, tmp_path)
        differing = {k for k, v in cfg.as_dict().items() if v != getattr(config.STRONG, k)}
        assert differing - bookkeeping == set(changes), name
        assert cfg.path("RUN_FOLDER") == tmp_path / name and cfg.EVAL_POSITIONS == 0
    assert ablation.VARIANTS["strong"][1] == {}


def test_training_stops_once_the_phase_times_reach_the_budget_and_resumes_there(tmp_path, tiny_cfg):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), EPISODES=2, MCTS_SIMS=4, MIN_MEMORY_SIZE=32,
                           EVAL_POSITIONS=0)
    quiet = {"progress": False, "say": lambda _: None}
    assert len(funcs.train(None, cfg, hours=1e-3 / 3600, **quiet)) == 1  # any iteration outlasts a millisecond
    hours = runs.trainingHours(runs.readMetrics(tmp_path / "run"))
    assert funcs.train(None, cfg, hours=hours[-1], **quiet) == []  # the budget is already spent
    longer = funcs.train(None, cfg, hours=hours[-1] + 1e-3 / 3600, **quiet)
    assert [row["iteration"] for row in longer] == [2]
    assert [row["iteration"] for row in funcs.train(1, cfg, hours=10.0, **quiet)] == [3]  # iterations stop first


def test_the_table_compares_each_variant_with_the_strong_preset_at_the_same_time():
    rows = [{"variant": "strong", "minutes": 10, "iterations": 12, "best_version": 8, "agent": 30.0, "network": 35.5},
            {"variant": "puct", "minutes": 10, "iterations": 14, "best_version": 6, "agent": 34.5, "network": 40.0},
            {"variant": "puct", "minutes": 5, "iterations": 7, "best_version": 4, "agent": 38.0, "network": 41.0}]
    lines = ablation.ablationTable(rows).splitlines()[2:]
    assert [line.split()[:2] for line in lines] == [["puct", "5"], ["strong", "10"], ["puct", "10"]]
    assert "+4.5" in lines[2] and "PUCT root search" in lines[2]
    assert lines[0].split()[6] == "PUCT"  # no strong row at 5 minutes: no difference shown


def test_the_table_keeps_its_columns_aligned_for_the_longest_variant_name():
    rows = [{"variant": name, "minutes": 8, "iterations": 20, "best_version": 9, "agent": 30.0, "network": 35.0}
            for name in ablation.VARIANTS]
    header, _, *lines = ablation.ablationTable(rows).splitlines()
    minutes_end = header.index("minutes") + len("minutes")
    assert all(line[minutes_end - 1] == "8" and line[minutes_end] == " " for line in lines)
