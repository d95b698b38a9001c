"""Replaying stored games: from a memory snapshot (.npz) or from the main or tourney
log, as a sequence of boards with what the search thought of each move.

`replayGame` picks one game of a source; `Replay` shows it as text, as one figure per
position, or as a grid of small boards.

Points of view: every value of a frame is for the player to move in its position.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import gamelog
import loggers
from boards import boardFigure, boardText, drawBoard, newFigure
from game import COLUMNS, ROWS, GameState, columnOf, playerPiece
from memory import Memory


@dataclass
class Frame:
    """One position of a replayed game and what was known about its move.

    `shares`: the search's policy per column (visit shares with PUCT, the improved
    policy with Gumbel's root search; None for unplayable columns);
    `action`: the move played (None when the source does not hold it);
    `search_value` / `nn_value`: the search's and the network's value (log only);
    `result`: the game's final result (memory only).  All values are for the player to
    move in `state`."""

    state: GameState
    shares: list
    action: int | None = None
    player: str | None = None
    search_value: float | None = None
    nn_value: float | None = None
    result: float | None = None


@dataclass
class Replay:
    """A stored game as a sequence of frames (see `replayGame`)."""

    source: str
    number: int
    frames: list[Frame] = field(default_factory=list)
    outcome: str = "unfinished"
    players: dict | None = None
    """Names by playerTurn (1: X, -1: O), when the source names them."""

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def moves(self) -> str:
        """The columns played, as far as the source holds them."""
        return "".join(str(columnOf(f.action) + 1) for f in self.frames if f.action is not None)

    def _lastAction(self, i: int) -> int | None:
        return self.frames[i - 1].action if i > 0 else None

    def _title(self, i: int) -> str:
        frame = self.frames[i]
        mover = playerPiece(frame.state.playerTurn)
        who = f"{frame.player or mover} ({mover})" if frame.player else mover
        if frame.state.isEndGame:
            return f"{i + 1}. final position"
        if frame.action is not None:
            return f"{i + 1}. {who} plays {columnOf(frame.action) + 1}"
        if frame.player is not None:
            return f"{i + 1}. {who} resigns"
        return f"{i + 1}. {who} to move (move not stored)"

    def __str__(self) -> str:
        parts = [f"game {self.number} of {self.source}: {self.outcome}"]
        for i, frame in enumerate(self.frames):
            parts += ["", self._title(i), boardText(frame.state, self._lastAction(i)),
                      "search policy " + gamelog.sharesText(frame.shares)]
            if frame.search_value is not None:
                parts.append(f"search value {frame.search_value:+.3f}, network value {frame.nn_value:+.3f}")
            if frame.result is not None:
                parts.append(f"final result for the player to move: {frame.result:+.0f}")
        return "\n".join(parts)

    def figure(self, i: int):
        """Frame i (0-based) as a board figure with the search's policy over the columns."""
        frame = self.frames[i]
        return boardFigure(frame.state, self._lastAction(i), frame.shares, self._title(i))

    def plot(self, per_row: int = 4):
        """Every frame in a grid of small boards."""
        rows = max(1, math.ceil(len(self.frames) / per_row))
        fig = newFigure((2.6 * per_row, 2.7 * rows))
        for i in range(len(self.frames)):
            ax = fig.add_subplot(rows, per_row, i + 1)
            drawBoard(ax, self.frames[i].state, self._lastAction(i), self.frames[i].shares, self._title(i))
        fig.suptitle(f"game {self.number}: {self.outcome}", fontsize=11)
        fig.tight_layout()
        return fig


def replayGame(source, game: int | None = None) -> Replay:
    """Game number `game` (1-based; None: the last) of a memory file (.npz) or a log
    file of played matches (logger_main.log, logger_tourney.log)."""
    games = gamesFromMemory(source) if str(source).endswith(".npz") else gamesFromLog(source)
    if not games:
        raise ValueError(f"{source} holds no complete game record")
    if game is None:
        return games[-1]
    if not 1 <= game <= len(games):
        raise ValueError(f"{source} holds {len(games)} games: choose game 1 to {len(games)}")
    return games[game - 1]


def gamesFromMemory(path) -> list[Replay]:
    """The games in a memory file, oldest first.

    Memory holds each position before a move, then its mirror image, with the
    search's policy (AV) and the final result for the player to move.  A
    row belongs to the game before it when it is the mirror image of that game's last
    position or one move after one of its last two rows; otherwise a new game starts
    (games that begin with random opening moves start anywhere, not always from fewer
    stones).  Of each position and its mirror, the one the previous position leads
    to is kept, and the move between them is recovered; a game's last move is not
    stored (its frame has action None)."""
    memory = Memory.load(path, sys.maxsize)
    games: list[list] = []
    for row in memory.ltmemory:
        if not games or not _continues(games[-1], row["state"]):
            games.append([])
        games[-1].append(row)
    return [_replayFromRows(str(path), number, rows) for number, rows in enumerate(games, start=1)]


