"""The rules in game.py against an independent reference and the bitbully solver.

The reference (`RefBoard`) is deliberately naive: a 6x7 list of lists, row 0 on top,
discs dropped by scanning a column from the bottom, wins found by checking every
line of four cells on the board.  Values are from the point of view of the player to
move (-1: the opponent has just connected four).
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest
from bitbully import Board

from game import CELLS, COLUMNS, ROWS, Game, GameState, columnOf, playerPiece

# (row step, column step) of a line of four, rows counted from the top.
DIRECTIONS = {"horizontal": (0, 1), "vertical": (1, 0), "falling": (1, 1), "rising": (-1, 1)}


def all_lines() -> list[tuple[str, list[tuple[int, int]]]]:
    """Every line of four cells on the board, with its direction."""
    lines = []
    for name, (dr, dc) in DIRECTIONS.items():
        for row in range(ROWS):
            for col in range(COLUMNS):
                cells = [(row + k * dr, col + k * dc) for k in range(4)]
                if all(0 <= r < ROWS and 0 <= c < COLUMNS for r, c in cells):
                    lines.append((name, cells))
    return lines


LINES = all_lines()


class RefBoard:
    """The reference position: grid[row][col] with 1 / -1 / 0, row 0 on top."""

    def __init__(self):
        self.grid = [[0] * COLUMNS for _ in range(ROWS)]
        self.turn = 1

    def lowest_empty_row(self, col: int) -> int | None:
        for row in range(ROWS - 1, -1, -1):
            if self.grid[row][col] == 0:
                return row
        return None

    def winning_directions(self) -> set[str]:
        """Directions of every four-in-a-row on the board (any player)."""
        return {name for name, cells in LINES
                if self.grid[cells[0][0]][cells[0][1]] != 0
                and len({self.grid[r][c] for r, c in cells}) == 1}

    def is_full(self) -> bool:
        return all(cell != 0 for row in self.grid for cell in row)

    def legal_actions(self) -> list[int]:
        """The lowest empty cell of each non-full column, left to right."""
        if self.winning_directions() or self.is_full():
            return []
        actions = []
        for col in range(COLUMNS):
            row = self.lowest_empty_row(col)
            if row is not None:
                actions.append(row * COLUMNS + col)
        return actions

    def play(self, col: int) -> None:
        self.grid[self.lowest_empty_row(col)][col] = self.turn
        self.turn = -self.turn

    def flat(self) -> list[int]:
        return [cell for row in self.grid for cell in row]


def ref_after(moves: str) -> RefBoard:
    ref = RefBoard()
    for char in moves:
        ref.play(int(char) - 1)
    return ref


def bitbully_array(board: Board) -> list[int]:
    """bitbully's position in the tutorial layout (row 0 on top, 1 / -1 / 0)."""
    columns = board.to_array()  # [column][height from the bottom], 1 / 2 / 0
    sign = {0: 0, 1: 1, 2: -1}
    return [sign[columns[col][ROWS - 1 - row]] for row in range(ROWS) for col in range(COLUMNS)]


def random_games(n_games: int, seed: int):
    """Yield (moves so far as a column string, GameState) for every position of
    `n_games` uniformly random games, finished positions included."""
    rng = random.Random(seed)
    for _ in range(n_games):
        state, moves = GameState.initial(), ""
        yield moves, state
        while not state.isEndGame:
            action = rng.choice(state.allowedActions)
            moves += str(action % COLUMNS + 1)
            state = state.takeAction(action)[0]
            yield moves, state


# A full board without any four in a row: 42 moves, a draw.
DRAWN_GAME = "257771314744647214456617233613313226655255"

# One hand-made win per direction, by each player; the last move connects four.
WINS = {
    ("horizontal", 1): "1122334",
    ("vertical", 1): "1212121",
    ("rising", 1): "12234334544",
    ("falling", 1): "76654554344",
    ("horizontal", -1): "71122334",
    ("vertical", -1): "21213131",
    ("rising", -1): "712234334544",
    ("falling", -1): "176654554344",
}


# -- the reference itself ----------------------------------------------------------------
def test_reference_counts_every_line_of_four():
    counts = {name: sum(1 for n, _ in LINES if n == name) for name in DIRECTIONS}
    assert counts == {"horizontal": 24, "vertical": 21, "falling": 12, "rising": 12}


