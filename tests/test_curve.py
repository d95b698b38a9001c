"""The learning curve: training hours from the metrics, and its figure."""

from __future__ import annotations

import json

import matplotlib
import pytest

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


def scoredRun(tmp_path, tiny_cfg):
    """A run folder whose curve holds a row of version 2, promoted at iteration 1."""
    run = tmp_path / "run"
    run.mkdir()
    storage.write_text(storage.config_path(run), tiny_cfg.to_json())
    storage.append_line(storage.metrics_path(run), json.dumps(metricsRow(1, 2, 3600, 0.5)))
    storage.append_line(storage.curve_path(run), json.dumps(
        {"version": 2, "iteration": 1, "hours": 1.0, "sims": 8, "limit": 10,
         "sets": {name: {"network": 30.0, "agent": 10.0} for name in evaluation.PONS_SETS}}))
    return run


def test_the_curve_script_draws_without_scoring(tmp_path, tiny_cfg):
    run = scoredRun(tmp_path, tiny_cfg)
    rows = curve.main(["--run-folder", str(run), "--no-scoring", "--plot", str(tmp_path / "curve.png")])
    assert [row["version"] for row in rows] == [2]  # nothing scored, nothing appended
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_figure_is_written_where_it_is_named_or_refused_at_once(tmp_path, tiny_cfg, capsys):
    run = scoredRun(tmp_path, tiny_cfg)
    figure = tmp_path / "new" / "folder" / "curve.svg"
    curve.main(["--run-folder", str(run), "--no-scoring", "--plot", str(figure)])
    assert figure.read_text().startswith("<?xml") and f"figure saved to {figure}\n" in capsys.readouterr().out
    for plot, message in ((tmp_path, f"{tmp_path} is a folder"),
                          (tmp_path / "curve", f"{tmp_path / 'curve'} must end with one of .")):
        with pytest.raises(SystemExit):
            curve.main(["--run-folder", str(run), "--no-scoring", "--plot", str(plot)])
        assert f"argument --plot: {message}" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["new", "run"]  # no curve.png beside the name


def curveRun(tmp_path, tiny_cfg, tiny_model):
    """A run folder whose version 2 (tiny_model) was promoted at iteration 1, after one hour."""
    run = tmp_path / "run"
    (run / "models").mkdir(parents=True)
    storage.write_text(storage.config_path(run), tiny_cfg.replace(MCTS_SIMS=16, PLAY_SIMS=6).to_json())
    storage.append_line(storage.metrics_path(run), json.dumps(metricsRow(1, 2, 3600, 0.5)))
    storage.save_model(tiny_model.model, storage.model_path(run, 2))
    return run


def test_the_curve_scores_a_version_at_the_simulations_it_plays_people_with(tmp_path, tiny_cfg, tiny_model):
    run = curveRun(tmp_path, tiny_cfg, tiny_model)
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in evaluation.PONS_SETS:
        (pons / name).write_text("2252576253462244111563365343671351441 -1\n5554224333234511764415115 4\n")
    rows = curve.main(["--run-folder", str(run), "--limit", "2", "--pons-folder", str(pons)])
    assert [(row["version"], row["sims"], row["limit"], row["hours"]) for row in rows] == [(2, 6, 2, 1.0)]
    assert set(rows[0]["sets"]) == set(evaluation.PONS_SETS)
    assert runs.readCurve(run) == rows  # appended to the run's curve.jsonl


def test_the_curve_goes_on_at_the_simulations_it_was_measured_with(tmp_path, tiny_cfg, tiny_model):
    """A run that plays people with more simulations than its curve was scored at keeps
    its curve comparable: the next version is scored at the curve's budget."""
    run = curveRun(tmp_path, tiny_cfg, tiny_model)
    storage.append_line(storage.metrics_path(run), json.dumps(metricsRow(2, 3, 3600, 0.5)))
    storage.save_model(tiny_model.model, storage.model_path(run, 3))
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in evaluation.PONS_SETS:
        (pons / name).write_text("2252576253462244111563365343671351441 -1\n")
    storage.append_line(storage.curve_path(run), json.dumps(
        {"version": 2, "iteration": 1, "hours": 1.0, "sims": 4, "limit": 1,
         "sets": {name: {"network": 30.0, "agent": 10.0} for name in evaluation.PONS_SETS}}))
    assert curve.curveSims(runs.readCurve(run)) == 4 and curve.curveSims([]) is None
    rows = curve.main(["--run-folder", str(run), "--limit", "1", "--pons-folder", str(pons)])
    assert [(row["version"], row["sims"]) for row in rows] == [(2, 4), (3, 4)]  # not PLAY_SIMS' 6


def test_the_curve_names_missing_set_files_before_scoring(tmp_path, tiny_cfg, tiny_model, capsys):
    run = curveRun(tmp_path, tiny_cfg, tiny_model)
    with pytest.raises(SystemExit):
        curve.main(["--run-folder", str(run), "--pons-folder", str(tmp_path / "nowhere")])
    assert "lacks the set files" in capsys.readouterr().err
    assert runs.readCurve(run) == []


def test_versions_that_cannot_be_scored_are_refused_before_any_is(tmp_path, tiny_cfg, tiny_model, capsys):
    run = curveRun(tmp_path, tiny_cfg, tiny_model)
    storage.save_model(tiny_model.model, storage.model_path(run, 4))  # saved, never the best
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in evaluation.PONS_SETS:
        (pons / name).write_text("2252576253462244111563365343671351441 -1\n")
    for versions, message in ((["2", "5"], f"{run} has no version 5 (saved: 2, 4)"),
                              (["2", "4"], f"version 4 never was the best version of {run}")):
        with pytest.raises(SystemExit):
            curve.main(["--run-folder", str(run), "--limit", "1", "--pons-folder", str(pons), "--versions", *versions])
        assert message in capsys.readouterr().err
    assert runs.readCurve(run) == []  # version 2 was not scored either
