"""The network: the tutorial's layers, training, saving and loading, the policy loss."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import storage
from agent import Agent
from game import MIRRORED_CELL, Game, GameState
from memory import Memory
from loss import POLICY_NOT_LEGAL, policyTargets, softmax_cross_entropy_with_logits
from helpers import RowByRow, randomPositions
from model import Residual_CNN, ensembleMean, mirrorAveraged, transferWeights, withMirrorImages


def _layers_of(model, kind):
    return [layer for layer in model.layers if isinstance(layer, kind)]


def _parent(model, layer):
    """The layer whose output feeds `layer` (single-input layers only)."""
    return next(other for other in model.layers if other.output is layer.input)


def _chain(model, name, length):
    """The `length` layers leading into layer `name`, nearest first."""
    layer, chain = model.get_layer(name), []
    for _ in range(length):
        layer = _parent(model, layer)
        chain.append(layer)
    return chain


def _random_memory(size: int, seed: int = 0) -> Memory:
    """Long-term memory from random games: uniform search policy over the legal moves,
    each position valued with the game's result for its player to move."""
    rng = np.random.default_rng(seed)
    memory = Memory(size)
    while len(memory) < size:
        game, state, done, value = Memory(size), GameState.initial(), False, 0
        while not done:
            pi = np.zeros(42)
            pi[state.allowedActions] = 1 / len(state.allowedActions)
            game.commit_stmemory(Game.identities, state, pi)
            state, value, done = state.takeAction(int(rng.choice(state.allowedActions)))
        game.setResult(state, value)
        memory.commitGame(game)
    return memory


@pytest.fixture(scope="module")
def fresh_model(tiny_cfg):
    """A network of this module's own, for tests that train it."""
    keras.utils.set_random_seed(1)
    return Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)


# -- architecture ----------------------------------------------------------------------
def test_input_is_permuted_to_channels_last(tiny_model):
    model = tiny_model.model
    assert tuple(model.inputs[0].shape) == (None, 2, 6, 7)
    permute = model.get_layer("to_channels_last")
    assert isinstance(permute, keras.layers.Permute) and permute.dims == (2, 3, 1)
    assert permute.input is model.inputs[0]
    assert tuple(permute.output.shape) == (None, 6, 7, 2)


def test_conv_and_residual_blocks_follow_hidden_layers(tiny_cfg):
    layers = [{"filters": 8, "kernel_size": (3, 3)}] + [{"filters": 8, "kernel_size": (2, 2)}] * 3
    model = Residual_CNN.fromConfig(tiny_cfg.replace(HIDDEN_CNN_LAYERS=layers), (2, 6, 7), 42).model
    convs = _layers_of(model, keras.layers.Conv2D)
    # conv block: 1 conv; each residual block: 2 convs; then the two heads' 1x1 convs
    assert [c.kernel_size for c in convs[:7]] == [(3, 3)] + [(2, 2)] * 6
    assert all(c.filters == 8 and c.padding == "same" for c in convs[:7])
    assert len(convs) == 9
    assert len(_layers_of(model, keras.layers.Add)) == 3
    assert len(_layers_of(model, keras.layers.BatchNormalization)) == 1 + 2 * 3 + 2


def test_value_head(tiny_model):
    model = tiny_model.model
    head = model.get_layer("value_head")
    assert isinstance(head, keras.layers.Dense) and head.units == 1
    assert head.activation is keras.activations.tanh
    relu, dense, flatten, relu2, norm, conv = _chain(model, "value_head", 6)
    assert isinstance(relu, keras.layers.LeakyReLU)
    assert isinstance(dense, keras.layers.Dense) and dense.units == 20
    assert isinstance(flatten, keras.layers.Flatten)
    assert isinstance(relu2, keras.layers.LeakyReLU) and isinstance(norm, keras.layers.BatchNormalization)
    assert isinstance(conv, keras.layers.Conv2D) and conv.filters == 1 and conv.kernel_size == (1, 1)


def test_policy_head(tiny_model):
    model = tiny_model.model
    head = model.get_layer("policy_head")
    assert isinstance(head, keras.layers.Dense) and head.units == 42
    assert head.activation is keras.activations.linear
    flatten, relu, norm, conv = _chain(model, "policy_head", 4)
    assert isinstance(flatten, keras.layers.Flatten) and isinstance(relu, keras.layers.LeakyReLU)
    assert isinstance(norm, keras.layers.BatchNormalization)
    assert isinstance(conv, keras.layers.Conv2D) and conv.filters == 2 and conv.kernel_size == (1, 1)
    assert [o.name for o in model.outputs] == [model.get_layer("value_head").output.name, head.output.name]


