"""Play against a saved agent and watch it think.

- `loadPlayer` builds an `Agent` for a saved version of a run.
- `playGame` plays in a terminal or a plain notebook (columns typed); `WidgetGame` is
  a clickable board for Jupyter; `playInNotebook` picks whichever works.
- `thinkingTable` lists, per legal column, what the agent's last search found.
- `inspectMove` runs one search on a given position with the MCTS log captured.
- `replayGame` replays a game stored in a memory file (.npz) or written to a log.

From a shell: ``python -m play [--version N] [--run-folder PATH] [--sims N] [--second]``.

Points of view: every value shown belongs to the player to move in the position it
describes (the agent, for the agent's own moves), +1 a win and -1 a loss for them.
"""

from __future__ import annotations

import argparse
import html
import io
import logging
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import funcs
import runs
import storage
from agent import Agent, Resign, askForColumn, parseColumn
from config import DEFAULT, Config
from game import COLUMNS, ROWS, Game, GameState, columnOf

RED, YELLOW, BOARD_BLUE = "#d62728", "#f2c80f", "#1f5fbf"


# -- loading a player ----------------------------------------------------------------------
def loadPlayer(version: int | None = None, run_folder=None, sims: int | None = None,
               cfg: Config | None = None, name: str = "agent") -> Agent:
    """An Agent playing `version` of the run in `run_folder` (default: cfg's RUN_FOLDER).

    version None: the run's best version (checkpoint.json); 0: an untrained network;
    n: models/version000n.keras.  The network is built with the run's own config.json
    (else `cfg`); `sims` overrides its MCTS_SIMS."""
    cfg = cfg or DEFAULT
    folder = Path(run_folder) if run_folder is not None else cfg.path("RUN_FOLDER")
    if sims is not None and (isinstance(sims, bool) or not isinstance(sims, int) or sims < 1):
        raise ValueError(f"sims must be a positive number of MCTS simulations, got {sims!r}")
    if version is None:
        version = _bestVersion(folder)
    elif isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"version must be 0 (an untrained network) or a saved version number, got {version!r}")
    elif version > 0 and not storage.model_path(folder, version).exists():
        saved = ", ".join(map(str, runs.savedVersions(folder))) or "none"
        raise ValueError(f"run folder {folder} has no saved version {version}; saved versions: {saved} "
                         "(or 0 for an untrained network)")
    run_cfg = runs.runConfig(folder, cfg)
    return funcs.versionPlayer(name, Game(), run_cfg, folder, version, mcts_simulations=sims)


def _bestVersion(folder: Path) -> int:
    if not (folder / "checkpoint.json").exists():
        raise storage.RunFileError(f"{folder} holds no run (no checkpoint.json): train first, point "
                                   "run_folder at a run, or choose version 0 (an untrained network)")
    return runs.readCheckpoint(folder)["best_player_version"]


# -- drawing ---------------------------------------------------------------------------
_TERMINAL_DISCS = {"X": "\033[31m●\033[0m", "O": "\033[33m●\033[0m"}
"""Red and yellow discs for a colour terminal (ANSI escape codes)."""


def boardText(state: GameState, last_action: int | None = None, colour: bool = False) -> str:
    """`GameState.text` with the last move's disc in brackets, e.g. ``-[X]-``;
    `colour`: red and yellow discs (ANSI codes) instead of X and O."""
    lines = [" " + line + " " for line in state.text().splitlines()]
    if last_action is not None:
        row, column = divmod(last_action, COLUMNS)
        line = lines[row]
        lines[row] = line[:2 * column] + "[" + line[2 * column + 1] + "]" + line[2 * column + 3:]
    text = "\n".join(line.rstrip() for line in lines)
    if colour:
        *board, numbers = text.split("\n")
        text = "\n".join([line.replace("X", _TERMINAL_DISCS["X"]).replace("O", _TERMINAL_DISCS["O"])
                          for line in board] + [numbers])
    return text


