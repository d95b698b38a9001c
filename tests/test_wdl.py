"""The win/draw/loss value head (VALUE_HEAD="wdl"): its targets, its network, turning a
tanh network into a WDL one, and a run branched to it."""

import keras
import numpy as np
import pytest

import storage
from agent import Agent
from config import DEFAULT, STRONG, ConfigError
from helpers import randomPositions
from loss import valueTargets, wdlTargets
from memory import mergedRows, outcomeDistribution
from model import Residual_CNN, transferWeights


def _network(tiny_cfg, value_head: str, seed: int = 2, layers=None) -> Residual_CNN:
    keras.utils.set_random_seed(seed)
    cfg = tiny_cfg.replace(VALUE_HEAD=value_head, **({} if layers is None else {"HIDDEN_CNN_LAYERS": layers}))
    return Residual_CNN.fromConfig(cfg, (2, 6, 7), 42)


def _row(state, value: float, q: float) -> dict:
    av = np.zeros(42, dtype=np.float32)
    av[state.allowedActions] = 1 / len(state.allowedActions)
    return {"state": state, "id": state.id, "AV": av, "value": value, "q": q, "playerTurn": state.playerTurn}


def test_the_tutorials_tanh_head_stays_the_default_and_a_wrong_head_is_named():
    assert DEFAULT.VALUE_HEAD == "tanh" and STRONG.VALUE_HEAD == "tanh"
    with pytest.raises(ConfigError, match=r"VALUE_HEAD must be one of \('tanh', 'wdl'\), got 'softmax'"):
        DEFAULT.replace(VALUE_HEAD="softmax")


# -- targets ---------------------------------------------------------------------------------
def test_outcomeDistribution_is_one_hot_for_results_and_keeps_the_expectation():
    np.testing.assert_array_equal(outcomeDistribution([1, 0, -1]), np.eye(3))
    values = np.linspace(-1, 1, 21)
    shares = outcomeDistribution(values)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(shares[:, 0] - shares[:, 2], values, atol=1e-6)
    np.testing.assert_allclose(outcomeDistribution([0.4]), [[0.4, 0.6, 0.0]], atol=1e-6)


def test_a_merged_position_won_once_and_lost_once_is_unclear_not_drawn():
    state = randomPositions(3, seed=1)[2]
    merged = mergedRows([_row(state, 1.0, 0.2), _row(state, -1.0, 0.0), _row(state, 0.0, 0.4)])
    assert len(merged) == 1 and merged[0]["value"] == pytest.approx(0.0)
    np.testing.assert_allclose(merged[0]["z_wdl"], [1 / 3, 1 / 3, 1 / 3])
    drawn = mergedRows([_row(state, 0.0, 0.0), _row(state, 0.0, 0.0)])
    np.testing.assert_allclose(drawn[0]["z_wdl"], [0, 1, 0])