# -- random games: legal moves, wins, views, against the reference and bitbully ----------
def test_random_positions_match_reference_and_bitbully():
    directions_seen = set()
    positions = 0
    for moves, state in random_games(500, seed=1):
        ref = ref_after(moves)
        solver = Board([int(c) - 1 for c in moves])
        won = bool(ref.winning_directions())
        positions += 1
        assert state.board.tolist() == ref.flat() == bitbully_array(solver), moves
        assert state.playerTurn == ref.turn
        assert state.allowedActions == ref.legal_actions(), moves
        assert solver.has_win() == won, moves
        if not won:
            assert [a % COLUMNS for a in state.allowedActions] == solver.legal_moves(), moves
        assert state.isEndGame == (won or ref.is_full())
        assert state.value == ((-1, -1, 1) if won else (0, 0, 0))
        assert state.score == ((-1, 1) if won else (0, 0))
        directions_seen |= ref.winning_directions()
    assert positions > 8000
    assert directions_seen == set(DIRECTIONS)


def test_take_action_returns_value_for_the_new_player_to_move():
    for _, state in random_games(100, seed=2):
        for action in state.allowedActions:
            new, value, done = state.takeAction(action)
            assert new.playerTurn == -state.playerTurn
            assert (value, done) == (new.value[0], new.isEndGame)
            assert value in (0, -1)


# -- hand-made wins, draws, finished games --------------------------------------------------
@pytest.mark.parametrize(("direction", "winner"), list(WINS))
def test_win_in_each_direction(direction, winner):
    moves = WINS[(direction, winner)]
    before = GameState.fromMoves(moves[:-1])
    assert not before.isEndGame
    assert ref_after(moves[:-1]).winning_directions() == set()
    state, value, done = before.takeAction(before.actionForColumn(int(moves[-1]) - 1))
    assert ref_after(moves).winning_directions() == {direction}
    assert Board([int(c) - 1 for c in moves]).has_win()
    assert (value, done) == (-1, True)
    assert state.playerTurn == -winner
    assert state.value == (-1, -1, 1)
    assert state.score == (-1, 1)


def test_no_move_after_a_win():
    state = GameState.fromMoves(WINS[("vertical", 1)])
    assert state.allowedActions == []
    for col in range(COLUMNS):
        assert state.actionForColumn(col) is None
    ref = ref_after(WINS[("vertical", 1)])
    for col in range(COLUMNS):
        row = ref.lowest_empty_row(col)
        with pytest.raises(ValueError, match="not legal"):
            state.takeAction(row * COLUMNS + col)


def test_draw_at_42_stones():
    before = GameState.fromMoves(DRAWN_GAME[:-1])
    assert not before.isEndGame and before.stones == 41
    state, value, done = before.takeAction(before.allowedActions[0])
    ref = ref_after(DRAWN_GAME)
    assert ref.is_full() and ref.winning_directions() == set()
    solver = Board([int(c) - 1 for c in DRAWN_GAME])
    assert solver.is_full() and not solver.has_win()
    assert state.stones == CELLS
    assert (value, done) == (0, True)
    assert state.value == (0, 0, 0) and state.score == (0, 0)
    assert state.allowedActions == []


def test_illegal_actions_raise():
    state = GameState.fromMoves("444444")  # column 4 full
    legal = set(state.allowedActions)
    for action in [*range(-3, CELLS + 3)]:
        if action not in legal:
            with pytest.raises(ValueError, match=f"action {action} is not legal"):
                state.takeAction(action)


# -- identity of positions -------------------------------------------------------------------
def test_ids_unique_per_position():
    position_of_id: dict[int, tuple] = {}
    id_of_position: dict[tuple, int] = {}
    for _, state in random_games(200, seed=3):
        position = (tuple(state.board.tolist()), state.playerTurn)
        assert position_of_id.setdefault(state.id, position) == position
        assert id_of_position.setdefault(position, state.id) == state.id
    assert len(position_of_id) == len(id_of_position) > 3000


def test_same_position_by_different_orders_has_same_id():
    a, b = GameState.fromMoves("1234"), GameState.fromMoves("3214")
    assert a.id == b.id and hash(a.id) == hash(b.id)
    assert {a.id: "x"}[b.id] == "x"
    assert GameState.fromMoves("1243").id != a.id
    assert GameState.fromMoves("11").id != GameState.fromMoves("1").id


# -- views -----------------------------------------------------------------------------------
def test_binary_is_player_to_move_first():
    for _, state in random_games(50, seed=4):
        board = state.board
        binary = state.binary
        assert binary.dtype == np.float32 and binary.shape == (2 * CELLS,)
        assert binary[:CELLS].tolist() == (board == state.playerTurn).astype(float).tolist()
        assert binary[CELLS:].tolist() == (board == -state.playerTurn).astype(float).tolist()


