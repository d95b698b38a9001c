"""The learner's speed: one iteration's retraining on each Keras backend.

Run: .venv/bin/python benchmarks/retrain.py [--run-folder F] [--repeats N]
                                             [--backends tensorflow,jax]
(torch is a backend too where PyTorch is installed; it is not a project dependency)

For each backend, in a child process of its own (KERAS_BACKEND is read when Keras is
first imported): the run's network (its config.json, its current.keras weights) and
its newest memory snapshot, then `Agent.replay` -- the learner of one training
iteration as `funcs.trainIteration` calls it: duplicates merged where the config says
so, TRAINING_LOOPS fits of BATCH_SIZE positions in FIT_BATCH_SIZE steps -- once to
warm up (tracing, compilation) and `repeats` times measured.  Printed per backend: the
median seconds of one replay, split into preparing the batches (merging, sampling,
targets) and the fits, and the positions trained per second.  The network's weights
change as it trains, as in a run; nothing is written to the run folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import keras  # noqa: E402  (in a child, the backend its parent set in KERAS_BACKEND)

import runs  # noqa: E402
import storage  # noqa: E402
from agent import Agent  # noqa: E402
from config import STRONG  # noqa: E402
from memory import Memory  # noqa: E402

STRONG_RUN = STRONG.path("RUN_FOLDER")
"""The strong preset's run (run0002): the state the iteration benchmarks resume, which the
baseline commit of `make bench` can still read (run0006, shipped, has settings it lacks)."""


def runLearner(folder: Path) -> tuple[Agent, Memory]:
    """The learner of the run in `folder` as its training has it (its config, its current
    network, seeded by its SEED; no logging) and its newest memory snapshot.  Only reads
    the folder."""
    cfg = runs.runConfig(folder)
    keras.utils.set_random_seed(cfg.SEED)
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.current_model_path(folder))
    memory = Memory.load(storage.memory_path(folder, storage.memory_snapshots(folder)[-1]), cfg.MEMORY_SIZE)
    agent = Agent.fromConfig("learner", cfg, network, seed=cfg.SEED)
    agent.logger = None
    return agent, memory


def measure(folder: Path, repeats: int) -> dict:
    """Seconds of `Agent.replay` on the run in `folder`, in this process's backend."""
    agent, memory = runLearner(folder)
    cfg, network = agent.config, agent.model
    fitting = []
    original_fit = network.fit

    def timedFit(*args, **kwargs):
        start = time.perf_counter()
        history = original_fit(*args, **kwargs)
        fitting[-1] += time.perf_counter() - start
        return history

    network.fit = timedFit
    totals = []
    for _ in range(repeats + 1):
        fitting.append(0.0)
        start = time.perf_counter()
        agent.replay(memory.ltmemory)
        totals.append(time.perf_counter() - start)
    totals, fitting = totals[1:], fitting[1:]
    positions = cfg.TRAINING_LOOPS * min(cfg.BATCH_SIZE, len(memory))
    total = statistics.median(totals)
    return {"backend": keras.backend.backend(), "seconds": round(total, 2),
            "fit_seconds": round(statistics.median(fitting), 2),
            "prepare_seconds": round(total - statistics.median(fitting), 2),
            "positions": positions, "positions_per_s": round(positions / total),
            "memory": len(memory), "repeats": repeats}


def runChild(backend: str, folder: Path, repeats: int) -> dict:
    """`measure` in a child process with KERAS_BACKEND=`backend`."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, __file__, "--child", "--run-folder", str(folder), "--repeats",
                           str(repeats)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{backend}: the measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Retraining speed of one iteration on each Keras backend.")
    parser.add_argument("--run-folder", type=Path, default=STRONG_RUN)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backends", default="tensorflow,jax")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.run_folder, args.repeats)))
        return
    print(f"Retraining one iteration of the run in {args.run_folder} (median of {args.repeats}, after a warm-up):")
    results = [runChild(backend, args.run_folder, args.repeats) for backend in args.backends.split(",")]
    base = results[0]["seconds"]
    for r in results:
        print(f"  {r['backend']:<10} {r['seconds']:6.2f} s  (batches {r['prepare_seconds']:.2f} s, fits "
              f"{r['fit_seconds']:.2f} s)  {r['positions_per_s']:6d} positions/s  {base / r['seconds']:.2f}x "
              f"{results[0]['backend']}")


if __name__ == "__main__":
    main()
