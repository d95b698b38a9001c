"""Helpers shared by several test modules (fixtures are in conftest.py)."""

from __future__ import annotations

import numpy as np

from game import GameState
from model import Residual_CNN


def randomPositions(count: int, seed: int = 0) -> list[GameState]:
    """Positions from random games (never finished ones), for model inputs."""
    rng = np.random.default_rng(seed)
    positions, state = [], GameState.initial()
    while len(positions) < count:
        positions.append(state)
        state, _, done = state.takeAction(int(rng.choice(state.allowedActions)))
        if done:
            state = GameState.initial()
    return positions


class RowByRow(Residual_CNN):
    """The real tiny network, run one position per call inside `predict`, so that its
    numbers do not depend on how positions are batched (CPU kernels sum in a
    batch-dependent order): a move-for-move comparison stays exact on any CPU."""

    def predict(self, x):
        rows = [Residual_CNN.predict(self, x[i:i + 1]) for i in range(len(x))]
        return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])