def sharesText(shares) -> str:
    """One line of per-column shares (None for a column that cannot be played)."""
    return "  ".join(f"{c + 1}:{'--' if s is None else f'{s:.2f}'}" for c, s in enumerate(shares))


def drawBoard(ax, state: GameState, last_action: int | None = None, shares=None, title: str | None = None):
    """Draw the position on a matplotlib Axes: red discs for the first player (X),
    yellow for the second (O), the last move ringed in black, columns numbered 1-7;
    `shares` (7 values, None for unplayable columns) are written above the columns."""
    from matplotlib.patches import Circle, Rectangle

    ax.add_patch(Rectangle((0.5, 0.5), COLUMNS, ROWS, color=BOARD_BLUE, zorder=0))
    colours = {1: RED, -1: YELLOW, 0: "white"}
    for cell, disc in enumerate(state.board):
        row, column = divmod(cell, COLUMNS)
        last = cell == last_action
        ax.add_patch(Circle((column + 1, ROWS - row), 0.4, facecolor=colours[int(disc)],
                            edgecolor="black" if last else "none", linewidth=3 if last else 0, zorder=1))
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
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize)
    plt.close(fig)
    return fig


def boardFigure(state: GameState, last_action: int | None = None, shares=None, title: str | None = None):
    """A matplotlib Figure of the position (see `drawBoard`)."""
    fig = newFigure((3.6, 3.6 if shares is not None else 3.3))
    drawBoard(fig.add_subplot(), state, last_action, shares, title)
    fig.tight_layout()
    return fig


