"""Self-play on Ray workers: games per second with WORKERS = 0, 1 and 2 on this machine,
the rate of one worker, the learner's retraining time, and what an iteration would
take with more worker machines.

Run: make bench-workers   (or: .venv/bin/python benchmarks/workers.py [--episodes N])

For each WORKERS setting, one iteration of a new run with the default configuration
(the evaluation against perfect play off: it is the learner's work, after the first
iteration and after each promotion), the same seeds each time, so the same games: self-play and tournament
games per second, and the learner's retraining time.  The workers are started and
have built their networks before the clock starts (`Pool.evaluate`); fetching a new
version's weights is timed, as it happens in every iteration.  Then the time of one
game played alone on one worker (a game cannot be split: the floor of self-play with
as many workers as games).  Last, the projection for 8 and 64 worker machines: each
machine one worker at the measured one-worker rate, self-play and tournament shared
among them, retraining on the learner.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ray  # noqa: E402

import funcs  # noqa: E402
import runs  # noqa: E402
import workers  # noqa: E402
from agent import Agent  # noqa: E402
from config import DEFAULT, Config  # noqa: E402
from game import Game, GameState  # noqa: E402
from memory import Memory  # noqa: E402
from model import Residual_CNN  # noqa: E402

QUIET = logging.getLogger("benchmark.quiet")
QUIET.disabled = True
ENV = Game()


def iteration(cfg: Config, pool: workers.Pool | None) -> dict:
    """The metrics row of the first iteration of a new run of `cfg`, its games played
    by `pool` (None: in this process), everything warmed up first."""
    with tempfile.TemporaryDirectory() as folder:
        run = runs.openRun(cfg.replace(RUN_FOLDER=folder), say=lambda _: None)
        best = Agent.fromConfig("best_player", cfg, run.best_NN)
        if pool is None:
            best.evaluateStates([GameState.initial()])
        else:
            pool.evaluate(best, [GameState.initial()])
        return funcs.trainIteration(run, progress=False, pool=pool)


def oneGameSeconds(cfg: Config, pool: workers.Pool) -> float:
    """Seconds of one self-play game played alone on one of the pool's workers."""
    network = Residual_CNN.fromConfig(cfg, ENV.input_shape, ENV.action_size)
    player = Agent.fromConfig("best_player", cfg, network)
    pool.evaluate(player, [GameState.initial()])
    start = time.perf_counter()
    funcs.playMatches(player, player, 1, QUIET, cfg.TURNS_UNTIL_TAU0, Memory(cfg.MEMORY_SIZE), pool=pool)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=DEFAULT.EPISODES, help="self-play games (default: config)")
    args = parser.parse_args()
    cfg = DEFAULT.replace(EPISODES=args.episodes, EVAL_POSITIONS=0, LOGGERS={name: False for name in DEFAULT.LOGGERS})
    print(f"configuration: default ({cfg.EPISODES} self-play games, {cfg.EVAL_EPISODES} tournament games, "
          f"{cfg.MCTS_SIMS} simulations, {len(cfg.HIDDEN_CNN_LAYERS)} layers of "
          f"{cfg.HIDDEN_CNN_LAYERS[0]['filters']} filters); this machine: {os.cpu_count()} CPUs", flush=True)
    print("WORKERS  self-play games/s  per worker  tournament games/s  retraining s  memory", flush=True)
    rows = {}

    def measured(n: int, pool: workers.Pool | None) -> None:
        rows[n] = row = iteration(cfg, pool)
        seconds, rate = row["seconds"], cfg.EPISODES / row["seconds"]["selfplay"]
        print(f"{n:7d}  {rate:17.3f}  {rate / max(n, 1):10.3f}  {cfg.EVAL_EPISODES / seconds['tournament']:18.3f}"
              f"  {seconds['retrain']:12.1f}  {row['memory_size']:6d}", flush=True)

    measured(0, None)
    workers.startRay()
    try:
        for n in (1, 2):
            with workers.Pool(n, matchEpisodes=funcs.matchEpisodes, playEpisodes=funcs.playEpisodes) as pool:
                measured(n, pool)
                if n == 1:
                    alone = oneGameSeconds(cfg, pool)
    finally:
        ray.shutdown()
    same = len({(row["memory_size"], row["selfplay_positions"]) for row in rows.values()}) == 1
    print(f"the same games in every setting (memory size and positions evaluated): {same}")
    print(f"one self-play game alone on one worker: {alone:.1f} s")
    selfplay, tournament = (rows[1]["seconds"][phase] for phase in ("selfplay", "tournament"))
    retrain = rows[0]["seconds"]["retrain"]
    print("projection, one worker per machine at the WORKERS = 1 rates, retraining on the learner:")
    for machines in (1, 8, 64):
        games = max(selfplay / machines, alone) + max(tournament / machines, alone)
        total = games + retrain
        print(f"  {machines:2d} machines: games {games:6.1f} s + retraining {retrain:5.1f} s = {total:6.1f} s per "
              f"iteration (learner {retrain / total:.0%})")


if __name__ == "__main__":
    main()
