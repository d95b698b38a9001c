"""Play against a saved agent and watch it think.

- `loadPlayer` builds an `Agent` for a saved version of a run.
- `playGame` plays in a terminal or a plain notebook (columns typed, `typedGame`,
  which also plays a `User`'s games in `funcs.playMatches`, as the tutorial's
  `playMatchesBetweenVersions` with version -1); `WidgetGame` is a clickable board
  for Jupyter; `playInNotebook` picks whichever works.  Both drive a `Match`.  After
  each agent move both show what it thought (`thinking`); at the end, the final board
  with the winning four marked, who won, and in how many moves.
- `inspectMove` runs one search on a given position with the MCTS log captured.

From a shell: ``python -m play [--version N] [--run-folder PATH] [--sims N] [--second]``.

Points of view: every value shown belongs to the player to move in the position it
describes (the agent, for the agent's own moves), +1 a win and -1 a loss for them.
"""

from __future__ import annotations

import argparse
import html
import io
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import cli
import loggers as lg

if __name__ == "__main__":  # python -m play: --help, or a wrong argument, is answered before TensorFlow loads
    ARGUMENTS = cli.PLAYING.parse_args()

with lg.nativeStderrTo(os.devnull):  # TensorFlow's C++ start-up notices, hidden as the notebook hides them
    import runs
    import storage
    from agent import Agent, Resign, askForColumn, checkedSimulations, oneHot, parseColumn
    from boards import BOARD_BLUE, RED, boardFigure, boardSvg, boardText, newFigure, sideText
    from config import DEFAULT, SHIPPED, Config
    from game import ACTION_SIZE, COLUMNS, Game, GameState, columnOf
    from thinking import Thinking, thinkingHtml, thinkingTable, thinkingText


# -- loading a player ----------------------------------------------------------------------
def loadPlayer(version: int | None = None, run_folder=None, sims: int | None = None,
               cfg: Config | None = None, name: str = "agent", say=print) -> Agent:
    """An Agent playing `version` of the run in `run_folder` (default: cfg's RUN_FOLDER).

    version None: the version people play there (`playedVersion`: the run's best, the
    shipped agent in the shipped run) or, while that run has no trained version yet,
    the shipped agent (SHIPPED_VERSION of SHIPPED_RUN), said through `say`; 0: an
    untrained network; n: models/version000n.keras.  The network
    is built with the run's own config.json (else `cfg`); it searches `sims`
    simulations, by default that config's PLAY_SIMS (0 there: its MCTS_SIMS), with its
    other PLAY_* settings (`config.playSearch`: each unset one leaves the run's own
    search setting; PLAY_MOVE_SECONDS limits each move's time)."""
    cfg = cfg or DEFAULT
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
        raise ValueError(f"version must be 0 (an untrained network) or a saved version number, got {version!r}"
                         + (": -1 is a human, and loadPlayer makes an agent" if version == -1 else ""))
    folder = Path(run_folder) if run_folder is not None else cfg.path("RUN_FOLDER")
    shipped = storage.model_path(SHIPPED_RUN, SHIPPED_VERSION)
    if version is None and trainedVersion(folder) is None and shipped.exists():
        say(f"{folder} has no trained version yet: playing the shipped agent, version {SHIPPED_VERSION} of {SHIPPED_RUN}.")
        folder, version = SHIPPED_RUN, SHIPPED_VERSION
    elif version is None:
        version = playedVersion(folder)
    play_sims, search, move_seconds = runs.playSettings(folder, cfg)
    return runs.versionPlayer(name, Game(), cfg, folder, version, mcts_simulations=play_sims if sims is None else sims,
                              search=search, move_seconds=move_seconds)


SHIPPED_RUN = SHIPPED.path("RUN_FOLDER")
"""The run shipped with the project (its settings: config.SHIPPED)."""
SHIPPED_VERSION = 777
"""The version of SHIPPED_RUN people play.  The run trains on and promotes newer versions; one
replaces this only once measured ahead of it in whole games against the solver (docs/strength.md)."""


def playedVersion(folder, named: int | None = None) -> int:
    """The version of the run in `folder` that is played, measured (`make perfect`, `make
    movetime`) and exported: `named` where one is named, else in the shipped run the shipped
    agent (SHIPPED_VERSION: the run trains on, and a newer best replaces it only once
    measured ahead of it), in any other run its best version (checkpoint.json)."""
    if named is not None:
        return named
    if Path(folder).resolve() == SHIPPED_RUN.resolve():
        return SHIPPED_VERSION
    return runs.bestVersion(folder)