def figureSvg(fig) -> str:
    """The figure as an inline <svg> element."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


# -- what the agent thought --------------------------------------------------------------
@dataclass
class Thinking:
    """One search of the agent: the move it chose and, per legal column, its statistics.

    `value`: the chosen move's Q; `nn_value`: the network's value of the searched
    position; both for the player to move there (the agent)."""

    action: int
    table: list[dict]
    value: float
    nn_value: float

    @property
    def column(self) -> int:
        """The chosen column, 1..7."""
        return columnOf(self.action) + 1


def thinkingTable(agent: Agent) -> list[dict]:
    """One row per legal column at the root of the agent's last search, left to right.

    Keys: column (1..7), action, N (visits), share (N / total visits), Q (mean value
    of the move), P (prior), U = cpuct * P * sqrt(max(1, total N)) / (1 + N) (the
    exploration bonus the next simulation would see), net_after (the network's value
    of the position after the move, or None if the search never evaluated it, e.g. the
    game ends there).  Q, U and net_after are for the player to move at the root."""
    if agent.root is None or not agent.root.edges:
        raise ValueError(f"{agent.name} has not searched a position yet: let it move first")
    edges = sorted(agent.root.edges, key=lambda pair: columnOf(pair[0]))
    total = sum(edge.N for _, edge in edges)
    scale = agent.mcts.explorationScale(agent.root)
    return [{"column": columnOf(action) + 1, "action": action, "N": edge.N,
             "share": edge.N / total if total else 0.0, "Q": edge.Q, "P": edge.P,
             "U": scale * edge.P / (1 + edge.N),
             "net_after": _valueAfter(edge)}
            for action, edge in edges]


def _valueAfter(edge) -> float | None:
    """The network's value of the position after `edge`'s move, for the player making
    it; None when the search never evaluated that position."""
    if edge.N == 0 or edge.outNode.nn_value is None:
        return None
    return -edge.outNode.nn_value


def _signed(value) -> str:
    return "--" if value is None else f"{value:+.3f}"


def thinkingText(thinking: Thinking) -> str:
    """The table of a search as aligned text, the chosen column marked."""
    lines = ["col  visits  share       Q      P      U  net after"]
    for row in thinking.table:
        mark = "  <- played" if row["action"] == thinking.action else ""
        lines.append(f"{row['column']:3d}  {row['N']:6d}  {row['share']:5.2f}  {row['Q']:+.3f}  {row['P']:5.3f}"
                     f"  {row['U']:5.3f}  {_signed(row['net_after']):>9}{mark}")
    lines.append(f"plays column {thinking.column}; its value for itself: search {thinking.value:+.3f}, "
                 f"network before searching {thinking.nn_value:+.3f}")
    return "\n".join(lines)


def thinkingHtml(thinking: Thinking) -> str:
    """The table of a search as an HTML table, the chosen column in bold."""
    head = "".join(f"<th>{h}</th>" for h in ("column", "visits", "share", "Q", "P", "U", "net after"))
    body = []
    for row in thinking.table:
        style = ' style="font-weight:bold"' if row["action"] == thinking.action else ""
        cells = (row["column"], row["N"], f"{row['share']:.2f}", _signed(row["Q"]), f"{row['P']:.3f}",
                 f"{row['U']:.3f}", _signed(row["net_after"]))
        body.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f"<table><tr>{head}</tr>{''.join(body)}</table>"
            f"<p>Plays column {thinking.column}. Its value for itself: search {thinking.value:+.3f}, "
            f"network before searching {thinking.nn_value:+.3f}.</p>{_LEGEND}")


_LEGEND = ("<p><small>visits: simulations through the move; Q: their mean result; P: the network's "
           "prior; U: the exploration bonus the next simulation would add to Q; net after: the network's "
           "value of the position after the move. Values are for the searching player: +1 a win, "
           "-1 a loss.</small></p>")


# -- a game between a human and the agent ----------------------------------------------------
class Match:
    """A human against an agent, without any display: both user interfaces drive one.

    The human plays X (moves first) when `human_first`, else O.  The agent is a copy
    of `agent` (same network, its own tree and random draws); `sims` overrides its
    simulations per move.  The game starts after the moves in `start` ("4453")."""

    def __init__(self, agent: Agent, human_first: bool = True, sims: int | None = None, start: str = ""):
        self.agent = _copyAgent(agent, sims, int(agent.rng.integers(2**32)))
        self.human = 1 if human_first else -1
        self.state = GameState.fromMoves(start)
        self.moves = start
        self.last_action: int | None = None
        self.resigned = False
        self.thinking: Thinking | None = None

    @property
    def over(self) -> bool:
        return self.resigned or self.state.isEndGame

    @property
    def humanToMove(self) -> bool:
        return not self.over and self.state.playerTurn == self.human

    def humanPlays(self, action: int) -> None:
        """Play the human's (legal) action."""
        if not self.humanToMove:
            raise ValueError("it is not the human's turn" if not self.over else "the game is over")
        self._play(action)

    def agentPlays(self) -> Thinking:
        """Let the agent search and play its most visited move; returns its thinking."""
        if self.over or self.humanToMove:
            raise ValueError("it is not the agent's turn" if not self.over else "the game is over")
        action, _, value, nn_value = self.agent.act(self.state, 0)
        self.thinking = Thinking(action, thinkingTable(self.agent), value, nn_value)
        self._play(action)
        return self.thinking

    def resign(self) -> None:
        """The human gives the game up."""
        if not self.over:
            self.resigned = True

    def _play(self, action: int) -> None:
        self.state = self.state.takeAction(action)[0]
        self.moves += str(columnOf(action) + 1)
        self.last_action = action

    @property
    def winner(self) -> str | None:
        """'human', 'agent', or None (a draw, or the game is not over)."""
        if self.resigned:
            return "agent"
        if self.state.value[0] == -1:  # the player to move has lost
            return "agent" if self.state.playerTurn == self.human else "human"
        return None

    def outcome(self) -> str:
        """One line on where the game stands."""
        if self.resigned:
            return "You resigned: the agent wins."
        if self.winner is not None:
            return "You win!" if self.winner == "human" else f"The agent wins after {len(self.moves)} moves."
        if self.over:
            return "Draw: the board is full."
        return "Your move." if self.humanToMove else "The agent's move."