def _continues(rows: list[dict], state: GameState) -> bool:
    """Whether `state` goes on the game whose memory rows so far are `rows` (see
    `gamesFromMemory`)."""
    last = rows[-1]["state"]
    if state.id == last.mirrored().id:
        return True
    return any(_moveBetween(row["state"], state) is not None for row in rows[-2:])


def _replayFromRows(source: str, number: int, rows: list[dict]) -> Replay:
    replay = Replay(source, number)
    for row in rows:
        state = row["state"]
        if replay.frames:
            last = replay.frames[-1]
            action = _moveBetween(last.state, state)
            if action is None:
                continue
            last.action = action
        replay.frames.append(Frame(state, gamelog.columnShares(state, row["AV"]), result=row["value"]))
    first = replay.frames[0]
    result = first.result * first.state.playerTurn  # for the first player
    replay.outcome = "X wins" if result > 0 else "O wins" if result < 0 else "draw"
    return replay


def _moveBetween(before: GameState, after: GameState) -> int | None:
    """The action leading from `before` to `after`, or None if no single move does."""
    for action in before.allowedActions:
        if before.takeAction(action)[0].id == after.id:
            return action
    return None


def gamesFromLog(path) -> list[Replay]:
    """The games in a log of played matches (the lines of `gamelog`), in the order
    they started.

    Each logged move is its board, then lines "game N: ..." with the search's policy,
    the values (agents only) and "action: column C".  Games of one match are played
    at once, so their moves interleave: each goes to game N.  Moves of games whose
    start is not in the file (a rotated log) are skipped."""
    games: list[Replay] = []
    open_games: dict[int, Replay] = {}
    rows: list[str] = []
    pending: dict = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            message = loggers.messageOf(line.rstrip("\n"))
            if m := gamelog.START.parse(message):
                replay = Replay(str(path), len(games) + 1, [Frame(GameState.initial(), [None] * COLUMNS)],
                                players={1: m["first"], -1: m["second"]})
                games.append(replay)
                open_games[int(m["game"])] = replay
            elif m := gamelog.RESULT.parse(message):
                replay = open_games.pop(int(m["game"]), None)
                if replay is not None:
                    replay.outcome = f"{m['winner']} wins after {m['moves']} moves"
            elif gamelog.BOARD_ROW.fullmatch(message):
                rows = (rows + [message])[-ROWS:]
            elif m := gamelog.TO_MOVE.parse(message):
                pending = {"game": int(m["game"]), "player": m["player"], "piece": m["piece"],
                           "shares": gamelog.parseShares(m["shares"])}
            elif m := gamelog.VALUES.parse(message):
                pending.update(search_value=float(m["search"]), nn_value=float(m["network"]))
            elif (m := gamelog.ACTION.parse(message)) and pending.get("game") == int(m["game"]):
                _logMove(open_games.get(pending["game"]), rows, pending, int(m["column"]) - 1)
                pending = {}
            elif (m := gamelog.RESIGNS.parse(message)) and int(m["game"]) in open_games:
                open_games[int(m["game"])].frames[-1].player = m["player"]
    return games


def _logMove(replay: Replay | None, rows: list[str], pending: dict, column: int) -> None:
    """Add a logged move to its game's replay (skipped when the game's start is not
    in the file, or the logged board is not the game's position)."""
    if replay is None:
        return
    frame = replay.frames[-1]
    if len(replay.frames) == 1 and frame.action is None and (start := _loggedPosition(rows, pending["piece"])):
        frame.state = start  # a game that started from a position, not the empty board (an archive start)
    state = frame.state
    action = state.actionForColumn(column) if 0 <= column < COLUMNS else None
    if playerPiece(state.playerTurn) != pending["piece"] or state.text().splitlines()[:ROWS] != rows or action is None:
        return
    frame.action, frame.shares, frame.player = action, pending["shares"], pending["player"]
    frame.search_value, frame.nn_value = pending.get("search_value"), pending.get("nn_value")
    replay.frames.append(Frame(state.takeAction(action)[0], [None] * COLUMNS))


def _loggedPosition(rows: list[str], piece: str) -> GameState | None:
    """The position a logged board's rows show with `piece` (X or O) to move, or None when they show none."""
    cells = {text: int(value) for value, text in GameState.pieces.items()}
    board = [cells.get(text) for row in rows for text in row.split()]
    if len(board) != ROWS * COLUMNS or None in board:
        return None
    try:
        return GameState(board, 1 if piece == playerPiece(1) else -1)
    except ValueError:
        return None
