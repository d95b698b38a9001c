"""Evaluation against perfect play: solver scores, mistakes, choosers, reference players,
benchmark positions, Pons sets, Elo ratings, the progress plot and the Pons CLI."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from bitbully import Board  # noqa: E402

import evaluation  # noqa: E402
import funcs  # noqa: E402
import loggers  # noqa: E402
import storage  # noqa: E402
from agent import Agent  # noqa: E402
from benchmarks import pons  # noqa: E402
from evaluation import PairResult  # noqa: E402
from game import Game, GameState  # noqa: E402

ENV = Game()


def action(moves: str, column: int) -> int:
    """The action of `column` (1..7) in the position after `moves`."""
    return GameState.fromMoves(moves).actionForColumn(column - 1)


def constantChooser(column: int):
    return lambda states: [s.actionForColumn(column - 1) for s in states]


# -- converting positions and scoring them --------------------------------------------------------
def test_solver_board_equals_the_board_built_from_the_moves():
    rng = np.random.default_rng(3)
    for _ in range(20):
        state, columns = GameState.initial(), []
        while not state.isEndGame:
            assert evaluation.solverBoard(state).uid() == Board(columns).uid()
            move = int(rng.choice(state.allowedActions))
            columns.append(move % 7)
            state = state.takeAction(move)[0]


def test_best_solver_score_is_the_pons_score_of_the_position():
    lines = ["2252576253462244111563365343671351441 -1", "5554224333234511764415115 4",  # first lines of
             "274552224131661 0", "32164625 11", "32751571231557 -3", "13712 3"]  # the six Pons sets
    for line in lines:
        moves, score = line.split()
        assert max(evaluation.solverScores(GameState.fromMoves(moves)).values()) == int(score)


def test_a_finished_game_has_no_scores():
    won = GameState.fromMoves("1212121")
    assert won.isEndGame
    with pytest.raises(ValueError, match="game is over"):
        evaluation.solverScores(won)


def test_full_column_is_never_scored_nor_accepted():
    state = GameState.fromMoves("444444")
    scores = evaluation.solverScores(state)
    assert sorted(scores) == sorted(state.allowedActions)
    assert {a % 7 for a in scores} == {0, 1, 2, 4, 5, 6}
    full_column_cell = 3  # top cell of column 4, already taken
    with pytest.raises(ValueError, match="not legal"):
        evaluation.isMistake(state, full_column_cell)


def test_outcome_class():
    assert [evaluation.outcomeClass(s) for s in (18, 1, 0, -1, -17)] == [1, 1, 0, -1, -1]


# -- mistakes ---------------------------------------------------------------------------------------
def test_only_the_single_winning_column_is_not_a_mistake():
    moves = "112233"  # X: three in the bottom row, column 4 completes it; every other move loses
    state = GameState.fromMoves(moves)
    outcomes = {a % 7 + 1: evaluation.outcomeClass(s) for a, s in evaluation.solverScores(state).items()}
    assert outcomes == {4: 1, 1: -1, 2: -1, 3: -1, 5: -1, 6: -1, 7: -1}
    assert not evaluation.isMistake(state, action(moves, 4))
    assert all(evaluation.isMistake(state, action(moves, c)) for c in (1, 2, 3, 5, 6, 7))
    assert evaluation.mistakeRate([state], constantChooser(4)) == evaluation.MistakeRate(0, 1)
    assert evaluation.mistakeRate([state, state], constantChooser(5)).rate == 1.0


def test_when_every_column_loses_no_move_is_a_mistake():
    moves = "44556"  # O to move against X's open three 4-5-6 in the bottom row: lost whatever O plays
    state = GameState.fromMoves(moves)
    assert all(score < 0 for score in evaluation.solverScores(state).values())
    for column in range(1, 8):
        assert evaluation.mistakeRate([state], constantChooser(column)).mistakes == 0


def test_a_losing_move_is_a_mistake_when_a_draw_is_available():
    moves = "112"
    state = GameState.fromMoves(moves)
    assert max(evaluation.solverScores(state).values()) == 0
    assert not evaluation.isMistake(state, action(moves, 2))
    assert evaluation.isMistake(state, action(moves, 7))


def test_mistake_rate_counts_over_mixed_positions():
    positions = [GameState.fromMoves(m) for m in ("112233", "44556", "112")]
    result = evaluation.mistakeRate(positions, constantChooser(1))  # loses, forced loss, loses vs draw
    assert (result.mistakes, result.positions) == (2, 3)
    assert result.rate == pytest.approx(2 / 3)


def test_mistake_rate_in_chunks_with_a_progress_bar_equals_one_batch(tiny_model, capsys):
    positions = evaluation.benchmarkPositions(12, seed=3)
    calls = []

    def choose(states):
        calls.append(len(states))
        return evaluation.networkChooser(tiny_model)(states)
    whole = evaluation.mistakeRate(positions, choose, chunk=100)
    chunked = evaluation.mistakeRate(positions, choose, progress="evaluation", chunk=5)
    assert chunked == whole
    assert calls == [12, 5, 5, 2]
    assert "evaluation" in capsys.readouterr().err


def test_mistake_rate_refuses_a_chooser_that_skips_positions():
    with pytest.raises(ValueError, match="answered 0 of 1"):
        evaluation.mistakeRate([GameState.initial()], lambda states: [])


# -- choosers: network and agent ------------------------------------------------------------------------
def test_network_chooser_picks_the_best_legal_logit_in_one_batch(tiny_model):
    states = [GameState.fromMoves(m) for m in ("444444", "112233", "", "7777776666665")]
    chosen = evaluation.networkChooser(tiny_model)(states)
    _, logits = tiny_model.predict(np.stack([tiny_model.convertToModelInput(s) for s in states]))
    for state, action_, row in zip(states, chosen, logits):
        assert action_ in state.allowedActions
        assert row[action_] == max(row[a] for a in state.allowedActions)


def test_agent_chooser_equals_one_agent_per_position_searching_alone(tiny_cfg, tiny_model):
    states = [GameState.fromMoves(m) for m in ("112233", "44", "3344", "")]
    together = evaluation.agentChooser(tiny_model, tiny_cfg, sims=12, seed=5)(states)
    alone = [Agent("alone", ENV.state_size, ENV.action_size, 12, tiny_cfg.CPUCT, tiny_model, tiny_cfg,
                   seed=5 + i).act(state, 0)[0] for i, state in enumerate(states)]
    assert together == alone


def test_agent_chooser_finds_the_immediate_win(tiny_cfg, tiny_model):
    state = GameState.fromMoves("112233")
    assert evaluation.agentChooser(tiny_model, tiny_cfg, sims=50)([state]) == [action("112233", 4)]


# -- reference players ------------------------------------------------------------------------------
def test_solver_never_loses_and_wins_every_game_as_first_player():
    solver, random_player = evaluation.SolverPlayer(seed=1), evaluation.RandomPlayer(seed=2)
    scores, _, _, _ = funcs.playMatches(solver, random_player, 3, loggers.logger_tourney, 0, goes_first=1)
    assert scores == {"solver": 3, "drawn": 0, "random": 0}
    assert evaluation.playReference(solver, random_player, 2)["losses"] == 0


def test_random_and_rollout_players_play_whole_games_legally():
    rollout, random_player = evaluation.RolloutMCTSPlayer(20, seed=1), evaluation.RandomPlayer(seed=2)
    assert not isinstance(rollout, Agent) and not isinstance(random_player, Agent)
    result = evaluation.playReference(rollout, random_player, 4)  # an illegal move would raise
    assert sum(result.values()) == 4
    assert result["wins"] >= 2


def test_random_player_is_reproducible_and_legal():
    state = GameState.fromMoves("444444")
    first = [evaluation.RandomPlayer(seed=9).chooseAction(state) for _ in range(3)]
    player = evaluation.RandomPlayer(seed=9)
    moves = [player.chooseAction(state) for _ in range(50)]
    assert first == [moves[0]] * 3
    assert set(moves) == set(state.allowedActions)


def test_rollout_player_takes_an_immediate_win():
    state = GameState.fromMoves("112233")
    assert evaluation.RolloutMCTSPlayer(200, seed=0).chooseAction(state) == action("112233", 4)


def test_reference_player_act_steps_returns_a_move_without_requests():
    steps = evaluation.RandomPlayer(seed=0).actSteps(GameState.initial(), tau=1)
    with pytest.raises(StopIteration) as stop:
        next(steps)
    chosen, pi, value, nn_value = stop.value.value
    assert pi[chosen] == 1 and pi.sum() == 1 and value is None and nn_value is None


def test_play_reference_needs_distinct_names():
    with pytest.raises(ValueError, match="distinct names"):
        evaluation.playReference(evaluation.RandomPlayer(0), evaluation.RandomPlayer(1), 2)


# -- the benchmark position set ---------------------------------------------------------------------
def test_benchmark_positions_are_reproducible_distinct_and_discriminating():
    first = evaluation.benchmarkPositions(15, seed=4)
    again = evaluation.benchmarkPositions(15, seed=4)
    other = evaluation.benchmarkPositions(15, seed=5)
    assert [s.id for s in first] == [s.id for s in again]
    assert [s.id for s in first] != [s.id for s in other]
    assert len({s.id for s in first}) == 15
    for state in first:
        assert not state.isEndGame
        outcomes = {evaluation.outcomeClass(v) for v in evaluation.solverScores(state).values()}
        assert len(outcomes) > 1


# -- Pons sets -------------------------------------------------------------------------------------
def test_load_pons_set_parses_lines_and_honours_the_limit(tmp_path):
    path = tmp_path / "Test_L9_R9"
    path.write_text("4453 -2\n\n6146 18\n32164625 11\n")
    loaded = evaluation.loadPonsSet(path)
    assert [(s.id, score) for s, score in loaded] == [(GameState.fromMoves(m).id, v)
                                                      for m, v in (("4453", -2), ("6146", 18), ("32164625", 11))]
    assert len(evaluation.loadPonsSet(path, limit=2)) == 2


@pytest.mark.parametrize("line, message", [("4453", "expected 'moves score'"), ("4483 1", "columns are 1..7"),
                                           ("4453 x", "invalid literal")])
def test_load_pons_set_names_the_bad_line(tmp_path, line, message):
    path = tmp_path / "bad"
    path.write_text(f"44 0\n{line}\n")
    with pytest.raises(ValueError, match=f"bad, line 2: .*{message}"):
        evaluation.loadPonsSet(path)


# -- ratings -----------------------------------------------------------------------------------------
def test_fit_elo_recovers_a_known_difference_and_its_standard_error():
    ratings = evaluation.fitElo([PairResult("strong", "weak", 7500, 0, 2500)], anchor="weak")
    assert ratings["weak"] == (0.0, 0.0)
    assert ratings["strong"].elo == pytest.approx(400 * math.log10(3), abs=1)
    fisher_se = 400 / math.log(10) / math.sqrt(10000 * 0.75 * 0.25)
    assert ratings["strong"].stderr == pytest.approx(fisher_se, rel=0.01)


def test_fit_elo_orders_players_and_stays_finite_when_one_wins_everything():
    results = [PairResult("a", "b", 14, 2, 4), PairResult("b", "c", 13, 4, 3), PairResult("a", "c", 20, 0, 0),
               PairResult("c", "random", 20, 0, 0)]
    ratings = evaluation.fitElo(results, anchor="random")
    assert ratings["a"].elo > ratings["b"].elo > ratings["c"].elo > ratings["random"].elo == 0
    assert all(math.isfinite(r.elo) and math.isfinite(r.stderr) and r.stderr > 0
               for name, r in ratings.items() if name != "random")
    centred = evaluation.fitElo(results)
    assert sum(r.elo for r in centred.values()) == pytest.approx(0, abs=1e-6)
    assert centred["a"].elo - centred["b"].elo == pytest.approx(ratings["a"].elo - ratings["b"].elo)


def test_rate_versions_plays_a_round_robin_with_the_reference_opponents(tmp_path, tiny_cfg):
    (tmp_path / "config.json").write_text(tiny_cfg.to_json())
    table = evaluation.rateVersions(tmp_path, [0], games_per_pair=2, sims=4, rollout_simulations=20)
    players = {row["player"]: row for row in table}
    assert sorted(players) == ["random", "rollout_mcts20", "version0"]
    assert players["random"]["elo"] == 0 and all(row["games"] == 4 for row in table)
    assert sum(row["score"] for row in table) == pytest.approx(1.5)  # 3 pairs of 2 games, 1 point a game
    assert all(math.isfinite(row["stderr"]) for row in table)


# -- the progress plot -------------------------------------------------------------------------------
def writeMetrics(folder, rows, tail=""):
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
    fig = evaluation.plotMetrics(tmp_path)
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
    fig = evaluation.plotMetrics(tmp_path)
    assert "no finished iteration" in fig.get_suptitle()
    plt.close(fig)


def test_plot_metrics_names_a_damaged_metrics_file(tmp_path):
    writeMetrics(tmp_path, [{"iteration": 1, "memory_size": 10}], tail='{"iteration": 2, "mem')
    with pytest.raises(storage.RunFileError, match="line 2"):
        evaluation.plotMetrics(tmp_path)


# -- the Pons command line -----------------------------------------------------------------------------
def test_pons_cli_scores_an_untrained_network(tmp_path, tiny_cfg, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(tiny_cfg.to_json())
    (tmp_path / "Test_L3_R1").write_text("2252576253462244111563365343671351441 -1\n"
                                         "7422341735647741166133573473242566 1\n"
                                         "5554224333234511764415115 4\n")
    rows = pons.main(["--run-folder", str(run), "--sims", "4", "--limit", "2", "--sets", "L3_R1",
                      "--pons-folder", str(tmp_path)])
    assert [(r["set"], r["positions"], r["reference"]) for r in rows] == [("Test_L3_R1", 2, 0.0)]
    assert all(0 <= r[k] <= 100 for r in rows for k in ("network", "agent"))
    assert "Test_L3_R1" in capsys.readouterr().out


def test_pons_cli_refuses_an_unknown_set(capsys):
    with pytest.raises(SystemExit):
        pons.main(["--sets", "L4_R1"])
    assert "unknown set 'L4_R1'" in capsys.readouterr().err


def test_plot_ratings_draws_each_player_with_its_interval():
    rows = [{"player": "version3", "elo": 250.0, "stderr": 40.0, "games": 20, "score": 0.8},
            {"player": "random", "elo": 0.0, "stderr": 0.0, "games": 20, "score": 0.2}]
    fig = evaluation.plotRatings(rows)
    ax = fig.axes[0]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["version3", "random"]
    line = ax.containers[0].lines[0]
    assert list(line.get_ydata()) == [250.0, 0.0]
    bars = ax.containers[0].lines[2][0].get_segments()
    assert [tuple(segment[:, 1]) for segment in bars] == [(170.0, 330.0), (0.0, 0.0)]
    plt.close(fig)
