"""Evaluation against perfect play: solver scores, mistakes, choosers, benchmark
positions, Pons sets and the Pons CLI."""

from __future__ import annotations

import numpy as np
import pytest
from bitbully import Board

import evaluation
from benchmarks import pons
from agent import Agent
from game import Game, GameState

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
    assert evaluation.keepingActions(state) == {action(moves, 4)}
    assert not evaluation.isMistake(state, action(moves, 4))
    assert all(evaluation.isMistake(state, action(moves, c)) for c in (1, 2, 3, 5, 6, 7))
    assert evaluation.mistakeRate([state], constantChooser(4)) == evaluation.MistakeRate(0, 1)
    assert evaluation.mistakeRate([state, state], constantChooser(5)).rate == 1.0


def test_when_every_column_loses_no_move_is_a_mistake():
    moves = "44556"  # O to move against X's open three 4-5-6 in the bottom row: lost whatever O plays
    state = GameState.fromMoves(moves)
    assert all(score < 0 for score in evaluation.solverScores(state).values())
    assert evaluation.keepingActions(state) == set(state.allowedActions)
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


def test_load_pons_set_names_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "Test_L3_R1"
    path.write_bytes(b"44 0\n\xff\xfe\x00binary\n")
    with pytest.raises(ValueError, match=r"Test_L3_R1 is not a text file of 'moves score' lines \(.* at byte 5\)"):
        evaluation.loadPonsSet(path)


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
    assert all(r[k] in (0.0, 50.0, 100.0) for r in rows for k in ("network", "agent"))  # percent of 2 positions
    assert "Test_L3_R1" in capsys.readouterr().out




def test_pons_cli_searches_with_the_play_time_settings_it_is_given(tmp_path, tiny_cfg, capsys, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(tiny_cfg.to_json())
    (tmp_path / "Test_L3_R1").write_text("5554224333234511764415115 4\n")
    searched = []
    agentChooser = evaluation.agentChooser
    monkeypatch.setattr(evaluation, "agentChooser",
                        lambda model, cfg, sims, *rest: searched.append(cfg) or agentChooser(model, cfg, sims, *rest))
    pons.main(["--run-folder", str(run), "--sims", "4", "--sets", "L3_R1", "--pons-folder", str(tmp_path),
               "--set", "ROOT_SEARCH=gumbel", "--set", "CPUCT=2"])
    assert [(cfg.ROOT_SEARCH, cfg.CPUCT) for cfg in searched] == [("gumbel", 2.0)]
    assert "4 simulations, CPUCT=2.0, ROOT_SEARCH=gumbel" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        pons.main(["--run-folder", str(run), "--sets", "L3_R1", "--pons-folder", str(tmp_path), "--set", "SEED=3"])
    assert "SEED cannot change at play time" in capsys.readouterr().err


def test_pons_cli_refuses_a_run_folder_that_is_not_a_folder(tmp_path, capsys):
    (tmp_path / "run.txt").write_text("")
    for folder, message in ((tmp_path / "nowhere", f"no folder {tmp_path / 'nowhere'}"),
                            (tmp_path / "run.txt", f"{tmp_path / 'run.txt'} is a file")):
        with pytest.raises(SystemExit):
            pons.main(["--run-folder", str(folder), "--sets", "L3_R1", "--pons-folder", str(tmp_path)])
        assert f"argument --run-folder: {message}" in capsys.readouterr().err


def test_pons_cli_reads_every_set_before_it_scores_one(tmp_path, tiny_cfg, capsys, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(tiny_cfg.to_json())
    (tmp_path / "Test_L1_R1").write_text("5554224333234511764415115 4\n")
    (tmp_path / "Test_L3_R1").write_text("5554224333234511764415115 4\n44 four\n")
    monkeypatch.setattr(evaluation, "mistakeRate", lambda *args: pytest.fail("a set was scored"))
    for sets, message in ((["L1_R1", "L3_R1"], "Test_L3_R1, line 2: invalid literal"),
                          (["L1_R1", "L2_R1"], "lacks the set files ['Test_L2_R1']")):
        with pytest.raises(SystemExit):
            pons.main(["--run-folder", str(run), "--sims", "4", "--sets", *sets, "--pons-folder", str(tmp_path)])
        assert message in capsys.readouterr().err


def test_pons_cli_refuses_an_unknown_set(capsys):
    with pytest.raises(SystemExit):
        pons.main(["--sets", "L4_R1"])
    assert "unknown set 'L4_R1'" in capsys.readouterr().err
