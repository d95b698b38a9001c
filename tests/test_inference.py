"""The inference engines: each gives the Keras model's numbers, and never stale ones."""

from __future__ import annotations

import numpy as np
import pytest

import inference
from agent import Agent, evaluationsOf
from config import ConfigError
from game import ACTION_SIZE, INPUT_SHAPE, GameState
from helpers import randomPositions
from model import Residual_CNN

# (engine, precision, value tolerance, logit tolerance)
ENGINES = [("tensorflow", "f32", 1e-4, 1e-4), ("openvino", "f32", 1e-4, 1e-4), ("openvino", "bf16", 0.02, 0.05)]
ENGINE_IDS = [f"{engine}-{precision}" for engine, precision, _, _ in ENGINES]


def network(cfg, engine: str, precision: str) -> Residual_CNN:
    if precision == "bf16" and not inference.cpuSupportsBF16():
        pytest.skip("this CPU has no native bfloat16 support, so the bf16 engine cannot run here")
    return Residual_CNN.fromConfig(cfg.replace(INFERENCE=engine, INFERENCE_PRECISION=precision), INPUT_SHAPE,
                                   ACTION_SIZE)


def inputs(net: Residual_CNN) -> np.ndarray:
    """Real positions, then random 0/1 planes (not positions a game can reach)."""
    real = net.convertToModelInputs(randomPositions(40))
    noise = np.random.default_rng(5).integers(0, 2, size=(24, *INPUT_SHAPE)).astype(np.float32)
    return np.concatenate([real, noise])


def assertMatchesKeras(net: Residual_CNN, x: np.ndarray, value_tol: float, logit_tol: float) -> None:
    values, logits = net.predict(x)
    keras_values, keras_logits = net.model(x, training=False)
    np.testing.assert_allclose(values, np.asarray(keras_values)[:, 0], atol=value_tol, rtol=0)
    np.testing.assert_allclose(logits, np.asarray(keras_logits), atol=logit_tol, rtol=0)


def sharpened(net: Residual_CNN, factor: float = 4.0) -> None:
    """Scale the policy head's weights through Keras: logits of a few units, as a
    trained network has."""
    head = net.model.get_layer("policy_head")
    head.set_weights([w * factor for w in head.get_weights()])
    net.weightsChanged()


@pytest.mark.parametrize("engine,precision,value_tol,logit_tol", ENGINES, ids=ENGINE_IDS)
def test_each_engine_gives_the_keras_models_values_and_logits(tiny_cfg, engine, precision, value_tol, logit_tol):
    net = network(tiny_cfg, engine, precision)
    sharpened(net)
    x = inputs(net)
    assertMatchesKeras(net, x, value_tol, logit_tol)
    assertMatchesKeras(net, x[:1], value_tol, logit_tol)  # batch of one (human play)
    read_only = net.convertToModelInput(GameState.fromMoves("4444443"))[None]  # a cached board's planes
    read_only.flags.writeable = False
    assertMatchesKeras(net, read_only, value_tol, logit_tol)
    assert net.currentEngine().name == engine and net.currentEngine().precision == precision


@pytest.mark.parametrize("engine,precision,value_tol,logit_tol", ENGINES, ids=ENGINE_IDS)
def test_the_engine_follows_retraining_promotion_and_loading(tiny_cfg, tmp_path, engine, precision, value_tol,
                                                             logit_tol):
    net = network(tiny_cfg, engine, precision)
    x = inputs(net)
    before = net.predict(x)[1]
    states = randomPositions(32, seed=2)
    targets = {"value_head": np.ones(32, dtype=np.float32),
               "policy_head": np.array([[1.0 / 7 if action in state.allowedActions else -1.0 for action in range(42)]
                                        for state in states], dtype=np.float32)}
    net.fit(net.convertToModelInputs(states), targets, epochs=1, verbose=0, validation_split=0, batch_size=16)
    after_training = net.predict(x)[1]
    assert not np.allclose(before, after_training, atol=logit_tol)
    assertMatchesKeras(net, x, value_tol, logit_tol)

    other = network(tiny_cfg, engine, precision)  # a promotion copies another network's weights
    net.setWeightsFrom(other.model)
    assertMatchesKeras(net, x, value_tol, logit_tol)
    np.testing.assert_allclose(net.predict(x)[1], np.asarray(other.model(x, training=False)[1]), atol=logit_tol)

    path = tmp_path / "saved.keras"
    other.model.save(path)
    sharpened(net)
    net.loadWeights(path)
    np.testing.assert_allclose(net.predict(x)[1], np.asarray(other.model(x, training=False)[1]), atol=logit_tol)


def test_a_background_call_equals_a_direct_one(tiny_cfg):
    net = network(tiny_cfg, "openvino", "f32")
    x = inputs(net)
    values, logits = net.predictAsync(x).result()
    direct_values, direct_logits = net.predict(x)
    np.testing.assert_array_equal(values, direct_values)
    np.testing.assert_array_equal(logits, direct_logits)
    assert net.positionsEvaluated == 2 * len(x)


def test_evaluations_are_a_legal_softmax_per_position(tiny_model, tiny_cfg):
    states = randomPositions(10) + [GameState.fromMoves("444444")]
    values, logits = tiny_model.predict(tiny_model.convertToModelInputs(states))
    evaluations = evaluationsOf(states, values, logits)
    agent = Agent("a", 84, 42, 1, 1.0, tiny_model, tiny_cfg)
    for state, (value, probs), (single_value, single_probs) in zip(states, evaluations,
                                                                     agent.evaluateStates(states)):
        probs = np.asarray(probs)
        assert probs.sum() == pytest.approx(1.0)
        assert set(np.flatnonzero(probs)) <= set(state.allowedActions)
        assert value == single_value and probs.tolist() == single_probs


def test_auto_means_openvino_bf16_where_the_cpu_has_it():
    expected = ("openvino", "bf16" if inference.cpuSupportsBF16() else "f32")
    assert inference.resolve("auto", "auto") == expected
    assert inference.resolve("openvino", "f32") == ("openvino", "f32")
    assert inference.resolve("tensorflow", "auto") == ("tensorflow", "f32")
    with pytest.raises(ConfigError, match="bf16' needs INFERENCE='openvino'"):
        inference.resolve("tensorflow", "bf16")
    with pytest.raises(ValueError, match="onnx"):
        inference.resolve("onnx", "auto")


def test_config_names_a_wrong_engine_or_precision(tiny_cfg):
    with pytest.raises(ConfigError, match="INFERENCE must"):
        tiny_cfg.replace(INFERENCE="gpu")
    with pytest.raises(ConfigError, match="INFERENCE_PRECISION must"):
        tiny_cfg.replace(INFERENCE_PRECISION="int8")
    with pytest.raises(ConfigError, match="bf16"):
        tiny_cfg.replace(INFERENCE="tensorflow", INFERENCE_PRECISION="bf16")
