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
    truth = refit.PonsTruth("Test_L1_R3", pons_folder, 10)
    assert [state.id for state in truth.states] == [GameState.fromMoves(m).id for m in POSITIONS]
    assert truth.results.tolist() == [1.0, -1.0, 0.0]
    assert truth.keeping[0] == {truth.states[0].actionForColumn(3)}
    assert truth.keeping[1] == set(truth.states[1].allowedActions)


def test_network_figures_count_mistakes_as_make_pons_does(run_folder, tiny_cfg, pons_folder):
    network = runs.networkFor(tiny_cfg, run_folder)
    network.loadWeights(storage.model_path(run_folder, 3))
    truth = refit.PonsTruth("Test_L1_R3", pons_folder, 10)
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
                                          (["--selfplay-games", "-1"], "--selfplay-games")])
def test_wrong_selfplay_options_are_refused_by_name(run_folder, pons_folder, capsys, extra, named):
    withMemory(run_folder)
    with pytest.raises(SystemExit):
        refit.main(["--run-folder", str(run_folder), "--sets", "L1_R3", "--pons-folder", str(pons_folder), *extra])
    assert named in capsys.readouterr().err


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
