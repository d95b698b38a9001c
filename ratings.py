"""Reference opponents and Elo ratings: how strong the saved versions of a run are.

Reference opponents need no network and play through `funcs.playMatches` like any
player: a uniformly random player and pure Monte Carlo tree search with random
rollouts.  Match results (`playReference`, `PairResult`) count wins and
losses of the first named player; Elo ratings are on the usual scale (400 points:
10-to-1 odds), fitted from a round robin (`rateVersions`, `fitElo`).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

import funcs
import loggers as lg
import runs
from agent import SearchSteps, oneHot, searchWithoutNetwork
from config import DEFAULT
from game import CELLS, Game, GameState
from MCTS import MCTS, Node


class ReferencePlayer:
    """A player that needs no network, for `funcs.playMatches`: like `agent.User`, its
    `actSteps` generator finishes without a request.  Subclasses choose the move."""

    def __init__(self, name: str, seed: int):
        self.name = name
        self.rng = np.random.default_rng(seed)

    def chooseAction(self, state: GameState) -> int:
        raise NotImplementedError

    def act(self, state: GameState, tau: float):
        """(action, pi, value, NN_value) like `Agent.act`: pi one-hot, no values.  `tau`
        is ignored: the player's own rule decides."""
        action = self.chooseAction(state)
        return action, oneHot(action, CELLS), None, None

    def actSteps(self, state: GameState, tau: float, noise: bool = False) -> SearchSteps:
        return searchWithoutNetwork(self.act, state, tau)


class RandomPlayer(ReferencePlayer):
    """Plays a uniformly random legal move."""

    def __init__(self, seed: int = 0, name: str = "random"):
        super().__init__(name, seed)

    def chooseAction(self, state: GameState) -> int:
        return int(self.rng.choice(state.allowedActions))


class RolloutMCTSPlayer(ReferencePlayer):
    """Pure Monte Carlo tree search: the project's MCTS with uniform priors, each leaf
    valued by one random playout; plays the most visited move (ties at random)."""

    def __init__(self, simulations: int, seed: int = 0, cpuct: float = 1.0, name: str | None = None):
        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        super().__init__(name or f"rollout_mcts{simulations}", seed)
        self.simulations = simulations
        self.cpuct = cpuct

    def rollout(self, state: GameState) -> int:
        """Result of one random playout from `state`, for its player to move."""
        mover = state.playerTurn
        while not state.isEndGame:
            state = state.takeAction(int(self.rng.choice(state.allowedActions)))[0]
        return state.value[0] if state.playerTurn == mover else -state.value[0]

    def chooseAction(self, state: GameState) -> int:
        root = Node(state)
        tree = MCTS(root, self.cpuct, rng=self.rng)
        for _ in range(self.simulations):
            leaf, value, done, breadcrumbs = tree.moveToLeaf()
            if not done:
                legal = leaf.state.allowedActions
                priors = np.zeros(CELLS)
                priors[legal] = 1 / len(legal)
                value = self.rollout(leaf.state)
                tree.expandLeaf(leaf, priors, value)
            tree.backFill(leaf, value, breadcrumbs)
        root.allEdges()  # moves the search never tried count as 0 visits
        visits = np.array([edge.N for _, edge in root.edges])
        return root.edges[int(self.rng.choice(np.flatnonzero(visits == visits.max())))][0]


def playReference(player, opponent, games: int, turns_until_tau0: int = 0,
                  logger: logging.Logger | None = None) -> dict[str, int]:
    """Play `games` games, colours alternating (`player` moves first in the even ones),
    with `funcs.playMatches`; returns {'wins', 'draws', 'losses'} of `player`.
    Agents sample their moves (tau=1) for the first `turns_until_tau0` turns of
    each game, then play the search's best move (0: always the best move)."""
    scores, _, _, _ = funcs.playMatches(player, opponent, games, logger or lg.logger_tourney,
                                        turns_until_tau0, goes_first=0)
    return {"wins": scores[player.name], "draws": scores["drawn"], "losses": scores[opponent.name]}


# -- ratings ---------------------------------------------------------------------------------------------
class PairResult(NamedTuple):
    """Games between two players: wins, draws and losses of `player`."""

    player: str
    opponent: str
    wins: int
    draws: int
    losses: int


class Rating(NamedTuple):
    """An Elo rating and its standard error."""

    elo: float
    stderr: float


_ELO_PER_NATURAL_UNIT = 400 / math.log(10)


