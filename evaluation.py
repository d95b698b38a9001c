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

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from agent import Agent, SearchSteps, runTogether
from config import DEFAULT, Config
from game import GameState, columnOf
from thinking import thinkingTable

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


def solvedPosition(state: GameState) -> tuple[int, frozenset[int]]:
    """The best result (+1 / 0 / -1: win / draw / loss) the player to move can reach,
    and the legal actions that keep it: every other action is a mistake."""
    outcomes = _outcomes(solverScores(state))
    best = max(outcomes.values())
    return best, frozenset(action for action, outcome in outcomes.items() if outcome == best)


def keepingActions(state: GameState) -> frozenset[int]:
    """The legal actions that keep the best result the player to move can reach
    (`solvedPosition`)."""
    return solvedPosition(state)[1]


def isMistake(state: GameState, action: int) -> bool:
    """True when playing `action` gives the player to move a worse result (win / draw /
    loss) than their best move would."""
    if action not in state.allowedActions:
        raise ValueError(f"action {action} is not legal here (legal: {sorted(state.allowedActions)})")
    return action not in keepingActions(state)


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
        return highestLegalLogits(states, logits)
    return choose


def highestLegalLogits(states: Sequence[GameState], logits) -> list[int]:
    """Each position's legal action with the highest policy logit (row i of `logits`
    belongs to states[i]): the raw network's move."""
    return [s.allowedActions[int(np.argmax(logits[i][s.allowedActions]))] for i, s in enumerate(states)]


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
    try:
        text = path.read_text(encoding="ascii")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not a text file of 'moves score' lines "
                         f"({exc.reason} at byte {exc.start})") from None
    for number, line in enumerate(text.splitlines(), 1):
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


# -- whole games against the solver ----------------------------------------------------------------
PHASES = (("begin", 14), ("middle", 28), ("end", 42))
"""A position's stage by the stones on its board, as Pons' sets divide the game:
begin up to 14 stones, middle up to 28, end the rest."""

MIN_VISIT_SHARE = 0.1
"""A mistake is put down to the prior when the moves that kept the game's value got
less than this share of the root's visits: the search hardly looked at them."""

DEEPER_SEARCH = 4
"""A mistake is put down to too little search when a search of this many times the
player's simulations, from the same position, keeps the game's value."""


def endOfPerfectPlay(score: int, stones: int) -> int:
    """The stones on the board when the game ends if both sides play perfectly after a
    move of solver score `score` (for the player making it) in a position of `stones`
    stones: the winner wins as soon as it can, the loser holds out as long as it can, a
    draw fills the board (42).  The solver scores a win by the stone played onto p
    stones (43 - p) // 2, for the player placing it, and minus that for the other."""
    if score == 0:
        return 42
    if not 0 <= stones < 42:
        raise ValueError(f"a position has 0 to 41 stones before a move, got {stones}")
    winnerMoves = stones if score > 0 else stones + 1  # the parity of the winner's plies
    before = next(p for p in (43 - 2 * abs(score), 42 - 2 * abs(score)) if p % 2 == winnerMoves % 2)
    if before < stones + (score < 0):
        raise ValueError(f"a solver score of {score} cannot follow a move onto {stones} stones")
    return before + 1


def phaseOf(stones: int) -> str:
    """'begin', 'middle' or 'end': the stage of a position with `stones` discs (PHASES)."""
    return next(name for name, last in PHASES if stones <= last)


@dataclass(frozen=True)
class Start:
    """A whole game's start: the position after `opening` (columns 1..7, first player
    first), the tested player's `side` (1 moves first, -1 second) and the start's
    `value` for that side under perfect play (+1 won, 0 drawn, -1 lost)."""

    opening: str
    side: int
    value: int