def _copyAgent(agent: Agent, sims: int | None, seed: int) -> Agent:
    copy = agent.forGame(seed)
    if sims is not None:
        copy.MCTSsimulations = sims
    return copy


def _sideText(human_first: bool) -> str:
    return "X (red), moving first" if human_first else "O (yellow), moving second"


def playGame(agent: Agent, human_first: bool = True, input_fn=input, output_fn=print, show=None,
             sims: int | None = None, start: str = "") -> Match:
    """Play one game with typed columns (terminal or plain notebook); returns the Match.

    A bad entry (not a number, no such column, a full column, an empty line) is
    explained and asked again; 'q' or the end of input resigns.  After each agent move
    its thinking is printed.  `show(state, last_action)` displays the board (default:
    `boardText` through `output_fn`)."""
    if show is None:
        def show(state, last_action):
            output_fn(boardText(state, last_action))
    match = Match(agent, human_first, sims, start)
    output_fn(f"You play {_sideText(human_first)}. Type a column 1-7, q to resign.")
    show(match.state, None)
    while not match.over:
        if match.humanToMove:
            try:
                match.humanPlays(askForColumn(match.state, input_fn, output_fn))
            except Resign:
                match.resign()
                break
        else:
            output_fn(thinkingText(match.agentPlays()))
        show(match.state, match.last_action)
    output_fn(match.outcome())
    return match


class WidgetGame:
    """A clickable board for Jupyter: one button per column, the board, a status line,
    the agent's thinking, Resign and New game buttons.

    Clicking a column plays it, then the agent replies at once (synchronously, so
    `game.buttons[c].click()` drives a game from code).  A full column, or a click
    after the game is over, only shows a message.  Each game starts after the moves
    in `start` ("4453")."""

    def __init__(self, agent: Agent, human_first: bool = True, sims: int | None = None, start: str = ""):
        import ipywidgets as widgets

        self._agent, self._sims, self.human_first, self._start = agent, sims, human_first, start
        self.buttons = [widgets.Button(description=str(c + 1), layout=widgets.Layout(width="44px"))
                        for c in range(COLUMNS)]
        for column, button in enumerate(self.buttons):
            button.on_click(lambda _, column=column: self.clickColumn(column))
        self.resign_button = widgets.Button(description="Resign")
        self.resign_button.on_click(lambda _: self.resign())
        self.new_button = widgets.Button(description="New game")
        self.new_button.on_click(lambda _: self.newGame())
        self.side = widgets.HTML()
        self.board = widgets.HTML()
        self.status = widgets.HTML()
        self.thinking = widgets.HTML()
        self.widget = widgets.VBox([self.side, widgets.HBox(self.buttons), self.board, self.status,
                                    widgets.HBox([self.resign_button, self.new_button]), self.thinking])
        self.newGame()

    @property
    def state(self) -> GameState:
        return self.match.state

    def newGame(self) -> None:
        """Start again (the agent moves at once when it plays first)."""
        self.match = Match(self._agent, self.human_first, self._sims, self._start)
        self.side.value = f"<b>You play {_sideText(self.human_first)}.</b>"
        self.thinking.value = ""
        if not self.match.over and not self.match.humanToMove:
            self.match.agentPlays()
        self._refresh(self.match.outcome())

    def clickColumn(self, column: int) -> None:
        """The human clicked `column` (0..6)."""
        if self.match.over:
            self._say(f"The game is over ({self.match.outcome()}) Press New game to play again.")
            return
        action, problem = parseColumn(str(column + 1), self.match.state)
        if problem is not None:
            self._say(problem)
            return
        self.match.humanPlays(action)
        if not self.match.over:
            self.match.agentPlays()
        self._refresh(self.match.outcome())

    def resign(self) -> None:
        if self.match.over:
            self._say(f"The game is already over ({self.match.outcome()})")
            return
        self.match.resign()
        self._refresh(self.match.outcome())

    def _say(self, message: str) -> None:
        self.status.value = html.escape(message)

    def _refresh(self, message: str) -> None:
        """Redraw the board and the thinking after a move, and say `message`."""
        match = self.match
        self.board.value = figureSvg(boardFigure(match.state, match.last_action))
        self._say(message)
        if match.thinking is not None:
            self.thinking.value = "<b>What the agent thought about its last move</b>" + thinkingHtml(match.thinking)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def widgetsWork() -> bool:
    """True inside a Jupyter kernel with ipywidgets installed."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def playInNotebook(agent: Agent, human_first: bool = True, sims: int | None = None, input_fn=input,
                   output_fn=print):
    """The clickable board (`WidgetGame`, displayed) when widgets work in this kernel,
    else the typed game (`playGame` through `input_fn` / `output_fn`).  Returns the
    game (the WidgetGame, or the finished Match)."""
    if widgetsWork():
        from IPython.display import display

        game = WidgetGame(agent, human_first, sims)
        display(game)
        return game
    return playGame(agent, human_first, input_fn, output_fn, sims=sims, show=_figureShow() if _inIPython() else None)


def _inIPython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _figureShow():
    """Show a board as a figure (red and yellow discs) in an IPython front end."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    def show(state, last_action):
        figure = boardFigure(state, last_action)
        display(figure)
        plt.close(figure)
    return show


