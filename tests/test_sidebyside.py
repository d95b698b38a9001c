"""Two runs side by side at equal iterations (benchmarks/sidebyside.py), from their metrics."""

from __future__ import annotations

import json

import pytest

import evaluation
import runs
import storage
from benchmarks import sidebyside
from config import ConfigError


def metricsRow(iteration: int, agent: float, promoted: bool = False, seconds: float = 360.0) -> dict:
    return {"iteration": iteration, "best_player_version": 1, "promoted": promoted,
            "seconds": {"selfplay": seconds / 2, "retrain": seconds / 2},
            "mistake_rate": agent, "network_mistake_rate": agent + 0.1}


def startedRun(folder, cfg, rates: list[float], seconds: float = 360.0):
    """A run folder (config.json and version 1, as training starts one) with a metrics row per rate."""
    runs.openRun(cfg.replace(RUN_FOLDER=str(folder)), say=lambda _: None)
    for iteration, rate in enumerate(rates, start=1):
        storage.append_line(storage.metrics_path(folder),
                            json.dumps(metricsRow(iteration, rate, iteration % 2 == 0, seconds)))
    return folder


def test_windows_average_each_runs_scores_up_to_the_shorter_run(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1])
    lever = startedRun(tmp_path / "lever", tiny_cfg.replace(COLOUR_PLANE=True), [0.4, 0.4, 0.2, 0.2, 0.1],
                       seconds=180.0)
    old = sidebyside.windows(runs.readMetrics(baseline), 2, 5)
    assert [(w.first, w.last, w.promotions) for w in old] == [(1, 2, 1), (3, 4, 1), (5, 5, 0)]
    assert [w.agent for w in old] == pytest.approx([0.45, 0.25, 0.1])
    assert [w.network for w in old] == pytest.approx([0.55, 0.35, 0.2])
    assert [w.hours for w in old] == pytest.approx([0.2, 0.4, 0.5])
    report = sidebyside.compare(baseline, lever, 2)
    assert report.startswith(f"baseline {baseline}, lever {lever}: the first 5 iterations, means over 2; one score "
                             f"on {tiny_cfg.EVAL_POSITIONS} positions has a standard error of 15.0 points at 10.0%")
    assert report.splitlines()[-3:] == ["| 1-2 | 0.20 | 45.0 / 55.0 | 0.10 | 40.0 / 50.0 | -5.0 | 1, 1 |",
                                        "| 3-4 | 0.40 | 25.0 / 35.0 | 0.20 | 20.0 / 30.0 | -5.0 | 1, 1 |",
                                        "| 5-5 | 0.50 | 10.0 / 20.0 | 0.25 | 10.0 / 20.0 | +0.0 | 0, 0 |"]


def test_runs_that_score_other_positions_or_nothing_are_refused(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4])
    other = startedRun(tmp_path / "other", tiny_cfg.replace(SEED=1), [0.5, 0.4])
    with pytest.raises(ConfigError, match=r"different benchmark positions \(EVAL_POSITIONS, SEED\): 4, 0, 4, 1"):
        sidebyside.compare(baseline, other, 2)
    empty = startedRun(tmp_path / "empty", tiny_cfg, [])
    with pytest.raises(ConfigError, match="a run has trained no iteration yet"):
        sidebyside.compare(baseline, empty, 2)
    rows = runs.readMetrics(baseline)
    rows[1]["mistake_rate"] = None
    with pytest.raises(ValueError, match="iteration 2 has no benchmark score"):
        sidebyside.windows(rows, 2, 2)
    assert sidebyside.oneScoreError(0.15, 200) == pytest.approx(0.02525, abs=1e-5)


def curveRow(version: int, iteration: int, agent: float, sims: int = 600, limit: int = 1000) -> dict:
    return {"version": version, "iteration": iteration, "hours": iteration / 10, "sims": sims, "limit": limit,
            "sets": {name: {"agent": agent, "network": agent + 1} for name in evaluation.PONS_SETS}}


def test_pons_rows_stand_beside_the_baselines_nearest_in_iteration_at_the_same_budget(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4])
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.5, 0.4])
    for folder, rows in ((baseline, [curveRow(10, 40, 5.0), curveRow(20, 100, 3.0), curveRow(30, 60, 2.0, sims=32)]),
                         (lever, [curveRow(12, 70, 4.0), curveRow(15, 90, 2.5), curveRow(17, 95, 2.0, limit=200)])):
        for row in rows:
            storage.append_line(storage.curve_path(folder), json.dumps(row))
    pairs = sidebyside.ponsBeside(runs.readCurve(baseline), runs.readCurve(lever))
    assert [(old["version"], new["version"]) for old, new in pairs] == [(10, 12), (20, 15)]  # 70: a tie, the earlier
    report = sidebyside.compare(baseline, lever, 2)
    assert report.splitlines()[-1] == "| 20 (100) | 15 (90) | 600, 1000 | " + " | ".join(["3.0 / 2.5"] * 6) + " |"
    assert "end-easy | middle-easy | middle-medium | begin-easy | begin-medium | begin-hard" in report
    assert "Pons' sets" not in sidebyside.compare(baseline, startedRun(tmp_path / "unscored", tiny_cfg, [0.3]), 2)