def gameStarts(won: int, drawn: int, max_moves: int = 6, seed: int = 0) -> list[Start]:
    """`won` won and `drawn` drawn starts, from seeded random openings (the rules only:
    each opening is k uniformly random legal moves, k uniform in 0..max_moves; no
    position twice, no finished game).  A drawn opening gives two starts, the player
    taking each colour; a decisive one gives the winning side's start (a lost start is
    lost against a perfect opponent whatever the player does, so it is never played).
    The same arguments give the same starts in the same order."""
    if won < 0 or drawn < 0 or won + drawn == 0:
        raise ValueError(f"gameStarts needs won, drawn >= 0 and some starts, got won={won}, drawn={drawn}")
    if not 0 <= max_moves <= 20:
        raise ValueError(f"max_moves must lie in 0..20, got {max_moves}")
    rng = np.random.default_rng(seed)
    seen: set[int] = set()
    starts: list[Start] = []
    counts = {1: 0, 0: 0}
    wanted = {1: won, 0: drawn}
    tries = 0
    while counts[1] < won or counts[0] < drawn:
        tries += 1
        if tries > 1000 * (won + drawn):
            raise ValueError(f"openings of up to {max_moves} moves give too few distinct positions for "
                             f"{won} won and {drawn} drawn starts")
        state, opening = GameState.initial(), ""
        for _ in range(int(rng.integers(max_moves + 1))):
            action = int(rng.choice(state.allowedActions))
            opening += str(columnOf(action) + 1)
            state = state.takeAction(action)[0]
            if state.isEndGame:
                break
        if state.isEndGame or state.id in seen:
            continue
        seen.add(state.id)
        value = max(_outcomes(solverScores(state)).values())  # for the player to move
        kind = abs(value)  # 1: a won start (for the winning side), 0: a drawn one
        for side in ((state.playerTurn, -state.playerTurn) if value == 0 else (value * state.playerTurn,)):
            if counts[kind] < wanted[kind]:
                counts[kind] += 1
                starts.append(Start(opening, side, kind))
    return starts


@dataclass(frozen=True)
class Mistake:
    """A move of the tested player that lost value under perfect play.

    The position is the one after `moves` (columns 1..7 from the empty board, first
    player first); the player played `column` (1..7).  `before` and `after` are the
    game's outcome class for the player (+1 won, 0 drawn, -1 lost) before and after
    the move; `scores` the solver score of every legal column, `keeping` the columns
    that keep `before`.  For an agent, `network_value` is its network's value of the
    position and `table` its search's root statistics per legal column (column, N the
    visits, P the network's prior, Q, policy), all for the player to move; None for a
    player without a search.  `cause` ('search', 'prior' or 'value', see
    `mistakeCause`) is set by `classifyMistakes`."""

    moves: str
    column: int
    before: int
    after: int
    scores: dict
    keeping: list
    network_value: float | None = None
    table: list | None = None
    cause: str | None = None

    @property
    def ply(self) -> int:
        """Moves played before this one (= stones on the board)."""
        return len(self.moves)

    @property
    def phase(self) -> str:
        return phaseOf(self.ply)

    @property
    def pliesToEnd(self) -> int:
        """Plies from the position after the mistake to the game's end when both sides
        play perfectly from there (`endOfPerfectPlay`): how deep a search must look to
        see that the move lost the value (the loss, or for a won start given away the
        draw, at the end of the board)."""
        return endOfPerfectPlay(self.scores[self.column], self.ply) - self.ply - 1

    @property
    def keepingVisitShare(self) -> float | None:
        """The share of the root's visits that went to the columns keeping the value."""
        if not self.table:
            return None
        visits = sum(row["N"] for row in self.table)
        return sum(row["N"] for row in self.table if row["column"] in self.keeping) / max(1, visits)


@dataclass(frozen=True)
class WholeGame:
    """A whole game against the solver from `start`: `moves` the game (columns 1..7
    from the empty board, the opening included), `result` for the tested player (+1
    won, 0 drawn, -1 lost), `mistakes` its moves that lost value, in order."""

    start: Start
    moves: str
    result: int
    mistakes: list

    @property
    def playerPlies(self) -> list[int]:
        """The plies (stones on the board) at which the tested player moved: its
        positions are `moves[:ply]` (the opening's random moves not counted)."""
        own = 0 if self.start.side == 1 else 1  # the first player moves with an even number of stones down
        return [ply for ply in range(len(self.start.opening), len(self.moves)) if ply % 2 == own]

    @property
    def playerMoves(self) -> int:
        """Moves the tested player made (the opening's random moves not counted)."""
        return len(self.playerPlies)

    @property
    def kept(self) -> bool:
        """The player ended with the result its start was worth (perfect play can do no
        better against a perfect opponent)."""
        return self.result >= self.start.value


def _columnScores(scores: dict[int, int]) -> dict[int, int]:
    return {columnOf(action) + 1: score for action, score in sorted(scores.items(), key=lambda a: columnOf(a[0]))}


