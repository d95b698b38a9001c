"""Self-play's targets against perfect play (benchmarks/targets.py)."""

from __future__ import annotations

import json

import pytest

import evaluation
import storage
from benchmarks import refit, targets
from tests.helpers import withMemory


def solvedRows(folder):
    """The test memory's rows, each with z and q set to the position's true result."""
    rows = refit.memoryRows([storage.memory_path(withMemory(folder), 4)], 256)
    for row in rows:
        row["value"] = row["q"] = evaluation.outcomeClass(max(evaluation.solverScores(row["state"]).values()))
    return rows


def test_true_targets_agree_everywhere_and_a_zero_q_halves_them(run_folder):
    rows = solvedRows(run_folder)
    exact = targets.targetAgreement(rows, 1000, 0.5)
    assert sum(g["positions"] for g in exact) == len(rows)
    assert all(g["z_is_result"] == 1.0 and g["target_error"] == 0.0 for g in exact)
    assert all(s["z_is_result"] == 1.0 for s in targets.stageSummary(exact).values())
    for row in rows:
        row["q"] = 0.0
    halved = targets.targetAgreement(rows, 1000, 0.5)
    assert {(g["result"], g["target_error"]) for g in halved} <= {("won", 0.5), ("drawn", 0.0), ("lost", 0.5)}
    assert sum(g["positions"] for g in targets.targetAgreement(rows, 10, 0.5)) <= 10 * len(evaluation.PHASES)


def test_a_wrong_result_counts_against_its_stage(run_folder):
    rows = solvedRows(run_folder)
    wrong = next(row for row in rows if row["value"] == 0)
    wrong["value"] = 1.0
    summary = targets.stageSummary(targets.targetAgreement(rows, 1000, 0.5))
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