def trainedVersion(folder) -> int | None:
    """The best version of the run in `folder` if it is a trained one (2 or later:
    version 1 is the untrained network a run starts from), else None, also where the
    folder holds no run or only a new run's config.json.  A run that lost its checkpoint
    beside its saved versions is not a folder without a run: `runs.bestVersion` refuses
    it, naming them."""
    if not storage.checkpoint_path(folder).exists() and not storage.saved_versions(folder):
        return None
    best = runs.bestVersion(folder)
    return best if best > 1 else None


# -- a game between a human and the agent ----------------------------------------------------
class Match:
    """A human against an agent, without any display: every game a human plays is one,
    driven by the typed game (`typedGame`, also for a `User` in `funcs.playMatches`)
    or by the clickable board (`WidgetGame`).

    The human plays X (moves first) when `human_first`, else O.  The agent is a copy
    of `agent` (same network, its own tree and random draws); `sims` overrides its
    simulations per move.  The game starts after the moves in `start` ("4453").  The
    agent samples its move (tau=1) while fewer than `turns_until_tau0` moves are on
    the board, then plays its best.  `moved(action, pi, value, nn_value)`, if given,
    hears of each move just before it is played, as `Agent.act` returns it (a
    human's: pi one-hot, no values), so that a match can log and store the game."""

    def __init__(self, agent: Agent, human_first: bool = True, sims: int | None = None, start: str = "",
                 turns_until_tau0: int = 0, moved=None):
        self.agent = _copyAgent(agent, sims, int(agent.rng.integers(2**32)))
        self.human = 1 if human_first else -1
        self.state = GameState.fromMoves(start)
        self.moves = start
        self.turns_until_tau0 = turns_until_tau0
        self.moved = moved
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
        self._play(action, oneHot(action, ACTION_SIZE), None, None)

    def agentPlays(self) -> Thinking:
        """Let the agent search and play its move; returns its thinking."""
        if self.over or self.humanToMove:
            raise ValueError("it is not the agent's turn" if not self.over else "the game is over")
        tau = 1 if len(self.moves) < self.turns_until_tau0 else 0
        action, pi, value, nn_value = self.agent.act(self.state, tau)
        self.thinking = Thinking.of(self.agent, action, pi, value, nn_value)
        self._play(action, pi, value, nn_value)
        return self.thinking

    def resign(self) -> None:
        """The human gives the game up."""
        if not self.over:
            self.resigned = True

    def _play(self, action: int, pi, value: float | None, nn_value: float | None) -> None:
        if self.moved is not None:
            self.moved(action, pi, value, nn_value)
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
        """One line on where the game stands; at the end, who won and in how many moves."""
        moves = len(self.moves)
        if self.resigned:
            return f"You resigned after {moves} moves: the agent wins."
        if self.winner is not None:
            return f"You win in {moves} moves!" if self.winner == "human" else f"The agent wins in {moves} moves."
        if self.over:
            return f"Draw: the board is full after {moves} moves."
        return "Your move." if self.humanToMove else "The agent's move."


def _copyAgent(agent: Agent, sims: int | None, seed: int) -> Agent:
    copy = agent.forGame(seed)
    if sims is not None:
        copy.MCTSsimulations = checkedSimulations(sims)
    return copy


def playGame(agent: Agent, human_first: bool = True, input_fn=None, output_fn=print, show=None,
             sims: int | None = None, start: str = "") -> Match:
    """Play one game with typed columns (terminal or plain notebook) against `agent`
    (see `Match` for the other arguments, `typedGame` for the game); returns the Match."""
    return typedGame(Match(agent, human_first, sims, start), input_fn, output_fn, show)


