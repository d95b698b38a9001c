"""The policy loss and the training targets (the tutorial's loss.py).

The search's policy is the policy target (the visit distribution, or with the Gumbel
root search its improved policy from completed Q-values); illegal moves are marked with
POLICY_NOT_LEGAL so that the loss leaves them out of the softmax.  The value target is
the game's result z, optionally mixed with the search's q: one number for a tanh value
head, a distribution over (win, draw, loss) for a WDL head (`wdlTargets`).  Values are
for the player to move in the position the row describes.
"""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from memory import outcomeDistribution

POLICY_NOT_LEGAL = -1.0
"""Policy-target entry marking an illegal move (legal entries hold the search's policy)."""


@keras.saving.register_keras_serializable(package="connect4")
def softmax_cross_entropy_with_logits(y_true, y_pred):
    """Cross-entropy of the policy logits against the search's policy (visit shares,
    or Gumbel's improved policy).

    `y_true` holds the search's policy on each legal move and POLICY_NOT_LEGAL (-1) at
    illegal ones.  Illegal moves are masked out of the softmax; legal but unvisited
    moves stay in it (so their probability is pushed down) and a one-hot target the
    network already predicts gives (near) zero loss.  Illegal logits are replaced by
    the lowest finite value and left out of the sum, so no logit, however large or
    small, lets them into the softmax or turns the loss into NaN."""
    legal = ops.greater_equal(y_true, 0.0)
    lowest = float(np.finfo(keras.backend.standardize_dtype(y_pred.dtype)).min)
    log_probs = ops.log_softmax(ops.where(legal, y_pred, ops.full_like(y_pred, lowest)), axis=-1)
    return -ops.sum(ops.where(legal, y_true * log_probs, ops.zeros_like(log_probs)), axis=-1)


def qWeights(minibatch, cfg) -> np.ndarray:
    """Each memory row's weight w of the search's q in its value target:
    cfg.VALUE_TARGET_Q_WEIGHT, or VALUE_TARGET_Q_WEIGHT_OPENING for a position of
    fewer than cfg.OPENING_STONES stones."""
    stones = np.array([row["state"].stones for row in minibatch])
    return np.where(stones < cfg.OPENING_STONES, cfg.VALUE_TARGET_Q_WEIGHT_OPENING,
                    cfg.VALUE_TARGET_Q_WEIGHT).astype(np.float32)


def valueTargets(minibatch, qWeight=0.0) -> np.ndarray:
    """Value targets for memory rows: (1 - w) * z + w * q, z the game's result and q
    the search's value of the move played (both for the player to move); w is
    `qWeight`, one number or one per row (`qWeights`); 0 is the tutorial's z alone."""
    z = np.array([row["value"] for row in minibatch], dtype=np.float32)
    w = np.asarray(qWeight, dtype=np.float32)
    if not w.any():
        return z
    q = np.array([row["q"] for row in minibatch], dtype=np.float32)
    return (1 - w) * z + w * q


def wdlTargets(minibatch, qWeight=0.0) -> np.ndarray:
    """(win, draw, loss) targets for memory rows, shape (n, 3): (1 - w) times the
    game's outcome (a merged row's `z_wdl`, the mean of its games' outcomes, else the
    one-hot of its z) plus w times `outcomeDistribution` of the search's q, w as in
    `valueTargets`.  Their expectation is `valueTargets`'s value target."""
    z = np.stack([np.asarray(row["z_wdl"], dtype=np.float32) if "z_wdl" in row
                  else outcomeDistribution(row["value"]) for row in minibatch])
    w = np.asarray(qWeight, dtype=np.float32)
    if not w.any():
        return z
    w = w[:, None] if w.ndim else w
    q = outcomeDistribution([row["q"] for row in minibatch])
    return (1 - w) * z + w * q


def policyTargets(minibatch) -> np.ndarray:
    """Policy targets for memory rows: the search policy AV, -1 at illegal moves."""
    targets = np.full((len(minibatch), len(minibatch[0]["AV"])), POLICY_NOT_LEGAL, dtype=np.float32)
    for i, row in enumerate(minibatch):
        legal = row["state"].allowedActions
        targets[i, legal] = np.asarray(row["AV"])[legal]
    return targets
