"""Measuring players against perfect play, rating them, and plotting a run's progress.

Connect Four is solved: the `bitbully` solver scores every legal move of a position
(an evaluation-only dependency, imported on first use; training never needs it).
Points of view, which every value here carries:

- A *solver score* is for the player to move in the position the move is played
  from: positive, that player wins after the move (22 minus the number of their own
  stones when they connect four, so faster wins score higher); 0, a draw; negative,
  they lose.  `outcomeClass` reduces a score to +1 / 0 / -1 (win / draw / loss for
  that player).
- A move is a *mistake* when its outcome class is worse than the best outcome class
  available in the position; the *mistake rate* of a player is the share of a set of
  positions where its chosen move is a mistake.
- Match results (`playReference`, `PairResult`) count wins and losses of the first
  named player; Elo ratings are on the usual scale (400 points: 10-to-1 odds).

The module also offers reference opponents for `funcs.playMatches` (random, pure
Monte Carlo tree search with random rollouts, the perfect solver), the seeded
benchmark position set scored during training, Pascal Pons' standard position sets,
and `plotMetrics` for the rows a run appends to its metrics.jsonl.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import numpy as np

from agent import Agent, SearchSteps, oneHot, runTogether, searchWithoutNetwork
from config import DEFAULT, Config
from game import CELLS, Game, GameState
from MCTS import MCTS, Node

Chooser = Callable[[list[GameState]], list[int]]
"""Chooses one action for each of a batch of positions (each for its player to move)."""


# -- the solver --------------------------------------------------------------------------
@functools.cache
def _solver():
    """The bitbully solver with its 12-ply opening book (without the book, positions of
    the first dozen moves take seconds each instead of milliseconds)."""
    try:
        from bitbully import BitBully
    except ImportError:
        raise ImportError("scoring against perfect play needs the bitbully and bitbully-databases "
                          "packages, which the project installs (make test or make train set up .venv); "
                          "or set EVAL_POSITIONS=0") from None
    return BitBully()


def solverBoard(state: GameState):
    """The bitbully Board of a position, built from its cells (a GameState keeps no move
    history; bitbully infers the player to move from the stone counts, which GameState
    guarantees agree with `playerTurn`)."""
    from bitbully import Board

    rows = np.where(state.board == -1, 2, state.board).reshape(6, 7)  # row 0 on top, as bitbully reads it
    return Board(rows.tolist())


def solverScores(state: GameState) -> dict[int, int]:
    """Solver score of every legal action (cell index) of an unfinished position, for
    the player to move there (see the module docstring); full columns are absent."""
    if state.isEndGame:
        raise ValueError("the game is over in this position: there is no move to score")
    scores = _solver().score_all_moves(solverBoard(state))
    return {state.actionForColumn(column): score for column, score in scores.items()}


def outcomeClass(score: int) -> int:
    """+1 / 0 / -1: the solver score's result (win / draw / loss) for the player it
    belongs to."""
    return (score > 0) - (score < 0)


def _outcomes(scores: dict[int, int]) -> dict[int, int]:
    return {action: outcomeClass(score) for action, score in scores.items()}


def isMistake(state: GameState, action: int) -> bool:
    """True when playing `action` gives the player to move a worse result (win / draw /
    loss) than their best move would."""
    outcomes = _outcomes(solverScores(state))
    if action not in outcomes:
        raise ValueError(f"action {action} is not legal here (legal: {sorted(outcomes)})")
    return outcomes[action] < max(outcomes.values())


@dataclass(frozen=True)
class MistakeRate:
    """How many of `positions` positions a player answered with a mistake."""

    mistakes: int
    positions: int

    @property
    def rate(self) -> float:
        return self.mistakes / self.positions


def mistakeRate(positions: Sequence[GameState], choose: Chooser, progress: str | None = None,
                chunk: int = 50) -> MistakeRate:
    """Let `choose` answer the positions (one batched call per `chunk` positions) and
    count its mistakes.  `progress`: the label of a progress bar (None: no bar)."""
    positions = list(positions)
    if not positions:
        raise ValueError("mistakeRate needs at least one position")
    starts = range(0, len(positions), chunk)
    if progress is not None:
        from tqdm.auto import tqdm
        starts = tqdm(starts, desc=progress, leave=False)
    actions = [action for start in starts for action in _answers(choose, positions[start:start + chunk])]
    return MistakeRate(sum(isMistake(state, action) for state, action in zip(positions, actions)),
                       len(positions))


def _answers(choose: Chooser, positions: list[GameState]) -> list[int]:
    actions = choose(positions)
    if len(actions) != len(positions):
        raise ValueError(f"the chooser answered {len(actions)} of {len(positions)} positions")
    return actions


# -- choosers: the raw network and the searching agent -------------------------------------
def networkChooser(model) -> Chooser:
    """The raw network's move: the legal action with the highest policy logit, for a
    whole batch in one `model.predict` call."""
    def choose(states: list[GameState]) -> list[int]:
        _, logits = model.predict(np.stack([model.convertToModelInput(s) for s in states]))
        return [s.allowedActions[int(np.argmax(logits[i][s.allowedActions]))] for i, s in enumerate(states)]
    return choose


def agentChooser(model, cfg: Config, sims: int, seed: int = 0) -> Chooser:
    """The AlphaZero agent's move: MCTS with `sims` simulations guided by `model`, no
    root noise, the most visited move (tau=0).  Each position gets a fresh agent (own
    tree, seeded tie-breaks); the searches of a batch share one network call per
    step."""
    env = Game()

    def choose(states: list[GameState]) -> list[int]:
        agents = [Agent(f"eval{i}", env.state_size, env.action_size, sims, cfg.CPUCT, model, cfg,
                        seed=seed + i) for i in range(len(states))]
        searches = [agent.actSteps(state, 0, noise=False) for agent, state in zip(agents, states)]
        return [result[0] for result in runTogether(searches, agents.__getitem__)]
    return choose


# -- the benchmark position set ----------------------------------------------------------------
def _bestActions(scores: dict[int, int]) -> list[int]:
    best = max(scores.values())
    return sorted(action for action, score in scores.items() if score == best)


def benchmarkPositions(n: int = DEFAULT.EVAL_POSITIONS, seed: int = 0,
                       random_move_share: float = 0.5) -> list[GameState]:
    """`n` distinct unfinished positions where the moves differ in outcome (so a mistake
    is possible), from games in which each move is random with probability
    `random_move_share` and otherwise a best solver move.  The same seed gives the
    same positions, in the same order."""
    if n < 1:
        raise ValueError(f"benchmarkPositions needs n >= 1, got {n}")
    rng = np.random.default_rng(seed)
    found: dict[int, GameState] = {}
    while len(found) < n:
        state = GameState.initial()
        while not state.isEndGame and len(found) < n:
            scores = solverScores(state)
            if len(set(_outcomes(scores).values())) > 1:
                found.setdefault(state.id, state)
            choices = sorted(scores) if rng.random() < random_move_share else _bestActions(scores)
            state = state.takeAction(int(rng.choice(choices)))[0]
    return list(found.values())


# -- Pascal Pons' position sets ------------------------------------------------------------------
def loadPonsSet(path, limit: int | None = None) -> list[tuple[GameState, int]]:
    """(position, score) from a file of lines 'moves score' (moves in columns 1..7,
    first player first; score for the player to move), at most `limit` of them."""
    path = Path(path)
    positions = []
    with path.open() as lines:
        for number, line in enumerate(lines, 1):
            if limit is not None and len(positions) >= limit:
                break
            if not line.strip():
                continue
            fields = line.split()
            try:
                if len(fields) != 2:
                    raise ValueError(f"expected 'moves score', got {line.strip()!r}")
                positions.append((GameState.fromMoves(fields[0]), int(fields[1])))
            except ValueError as exc:
                raise ValueError(f"{path}, line {number}: {exc}") from None
    return positions


# -- reference opponents -----------------------------------------------------------------------------
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
        visits = np.array([edge.N for _, edge in root.edges])
        return root.edges[int(self.rng.choice(np.flatnonzero(visits == visits.max())))][0]


class SolverPlayer(ReferencePlayer):
    """Perfect play: a random one of the moves with the best solver score (the fastest
    win, else a draw, else the slowest loss)."""

    def __init__(self, seed: int = 0, name: str = "solver"):
        super().__init__(name, seed)

    def chooseAction(self, state: GameState) -> int:
        return int(self.rng.choice(_bestActions(solverScores(state))))


def playReference(player, opponent, games: int, turns_until_tau0: int = 0,
                  logger: logging.Logger | None = None) -> dict[str, int]:
    """Play `games` games, colours alternating (`player` moves first in the even ones),
    with `funcs.playMatches`; returns {'wins', 'draws', 'losses'} of `player`.
    Agents sample their moves from visit counts for the first `turns_until_tau0`
    turns of each game (0: always the most visited move)."""
    import funcs  # imported on use: funcs may import this module for its metrics
    import loggers

    if player.name == opponent.name or "drawn" in (player.name, opponent.name):
        raise ValueError(f"players need distinct names other than 'drawn', got {player.name!r} "
                         f"and {opponent.name!r}")
    scores, _, _, _ = funcs.playMatches(player, opponent, games, logger or loggers.logger_tourney,
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
    import funcs
    import runs

    folder = Path(run_folder)
    cfg = runs.runConfig(folder, DEFAULT)
    env = Game()
    references = [RandomPlayer(seed)]
    if rollout_simulations is not None:
        references.append(RolloutMCTSPlayer(rollout_simulations, seed))
    players = references + [funcs.versionPlayer(f"version{v}", env, cfg, folder, v, mcts_simulations=sims)
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


# -- training progress ----------------------------------------------------------------------------------
def _series(rows: list[dict], read: Callable[[dict], float | None]) -> tuple[list[int], list[float]]:
    """(iterations, values) of the rows where `read` finds a value."""
    points = []
    for row in rows:
        try:
            value = read(row)
        except (KeyError, TypeError):
            continue
        if value is not None:
            points.append((row["iteration"], value))
    return [x for x, _ in points], [y for _, y in points]


def plotMetrics(run_folder):
    """A figure of a run's progress from its metrics.jsonl: training losses, the
    tournament (wins of the current and the best network, promotions starred), the
    mistake rate on the benchmark positions with the best version, and memory size.
    Rows missing a value leave a gap; safe to call while training appends rows (each
    append is atomic); a damaged file raises runs.readMetrics' RunFileError.  The
    caller closes the figure (matplotlib.pyplot.close)."""
    import matplotlib.pyplot as plt

    import runs

    rows = runs.readMetrics(run_folder)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    (loss_ax, tourney_ax), (mistake_ax, memory_ax) = axes
    for key in ("loss", "value_loss", "policy_loss"):
        loss_ax.plot(*_series(rows, lambda r, key=key: r[key]), marker=".", label=key)
    loss_ax.set_title("training loss (last loop of the iteration)")

    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["current_player"]), marker=".", label="current wins")
    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["best_player"]), marker=".", label="best wins")
    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["drawn"]), marker=".", label="draws")
    promoted = _series(rows, lambda r: r["scores"]["current_player"] if r["promoted"] else None)
    tourney_ax.plot(*promoted, linestyle="", marker="*", markersize=12, label="promoted")
    tourney_ax.set_title("tournament: current vs best network")

    mistake_ax.plot(*_series(rows, lambda r: 100 * r["mistake_rate"]), marker=".", color="C3",
                    label="agent (MCTS)")
    mistake_ax.plot(*_series(rows, lambda r: 100 * r["network_mistake_rate"]), marker=".", color="C1",
                    label="raw network")
    mistake_ax.legend(fontsize=8, loc="upper right")
    mistake_ax.set_ylabel("% of benchmark positions")
    mistake_ax.set_title("mistakes against perfect play")
    version_ax = mistake_ax.twinx()
    version_ax.step(*_series(rows, lambda r: r["best_player_version"]), where="post", color="grey",
                    label="best version")
    version_ax.set_ylabel("best version")

    memory_ax.plot(*_series(rows, lambda r: r["memory_size"]), marker=".")
    memory_ax.set_title("positions in memory")
    for ax in (loss_ax, tourney_ax, mistake_ax, memory_ax):
        ax.set_xlabel("iteration")
    for ax in (loss_ax, tourney_ax):
        ax.legend(fontsize=8)
    if not rows:
        fig.suptitle(f"no finished iteration in {Path(run_folder) / 'metrics.jsonl'} yet")
    fig.tight_layout()
    return fig


def plotRatings(rows: list[dict]):
    """A figure of `rateVersions` rows: each player's Elo with a 95% interval (two
    standard errors), the random player at 0.  The caller closes the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    players = [row["player"] for row in rows]
    ax.errorbar(range(len(rows)), [row["elo"] for row in rows], yerr=[2 * row["stderr"] for row in rows],
                fmt="o", capsize=4)
    ax.set_xticks(range(len(rows)), players)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel("Elo (random player = 0)")
    ax.set_title("ratings from a round robin (95% intervals)")
    fig.tight_layout()
    return fig
