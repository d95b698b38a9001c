"""Drawing a board: as text (plain or with coloured discs), as a matplotlib figure,
and as an SVG sized for the clickable board.

Every drawing shows the first player's (X) discs red and the second's (O) yellow,
marks the last move, and in a won position marks the winning four, so the end of a
game is seen at a glance.
"""

from __future__ import annotations


from game import COLUMNS, ROWS, GameState, playerPiece

RED, YELLOW, BOARD_BLUE = "#d62728", "#f2c80f", "#1f5fbf"
_FILL = {1: RED, -1: YELLOW, 0: "white"}
_TERMINAL_DISCS = {"X": "\033[31m●\033[0m", "O": "\033[33m●\033[0m"}
"""Red and yellow discs for a colour terminal (ANSI escape codes)."""


def sideText(playerTurn: int) -> str:
    """The side of the player `playerTurn` (1 or -1) in words."""
    return "X (red), moving first" if playerTurn == 1 else "O (yellow), moving second"


def boardText(state: GameState, last_action: int | None = None, colour: bool = False) -> str:
    """`GameState.text` with the last move's disc in brackets, e.g. ``-[X]-``, and a
    winning four bracketed too (neighbours in a row share the brackets:
    ``[X X X X]``); `colour`: red and yellow discs (ANSI codes) instead of X and O."""
    marked = set(state.winningFour()) | ({last_action} if last_action is not None else set())
    lines = []
    for row, line in enumerate(state.text().splitlines()):
        chars = list(" " + line + " ")
        for column in range(COLUMNS):
            cell = row * COLUMNS + column
            if row < ROWS and cell in marked:
                if column == 0 or cell - 1 not in marked:
                    chars[2 * column] = "["
                if column == COLUMNS - 1 or cell + 1 not in marked:
                    chars[2 * column + 2] = "]"
        lines.append("".join(chars).rstrip())
    if colour:
        lines[:ROWS] = [line.replace("X", _TERMINAL_DISCS["X"]).replace("O", _TERMINAL_DISCS["O"])
                        for line in lines[:ROWS]]
    return "\n".join(lines)


def _discs(state: GameState):
    """(cell, row from the top, column, disc: 1 X, -1 O, 0 empty) of every cell."""
    for cell, disc in enumerate(state.board):
        yield (cell, *divmod(cell, COLUMNS), int(disc))


def _ends(four: list[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """(row, column) of the first and the last cell of a winning four."""
    return divmod(four[0], COLUMNS), divmod(four[-1], COLUMNS)


def drawBoard(ax, state: GameState, last_action: int | None = None, shares=None, title: str | None = None):
    """Draw the position on a matplotlib Axes: the last move ringed in black, a
    winning four joined by a black line, columns numbered 1-7; `shares` (7 values,
    None for unplayable columns) are written above the columns."""
    from matplotlib.patches import Circle, Rectangle  # here: a 0.4 s import training never needs

    ax.add_patch(Rectangle((0.5, 0.5), COLUMNS, ROWS, color=BOARD_BLUE, zorder=0))
    for cell, row, column, disc in _discs(state):
        last = cell == last_action
        ax.add_patch(Circle((column + 1, ROWS - row), 0.4, facecolor=_FILL[disc], edgecolor="black" if last else "none",
                            linewidth=3 if last else 0, zorder=1))
    four = state.winningFour()
    if four:
        (r0, c0), (r1, c1) = _ends(four)
        ax.plot([c0 + 1, c1 + 1], [ROWS - r0, ROWS - r1], color="black", linewidth=4, solid_capstyle="round", zorder=2)
    if shares is not None:
        for column, share in enumerate(shares):
            if share is not None:
                ax.text(column + 1, ROWS + 0.8, f"{share:.2f}", ha="center", va="center", fontsize=8)
    ax.set_xlim(0.4, COLUMNS + 0.6)
    ax.set_ylim(0.4, ROWS + (1.2 if shares is not None else 0.6))
    ax.set_aspect("equal")
    ax.set_xticks(range(1, COLUMNS + 1))
    ax.set_yticks([])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if title:
        ax.set_title(title, fontsize=9)


def newFigure(figsize):
    """A matplotlib Figure that Jupyter shows once when a cell returns it (made through
    pyplot, which sets up the notebook's figure display, then closed so pyplot does not
    show it a second time)."""
    import matplotlib.pyplot as plt  # here: a 0.4 s import training never needs

    fig = plt.figure(figsize=figsize)
    plt.close(fig)
    return fig


def boardFigure(state: GameState, last_action: int | None = None, shares=None, title: str | None = None):
    """A matplotlib Figure of the position (see `drawBoard`)."""
    fig = newFigure((3.6, 3.6 if shares is not None else 3.3))
    drawBoard(fig.add_subplot(), state, last_action, shares, title)
    fig.tight_layout()
    return fig


def boardSvg(state: GameState, last_action: int | None = None, cell: int = 44) -> str:
    """The position as an <svg> element exactly `cell` pixels per column and row, with
    no margin, so that buttons `cell` pixels wide stand over its columns.  Each disc
    carries its colour as data-disc ("X", "O" or "-"), the last move data-last, the
    cells of a winning four data-win (read by the browser test, and by anyone
    styling the page)."""
    four = state.winningFour()
    radius = cell * 0.4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{COLUMNS * cell}" height="{ROWS * cell}" '
             f'style="display:block"><rect width="{COLUMNS * cell}" height="{ROWS * cell}" fill="{BOARD_BLUE}"/>']
    for index, row, column, disc in _discs(state):
        x, y = (column + 0.5) * cell, (row + 0.5) * cell
        last, win = index == last_action, index in four
        stroke = ' stroke="black" stroke-width="4"' if win else ' stroke="black" stroke-width="2"' if last else ""
        flags = (" data-last" if last else "") + (" data-win" if win else "")
        parts.append(f'<circle cx="{x:g}" cy="{y:g}" r="{radius:g}" fill="{_FILL[disc]}"{stroke} data-disc="{playerPiece(disc)}"'
                     f'{flags}/>')
    if four:
        (r0, c0), (r1, c1) = _ends(four)
        parts.append(f'<line x1="{(c0 + 0.5) * cell:g}" y1="{(r0 + 0.5) * cell:g}" x2="{(c1 + 0.5) * cell:g}" '
                     f'y2="{(r1 + 0.5) * cell:g}" stroke="black" stroke-width="5" stroke-linecap="round"/>')
    parts.append("</svg>")
    return "".join(parts)
