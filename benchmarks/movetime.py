"""How long the agent people play takes to choose a move, one game at a time.

Run: .venv/bin/python benchmarks/movetime.py [--run-folder F] [--version N]
                                             [--sims S [S ...]] [--positions P] [--seed K]
                                             [--set NAME=VALUE ...] [--move-seconds T]

The played agent (the run's PLAY_ROOT_SEARCH and other play-time search settings,
`--set` to change them) searches each of P benchmark positions (`evaluation.
benchmarkPositions`: positions where a mistake is possible, from games half random and
half perfect; the empty board first) from a fresh tree with S simulations, as a move
against a person does: one game, one network call per leaf.  Printed per S: the
median, 90th percentile and slowest move in seconds, and the simulations per second.
The issue's budget is 1 second per move at the simulations people are played with
(PLAY_SIMS); run it on a quiet machine, its figures are wall-clock times.  With
--move-seconds T each move also stops after T seconds (PLAY_MOVE_SECONDS, the limit a
person's opponent can keep on a slower host), and the simulations each move made are
printed too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import keras  # noqa: E402
import numpy as np  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
import play  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import SEARCH_SETTINGS, SHIPPED, ConfigError, playSearch, searchChanges, searchLabel  # noqa: E402
from game import Game, GameState  # noqa: E402


def moveSeconds(agent, states: list[GameState], seed: int, searched: list[int] | None = None) -> list[float]:
    """Seconds `agent` takes to choose its move in each of `states`, each searched from
    a fresh tree (no noise, the search's best move), in order.  `searched`, if given,
    gains each move's simulations (fewer than the agent's where its moveSeconds ended
    the move)."""
    seconds = []
    for i, state in enumerate(states):
        player = agent.forGame(seed + i)
        start = time.perf_counter()
        player.act(state, 0)
        seconds.append(time.perf_counter() - start)
        if searched is not None:
            searched.append(sum(edge.N for _, edge in player.root.edges))
    return seconds


def summarise(sims: int, seconds: list[float], searched: list[int] | None = None) -> dict:
    """Median, 90th percentile and slowest of `seconds`, and simulations per second at
    the median; with `searched`, the fewest, median and most simulations a move made."""
    median = float(np.median(seconds))
    row = {"sims": sims, "moves": len(seconds), "median_s": median,
           "p90_s": float(np.percentile(seconds, 90)), "max_s": float(max(seconds)),
           "sims_per_s": (float(np.median(searched)) if searched else sims) / median}
    if searched:
        row.update(searched_min=min(searched), searched_median=float(np.median(searched)), searched_max=max(searched))
    return row


def formatRow(row: dict) -> str:
    searched = (f"; made {row['searched_min']:,}-{row['searched_max']:,} simulations (median "
                f"{row['searched_median']:,.0f})" if "searched_min" in row else "")
    return (f"{row['sims']:>6} sims: median {row['median_s']:.3f} s, 90% {row['p90_s']:.3f} s, "
            f"slowest {row['max_s']:.3f} s over {row['moves']} moves ({row['sims_per_s']:,.0f} simulations/s)"
            + searched)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--version", type=cli.version, default=None, help=cli.VERSION_HELP)
    parser.add_argument("--sims", type=cli.positive(int), nargs="+", default=None,
                        help="simulations per move (default: the run's PLAY_SIMS, else MCTS_SIMS)")
    parser.add_argument("--positions", type=cli.positive(int), default=24, help="positions timed (default 24)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the positions and the agent's ties")
    parser.add_argument("--set", action="append", default=[], type=cli.setting, metavar="NAME=VALUE",
                        help=f"a play-time search setting (one of {', '.join(SEARCH_SETTINGS)}; "
                             "default: the run's PLAY_ROOT_SEARCH)")
    parser.add_argument("--move-seconds", type=cli.positive(float), default=None, metavar="T",
                        help="each move also stops after T seconds (PLAY_MOVE_SECONDS; default: no limit)")
    args = parser.parse_args(argv)
    try:
        cfg = runs.runConfig(args.run_folder)
        version = play.playedVersion(args.run_folder, args.version)
        search = searchChanges(cfg, {**playSearch(cfg), **dict(args.set)})
        sims_list = args.sims or [cfg.PLAY_SIMS or cfg.MCTS_SIMS]
        keras.utils.set_random_seed(cfg.SEED)
        agent = runs.versionPlayer("agent", Game(), cfg, args.run_folder, version, search=search,
                                   move_seconds=args.move_seconds or 0.0)
        if args.move_seconds and agent.config.ROOT_SEARCH != "puct":
            raise ConfigError("--move-seconds needs the PUCT root search (--set ROOT_SEARCH=puct)")
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    agent.logger = None
    states = [GameState.initial()]
    if args.positions > 1:
        states += evaluation.benchmarkPositions(args.positions - 1, args.seed)
    limit = f", at most {args.move_seconds} s a move" if args.move_seconds else ""
    print(f"Move time: version {version} of {args.run_folder}{searchLabel(search)}{limit}, {len(states)} positions, "
          "one game at a time")
    moveSeconds(agent, states[:2], args.seed)  # the network's first calls compile and warm its caches
    rows = []
    for sims in sims_list:
        agent.MCTSsimulations = sims
        searched = [] if args.move_seconds else None
        rows.append(summarise(sims, moveSeconds(agent, states, args.seed, searched), searched))
        print(formatRow(rows[-1]), flush=True)
    return rows


if __name__ == "__main__":
    main()
