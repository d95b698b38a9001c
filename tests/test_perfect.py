"""Whole games against the solver: starts, games, mistakes and their causes, the record
and the benchmark script (benchmarks/perfect.py)."""

from __future__ import annotations

import json
import re

import pytest

import evaluation
import plots
import runs
import shipping
import storage
from agent import Agent, searchWithoutNetwork
from benchmarks import horizon, perfect
from config import ConfigError, searchChanges, searchLabel, withSearch
from evaluation import Mistake, Start
from game import Game, GameState, columnOf


class SolverPlayer:
    """Perfect play: a best move by the solver's score (ties: the leftmost)."""

    def actSteps(self, state: GameState, tau: float, noise: bool = False):
        return searchWithoutNetwork(self.act, state, tau)

    def act(self, state: GameState, tau: float):
        return evaluation.bestActions(evaluation.solverScores(state))[0], None, None, None


class LeftmostPlayer(SolverPlayer):
    """Always the leftmost legal column (column 1 while it has room)."""

    def act(self, state: GameState, tau: float):
        return state.allowedActions[0], None, None, None


@pytest.fixture(scope="module")
def starts() -> list[Start]:
    return evaluation.gameStarts(won=6, drawn=6, max_moves=6, seed=3)


def test_starts_are_seeded_distinct_and_worth_what_they_say(starts):
    assert starts == evaluation.gameStarts(won=6, drawn=6, max_moves=6, seed=3)
    assert starts != evaluation.gameStarts(won=6, drawn=6, max_moves=6, seed=4)
    assert sum(s.value == 1 for s in starts) == 6 and sum(s.value == 0 for s in starts) == 6
    assert len({(s.opening, s.side) for s in starts}) == len(starts)
    assert {s.side for s in starts} == {1, -1}
    for start in starts:
        state = GameState.fromMoves(start.opening)
        assert len(start.opening) <= 6 and not state.isEndGame
        best = max(evaluation.outcomeClass(v) for v in evaluation.solverScores(state).values())
        assert best * state.playerTurn * start.side == start.value  # the start's value for the tested side


def test_starts_refuse_impossible_requests():
    with pytest.raises(ValueError, match="some starts"):
        evaluation.gameStarts(won=0, drawn=0)
    with pytest.raises(ValueError, match="too few distinct positions"):
        evaluation.gameStarts(won=5, drawn=0, max_moves=0)  # only the empty board there is


def test_a_perfect_player_keeps_every_start(starts):
    games = evaluation.playAgainstSolver(lambda i: SolverPlayer(), starts, seed=1)
    assert [game.start for game in games] == starts
    assert all(game.kept and not game.mistakes for game in games)
    assert all(game.result == game.start.value for game in games)
    summary = evaluation.wholeGameSummary(games)
    assert summary["won"]["share"] == summary["drawn"]["share"] == 1.0
    assert summary["causes"] == {} and summary["mistakes"] == 0


def test_always_column_one_loses_its_won_starts_and_the_record_names_the_losing_move(starts):
    games = evaluation.playAgainstSolver(lambda i: LeftmostPlayer(), starts, seed=1)
    won = [game for game in games if game.start.value == 1]
    assert won and not any(game.kept for game in won)
    assert evaluation.wholeGameSummary(games)["won"]["kept"] == 0
    for game in games:
        if game.kept:
            continue
        first = game.mistakes[0]
        state = GameState.fromMoves(first.moves)
        assert game.moves.startswith(first.moves)
        assert game.moves[len(first.moves)] == str(first.column)  # the move the game went on with
        assert first.column == columnOf(state.allowedActions[0]) + 1
        assert first.column not in first.keeping and first.after < first.before
        assert evaluation.isMistake(state, state.actionForColumn(first.column - 1))
        assert first.table is None and first.network_value is None  # a player without a search


