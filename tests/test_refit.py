"""The refit benchmark (benchmarks/refit.py): a run's network retrained further on its
memory, scored by the raw network on Pons-format sets."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

import evaluation
import runs
import storage
from benchmarks import refit
from game import GameState
from tests.helpers import withMemory

from tests.conftest import PONS_POSITIONS as POSITIONS


def test_a_sets_truth_is_its_keeping_moves_and_results(pons_folder):
    truth = refit.PonsTruth("Test_L1_R3", evaluation.loadPonsSet(pons_folder / "Test_L1_R3", 10))
    assert [state.id for state in truth.states] == [GameState.fromMoves(m).id for m in POSITIONS]
    assert truth.results.tolist() == [1.0, -1.0, 0.0]
    assert truth.keeping[0] == {truth.states[0].actionForColumn(3)}
    assert truth.keeping[1] == set(truth.states[1].allowedActions)


def test_network_figures_count_mistakes_as_make_pons_does(run_folder, tiny_cfg, pons_folder):
    network = runs.networkFor(tiny_cfg, run_folder)
    network.loadWeights(storage.model_path(run_folder, 3))
    truth = refit.PonsTruth("Test_L1_R3", evaluation.loadPonsSet(pons_folder / "Test_L1_R3", 10))
    figures = refit.networkFigures(network, truth)
    rate = evaluation.mistakeRate(truth.states, evaluation.networkChooser(network)).rate
    assert figures["policy"] == pytest.approx(100 * rate)
    values, _ = network.predict(network.convertToModelInputs(truth.states))
    assert figures["value"] == pytest.approx(np.mean(np.abs(np.asarray(values).reshape(-1) - [1, -1, 0])))


def test_refit_trains_the_network_and_scores_it_after_each_count(run_folder, pons_folder, tmp_path):
    withMemory(run_folder)
    out = tmp_path / "refit.json"
    table = refit.main(["--run-folder", str(run_folder), "--version", "1", "--replays", "1,3", "--sets", "L1_R3",
                        "--targets", "5",
                        "--limit", "3", "--pons-folder", str(pons_folder), "--out", str(out)])
    assert [row["replays"] for row in table] == [0, 1, 3]
    assert table[0]["losses"] is None and all(set(row["losses"]) >= {"loss", "value_loss"} for row in table[1:])
    assert table[0]["sets"]["Test_L1_R3"]["value"] != table[2]["sets"]["Test_L1_R3"]["value"]
    saved = json.loads(out.read_text())
    assert saved["rows"] == 120 and saved["version"] == 1 and len(saved["table"]) == 3


def test_the_versions_own_selfplay_games_are_added_with_their_settings(run_folder, pons_folder, tmp_path):
    withMemory(run_folder)
    out = tmp_path / "refit.json"
    refit.main(["--run-folder", str(run_folder), "--version", "1", "--replays", "1", "--sets", "L1_R3",
                "--pons-folder", str(pons_folder), "--selfplay-games", "2", "--set", "RANDOM_OPENING_MOVES=3",
                "--out", str(out)])
    saved = json.loads(out.read_text())
    assert saved["rows"] > 120 and saved["selfplay_games"] == 2 and saved["settings"] == {"RANDOM_OPENING_MOVES": 3}


@pytest.mark.parametrize("extra, named", [(["--set", "RANDOM_OPENING_MOVES=3"], "--selfplay-games"),
                                          (["--selfplay-games", "2", "--set", "NO_SUCH_SETTING=1"], "NO_SUCH_SETTING"),
                                          (["--selfplay-games", "-1"], "--selfplay-games"),
                                          (["--truth-labels", "x.npz"], "--truth-labels"),
                                          (["--record-positions", "x.json"], "--truth"),
                                          (["--truth", "--record-positions", "no_record.json"], "no_record.json"),
                                          (["--out", "."], "argument --out: . is a folder"),
                                          (["--save-network", "."], "argument --save-network: . is a folder"),
                                          (["--sets", "L1_R1"], "lacks the set files ['Test_L1_R1']")])
def test_wrong_options_are_refused_by_name(run_folder, pons_folder, capsys, extra, named):
    withMemory(run_folder)
    with pytest.raises(SystemExit):
        refit.main(["--run-folder", str(run_folder), "--sets", "L1_R3", "--pons-folder", str(pons_folder), *extra])
    assert named in capsys.readouterr().err


def test_a_run_folder_without_a_run_is_refused_by_name(tmp_path, pons_folder, capsys):
    for folder, message in ((tmp_path / "nowhere", f"argument --run-folder: no folder {tmp_path / 'nowhere'}"),
                            (tmp_path, f"config file {storage.config_path(tmp_path)} does not exist")):
        with pytest.raises(SystemExit):
            refit.main(["--run-folder", str(folder), "--sets", "L1_R3", "--pons-folder", str(pons_folder)])
        assert message in capsys.readouterr().err


def test_memory_files_are_fitted_together(run_folder):
    withMemory(run_folder)
    snapshot = storage.memory_path(run_folder, 4)
    one, two = refit.memoryRows([snapshot], 256), refit.memoryRows([snapshot, snapshot], 256)
    assert len(two) == 2 * len(one) == 240
    assert [row["id"] for row in two[120:]] == [row["id"] for row in one]


def test_a_missing_memory_file_is_named(run_folder, pons_folder, tmp_path):
    missing = tmp_path / "old.npz"
    with pytest.raises(storage.RunFileError, match="old.npz"):
        refit.main(["--run-folder", str(run_folder), "--memory", str(missing), "--sets", "L1_R3",
                    "--pons-folder", str(pons_folder)])


@pytest.mark.parametrize("text", ["30,15", "0,5", "15,15", "a", ""])
def test_replay_counts_must_be_positive_and_increasing(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--replays"):
        refit.replayCounts(text)


def test_a_run_without_memory_asks_for_memory_files(run_folder, pons_folder, capsys):
    with pytest.raises(SystemExit):
        refit.main(["--run-folder", str(run_folder), "--sets", "L1_R3", "--pons-folder", str(pons_folder)])
    assert "--memory" in capsys.readouterr().err


def test_a_widened_version_starts_from_its_figures_and_trains_its_new_filters(run_folder, pons_folder, tmp_path):
    withMemory(run_folder)
    common = ["--run-folder", str(run_folder), "--version", "1", "--replays", "2", "--sets", "L1_R3",
              "--limit", "3", "--pons-folder", str(pons_folder)]
    narrow = refit.main(common)
    out = tmp_path / "wide.json"
    wide = refit.main([*common, "--filters", "12", "--out", str(out)])
    assert wide[0]["sets"]["Test_L1_R3"]["value"] == pytest.approx(narrow[0]["sets"]["Test_L1_R3"]["value"], abs=1e-5)
    assert wide[1]["losses"]["loss"] != pytest.approx(narrow[1]["losses"]["loss"], abs=1e-6)
    saved = json.loads(out.read_text())
    assert saved["filters"] == 12


def test_a_refit_cannot_narrow_the_trunk(run_folder, pons_folder, capsys):
    withMemory(run_folder)
    with pytest.raises(SystemExit):
        refit.main(["--run-folder", str(run_folder), "--sets", "L1_R3", "--pons-folder", str(pons_folder),
                    "--filters", "4"])
    assert "--filters 4 is narrower" in capsys.readouterr().err


def _rows(states: list[GameState]) -> list[dict]:
    """Memory rows of `states` with self-play's kind of targets: a uniform policy, a
    lost game and a search value of 0.25."""
    rows = []
    for state in states:
        av = np.zeros(42, dtype=np.float32)
        av[state.allowedActions] = 1 / len(state.allowedActions)
        rows.append({"board": state.board, "state": state, "id": state.id, "AV": av,
                     "playerTurn": state.playerTurn, "value": -1.0, "q": 0.25})
    return rows


def test_truth_rows_teach_the_true_result_and_the_search_policy_without_its_mistakes():
    states = [GameState.fromMoves(moves) for moves in POSITIONS]
    rows = refit.truthRows(_rows(states), refit.solverLabels(states))
    assert [row["value"] for row in rows] == [row["q"] for row in rows] == [1.0, -1.0, 0.0]
    assert np.flatnonzero(rows[0]["AV"]).tolist() == [states[0].actionForColumn(3)]
    assert rows[0]["AV"].sum() == pytest.approx(1.0)
    assert np.flatnonzero(rows[1]["AV"]).tolist() == sorted(states[1].allowedActions)
    assert rows[1]["AV"][states[1].allowedActions] == pytest.approx(1 / len(states[1].allowedActions))
    draws = [a for a in states[2].allowedActions if not evaluation.isMistake(states[2], a)]
    assert np.flatnonzero(rows[2]["AV"]).tolist() == sorted(draws) and len(draws) < len(states[2].allowedActions)
    searched = _rows(states[2:])
    searched[0]["AV"] = np.zeros(42, dtype=np.float32)
    searched[0]["AV"][states[2].allowedActions] = np.arange(1, len(states[2].allowedActions) + 1)
    searched[0]["AV"] /= searched[0]["AV"].sum()
    (cleaned,) = refit.truthRows(searched, refit.solverLabels(states[2:]))
    expected = np.where(np.isin(np.arange(42), draws), searched[0]["AV"], 0)
    assert cleaned["AV"] == pytest.approx(expected / expected.sum())


def test_a_keeping_move_the_search_gave_nothing_shares_the_policy_evenly():
    state = GameState.fromMoves(POSITIONS[0])
    (row,) = _rows([state])
    row["AV"] = np.zeros(42, dtype=np.float32)
    row["AV"][state.actionForColumn(1)] = 1.0
    (cleaned,) = refit.truthRows([row], refit.solverLabels([state]))
    assert np.flatnonzero(cleaned["AV"]).tolist() == [state.actionForColumn(3)] and cleaned["AV"].sum() == 1.0


def test_the_learners_value_target_is_the_truth_whatever_the_q_weight(run_folder, tiny_cfg):
    states = [GameState.fromMoves(moves) for moves in POSITIONS]
    rows = refit.truthRows(_rows(states), refit.solverLabels(states))
    network = runs.networkFor(tiny_cfg, run_folder)
    for weight in (0.0, 0.5, 1.0):
        _, targets = network.trainingData(rows, weight)
        assert np.asarray(targets["value_head"]).reshape(-1).tolist() == [1.0, -1.0, 0.0]


def test_solver_labels_survive_their_file_and_a_damaged_one_is_named(tmp_path):
    states = [GameState.fromMoves(moves) for moves in POSITIONS]
    labels = refit.solverLabels(states + states)
    assert len(labels) == 3
    path = tmp_path / "labels.npz"
    refit.saveLabels(path, labels)
    again = refit.loadLabels(path)
    assert set(again) == set(labels)
    assert all(again[key][0] == labels[key][0] and again[key][1].tolist() == labels[key][1].tolist() for key in labels)
    path.write_bytes(b"not an npz")
    with pytest.raises(storage.RunFileError, match="labels.npz"):
        refit.loadLabels(path)


def test_a_truth_refit_labels_once_and_reads_the_labels_after(run_folder, pons_folder, tmp_path, capsys):
    withMemory(run_folder)
    labels, out = tmp_path / "labels.npz", tmp_path / "refit.json"
    args = ["--run-folder", str(run_folder), "--version", "1", "--replays", "1", "--sets", "L1_R3",
            "--pons-folder", str(pons_folder), "--truth", "--truth-labels", str(labels), "--out", str(out)]
    refit.main(args)
    first = capsys.readouterr().out
    assert "Labelling 120 rows' positions with the solver" in first and "the solver's targets" in first
    assert len(refit.loadLabels(labels)) == len({row["id"] for row in refit.memoryRows(
        [storage.memory_path(run_folder, 4)], 256)})
    saved = tmp_path / "refitted.keras"
    refit.main(args + ["--save-network", str(saved)])
    assert "Labelling" not in capsys.readouterr().out
    assert json.loads(out.read_text())["truth"] is True
    network = runs.networkFor(runs.runConfig(run_folder), run_folder)
    network.loadWeights(storage.model_path(run_folder, 1))
    before = [w.copy() for w in network.model.get_weights()]
    network.loadWeights(saved)
    assert any(not np.array_equal(a, b) for a, b in zip(before, network.model.get_weights()))
    assert storage.saved_versions(run_folder) == [1, 3]


def test_the_positions_of_whole_games_are_rows_with_the_networks_prior(run_folder, tiny_cfg, tmp_path):
    network = runs.networkFor(tiny_cfg, run_folder)
    network.loadWeights(storage.model_path(run_folder, 3))
    start = evaluation.Start("44", 1, 0)
    record = evaluation.wholeGameRecord([evaluation.WholeGame(start, "4433", 0, []),
                                         evaluation.WholeGame(start, "4455", 0, [])], {"version": 3, "sims": 8})
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    rows = refit.recordRows([path], network, batch=2)
    positions = ["44", "443", "445"]  # from the start on, each once, the end position not kept
    assert sorted(row["id"] for row in rows[::2]) == sorted(GameState.fromMoves(m).id for m in positions)
    assert [row["id"] for row in rows[1::2]] == [GameState.fromMoves(m).mirrored().id for m in ["44", "443", "445"]]
    state = GameState.fromMoves("44")
    _, logits = network.predict(network.convertToModelInputs([state]))
    legal = list(state.allowedActions)
    expected = np.exp(logits[0][legal] - logits[0][legal].max())
    assert rows[0]["AV"][legal] == pytest.approx(expected / expected.sum(), abs=1e-6)
    assert rows[0]["AV"].sum() == pytest.approx(1.0) and set(np.flatnonzero(rows[0]["AV"])) <= set(legal)
    labelled = refit.truthRows(rows, refit.solverLabels([row["state"] for row in rows]))
    assert all(row["value"] == row["q"] and row["value"] in (-1.0, 0.0, 1.0) for row in labelled)
