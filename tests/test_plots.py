"""Plots of a run's progress and of ratings (plots.py)."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import plots  # noqa: E402
import storage  # noqa: E402


# -- the progress plot -------------------------------------------------------------------------------
def writeMetrics(folder, rows, tail=""):
    """Metrics rows as training writes them (each with its phase times)."""
    rows = [{"seconds": {"selfplay": 1.0}, **row} for row in rows]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + tail)


def test_plot_metrics_draws_what_the_rows_hold(tmp_path):
    rows = [{"iteration": 1, "trained": False, "loss": None, "promoted": False, "scores": None,
             "best_player_version": 1, "memory_size": 200, "mistake_rate": None},
            {"iteration": 2, "trained": True, "loss": 1.5, "value_loss": 0.5, "policy_loss": 2.5, "promoted": True,
             "scores": {"current_player": 3, "drawn": 0, "best_player": 1}, "best_player_version": 2,
             "memory_size": 400, "mistake_rate": 0.4},
            {"iteration": 3, "trained": True, "loss": 1.2, "value_loss": 0.4, "policy_loss": 2.0, "promoted": False,
             "scores": {"current_player": 1, "drawn": 1, "best_player": 2}, "best_player_version": 2,
             "memory_size": 600}]
    writeMetrics(tmp_path, rows)
    fig = plots.plotMetrics(tmp_path)
    loss_ax, tourney_ax, mistake_ax, memory_ax, version_ax = fig.axes
    assert list(loss_ax.get_lines()[0].get_xdata()) == [2, 3]
    assert list(loss_ax.get_lines()[0].get_ydata()) == [1.5, 1.2]
    promoted = tourney_ax.get_lines()[3]
    assert list(promoted.get_xdata()) == [2]
    assert list(mistake_ax.get_lines()[0].get_xdata()) == [2]
    assert list(mistake_ax.get_lines()[0].get_ydata()) == [40.0]
    assert list(memory_ax.get_lines()[0].get_ydata()) == [200, 400, 600]
    plt.close(fig)


@pytest.mark.parametrize("content", [None, ""])
def test_plot_metrics_before_the_first_iteration(tmp_path, content):
    if content is not None:
        (tmp_path / "metrics.jsonl").write_text(content)
    fig = plots.plotMetrics(tmp_path)
    assert "no finished iteration" in fig.get_suptitle()
    plt.close(fig)


def test_plot_metrics_names_a_damaged_metrics_file(tmp_path):
    writeMetrics(tmp_path, [{"iteration": 1, "memory_size": 10}], tail='{"iteration": 2, "mem')
    with pytest.raises(storage.RunFileError, match="line 2"):
        plots.plotMetrics(tmp_path)


def test_plot_ratings_draws_each_player_with_its_interval():
    rows = [{"player": "version3", "elo": 250.0, "stderr": 40.0, "games": 20, "score": 0.8},
            {"player": "random", "elo": 0.0, "stderr": 0.0, "games": 20, "score": 0.2}]
    fig = plots.plotRatings(rows)
    ax = fig.axes[0]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["version3", "random"]
    line = ax.containers[0].lines[0]
    assert list(line.get_ydata()) == [250.0, 0.0]
    bars = ax.containers[0].lines[2][0].get_segments()
    assert [tuple(segment[:, 1]) for segment in bars] == [(170.0, 330.0), (0.0, 0.0)]
    plt.close(fig)


# -- whole games against the solver: the curve's third panel and a losing move ------------------------
def _leftmostGames(count: int = 3):
    """Whole games of a player that always plays the leftmost legal column (it loses
    its won starts), from seeded starts."""
    from agent import searchWithoutNetwork
    import evaluation

    class Leftmost:
        def actSteps(self, state, tau, noise=False):
            return searchWithoutNetwork(lambda s, t: (s.allowedActions[0], None, None, None), state, tau)

    return evaluation.playAgainstSolver(lambda i: Leftmost(), evaluation.gameStarts(count, count, 4, seed=2), seed=2)


def test_the_curve_draws_the_kept_share_of_each_scored_best_version(tmp_path):
    import evaluation

    writeMetrics(tmp_path, [{"iteration": 1, "best_player_version": 2, "promoted": True, "mistake_rate": None,
                             "network_mistake_rate": None},
                            {"iteration": 2, "best_player_version": 2, "promoted": False, "mistake_rate": None,
                             "network_mistake_rate": None}])
    games = _leftmostGames()
    record = evaluation.wholeGameRecord(games, {"version": 2, "sims": 50})
    path = storage.whole_games_path(tmp_path, 2, 50)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    never_best = evaluation.wholeGameRecord(games, {"version": 9, "sims": 50})
    storage.whole_games_path(tmp_path, 9, 50).write_text(json.dumps(never_best))
    other_search = evaluation.wholeGameRecord(games, {"version": 2, "sims": 50, "search": {"ROOT_SEARCH": "puct"}})
    storage.whole_games_path(tmp_path, 2, 50, search={"ROOT_SEARCH": "puct"}).write_text(json.dumps(other_search))
    fewer = evaluation.wholeGameRecord(games[:1], {"version": 2, "sims": 50})  # a smaller sample kept beside it
    storage.whole_games_path(tmp_path, 2, 50, (1, 0)).write_text(json.dumps(fewer))
    replayed = {**record, "play_seed": 1,
                "summary": {**record["summary"], "won": {"games": 1, "kept": 1, "share": 1.0}}}
    storage.whole_games_path(tmp_path, 2, 50, play_seed=1).write_text(json.dumps(replayed))  # listed before the record
    rows = plots.wholeGameCurve(tmp_path)
    assert [(r["version"], r["sims"]) for r in rows] == [(2, 50)]  # version 9 never was the best, nor is --set's
    assert rows[0]["won"] == record["summary"]["won"]["share"] != replayed["summary"]["won"]["share"]  # not the replay
    assert rows[0]["hours"] == pytest.approx(1 / 3600)
    fig = plots.plotCurve(tmp_path)
    games_ax = fig.axes[2]
    won_line = games_ax.get_lines()[0]
    assert list(won_line.get_ydata()) == [100 * record["summary"]["won"]["share"]]
    assert "50 simulations" in games_ax.get_title()
    plt.close(fig)


def _metricsRow(iteration: int, best: int) -> dict:
    return {"iteration": iteration, "best_player_version": best, "promoted": True, "mistake_rate": None,
            "network_mistake_rate": None}


def _curveRow(version: int, iteration: int) -> str:
    return json.dumps({"version": version, "iteration": iteration, "hours": iteration / 3600, "sims": 50,
                       "limit": 10, "sets": {"Test_L1_R1": {"network": 9.0, "agent": 1.0}}})


def test_a_branch_curve_takes_the_scores_of_the_history_it_shares(tmp_path):
    import evaluation

    parent, branch, stranger, damaged = (tmp_path / name for name in ("run1", "run2", "run3", "run4"))
    for folder in (parent, branch, stranger, damaged):
        folder.mkdir()
    writeMetrics(parent, [_metricsRow(1, 2), _metricsRow(2, 3), _metricsRow(3, 4)])
    writeMetrics(branch, [_metricsRow(1, 2), _metricsRow(2, 3), _metricsRow(3, 5)])  # branched after iteration 2
    writeMetrics(stranger, [_metricsRow(1, 6)])
    writeMetrics(damaged, [_metricsRow(1, 2)], tail='{"iteration": 2, "mem')
    for version, iteration in ((2, 1), (3, 2), (4, 3)):
        storage.append_line(storage.curve_path(parent), _curveRow(version, iteration))
    storage.append_line(storage.curve_path(branch), _curveRow(5, 3))
    storage.append_line(storage.curve_path(stranger), _curveRow(6, 1))
    record = evaluation.wholeGameRecord(_leftmostGames(), {"version": 2, "sims": 50})
    for version in (2, 3):
        path = storage.whole_games_path(parent, version, 50)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({**record, "version": version}))
    # version 3, the best where they part, may be another network in the branch (widened, replaced)
    assert plots.sharedHistories(branch) == [(parent, {1, 2})]
    assert sorted(row["version"] for row in plots.lineageCurve(branch)) == [2, 5]
    assert [row["version"] for row in plots.wholeGameCurve(branch)] == [2]
    assert sorted(row["version"] for row in plots.lineageCurve(stranger)) == [6]
    fig = plots.plotCurve(branch)
    assert list(fig.axes[1].get_lines()[0].get_xdata()) == [1 / 3600, 3 / 3600]
    plt.close(fig)


def test_the_curve_says_when_no_whole_game_record_exists(tmp_path):
    writeMetrics(tmp_path, [{"iteration": 1, "best_player_version": 1, "promoted": False, "mistake_rate": None,
                             "network_mistake_rate": None}])
    fig = plots.plotCurve(tmp_path)
    assert "none scored yet" in fig.axes[2].get_title()
    plt.close(fig)


def test_a_losing_move_is_drawn_before_and_after(tmp_path):
    lost = next(game for game in _leftmostGames() if game.mistakes)
    mistake = lost.mistakes[0]
    fig = plots.plotMistake(mistake)
    before_ax, after_ax = fig.axes
    assert f"ply {mistake.ply}" in before_ax.get_title()
    assert f"played {mistake.column}" in after_ax.get_title()
    ringed = [[p for p in ax.patches if p.get_linewidth() == 3] for ax in (before_ax, after_ax)]
    assert len(ringed[0]) == 0 and len(ringed[1]) == 1  # the move, ringed after it
    plt.close(fig)


def test_whole_game_records_are_named_by_version_and_simulations(tmp_path):
    path = storage.whole_games_path(tmp_path, 7, 600)
    assert path == tmp_path / "perfect" / "version0007-sims600.json"
    path.parent.mkdir()
    path.write_text("{}")
    assert storage.whole_games_records(tmp_path) == [path]
