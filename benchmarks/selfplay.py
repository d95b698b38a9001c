"""Self-play throughput per inference engine, against the network's own limit, and one
full default iteration.

Run: make bench   (or: .venv/bin/python benchmarks/selfplay.py [--episodes N])

Prints, from one run on the default configuration:
1. the network alone, per engine and precision, in positions per second at the batch
   sizes self-play and tournaments use;
2. the search alone, with an instant stand-in network (leaf evaluations per second):
   the most any engine could give self-play; with the rules and the search compiled
   (game.py and MCTS.py as built by setup.py) and as plain Python (their sources run
   in a fresh interpreter), alternately, SIDE_BY_SIDE_SEARCH times each;
3. self-play (positions evaluated per second, games per second) with the TensorFlow
   engine and with the `auto` engine, the same games, in turn, SIDE_BY_SIDE_ENGINES
   times;
4. every engine's network-alone rate on exactly the calls the last self-play (auto)
   made (same batch sizes, in order; they shrink as games end); the ratio of self-play
   (auto) to the best engine alone on its calls, measured SIDE_BY_SIDE times side by
   side (self-play, then at once the replay of its calls); the share of each of those
   self-plays' own time spent in its network calls (timed inside it, so the host's
   drift between a self-play and its replay cannot move it); the last self-play
   (auto)'s time outside its network calls, and the same games' search replayed
   without the network (each call answered at once with the outputs it had), back to
   back and with the core idle for each call's length in its place: how much slower
   the search runs between network calls than on its own; and the speed-up of
   self-play (auto) over self-play (TensorFlow), per round of step 3;
5. the tutorial's design: a single-position Keras `model.predict`, and the speed-up of
   self-play (auto) over it;
6. the wall time of the first two default iterations of a new run with the `auto`
   engine, by phase: the first pays one-time costs, the second is what each further
   iteration costs.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import cli  # noqa: E402
import compiled  # noqa: E402
import funcs  # noqa: E402
import game  # noqa: E402
import MCTS  # noqa: E402
import inference  # noqa: E402
import runs  # noqa: E402
from agent import Agent  # noqa: E402
from config import DEFAULT, Config  # noqa: E402
from game import ACTION_SIZE, INPUT_SHAPE  # noqa: E402
from memory import Memory  # noqa: E402
from model import Residual_CNN  # noqa: E402

SIDE_BY_SIDE = 6
"""How many times step 4 measures the ratio side by side: one pair varies by +-0.05
or more between runs on this machine, so the summary is over several."""

SIDE_BY_SIDE_ENGINES = 2
"""How many times step 3 plays self-play with each engine in turn: a single pair can
land on a moment the host takes CPU time from one of the two."""

SIDE_BY_SIDE_REPLAY = 2
"""How many times step 4 replays self-play's games without the network, back to back
and with idle pauses in turn."""

SIDE_BY_SIDE_SEARCH = 3
"""How many times step 2 measures the search alone, compiled and plain in turn."""

ROOT = Path(__file__).resolve().parent.parent

QUIET = logging.getLogger("benchmark.quiet")
QUIET.disabled = True


def engines() -> list[tuple[str, str]]:
    """Every (engine, precision) this machine can run."""
    found = [("tensorflow", "f32")]
    if inference.ov is not None:
        found.append(("openvino", "f32"))
        if inference.cpuSupportsBF16():
            found.append(("openvino", "bf16"))
    return found


def network(cfg: Config, engine: str, precision: str) -> Residual_CNN:
    return Residual_CNN.fromConfig(cfg.replace(INFERENCE=engine, INFERENCE_PRECISION=precision), INPUT_SHAPE,
                                   ACTION_SIZE)


def inputsOf(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).integers(0, 2, size=(batch, *INPUT_SHAPE)).astype(np.float32)


def positionsPerSecond(net, batch: int, seconds: float = 2.0) -> float:
    """Network-alone throughput at one batch size (random inputs)."""
    x = inputsOf(batch)
    net.predict(x)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        net.predict(x)
        calls += 1
    return batch * calls / (time.perf_counter() - start)


def secondsForBatches(net, batches: list[int]) -> float:
    """Network-alone time for a sequence of calls of the given batch sizes."""
    inputs = {b: inputsOf(b) for b in set(batches)}
    for x in inputs.values():
        net.predict(x)
    start = time.perf_counter()
    for b in batches:
        net.predict(inputs[b])
    return time.perf_counter() - start


class Call(NamedTuple):
    """One network call of a recorded self-play."""
    size: int
    seconds: float
    outputs: tuple
    """(values, logits) as the network returned them."""


def recordCalls(net) -> list[Call]:
    """Record every later `net.predict` call (benchmark only)."""
    calls: list[Call] = []
    predict = net.predict

    def recording(x):
        start = time.perf_counter()
        result = predict(x)
        calls.append(Call(len(x), time.perf_counter() - start, result))
        return result
    net.predict = recording
    return calls


class InstantNetwork:
    """A stand-in network that answers at once (zero values, random logits): what is
    left of self-play's time is the search itself."""

    input_dim = INPUT_SHAPE
    colourPlane = False
    lanes = 1
    convertToModelInputs = Residual_CNN.convertToModelInputs
    """The network's own input building (it reads `input_dim` and `colourPlane`): part of self-play's time."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.positionsEvaluated = 0

    def currentEngine(self):
        """It is its own engine: one lane, like the default engine."""
        return self

    def predict(self, x):
        self.positionsEvaluated += len(x)
        return np.zeros(len(x), np.float32), self.rng.standard_normal((len(x), ACTION_SIZE)).astype(np.float32)


def selfplay(net, cfg: Config) -> tuple[int, float]:
    """(positions evaluated, seconds) of one self-play phase of `cfg` with `net`."""
    player = Agent.fromConfig("best_player", cfg, net, seed=cfg.SEED)
    before, start = net.positionsEvaluated, time.perf_counter()
    funcs.playMatches(player, player, cfg.EPISODES, QUIET, cfg.TURNS_UNTIL_TAU0, Memory(cfg.MEMORY_SIZE))
    return net.positionsEvaluated - before, time.perf_counter() - start


def positionsPerSecondOf(recorded: tuple[int, float, list[Call]]) -> float:
    """Positions evaluated per second of a `recordedSelfplay` result."""
    positions, seconds, _ = recorded
    return positions / seconds


def recordedSelfplay(net, cfg: Config) -> tuple[int, float, list[Call]]:
    """`selfplay` with every network call recorded: (positions evaluated, seconds,
    the calls); `net.predict` is the class's again after."""
    calls = recordCalls(net)
    try:
        positions, seconds = selfplay(net, cfg)
    finally:
        del net.predict  # back to the class's predict
    return positions, seconds, calls