def fitElo(results: Sequence[PairResult], anchor: str | None = None,
           prior_sd: float = 1000.0) -> dict[str, Rating]:
    """Elo ratings by maximum a posteriori Bradley-Terry fit.

    A draw counts half a win for each side.  Every rating has a Gaussian prior of
    mean 0 and `prior_sd` Elo, which keeps ratings finite when a player wins or loses
    every game (weak: it moves ratings little once both sides score).  Ratings are
    reported relative to `anchor` (its rating 0) or, without one, with mean 0;
    standard errors come from the inverse Hessian of the log posterior (the observed
    Fisher information) and are those of these relative ratings."""
    names = sorted({r.player for r in results} | {r.opponent for r in results})
    if not names:
        raise ValueError("fitElo needs at least one result")
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} played no game (players: {names})")
    index = {name: i for i, name in enumerate(names)}
    i = np.array([index[r.player] for r in results])
    j = np.array([index[r.opponent] for r in results])
    games = np.array([r.wins + r.draws + r.losses for r in results], dtype=float)
    points = np.array([r.wins + r.draws / 2 for r in results], dtype=float)
    precision = (_ELO_PER_NATURAL_UNIT / prior_sd) ** 2
    k = len(names)

    def logPosterior(theta):
        d = theta[i] - theta[j]
        return float(-(points * np.logaddexp(0, -d) + (games - points) * np.logaddexp(0, d)).sum()
                     - precision * (theta ** 2).sum() / 2)

    def gradientHessian(theta):
        d = theta[i] - theta[j]
        p = 1 / (1 + np.exp(-d))
        residual = points - games * p
        gradient = np.bincount(i, residual, k) - np.bincount(j, residual, k) - precision * theta
        weight = games * p * (1 - p)
        hessian = -precision * np.eye(k)
        np.add.at(hessian, (i, i), -weight)
        np.add.at(hessian, (j, j), -weight)
        np.add.at(hessian, (i, j), weight)
        np.add.at(hessian, (j, i), weight)
        return gradient, hessian

    theta = np.zeros(k)
    for _ in range(100):
        gradient, hessian = gradientHessian(theta)
        if np.abs(gradient).max() < 1e-10:
            break
        step = np.linalg.solve(-hessian, gradient)
        size, current = 1.0, logPosterior(theta)
        while logPosterior(theta + size * step) < current + 1e-4 * size * gradient @ step and size > 1e-8:
            size /= 2
        theta = theta + size * step
    covariance = np.linalg.inv(-gradientHessian(theta)[1])
    relative = np.eye(k) - (np.eye(k)[index[anchor]] if anchor is not None else np.full((k, k), 1 / k))
    ratings = relative @ theta * _ELO_PER_NATURAL_UNIT
    errors = np.sqrt(np.maximum(np.diag(relative @ covariance @ relative.T), 0)) * _ELO_PER_NATURAL_UNIT
    return {name: Rating(float(ratings[index[name]]), float(errors[index[name]])) for name in names}


def rateVersions(run_folder, versions: Sequence[int], games_per_pair: int = 10, sims: int | None = None,
                 opening_turns: int = 4, seed: int = 0, rollout_simulations: int | None = 100) -> list[dict]:
    """Round robin between saved versions of a run (0: the untrained network) and the
    reference opponents (a RandomPlayer, and a RolloutMCTSPlayer with
    `rollout_simulations` unless None), `games_per_pair` games per pair with colours
    alternating; agents search `sims` simulations (default the run's MCTS_SIMS) and
    sample their first `opening_turns` moves so that repeated games differ.  Returns
    one row per player, best first: player, elo (RandomPlayer = 0), stderr, games,
    score (points share)."""
    folder = Path(run_folder)
    env = Game()
    references = [RandomPlayer(seed)]
    if rollout_simulations is not None:
        references.append(RolloutMCTSPlayer(rollout_simulations, seed))
    players = references + [runs.versionPlayer(f"version{v}", env, DEFAULT, folder, v, mcts_simulations=sims)
                            for v in versions]
    results = []
    for a in range(len(players)):
        for b in range(a + 1, len(players)):
            outcome = playReference(players[a], players[b], games_per_pair, opening_turns)
            results.append(PairResult(players[a].name, players[b].name, outcome["wins"], outcome["draws"],
                                      outcome["losses"]))
    ratings = fitElo(results, anchor=players[0].name)
    rows = []
    for player in players:
        mine = [(r.wins + r.draws / 2, r.wins + r.draws + r.losses) for r in results if r.player == player.name]
        mine += [(r.losses + r.draws / 2, r.wins + r.draws + r.losses) for r in results if r.opponent == player.name]
        games = sum(n for _, n in mine)
        rating = ratings[player.name]
        rows.append({"player": player.name, "elo": round(rating.elo, 1), "stderr": round(rating.stderr, 1),
                     "games": games, "score": round(sum(p for p, _ in mine) / games, 3)})
    return sorted(rows, key=lambda row: -row["elo"])
