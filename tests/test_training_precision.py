"""Retraining in bfloat16 (TRAINING_PRECISION="bfloat16"): a mixed_bfloat16 twin of the
network takes the gradient steps; the network the search and the files see stays
float32, current after every fit, and a CPU without bfloat16 units trains in float32."""

import logging

import keras
import numpy as np
import pytest

import inference
import model
import storage
from config import DEFAULT, STRONG, ConfigError
from helpers import randomPositions
from model import Residual_CNN

needsBF16 = pytest.mark.skipif(not inference.cpuSupportsBF16(), reason="this CPU has no native bfloat16")


def _network(tiny_cfg, precision: str, seed: int = 3) -> Residual_CNN:
    keras.utils.set_random_seed(seed)
    return Residual_CNN.fromConfig(tiny_cfg.replace(TRAINING_PRECISION=precision), (2, 6, 7), 42)


def _batch(network: Residual_CNN, n: int = 64, seed: int = 4):
    rng = np.random.default_rng(seed)
    states = network.convertToModelInputs(randomPositions(n, seed=seed))
    targets = {"value_head": rng.uniform(-1, 1, (n, 1)).astype(np.float32),
               "policy_head": rng.dirichlet(np.ones(42), n).astype(np.float32)}
    return states, targets


def test_float32_stays_the_default_and_a_wrong_precision_is_named():
    assert DEFAULT.TRAINING_PRECISION == "float32" and STRONG.TRAINING_PRECISION == "float32"
    assert Residual_CNN.fromConfig(DEFAULT, (2, 6, 7), 42).trainingTwin is None
    with pytest.raises(ConfigError, match=r"TRAINING_PRECISION must be one of \('float32', 'bfloat16'\), got 'fp16'"):
        DEFAULT.replace(TRAINING_PRECISION="fp16")


@needsBF16
def test_the_twin_trains_and_the_float32_network_gets_its_weights(tiny_cfg, tmp_path):
    network = _network(tiny_cfg, "bfloat16")
    assert network.model.dtype_policy.name == "float32"
    assert {layer.dtype_policy.name for layer in network.trainingTwin.layers if layer.weights} == \
        {"mixed_bfloat16", "float32"}
    states, targets = _batch(network)
    before = network.predict(states[:8])
    network.fit(states, targets, epochs=2, verbose=0, validation_split=0, batch_size=16)
    for mine, twins in zip(network.model.get_weights(), network.trainingTwin.get_weights()):
        assert mine.dtype == np.float32
        np.testing.assert_array_equal(mine, twins)
    after = network.predict(states[:8])
    assert not np.allclose(before[0], after[0]), "the engine served the weights from before the fit"
    path = tmp_path / "version0001.keras"
    storage.save_model(network.model, path)
    again = _network(tiny_cfg, "float32", seed=5)
    again.loadWeights(path)
    for mine, theirs in zip(network.model(states[:8]), again.model(states[:8])):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))


@needsBF16
def test_bfloat16_steps_learn_what_float32_steps_learn(tiny_cfg):
    losses = {}
    for precision in ("float32", "bfloat16"):
        network = _network(tiny_cfg, precision, seed=6)
        states, targets = _batch(network, n=128, seed=7)
        np.random.seed(8)
        history = network.fit(states, targets, epochs=30, verbose=0, validation_split=0, batch_size=32)
        losses[precision] = history.history["loss"]
    for precision, curve in losses.items():
        assert curve[-1] < 0.9 * curve[0], f"{precision} did not learn: {curve[0]:.3f} -> {curve[-1]:.3f}"
    assert losses["bfloat16"][-1] == pytest.approx(losses["float32"][-1], rel=0.03)


@needsBF16
def test_weights_set_between_fits_reach_the_twin(tiny_cfg):
    network, other = _network(tiny_cfg, "bfloat16", seed=9), _network(tiny_cfg, "float32", seed=10)
    network.setWeightsFrom(other.model)
    network.setLearningRate(0.0)
    states, targets = _batch(network)
    network.fit(states, targets, epochs=1, verbose=0, validation_split=0, batch_size=16)
    kernels = [(a, b) for layer, twin in zip(network.model.layers, other.model.layers)
               for a, b in zip(layer.trainable_weights, twin.trainable_weights)]
    assert kernels
    for mine, theirs in kernels:
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))


def test_a_cpu_without_bfloat16_trains_in_float32_and_says_why(tiny_cfg, monkeypatch, caplog):
    monkeypatch.setattr(inference, "cpuSupportsBF16", lambda: False)
    with caplog.at_level(logging.WARNING, logger=model.__name__):
        network = _network(tiny_cfg, "bfloat16")
    assert network.trainingPrecision == "float32" and network.trainingTwin is None
    assert "no native bfloat16 support" in caplog.text and "training in float32" in caplog.text