class ReplayedNetwork(InstantNetwork):
    """A stand-in that answers a recorded self-play's calls in order with the outputs
    the network gave them: self-play with the same config plays the same games again,
    with no network time.  With `pause`, each call leaves the core idle for as long as
    the recorded call took, as the real call did."""

    def __init__(self, calls: list[Call], pause: bool):
        super().__init__()
        self.calls, self.pause, self.answered = calls, pause, 0

    def predict(self, x):
        if self.answered == len(self.calls) or len(x) != self.calls[self.answered].size:
            raise RuntimeError(f"call {self.answered} of the replay ({len(x)} positions) is not in the recording "
                               f"({len(self.calls)} calls): not the same games")
        call = self.calls[self.answered]
        self.answered += 1
        self.positionsEvaluated += len(x)
        if self.pause:
            time.sleep(call.seconds)
        return call.outputs


def networkSeconds(calls: list[Call]) -> float:
    """The seconds a self-play spent in its network calls."""
    return sum(call.seconds for call in calls)


def outsideCalls(seconds: float, calls: list[Call]) -> float:
    """A self-play's seconds outside its network calls: the search and what surrounds it."""
    return seconds - networkSeconds(calls)


def replayedSearchSeconds(calls: list[Call], cfg: Config, pause: bool) -> float:
    """Seconds outside the network calls of the self-play that made `calls`, played
    again with `ReplayedNetwork(calls, pause)`: the same search on the same games."""
    _, seconds, replayed = recordedSelfplay(ReplayedNetwork(calls, pause), cfg)
    return outsideCalls(seconds, replayed)


def searchAlone(cfg: Config) -> float:
    """Leaf evaluations per second of one self-play phase with the instant network."""
    evaluated, seconds = selfplay(InstantNetwork(), cfg)
    return evaluated / seconds


