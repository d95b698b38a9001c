"""The self-play benchmark's measuring helpers (benchmarks/selfplay.py), on the tiny network."""

from __future__ import annotations

import pytest

from benchmarks import selfplay

from game import ACTION_SIZE, INPUT_SHAPE
from model import Residual_CNN


def test_side_by_side_replays_exactly_the_calls_self_play_made(tiny_cfg):
    cfg = tiny_cfg.replace(LOGGERS={name: False for name in tiny_cfg.LOGGERS})
    played = Residual_CNN.fromConfig(cfg, INPUT_SHAPE, ACTION_SIZE)
    alone = selfplay.InstantNetwork()
    recorded = selfplay.recordCalls(alone)
    rate, alone_rate, share = selfplay.sideBySide(played, alone, cfg)
    assert "predict" not in vars(played)  # the recording wrapper is gone again
    calls = [call.size for call in recorded]
    replayed = calls[len(set(calls)):]  # after one untimed warm-up call per batch size
    assert len(replayed) > 1 and sum(replayed) == played.positionsEvaluated  # the same positions, in the same calls
    assert rate > 0 and alone_rate > rate  # an instant network outruns any self-play
    assert all(call.seconds > 0 for call in recorded)
    assert 0 < share < 1  # self-play's network calls take part of its time, never all of it


def test_a_replay_plays_the_recorded_games_again_without_the_network(tiny_cfg):
    cfg = tiny_cfg.replace(LOGGERS={name: False for name in tiny_cfg.LOGGERS})
    played = Residual_CNN.fromConfig(cfg, INPUT_SHAPE, ACTION_SIZE)
    positions, seconds, calls = selfplay.recordedSelfplay(played, cfg)
    idle = selfplay.ReplayedNetwork(calls, pause=True)
    replayed_positions, replayed_seconds, replayed = selfplay.recordedSelfplay(idle, cfg)
    assert replayed_positions == positions and idle.answered == len(calls)  # every call, in order
    assert [call.size for call in replayed] == [call.size for call in calls]
    assert replayed_seconds >= sum(call.seconds for call in calls)  # it idled as long as the network worked
    assert 0 < selfplay.outsideCalls(replayed_seconds, replayed) < replayed_seconds
    assert 0 < selfplay.replayedSearchSeconds(calls, cfg, pause=False) < seconds


def test_a_replay_of_other_games_is_refused(tiny_cfg):
    cfg = tiny_cfg.replace(LOGGERS={name: False for name in tiny_cfg.LOGGERS})
    played = Residual_CNN.fromConfig(cfg, INPUT_SHAPE, ACTION_SIZE)
    _, _, calls = selfplay.recordedSelfplay(played, cfg)
    with pytest.raises(RuntimeError, match="not the same games"):
        selfplay.replayedSearchSeconds(calls, cfg.replace(EPISODES=cfg.EPISODES + 1), pause=False)


# -- the iteration benchmark (benchmarks/iteration.py) ---------------------------------------------
def test_iteration_medians_leave_out_the_first_iteration():
    from benchmarks import iteration
    seconds = [{"selfplay": 50.0, "retrain": 9.0, "tournament": 1.0, "evaluation": 8.0, "save": 1.0},
               {"selfplay": 6.0, "retrain": 5.0, "tournament": 2.0, "save": 0.5},
               {"selfplay": 8.0, "retrain": 3.0, "tournament": 2.0, "evaluation": 3.0, "save": 0.5},
               {"selfplay": 7.0, "retrain": 4.0, "tournament": 2.0, "save": 0.5}]
    medians = iteration.medians(seconds)
    assert medians["selfplay"] == 7.0 and medians["retrain"] == 4.0 and medians["evaluation"] == 0.0
    assert medians["total"] == pytest.approx(7.0 + 4.0 + 2.0 + 0.0 + 0.5)
    text = iteration.table({"base": medians, "new": {**medians, "selfplay": 3.5, "total": medians["total"] - 3.5}})
    assert "0.50" in text.splitlines()[1]  # self-play's ratio, new to base
    assert "self-play's share (new): 35%" in text


def test_iteration_benchmark_times_a_resumed_copy_and_leaves_the_run_alone(tiny_cfg, tmp_path):
    import funcs
    from benchmarks import iteration
    import runs
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), RUN_ARCHIVE_FOLDER=str(tmp_path / "archive"),
                           MCTS_SIMS=4, EVAL_POSITIONS=2, EVAL_SIMS=4, MIN_MEMORY_SIZE=32,
                           LOGGERS={name: False for name in tiny_cfg.LOGGERS})
    funcs.train(1, cfg, progress=False, say=lambda text: None)
    before = (tmp_path / "run" / "metrics.jsonl").read_text()
    copy = iteration.copyRun(tmp_path / "run", tmp_path / "scratch")
    seconds = iteration.timeIterations(iteration.ROOT, copy, 2)
    assert len(seconds) == 2 and all(row["selfplay"] > 0 for row in seconds)
    assert len(runs.readMetrics(copy)) == 3 and (tmp_path / "run" / "metrics.jsonl").read_text() == before


def test_iteration_benchmark_refuses_a_folder_without_a_run_by_the_options_name(tmp_path, capsys):
    from benchmarks import iteration
    for folder, message in ((tmp_path / "nowhere", "argument --run-folder: no folder"),
                            (tmp_path, f"--run-folder: checkpoint file {tmp_path / 'checkpoint.json'} is missing")):
        with pytest.raises(SystemExit):
            iteration.main(["--run-folder", str(folder)])
        assert message in capsys.readouterr().err


def test_selfplay_benchmark_refuses_no_games_by_the_options_name(capsys):
    with pytest.raises(SystemExit):
        selfplay.main(["--episodes", "0"])
    assert "argument --episodes: must be a positive number, got 0" in capsys.readouterr().err