def typedGame(match: Match, input_fn=None, output_fn=print, show=None) -> Match:
    """Play `match` to its end with typed columns: the one typed front end, of
    `playGame` and of a `User`'s games in `funcs.playMatches`; returns the match.

    A bad entry (not a number, no such column, a full column, an empty line) is
    explained and asked again; 'q' or the end of input resigns (`input_fn` None: the
    builtin `input` at the time of asking).  After each agent move its thinking is
    printed, the last line summing it up.  `show(state, last_action)` displays the
    board (default: `boards.boardText` through `output_fn`); the last board shown is
    the final position, its winning four marked, followed by the result line."""
    if show is None:
        def show(state, last_action):
            output_fn(boardText(state, last_action))
    output_fn(f"You play {sideText(match.human)}. Type a column 1-7, q to resign.")
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
    """A clickable board for Jupyter: one button per column, standing over the board's
    columns, the board, a status line, the agent's thinking, Resign and New game.

    A click draws the human's disc at once; the agent's reply is searched in a
    background thread while the status says it is thinking and every button is
    disabled, so the page keeps redrawing.  A click, Resign or New game during a think
    is ignored, never queued (the same holds while the agent opens a new game).
    `wait()` returns once the agent has replied (for code that drives the board).  A
    full column, or a click after the game is over, only shows a message; the end of
    a game is shown large, over the final board with the winning four marked."""

    CELL = 44
    """Pixels per column of the board, and the width of each column button."""

    def __init__(self, agent: Agent, human_first: bool = True, sims: int | None = None, start: str = ""):
        import ipywidgets as widgets

        self._agent, self._sims, self.human_first, self._start = agent, sims, human_first, start
        self._thinking = False
        self._thread: threading.Thread | None = None
        self.error: Exception | None = None
        self._refusals = 0
        flush = {"margin": "0px", "padding": "0px"}
        self.buttons = [widgets.Button(description=str(c + 1), layout=widgets.Layout(width=f"{self.CELL}px", **flush))
                        for c in range(COLUMNS)]
        for column, button in enumerate(self.buttons):
            button.on_click(lambda _, column=column: self.clickColumn(column))
        self.resign_button = widgets.Button(description="Resign")
        self.resign_button.on_click(lambda _: self.resign())
        self.new_button = widgets.Button(description="New game")
        self.new_button.on_click(lambda _: self.newGame())
        self.side = widgets.HTML()
        self.board = widgets.HTML(layout=widgets.Layout(**flush))
        self.status = widgets.HTML()
        self.thinking = widgets.HTML()
        self.widget = widgets.VBox([self.side, widgets.HBox(self.buttons, layout=widgets.Layout(**flush)), self.board,
                                    self.status, widgets.HBox([self.resign_button, self.new_button]), self.thinking])
        for widget, name in [(self.board, "board"), (self.status, "status"), (self.resign_button, "resign"),
                             (self.new_button, "new-game")] + [(button, "column") for button in self.buttons]:
            widget.add_class(f"connect4-{name}")  # names for the page's styles and the browser test
        self.newGame()

    @property
    def state(self) -> GameState:
        return self.match.state

    def newGame(self) -> None:
        """Start again (the agent opens at once when it plays first)."""
        if self._thinking:
            return
        self.match = Match(self._agent, self.human_first, self._sims, self._start)
        self.side.value = f"<b>You play {sideText(self.match.human)}.</b>"
        self.thinking.value = ""
        self._refusals = 0
        if self.match.over or self.match.humanToMove:
            self._refresh(self.match.outcome())
        else:
            self._agentReplies()

    def clickColumn(self, column: int) -> None:
        """The human clicked `column` (0..6)."""
        if self._thinking:
            return
        if self.match.over:
            self._say(f"The game is over ({self.match.outcome()}) Press New game to play again.")
            return
        action, problem = parseColumn(str(column + 1), self.match.state)
        if problem is not None:
            self._refusals += 1
            self._say(problem if self._refusals == 1 else f"{problem} (Refused {self._refusals} times in a row.)")
            return
        self._refusals = 0
        self.match.humanPlays(action)
        if self.match.over:
            self._refresh(self.match.outcome())
        else:
            self._agentReplies()

    def resign(self) -> None:
        if self._thinking:
            return
        if self.match.over:
            self._say(f"The game is already over ({self.match.outcome()})")
            return
        self.match.resign()
        self._refresh(self.match.outcome())

    def wait(self) -> None:
        """Return once the agent's reply (if one is being searched) is on the board;
        raise what the search raised, if it failed."""
        if self._thread is not None:
            self._thread.join()
        error, self.error = self.error, None
        if error is not None:
            raise error

    def _agentReplies(self) -> None:
        """Draw the position, say the agent is thinking, and search its reply in the
        background with every button disabled."""
        self._thinking = True
        for button in (*self.buttons, self.resign_button, self.new_button):
            button.disabled = True
        self._refresh("The agent is thinking\N{HORIZONTAL ELLIPSIS}")
        self._thread = threading.Thread(target=self._reply, name="agent reply", daemon=True)
        self._thread.start()

    def _reply(self) -> None:
        try:
            self.match.agentPlays()
            message = self.match.outcome()
        except Exception as error:  # shown on the board; wait() raises it again
            self.error = error
            message = f"The agent's search failed: {type(error).__name__}: {error}"
        self._refresh(message)
        self._thinking = False
        for button in (*self.buttons, self.resign_button, self.new_button):
            button.disabled = False

    def _say(self, message: str) -> None:
        self.status.value = html.escape(message)

    def _refresh(self, message: str) -> None:
        """Redraw the board and the thinking, and say `message` (large at the end)."""
        match = self.match
        self.board.value = boardSvg(match.state, match.last_action, self.CELL)
        if match.over:
            self.status.value = f"<h2>{html.escape(message)}</h2>"  # a heading: large, and kept by HTML sanitizers
        else:
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


