"""What the tutorial's game logs cost self-play: logged moves written the tutorial's way
(a record for each line, through Python's rotating file handler) and the project's (a
move as one record of many lines, `gamelog.logMove`, through
`loggers.SizedRotatingFileHandler`, which counts the bytes it writes instead of asking
the file before every record, and `loggers.LineFormatter`, which gives each line its
time and level): the same lines in the file.

Run: .venv/bin/python benchmarks/gamelogs.py [--moves 3000] [--rounds 3]

Each round logs the same moves of random games (`gamelog.moveLines`: the board, the
search's policy, the values, the column; eleven lines) each way in turn, with the run's
line format and the strong preset's file size, and reports the microseconds a move
costs and the ratio.  A strong-preset iteration logs some 3,500
self-play moves and 600 tournament moves.  The files are written to a temporary
folder and removed.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import gamelog  # noqa: E402
import loggers  # noqa: E402
from config import STRONG  # noqa: E402
from game import ACTION_SIZE, Game, GameState  # noqa: E402


def tutorialWay(logger: logging.Logger, *move) -> None:
    """A move logged a record a line."""
    for line in gamelog.moveLines(*move):
        logger.info(line)


WAYS = {"tutorial": (tutorialWay, logging.handlers.RotatingFileHandler, logging.Formatter),
        "project": (gamelog.logMove, loggers.SizedRotatingFileHandler, loggers.LineFormatter)}
"""How a move is logged, the handler and the formatter, by name."""


def randomMoves(count: int, seed: int = 0) -> list[tuple[GameState, int, np.ndarray]]:
    """`count` positions of uniformly random games, each with the move played there
    and a search policy over the 42 actions spread on the legal ones."""
    rng = np.random.default_rng(seed)
    moves = []
    while len(moves) < count:
        state, done = Game().gameState, False
        while not done and len(moves) < count:
            action = int(rng.choice(state.allowedActions))
            pi = np.zeros(ACTION_SIZE, np.float32)
            pi[state.allowedActions] = rng.dirichlet(np.ones(len(state.allowedActions)))
            moves.append((state, action, pi))
            state, _, done = state.takeAction(action)
    return moves


def secondsLogging(way: str, path: Path, moves) -> float:
    """Seconds to log `moves` the way named `way` (a key of WAYS) to a fresh file at
    `path`."""
    logMove, handlerClass, formatterClass = WAYS[way]
    logger = logging.getLogger(f"benchmark.gamelogs.{way}")
    logger.propagate, logger.level = False, logging.INFO
    handler = handlerClass(path, maxBytes=loggers.fileCap(STRONG), backupCount=STRONG.LOG_BACKUP_COUNT,
                           encoding="utf-8")
    handler.setFormatter(formatterClass(loggers.LINE_FORMAT))
    logger.addHandler(handler)
    start = time.perf_counter()
    for state, action, pi in moves:
        logMove(logger, 1, "best_player", state, action, pi, 0.25, 0.125)
    seconds = time.perf_counter() - start
    logger.removeHandler(handler)
    handler.close()
    return seconds


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="moves logged per handler and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the handlers alternating")
    args = parser.parse_args(argv)
    moves = randomMoves(args.moves)
    seconds = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for way in WAYS:
                seconds[way].append(secondsLogging(way, Path(folder) / f"{way}{round_}.log", moves))
    perMove = {name: [s / args.moves * 1e6 for s in values] for name, values in seconds.items()}
    for way, values in perMove.items():
        print(f"{way:8s} way: " + ", ".join(f"{v:.0f}" for v in values) + " us per logged move")
    ratio = min(perMove["tutorial"]) / min(perMove["project"])
    print(f"best rounds: the project's way {ratio:.2f}x as fast")
    return {"moves": args.moves, "us_per_move": perMove, "ratio": ratio}


if __name__ == "__main__":
    main()