_PLAIN_SEARCH = """
import sys
sys.path.insert(0, sys.argv[1])
import game, MCTS  # the plain sources copied there, ahead of the compiled extensions
sys.path.insert(1, sys.argv[2])
import compiled, selfplay
assert not compiled.runsCompiled(game) and not compiled.runsCompiled(MCTS)
cfg = selfplay.benchmarkConfig(int(sys.argv[3]))
selfplay.searchAlone(cfg)  # warm-up, as in the parent
print(selfplay.searchAlone(cfg))
"""


def searchAlonePlain(cfg: Config) -> float:
    """`searchAlone` with game.py and MCTS.py run as plain Python, in a fresh
    interpreter (the compiled extensions are imported in their place here)."""
    with tempfile.TemporaryDirectory() as folder:
        compiled.copySources(folder)
        done = subprocess.run([sys.executable, "-c", _PLAIN_SEARCH, folder, str(ROOT / "benchmarks"), str(cfg.EPISODES)],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if done.returncode != 0:
        raise RuntimeError(f"the plain-Python search failed:\n{done.stderr}")
    return float(done.stdout.split()[-1])


def benchmarkConfig(episodes: int) -> Config:
    """The default configuration with `episodes` self-play games and no logs."""
    return DEFAULT.replace(EPISODES=episodes, LOGGERS={name: False for name in DEFAULT.LOGGERS})


def sideBySide(played, alone, cfg: Config) -> tuple[float, float, float]:
    """(self-play positions/s with network `played`, network `alone`'s positions/s on
    exactly the calls that self-play made, the share of self-play's time spent in
    those calls), the first two measured one right after the other: this machine's
    speed drifts within a run (a virtual machine whose host takes CPU time), so a
    ratio is only fair between figures taken side by side.  The share needs no
    second run: it is taken within the self-play itself."""
    positions, seconds, calls = recordedSelfplay(played, cfg)
    sizes = [call.size for call in calls]
    return positions / seconds, sum(sizes) / secondsForBatches(alone, sizes), networkSeconds(calls) / seconds


def tutorialSecondsPerPosition(net, calls: int = 30) -> float:
    """The tutorial's way: Keras `model.predict` on one position at a time."""
    x = np.zeros((1, *INPUT_SHAPE), dtype=np.float32)
    net.model.predict(x, verbose=0)
    start = time.perf_counter()
    for _ in range(calls):
        net.model.predict(x, verbose=0)
    return (time.perf_counter() - start) / calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=cli.positive(int), default=DEFAULT.EPISODES,
                        help="self-play games (default: config)")
    args = parser.parse_args(argv)
    cfg = benchmarkConfig(args.episodes)
    auto = inference.resolve(cfg.INFERENCE, cfg.INFERENCE_PRECISION)
    build = "compiled" if compiled.runsCompiled(game) and compiled.runsCompiled(MCTS) else "plain Python"
    print(f"configuration: default ({cfg.EPISODES} self-play games, {cfg.MCTS_SIMS} simulations, "
          f"{len(cfg.HIDDEN_CNN_LAYERS)} layers of {cfg.HIDDEN_CNN_LAYERS[0]['filters']} filters); "
          f"auto engine here: {auto[0]} {auto[1]}; rules and search: {build}")

    batches = sorted({1, max(1, cfg.EVAL_EPISODES // 2), cfg.EPISODES // 2, cfg.EPISODES})
    print("1. network alone, positions/s:")
    print("   engine           " + "".join(f"  batch {b:3d}" for b in batches))
    nets = {}
    for engine, precision in engines():
        nets[engine, precision] = net = network(cfg, engine, precision)
        rates = [positionsPerSecond(net, b) for b in batches]
        print(f"   {engine:10s} {precision:4s}  " + "".join(f"{r:11.0f}" for r in rates))

    searchAlone(cfg)  # warm-up
    pairs = [(searchAlone(cfg), searchAlonePlain(cfg)) for _ in range(SIDE_BY_SIDE_SEARCH)]
    print(f"2. search alone (instant network), leaves/s, {build} vs plain Python, {SIDE_BY_SIDE_SEARCH} times: "
          + ", ".join(f"{fast:.0f} vs {plain:.0f} = {fast / plain:.2f}x" for fast, plain in pairs))

    rounds = [{key: recordedSelfplay(nets[key], cfg) for key in (("tensorflow", "f32"), auto)}
              for _ in range(SIDE_BY_SIDE_ENGINES)]
    print(f"3. self-play, each engine in turn, {SIDE_BY_SIDE_ENGINES} times:")
    for results in rounds:
        for (engine, precision), (n, s, _) in results.items():
            print(f"   {engine:10s} {precision:4s}: {n / s:8.0f} positions/s, {cfg.EPISODES / s:.3f} games/s "
                  f"({n} positions, {cfg.EPISODES} games in {s:.1f} s)")
    speedups = [positionsPerSecondOf(results[auto]) / positionsPerSecondOf(results["tensorflow", "f32"])
                for results in rounds]
    positions, seconds, recorded = rounds[-1][auto]
    calls = [call.size for call in recorded]
    limits = {key: len(calls) and sum(calls) / secondsForBatches(net, calls) for key, net in nets.items()}
    best = max(limits, key=limits.get)
    rate = np.mean([positionsPerSecondOf(results[auto]) for results in rounds])
    print(f"4. network alone on the last self-play (auto)'s {len(calls)} calls (mean batch {np.mean(calls):.1f}): "
          + ", ".join(f"{e} {p} {r:.0f}/s" for (e, p), r in limits.items()))
    triples = [sideBySide(nets[auto], nets[best], cfg) for _ in range(SIDE_BY_SIDE)]
    ratios = [played / alone for played, alone, _ in triples]
    shares = [share for _, _, share in triples]
    print(f"   self-play (auto), then at once the best engine ({best[0]} {best[1]}) alone on its calls, "
          f"{SIDE_BY_SIDE} times: " + ", ".join(f"{played:.0f}/s vs {alone:.0f}/s = {played / alone:.2f}"
                                               for played, alone, _ in triples)
          + f"; ratio mean {np.mean(ratios):.2f}, median {np.median(ratios):.2f}, "
            f"range {min(ratios):.2f}-{max(ratios):.2f}")
    print("   share of self-play (auto)'s own time spent in its network calls, the same runs: "
          + ", ".join(f"{share:.2f}" for share in shares)
          + f"; mean {np.mean(shares):.2f}, range {min(shares):.2f}-{max(shares):.2f}")
    replays = [(replayedSearchSeconds(recorded, cfg, pause=False), replayedSearchSeconds(recorded, cfg, pause=True))
               for _ in range(SIDE_BY_SIDE_REPLAY)]
    print(f"   the last self-play (auto)'s time outside its network calls: {outsideCalls(seconds, recorded):.2f} s"
          f" in self-play; replayed (each call answered at once with its recorded outputs), {SIDE_BY_SIDE_REPLAY} "
          "times: " + ", ".join(f"{warm:.2f} s back to back vs {idle:.2f} s with each call's time idle in its place"
                                for warm, idle in replays))
    print("   self-play (auto) / self-play (tensorflow), each round of step 3: "
          + ", ".join(f"{speedup:.2f}x" for speedup in speedups) + f"; mean {np.mean(speedups):.2f}x")
    tutorial = tutorialSecondsPerPosition(nets["tensorflow", "f32"])
    print(f"5. tutorial design (model.predict, one position): {tutorial * 1000:.1f} ms/position = "
          f"{1 / tutorial:.1f} positions/s; speed-up of self-play (auto): {rate * tutorial:.0f}x")

    print(f"6. full default iterations ({auto[0]} {auto[1]}) of a new run:")
    with tempfile.TemporaryDirectory() as folder:
        run = runs.openRun(cfg.replace(RUN_FOLDER=folder), say=lambda _: None)
        for label in ("first (traces the training step, converts both networks, draws the benchmark set)",
                      "second (what every later iteration costs)"):
            start = time.perf_counter()
            row = funcs.trainIteration(run, progress=False)
            total = time.perf_counter() - start
            phases = ", ".join(f"{name} {s:.1f} s" for name, s in row["seconds"].items())
            print(f"   {label}: {total:.1f} s ({phases}); tournament {row['scores']}")


if __name__ == "__main__":
    main()
