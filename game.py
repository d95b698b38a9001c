"""Connect Four rules: `Game` (the environment) and `GameState` (one position).

The tutorial's representation is kept at the surface: ``board`` is a length-42 array,
row 0 on top, cell ``row * 7 + column``, 1 for the first player, -1 for the second,
0 empty; an *action* is the index of the cell a disc lands in (0..41).

Underneath, a position is two bitboards (one per player), 7 bits per column, bit
``column * 7 + height`` (height 0 = bottom row, the 7th bit of each column stays empty
as a separator).  A move is one OR, a win test a few shifts; ``board`` and ``binary``
are built only when someone reads them.

This module is the project's one implementation of the rules.  Like MCTS.py it is
compiled to C by mypyc at install (setup.py, compiled.py), from this typed source.
"""

from __future__ import annotations

import logging
import operator
from typing import Any, ClassVar

import numpy as np

from compiled import refuseStaleCopy

refuseStaleCopy(__file__, "game.py")

ROWS, COLUMNS = 6, 7
CELLS = ROWS * COLUMNS


def inputShape(colourPlane: bool = False) -> tuple[int, int, int]:
    """The shape of one position's network input (`networkInputs`): the player to
    move's stones, the opponent's, and with `colourPlane` a third plane saying which
    player is to move."""
    return (3 if colourPlane else 2, ROWS, COLUMNS)


INPUT_SHAPE = inputShape()
"""The network input of one position, as the tutorial has it: the player to move's
stones, the opponent's."""
STATE_SIZE = 2 * CELLS
ACTION_SIZE = CELLS