# -- inspecting one search -----------------------------------------------------------------
@dataclass
class Inspection(Thinking):
    """One search from a given position with everything it did (see `inspectMove`)."""

    moves: str = ""
    state: GameState | None = field(default=None, repr=False)
    principal_variation: list[int] = field(default_factory=list)
    tree_size: int = 0
    log: str = field(default="", repr=False)

    def __str__(self) -> str:
        return "\n".join([f"position after {self.moves or '(no moves)'}:", boardText(self.state),
                          thinkingText(self), f"principal variation (columns): {self._pv()}",
                          f"tree: {self.tree_size} nodes; log: {len(self.log.splitlines())} lines (.log)"])

    def _pv(self) -> str:
        return " ".join(map(str, self.principal_variation)) or "(none)"

    def _repr_html_(self) -> str:
        return (f"<p>Position after <code>{self.moves or '(no moves)'}</code>:</p>"
                f"<pre>{html.escape(boardText(self.state))}</pre>{thinkingHtml(self)}"
                f"<p>Principal variation (columns): {self._pv()}; tree: {self.tree_size} nodes; "
                f"log: {len(self.log.splitlines())} lines (<code>.log</code>).</p>")

    def plot(self):
        """Bar charts of N, Q, P and U per legal column (the played column in red)."""
        fig = newFigure((10, 2.6))
        columns = [row["column"] for row in self.table]
        colours = [RED if row["action"] == self.action else BOARD_BLUE for row in self.table]
        for i, key in enumerate(("N", "Q", "P", "U")):
            ax = fig.add_subplot(1, 4, i + 1)
            ax.bar(columns, [row[key] for row in self.table], color=colours)
            ax.set_xticks(range(1, COLUMNS + 1))
            ax.set_xlim(0.4, COLUMNS + 0.6)
            ax.set_title(key)
            ax.set_xlabel("column")
            if key == "Q":
                ax.axhline(0, color="black", linewidth=0.8)
        fig.suptitle(f"search after {self.moves or '(no moves)'}: plays column {self.column}", fontsize=10)
        fig.tight_layout()
        return fig


def principalVariation(agent: Agent) -> list[int]:
    """Columns (1..7) along the most visited edges from the root of the last search."""
    columns, node = [], agent.root
    while node is not None and node.edges:
        action, edge = max(node.edges, key=lambda pair: pair[1].N)
        if edge.N == 0:
            break
        columns.append(columnOf(action) + 1)
        node = edge.outNode
    return columns