def test_the_solver_side_plays_best_moves(starts):
    game = evaluation.playAgainstSolver(lambda i: LeftmostPlayer(), starts[:1], seed=0)[0]
    state = GameState.fromMoves(game.start.opening)
    for column in game.moves[len(game.start.opening):]:
        action = state.actionForColumn(int(column) - 1)
        if state.playerTurn != game.start.side:
            assert action in evaluation.bestActions(evaluation.solverScores(state))
        state = state.takeAction(action)[0]
    assert state.isEndGame
    assert game.result == (0 if state.value[0] == 0 else (1 if state.playerTurn != game.start.side else -1))


def test_player_moves_count_the_tested_sides_moves():
    game = evaluation.WholeGame(Start("4", -1, 0), "4" + "1234567", 0, [])  # second player moves first after "4"
    assert game.playerMoves == 4
    assert evaluation.WholeGame(Start("4", 1, 0), "4" + "1234567", 0, []).playerMoves == 3


def test_player_plies_are_the_positions_the_tested_side_moved_in():
    game = evaluation.WholeGame(Start("4", -1, 0), "4" + "1234567", 0, [])
    assert game.playerPlies == [1, 3, 5, 7]
    assert all(GameState.fromMoves(game.moves[:ply]).playerTurn == -1 for ply in game.playerPlies)
    assert evaluation.WholeGame(Start("", 1, 0), "1234", 0, []).playerPlies == [0, 2]


def _mistake(visits: list[int], keeping: list[int]) -> Mistake:
    table = [{"column": c, "N": n, "P": 1 / 7, "Q": 0.0, "policy": 0.0} for c, n in enumerate(visits, 1)]
    return Mistake("", 1, 1, 0, {c: 0 for c in range(1, 8)}, keeping, 0.1, table)


def test_causes_search_then_prior_then_value():
    few = _mistake([90, 5, 1, 1, 1, 1, 1], keeping=[2])  # the keeping column got 5% of the visits
    many = _mistake([60, 40, 0, 0, 0, 0, 0], keeping=[2])
    assert few.keepingVisitShare == pytest.approx(0.05)
    assert evaluation.mistakeCause(few, deeperKeeps=True) == "search"
    assert evaluation.mistakeCause(few, deeperKeeps=False) == "prior"
    assert evaluation.mistakeCause(many, deeperKeeps=False) == "value"


def _playedOut(state: GameState) -> int:
    """The stones on the board when both sides play a best move by score (the fastest
    win, the slowest loss) from `state` to the end."""
    while not state.isEndGame:
        state = state.takeAction(evaluation.bestActions(evaluation.solverScores(state))[0])[0]
    return state.stones


@pytest.mark.parametrize("moves", ["121212", "4455", "444444333", "1234567123456712345", "44444433333352222"])
def test_the_end_of_perfect_play_is_where_best_play_ends_the_game(moves):
    state = GameState.fromMoves(moves)
    for action, score in evaluation.solverScores(state).items():
        after = state.takeAction(action)[0]
        ends = after.stones if after.isEndGame else _playedOut(after)
        assert evaluation.endOfPerfectPlay(score, state.stones) == ends, (moves, columnOf(action) + 1, score)


def test_the_end_of_perfect_play_refuses_scores_no_game_can_have():
    assert evaluation.endOfPerfectPlay(18, 6) == 7 and evaluation.endOfPerfectPlay(1, 0) == 41
    with pytest.raises(ValueError, match="a solver score of 18 cannot follow a move onto 30 stones"):
        evaluation.endOfPerfectPlay(18, 30)
    with pytest.raises(ValueError, match="0 to 41 stones"):
        evaluation.endOfPerfectPlay(-1, 42)


def test_a_mistakes_plies_to_the_end_are_counted_in_the_summary_and_its_text(starts):
    games = evaluation.playAgainstSolver(lambda i: LeftmostPlayer(), starts, seed=1)
    lost = [game for game in games if not game.kept]
    for game in lost:
        first = game.mistakes[0]
        after = GameState.fromMoves(first.moves + str(first.column))
        assert first.pliesToEnd == _playedOut(after) - after.stones
    summary = evaluation.wholeGameSummary(games)
    assert summary["plies_to_end"] == sorted(game.mistakes[0].pliesToEnd for game in lost)
    assert evaluation.pliesText([3, 12, 25, 30, 41]) == "0-9: 1, 10-19: 1, 20-29: 1, 30-41: 2 (median 25)"
    assert "plies from the first mistake to the end of perfect play: " in evaluation.wholeGameText(summary)


