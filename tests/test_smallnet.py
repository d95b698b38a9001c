"""The smaller-network benchmark (benchmarks/smallnet.py): a student fitted to a run's
memory with its network as teacher."""

from __future__ import annotations

import json

import numpy as np
import pytest

import runs
import storage
from benchmarks import smallnet
from loss import POLICY_NOT_LEGAL
from game import GameState
from tests.helpers import randomPositions, withMemory


def test_teacher_policy_is_a_softmax_over_legal_moves_only():
    logits = np.array([[2.0, 1.0, 5.0], [0.0, 0.0, 0.0]])
    legal = np.array([[True, True, False], [True, False, True]])
    policy = smallnet.legalSoftmax(logits, legal)
    assert policy[0, 2] == POLICY_NOT_LEGAL and policy[1, 1] == POLICY_NOT_LEGAL
    assert policy[0, :2].sum() == pytest.approx(1.0) and policy[0, 0] > policy[0, 1]
    assert policy[1, [0, 2]] == pytest.approx([0.5, 0.5])


def test_targets_blend_teacher_and_memory_and_keep_illegal_moves_out():
    stored = {"value_head": np.array([1.0, -1.0]), "policy_head": np.array([[1.0, 0.0, -1.0], [-1.0, 0.5, 0.5]])}
    teacher = {"value_head": np.array([0.0, 0.0]), "policy_head": np.array([[0.0, 1.0, -1.0], [-1.0, 1.0, 0.0]])}
    half = smallnet.blendedTargets(stored, teacher, 0.5)
    assert half["value_head"] == pytest.approx([0.5, -0.5])
    assert half["policy_head"] == pytest.approx(np.array([[0.5, 0.5, -1.0], [-1.0, 0.75, 0.25]]))
    assert smallnet.blendedTargets(stored, teacher, 1.0)["policy_head"] == pytest.approx(teacher["policy_head"])
    assert smallnet.blendedTargets(stored, teacher, 0.0)["value_head"] == pytest.approx(stored["value_head"])


def test_a_student_fitted_to_the_teacher_comes_to_agree_with_it(run_folder, tiny_cfg):
    teacher = runs.networkFor(tiny_cfg, run_folder)
    teacher.loadWeights(storage.model_path(run_folder, 3))
    student = runs.networkFor(tiny_cfg, run_folder)
    states = randomPositions(200, seed=5)
    inputs = teacher.convertToModelInputs(states)
    legal = np.zeros((len(states), 42), dtype=bool)
    for i, state in enumerate(states):
        legal[i, state.allowedActions] = True
    values, logits = smallnet.predictAll(teacher, inputs, batch=64)
    targets = {"value_head": values, "policy_head": smallnet.legalSoftmax(logits, legal)}
    before = smallnet.agreement(student, teacher, inputs, legal)
    losses = smallnet.distil(student, inputs, targets, epochs=12, rate=0.05, batch=32, say=lambda text: None)
    after = smallnet.agreement(student, teacher, inputs, legal)
    assert len(losses) == 12 and losses[-1] < losses[0]
    assert after["value_abs_difference"] < before["value_abs_difference"]
    assert after["best_move_agreement"] > before["best_move_agreement"]


def test_teacher_selfplay_stores_positions_as_self_play_does(run_folder, tiny_cfg):
    teacher = runs.networkFor(tiny_cfg, run_folder)
    teacher.loadWeights(storage.model_path(run_folder, 3))
    said = []
    rows = smallnet.teacherSelfplay(teacher, tiny_cfg.replace(EPISODES=2), 3, say=said.append)
    assert len(said) == 2 and "3 of 3 games" in said[-1]  # two games, then the last one
    assert len(rows) >= 3 * 2 * 7  # three games of at least seven moves, each stored with its mirror
    for row in rows:
        legal = row["state"].allowedActions
        assert row["value"] in (-1, 0, 1) and np.sum(np.asarray(row["AV"])[legal]) == pytest.approx(1.0)