def inspectMove(agent: Agent, moves: str, sims: int | None = None) -> Inspection:
    """Search the position after `moves` ("4453": columns, first player first) once,
    with the MCTS log captured, and return what the search did.

    The search runs on a copy of the agent (fresh tree, seeded with the config's
    SEED, no root noise, `sims` simulations if given) whose logger writes to a
    string, so `agent` itself is untouched."""
    state = GameState.fromMoves(moves)
    if state.isEndGame:
        raise ValueError(f"the game is over after {moves!r}: there is no move to inspect")
    player = _copyAgent(agent, sims, agent.config.SEED)
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(message)s"))
    player.logger = logging.Logger("connect4.inspect", logging.INFO)
    player.logger.addHandler(handler)
    try:
        action, _, value, nn_value = player.act(state, 0)
    finally:
        player.logger.removeHandler(handler)
        handler.close()
    return Inspection(action, thinkingTable(player), value, nn_value, moves=moves, state=state,
                      principal_variation=principalVariation(player), tree_size=len(player.mcts.tree),
                      log=buffer.getvalue())


# -- replaying stored games -------------------------------------------------------------------
@dataclass
class Frame:
    """One position of a replayed game and what was known about its move.

    `shares`: the search's visit share per column (None for unplayable columns);
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
        mover = "X" if frame.state.playerTurn == 1 else "O"
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
                      "visit shares " + sharesText(frame.shares)]
            if frame.search_value is not None:
                parts.append(f"search value {frame.search_value:+.3f}, network value {frame.nn_value:+.3f}")
            if frame.result is not None:
                parts.append(f"final result for the player to move: {frame.result:+.0f}")
        return "\n".join(parts)

    def figure(self, i: int):
        """Frame i (0-based) as a board figure with the visit shares over the columns."""
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


def _sharesOf(state: GameState, action_values) -> list:
    shares = []
    for column in range(COLUMNS):
        action = state.actionForColumn(column)
        shares.append(None if action is None else float(action_values[action]))
    return shares


def gamesFromMemory(path) -> list[Replay]:
    """The games in a memory file, oldest first.

    Memory holds each position before a move, then its mirror image, with the
    search's visit distribution (AV) and the final result for the player to move.  A
    game's positions follow each other with one more stone; a new game starts where
    the stone count drops.  Of each position and its mirror, the one the previous
    position leads to is kept, and the move between them is recovered; a game's last
    move is not stored (its frame has action None)."""
    from memory import Memory

    memory = Memory.load(path, sys.maxsize)
    games: list[list] = []
    previous_stones = math.inf
    for row in memory.ltmemory:
        stones = row["state"].stones
        if stones < previous_stones:
            games.append([])
        games[-1].append(row)
        previous_stones = stones
    return [_replayFromRows(str(path), number, rows) for number, rows in enumerate(games, start=1)]


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
        replay.frames.append(Frame(state, _sharesOf(state, row["AV"]), result=row["value"]))
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


_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ (.*)$")
_EPISODE_START = re.compile(r"^EPISODE (\d+): (.*) \(X\) vs (.*) \(O\)$")
_EPISODE_END = re.compile(r"^EPISODE (\d+): (.*) after (\d+) moves$")
_BOARD_ROW = re.compile(r"^[XO-]( [XO-]){6}$")
_TO_MOVE = re.compile(r"^game (\d+): (.*) \(([XO])\) to move; visit shares by column: (.*)$")
_VALUES = re.compile(r"^game \d+: MCTS perceived value for [XO]: ([-+]?[\d.]+); NN perceived value: ([-+]?[\d.]+)$")
_ACTION = re.compile(r"^game (\d+): action: column ([1-7])$")
_RESIGNS = re.compile(r"^game (\d+): (.*) resigns$")


def gamesFromLog(path) -> list[Replay]:
    """The games in a log of played matches (see `funcs.Episode._logMove`), in the
    order they started.

    Each logged move is its board, then lines "game N: ..." with the visit shares,
    the values (agents only) and "action: column C".  Games of one match are played
    at once, so their moves interleave: each goes to game N.  Moves of games whose
    start is not in the file (a rotated log) are skipped."""
    games: list[Replay] = []
    open_games: dict[int, Replay] = {}
    rows: list[str] = []
    pending: dict = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            text = line.rstrip("\n")
            prefixed = _LOG_PREFIX.match(text)
            message = prefixed.group(1) if prefixed else text
            if m := _EPISODE_START.match(message):
                replay = Replay(str(path), len(games) + 1, [Frame(GameState.initial(), [None] * COLUMNS)],
                                players={1: m.group(2), -1: m.group(3)})
                games.append(replay)
                open_games[int(m.group(1))] = replay
            elif m := _EPISODE_END.match(message):
                replay = open_games.pop(int(m.group(1)), None)
                if replay is not None:
                    replay.outcome = f"{m.group(2)} after {m.group(3)} moves"
            elif _BOARD_ROW.match(message):
                rows = (rows + [message])[-ROWS:]
            elif m := _TO_MOVE.match(message):
                pending = {"game": int(m.group(1)), "player": m.group(2), "turn": 1 if m.group(3) == "X" else -1,
                           "shares": [None if s.split(":")[1] == "--" else float(s.split(":")[1])
                                      for s in m.group(4).split()]}
            elif m := _VALUES.match(message):
                pending.update(search_value=float(m.group(1)), nn_value=float(m.group(2)))
            elif (m := _ACTION.match(message)) and pending.get("game") == int(m.group(1)):
                _logMove(open_games.get(pending["game"]), rows, pending, int(m.group(2)) - 1)
                pending = {}
            elif (m := _RESIGNS.match(message)) and int(m.group(1)) in open_games:
                open_games[int(m.group(1))].frames[-1].player = m.group(2)
    return games


def _logMove(replay: Replay | None, rows: list[str], pending: dict, column: int) -> None:
    """Add a logged move to its game's replay (skipped when the game's start is not
    in the file, or the logged board is not the game's position)."""
    if replay is None:
        return
    frame = replay.frames[-1]
    state = frame.state
    action = state.actionForColumn(column)
    if state.playerTurn != pending["turn"] or state.text().splitlines()[:ROWS] != rows or action is None:
        return
    frame.action, frame.shares, frame.player = action, pending["shares"], pending["player"]
    frame.search_value, frame.nn_value = pending.get("search_value"), pending.get("nn_value")
    replay.frames.append(Frame(state.takeAction(action)[0], [None] * COLUMNS))


