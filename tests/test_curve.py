"""The learning curve: training hours from the metrics, and its figure."""

from __future__ import annotations

import json

import matplotlib

import evaluation
import plots
import runs
import storage
from benchmarks import curve

matplotlib.use("Agg")


def metricsRow(iteration: int, best: int, seconds: float, mistakes: float) -> dict:
    return {"iteration": iteration, "best_player_version": best, "seconds": {"selfplay": seconds / 2,
            "retrain": seconds / 2}, "mistake_rate": mistakes, "network_mistake_rate": mistakes + 0.1}


def test_hours_add_up_the_iterations_and_versions_date_from_their_promotion():
    rows = [metricsRow(1, 1, 1800, 0.5), metricsRow(2, 2, 3600, 0.4), metricsRow(3, 2, 1800, 0.4),
            metricsRow(4, 3, 1800, 0.3)]
    assert runs.trainingHours(rows) == [0.5, 1.5, 2.0, 2.5]
    assert runs.promotionHours(rows) == {1: (0, 0.0), 2: (2, 1.5), 3: (4, 2.5)}


def test_the_curve_figure_reads_metrics_and_pons_rows(tmp_path):
    for row in (metricsRow(1, 2, 3600, 0.5), metricsRow(2, 3, 3600, 0.3)):
        storage.append_line(storage.metrics_path(tmp_path), json.dumps(row))
    for version, hours, sims, limit, rate in ((3, 2.0, 600, 10, 20.0), (2, 1.0, 600, 10, 30.0),
                                              (2, 1.0, 32, 10, 40.0), (3, 2.0, 600, 50, 18.0), (1, 0.0, 32, 10, 60.0)):
        storage.append_line(storage.curve_path(tmp_path), json.dumps(
            {"version": version, "iteration": version - 1, "hours": hours, "sims": sims, "limit": limit,
             "sets": {"Test_L1_R1": {"network": rate + 5, "agent": rate}}}))
    assert [row["version"] for row in runs.readCurve(tmp_path)] == [3, 2, 2, 3, 1]
    fig = plots.plotCurve(tmp_path)
    own, pons = fig.axes[:2]
    assert list(own.lines[0].get_xdata()) == [1.0, 2.0] and list(own.lines[0].get_ydata()) == [50.0, 30.0]
    # the agent at the most simulations (600), per version its largest sample; the network from every version
    assert list(pons.lines[0].get_xdata()) == [1.0, 2.0] and list(pons.lines[0].get_ydata()) == [30.0, 18.0]
    assert list(pons.lines[1].get_xdata()) == [0.0, 1.0, 2.0]
    assert list(pons.lines[1].get_ydata()) == [65.0, 35.0, 23.0]
    assert "600 simulations" in pons.get_title()
    assert pons.lines[0].get_label() == "begin-easy (minimax 1.7%)"
    matplotlib.pyplot.close(fig)


def test_the_curve_script_draws_without_scoring(tmp_path, tiny_cfg):
    run = tmp_path / "run"
    run.mkdir()
    storage.write_text(storage.config_path(run), tiny_cfg.to_json())
    storage.append_line(storage.metrics_path(run), json.dumps(metricsRow(1, 2, 3600, 0.5)))
    storage.append_line(storage.curve_path(run), json.dumps(
        {"version": 2, "iteration": 1, "hours": 1.0, "sims": 8, "limit": 10,
         "sets": {name: {"network": 30.0, "agent": 10.0} for name in evaluation.PONS_SETS}}))
    rows = curve.main(["--run-folder", str(run), "--no-scoring", "--plot", str(tmp_path / "curve.png")])
    assert [row["version"] for row in rows] == [2]  # nothing scored, nothing appended
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