def test_every_kernel_is_L2_regularised(tiny_model, tiny_cfg):
    weighted = _layers_of(tiny_model.model, (keras.layers.Conv2D, keras.layers.Dense))
    assert len(weighted) == 5 + 3
    for layer in weighted:
        assert isinstance(layer.kernel_regularizer, keras.regularizers.L2), layer.name
        assert layer.kernel_regularizer.l2 == pytest.approx(tiny_cfg.REG_CONST)


def test_compiled_with_sgd_momentum_and_half_weights(tiny_model, tiny_cfg):
    model = tiny_model.model
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    assert float(model.optimizer.learning_rate) == pytest.approx(tiny_cfg.LEARNING_RATE)
    assert model.optimizer.momentum == pytest.approx(tiny_cfg.MOMENTUM)
    compiled = model.get_compile_config()
    assert compiled["loss_weights"] == {"value_head": 0.5, "policy_head": 0.5}
    assert compiled["loss"]["value_head"] == "mean_squared_error"


# -- prediction ------------------------------------------------------------------------
def test_predict_equals_the_keras_model(tiny_model):
    states = randomPositions(9)
    x = np.stack([tiny_model.convertToModelInput(s) for s in states])
    values, logits = tiny_model.predict(x)
    keras_value, keras_logits = tiny_model.model(x, training=False)
    assert values.shape == (9,) and logits.shape == (9, 42)
    # tiny_cfg keeps INFERENCE "auto": bf16 where the CPU has it (tolerances of test_inference).
    tolerance = (0.02, 0.05) if tiny_model.currentEngine().precision == "bf16" else (1e-4, 1e-4)
    np.testing.assert_allclose(values, np.asarray(keras_value)[:, 0], atol=tolerance[0])
    np.testing.assert_allclose(logits, np.asarray(keras_logits), atol=tolerance[1])
    assert np.all(np.abs(values) <= 1)


def test_model_input_is_the_player_to_moves_view(tiny_model):
    state = GameState.fromMoves("4")  # O to move: channel 0 = O's stones (none), channel 1 = X's
    x = tiny_model.convertToModelInput(state)
    assert x.shape == (2, 6, 7)
    assert x[0].sum() == 0 and x[1, 5, 3] == 1 and x[1].sum() == 1


def test_mirror_images_are_the_reflected_positions_inputs(tiny_model):
    states = randomPositions(12, seed=3)
    x = tiny_model.convertToModelInputs(states)
    both = withMirrorImages(x)
    assert both.shape == (24, 2, 6, 7)
    np.testing.assert_array_equal(both[:12], x)
    np.testing.assert_array_equal(both[12:], tiny_model.convertToModelInputs([s.mirrored() for s in states]))
    np.testing.assert_array_equal(both[12:], x[..., ::-1])  # columns reversed, rows and planes kept


def test_mirror_averaged_outputs_reflect_the_mirror_images_logits_back():
    values = np.array([0.2, -0.6, 0.4, 0.0], dtype=np.float32)  # two positions, then their mirror images
    logits = np.zeros((4, 42), dtype=np.float32)
    logits[0, 35], logits[2, 41] = 1.0, 3.0  # bottom row: column 1 of the first, column 7 of its mirror image
    averaged_values, averaged_logits = mirrorAveraged(values, logits)
    np.testing.assert_allclose(averaged_values, [0.3, -0.3])
    assert averaged_logits.shape == (2, 42)
    assert averaged_logits[0, 35] == 2.0 and np.count_nonzero(averaged_logits) == 1


def test_a_position_and_its_mirror_image_are_judged_alike_when_averaged(tiny_cfg):
    network = RowByRow.fromConfig(tiny_cfg, (2, 6, 7), 42)  # row by row: no batch-dependent sums
    agent = Agent("mirrored", 84, 42, 4, tiny_cfg.CPUCT, network, tiny_cfg.replace(MIRROR_AVERAGE=True))
    plain = Agent("plain", 84, 42, 4, tiny_cfg.CPUCT, network, tiny_cfg)
    state = GameState.fromMoves("1123")
    (value, priors), (mirror_value, mirror_priors) = agent.evaluateStates([state, state.mirrored()])
    assert value == mirror_value
    assert priors == pytest.approx([mirror_priors[cell] for cell in MIRRORED_CELL])
    (own, _), (reflected, _) = plain.evaluateStates([state, state.mirrored()])
    assert own != reflected and value == pytest.approx((own + reflected) / 2)
    before = network.positionsEvaluated
    assert agent.evaluateStatesAsync([state])() == agent.evaluateStates([state])
    assert network.positionsEvaluated - before == 4  # each call: the position and its mirror image