# -- the terminal ------------------------------------------------------------------------------
def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value}")
    return value


def main(argv=None, input_fn=input, output_fn=print) -> Match:
    """``python -m play``: a game in the terminal against a saved version of the run."""
    parser = argparse.ArgumentParser(prog="python -m play",
                                     description="Play Connect Four against a saved version of the run.")
    parser.add_argument("--version", type=int, default=None,
                        help="version to play (default: the run's best; 0: an untrained network)")
    parser.add_argument("--run-folder", default=None, help="run folder (default: the config's RUN_FOLDER)")
    parser.add_argument("--sims", type=_positive, default=None,
                        help="MCTS simulations per agent move (default: the run's MCTS_SIMS)")
    parser.add_argument("--second", action="store_true", help="let the agent move first")
    args = parser.parse_args(argv)
    try:
        agent = loadPlayer(args.version, args.run_folder, args.sims)
    except (ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    output_fn(f"Playing version {args.version if args.version is not None else 'best'} with "
              f"{agent.MCTSsimulations} simulations per move.")
    colour = output_fn is print and sys.stdout.isatty()
    return playGame(agent, human_first=not args.second, input_fn=input_fn, output_fn=output_fn,
                    show=lambda state, last: output_fn(boardText(state, last, colour)))


if __name__ == "__main__":
    main()
