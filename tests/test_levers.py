"""benchmarks/levers.py: two arms branched from one state, trained the same iterations
and scored."""

from __future__ import annotations

import json

import pytest

import evaluation
import funcs
import loggers
import runs
import storage
from benchmarks import levers


@pytest.fixture(scope="module")
def start(tiny_cfg, tmp_path_factory):
    """A real tiny run of two iterations, the arms' common start."""
    folder = tmp_path_factory.mktemp("levers") / "start"
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, MIN_MEMORY_SIZE=32, EVAL_POSITIONS=0,
                           SCORING_THRESHOLD=0.5, LOGGERS={})
    funcs.train(2, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder


def test_two_arms_train_the_same_iterations_from_one_start_and_are_scored(start, tmp_path, capsys):
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in evaluation.PONS_SETS:
        (pons / name).write_text("2252576253462244111563365343671351441 -1\n5554224333234511764415115 4\n")
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
    table = capsys.readouterr().out
    assert "lever {'VALUE_HEAD': 'wdl'}" in table and "\nbaseline " in table and "\nlever " in table
    again = levers.main(["--from", str(start), "--out", str(out), "--iterations", "1", "--set", "VALUE_HEAD=wdl",
                         "--sims", "2", "--won", "2", "--drawn", "2", "--limit", "2", "--pons-folder", str(pons)])
    assert runs.readCheckpoint(out / "lever")["iteration"] == 3  # an arm already there is scored as it is
    assert again["arms"] == record["arms"] and len(runs.readCurve(out / "lever")) == 1  # from its records


def test_an_arm_short_of_the_iteration_is_named(start):
    with pytest.raises(ValueError, match=r"has not reached iteration 5 \(its metrics end at 2\)"):
        levers.versionAt(start, 5)
    assert storage.checkpoint_path(start).exists()


def test_a_comparison_without_a_lever_is_refused(start, tmp_path, capsys):
    with pytest.raises(SystemExit):
        levers.main(["--from", str(start), "--out", str(tmp_path), "--iterations", "1"])
    assert "give the lever: at least one --set NAME=VALUE" in capsys.readouterr().err