def test_an_ensemble_mean_averages_values_and_takes_the_geometric_mean_of_policies():
    values = [np.array([0.5, -1.0], dtype=np.float32), np.array([-0.1, 0.0], dtype=np.float32)]
    logits = [np.log(np.tile([0.5, 0.25, 0.25], (2, 1))), np.log(np.tile([0.125, 0.5, 0.375], (2, 1))) + 7.0]
    mean_values, mean_logits = ensembleMean(list(zip(values, logits)))
    np.testing.assert_allclose(mean_values, [0.2, -0.5], atol=1e-6)
    geometric = np.sqrt([0.5 * 0.125, 0.25 * 0.5, 0.25 * 0.375])  # a constant added to one's logits changes nothing
    probabilities = np.exp(mean_logits) / np.exp(mean_logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probabilities, np.tile(geometric / geometric.sum(), (2, 1)), rtol=1e-5)
    alone_values, alone_logits = ensembleMean([(values[0], logits[0]), (values[0], logits[0])])
    np.testing.assert_allclose(alone_values, values[0])
    np.testing.assert_allclose(np.exp(alone_logits), np.exp(logits[0]), rtol=1e-5)


def test_a_network_with_an_ensemble_predicts_the_mean_of_its_members(tiny_cfg):
    first, second = (RowByRow.fromConfig(tiny_cfg, (2, 6, 7), 42) for _ in range(2))
    x = first.convertToModelInputs(randomPositions(5, seed=4))
    own, other = first.predict(x), second.predict(x)
    assert not np.allclose(own[0], other[0])
    first.ensemble = [second]
    joined = first.predict(x)
    expected = ensembleMean([own, other])
    np.testing.assert_allclose(joined[0], expected[0], atol=1e-6)
    np.testing.assert_allclose(joined[1], expected[1], atol=1e-5)
    assert [np.asarray(a) for a in first.predictAsync(x).result()][0] == pytest.approx(joined[0])
    first.ensemble = []
    np.testing.assert_allclose(first.predict(x)[0], own[0])


def test_a_prior_temperature_flattens_the_priors_the_search_expands_with(tiny_cfg):
    network = RowByRow.fromConfig(tiny_cfg, (2, 6, 7), 42)
    plain = Agent("plain", 84, 42, 16, tiny_cfg.CPUCT, network, tiny_cfg)
    warm = Agent("warm", 84, 42, 16, tiny_cfg.CPUCT, network, tiny_cfg.replace(PRIOR_TEMPERATURE=2.0))
    state = GameState.fromMoves("1123")
    [(value, priors)], [(warm_value, warm_priors)] = plain.evaluateStates([state]), warm.evaluateStates([state])
    assert warm_value == value  # only the policy is tempered
    legal = state.allowedActions
    expected = np.sqrt(np.array(priors)[legal])  # softmax(logits / 2) = priors ** (1 / 2), renormalised
    assert np.array(warm_priors)[legal] == pytest.approx(expected / expected.sum())
    assert sum(warm_priors) == pytest.approx(1.0) and all(warm_priors[a] == 0 for a in range(42) if a not in legal)
    assert max(warm_priors) < max(priors) and min(np.array(warm_priors)[legal]) > min(np.array(priors)[legal])
    warm.act(state, tau=0)
    assert [edge.P for _, edge in warm.mcts.root.edges] == pytest.approx([warm_priors[a] for a in legal])


# -- saving and loading ------------------------------------------------------------------
def test_write_read_round_trip_through_an_archived_run(tiny_model, tiny_cfg, tmp_path):
    archive = tmp_path / "run_archive"
    run_folder = storage.archived_run(archive, "connect4", 3)
    writer = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42, run_folder)
    writer.setWeightsFrom(tiny_model.model)
    writer.write("connect4", 2)
    path = run_folder / "models" / "version0002.keras"
    assert sorted(p.name for p in path.parent.iterdir()) == ["version0002.keras"]

    x = np.stack([tiny_model.convertToModelInput(s) for s in randomPositions(6, seed=3)])
    keras_values, keras_logits = tiny_model.model(x, training=False)
    expected_values, expected_logits = tiny_model.predict(x)
    reader = Residual_CNN(tiny_cfg.REG_CONST, tiny_cfg.LEARNING_RATE, (2, 6, 7), 42, tiny_cfg.HIDDEN_CNN_LAYERS,
                          archive_folder=archive)
    for loaded in (reader.read("connect4", 3, 2), storage.load_model(path)):
        values, logits = loaded(x, training=False)
        np.testing.assert_array_equal(np.asarray(values), np.asarray(keras_values))
        np.testing.assert_array_equal(np.asarray(logits), np.asarray(keras_logits))
    reader.setWeightsFrom(storage.load_model(path))
    values, logits = reader.predict(x)
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(logits, expected_logits)