def test_hour_windows_compare_a_dearer_lever_at_equal_training_hours(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1])  # 0.1 hours each
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.4, 0.2, 0.1], seconds=720.0)  # 0.2 hours each
    old = sidebyside.hourWindows(runs.readMetrics(baseline), 0.2, 0.6)
    assert [(w.first, w.last, w.promotions) for w in old] == [(1, 2, 1), (3, 4, 1), (5, 6, 1)]
    assert [w.agent for w in old] == pytest.approx([0.45, 0.25, 0.1])
    assert [w.hours for w in old] == pytest.approx([0.2, 0.4, 0.6])
    report = sidebyside.compare(baseline, lever, 50, hours=0.2)
    assert "the first 0.60 training hours of each, means over 0.2 hours" in report
    assert report.splitlines()[-3:] == ["| 0.00-0.20 | 1-2 | 45.0 / 55.0 | 1-1 | 40.0 / 50.0 | -5.0 | 1, 0 |",
                                        "| 0.20-0.40 | 3-4 | 25.0 / 35.0 | 2-2 | 20.0 / 30.0 | -5.0 | 1, 1 |",
                                        "| 0.40-0.60 | 5-6 | 10.0 / 20.0 | 3-3 | 10.0 / 20.0 | +0.0 | 1, 0 |"]
    narrow = sidebyside.hourWindows(runs.readMetrics(lever), 0.15, 0.6)  # no iteration ends in the first 0.15 hours
    assert narrow[0] is None and [w.first for w in narrow[1:]] == [1, 2, 3]
    assert "| 0.00-0.15 | 1-1 | 50.0 / 60.0 | - | - | - | 0, - |" in sidebyside.compare(baseline, lever, 50, hours=0.15)


def test_pons_rows_pair_by_hours_when_the_runs_are_compared_at_equal_hours(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4])
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.5, 0.4])
    for folder, rows in ((baseline, [curveRow(10, 40, 5.0), curveRow(20, 100, 3.0)]),
                         (lever, [curveRow(12, 45, 4.0)])):
        for row in rows:
            storage.append_line(storage.curve_path(folder), json.dumps(dict(row, hours=row["iteration"] / 10)))
    storage.append_line(storage.curve_path(lever), json.dumps(dict(curveRow(13, 50, 2.0), hours=9.0)))
    pairs = sidebyside.ponsBeside(runs.readCurve(baseline), runs.readCurve(lever), "hours")
    assert [(old["version"], new["version"]) for old, new in pairs] == [(10, 12), (20, 13)]
    last = sidebyside.compare(baseline, lever, 2, hours=0.1).splitlines()[-1]
    assert last.startswith("| 20 (10.00 h) | 13 (9.00 h) |")


def test_the_command_line_takes_a_window_or_hours_not_both(tmp_path, tiny_cfg, capsys):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4])
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.4, 0.3])
    sidebyside.main([str(baseline), str(lever), "--hours", "0.1"])
    assert "| 0.10-0.20 | 2-2 | 40.0 / 50.0 | 2-2 | 30.0 / 40.0 | -10.0 | 1, 1 |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        sidebyside.main([str(baseline), str(lever), "--hours", "0.1", "--window", "2"])
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sidebyside.main([str(baseline), str(lever), "--hours", "0"])


def test_a_dearer_lever_stands_beside_the_baselines_iterations_of_equal_cost(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1])
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.4, 0.2, 0.1, 0.1], seconds=720.0)
    old = sidebyside.windows(runs.readMetrics(baseline), 1, 3, scale=2.0)
    assert [(w.first, w.last) for w in old] == [(1, 2), (3, 4), (5, 6)]
    assert [w.agent for w in old] == pytest.approx([0.45, 0.25, 0.1])
    with pytest.raises(ValueError, match="8 iterations to compare, the run has trained 7"):
        sidebyside.windows(runs.readMetrics(baseline), 1, 4, scale=2.0)
    report = sidebyside.compare(baseline, lever, 1, cost=2.0)
    assert "the lever's first 3 iterations beside the baseline's 6 (an iteration of the lever costing 2 of" in report
    assert report.splitlines()[-3:] == ["| 1-2, 1-1 | 0.20 | 45.0 / 55.0 | 0.20 | 40.0 / 50.0 | -5.0 | 1, 0 |",
                                        "| 3-4, 2-2 | 0.40 | 25.0 / 35.0 | 0.40 | 20.0 / 30.0 | -5.0 | 1, 1 |",
                                        "| 5-6, 3-3 | 0.60 | 10.0 / 20.0 | 0.60 | 10.0 / 20.0 | +0.0 | 1, 0 |"]
    pairs = sidebyside.ponsBeside([curveRow(10, 40, 5.0), curveRow(20, 80, 3.0)], [curveRow(12, 38, 4.0)], scale=2.0)
    assert [(old["version"], new["version"]) for old, new in pairs] == [(20, 12)]
    with pytest.raises(SystemExit):
        sidebyside.main([str(baseline), str(lever), "--hours", "0.1", "--cost", "2"])


def test_a_baseline_with_no_iteration_within_the_levers_hours_is_refused(tmp_path, tiny_cfg):
    baseline = startedRun(tmp_path / "baseline", tiny_cfg, [0.5, 0.4], seconds=3600.0)
    lever = startedRun(tmp_path / "lever", tiny_cfg, [0.4], seconds=360.0)
    with pytest.raises(ConfigError, match="the baseline ended no iteration within the lever's 0.10 hours"):
        sidebyside.compare(baseline, lever, 2, hours=0.05)
