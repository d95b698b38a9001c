"""The colour plane (COLOUR_PLANE): a third input plane saying who is to move, read by
the network, carried into a branch without changing its judgement, trained, exported."""

from __future__ import annotations

import keras
import numpy as np
import pytest

import branches
import export
import funcs
import loggers
import runs
import storage
from config import DEFAULT, ConfigError
from export import randomPositions
from game import CELLS, Game, GameState, inputShape, networkInputs
from model import Residual_CNN, transferWeights
from test_runs import runCopy, trained_run  # noqa: F401 (a fixture)


def test_the_colour_plane_says_who_is_to_move_and_leaves_the_stones_as_they_were():
    states = [GameState.fromMoves(moves) for moves in ("", "4", "44", "4453", "44531")]
    plain, coloured = networkInputs(states), networkInputs(states, colourPlane=True)
    assert plain.shape == (5, 2 * CELLS) and coloured.shape == (5, 3 * CELLS)
    np.testing.assert_array_equal(coloured[:, :2 * CELLS], plain)
    assert [set(row[2 * CELLS:]) for row in coloured] == [{1.0}, {0.0}, {1.0}, {1.0}, {0.0}]
    assert all((row[2 * CELLS] == 1) == (state.playerTurn == 1) for row, state in zip(coloured, states))
    assert inputShape() == (2, 6, 7) and inputShape(colourPlane=True) == (3, 6, 7)


def test_the_tutorials_config_reads_no_colour_plane_and_a_wrong_value_is_refused():
    assert DEFAULT.COLOUR_PLANE is False
    with pytest.raises(ConfigError, match="COLOUR_PLANE must be True or False, got 'yes'"):
        DEFAULT.replace(COLOUR_PLANE="yes")


def _network(cfg, colour: bool, seed: int) -> Residual_CNN:
    keras.utils.set_random_seed(seed)
    return Residual_CNN.fromConfig(cfg.replace(COLOUR_PLANE=colour), (2, 6, 7), 42)


def test_a_network_with_the_colour_plane_reads_three_planes_of_its_inputs(tiny_cfg):
    network = _network(tiny_cfg, True, seed=1)
    assert network.input_dim == (3, 6, 7) and network.colourPlane and network.model.input_shape == (None, 3, 6, 7)
    states = randomPositions(8, seed=2)
    x = network.convertToModelInputs(states)
    assert x.shape == (8, 3, 6, 7)
    np.testing.assert_array_equal(network.convertToModelInput(states[3]), x[3])
    values, logits = network.predict(x)
    assert values.shape == (8,) and logits.shape == (8, 42)
    swapped = x.copy()
    swapped[:, 2] = 1 - swapped[:, 2]
    assert not np.allclose(network.predict(swapped)[0], values), "the plane reaches the outputs"
    assert not _network(tiny_cfg, False, seed=1).colourPlane


def test_a_network_given_the_colour_plane_starts_judging_as_before_and_then_learns_from_it(tiny_cfg):
    plain, coloured = _network(tiny_cfg, False, seed=3), _network(tiny_cfg, True, seed=4)
    transferWeights(plain.model, coloured.model)
    coloured.weightsChanged()
    states = randomPositions(64, seed=5)
    for before, after in zip(plain.model(plain.convertToModelInputs(states)),
                             coloured.model(coloured.convertToModelInputs(states))):
        np.testing.assert_allclose(np.asarray(after), np.asarray(before), atol=1e-5)
    first = next(layer for layer in coloured.model.layers if isinstance(layer, keras.layers.Conv2D))
    assert np.all(first.get_weights()[0][:, :, 2, :] == 0), "the new plane is read by nothing yet"
    rows = [{"state": state, "AV": np.full(42, 1 / 42), "value": 1.0 if state.playerTurn == 1 else -1.0, "q": 0.0}
            for state in states]
    inputs, targets = coloured.trainingData(rows)
    coloured.fit(inputs, targets, epochs=2, verbose=0, validation_split=0, batch_size=16)
    assert np.abs(first.get_weights()[0][:, :, 2, :]).max() > 0, "training reads the plane"


def test_a_network_reading_fewer_planes_is_not_transferred(tiny_cfg):
    with pytest.raises(storage.ModelMismatchError, match=r"reads fewer input planes \(2\) than the source \(3\)"):
        transferWeights(_network(tiny_cfg, True, seed=6).model, _network(tiny_cfg, False, seed=7).model)


def test_a_branch_given_the_colour_plane_judges_as_its_source_then_trains_and_resumes(trained_run, tmp_path):  # noqa: F811
    source, cfg = runCopy(trained_run, tmp_path)
    target = tmp_path / "coloured"
    branch_cfg = branches.branchRun(source, target, {"COLOUR_PLANE": True}, say=lambda _: None)
    best = runs.readCheckpoint(source)["best_player_version"]
    before, after = (runs.versionPlayer("p", Game(), c, folder, best).model
                     for c, folder in ((cfg, source), (branch_cfg, target)))
    states = randomPositions(32, seed=8)
    assert after.input_dim == (3, 6, 7)
    for old, new in zip(before.predict(before.convertToModelInputs(states)),
                        after.predict(after.convertToModelInputs(states))):
        np.testing.assert_allclose(new, old, atol=2e-2)  # both engines in bfloat16 where the CPU has it
    rows = funcs.train(1, branch_cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    assert rows[0]["trained"]
    resumed = runs.openRun(branch_cfg, say=lambda _: None)
    assert resumed.best_NN.model.input_shape == (None, 3, 6, 7) == resumed.current_NN.model.input_shape


def test_an_exported_network_with_the_colour_plane_gives_the_keras_outputs(tmp_path, tiny_cfg):
    network = _network(tiny_cfg, True, seed=9)
    storage.save_model(network.model, storage.model_path(tmp_path, 4))
    exported = export.exportNetwork(storage.model_path(tmp_path, 4), tmp_path / "out", 4, tmp_path)
    assert exported.saved_model_difference <= export.TOLERANCE and exported.onnx_difference <= export.TOLERANCE
    x = export.checkPositions(8, seed=3, colourPlane=True)
    assert x.shape == (8, 3, 6, 7)
    np.testing.assert_allclose(export.runOnnx(exported.onnx, x)[0], np.asarray(network.model(x)[0]),
                               atol=export.TOLERANCE)
    assert "(n, 3, 6, 7)" in (tmp_path / "out" / "README.txt").read_text()
