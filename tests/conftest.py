"""Shared fixtures: a tiny configuration and a tiny network built from it.

Both are session-scoped and shared by every test module: do not mutate them.  Use
``tiny_cfg.replace(...)`` for a variant, and build a network of your own for tests
that train or change weights.
"""

from __future__ import annotations

import keras
import pytest

import evaluation
import loggers as lg
import storage
from config import Config
from game import Game, GameState
from model import Residual_CNN

TINY_LAYERS = [{"filters": 8, "kernel_size": (3, 3)}] * 2

PONS_POSITIONS = ["112233", "44556", "112"]
"""X wins with column 4; O loses whatever it plays; the player to move can hold a draw."""


@pytest.fixture(scope="session")
def tiny_cfg() -> Config:
    """A Config with a two-block, 8-filter network, few simulations and small sizes
    (the run folders keep their defaults)."""
    return Config(HIDDEN_CNN_LAYERS=TINY_LAYERS, MCTS_SIMS=16, EPISODES=2, EVAL_EPISODES=2,
                  TURNS_UNTIL_TAU0=2, MEMORY_SIZE=256, BATCH_SIZE=32, MIN_MEMORY_SIZE=64,
                  FIT_BATCH_SIZE=16, TRAINING_LOOPS=1, EVAL_POSITIONS=4, EVAL_SIMS=8)


@pytest.fixture(scope="session")
def tiny_model(tiny_cfg) -> Residual_CNN:
    """An untrained Residual_CNN of tiny_cfg's shape, weights seeded by tiny_cfg.SEED."""
    keras.utils.set_random_seed(tiny_cfg.SEED)
    game = Game()
    return Residual_CNN.fromConfig(tiny_cfg, game.input_shape, game.action_size)


@pytest.fixture(autouse=True)
def seeded():
    """Every test starts from the same Python, numpy and TensorFlow seeds, so networks
    it builds get the same weights whatever ran before it."""
    keras.utils.set_random_seed(1234)


@pytest.fixture
def run_folder(tiny_cfg, tmp_path):
    """A run folder with versions 1 and 3 saved (different weights), best version 3."""
    folder = tmp_path / "run"
    network = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)
    storage.write_text(storage.config_path(folder), tiny_cfg.to_json())
    storage.save_model(network.model, storage.model_path(folder, 1))
    network.model.set_weights([w + 0.5 for w in network.model.get_weights()])
    storage.save_model(network.model, storage.model_path(folder, 3))
    storage.write_json(storage.checkpoint_path(folder), {"iteration": 4, "best_player_version": 3,
                                                         "memory_iteration": None})
    return folder


@pytest.fixture
def logging_to(tmp_path):
    """`logging_to(cfg, name)` switches one of the run's logs on (the others off), in
    tmp_path/logs, and returns its file."""
    def switchOn(cfg: Config, name: str):
        lg.setup_loggers(tmp_path, cfg.replace(LOGGERS={name: True}))
        return storage.log_path(tmp_path, name)
    return switchOn


@pytest.fixture
def pons_folder(tmp_path):
    """A begin-hard set file of PONS_POSITIONS, scored by the solver as Pons scores them."""
    folder = tmp_path / "pons"
    folder.mkdir()
    lines = [f"{moves} {max(evaluation.solverScores(GameState.fromMoves(moves)).values())}"
             for moves in PONS_POSITIONS]
    (folder / "Test_L1_R3").write_text("\n".join(lines) + "\n")
    return folder
