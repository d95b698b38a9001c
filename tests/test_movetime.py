"""The move-time benchmark (benchmarks/movetime.py): the played agent's seconds per move."""

from __future__ import annotations

import pytest

import runs
from benchmarks import movetime
from game import Game, GameState


def test_each_position_is_timed_once_from_a_fresh_tree(run_folder, tiny_cfg):
    agent = runs.versionPlayer("agent", Game(), tiny_cfg, run_folder, 3, mcts_simulations=4)
    states = [GameState.initial(), GameState.initial().takeAction(38)[0]]
    seconds = movetime.moveSeconds(agent, states, seed=0)
    assert len(seconds) == 2 and all(s > 0 for s in seconds)
    assert agent.mcts is None  # the timed players are fresh ones, the template keeps no tree


def test_summary_orders_its_figures():
    row = movetime.summarise(100, [0.1, 0.3, 0.2, 0.5])
    assert row["moves"] == 4 and row["max_s"] == 0.5
    assert row["median_s"] == pytest.approx(0.25) and row["sims_per_s"] == pytest.approx(400)
    assert row["median_s"] <= row["p90_s"] <= row["max_s"]
    assert "100 sims: median 0.250 s" in movetime.formatRow(row)


def test_script_times_every_simulation_count_with_the_played_search(run_folder, capsys):
    rows = movetime.main(["--run-folder", str(run_folder), "--sims", "2", "6", "--positions", "3",
                          "--set", "ROOT_SEARCH=gumbel"])
    assert [(r["sims"], r["moves"]) for r in rows] == [(2, 3), (6, 3)]
    out = capsys.readouterr().out
    assert "version 3" in out and "ROOT_SEARCH=gumbel" in out and "6 sims: median" in out


def test_a_move_time_limit_is_kept_and_the_simulations_made_are_printed(run_folder, capsys):
    """--move-seconds: a limit far below what 20,000 simulations of the tiny network take
    ends every move early, and the row says how many each made."""
    rows = movetime.main(["--run-folder", str(run_folder), "--sims", "20000", "--positions", "2",
                          "--move-seconds", "0.05", "--set", "LEAF_BATCH=4"])
    row = rows[0]
    assert 1 <= row["searched_min"] <= row["searched_median"] <= row["searched_max"] < 20000
    assert row["max_s"] < 2.0  # the limit, plus the last batch and choosing the move
    out = capsys.readouterr().out
    assert "at most 0.05 s a move" in out and f"made {row['searched_min']:,}-" in out


@pytest.mark.parametrize("args, message", [(["--sims", "0"], "--sims"), (["--version", "9"], "version 9"),
                                           (["--version", "-1"], "argument --version: must be a saved version, or 0"),
                                           (["--set", "LEARNING_RATE=0.1"], "LEARNING_RATE"),
                                           (["--move-seconds", "0"], "--move-seconds"),
                                           (["--move-seconds", "1", "--set", "ROOT_SEARCH=gumbel"], "PUCT")])
def test_script_refuses_bad_arguments(run_folder, args, message, capsys):
    with pytest.raises(SystemExit):
        movetime.main(["--run-folder", str(run_folder), "--positions", "1", *args])
    assert message in capsys.readouterr().err