@pytest.mark.parametrize("q_weight", [0.0, 0.5, 1.0, np.linspace(0, 1, 11)])
def test_wdl_targets_are_distributions_with_the_value_targets_expectation(q_weight):
    positions = randomPositions(12, seed=2)
    rows = [_row(state, float(z), float(q)) for state, z, q in
            zip(positions, np.tile([1, 0, -1], 4), np.linspace(-0.9, 0.9, 12))]
    rows = rows[:6] + mergedRows([rows[6], {**rows[7], "state": rows[6]["state"], "id": rows[6]["id"]}]) + rows[8:]
    targets = wdlTargets(rows, q_weight)
    assert targets.shape == (len(rows), 3) and (targets >= 0).all()
    np.testing.assert_allclose(targets.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(targets[:, 0] - targets[:, 2], valueTargets(rows, q_weight), atol=1e-6)


# -- the network -----------------------------------------------------------------------------
def test_the_value_is_the_expected_result_of_the_wdl_logits(tiny_cfg):
    network = _network(tiny_cfg, "wdl")
    assert [layer.name for layer in network.model.layers if layer.name in ("wdl_head", "value_head")] == \
        ["wdl_head", "value_head"]
    assert not network.model.get_layer("value_head").trainable
    x = network.convertToModelInputs(randomPositions(16, seed=3))
    value, logits = (np.asarray(out) for out in network.model(x))
    wdl_logits, policy = (np.asarray(out) for out in network.trainingModel(x))
    shares = np.exp(wdl_logits) / np.exp(wdl_logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(value[:, 0], shares[:, 0] - shares[:, 2], atol=1e-6)
    np.testing.assert_array_equal(policy, logits)
    engine_value, engine_logits = network.predict(x)
    np.testing.assert_allclose(engine_value, value[:, 0], atol=0.02)  # bf16 where the CPU has it
    np.testing.assert_allclose(engine_logits, logits, atol=0.05)


def test_a_wdl_head_learns_a_drawn_position_apart_from_an_unclear_one(tiny_cfg):
    """Both have expected result 0; only the WDL head can say which is which."""
    network = _network(tiny_cfg, "wdl", seed=4)
    network.trainingModel.optimizer.learning_rate.assign(0.05)
    drawn, unclear = randomPositions(9, seed=5)[7:9]
    rows = [_row(drawn, 0.0, 0.0)] * 8 + mergedRows([_row(unclear, 1.0, 0.0), _row(unclear, -1.0, 0.0)]) * 8
    states, targets = network.trainingData(rows)
    history = network.fit(states, targets, epochs=150, verbose=0, validation_split=0, batch_size=16).history
    assert history["wdl_head_loss"][-1] < 0.5 * history["wdl_head_loss"][0]
    wdl_logits, _ = (np.asarray(out) for out in network.trainingModel(states[[0, 8]]))
    shares = np.exp(wdl_logits) / np.exp(wdl_logits).sum(axis=1, keepdims=True)
    assert shares[0, 1] > 0.8 and shares[1, 1] < 0.2
    values, _ = network.predict(states[[0, 8]])
    assert np.abs(values).max() < 0.2


def test_a_wdl_network_saves_and_loads_in_safe_mode(tiny_cfg, tmp_path):
    network = _network(tiny_cfg, "wdl", seed=6)
    path = tmp_path / "version0001.keras"
    storage.save_model(network.model, path)
    again = _network(tiny_cfg, "wdl", seed=7)
    again.loadWeights(path)
    x = network.convertToModelInputs(randomPositions(8, seed=8))
    for mine, theirs in zip(network.model(x), again.model(x)):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
    with pytest.raises(storage.ModelMismatchError, match="does not fit the network"):
        _network(tiny_cfg, "tanh").loadWeights(path)


def test_agent_replay_reports_the_wdl_heads_loss(tiny_cfg):
    network = _network(tiny_cfg, "wdl", seed=9)
    cfg = tiny_cfg.replace(VALUE_HEAD="wdl", TRAINING_LOOPS=2, BATCH_SIZE=16, MERGE_DUPLICATES=True)
    rows = [_row(state, float(z), 0.0) for state, z in zip(randomPositions(40, seed=10), np.tile([1, 0, -1], 14))]
    agent = Agent("current_player", 84, 42, cfg.MCTS_SIMS, cfg.CPUCT, network, cfg)
    losses = agent.replay(rows)
    assert losses["value_loss"] == agent.train_value_loss[-1] and len(agent.train_value_loss) == 2
    assert 0 < losses["value_loss"] < 3 and np.isfinite(losses["loss"])


# -- a tanh network turned into a WDL one ----------------------------------------------------
def test_a_tanh_network_becomes_a_wdl_one_that_judges_as_it_did(tiny_cfg):
    tanh, wdl = _network(tiny_cfg, "tanh", seed=11), _network(tiny_cfg, "wdl", seed=12)
    tanh.model.get_layer("value_head").set_weights([w * 40 for w in tanh.model.get_layer("value_head").get_weights()])
    transferWeights(tanh.model, wdl.model)
    x = tanh.convertToModelInputs(randomPositions(64, seed=13))
    (tanh_value, tanh_logits), (wdl_value, wdl_logits) = ([np.asarray(o) for o in n.model(x)] for n in (tanh, wdl))
    np.testing.assert_array_equal(wdl_logits, tanh_logits)
    assert np.abs(tanh_value).max() > 0.5  # the comparison covers values away from 0
    sure = np.abs(tanh_value) <= 0.95
    np.testing.assert_allclose(wdl_value[sure], tanh_value[sure], atol=0.02)
    assert (np.sign(wdl_value) == np.sign(tanh_value)).all()


def test_a_network_of_another_shape_is_not_transferred(tiny_cfg):
    wdl, tanh = _network(tiny_cfg, "wdl"), _network(tiny_cfg, "tanh")
    with pytest.raises(storage.ModelMismatchError, match="a WDL head asked to become a tanh one"):
        transferWeights(wdl.model, tanh.model)
    wider = _network(tiny_cfg, "wdl", layers=[{"filters": 16, "kernel_size": (3, 3)}] * 2)
    with pytest.raises(storage.ModelMismatchError, match=r"trunk is narrower \(8 filters\) than the source's \(16\)"):
        transferWeights(wider.model, wdl.model)
    other_kernels = _network(tiny_cfg, "tanh", layers=[{"filters": 8, "kernel_size": (4, 4)}] * 2)
    with pytest.raises(storage.ModelMismatchError, match=r"has no weights for layer .*: another trunk"):
        transferWeights(tanh.model, other_kernels.model)
    deeper = _network(tiny_cfg, "tanh", layers=[{"filters": 8, "kernel_size": (3, 3)}] * 3)
    with pytest.raises(storage.ModelMismatchError, match=r"target network has no layer for the source's weights "
                                                         r"(Conv2D|BatchNormalization) \[\(.*\)\]: another trunk"):
        transferWeights(deeper.model, tanh.model)
