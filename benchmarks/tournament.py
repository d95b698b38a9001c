"""How many different games a tournament plays: two networks of a run, as its gate plays them.

Run: .venv/bin/python benchmarks/tournament.py [--run-folder F] [--best V] [--challenger current | V]
                                               [--openings 0 4 8] [--matches 3]

The gate (`funcs.playMatches`, the run's EVAL_EPISODES games at its MCTS_SIMS, the first
EVAL_TURNS_UNTIL_TAU0 moves sampled) between the run's best version (or --best) and its current
network (or another saved version), played --matches times from the match seeds the best
player's generator draws, for each EVAL_RANDOM_OPENING_MOVES value of --openings (0: the
tutorial's tournament).  The challenger is the network named (a run that averages weights
gates its average instead).  Printed per value: each match's scores and how many of its games
were different (their moves read back from the tourney log, `replay.gamesFromLog`), and
the most repeated game.  Between two fixed networks sampling a few moves from visit counts
that are already sharp replays the same games; random openings (paired, seats swapped)
make each game a new one.  Nothing of the run is written.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import funcs  # noqa: E402
import loggers  # noqa: E402
import replay  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from agent import Agent  # noqa: E402
from config import STRONG, ConfigError  # noqa: E402


def network(folder: Path, cfg, version: str):
    """The run's network `version`: "current" (models/current.keras) or a saved version number."""
    net = runs.networkFor(cfg, folder)
    path = storage.current_model_path(folder) if version == "current" else storage.model_path(folder, int(version))
    net.loadWeights(path)
    return net


def loggedMatch(best: Agent, challenger: Agent, episodes: int, turns_until_tau0: int) -> tuple[dict, list[str]]:
    """One match as the gate plays it: (its scores, each game's moves as columns), the moves read back from
    the match's own log."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tourney.log"
        with loggers.loggingTo(path, "benchmarks.tournament") as logger:
            scores, _, _, _ = funcs.playMatches(best, challenger, episodes, logger, turns_until_tau0)
        return scores, [game.moves for game in replay.gamesFromLog(path)]


def measure(folder: Path, best_version: int | None, challenger_version: str, openings: list[int],
            matches: int) -> dict:
    """{EVAL_RANDOM_OPENING_MOVES: [per match: {"scores", "distinct", "games" (each game's moves),
    "most_repeated" (its moves, times played)}]}, printed."""
    cfg = runs.runConfig(folder)
    best_version = runs.bestVersion(folder) if best_version is None else best_version
    best_net, challenger_net = network(folder, cfg, str(best_version)), network(folder, cfg, challenger_version)
    print(f"{folder}: version {best_version} (best_player) against {challenger_version} (current_player), "
          f"{cfg.EVAL_EPISODES} games at {cfg.MCTS_SIMS} simulations, {cfg.EVAL_TURNS_UNTIL_TAU0} moves sampled")
    results = {}
    for most in openings:
        played = cfg.replace(EVAL_RANDOM_OPENING_MOVES=most)
        best = Agent.fromConfig("best_player", played, best_net, seed=played.SEED)
        challenger = Agent.fromConfig("current_player", played, challenger_net, seed=played.SEED + 1)
        results[most] = []
        for match in range(matches):
            scores, games = loggedMatch(best, challenger, played.EVAL_EPISODES, played.EVAL_TURNS_UNTIL_TAU0)
            repeated, times = collections.Counter(games).most_common(1)[0]
            results[most].append({"scores": scores, "distinct": len(set(games)), "games": games,
                                  "most_repeated": (repeated, times)})
            print(f"openings of 0..{most:<2} match {match + 1}: {scores}, {len(set(games))} different games of "
                  f"{len(games)}; played {times} times: {repeated}")
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="How many different games a run's tournament plays.")
    parser.add_argument("--run-folder", type=Path, default=STRONG.path("RUN_FOLDER"))
    parser.add_argument("--best", type=int, default=None, help="the best player's version (default: the run's best)")
    parser.add_argument("--challenger", default="current", help="'current' (default) or a saved version")
    parser.add_argument("--openings", type=int, nargs="+", default=[0, 4, 8],
                        help="EVAL_RANDOM_OPENING_MOVES values to play (0: the tutorial's tournament)")
    parser.add_argument("--matches", type=int, default=3, help="matches per value")
    args = parser.parse_args(argv)
    if args.challenger != "current" and not args.challenger.isdigit():
        parser.error(f"--challenger must be 'current' or a saved version number, got {args.challenger!r}")
    if args.matches < 1:
        parser.error(f"--matches must be at least 1, got {args.matches}")
    for version in [v for v in (args.best, args.challenger) if v not in (None, "current")]:
        if not storage.model_path(args.run_folder, int(version)).exists():
            parser.error(f"{args.run_folder} has no saved version {version}; saved versions: "
                         f"{runs.savedVersionsList(args.run_folder)}")
    try:
        return measure(args.run_folder, args.best, args.challenger, args.openings, args.matches)
    except (ConfigError, storage.RunFileError) as error:
        parser.exit(1, f"{error}\n")


if __name__ == "__main__":
    main()
