"""Drawing boards (boards.py): text, figures and the SVG of the clickable board."""

import re

from matplotlib.colors import to_rgba

import boards
from game import COLUMNS, ROWS, GameState


def test_boardText_brackets_the_last_move_and_keeps_the_board():
    state = GameState.fromMoves("4453")
    last = state.actionForColumn(2) + COLUMNS  # the disc just dropped in column 3
    text = boards.boardText(state, last)
    lines = text.splitlines()
    assert lines[ROWS - 1] == " - -[O]X X - -"
    assert text.count("[") == 1 and text.count("]") == 1
    assert [line.replace("[", " ").replace("]", " ").strip().split() for line in lines] == \
        [line.split() for line in state.text().splitlines()]
    assert boards.boardText(state) == "\n".join(" " + line for line in state.text().splitlines())


def test_boardText_brackets_discs_at_both_edges():
    state = GameState.fromMoves("17")
    assert boards.boardText(state, state.actionForColumn(0) + COLUMNS).splitlines()[ROWS - 1] == "[X]- - - - - O"
    assert boards.boardText(state, state.actionForColumn(6) + COLUMNS).splitlines()[ROWS - 1] == " X - - - - -[O]"


def test_boardFigure_draws_red_X_yellow_O_and_rings_the_last_move():
    state = GameState.fromMoves("44535")
    last = 4 * COLUMNS + 4  # the second disc of column 5, row 4 from the top
    assert state.board[last] == 1
    fig = boards.boardFigure(state, last)
    ax = fig.axes[0]
    discs = [p for p in ax.patches if hasattr(p, "center")]
    assert len(discs) == ROWS * COLUMNS
    colours = [p.get_facecolor() for p in discs]
    assert colours.count(to_rgba(boards.RED)) == 3 and colours.count(to_rgba(boards.YELLOW)) == 2
    ringed = [p for p in discs if p.get_linewidth() > 0]
    assert len(ringed) == 1 and ringed[0].center == (5, ROWS - 4)
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in range(1, 8)]
    assert len(ax.get_lines()) == 0  # no winning four to join


def test_boardText_in_colour_draws_red_and_yellow_discs():
    state = GameState.fromMoves("45")
    plain = boards.boardText(state, state.actionForColumn(4) + COLUMNS)
    coloured = boards.boardText(state, state.actionForColumn(4) + COLUMNS, colour=True)
    assert coloured.count("\033[31m●") == 1 and coloured.count("\033[33m●") == 1  # X red, O yellow
    assert "X" not in coloured and "O" not in coloured and "[" in coloured
    assert coloured.splitlines()[-1] == plain.splitlines()[-1]  # the column numbers stay


def test_boardText_brackets_a_winning_four_and_the_last_move():
    row_win = GameState.fromMoves("1122334")
    last = (ROWS - 1) * COLUMNS + 3  # the fourth X, in column 4
    assert boards.boardText(row_win, last).splitlines()[ROWS - 1] == "[X X X X]- - -"
    column_win = GameState.fromMoves("1213141")
    lines = boards.boardText(column_win).splitlines()
    assert [line[:3] for line in lines[2:ROWS]] == ["[X]"] * 4 and "[" not in lines[1]


def test_boardFigure_joins_the_winning_four():
    state = GameState.fromMoves("1122334")
    ax = boards.boardFigure(state).axes[0]
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [1, 4] and list(line.get_ydata()) == [1, 1]


def test_boardSvg_has_one_cell_per_column_width_and_marks_discs():
    state = GameState.fromMoves("1122334")
    svg = boards.boardSvg(state, (ROWS - 1) * COLUMNS + 3, cell=40)
    assert svg.startswith("<svg") and 'width="280"' in svg and 'height="240"' in svg
    circles = re.findall(r"<circle [^>]*>", svg)
    assert len(circles) == ROWS * COLUMNS
    assert sum('data-disc="X"' in c for c in circles) == 4 and sum('data-disc="O"' in c for c in circles) == 3
    assert sum("data-win" in c for c in circles) == 4 and sum("data-last" in c for c in circles) == 1
    assert re.findall(r'cx="([\d.]+)"', circles[0])[0] == "20"  # column 1's centre: half a cell in
    assert "<line" in svg and "<line" not in boards.boardSvg(GameState.fromMoves("1122"))


def test_sideText_names_the_colour_and_the_turn():
    assert boards.sideText(1) == "X (red), moving first"
    assert boards.sideText(-1) == "O (yellow), moving second"
