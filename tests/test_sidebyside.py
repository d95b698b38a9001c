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