def test_sampled_games_keep_distinct_positions_of_legal_play(run_folder, tiny_cfg):
    teacher = runs.networkFor(tiny_cfg, run_folder)
    teacher.loadWeights(storage.model_path(run_folder, 3))
    said = []
    states = smallnet.teacherSampledPositions(teacher, 5, openingMoves=0, seed=1, lockstep=2, say=said.append)
    assert len(said) == 3 and "5 of 5" in said[-1]
    assert states[0].id == GameState.initial().id  # no opening moves: every game starts from the empty board
    assert len({state.id for state in states}) == len(states) and not any(state.isEndGame for state in states)
    assert set(range(7)) <= {state.stones for state in states}  # every position of a game, seven moves at least
    again = smallnet.teacherSampledPositions(teacher, 5, openingMoves=0, seed=1, lockstep=2, say=said.append)
    assert [state.id for state in again] == [state.id for state in states]
    firsts = []
    for seed in range(8):  # one game each: a chain of positions from the end of its opening on
        stones = sorted(state.stones for state in
                        smallnet.teacherSampledPositions(teacher, 1, openingMoves=8, seed=seed, say=said.append))
        assert stones == list(range(stones[0], stones[0] + len(stones))) and stones[0] <= 8
        firsts.append(stones[0])
    assert max(firsts) > 0  # the opening moves drawn are not kept


def test_sampled_actions_follow_the_weights_and_skip_illegal_moves():
    rng = np.random.default_rng(0)
    sure = np.array([[POLICY_NOT_LEGAL, 0.0, 1.0, POLICY_NOT_LEGAL], [1.0, POLICY_NOT_LEGAL, 0.0, 0.0]])
    assert all((smallnet.sampledActions(sure, rng) == [2, 0]).all() for _ in range(50))
    mixed = np.tile([[0.25, POLICY_NOT_LEGAL, 0.75, 0.0]], (20_000, 1))
    drawn = smallnet.sampledActions(mixed, rng)
    assert set(drawn.tolist()) == {0, 2}
    assert np.mean(drawn == 2) == pytest.approx(0.75, abs=0.02)


def test_script_teaches_a_smaller_student_and_scores_both(run_folder, tmp_path, capsys):
    withMemory(run_folder)
    pons = tmp_path / "pons"
    pons.mkdir()
    for name in smallnet.PONS_SETS:
        (pons / name).write_text("2252576253462244111563365343671351441 -1\n")
    out = tmp_path / "smallnet.json"
    result = smallnet.main(["--run-folder", str(run_folder), "--blocks", "1", "--filters", "4", "--epochs", "2",
                            "--selfplay-games", "2", "--sampled-games", "30", "--sims", "4", "--limit", "1", "--pons-folder", str(pons),
                            "--save-student", str(tmp_path / "student.keras"), "--out", str(out)])
    assert result["student"]["positions"] > 120  # the memory's 120 positions and the new games'
    assert 0 < result["student"]["sampled_positions"] < result["student"]["positions"]
    assert result["student"]["multiply_adds"] < result["teacher"]["multiply_adds"]
    assert result["teacher"]["version"] == 3 and len(result["student"]["losses"]) == 2
    assert set(result["teacher"]["pons"]) == set(result["student"]["pons"]) == set(smallnet.PONS_SETS)
    assert all(r["positions_per_s"] > 0 for r in (result["teacher"], result["student"]))
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert "multiply-adds" in capsys.readouterr().out
    saved = storage.load_model(tmp_path / "student.keras")
    convolutions = [layer for layer in saved.layers if layer.__class__.__name__ == "Conv2D"]
    assert max(layer.filters for layer in convolutions) == 4  # the student's trunk, not the teacher's 8 filters


@pytest.mark.parametrize("args, message", [(["--teacher-weight", "1.5"], "--teacher-weight"),
                                           (["--selfplay-games", "-1"], "--selfplay-games"),
                                           (["--sampled-games", "-2"], "--sampled-games"),
                                           (["--version", "9"], "version 9"), (["--filters", "0"], "--filters")])
def test_script_refuses_bad_arguments(run_folder, args, message, capsys):
    withMemory(run_folder)
    with pytest.raises(SystemExit):
        smallnet.main(["--run-folder", str(run_folder), "--blocks", "1", "--filters", "4", *args])
    assert message in capsys.readouterr().err


def test_script_needs_a_memory_snapshot(run_folder, capsys):
    with pytest.raises(SystemExit):
        smallnet.main(["--run-folder", str(run_folder), "--blocks", "1", "--filters", "4"])
    assert "no memory snapshot" in capsys.readouterr().err
