"""Reference opponents and Elo ratings (ratings.py)."""

from __future__ import annotations

import math

import pytest

import ratings
from agent import Agent
from game import GameState
from ratings import PairResult


def action(moves: str, column: int) -> int:
    """The action of `column` (1..7) in the position after `moves`."""
    return GameState.fromMoves(moves).actionForColumn(column - 1)


# -- reference players ------------------------------------------------------------------------------
def test_random_and_rollout_players_play_whole_games_legally():
    rollout, random_player = ratings.RolloutMCTSPlayer(20, seed=1), ratings.RandomPlayer(seed=2)
    assert not isinstance(rollout, Agent) and not isinstance(random_player, Agent)
    result = ratings.playReference(rollout, random_player, 4)  # an illegal move would raise
    assert sum(result.values()) == 4
    assert result["wins"] >= 2


def test_rollout_player_with_one_simulation_still_chooses_a_legal_move():
    state = GameState.initial()
    assert ratings.RolloutMCTSPlayer(1, seed=0).chooseAction(state) in state.allowedActions


def test_random_player_is_reproducible_and_legal():
    state = GameState.fromMoves("444444")
    first = [ratings.RandomPlayer(seed=9).chooseAction(state) for _ in range(3)]
    player = ratings.RandomPlayer(seed=9)
    moves = [player.chooseAction(state) for _ in range(50)]
    assert first == [moves[0]] * 3
    assert set(moves) == set(state.allowedActions)


def test_rollout_player_takes_an_immediate_win():
    state = GameState.fromMoves("112233")
    assert ratings.RolloutMCTSPlayer(200, seed=0).chooseAction(state) == action("112233", 4)


def test_reference_player_act_steps_returns_a_move_without_requests():
    steps = ratings.RandomPlayer(seed=0).actSteps(GameState.initial(), tau=1)
    with pytest.raises(StopIteration) as stop:
        next(steps)
    chosen, pi, value, nn_value = stop.value.value
    assert pi[chosen] == 1 and pi.sum() == 1 and value is None and nn_value is None


def test_play_reference_needs_distinct_names():
    with pytest.raises(ValueError, match="distinct names"):
        ratings.playReference(ratings.RandomPlayer(0), ratings.RandomPlayer(1), 2)


# -- ratings -----------------------------------------------------------------------------------------
def test_fit_elo_recovers_a_known_difference_and_its_standard_error():
    fitted = ratings.fitElo([PairResult("strong", "weak", 7500, 0, 2500)], anchor="weak")
    assert fitted["weak"] == (0.0, 0.0)
    assert fitted["strong"].elo == pytest.approx(400 * math.log10(3), abs=1)
    fisher_se = 400 / math.log(10) / math.sqrt(10000 * 0.75 * 0.25)
    assert fitted["strong"].stderr == pytest.approx(fisher_se, rel=0.01)


def test_fit_elo_orders_players_and_stays_finite_when_one_wins_everything():
    results = [PairResult("a", "b", 14, 2, 4), PairResult("b", "c", 13, 4, 3), PairResult("a", "c", 20, 0, 0),
               PairResult("c", "random", 20, 0, 0)]
    fitted = ratings.fitElo(results, anchor="random")
    assert fitted["a"].elo > fitted["b"].elo > fitted["c"].elo > fitted["random"].elo == 0
    assert all(math.isfinite(r.elo) and math.isfinite(r.stderr) and r.stderr > 0
               for name, r in fitted.items() if name != "random")
    centred = ratings.fitElo(results)
    assert sum(r.elo for r in centred.values()) == pytest.approx(0, abs=1e-6)
    assert centred["a"].elo - centred["b"].elo == pytest.approx(fitted["a"].elo - fitted["b"].elo)


def test_rate_versions_plays_a_round_robin_with_the_reference_opponents(tmp_path, tiny_cfg):
    (tmp_path / "config.json").write_text(tiny_cfg.to_json())
    table = ratings.rateVersions(tmp_path, [0], games_per_pair=2, sims=4, rollout_simulations=20)
    players = {row["player"]: row for row in table}
    assert sorted(players) == ["random", "rollout_mcts20", "version0"]
    assert players["random"]["elo"] == 0 and all(row["games"] == 4 for row in table)
    assert sum(row["score"] for row in table) == pytest.approx(1.5)  # 3 pairs of 2 games, 1 point a game
    assert all(math.isfinite(row["stderr"]) for row in table)