def test_views_are_read_only():
    state = GameState.fromMoves("44")
    with pytest.raises(ValueError):
        state.board[0] = 1
    with pytest.raises(ValueError):
        state.binary[0] = 1


def test_text_shows_the_board():
    lines = GameState.fromMoves("445").text().splitlines()
    assert lines[-1] == "1 2 3 4 5 6 7"
    assert lines[-2] == "- - - X X - -"
    assert lines[-3] == "- - - O - - -"
    assert len(lines) == ROWS + 1


# -- the constructor -------------------------------------------------------------------------
def test_constructor_round_trip():
    for _, state in random_games(100, seed=5):
        copy = GameState(state.board.copy(), state.playerTurn)
        assert copy.id == state.id
        assert copy.allowedActions == state.allowedActions
        assert (copy.value, copy.isEndGame, copy.heights) == (state.value, state.isEndGame, state.heights)
        assert copy.binary.tolist() == state.binary.tolist()


def test_constructor_accepts_a_plain_list():
    state = GameState([0] * CELLS, 1)
    assert state.id == GameState.initial().id


def _board_with(cells: dict[int, int]) -> list[int]:
    board = [0] * CELLS
    for cell, value in cells.items():
        board[cell] = value
    return board


@pytest.mark.parametrize(("board", "turn", "message"), [
    (np.zeros((ROWS, COLUMNS)), 1, "must have 42 cells"),
    ([0] * 41, 1, "must have 42 cells"),
    (_board_with({35: 2}), 1, "must be 1, -1 or 0"),
    (_board_with({35: 0.5}), 1, "must be 1, -1 or 0"),
    (_board_with({28: 1, 35: 0, 36: -1}), -1, "floating"),  # disc in row 4 over an empty cell
    (_board_with({0: 1}), -1, "floating"),
    ([0] * CELLS, 0, "playerTurn must be 1 or -1"),
    ([0] * CELLS, -1, "impossible with player -1 to move"),
    (_board_with({35: 1, 36: 1}), -1, "2 discs of player 1 and 0 of player -1"),
    (_board_with({35: -1}), 1, "0 discs of player 1 and 1 of player -1"),
    # X holds four in a row but it is X's turn: the game ended before.
    (_board_with({35: 1, 36: 1, 37: 1, 38: 1, 28: -1, 29: -1, 30: -1, 39: -1}), 1, "already has four"),
])
def test_invalid_boards_raise(board, turn, message):
    with pytest.raises(ValueError, match=message):
        GameState(board, turn)


def test_from_moves_matches_reference():
    for moves in ("4453322117", "445332211"):
        state, ref = GameState.fromMoves(moves), ref_after(moves)
        assert state.board.tolist() == ref.flat()
        assert state.playerTurn == ref.turn == (1 if len(moves) % 2 == 0 else -1)


@pytest.mark.parametrize(("moves", "message"), [
    ("48", "move 2 of '48' is '8'; columns are 1..7"),
    ("0", "columns are 1..7"),
    ("4a", "columns are 1..7"),
    ("1111111", "move 7 of '1111111': column 1 is full"),
    ("12121212", "move 8 of '12121212': column 2 is full or the game is over"),
])
def test_from_moves_errors(moves, message):
    with pytest.raises(ValueError, match=message):
        GameState.fromMoves(moves)


# -- the environment ---------------------------------------------------------------------------
def test_game_reset_and_step():
    game = Game()
    assert (game.state_size, game.action_size, game.input_shape) == (2 * CELLS, CELLS, (2, ROWS, COLUMNS))
    for char in WINS[("horizontal", 1)][:-1]:
        state, value, done, info = game.step(game.gameState.actionForColumn(int(char) - 1))
        assert (value, done, info) == (0, False, None)
        assert game.currentPlayer == state.playerTurn
    state, value, done, _ = game.step(game.gameState.actionForColumn(3))
    assert (value, done) == (-1, True)
    assert state is game.gameState
    assert game.currentPlayer == -1
    with pytest.raises(ValueError, match="not legal"):
        game.step(39)  # where a disc in column 5 would land, were the game not over
    fresh = game.reset()
    assert fresh.id == GameState.initial().id == game.gameState.id
    assert game.currentPlayer == 1


