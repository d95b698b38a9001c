"""How many different games a tournament plays (benchmarks/tournament.py), on a tiny run."""

from __future__ import annotations

import collections

import pytest

import funcs
import runs
import storage
from agent import Agent
from benchmarks import tournament
from game import GameState


@pytest.fixture
def gated_run(run_folder, tiny_cfg):
    """The tiny run with a gate of 4 games whose every move is the search's best (the tutorial's tau 0)."""
    storage.write_text(storage.config_path(run_folder),
                       tiny_cfg.replace(EVAL_EPISODES=4, EVAL_TURNS_UNTIL_TAU0=0).to_json())
    return run_folder


def test_each_match_counts_its_different_games_as_read_back_from_its_log(gated_run, capsys):
    results = tournament.main(["--run-folder", str(gated_run), "--challenger", "1", "--openings", "0", "5",
                               "--matches", "2"])
    assert list(results) == [0, 5] and all(len(matches) == 2 for matches in results.values())
    for matches in results.values():
        for match in matches:
            games = match["games"]
            assert len(games) == 4 == sum(match["scores"].values())
            assert all(GameState.fromMoves(moves).isEndGame for moves in games)  # whole games, first move on
            assert match["distinct"] == len(set(games))
            assert match["most_repeated"] == collections.Counter(games).most_common(1)[0]
    # with openings each game starts with its pair's (`funcs.pairedOpening` of the match's seed, which the best
    # player's generator draws, one a match)
    cfg = runs.runConfig(gated_run)
    rng = Agent.fromConfig("best_player", cfg, tournament.network(gated_run, cfg, "3"), seed=cfg.SEED).rng
    for match in results[5]:
        base = int(rng.integers(2**32))
        openings = ["".join(str(action % 7 + 1) for action in funcs.pairedOpening(base, e, 5)) for e in range(4)]
        assert all(moves.startswith(opening) for moves, opening in zip(match["games"], openings))
        assert any(openings), "the seeds give some opening moves"
    out = capsys.readouterr().out
    assert "version 3 (best_player) against 1" in out and "different games of 4" in out


@pytest.mark.parametrize("argv, named", [(["--challenger", "newest"], "'current' or a saved version"),
                                         (["--challenger", "9"], "no saved version 9; saved versions: 1, 3"),
                                         (["--best", "2"], "no saved version 2"),
                                         (["--matches", "0"], "--matches must be at least 1"),
                                         (["--challenger", "1", "--openings", "21"], "EVAL_RANDOM_OPENING_MOVES")])
def test_wrong_arguments_are_refused_by_name(gated_run, argv, named, capsys):
    with pytest.raises(SystemExit):
        tournament.main(["--run-folder", str(gated_run), *argv])
    assert named in capsys.readouterr().err