def _mistake(state: GameState, moves: str, scores: dict[int, int], action: int, player, pi,
             nn_value) -> Mistake | None:
    """The Mistake of playing `action` in `state` (reached by `moves`), or None if it
    keeps the value; `scores` the solver's, for the player to move."""
    outcomes = _outcomes(scores)
    before = max(outcomes.values())
    if outcomes[action] == before:
        return None
    table = None
    if isinstance(player, Agent):
        table = [{"column": row["column"], "N": row["N"], "P": round(row["P"], 4), "Q": round(row["Q"], 4),
                  "policy": round(row["policy"], 4)} for row in thinkingTable(player, pi)]
    return Mistake(moves, columnOf(action) + 1, before, outcomes[action], _columnScores(scores),
                   sorted(columnOf(a) + 1 for a, outcome in outcomes.items() if outcome == before),
                   None if nn_value is None else round(float(nn_value), 4), table)


def wholeGameSteps(player, start: Start, rng: np.random.Generator) -> SearchSteps:
    """One whole game from `start`: `player` (anything with `actSteps`, as agents and
    `agent.User` have) plays `start.side`, its best move (tau=0, no noise); the solver
    plays the other side, a best move by score (the best result, then the fastest win
    or slowest loss), ties broken by `rng`.  A search generator (see
    `agent.runTogether`) that returns the `WholeGame`."""
    state, moves, mistakes = GameState.fromMoves(start.opening), start.opening, []
    while not state.isEndGame:
        scores = solverScores(state)
        if state.playerTurn == start.side:
            action, pi, _, nn_value = yield from player.actSteps(state, 0)
            mistake = _mistake(state, moves, scores, action, player, pi, nn_value)
            if mistake is not None:
                mistakes.append(mistake)
        else:
            action = int(rng.choice(bestActions(scores)))
        moves += str(columnOf(action) + 1)
        state = state.takeAction(action)[0]
    result = 0 if state.value[0] == 0 else (1 if state.playerTurn != start.side else -1)
    return WholeGame(start, moves, result, mistakes)


def playAgainstSolver(playerFor: Callable[[int], object], starts: Sequence[Start], seed: int = 0,
                      chunk: int = 256, progress: str | None = None) -> list[WholeGame]:
    """Play every start as a whole game against the solver (`wholeGameSteps`), game i
    by `playerFor(i)` (a player of its own: an agent's `forGame` copy keeps its own
    tree).  The games run in lockstep, `chunk` at a time, their network calls
    batched (`agent.runTogether`); game i's solver draws come from a generator
    seeded by (seed, i), so the same players give the same games.  `progress`: the
    label of a progress bar over the chunks."""
    starts = list(starts)
    begins = range(0, len(starts), chunk)
    if progress is not None:
        begins = tqdm(begins, desc=progress, leave=False)
    games: list[WholeGame] = []
    for begin in begins:
        players = [playerFor(i) for i in range(begin, min(begin + chunk, len(starts)))]
        searches = [wholeGameSteps(player, starts[begin + k], np.random.default_rng([seed, begin + k]))
                    for k, player in enumerate(players)]
        games += runTogether(searches, players.__getitem__)
    return games


def mistakeCause(mistake: Mistake, deeperKeeps: bool) -> str:
    """Why an agent's mistake happened: 'search' when a deeper search (DEEPER_SEARCH
    times the simulations) from the same position keeps the value (too little
    search); else 'prior' when the columns keeping the value got less than
    MIN_VISIT_SHARE of the root's visits (the network's policy steered the search
    away from them); else 'value' (the search looked at the right moves and still
    valued them below the mistake: the network's values misjudge the lines)."""
    if deeperKeeps:
        return "search"
    share = mistake.keepingVisitShare
    if share is not None and share < MIN_VISIT_SHARE:
        return "prior"
    return "value"


def classifyMistakes(games: list[WholeGame], deeper: Chooser) -> list[WholeGame]:
    """The games with each mistake's `cause` set: `deeper` (e.g. `agentChooser` at
    DEEPER_SEARCH times the simulations) answers every mistake's position."""
    mistakes = [m for game in games for m in game.mistakes]
    if not mistakes:
        return list(games)
    answers = deeper([GameState.fromMoves(m.moves) for m in mistakes])
    causes = iter(mistakeCause(m, columnOf(a) + 1 in m.keeping) for m, a in zip(mistakes, answers))
    return [dataclasses.replace(game, mistakes=[dataclasses.replace(m, cause=next(causes)) for m in game.mistakes])
            for game in games]