# -- symmetry -------------------------------------------------------------------------------------
def mirror_cell(cell: int) -> int:
    return (cell // COLUMNS) * COLUMNS + COLUMNS - 1 - cell % COLUMNS


def test_identities_mirror_board_and_action_values_together():
    rng = np.random.default_rng(6)
    for _, state in random_games(60, seed=6):
        values = rng.random(CELLS)
        (same, same_values), (mirror, mirror_values) = Game.identities(state, values)
        assert same is state and same_values.tolist() == values.tolist()
        board = state.board.reshape(ROWS, COLUMNS)
        assert mirror.board.tolist() == board[:, ::-1].reshape(-1).tolist()
        assert mirror.playerTurn == state.playerTurn
        assert (mirror.value, mirror.isEndGame) == (state.value, state.isEndGame)
        assert mirror.allowedActions == [mirror_cell(a) for a in reversed(state.allowedActions)]
        for cell in range(CELLS):
            assert mirror_values[mirror_cell(cell)] == values[cell]
        rebuilt = GameState(mirror.board, mirror.playerTurn)
        assert rebuilt.id == mirror.id
        assert mirror.mirrored().id == state.id


def test_mirrored_win_stays_a_win():
    state = GameState.fromMoves(WINS[("rising", 1)])
    mirror = state.mirrored()
    assert mirror.id == GameState.fromMoves(WINS[("falling", 1)]).id
    assert mirror.isEndGame and mirror.value == (-1, -1, 1)


def test_numpy_integers_work_wherever_ints_do():
    """Actions, columns and players often come out of numpy (argmax, random choice);
    the compiled rules take them as they take ints."""
    state = GameState.fromMoves("44")
    action = state.actionForColumn(np.int64(3))
    assert action == state.actionForColumn(3) == 24
    assert state.takeAction(np.int64(action))[0].id == state.takeAction(action)[0].id
    rebuilt = GameState(state.board, np.int64(state.playerTurn))
    assert rebuilt.id == state.id and type(rebuilt.playerTurn) is int
    assert columnOf(np.int32(40)) == 5 and playerPiece(np.int8(-1)) == "O"
    game = Game()
    assert game.step(np.int64(38))[0].board[38] == 1


def test_a_position_survives_pickling_and_copying():
    """Positions travel to worker processes pickled (workers.py); the compiled class
    pickles as its bitboards."""
    for state in [GameState.initial(), GameState.fromMoves("4453"), GameState.fromMoves(WINS[("rising", 1)])]:
        for copied in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
            assert type(copied) is GameState and copied is not state
            assert (copied.id, copied.playerTurn, copied.value, copied.isEndGame, copied.heights) == \
                (state.id, state.playerTurn, state.value, state.isEndGame, state.heights)
            assert copied.board.tolist() == state.board.tolist()
            assert copied.allowedActions == state.allowedActions


def test_winningFour_finds_the_four_in_every_direction():
    assert GameState.fromMoves("1122334").winningFour() == [35, 36, 37, 38]  # a row of X
    assert GameState.fromMoves("1213141").winningFour() == [14, 21, 28, 35]  # a column of X
    for moves in ("12233434474", "76655454414"):  # X on a rising diagonal, then its mirror image
        diagonal = GameState.fromMoves(moves)
        rows_columns = [divmod(cell, COLUMNS) for cell in diagonal.winningFour()]
        assert diagonal.value[0] == -1 and len(rows_columns) == 4
        assert all(diagonal.board[r * COLUMNS + c] == 1 for r, c in rows_columns)
        assert len({r for r, _ in rows_columns}) == len({c for _, c in rows_columns}) == 4
    assert GameState.fromMoves("112233").winningFour() == []
    assert GameState.fromMoves("1122334").mirrored().winningFour() == [38, 39, 40, 41]  # mirrored: columns 4-7
    assert GameState.fromMoves("1212121").winningFour() == [14, 21, 28, 35]  # the game ends at the fourth X


def test_winningFour_is_a_line_of_four_of_the_winner_in_random_games():
    rng = random.Random(7)
    won = 0
    for _ in range(300):
        state, ref = GameState.initial(), RefBoard()
        while not state.isEndGame:
            column = rng.choice([a % COLUMNS for a in state.allowedActions])
            ref.play(column)
            state = state.takeAction(state.actionForColumn(column))[0]
        four = state.winningFour()
        if state.value[0] == 0:
            assert four == []
            continue
        won += 1
        winner = -state.playerTurn
        lines = [sorted(r * COLUMNS + c for r, c in cells) for _, cells in LINES
                 if all(ref.grid[r][c] == winner for r, c in cells)]
        assert four in lines
    assert won > 250


def test_actionForColumn_names_a_column_that_does_not_exist():
    state = GameState.fromMoves("1111114")
    assert state.actionForColumn(0) is None  # full
    assert state.actionForColumn(3) == (ROWS - 2) * COLUMNS + 3
    for column in (-1, COLUMNS, 2.0):
        with pytest.raises(ValueError, match=f"column must be 0..6, got {column!r}"):
            state.actionForColumn(column)
