"""The lines a played game writes to the main and tourney logs, and reading them back.

For every game of a match `funcs.Episode` writes its start (who plays X and who O),
each move (the board, the search's policy over the columns, the search's and the
network's values, the column played), a resignation, and the result; `replay.gamesFromLog`
reads the games back from those lines.  Each kind of line is a `LineFormat` defined
here once: it writes the line from its fields and recognises it again, so the writer
and the reader cannot drift apart.

Points of view: both values of a move are for the player to move in the logged
position; players are named as in the match, with their pieces (X moves first).
"""

from __future__ import annotations

import logging
import re
import string

from game import BOARD_END, COLUMNS, GameState, columnOf, playerPiece


class LineFormat:
    """One kind of log line: `template` in str.format syntax, and for each field the
    regular expression its text matches."""

    def __init__(self, template: str, **fields: str):
        self.template = template
        parts = []
        for literal, name, _, _ in string.Formatter().parse(template):
            parts.append(re.escape(literal))
            if name is not None:
                parts.append(f"(?P<{name}>{fields[name]})")
        self.pattern = re.compile("".join(parts))

    def line(self, **values) -> str:
        return self.template.format(**values)

    def parse(self, message: str) -> dict[str, str] | None:
        """The fields of `message` (as text) when it is a line of this kind, else None."""
        match = self.pattern.fullmatch(message)
        return match.groupdict() if match else None


_GAME, _NAME, _NUMBER = r"\d+", ".*", r"[-+]?\d+\.\d+"
_PIECE = "[" + "".join(sorted(set(GameState.pieces.values()) - {"-"})) + "]"
START = LineFormat("EPISODE {game}: {first} (X) vs {second} (O)", game=_GAME, first=_NAME, second=_NAME)
RESULT = LineFormat("EPISODE {game}: {winner} wins after {moves} moves", game=_GAME, winner=_NAME, moves=r"\d+")
TO_MOVE = LineFormat("game {game}: {player} ({piece}) to move; {policy} by column: {shares}",
                     game=_GAME, player=_NAME, piece=_PIECE, policy="search policy|visit shares", shares=".*")
"""A move's first line.  `policy` is "search policy" (the training target: visit
shares with the PUCT root search, the improved policy with Gumbel's); logs written
before the label changed say "visit shares", and are read as well."""
VALUES = LineFormat("game {game}: MCTS perceived value for {piece}: {search:+.3f}; NN perceived value: {network:+.3f}",
                    game=_GAME, piece=_PIECE, search=_NUMBER, network=_NUMBER)
ACTION = LineFormat("game {game}: action: column {column}", game=_GAME, column=f"[1-{COLUMNS}]")
RESIGNS = LineFormat("game {game}: {player} resigns", game=_GAME, player=_NAME)
_CELL = "[" + re.escape("".join(GameState.pieces.values())) + "]"
BOARD_ROW = re.compile(f"{_CELL}( {_CELL}){{{COLUMNS - 1}}}")
"""A row of the board as `GameState.render` writes it (before each move)."""
DRAW = "nobody (draw)"
"""The winner named in the RESULT line of a drawn game."""


def columnShares(state: GameState, action_values) -> list[float | None]:
    """Per column (left to right), the value `action_values` (over the 42 actions)
    gives the column's move, None for a full column."""
    shares = []
    for column in range(COLUMNS):
        action = state.actionForColumn(column)
        shares.append(None if action is None else float(action_values[action]))
    return shares


def sharesText(shares) -> str:
    """Per-column shares as one field, e.g. '1:0.10 2:-- 3:0.90' (-- a full column)."""
    return " ".join(f"{c + 1}:{'--' if s is None else f'{s:.2f}'}" for c, s in enumerate(shares))


def parseShares(text: str) -> list[float | None]:
    """The shares `sharesText` wrote."""
    return [None if share == "--" else float(share) for share in (item.split(":")[1] for item in text.split())]


def logStart(logger: logging.Logger, game: int, names: dict) -> None:
    """Game `game` (1-based) of a match starts; `names` by playerTurn (1: X)."""
    logger.info("====================")
    logger.info(START.line(game=game, first=names[1], second=names[-1]))


def moveLines(game: int, player: str, state: GameState, action: int, pi, search_value: float | None,
              network_value: float | None) -> list[str]:
    """The lines of a move of game `game`: the board before it, the search's policy
    `pi` (over the 42 actions), the values (agents only; for the player to move) and
    the column."""
    piece = playerPiece(state.playerTurn)
    lines = state.text().split("\n") + [BOARD_END, TO_MOVE.line(game=game, player=player, piece=piece,
                                                                 policy="search policy",
                                                                 shares=sharesText(columnShares(state, pi)))]
    if search_value is not None:
        lines.append(VALUES.line(game=game, piece=piece, search=search_value, network=network_value))
    lines.append(ACTION.line(game=game, column=columnOf(action) + 1))
    return lines


def logMove(logger: logging.Logger, game: int, player: str, state: GameState, action: int, pi,
            search_value: float | None, network_value: float | None) -> None:
    """Log a move (`moveLines`) as one record of many lines, which the run's logs write
    as lines of their own (`loggers.LineFormatter`): a strong-preset iteration logs
    some 4,100 moves, and a record costs about what a line of it would."""
    logger.info("\n".join(moveLines(game, player, state, action, pi, search_value, network_value)))


def logResign(logger: logging.Logger, game: int, player: str) -> None:
    logger.info(RESIGNS.line(game=game, player=player))


def logResult(logger: logging.Logger, game: int, winner: str | None, moves: int) -> None:
    """Game `game` ended after `moves` moves; `winner` None: a draw."""
    logger.info(RESULT.line(game=game, winner=winner or DRAW, moves=moves))
