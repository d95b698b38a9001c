"""The arguments of the terminal commands: ``python -m funcs`` (training) and
``python -m play`` (a game against a saved version).

The parsers live here, in a module that imports nothing heavy (argparse and the
config), so that each command answers --help, or refuses a wrong argument, before
it imports TensorFlow (seconds): `funcs` and `play`, run as commands, parse their
arguments before their other imports.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from config import PRESETS


VERSION_HELP = "saved version (default: play.playedVersion, the shipped agent in the shipped run, else the run's best)"
"""--version of the commands that measure or export the version people play."""


def positive(kind):
    """An argparse type: a number of `kind` (int, float) above 0."""
    def parse(text: str):
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the kind in "invalid int value: 'x'"
    return parse


def version(text: str) -> int:
    """An argparse type: a saved version (1 or more) or 0, an untrained network; not -1,
    a human, whom no measurement plays."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a saved version, or 0 (an untrained network), got {text}")
    return value


def runFolder(text: str) -> Path:
    """An argparse type: an existing folder, so that a mistyped --run-folder is named
    at once, not read as a folder that holds no run."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a run folder" if path.exists()
                                         else f"no folder {text}")
    return path


def outputPath(folder: bool = False, suffixes: tuple[str, ...] = ()):
    """An argparse type: a path a command writes once its work is done, a file (with
    `folder`, a folder), refused when parsed if it could not be written there: a folder
    in a file's place or a file in a folder's, a path under a file, or a file name that
    ends with none of `suffixes` (where given; any case): a typo then costs no games
    or fitting."""
    def parse(text: str) -> Path:
        path = Path(text)
        if path.exists() and path.is_dir() != folder:
            raise argparse.ArgumentTypeError(f"{text} is {'a file' if folder else 'a folder'}: give the path of a "
                                             f"{'folder' if folder else 'file'}")
        above = next((parent for parent in path.parents if parent.exists()), Path("."))
        if not above.is_dir():
            raise argparse.ArgumentTypeError(f"{above} is a file: {text} cannot be written under it")
        if suffixes and path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(f"{text} must end with one of {', '.join(suffixes)}")
        return path
    parse.__name__ = "path"
    return parse


def setting(text: str) -> tuple[str, object]:
    """An argparse type: NAME=VALUE as (NAME, VALUE), VALUE read as JSON where it is
    JSON (64, 0.5, true, [[1, 2]]) and kept as a string otherwise (wdl)."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


TRAINING = argparse.ArgumentParser(prog="python -m funcs",
                                   description="Train the Connect Four agent (the notebook's training cell).")
TRAINING.add_argument("--iterations", type=positive(int), default=None,
                      help="iterations to run (default: until Ctrl-C)")
TRAINING.add_argument("--hours", type=positive(float), default=None,
                      help="stop once the run's training time (its iterations' phase times) reaches this")
TRAINING.add_argument("--preset", choices=sorted(PRESETS), default="default",
                      help="configuration of a new run (a resumed run keeps its own config.json)")
TRAINING.add_argument("--run-folder", default=None, help="run folder (default: the preset's RUN_FOLDER)")
TRAINING.add_argument("--no-progress", action="store_true", help="no progress bars (for a log file)")
TRAINING.add_argument("--workers", type=int, default=None,
                      help="Ray workers that play the games (default: the preset's WORKERS; 0: this process)")
TRAINING.add_argument("--ray-address", default=None,
                      help="the Ray cluster the workers run on, host:port (default: a local Ray)")

TRAINING.add_argument("--branch-from", default=None, metavar="RUN_FOLDER",
                      help="first start --run-folder (which must hold no run) as a branch of this run, where its "
                           "checkpoint says, with the --set changes (branches.branchRun)")
TRAINING.add_argument("--set", action="append", default=[], type=setting, metavar="NAME=VALUE",
                      help="a config value of the branch (with --branch-from) or of a new run (with --preset), "
                           "VALUE as JSON or as a plain string (repeatable; e.g. --set VALUE_HEAD=wdl --set "
                           "MCTS_SIMS=64)")
TRAINING.add_argument("--branch-network", default=None, metavar="KERAS_FILE",
                      help="with --branch-from: the branch's best and current network start as this one, a "
                           "network of the branch's config (e.g. a smaller one: benchmarks/smallnet.py "
                           "--save-student, with --set HIDDEN_CNN_LAYERS=...)")

PLAYING = argparse.ArgumentParser(prog="python -m play",
                                  description="Play Connect Four against a saved version of the run.")
PLAYING.add_argument("--version", type=int, default=None,
                     help="version to play (default: the run's best; 0: an untrained network)")
PLAYING.add_argument("--run-folder", default=None, help="run folder (default: the config's RUN_FOLDER)")
PLAYING.add_argument("--sims", type=positive(int), default=None,
                     help="MCTS simulations per agent move (default: the run's PLAY_SIMS; 0 there: its MCTS_SIMS)")
PLAYING.add_argument("--second", action="store_true", help="let the agent move first")
