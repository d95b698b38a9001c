"""benchmarks/overlap.py: self-play and the learner measured alone and at once."""

from __future__ import annotations

import time

import pytest

import funcs
import loggers
from benchmarks import overlap


@pytest.fixture(scope="module")
def run(tiny_cfg, tmp_path_factory):
    """A real tiny run of two iterations, trained enough to have a memory snapshot."""
    folder = tmp_path_factory.mktemp("overlap") / "run"
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, MIN_MEMORY_SIZE=32, EVAL_POSITIONS=0, LOGGERS={})
    funcs.train(2, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder


def _files(folder):
    return {path: path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


def test_each_phase_runs_the_runs_own_work_and_writes_nothing_there(run, tiny_cfg):
    before = _files(run)
    selfplay = overlap.selfplayPhase(run, threads=1)
    learner = overlap.learnerPhase(run)
    assert selfplay() > tiny_cfg.EPISODES  # every game evaluates several positions
    assert learner() == tiny_cfg.TRAINING_LOOPS * tiny_cfg.BATCH_SIZE
    assert _files(run) == before


def test_the_rate_counts_only_the_phases_that_ended_inside_the_window():
    calls = []

    def phase():
        calls.append(time.time())
        time.sleep(0.05)
        return 10
    start_at = time.time() + 0.1
    rate = overlap.measuredRate(phase, start_at=start_at, seconds=0.3)
    assert calls[0] < start_at <= calls[1]  # the warm-up, then the wait for the common start
    assert 1 <= rate["phases"] < len(calls) - 1  # the phase that crossed the window is not counted
    assert 0 < rate["per_second"] <= 10 / 0.05 and rate["late_s"] == 0.0


def test_a_window_too_short_for_one_phase_is_named():
    def phase():
        time.sleep(0.05)
        return 1
    with pytest.raises(SystemExit, match="no phase ended within 0.01 s"):
        overlap.measuredRate(phase, start_at=time.time() - 1, seconds=0.01)


def test_the_iteration_at_once_runs_both_until_the_shorter_is_done_then_the_rest_alone():
    assert overlap.iterationSeconds(10, 6, {"selfplay": 1.0, "learner": 1.0}) == 10  # no cost to sharing
    assert overlap.iterationSeconds(10, 6, {"selfplay": 0.5, "learner": 0.5}) == pytest.approx(16)  # no gain
    # at once for 12 s (the learner's 6 s at half speed), 7.2 s of self-play done, 2.8 s left alone
    assert overlap.iterationSeconds(10, 6, {"selfplay": 0.6, "learner": 0.5}) == pytest.approx(14.8)