def test_the_horizon_study_searches_again_where_each_lost_game_went_wrong(run_folder, tmp_path, capsys):
    record = perfect.main(["--run-folder", str(run_folder), "--won", "3", "--drawn", "3", "--sims", "6"])
    lost = [game for game in record["games"] if not game["kept"]]
    assert lost, "an untrained network loses some starts against perfect play"
    out = tmp_path / "rows.json"
    rows = horizon.main([str(storage.whole_games_path(run_folder, 3, 6)), "--run-folder", str(run_folder),
                         "--out", str(out)])
    assert json.loads(out.read_text()) == rows
    assert [row["moves"] for row in rows] == [game["mistakes"][0]["moves"] for game in lost]
    for row, game in zip(rows, lost):
        state = GameState.fromMoves(row["moves"])
        assert row["cause"] == game["mistakes"][0]["cause"] and row["column"] == game["mistakes"][0]["column"]
        assert row["replayed_column"] in {columnOf(a) + 1 for a in state.allowedActions}
        assert 1 <= row["line"] <= row["deepest"] <= 42 - state.stones
    assert re.search(rf"^all +{len(rows)} ", capsys.readouterr().out, re.MULTILINE)


def test_the_horizon_study_refuses_a_record_without_lost_games(run_folder, tmp_path, capsys):
    record = perfect.main(["--run-folder", str(run_folder), "--won", "3", "--drawn", "3", "--sims", "6"])
    kept_only = tmp_path / "kept.json"
    kept_only.write_text(json.dumps({**record, "games": [g for g in record["games"] if g["kept"]]}))
    with pytest.raises(SystemExit):
        horizon.main([str(kept_only), "--run-folder", str(run_folder)])
    assert "holds no game that lost its start's value" in capsys.readouterr().err


def test_phases_follow_pons_stages():
    assert [evaluation.phaseOf(n) for n in (0, 14, 15, 28, 29, 41)] == [
        "begin", "begin", "middle", "middle", "end", "end"]


def test_an_agents_games_carry_its_search_and_round_trip_through_the_record(tiny_cfg, tiny_model, starts):
    agent = Agent.fromConfig("tiny", tiny_cfg, tiny_model, mcts_simulations=8)
    games = evaluation.playAgainstSolver(lambda i: agent.forGame(i), starts, seed=2, chunk=5)
    again = evaluation.playAgainstSolver(lambda i: agent.forGame(i), starts, seed=2, chunk=5)
    assert [g.moves for g in games] == [g.moves for g in again]  # seeded: the same games
    mistakes = [m for game in games for m in game.mistakes]
    assert mistakes, "an untrained network against perfect play loses value somewhere"
    for m in mistakes:
        state = GameState.fromMoves(m.moves)
        assert {row["column"] for row in m.table} == {columnOf(a) + 1 for a in state.allowedActions}
        assert sum(row["N"] for row in m.table) >= 8 and -1 <= m.network_value <= 1
        assert sum(row["P"] for row in m.table) == pytest.approx(1, abs=1e-3)
    deeper = evaluation.agentChooser(tiny_model, tiny_cfg, 32)
    classified = evaluation.classifyMistakes(games, deeper)
    assert all(m.cause in ("search", "prior", "value") for g in classified for m in g.mistakes)
    record = json.loads(json.dumps(evaluation.wholeGameRecord(classified, {"version": 0})))
    assert evaluation.readWholeGames(record) == classified
    assert record["summary"]["all"]["games"] == len(starts)
    causes = record["summary"]["causes"]
    assert sum(sum(c.values()) for c in causes.values()) == sum(not g.kept for g in classified)
    text = evaluation.wholeGameText(record["summary"])
    assert "won" in text and "drawn" in text and "first mistake" in text