def playInNotebook(agent: Agent, human_first: bool = True, sims: int | None = None, input_fn=None,
                   output_fn=print, start: str = ""):
    """The clickable board (`WidgetGame`, displayed) when widgets work in this kernel,
    else the typed game (`playGame` through `input_fn` / `output_fn`).  Returns the
    game (the WidgetGame, or the finished Match)."""
    if widgetsWork():
        from IPython.display import display

        game = WidgetGame(agent, human_first, sims, start)
        display(game)
        return game
    return playGame(agent, human_first, input_fn, output_fn, sims=sims, start=start,
                    show=_figureShow() if _inIPython() else None)


def _inIPython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _figureShow():
    """Show a board as a figure (red and yellow discs) in an IPython front end."""
    import matplotlib.pyplot as plt  # here: a 0.4 s import training never needs
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
        """Bar charts of N, the search's policy, Q, P and U per legal column (the played
        column in red)."""
        keys = ("N", "policy", "Q", "P", "U")
        fig = newFigure((12, 2.6))
        columns = [row["column"] for row in self.table]
        colours = [RED if row["action"] == self.action else BOARD_BLUE for row in self.table]
        for i, key in enumerate(keys):
            ax = fig.add_subplot(1, len(keys), i + 1)
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


def principalVariation(agent: Agent, played: int) -> list[int]:
    """Columns (1..7) of the last search's expected line: the move it chose (action
    `played`), then the most visited edges below it.  It starts with the move played
    because that need not be the root's most visited one: Gumbel's root search plays
    the winner of its sequential halving, and its finalists often tie on visits."""
    columns, root = [], agent.root
    edge = next((child for action, child in root.edges if action == played), None) if root is not None else None
    while edge is not None and edge.N > 0:
        columns.append(columnOf(edge.action) + 1)
        edge = max((child for _, child in edge.outNode.edges), key=lambda child: (child.N, -columnOf(child.action)),
                   default=None)  # ties: leftmost column
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
        action, pi, value, nn_value = player.act(state, 0)
    finally:
        player.logger.removeHandler(handler)
        handler.close()
    return Inspection(action, thinkingTable(player, pi), value, nn_value, player.MCTSsimulations, moves=moves,
                      state=state, principal_variation=principalVariation(player, action),
                      tree_size=len(player.mcts.tree),
                      log=buffer.getvalue())


# -- the terminal ------------------------------------------------------------------------------
def main(argv=None, input_fn=None, output_fn=print) -> Match:
    """``python -m play``: a game in the terminal against a saved version of the run."""
    return playCommand(cli.PLAYING.parse_args(argv), input_fn, output_fn)


def playCommand(args: argparse.Namespace, input_fn=None, output_fn=print) -> Match:
    """The game the command line's arguments (`cli.PLAYING`'s) ask for; a version that
    cannot be played ends the command with the project's message, Ctrl-C with a line
    saying the game was left (exit status 130), not a traceback."""
    try:
        agent = loadPlayer(args.version, args.run_folder, args.sims, say=output_fn)
    except (ValueError, storage.RunFileError) as exc:
        cli.PLAYING.error(str(exc))
    output_fn(f"Playing version {args.version if args.version is not None else 'best'} with "
              f"{agent.MCTSsimulations} simulations per move.")
    colour = output_fn is print and sys.stdout.isatty()
    try:
        return playGame(agent, human_first=not args.second, input_fn=input_fn, output_fn=output_fn,
                        show=lambda state, last: output_fn(boardText(state, last, colour)))
    except KeyboardInterrupt:
        cli.PLAYING.exit(130, "\nInterrupted: the game was left unfinished.\n")


if __name__ == "__main__":
    playCommand(ARGUMENTS)