START_NAMES = {1: "won", 0: "drawn", -1: "lost"}


def _share(games: list[WholeGame]) -> dict:
    kept = sum(game.kept for game in games)
    return {"games": len(games), "kept": kept, "share": kept / len(games) if games else None}


def wholeGameSummary(games: list[WholeGame]) -> dict:
    """What a set of whole games shows: per start value ('won', 'drawn') and for both
    together, the games and how many kept their value ('share' kept), also per side
    ('first', 'second'); 'causes': the first mistake of every game not kept, counted
    by cause and phase; 'plies_to_end': the same first mistakes' `Mistake.pliesToEnd`,
    in ascending order; 'mistakes': all mistakes counted."""
    summary: dict = {}
    for value in (1, 0):
        chosen = [game for game in games if game.start.value == value]
        if chosen:
            summary[START_NAMES[value]] = {**_share(chosen), "by_side": {
                side_name: _share([g for g in chosen if g.start.side == side])
                for side, side_name in ((1, "first"), (-1, "second")) if any(g.start.side == side for g in chosen)}}
    summary["all"] = _share(games)
    causes: dict = {}
    for game in games:
        if game.mistakes:
            first = game.mistakes[0]
            by_phase = causes.setdefault(first.cause or "unclassified", {})
            by_phase[first.phase] = by_phase.get(first.phase, 0) + 1
    summary["causes"] = causes
    summary["plies_to_end"] = sorted(game.mistakes[0].pliesToEnd for game in games if game.mistakes)
    summary["mistakes"] = sum(len(game.mistakes) for game in games)
    return summary


def wholeGameText(summary: dict) -> str:
    """The summary as a person reads it: a line per start value, then the causes."""
    lines = [f"{'start':<7} {'games':>6} {'kept':>6} {'share':>7}   first / second player"]
    for name in ("won", "drawn", "all"):
        if name not in summary:
            continue
        row = summary[name]
        sides = "  ".join(f"{side} {part['kept']}/{part['games']}" for side, part in row.get("by_side", {}).items())
        lines.append(f"{name:<7} {row['games']:>6} {row['kept']:>6} {100 * row['share']:>6.1f}%   {sides}")
    if summary["causes"]:
        phases = [name for name, _ in PHASES]
        lines.append("")
        lines.append("where the games not kept went wrong (first mistake), by cause and stage:")
        lines.append(f"{'cause':<13}" + "".join(f"{p:>8}" for p in phases) + f"{'all':>8}")
        for cause, by_phase in sorted(summary["causes"].items()):
            lines.append(f"{cause:<13}" + "".join(f"{by_phase.get(p, 0):>8}" for p in phases)
                         + f"{sum(by_phase.values()):>8}")
    plies = summary.get("plies_to_end")
    if plies:
        lines.append("plies from the first mistake to the end of perfect play: " + pliesText(plies))
    return "\n".join(lines)


PLY_RANGES = ((0, 9), (10, 19), (20, 29), (30, 41))
"""The ranges (first and last, inclusive) in which `pliesText` counts plies to the end."""


def pliesText(plies: list[int]) -> str:
    """Plies to the end of perfect play (`Mistake.pliesToEnd`, ascending), as a line:
    how many fall in each of PLY_RANGES, and their median."""
    counts = ", ".join(f"{low}-{high}: {sum(low <= p <= high for p in plies)}" for low, high in PLY_RANGES)
    return f"{counts} (median {plies[len(plies) // 2]})"


def wholeGameRecord(games: list[WholeGame], about: dict) -> dict:
    """A JSON-ready record of a whole-game benchmark: `about` (who played, how), the
    summary and every game (start, moves, result, mistakes with their evidence)."""
    return {**about, "summary": wholeGameSummary(games),
            "games": [{**dataclasses.asdict(game), "kept": game.kept} for game in games]}


def readWholeGames(record: dict) -> list[WholeGame]:
    """The games of a record written by `wholeGameRecord` (e.g. to draw a losing move)."""
    return [WholeGame(Start(**game["start"]), game["moves"], game["result"],
                      [Mistake(**{**m, "scores": {int(c): s for c, s in m["scores"].items()}})
                       for m in game["mistakes"]])
            for game in record["games"]]