# Bit of the bitboard that holds tutorial cell i (row 0 on top).
_BIT_OF_CELL = np.array([(i % COLUMNS) * 7 + (ROWS - 1 - i // COLUMNS) for i in range(CELLS)])
# _ACTION[column][height]: the cell a disc dropped in `column` lands in when
# `height` discs are already there.
_ACTION = [[(ROWS - 1 - h) * COLUMNS + c for h in range(ROWS)] for c in range(COLUMNS)]
# The bitboard value of a stone in tutorial cell i (all below 2**48: sums fit int64).
_CELL_VALUE = np.array([1 << int(b) for b in _BIT_OF_CELL], dtype=np.int64)
_FULL_BOARD = sum(((1 << ROWS) - 1) << (7 * c) for c in range(COLUMNS))
MIRRORED_CELL = np.array([(i // COLUMNS) * COLUMNS + COLUMNS - 1 - i % COLUMNS for i in range(CELLS)])
"""The cell each cell becomes under the left-right reflection (its own inverse)."""
BOARD_END = "-------------"
"""The line under a board in the logs (`GameState.render`, `gamelog.moveLines`)."""


Bitboards = tuple[int, int, tuple[int, ...], bool]
"""What a position is made of (see `GameState`): the player to move's stones, the other
player's, the column heights, and whether the other player has four in a row."""

_LINE_SHIFTS = (1, 7, 6, 8)
"""Bit distance between neighbours on a line: vertical, horizontal, the two diagonals."""


def _fours(bits: int, shift: int) -> int:
    """The bits of `bits` (one player's stones) that start four in a row with step
    `shift` (the line's lowest bit)."""
    pairs = bits & (bits >> shift)
    return pairs & (pairs >> (2 * shift))


def _has_four(bits: int) -> bool:
    """True when `bits` (one player's stones) hold four in a row in any direction.
    `_fours` written out: every move of the search tests this, and the calls would
    cost 2.5x its time."""
    for shift in _LINE_SHIFTS:
        pairs = bits & (bits >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


def _cell_of_bit(bit: int) -> int:
    """The tutorial cell (row 0 on top) of bitboard bit `bit`."""
    column, height = divmod(bit, 7)
    return (ROWS - 1 - height) * COLUMNS + column


def _mirror_bits(bits: int) -> int:
    """`bits` with column c moved to column 6 - c (the left-right reflection)."""
    return sum(((bits >> (7 * c)) & 0x7F) << (7 * (COLUMNS - 1 - c)) for c in range(COLUMNS))


def _cells_of(bits) -> np.ndarray:
    """Tutorial-ordered 0/1 cells of bitboards: `bits` one int (-> shape (42,)) or an
    int64 array (-> shape (n, 42))."""
    return (np.asarray(bits, dtype=np.int64)[..., None] >> _BIT_OF_CELL) & 1


def networkInputs(states, colourPlane: bool = False) -> np.ndarray:
    """(n, 84) float32: for each position the player to move's stones, then the
    opponent's, in the tutorial's cell order; with `colourPlane`, (n, 126): then a
    plane of 42 ones when the player to move is the first player (X), of zeros when
    it is the second (O).

    The one place positions become network input (a model reshapes each row to
    `inputShape`); it is always from the point of view of the player to move.  The
    two stone planes leave whose turn it is to a count of all the stones, which
    convolutions see only piece by piece; the colour plane (AlphaZero's) gives every
    cell the side to move, on which Connect Four's threats depend (a threat on an odd
    row serves the first player, on an even row the second).  Built for a whole batch
    at once from the bitboards."""
    mine = _cells_of([s._mine for s in states])
    theirs = _cells_of([s._theirs for s in states])
    planes = [mine, theirs]
    if colourPlane:
        first = np.array([s.playerTurn == 1 for s in states], dtype=np.int64)
        planes.append(np.repeat(first.reshape(-1, 1), CELLS, axis=1))
    return np.concatenate(planes, axis=1).astype(np.float32)


def playerPiece(player: Any) -> str:
    """The letter of a player on boards and in logs: X for 1 (moves first), O for -1
    (and - for 0, an empty cell)."""
    return GameState.pieces[str(player)]


def columnOf(action: Any) -> int:
    """Column (0..6) of an action (a cell index 0..41; any integer type)."""
    return operator.index(action) % COLUMNS


class GameState:
    """One position, with the player to move (`playerTurn`, 1 or -1).

    `value` is the tutorial's triple from the point of view of the *player to move*:
    ``(-1, -1, 1)`` when the previous player has just connected four (the player to
    move has lost: value -1, points -1 for them, +1 for the opponent), else
    ``(0, 0, 0)``.  `score` is the points pair ``(player to move, opponent)``.
    """

    __slots__ = ("_mine", "_theirs", "playerTurn", "_heights", "isEndGame", "value",
                 "id", "_board", "_binary", "_allowed")

    pieces: ClassVar[dict[str, str]] = {"1": "X", "0": "-", "-1": "O"}
    _mine: int
    _theirs: int
    playerTurn: int
    _heights: tuple[int, ...]
    isEndGame: bool
    value: tuple[int, int, int]
    id: int
    _board: np.ndarray | None
    _binary: np.ndarray | None
    _allowed: list[int] | None

    def __init__(self, board: Any, playerTurn: Any, bitboards: Bitboards | None = None):
        """The position `board` (tutorial layout) with `playerTurn` to move.  Raises
        ValueError unless it can arise in a game: cells 1 / -1 / 0, no disc above an
        empty cell, disc counts matching the player to move (the first player has
        one disc more when -1 is to move, as many otherwise), and no four in a row
        for the player to move (the game would have ended before their turn).

        `bitboards` (board None) is how the rules themselves make the position after a
        move: (stones of the player to move, of the other player, column heights, the
        other player has four in a row), taken as they are, unchecked."""
        if bitboards is not None:
            mine, theirs, heights, lost = bitboards
            self._setup(mine, theirs, playerTurn, heights, lost)
            return
        board = np.asarray(board)
        if board.shape != (CELLS,):
            raise ValueError(f"board must have {CELLS} cells, got shape {board.shape}")
        ones, minus_ones = board == 1, board == -1
        if not (ones | minus_ones | (board == 0)).all():
            raise ValueError(f"board cells must be 1, -1 or 0, got {sorted(set(board.tolist()) - {1, 0, -1})}")
        if playerTurn not in (1, -1):
            raise ValueError(f"playerTurn must be 1 or -1, got {playerTurn!r}")
        first, second = int(_CELL_VALUE[ones].sum()), int(_CELL_VALUE[minus_ones].sum())
        heights = tuple(((first | second) >> (7 * c) & 0x7F).bit_length() for c in range(COLUMNS))
        if (first | second) != sum(((1 << h) - 1) << (7 * c) for c, h in enumerate(heights)):
            raise ValueError("board has a disc floating above an empty cell")
        n_first, n_second = int(ones.sum()), int(minus_ones.sum())
        if n_first - n_second != (0 if playerTurn == 1 else 1):
            raise ValueError(f"board has {n_first} discs of player 1 and {n_second} of player -1, "
                             f"impossible with player {playerTurn} to move")
        mine, theirs = (first, second) if playerTurn == 1 else (second, first)
        if _has_four(mine):
            raise ValueError(f"player {playerTurn} is to move but already has four in a row")
        self._setup(mine, theirs, 1 if playerTurn == 1 else -1, heights, _has_four(theirs))

    def _setup(self, mine: int, theirs: int, playerTurn: int, heights: tuple[int, ...], lost: bool) -> None:
        self._mine = mine          # stones of the player to move
        self._theirs = theirs      # stones of the player who moved last
        self.playerTurn = playerTurn
        self._heights = heights
        self.isEndGame = lost or (mine | theirs) == _FULL_BOARD
        self.value = (-1, -1, 1) if lost else (0, 0, 0)
        first, second = (mine, theirs) if playerTurn == 1 else (theirs, mine)
        self.id = (((first << 49) | second) << 1) | (playerTurn == 1)
        self._board = None
        self._binary = None
        self._allowed = None

    def __reduce__(self) -> tuple[type, tuple[None, int, Bitboards]]:
        """Pickled (for a worker process, see workers.py) as its bitboards."""
        return GameState, (None, self.playerTurn, (self._mine, self._theirs, self._heights, self.value[0] == -1))

    @classmethod
    def initial(cls) -> "GameState":
        """The empty board, first player (1) to move."""
        return cls(None, 1, bitboards=(0, 0, (0,) * COLUMNS, False))

    @classmethod
    def fromMoves(cls, moves: str) -> "GameState":
        """The position after a move string in Pons' notation: columns '1'..'7',
        first player first (e.g. "4453")."""
        state = cls.initial()
        for i, char in enumerate(moves):
            if char not in "1234567":
                raise ValueError(f"move {i + 1} of {moves!r} is {char!r}; columns are 1..7")
            column = int(char) - 1
            action = state.actionForColumn(column)
            if action is None:
                raise ValueError(f"move {i + 1} of {moves!r}: column {char} is full or the game is over")
            state = state.takeAction(action)[0]
        return state

    # -- rules ---------------------------------------------------------------------
    @property
    def allowedActions(self) -> list[int]:
        """Cells (0..41) a disc can be dropped into, one per non-full column from left
        to right; empty once the game is over."""
        if self._allowed is None:
            self._allowed = [] if self.isEndGame else [
                _ACTION[c][h] for c, h in enumerate(self._heights) if h < ROWS]
        return self._allowed

    def actionForColumn(self, column: Any) -> int | None:
        """The action dropping a disc in `column` (0..6), or None if it is not legal
        (the column is full or the game is over).  Raises ValueError for a column
        that does not exist."""
        if not (isinstance(column, (int, np.integer)) and 0 <= column < COLUMNS):
            raise ValueError(f"column must be 0..{COLUMNS - 1}, got {column!r}")
        column = int(column)
        height = self._heights[column]
        return None if self.isEndGame or height >= ROWS else _ACTION[column][height]

    def takeAction(self, action: Any) -> tuple["GameState", int, bool]:
        """Play `action` (any integer type); returns (newState, value, done), value from
        the point of view of the player to move in newState (-1: they have just lost)."""
        action = action if isinstance(action, int) else operator.index(action)
        column = action % COLUMNS
        height = self._heights[column]
        if self.isEndGame or height >= ROWS or _ACTION[column][height] != action:
            raise ValueError(f"action {action} is not legal here (legal: {self.allowedActions})")
        mover = self._mine | (1 << (7 * column + height))
        heights = list(self._heights)
        heights[column] = height + 1
        new = GameState(None, -self.playerTurn, bitboards=(self._theirs, mover, tuple(heights), _has_four(mover)))
        return new, new.value[0], new.isEndGame

    def winningFour(self) -> list[int]:
        """The cells (0..41, row 0 on top, ascending) of a four in a row of the player
        who has just won; [] when nobody has (the game goes on, or ended in a draw)."""
        if self.value[0] != -1:
            return []
        for shift in _LINE_SHIFTS:
            starts = _fours(self._theirs, shift)
            if starts:
                first = (starts & -starts).bit_length() - 1
                return sorted(_cell_of_bit(first + i * shift) for i in range(4))
        raise AssertionError("a won position holds a four in a row")

    @property
    def score(self) -> tuple[int, int]:
        """Points (player to move, opponent): (-1, 1) after a win by the last mover."""
        return self.value[1], self.value[2]

    @property
    def stones(self) -> int:
        """Number of discs on the board."""
        return sum(self._heights)

    @property
    def heights(self) -> tuple[int, ...]:
        """Discs in each column, left to right."""
        return self._heights

    # -- views (built on demand) -----------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """Length-42 int8 array, row 0 on top: 1 first player, -1 second, 0 empty."""
        if self._board is None:
            first, second = (self._mine, self._theirs) if self.playerTurn == 1 else (self._theirs, self._mine)
            board = _cells_of(first).astype(np.int8) - _cells_of(second).astype(np.int8)
            board.flags.writeable = False
            self._board = board
        return self._board

    @property
    def binary(self) -> np.ndarray:
        """Length-84 float32 array: the player to move's stones, then the opponent's
        (this position's row of `networkInputs`)."""
        if self._binary is None:
            binary = networkInputs([self])[0]
            binary.flags.writeable = False
            self._binary = binary
        return self._binary

    def mirrored(self) -> "GameState":
        """The same position reflected left-right (same player to move, same value)."""
        return GameState(None, self.playerTurn, bitboards=(_mirror_bits(self._mine), _mirror_bits(self._theirs),
                                                           self._heights[::-1], self.value[0] == -1))

    def text(self) -> str:
        """The board as lines of X (first player), O (second) and -, columns numbered."""
        rows = [" ".join(self.pieces[str(x)] for x in self.board[r * COLUMNS:(r + 1) * COLUMNS])
                for r in range(ROWS)]
        return "\n".join(rows + ["1 2 3 4 5 6 7"])

    def render(self, logger) -> None:
        """Write the board and BOARD_END to `logger` as one record of many lines (the
        run's logs give each line its time and level); nothing is formatted when the
        logger is disabled."""
        if logger.isEnabledFor(logging.INFO):
            logger.info(self.text() + "\n" + BOARD_END)

    def __repr__(self) -> str:
        return f"GameState(playerTurn={self.playerTurn}, stones={self.stones})\n{self.text()}"


class Game:
    """The environment: the current position plus the tutorial's game constants."""

    def __init__(self):
        self.currentPlayer = 1
        self.gameState = GameState.initial()
        self.actionSpace = np.zeros(CELLS, dtype=np.int8)
        self.pieces = GameState.pieces
        self.grid_shape = (ROWS, COLUMNS)
        self.input_shape = INPUT_SHAPE
        self.name = "connect4"
        self.state_size = STATE_SIZE
        self.action_size = ACTION_SIZE

    def reset(self) -> GameState:
        self.gameState = GameState.initial()
        self.currentPlayer = 1
        return self.gameState

    def step(self, action: Any):
        """Play `action`; returns (next_state, value, done, info), value from the point
        of view of the player to move in next_state."""
        next_state, value, done = self.gameState.takeAction(action)
        self.gameState = next_state
        self.currentPlayer = -self.currentPlayer
        return next_state, value, done, None

    @staticmethod
    def identities(state: GameState, actionValues: np.ndarray):
        """The position and its mirror image, each with its action values (the board
        and the per-cell values are reflected together)."""
        actionValues = np.asarray(actionValues)
        return [(state, actionValues), (state.mirrored(), actionValues[MIRRORED_CELL])]
