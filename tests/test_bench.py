"""The self-play benchmark's measuring helpers (benchmarks/selfplay.py), on the tiny network."""

from __future__ import annotations

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
    calls = [size for size, _ in recorded]
    replayed = calls[len(set(calls)):]  # after one untimed warm-up call per batch size
    assert len(replayed) > 1 and sum(replayed) == played.positionsEvaluated  # the same positions, in the same calls
    assert rate > 0 and alone_rate > rate  # an instant network outruns any self-play
    assert all(seconds > 0 for _, seconds in recorded)
    assert 0 < share < 1  # self-play's network calls take part of its time, never all of it
