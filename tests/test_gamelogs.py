"""The game-log benchmark (benchmarks/gamelogs.py)."""

from __future__ import annotations

import numpy as np

from benchmarks import gamelogs


def test_random_moves_are_legal_moves_of_whole_games_with_policies_on_legal_actions():
    moves = gamelogs.randomMoves(120, seed=3)
    assert len(moves) == 120
    assert moves[0][0].stones == 0
    for (state, action, pi), following in zip(moves, moves[1:]):
        assert action in state.allowedActions and abs(float(pi.sum()) - 1) < 1e-5
        assert set(np.flatnonzero(pi)) <= set(state.allowedActions)
        after, _, done = state.takeAction(action)
        assert following[0].id == (gamelogs.Game().gameState.id if done else after.id)


def test_the_script_times_both_handlers_on_the_same_moves(capsys):
    result = gamelogs.main(["--moves", "40", "--rounds", "2"])
    assert set(result["us_per_move"]) == {"standard", "project"}
    assert all(len(values) == 2 and min(values) > 0 for values in result["us_per_move"].values())
    assert result["ratio"] > 0 and "as fast" in capsys.readouterr().out