# -- the policy loss ------------------------------------------------------------------
def _loss(y_true, y_pred) -> np.ndarray:
    return np.asarray(softmax_cross_entropy_with_logits(np.asarray(y_true, np.float32),
                                                        np.asarray(y_pred, np.float32)))


def _targets(legal, visits):
    """Policy targets: `visits` {action: share} on legal moves, -1 on illegal ones."""
    y = np.full((1, 42), POLICY_NOT_LEGAL, np.float32)
    y[0, legal] = 0
    for action, share in visits.items():
        y[0, action] = share
    return y


LEGAL = [35, 36, 37, 38, 39, 40, 41]  # the bottom row: the empty board's moves


def test_loss_matches_cross_entropy_over_the_legal_moves():
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(1, 42)) * 3
    y = _targets(LEGAL, {35: 0.5, 38: 0.3, 41: 0.2})
    legal_logits = logits[0, LEGAL]
    log_probs = legal_logits - np.log(np.exp(legal_logits).sum())
    expected = -(np.array([0.5, 0, 0, 0.3, 0, 0, 0.2]) * log_probs).sum()
    assert _loss(y, logits)[0] == pytest.approx(expected, rel=1e-5)


def test_illegal_moves_are_masked_out():
    y = _targets(LEGAL, {38: 1.0})
    logits = np.zeros((1, 42))
    high_illegal = logits.copy()
    high_illegal[0, :35] = 40.0  # huge logits on every illegal cell change nothing
    assert _loss(y, high_illegal)[0] == pytest.approx(_loss(y, logits)[0]) == pytest.approx(np.log(7), rel=1e-5)


def test_legal_unvisited_move_with_high_logit_costs():
    y = _targets(LEGAL, {38: 1.0})
    logits = np.zeros((1, 42))
    logits[0, 40] = 10.0  # legal, never visited, yet the network favours it
    assert _loss(y, logits)[0] > 9.0


def test_strongly_predicted_one_hot_target_costs_nothing():
    y = _targets(LEGAL, {38: 1.0})
    logits = np.zeros((1, 42))
    logits[0, 38] = 30.0
    assert _loss(y, logits)[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("scale", [1e30, -1e30, 3e38, -3e38])
def test_huge_logits_give_finite_loss_and_gradient(scale):
    y = tf.constant(_targets(LEGAL, {35: 0.25, 38: 0.75}))
    logits = tf.Variable(np.full((1, 42), scale, np.float32))
    with tf.GradientTape() as tape:
        loss = softmax_cross_entropy_with_logits(y, logits)
    gradient = tape.gradient(loss, logits)
    assert np.isfinite(loss.numpy()).all() and np.isfinite(gradient.numpy()).all()
    # equal legal logits: the softmax over the 7 legal moves is uniform
    assert loss.numpy()[0] == pytest.approx(np.log(7), rel=1e-4)


def test_policyTargets_mark_illegal_moves():
    memory = _random_memory(20, seed=2)
    rows = list(memory.ltmemory)[:8]
    targets = policyTargets(rows)
    assert targets.shape == (8, 42) and targets.dtype == np.float32
    for row, target in zip(rows, targets):
        legal = row["state"].allowedActions
        illegal = np.setdiff1d(np.arange(42), legal)
        assert np.all(target[illegal] == POLICY_NOT_LEGAL)
        np.testing.assert_allclose(target[legal], np.asarray(row["AV"])[legal])
        assert target[legal].sum() == pytest.approx(1.0)


# -- training ----------------------------------------------------------------------------
def test_fit_on_a_fixed_batch_lowers_the_loss(fresh_model):
    rows = list(_random_memory(32, seed=4).ltmemory)[:32]
    states, targets = fresh_model.trainingData(rows)
    assert states.shape == (32, 2, 6, 7) and targets["value_head"].shape == (32,)
    history = fresh_model.fit(states, targets, epochs=12, verbose=0, validation_split=0, batch_size=32).history
    assert {"loss", "value_head_loss", "policy_head_loss"} <= set(history)
    assert history["loss"][-1] < 0.8 * history["loss"][0]
    assert history["policy_head_loss"][-1] < history["policy_head_loss"][0]
    assert history["value_head_loss"][-1] < history["value_head_loss"][0]


def test_fit_takes_the_same_steps_as_keras_fit(tiny_cfg):
    """With one mini-batch per epoch (so no shuffle order can differ), `fit`'s
    train_on_batch steps and Keras `fit` end at the same weights and report the same
    losses; a validation split is Keras fit's own."""
    rows = list(_random_memory(48, seed=5).ltmemory)[:48]
    results = []
    for through_keras in (False, True):
        keras.utils.set_random_seed(3)
        network = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)
        states, targets = network.trainingData(rows)
        fit = network.model.fit if through_keras else network.fit
        history = fit(states, targets, epochs=3, verbose=0, validation_split=0, batch_size=len(rows)).history
        results.append((network.model.get_weights(), history))
    (fast_weights, fast), (keras_weights, reference) = results
    for name in ("loss", "value_head_loss", "policy_head_loss"):
        np.testing.assert_allclose(fast[name], reference[name], rtol=1e-5)
    for mine, theirs in zip(fast_weights, keras_weights):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-7)
    validated = network.fit(states, targets, epochs=1, verbose=0, validation_split=0.25, batch_size=16).history
    assert "val_loss" in validated


