"""The game logs' two ways (benchmarks/gamelogs.py): a move as one record of many lines
(`gamelog.logMove`, `loggers.LineFormatter`, `loggers.SizedRotatingFileHandler`) and the
tutorial's record a line write the same lines."""

from __future__ import annotations

import numpy as np

import loggers
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


def test_a_move_as_one_record_writes_the_tutorials_lines_each_with_time_and_level(tmp_path):
    moves = gamelogs.randomMoves(30, seed=4)
    written = {}
    for way in gamelogs.WAYS:
        gamelogs.secondsLogging(way, tmp_path / f"{way}.log", moves)
        written[way] = (tmp_path / f"{way}.log").read_text(encoding="utf-8").splitlines()
    assert len(written["project"]) == 30 * 11  # seven board lines, its end, three more
    assert all(loggers._LINE.fullmatch(line) for line in written["project"])
    assert [loggers.messageOf(line) for line in written["project"]] == \
        [loggers.messageOf(line) for line in written["tutorial"]]
    first = [loggers.messageOf(line) for line in written["project"][:11]]
    assert first[:7] == moves[0][0].text().split("\n") and first[7] == "-------------"
    assert first[8].startswith("game 1: best_player (X) to move")
    assert first[9].startswith("game 1: MCTS perceived value for X: +0.250") and first[10].startswith("game 1: action")


def test_the_script_times_both_ways_on_the_same_moves(capsys):
    result = gamelogs.main(["--moves", "40", "--rounds", "2"])
    assert set(result["us_per_move"]) == {"tutorial", "project"}
    assert all(len(values) == 2 and min(values) > 0 for values in result["us_per_move"].values())
    assert result["ratio"] > 0 and "as fast" in capsys.readouterr().out
