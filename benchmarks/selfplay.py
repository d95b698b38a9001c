"""Self-play throughput against the network's own limit, and one full default iteration.

Run: make bench   (or: .venv/bin/python benchmarks/selfplay.py [--episodes N])

Prints, from one run on the default configuration:
1. the network alone: positions per second at fixed batch sizes, and on exactly the
   calls self-play made (same batch sizes, in order; they shrink as games end): the
   limit;
2. self-play: positions evaluated per second and games per second;
3. the ratio of 2 to that limit (and to the batch-30 rate);
4. the tutorial's design: seconds per position of a single-position Keras
   `model.predict`, and the speed-up of 2 over it;
5. the wall time of one full default iteration (self-play, retraining, tournament),
   split by phase.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import funcs  # noqa: E402
import runs
from config import DEFAULT  # noqa: E402
from game import Game  # noqa: E402
from model import Residual_CNN  # noqa: E402


def positionsPerSecond(network, batch: int, seconds: float = 3.0) -> float:
    """Network-alone throughput at one batch size (compiled call, random inputs)."""
    x = np.random.default_rng(0).integers(0, 2, size=(batch, *network.input_dim)).astype(np.float32)
    network.predict(x)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        network.predict(x)
        calls += 1
    return batch * calls / (time.perf_counter() - start)


def secondsForBatches(network, batches: list[int]) -> float:
    """Network-alone time for a sequence of calls of the given batch sizes."""
    inputs = {b: np.random.default_rng(b).integers(0, 2, size=(b, *network.input_dim)).astype(np.float32)
              for b in set(batches)}
    for x in inputs.values():
        network.predict(x)
    start = time.perf_counter()
    for b in batches:
        network.predict(inputs[b])
    return time.perf_counter() - start


def recordBatchSizes(network) -> list[int]:
    """Record the batch size of every later `network.predict` call (benchmark only)."""
    sizes: list[int] = []
    predict = network.predict

    def recording(x):
        sizes.append(len(x))
        return predict(x)
    network.predict = recording
    return sizes


def selfplayBatches(sizes: list[int], positions: int) -> list[int]:
    """The first calls of an iteration, which are self-play's, up to its positions."""
    total = 0
    for count, size in enumerate(sizes, start=1):
        total += size
        if total == positions:
            return sizes[:count]
    raise ValueError("the recorded calls do not add up to the self-play positions")


def tutorialSecondsPerPosition(network, calls: int = 30) -> float:
    """The tutorial's way: Keras `model.predict` on one position at a time."""
    x = np.zeros((1, *network.input_dim), dtype=np.float32)
    network.model.predict(x, verbose=0)
    start = time.perf_counter()
    for _ in range(calls):
        network.model.predict(x, verbose=0)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=DEFAULT.EPISODES, help="self-play games (default: config)")
    args = parser.parse_args()
    env = Game()
    with tempfile.TemporaryDirectory() as folder:
        cfg = DEFAULT.replace(RUN_FOLDER=folder, EPISODES=args.episodes,
                              LOGGERS={name: False for name in DEFAULT.LOGGERS})
        probe = Residual_CNN.fromConfig(cfg, env.input_shape, env.action_size)
        selfplay_batch = cfg.EPISODES
        tournament_batch = max(1, cfg.EVAL_EPISODES // 2)
        limit = {b: positionsPerSecond(probe, b) for b in (1, tournament_batch, selfplay_batch)}
        tutorial = tutorialSecondsPerPosition(probe)

        run = runs.openRun(cfg, say=lambda _: None)
        sizes = recordBatchSizes(run.best_NN)
        start = time.perf_counter()
        row = funcs.trainIteration(run, progress=False)
        total = time.perf_counter() - start
        selfplay_positions = row["selfplay_positions"]
        batches = selfplayBatches(sizes, selfplay_positions)
        mix_seconds = secondsForBatches(probe, batches)
        games = cfg.EPISODES

    selfplay_seconds = row["seconds"]["selfplay"]
    rate = selfplay_positions / selfplay_seconds
    print(f"configuration: default ({cfg.EPISODES} self-play games, {cfg.MCTS_SIMS} simulations, "
          f"{len(cfg.HIDDEN_CNN_LAYERS)} layers of {cfg.HIDDEN_CNN_LAYERS[0]['filters']} filters)")
    mix_rate = selfplay_positions / mix_seconds
    print("1. network alone (compiled call):")
    for batch, value in limit.items():
        print(f"   batch {batch:3d}: {value:8.0f} positions/s")
    print(f"   self-play's own calls ({len(batches)} calls, mean batch {selfplay_positions / len(batches):.1f}, "
          f"shrinking as games end): {mix_rate:8.0f} positions/s = the limit")
    print(f"2. self-play: {rate:8.0f} positions/s, {games / selfplay_seconds:.3f} games/s "
          f"({selfplay_positions} positions, {games} games in {selfplay_seconds:.1f} s)")
    print(f"3. self-play / network alone on self-play's calls: {rate / mix_rate:.2f} "
          f"(/ network alone at batch {selfplay_batch}: {rate / limit[selfplay_batch]:.2f})")
    print(f"4. tutorial design (model.predict, one position): {tutorial * 1000:.1f} ms/position = "
          f"{1 / tutorial:.1f} positions/s; speed-up of self-play: {rate * tutorial:.0f}x")
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in row["seconds"].items())
    print(f"5. one full default iteration: {total:.1f} s ({phases}); trained={row['trained']}, "
          f"tournament {row['scores']}")


if __name__ == "__main__":
    main()
