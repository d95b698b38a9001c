"""benchmarks/levers.py: two arms branched from one state, trained the same iterations
and scored."""

from __future__ import annotations

import json

import numpy as np
import pytest

import branches
import evaluation
import funcs
import loggers
import runs
import storage
from benchmarks import levers
from model import Residual_CNN


@pytest.fixture(scope="module")
def start(tiny_cfg, tmp_path_factory):
    """A real tiny run of two iterations, the arms' common start."""
    folder = tmp_path_factory.mktemp("levers") / "start"
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, MIN_MEMORY_SIZE=32, EVAL_POSITIONS=0,
                           SCORING_THRESHOLD=0.5, LOGGERS={})
    funcs.train(2, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder


def ponsFolder(tmp_path, lines: list[str]):
    """A folder of all six Pons set files, each holding `lines` (position and score)."""
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in evaluation.PONS_SETS:
        (pons / name).write_text("".join(line + "\n" for line in lines))
    return pons


def test_two_arms_train_the_same_iterations_from_one_start_and_are_scored(start, tmp_path, capsys):
    pons = ponsFolder(tmp_path, ["2252576253462244111563365343671351441 -1", "5554224333234511764415115 4"])
    before = (start / "metrics.jsonl").read_text()
    out = tmp_path / "levers"
    record = levers.main(["--from", str(start), "--out", str(out), "--iterations", "1", "--set", "VALUE_HEAD=wdl",
                          "--sims", "2", "--won", "2", "--drawn", "2", "--limit", "2", "--pons-folder", str(pons)])
    assert (start / "metrics.jsonl").read_text() == before  # the start is branched, never trained
    assert record["start_iteration"] == 2 and record["lever"] == {"VALUE_HEAD": "wdl"}
    assert runs.runConfig(out / "lever").VALUE_HEAD == "wdl" and runs.runConfig(out / "baseline").VALUE_HEAD == "tanh"
    for name in ("baseline", "lever"):
        arm = record["arms"][name]
        assert runs.readCheckpoint(out / name)["iteration"] == 3 and arm["iterations"] == 1
        assert arm["version"] == runs.readMetrics(out / name)[-1]["best_player_version"]
        assert set(arm["pons"]) == set(evaluation.PONS_SETS) and arm["pons_positions"] == 2
        assert arm["whole_games"]["won"]["games"] == 2 and arm["whole_games"]["drawn"]["games"] == 2
        # the scores are the arm's own records: its curve row and whole-game record of that version
        assert [(row["version"], row["sims"], row["limit"]) for row in runs.readCurve(out / name)] == \
            [(arm["version"], 2, 2)]
        games = json.loads(storage.whole_games_path(out / name, arm["version"], 2).read_text())
        assert games["summary"] == arm["whole_games"]
    assert json.loads((out / "levers.json").read_text()) == json.loads(json.dumps(record))
    assert set(record["kept_by_one_arm"]) == {"won", "drawn"}
    assert all(counts["first_only"] + counts["other_only"] <= 2 for counts in record["kept_by_one_arm"].values())
    table = capsys.readouterr().out
    assert "lever {'VALUE_HEAD': 'wdl'}" in table and "\nbaseline " in table and "\nlever " in table
    again = levers.main(["--from", str(start), "--out", str(out), "--iterations", "1", "--set", "VALUE_HEAD=wdl",
                         "--sims", "2", "--won", "2", "--drawn", "2", "--limit", "2", "--pons-folder", str(pons)])
    assert runs.readCheckpoint(out / "lever")["iteration"] == 3  # an arm already there is scored as it is
    assert again["arms"] == record["arms"] and len(runs.readCurve(out / "lever")) == 1  # from its records


def test_a_baseline_run_is_scored_where_it_passed_through_the_start_and_records_are_kept(start, tmp_path,
                                                                                         capsys):
    pons = ponsFolder(tmp_path, ["2252576253462244111563365343671351441 -1"])
    frozen = tmp_path / "frozen"
    branches.branchRun(start, frozen, {}, say=lambda _: None)  # the start kept as it is
    went_on = tmp_path / "went_on"
    branches.branchRun(start, went_on, {}, say=lambda _: None)
    funcs.train(1, runs.folderConfig(went_on), progress=False, say=lambda _: None)
    loggers.disable_all()
    version = runs.readMetrics(went_on)[-1]["best_player_version"]
    main_record = storage.whole_games_path(went_on, version, 2)
    storage.write_json(main_record, {"won_starts": 9, "drawn_starts": 9, "max_opening_moves": 6, "seed": 0})
    args = ["--from", str(frozen), "--out", str(tmp_path / "cmp"), "--iterations", "1", "--set", "MCTS_SIMS=3",
            "--sims", "2", "--won", "1", "--drawn", "1", "--limit", "1", "--pons-folder", str(pons)]
    record = levers.main(args + ["--baseline", str(went_on)])
    assert record["arms"]["baseline"]["folder"] == str(went_on) and not (tmp_path / "cmp" / "baseline").exists()
    assert json.loads(main_record.read_text())["won_starts"] == 9  # another record is never replaced
    beside = json.loads(storage.whole_games_path(went_on, version, 2, (1, 1)).read_text())
    assert beside["summary"] == record["arms"]["baseline"]["whole_games"]
    rows = runs.readMetrics(went_on)  # a baseline that did not pass through the start's state
    rows[1]["best_player_version"] += 5
    storage.write_text(storage.metrics_path(went_on), "".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(SystemExit):
        levers.main(args[:3] + [str(tmp_path / "cmp2")] + args[4:] + ["--baseline", str(went_on)])
    assert "did not pass through the start's state: at iteration 2 its best version is" in capsys.readouterr().err


def test_a_comparison_keeps_its_start_when_the_source_trains_on(start, tmp_path, capsys):
    source = tmp_path / "source"
    branches.branchRun(start, source, {}, say=lambda _: None)
    out = tmp_path / "cmp"
    assert levers.pinnedStart(source, out) == 2
    funcs.train(1, runs.folderConfig(source), progress=False, say=lambda _: None)
    loggers.disable_all()
    assert levers.pinnedStart(source, out) == 2
    with pytest.raises(ValueError, match="has trained on since the comparison began at iteration 2"):
        levers.trainArm(source, out / "lever", {"MCTS_SIMS": 3}, 2, 3)


def test_a_dearer_lever_is_compared_at_equal_hours_with_a_longer_baseline(start, tmp_path, capsys):
    pons = ponsFolder(tmp_path, ["2252576253462244111563365343671351441 -1"])
    out = tmp_path / "cmp"
    record = levers.main(["--from", str(start), "--out", str(out), "--iterations", "1", "--baseline-iterations", "2",
                          "--set", "MCTS_SIMS=3", "--sims", "2", "--won", "1", "--drawn", "1", "--limit", "1",
                          "--pons-folder", str(pons)])
    assert runs.readCheckpoint(out / "baseline")["iteration"] == 4
    assert runs.readCheckpoint(out / "lever")["iteration"] == 3
    assert (record["arms"]["baseline"]["iterations"], record["arms"]["lever"]["iterations"]) == (2, 1)
    assert record["arms"]["baseline"]["version"] == runs.readMetrics(out / "baseline")[-1]["best_player_version"]
    assert "2 iterations of the baseline, 1 of the lever" in capsys.readouterr().out


def test_a_lever_arm_can_start_from_a_network_of_its_own_shape(start, tmp_path, capsys):
    pons = ponsFolder(tmp_path, ["2252576253462244111563365343671351441 -1"])
    smaller = [{"filters": 4, "kernel_size": (3, 3)}]
    cfg = runs.folderConfig(start).replace(HIDDEN_CNN_LAYERS=smaller)
    student = Residual_CNN.fromConfig(cfg, (2, 6, 7), 42)
    storage.save_model(student.model, tmp_path / "student.keras")
    out = tmp_path / "cmp"
    args = ["--from", str(start), "--out", str(out), "--iterations", "1", "--set",
            'HIDDEN_CNN_LAYERS=[{"filters": 4, "kernel_size": [3, 3]}]',
            "--sims", "2", "--won", "1", "--drawn", "1", "--limit", "1", "--pons-folder", str(pons)]
    with pytest.raises(SystemExit):  # a network of the source's shape is not the lever's
        levers.main(args[:3] + [str(tmp_path / "wrong")] + args[4:]
                    + ["--branch-network", str(storage.current_model_path(start))])
    assert "narrower (4 filters) than the source's (8)" in capsys.readouterr().err
    assert not (tmp_path / "wrong" / "lever").exists()
    record = levers.main(args + ["--branch-network", str(tmp_path / "student.keras")])
    assert record["network"] == str(tmp_path / "student.keras")
    lever = runs.folderConfig(out / "lever")
    assert lever.HIDDEN_CNN_LAYERS == smaller and runs.readCheckpoint(out / "lever")["iteration"] == 3
    start_version = runs.readCheckpoint(start)["best_player_version"]
    kept = storage.load_model(storage.model_path(out / "lever", start_version)).get_weights()
    assert all(np.array_equal(a, b) for a, b in zip(kept, student.model.get_weights()))
    assert f"with the networks of {tmp_path / 'student.keras'}" in capsys.readouterr().out


def test_an_arm_short_of_the_iteration_is_named(start):
    with pytest.raises(ValueError, match=r"has not reached iteration 5 \(its metrics end at 2\)"):
        levers.versionAt(start, 5)
    assert storage.checkpoint_path(start).exists()


def test_a_comparison_without_a_lever_is_refused(start, tmp_path, capsys):
    with pytest.raises(SystemExit):
        levers.main(["--from", str(start), "--out", str(tmp_path), "--iterations", "1"])
    assert "give the lever: at least one --set NAME=VALUE" in capsys.readouterr().err



@pytest.mark.parametrize("extra, message", [
    (["--won", "0", "--drawn", "0"], "--won and --drawn must not be negative, and not both 0"),
    (["--set", "NO_SUCH_SETTING=1"], "NO_SUCH_SETTING"),
    (["--branch-network", "{tmp}/missing.keras"], "--branch-network {tmp}/missing.keras: no such file"),
    (["--pons-folder", "{tmp}/bad"], "Test_L1_R1, line 1"),
    (["--pons-folder", "{tmp}"], "lacks the set files"),
    (["--out", "{tmp}/file.txt"], "argument --out: {tmp}/file.txt is a file"),
])
def test_wrong_arguments_are_refused_before_any_training(start, tmp_path, capsys, extra, message):
    good = ponsFolder(tmp_path, ["2252576253462244111563365343671351441 -1"])
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in evaluation.PONS_SETS:
        (bad / name).write_text((good / name).read_text() if name != "Test_L1_R1" else "44 four\n")
    (tmp_path / "file.txt").write_text("kept")
    out = tmp_path / "cmp"
    with pytest.raises(SystemExit):
        levers.main(["--from", str(start), "--out", str(out), "--iterations", "1", "--set", "MCTS_SIMS=3",
                     "--limit", "1", "--pons-folder", str(good), *(arg.format(tmp=tmp_path) for arg in extra)])
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert not out.exists() and (tmp_path / "file.txt").read_text() == "kept"