def test_benchmark_script_writes_its_record(run_folder, tmp_path, capsys):
    out = tmp_path / "record.json"
    record = perfect.main(["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4",
                           "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(record))
    assert record["version"] == 3 and record["sims"] == 4 and record["summary"]["all"]["games"] == 4
    assert "kept" in capsys.readouterr().out


def test_a_smaller_sample_never_replaces_a_versions_record_but_goes_beside_it(run_folder, capsys):
    larger = perfect.main(["--run-folder", str(run_folder), "--won", "3", "--drawn", "2", "--sims", "4"])
    smaller = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4"])
    assert json.loads(storage.whole_games_path(run_folder, 3, 4).read_text()) == json.loads(json.dumps(larger))
    beside = storage.whole_games_path(run_folder, 3, 4, (1, 1))
    assert json.loads(beside.read_text()) == json.loads(json.dumps(smaller)) and str(beside) in capsys.readouterr().out
    again = perfect.main(["--run-folder", str(run_folder), "--won", "3", "--drawn", "3", "--sims", "4"])
    assert json.loads(storage.whole_games_path(run_folder, 3, 4).read_text()) == json.loads(json.dumps(again))


def test_a_play_seed_plays_the_same_starts_again_with_other_draws_into_a_record_of_its_own(run_folder, capsys):
    args = ["--run-folder", str(run_folder), "--won", "3", "--drawn", "3", "--sims", "4", "--no-classify"]
    main = perfect.main(args)
    again = perfect.main([*args, "--play-seed", "0"])  # the main record's own draws: the same games
    other = perfect.main([*args, "--play-seed", "7"])
    def starts(record: dict) -> list:
        return [game["start"] for game in record["games"]]
    assert starts(other) == starts(again) == starts(main) and again["games"] == main["games"]
    assert [game["moves"] for game in other["games"]] != [game["moves"] for game in main["games"]]
    assert main["play_seed"] is None and other["play_seed"] == 7 and other["seed"] == main["seed"] == 0
    path = storage.whole_games_path(run_folder, 3, 4, play_seed=7)
    assert path.name == "version0003-sims4-playseed7.json" and str(path) in capsys.readouterr().out
    assert json.loads(path.read_text()) == json.loads(json.dumps(other))
    assert json.loads(storage.whole_games_path(run_folder, 3, 4).read_text()) == json.loads(json.dumps(main))
    classified = perfect.main(["--run-folder", str(run_folder), "--classify", str(path)])
    whole = perfect.main([*args[:-1], "--play-seed", "7", "--out", str(run_folder / "whole.json")])
    assert [g["mistakes"] for g in classified["games"]] == [g["mistakes"] for g in whole["games"]]


def test_a_record_played_without_classifying_is_classified_afterwards_as_in_one_go(run_folder, tmp_path, capsys):
    args = ["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4"]
    later, at_once = tmp_path / "later.json", tmp_path / "at_once.json"
    unclassified = perfect.main([*args, "--no-classify", "--out", str(later)])
    mistakes = [m for game in unclassified["games"] for m in game["mistakes"]]
    assert mistakes and all(m["cause"] is None for m in mistakes)
    classified = perfect.main(["--run-folder", str(run_folder), "--classify", str(later)])
    assert json.loads(later.read_text()) == json.loads(json.dumps(classified))
    whole = perfect.main([*args, "--out", str(at_once)])
    def untimed(record: dict) -> dict:
        return {key: value for key, value in record.items() if key not in ("seconds", "seconds_playing")}
    assert untimed(classified) == untimed(whole)
    assert all(m["cause"] in ("search", "prior", "value") for game in classified["games"] for m in game["mistakes"])
    assert "Classifying the mistakes" in capsys.readouterr().out


def test_classifying_refuses_a_file_that_is_not_a_record(run_folder, tmp_path, capsys):
    wrong = tmp_path / "metrics.json"
    wrong.write_text(json.dumps({"iteration": 3}))
    with pytest.raises(SystemExit):
        perfect.main(["--run-folder", str(run_folder), "--classify", str(wrong)])
    assert "is not a whole-game record (no version, sims, search, seed, games)" in capsys.readouterr().err
    assert json.loads(wrong.read_text()) == {"iteration": 3}


@pytest.mark.parametrize("args, message", [(["--sims", "0"], "--sims"), (["--won", "0", "--drawn", "0"], "--won"),
                                           (["--max-moves", "21"], "--max-moves"), (["--version", "9"], "version 9"),
                                           (["--version", "-1"], "argument --version: must be a saved version, or 0"),
                                           (["--ensemble", "-1"], "argument --ensemble: must be a positive number")])
def test_benchmark_script_refuses_bad_arguments(run_folder, args, message, capsys):
    with pytest.raises(SystemExit):
        perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", *args])
    assert message in capsys.readouterr().err


def test_a_record_out_that_is_a_folder_is_refused_before_any_game_or_classifying(run_folder, tmp_path, capsys):
    with pytest.raises(SystemExit):
        perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--out", str(tmp_path)])
    assert f"argument --out: {tmp_path} is a folder" in capsys.readouterr().err
    assert not (run_folder / "perfect").exists()
    record = tmp_path / "record.json"
    record.write_text("{}")
    with pytest.raises(SystemExit):
        perfect.main(["--run-folder", str(run_folder), "--classify", str(record), "--out", str(run_folder)])
    assert f"argument --out: {run_folder} is a folder" in capsys.readouterr().err


def test_play_time_search_settings_reach_the_agent_and_nothing_else_may_change(run_folder, tiny_cfg):
    agent = runs.versionPlayer("agent", Game(), tiny_cfg, run_folder, 3, mcts_simulations=4,
                               search={"ROOT_SEARCH": "gumbel", "CPUCT": 2.5})
    assert agent.config.ROOT_SEARCH == "gumbel" and agent.cpuct == 2.5 and agent.forGame(1).cpuct == 2.5
    assert agent.config.as_dict() == {**tiny_cfg.as_dict(), "ROOT_SEARCH": "gumbel", "CPUCT": 2.5}
    with pytest.raises(ConfigError, match="LEARNING_RATE, MCTS_SIMS cannot change at play time"):
        withSearch(tiny_cfg, {"MCTS_SIMS": 8, "LEARNING_RATE": 0.1, "CPUCT": 2.0})
    with pytest.raises(ConfigError, match="CPUCT"):
        withSearch(tiny_cfg, {"CPUCT": -1.0})
    with pytest.raises(ConfigError, match=r"unknown config keys \['CPUTC'\]"):
        withSearch(tiny_cfg, {"CPUTC": 2.0})
    assert withSearch(tiny_cfg, None) is tiny_cfg


def test_search_changes_keep_only_what_changes_the_runs_search_as_the_config_holds_it(tiny_cfg):
    assert tiny_cfg.ROOT_SEARCH == "puct" and tiny_cfg.CPUCT == 1.0
    assert searchLabel(searchChanges(tiny_cfg, {"CPUCT": 2, "ROOT_SEARCH": "puct"})) == ", CPUCT=2.0"
    assert searchChanges(tiny_cfg, {"CPUCT": 1}) == {} == searchChanges(tiny_cfg, None)
    assert searchLabel(searchChanges(tiny_cfg, {"GUMBEL_C_SCALE": 1, "ROOT_SEARCH": "gumbel"})) == \
        ", GUMBEL_C_SCALE=1.0, ROOT_SEARCH=gumbel"


def test_benchmark_script_plays_with_search_settings_into_a_record_of_their_own(run_folder, capsys):
    own = perfect.main(["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4"])
    gumbel = perfect.main(["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4",
                           "--set", "ROOT_SEARCH=gumbel", "--set", "GUMBEL_SAMPLED_ACTIONS=2"])
    search = {"ROOT_SEARCH": "gumbel", "GUMBEL_SAMPLED_ACTIONS": 2}
    path = storage.whole_games_path(run_folder, 3, 4, search=search)
    assert path.name == "version0003-sims4-gumbel_sampled_actions-2-root_search-gumbel.json"
    assert json.loads(path.read_text())["search"] == search == gumbel["search"]
    assert json.loads(storage.whole_games_path(run_folder, 3, 4).read_text()) == json.loads(json.dumps(own))
    assert own["search"] == {}
    assert "ROOT_SEARCH=gumbel" in capsys.readouterr().out
    # Gumbel's root considers 2 moves only: the games are those of another search
    assert [g["moves"] for g in own["games"]] != [g["moves"] for g in gumbel["games"]]
    # the run's own search, asked for by name, is the run's own record
    again = perfect.main(["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4",
                          "--set", "ROOT_SEARCH=puct"])
    assert again["search"] == {} and again["games"] == own["games"]
    assert sorted(p.name for p in (run_folder / "perfect").iterdir()) == sorted([path.name, "version0003-sims4.json"])


def test_an_ensemble_plays_into_a_record_of_its_own_kept_out_of_the_curve_and_shipped_with_its_members(
        run_folder, capsys):
    args = ["--run-folder", str(run_folder), "--won", "2", "--drawn", "2", "--sims", "4", "--no-classify"]
    alone = perfect.main(args)
    joined = perfect.main([*args, "--ensemble", "1"])
    path = storage.whole_games_path(run_folder, 3, 4, ensemble=(1,))
    assert path.name == "version0003-sims4-ensemble-1.json" and "with version 1" in capsys.readouterr().out
    assert json.loads(path.read_text())["ensemble"] == [1] and alone["ensemble"] == []
    assert [g["moves"] for g in joined["games"]] != [g["moves"] for g in alone["games"]]
    classified = perfect.main(["--run-folder", str(run_folder), "--classify", str(path)])
    assert classified["ensemble"] == [1] and classified["games"][0]["moves"] == joined["games"][0]["moves"]
    assert storage.model_path(run_folder, 1) in shipping.shippedFiles(run_folder)  # no record of version 1 alone
    assert plots.wholeGameCurve(run_folder, shared=[]) == []  # version 3 was never promoted in a metrics row
    perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4", "--no-classify",
                  "--version", "1", "--ensemble", "3"])
    assert plots.wholeGameCurve(run_folder, shared=[]) == []  # version 1 is (the untrained best), not its ensemble
    with pytest.raises(SystemExit):
        perfect.main([*args, "--ensemble", "9"])
    assert "no saved version 9" in capsys.readouterr().err


