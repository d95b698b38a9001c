"""Helpers shared by several test modules (fixtures are in conftest.py)."""

from __future__ import annotations

import numpy as np

import storage
from export import randomPositions  # noqa: F401 (the test modules import it from here)
from memory import Memory
from model import Residual_CNN


class RowByRow(Residual_CNN):
    """The real tiny network, run one position per call inside `predict`, so that its
    numbers do not depend on how positions are batched (CPU kernels sum in a
    batch-dependent order): a move-for-move comparison stays exact on any CPU."""

    def predict(self, x):
        rows = [Residual_CNN.predict(self, x[i:i + 1]) for i in range(len(x))]
        return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])


def withMemory(folder, positions: int = 120):
    """The run folder given a memory snapshot at iteration 4: random positions, a
    uniform search policy over their legal moves, results and search values alternating."""
    memory = Memory(256)
    for i, state in enumerate(randomPositions(positions, seed=3)):
        av = np.zeros(42, dtype=np.float32)
        av[state.allowedActions] = 1 / len(state.allowedActions)
        memory.ltmemory.append({"board": state.board, "state": state, "id": state.id, "AV": av,
                                "playerTurn": state.playerTurn, "value": float(i % 3 - 1), "q": 0.25})
    memory.save(storage.memory_path(folder, 4))
    storage.write_json(storage.checkpoint_path(folder), {"iteration": 4, "best_player_version": 3,
                                                         "memory_iteration": 4})
    return folder
