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