def test_benchmark_script_refuses_a_setting_the_network_was_trained_with(run_folder, capsys):
    with pytest.raises(SystemExit):
        perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--set", "VALUE_HEAD=wdl"])
    assert "VALUE_HEAD cannot change at play time" in capsys.readouterr().err
    assert not (run_folder / "perfect").exists()


def test_benchmark_script_plays_the_agent_people_play_by_default(run_folder, tiny_cfg):
    storage.write_text(storage.config_path(run_folder), tiny_cfg.replace(PLAY_ROOT_SEARCH="gumbel").to_json())
    people = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4"])
    assert people["search"] == {"ROOT_SEARCH": "gumbel"}
    assert storage.whole_games_path(run_folder, 3, 4, search={"ROOT_SEARCH": "gumbel"}).exists()
    own = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4",
                        "--set", "ROOT_SEARCH=puct"])
    assert own["search"] == {} and storage.whole_games_path(run_folder, 3, 4).exists()


def test_own_search_scores_the_run_as_it_trains_not_as_it_plays_people(run_folder, tiny_cfg):
    played = tiny_cfg.replace(PLAY_ROOT_SEARCH="gumbel", PLAY_CPUCT=2.0)
    storage.write_text(storage.config_path(run_folder), played.to_json())
    people = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4"])
    assert people["search"] == {"CPUCT": 2.0, "ROOT_SEARCH": "gumbel"}
    own = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4", "--own-search"])
    assert own["search"] == {} and storage.whole_games_path(run_folder, 3, 4).exists()
    wider = perfect.main(["--run-folder", str(run_folder), "--won", "1", "--drawn", "1", "--sims", "4",
                          "--own-search", "--set", "CPUCT=3"])
    assert wider["search"] == {"CPUCT": 3.0}
