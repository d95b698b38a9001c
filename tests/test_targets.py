"""Self-play's targets against perfect play (benchmarks/targets.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import evaluation
import storage
from agent import Agent
from benchmarks import refit, targets
from game import GameState
from config import Config
from tests.helpers import withMemory

HALF_Q = Config(VALUE_TARGET_Q_WEIGHT=0.5)


def solvedRows(folder):
    """The test memory's rows, each with z and q set to the position's true result."""
    rows = refit.memoryRows([storage.memory_path(withMemory(folder), 4)], 256)
    for row in rows:
        row["value"] = row["q"] = evaluation.outcomeClass(max(evaluation.solverScores(row["state"]).values()))
    return rows


def test_true_targets_agree_everywhere_and_a_zero_q_halves_them(run_folder):
    rows = solvedRows(run_folder)
    exact = targets.targetAgreement(rows, 1000, HALF_Q)
    assert sum(g["positions"] for g in exact) == len(rows)
    assert all(g["z_is_result"] == 1.0 and g["target_error"] == 0.0 for g in exact)
    assert all(s["z_is_result"] == 1.0 for s in targets.stageSummary(exact).values())
    for row in rows:
        row["q"] = 0.0
    halved = targets.targetAgreement(rows, 1000, HALF_Q)
    assert {(g["result"], g["target_error"]) for g in halved} <= {("won", 0.5), ("drawn", 0.0), ("lost", 0.5)}
    assert sum(g["positions"] for g in targets.targetAgreement(rows, 10, HALF_Q)) <= 10 * len(evaluation.PHASES)


def test_a_wrong_result_counts_against_its_stage(run_folder):
    rows = solvedRows(run_folder)
    wrong = next(row for row in rows if row["value"] == 0)
    wrong["value"] = 1.0
    summary = targets.stageSummary(targets.targetAgreement(rows, 1000, HALF_Q))
    stage = evaluation.phaseOf(int((wrong["state"].board != 0).sum()))
    assert summary[stage]["z_is_result"] == pytest.approx(1 - 1 / summary[stage]["positions"])
    assert all(s["z_is_result"] == 1.0 for name, s in summary.items() if name != stage)


def test_each_arm_plays_its_own_games_and_is_checked(run_folder, tmp_path):
    out = tmp_path / "targets.json"
    results = targets.main(["--run-folder", str(run_folder), "--version", "1", "--games", "2", "--positions", "5",
                            "--arm", "MCTS_SIMS=8", "--arm", "MCTS_SIMS=4,TURNS_UNTIL_TAU0=0", "--out", str(out)])
    assert [r["changes"] for r in results] == [{"MCTS_SIMS": 8}, {"MCTS_SIMS": 4, "TURNS_UNTIL_TAU0": 0}]
    for result in results:
        assert result["positions_stored"] > 0
        assert 0 < sum(g["positions"] for g in result["groups"]) <= 5 * len(evaluation.PHASES)
    saved = json.loads(out.read_text())
    assert saved["version"] == 1 and len(saved["arms"]) == 2


def test_a_wrong_setting_is_named(run_folder, capsys):
    with pytest.raises(SystemExit):
        targets.main(["--run-folder", str(run_folder), "--arm", "NO_SUCH_SETTING=1"])
    assert "NO_SUCH_SETTING" in capsys.readouterr().err


def winningNow(columns: list[int]) -> GameState:
    """The position after `columns` (one stone each, alternating), the player to move
    then winning at once."""
    state = GameState.initial()
    for column in columns:
        state = state.takeAction(next(a for a in state.allowedActions if a % 7 == column))[0]
    return state


WINS_AT_ONCE = [winningNow(c) for c in ([0, 1, 0, 1, 0, 6], [3, 3, 4, 4, 5, 5], [6, 0, 6, 0, 6, 2], [2, 2, 3, 3, 4, 4])]


def test_values_are_scored_by_their_nearest_result(run_folder):
    rows = solvedRows(run_folder)
    picks = targets.stagePicks(rows, 1000)
    truth = targets.stageSummary(targets.valueAgreement(picks, lambda picked: [row["value"] for row in picked]))
    assert all(s["value_is_result"] == 1.0 and s["value_error"] == 0.0 for s in truth.values())
    leaning = targets.valueAgreement(picks, lambda picked: [0.4] * len(picked))
    assert {(g["result"], g["value_is_result"], round(g["value_error"], 6)) for g in leaning} <= {
        ("won", 0.0, 0.6), ("drawn", 1.0, 0.4), ("lost", 0.0, 1.4)}
    assert targets.targetAgreement(rows, 1000, HALF_Q) == targets.targetGroups(picks, HALF_Q)


def test_a_new_search_finds_the_win_and_leaves_the_rows_alone(tiny_cfg, tiny_model):
    rows = [{"state": state, "value": -1.0, "q": -1.0, "AV": np.zeros(42, dtype=np.float32)} for state in WINS_AT_ONCE]
    agent = Agent.fromConfig("search", tiny_cfg, tiny_model, seed=1, mcts_simulations=64)
    assert list(targets.searchValues(agent, rows, chunk=3)) == [1.0] * len(rows)
    assert all(row["q"] == -1.0 and not row["AV"].any() for row in rows)
    assert targets.networkValues(tiny_model, rows).shape == (len(rows),)


def test_search_sims_value_the_same_positions(run_folder, capsys):
    results = targets.main(["--run-folder", str(run_folder), "--version", "1", "--games", "2", "--positions", "5",
                            "--search-sims", "4", "8", "--search-positions", "3"])
    values = results[0]["values"]
    assert list(values) == ["network", "search 4 sims", "search 8 sims"]
    counts = [sum(g["positions"] for g in groups) for groups in values.values()]
    assert counts[0] == counts[1] == counts[2] and 0 < counts[0] <= 3 * len(evaluation.PHASES)
    assert "search 8 sims" in capsys.readouterr().out


def test_pons_positions_are_valued_set_by_set_without_games(run_folder, tmp_path):
    pons = tmp_path / "pons"
    pons.mkdir()
    (pons / "Test_L1_R1").write_text("121217 18\n445566 18\n")  # the player to move wins at once
    (pons / "Test_L3_R1").write_text("2252576253462244111563365343671351441 -1\n")
    results = targets.main(["--run-folder", str(run_folder), "--version", "1", "--pons-set", "L1_R1",
                            "--pons-set", "L3_R1", "--pons-folder", str(pons), "--search-sims", "64"])
    values = results[0]["values"]
    searched = targets.stageSummary(values["search 64 sims"])
    assert list(searched) == ["begin-easy", "end-easy"]
    assert searched["begin-easy"] == {"positions": 2, "value_is_result": 1.0, "value_error": 0.0}
    assert targets.stageSummary(values["network"])["end-easy"]["positions"] == 1


def test_a_records_positions_are_those_its_agent_moved_in(run_folder, tmp_path):
    games = [evaluation.WholeGame(evaluation.Start("", 1, 1), "1212121", 1, []),
             evaluation.WholeGame(evaluation.Start("4", -1, 0), "4444", 0, [])]
    record = tmp_path / "record.json"
    storage.write_json(record, evaluation.wholeGameRecord(games, {"version": 1}))
    ((label, picked, results),) = targets.recordPicks(record, 10)
    assert label == "kept game, begin"
    moved = {"", "12", "1212", "121212", "4", "444"}
    assert {state.id for state in (row["state"] for row in picked)} == {GameState.fromMoves(m).id for m in moved}
    truth = {row["state"].id: result for row, result in zip(picked, results)}
    assert truth[GameState.fromMoves("121212").id] == 1
    assert all(truth[GameState.fromMoves(m).id] == evaluation.solvedPosition(GameState.fromMoves(m))[0]
               for m in moved)
    out = tmp_path / "values.json"
    results = targets.main(["--run-folder", str(run_folder), "--version", "1", "--record", str(record),
                            "--search-sims", "64", "--out", str(out)])
    assert targets.stageSummary(results[0]["values"]["network"])["kept game, begin"]["positions"] == 6
    assert json.loads(out.read_text())["record"]["path"] == str(record)


def test_a_games_positions_fall_before_at_or_after_its_first_mistake():
    start = evaluation.Start("", 1, 0)
    mistake = evaluation.Mistake("12", 3, 0, -1, {}, [])
    lost = evaluation.WholeGame(start, "1234567", -1, [mistake])
    assert [targets.recordPart(lost, ply) for ply in lost.playerPlies] == [
        "before the 1st mistake", "at the 1st mistake", "after the 1st mistake", "after the 1st mistake"]
    assert targets.recordPart(evaluation.WholeGame(start, "1234", 0, []), 2) == "kept game"


def test_the_label_table_gives_a_line_per_label():
    groups = [{"stage": "after the 1st mistake, middle", "result": "lost", "positions": 4, "value_is_result": 0.25,
               "value_error": 1.0},
              {"stage": "kept game, begin", "result": "won", "positions": 2, "value_is_result": 1.0,
               "value_error": 0.1}]
    lines = targets.labelTable({"network": groups}).splitlines()
    assert len(lines) == 3 and "network: nearest = t" in lines[0]
    assert lines[1].split()[-3:] == ["4", "0.250", "1.000"] and lines[2].startswith("kept game, begin")


def test_a_damaged_record_is_named(run_folder, tmp_path):
    record = tmp_path / "record.json"
    record.write_text("{not json")
    with pytest.raises(storage.RunFileError, match="record.json"):
        targets.main(["--run-folder", str(run_folder), "--version", "1", "--record", str(record)])


def test_the_stones_table_puts_each_position_in_its_bucket(run_folder):
    rows = solvedRows(run_folder)
    for row in rows:
        row["q"] = -0.9 * row["value"]  # z true, q the wrong way
    picks = targets.stagePicks(rows, 1000)
    lines = targets.stonesTable(picks, bucket=42).splitlines()
    assert len(lines) == 2
    count, z_true, z_error, z_square, q_near, *_ = lines[1].split()[1:]
    assert int(count) == len(rows) and (z_true, z_error, z_square) == ("1.000", "0.000", "0.000")
    drawn = np.mean([row["value"] == 0 for row in rows])
    assert float(q_near) == pytest.approx(drawn, abs=1e-3)  # only the drawn positions' q (0) is right


def test_a_missing_run_set_or_output_is_refused_by_name_before_any_game(run_folder, pons_folder, tmp_path, capsys):
    for args, message in ((["--run-folder", str(tmp_path / "nowhere")], "argument --run-folder: no folder"),
                          (["--run-folder", str(tmp_path)], f"config file {storage.config_path(tmp_path)} does not"),
                          (["--pons-set", "L1_R1", "--pons-folder", str(pons_folder)], "lacks the set files"),
                          (["--out", str(tmp_path)], f"argument --out: {tmp_path} is a folder")):
        with pytest.raises(SystemExit):
            targets.main(["--run-folder", str(run_folder), "--version", "1", "--games", "2", *args])
        assert message in capsys.readouterr().err
