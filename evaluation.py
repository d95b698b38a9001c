"""Measuring players against perfect play.

Connect Four is solved: the `bitbully` solver scores every legal move of a position.
Training asks it only to score its players (EVAL_POSITIONS benchmark positions after
an iteration; 0 turns that off); it never learns from it.  It is imported on first
use, so that a broken install of it stops only the scoring, with a message saying so.
Points of view, which every value here carries:

- A *solver score* is for the player to move in the position the move is played
  from: positive, that player wins after the move (22 minus the number of their own
  stones when they connect four, so faster wins score higher); 0, a draw; negative,
  they lose.  `outcomeClass` reduces a score to +1 / 0 / -1 (win / draw / loss for
  that player).
- A move is a *mistake* when its outcome class is worse than the best outcome class
  available in the position; the *mistake rate* of a player is the share of a set of
  positions where its chosen move is a mistake.

The module also offers the choosers that answer positions as the raw network and as
the searching agent, the seeded benchmark position set scored during training, and
Pascal Pons' standard position sets.  Reference opponents and Elo ratings are in
`ratings`, the plots of a run's progress in `plots`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from agent import Agent, runTogether
from config import DEFAULT, Config
from game import GameState

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
        _, logits = model.predict(model.convertToModelInputs(states))
        return [s.allowedActions[int(np.argmax(logits[i][s.allowedActions]))] for i, s in enumerate(states)]
    return choose


def agentChooser(model, cfg: Config, sims: int, seed: int = 0) -> Chooser:
    """The AlphaZero agent's move: MCTS with `sims` simulations guided by `model`, no
    root noise, the search's best move (tau=0; see `agent.Agent`).  Each position gets a fresh agent (own
    tree, seeded tie-breaks); the searches of a batch share one network call per
    step."""
    def choose(states: list[GameState]) -> list[int]:
        agents = [Agent.fromConfig(f"eval{i}", cfg, model, seed=seed + i, mcts_simulations=sims)
                  for i in range(len(states))]
        searches = [agent.actSteps(state, 0, noise=False) for agent, state in zip(agents, states)]
        return [result[0] for result in runTogether(searches, agents.__getitem__)]
    return choose


# -- the benchmark position set ----------------------------------------------------------------
def bestActions(scores: dict[int, int]) -> list[int]:
    """The actions with the best solver score (the fastest win, else a draw, else the
    slowest loss), ascending."""
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
            choices = sorted(scores) if rng.random() < random_move_share else bestActions(scores)
            state = state.takeAction(int(rng.choice(choices)))[0]
    return list(found.values())


# -- Pascal Pons' position sets ------------------------------------------------------------------
PONS_SETS = {
    "Test_L3_R1": ("end", "easy", 0.0, 1.4),
    "Test_L2_R1": ("middle", "easy", 0.0, 0.7),
    "Test_L2_R2": ("middle", "medium", 2.5, 9.2),
    "Test_L1_R1": ("begin", "easy", 0.0, 1.7),
    "Test_L1_R2": ("begin", "medium", 2.0, 7.3),
    "Test_L1_R3": ("begin", "hard", 7.0, 23.5),
}
"""Set file -> (stage, difficulty, AlphaZero.jl's MCTS mistake %, depth-5 minimax's
mistake %): the published reference figures on each set."""


def ponsLabel(name: str) -> str:
    """'Test_L1_R3' -> 'begin-hard (minimax 23.5%)'; other names as they are."""
    if name not in PONS_SETS:
        return name
    stage, difficulty, _, minimax = PONS_SETS[name]
    return f"{stage}-{difficulty} (minimax {minimax}%)"


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
