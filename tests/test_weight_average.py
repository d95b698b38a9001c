"""The moving average of the current network's weights (WEIGHT_AVERAGE_DECAY): folded
after each retraining, the tournament's current player, the best network a promotion
makes, and kept through a kill, a resume and a branch."""

import json

import numpy as np
import pytest

import branches
import funcs
import runs
import shipping
import storage
from config import DEFAULT, STRONG, ConfigError
from model import movingAverage
from test_funcs import tinyRunConfig


def _weights(network) -> list[np.ndarray]:
    return network.model.get_weights()


def _equal(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def _close(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


def _shifted(network, by: float) -> None:
    network.model.set_weights([w + by for w in _weights(network)])
    network.weightsChanged()


def test_off_in_the_tutorials_default_and_a_decay_out_of_range_is_named():
    assert DEFAULT.WEIGHT_AVERAGE_DECAY == 0.0 and STRONG.WEIGHT_AVERAGE_DECAY == 0.0
    for wrong in (1.0, -0.1, float("nan")):
        with pytest.raises(ConfigError, match="WEIGHT_AVERAGE_DECAY"):
            DEFAULT.replace(WEIGHT_AVERAGE_DECAY=wrong)


def test_one_step_of_the_average_weights_the_old_by_the_decay():
    old = [np.zeros((2, 3), dtype=np.float32), np.array([4.0], dtype=np.float32)]
    new = [np.ones((2, 3), dtype=np.float32), np.array([0.0], dtype=np.float32)]
    stepped = movingAverage(old, new, 0.75)
    np.testing.assert_allclose(stepped[0], 0.25)
    np.testing.assert_allclose(stepped[1], [3.0])
    assert all(w.dtype == np.float32 for w in stepped)
    with pytest.raises(ValueError):
        movingAverage(old, new[:1], 0.5)


def test_without_a_decay_the_run_keeps_no_average(tiny_cfg, tmp_path):
    run = runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run")), say=lambda _: None)
    run.saveCurrentNetwork()
    assert run.average_NN is None and run.challenger is run.current_NN
    assert not storage.average_model_path(run.folder).exists()


def test_retraining_folds_into_the_average_and_a_promotion_makes_it_the_best(tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), WEIGHT_AVERAGE_DECAY=0.75)
    run = runs.openRun(cfg, say=lambda _: None)
    start = _weights(run.current_NN)
    assert run.challenger is run.average_NN and _equal(_weights(run.average_NN), start)
    _shifted(run.current_NN, 1.0)
    run.saveCurrentNetwork()
    expected = [w + 0.25 for w in start]
    assert _close(_weights(run.average_NN), expected)
    assert _close(storage.load_model(storage.average_model_path(run.folder)).get_weights(), expected)
    run.promote()
    assert _close(_weights(run.best_NN), expected)
    assert _close(storage.load_model(storage.model_path(run.folder, 2)).get_weights(), expected)
    assert not _close(_weights(run.best_NN), _weights(run.current_NN))
    assert storage.average_model_path(run.folder) in shipping.resumeFiles(run.folder)


def test_the_tournament_plays_the_average_and_training_fits_the_current_network(tiny_cfg, tmp_path, monkeypatch):
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run", WEIGHT_AVERAGE_DECAY=0.5, SCORING_THRESHOLD=0.01)
    played, fitted = [], []
    playMatches, replay = funcs.playMatches, funcs.Agent.replay
    monkeypatch.setattr(funcs, "playMatches",
                        lambda p1, p2, *a, **k: played.append((p1.model, p2.model)) or playMatches(p1, p2, *a, **k))
    monkeypatch.setattr(funcs.Agent, "replay", lambda self, *a, **k: fitted.append(self.model) or replay(self, *a, **k))
    funcs.train(2, cfg, progress=False, say=lambda _: None)
    run = runs.openRun(cfg, say=lambda _: None)
    assert len(played) == 4 and len(fitted) == 2
    for selfplay, tournament in zip(played[::2], played[1::2]):
        assert selfplay[0] is selfplay[1] and tournament[0] is selfplay[0]
        assert tournament[1] is not fitted[0]
    average = storage.load_model(storage.average_model_path(run.folder)).get_weights()
    assert _equal(_weights(run.average_NN), average) and not _close(average, _weights(run.current_NN))


def test_a_resumed_run_keeps_its_average_and_a_damaged_one_restarts_from_the_current_network(tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), WEIGHT_AVERAGE_DECAY=0.5)
    run = runs.openRun(cfg, say=lambda _: None)
    _shifted(run.current_NN, 1.0)
    run.saveCurrentNetwork()
    saved = _weights(run.average_NN)
    assert _equal(_weights(runs.openRun(cfg, say=lambda _: None).average_NN), saved)
    storage.average_model_path(run.folder).write_bytes(b"not a model")
    said = []
    resumed = runs.openRun(cfg, say=said.append)
    assert _equal(_weights(resumed.average_NN), _weights(resumed.current_NN))
    assert any("average.keras" in line and "restarts from the current network" in line for line in said)
    storage.average_model_path(run.folder).unlink()
    storage.append_line(storage.metrics_path(run.folder), json.dumps(
        {"iteration": 0, "best_player_version": 1, "trained": True, "seconds": {"retrain": 1.0}}))
    said.clear()
    runs.openRun(cfg, say=said.append)  # retrained, so it had saved the file: its loss is said
    assert any("average.keras is missing, though the run has retrained" in line for line in said)


def test_a_branch_carries_the_average_turns_it_on_from_the_current_network_or_drops_it(tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), WEIGHT_AVERAGE_DECAY=0.5)
    run = runs.openRun(cfg, say=lambda _: None)
    _shifted(run.current_NN, 1.0)
    run.saveCurrentNetwork()
    storage.write_json(storage.checkpoint_path(run.folder), run.checkpoint())
    branches.branchRun(run.folder, tmp_path / "branch", {"TRAINING_LOOPS": 2}, say=lambda _: None)
    branched = runs.openRun(cfg.replace(RUN_FOLDER=str(tmp_path / "branch")), say=lambda _: None)
    assert _close(_weights(branched.average_NN), _weights(run.average_NN))
    branches.branchRun(run.folder, tmp_path / "off", {"WEIGHT_AVERAGE_DECAY": 0.0}, say=lambda _: None)
    assert not storage.average_model_path(tmp_path / "off").exists()
    plain = runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "plain")), say=lambda _: None)
    _shifted(plain.current_NN, 1.0)
    plain.saveCurrentNetwork()
    branches.branchRun(plain.folder, tmp_path / "on", {"WEIGHT_AVERAGE_DECAY": 0.9}, say=lambda _: None)
    assert _close(storage.load_model(storage.average_model_path(tmp_path / "on")).get_weights(),
                  _weights(plain.current_NN))  # saved at once: a missing average is never the branch's start
    said = []
    turned_on = runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "on")), say=said.append)
    assert turned_on.cfg.WEIGHT_AVERAGE_DECAY == 0.9 and not any("is missing" in line for line in said)
    assert _close(_weights(turned_on.average_NN), _weights(plain.current_NN))