def test_agent_replay_reads_the_loss_history(fresh_model, tiny_cfg):
    memory = _random_memory(tiny_cfg.BATCH_SIZE + 10, seed=6)
    cfg = tiny_cfg.replace(TRAINING_LOOPS=2)
    agent = Agent("current_player", 84, 42, cfg.MCTS_SIMS, cfg.CPUCT, fresh_model, cfg)
    losses = agent.replay(memory.ltmemory)
    assert set(losses) == {"loss", "value_loss", "policy_loss"}
    assert len(agent.train_overall_loss) == len(agent.train_value_loss) == len(agent.train_policy_loss) == 2
    assert all(np.isfinite(v) and v > 0 for v in losses.values())
    assert losses["policy_loss"] == agent.train_policy_loss[-1]


# -- a trunk made wider --------------------------------------------------------------------
def _sized(tiny_cfg, filters: int, seed: int, value_head: str = "tanh") -> Residual_CNN:
    keras.utils.set_random_seed(seed)
    cfg = tiny_cfg.replace(HIDDEN_CNN_LAYERS=[{"filters": filters, "kernel_size": (3, 3)}] * 3, VALUE_HEAD=value_head)
    return Residual_CNN.fromConfig(cfg, (2, 6, 7), 42)


@pytest.mark.parametrize("value_head", ["tanh", "wdl"])
def test_a_wider_trunk_starts_judging_as_the_narrow_one_did_and_then_learns(tiny_cfg, value_head):
    narrow, wide = _sized(tiny_cfg, 8, seed=21), _sized(tiny_cfg, 12, seed=22, value_head=value_head)
    narrow.model.get_layer("value_head").set_weights(
        [w * 20 for w in narrow.model.get_layer("value_head").get_weights()])
    transferWeights(narrow.model, wide.model)
    wide.weightsChanged()
    x = narrow.convertToModelInputs(randomPositions(64, seed=23))
    (value, logits), (wide_value, wide_logits) = ([np.asarray(o) for o in n.model(x)] for n in (narrow, wide))
    np.testing.assert_allclose(wide_logits, logits, atol=1e-5)
    if value_head == "tanh":
        np.testing.assert_allclose(wide_value, value, atol=1e-5)
    else:
        sure = np.abs(value) <= 0.95
        np.testing.assert_allclose(wide_value[sure], value[sure], atol=0.02)
    first = next(layer for layer in wide.model.layers if isinstance(layer, keras.layers.Conv2D))
    assert np.abs(first.get_weights()[0][..., 8:]).max() > 0, "the new filters keep their random start"
    readers = [layer for layer in wide.model.layers if isinstance(layer, keras.layers.Conv2D) and layer is not first]
    assert all(np.all(layer.get_weights()[0][:, :, 8:, :] == 0) for layer in readers)
    memory = _random_memory(64, seed=24)
    states, targets = wide.trainingData(list(memory.ltmemory))
    wide.fit(states, targets, epochs=2, verbose=0, validation_split=0, batch_size=16)
    assert all(np.abs(layer.get_weights()[0][:, :, 8:, :]).max() > 0 for layer in readers), \
        "training reads the new filters"
