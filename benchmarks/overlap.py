"""Overlapping the learner with self-play: on this machine, does running them at once beat
running them in turn?

Run: .venv/bin/python benchmarks/overlap.py [--run-folder F] [--seconds S] [--threads 2,1]

AlphaZero's learner trains while self-play goes on.  Where self-play and the learner each
use all of a machine's cores, that pays only by the cores a phase leaves idle, less what
the two pay to share them.  Measured from the run in F (its config, its best and current
networks, its newest memory snapshot), each in a child process of its own, for each
- self-play alone, as training runs it (all cores): the config's self-play phase
  (EPISODES games, the best network) again and again, positions evaluated per second;
- the learner alone (all cores): `Agent.replay` (one iteration's retraining) again and
  again, positions trained per second;
- both at once, their measured loops started at the same instant, for each thread count T
  given (the network's inference threads in self-play, TensorFlow's intra- and inter-op
  threads in the learner).
A child counts only the phases that ended within S seconds of the common start and keeps
going until its phase that crosses S ends, so every counted phase ran beside the other
child.  Printed: each rate alone and together, the together rate as a share of the alone
one (all cores), and the sum of the two shares (1: overlapping gains nothing; 2: each ran at full
speed beside the other); then what the shares imply for one iteration's self-play and
retraining, with their median seconds in the run's last metrics rows: in turn
(self-play + retraining) against at once (both until the shorter is done, the rest alone).
The networks are only read: nothing is written to the run folder.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402

import retrain  # noqa: E402
import selfplay  # noqa: E402

import runs  # noqa: E402
import storage  # noqa: E402

SETUP_SECONDS = 45.0
"""Time the children get to load and warm up before their measured loops start together."""
ROLES = ("selfplay", "learner")
ALL_CORES = os.cpu_count() or 1


def selfplayPhase(folder: Path, threads: int):
    """A callable playing one self-play phase of the run in `folder` with its best
    network on `threads` inference threads, returning the positions it evaluated."""
    cfg = runs.runConfig(folder)
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.model_path(folder, runs.bestVersion(folder)))
    engine = network.currentEngine()
    if hasattr(engine, "threads") and engine.threads != threads:
        engine.threads = threads
        engine.refresh(network.model)
    return lambda: selfplay.selfplay(network, cfg)[0]


def learnerPhase(folder: Path):
    """A callable running one iteration's retraining (`Agent.replay`) of the run in
    `folder` (`retrain.runLearner`), returning the positions it trained on.
    TensorFlow's thread counts are the process's (`child` sets them)."""
    agent, memory = retrain.runLearner(folder)
    cfg = agent.config

    def phase() -> int:
        agent.replay(memory.ltmemory)
        return cfg.TRAINING_LOOPS * min(cfg.BATCH_SIZE, len(memory))
    return phase


def measuredRate(phase, start_at: float, seconds: float) -> dict:
    """Warm `phase` up once, wait for the wall-clock instant `start_at`, then run it
    until a run of it ends past `start_at + seconds`; the rate counts the runs that
    ended within that window."""
    phase()
    late = time.time() - start_at
    time.sleep(max(0.0, -late))
    start, done, counted_until, runs_counted = time.perf_counter(), 0, 0.0, 0
    while True:
        positions = phase()
        elapsed = time.perf_counter() - start
        if elapsed > seconds:
            break
        done, counted_until, runs_counted = done + positions, elapsed, runs_counted + 1
    if runs_counted == 0:
        raise SystemExit(f"no phase ended within {seconds} s: give more --seconds")
    return {"per_second": done / counted_until, "phases": runs_counted, "late_s": round(max(0.0, late), 1)}


def child(role: str, folder: Path, threads: int, start_at: float, seconds: float) -> dict:
    """The measured rate of `role` in this (fresh) process, on `threads` threads."""
    if role == "selfplay":
        return measuredRate(selfplayPhase(folder, threads), start_at, seconds)
    tf.config.threading.set_intra_op_parallelism_threads(threads)  # before TensorFlow's first op
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    return measuredRate(learnerPhase(folder), start_at, seconds)


def startChild(role: str, folder: Path, threads: int, start_at: float, seconds: float) -> subprocess.Popen:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.Popen([sys.executable, __file__, "--child", role, "--run-folder", str(folder), "--threads",
                             str(threads), "--start-at", str(start_at), "--seconds", str(seconds)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def results(children: dict[str, subprocess.Popen]) -> dict[str, dict]:
    out = {}
    for role, process in children.items():
        stdout, stderr = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"the {role} child failed:\n{stderr[-2000:]}")
        out[role] = json.loads(stdout.strip().splitlines()[-1])
    return out


def alone(folder: Path, seconds: float) -> dict[str, dict]:
    """Each role's rate alone on all cores, one after the other."""
    rates = {}
    for role in ROLES:
        rates.update(results({role: startChild(role, folder, ALL_CORES, time.time() + SETUP_SECONDS, seconds)}))
    return rates


def together(folder: Path, threads: int, seconds: float) -> dict[str, dict]:
    """Both roles' rates at once, each on `threads` threads."""
    start_at = time.time() + SETUP_SECONDS
    return results({role: startChild(role, folder, threads, start_at, seconds) for role in ROLES})


def iterationSeconds(selfplay_s: float, retrain_s: float, shares: dict[str, float]) -> float:
    """Seconds for `selfplay_s` and `retrain_s` seconds of (alone) work run at once, each
    at its share of its alone speed while both run, the rest alone."""
    both = min(selfplay_s / shares["selfplay"], retrain_s / shares["learner"])
    return both + (selfplay_s - shares["selfplay"] * both) + (retrain_s - shares["learner"] * both)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=retrain.STRONG_RUN)
    parser.add_argument("--seconds", type=float, default=60.0, help="measured window of each child (default 60)")
    parser.add_argument("--threads", default="2,1", help="thread counts to measure (default 2,1)")
    parser.add_argument("--child", choices=ROLES, help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.run_folder, int(args.threads), args.start_at, args.seconds)))
        return
    rows = [row["seconds"] for row in runs.readMetrics(args.run_folder)[-20:]]
    selfplay_s, retrain_s = (statistics.median(row.get(phase, 0.0) for row in rows)
                             for phase in ("selfplay", "retrain"))
    print(f"The run in {args.run_folder}: median self-play {selfplay_s:.1f} s, retraining {retrain_s:.1f} s "
          f"(its last {len(rows)} iterations); each measured window {args.seconds:.0f} s")
    units = {"selfplay": "positions evaluated/s", "learner": "positions trained/s"}
    single = alone(args.run_folder, args.seconds)
    for threads in (int(t) for t in args.threads.split(",")):
        both = together(args.run_folder, threads, args.seconds)
        shares = {role: both[role]["per_second"] / single[role]["per_second"] for role in ROLES}
        print(f"\nat once, {threads} thread(s) each (alone: {ALL_CORES}):")
        for role, unit in units.items():
            print(f"  {role:<9} alone {single[role]['per_second']:8.0f}  together {both[role]['per_second']:8.0f}  "
                  f"share {shares[role]:.2f}   ({unit}; phases {single[role]['phases']} / {both[role]['phases']})")
        overlapped = iterationSeconds(selfplay_s, retrain_s, shares)
        in_turn = selfplay_s + retrain_s
        print(f"  sum of shares {sum(shares.values()):.2f}: self-play + retraining in turn {in_turn:.1f} s, "
              f"at once {overlapped:.1f} s ({in_turn / overlapped:.2f}x)")


if __name__ == "__main__":
    main()
