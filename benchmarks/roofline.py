"""The network against the CPU's own limit: how much of what this CPU's matrix units
can do the self-play network's evaluation already gets.

Run: .venv/bin/python benchmarks/roofline.py [--run-folder F] [--version N] [--seconds 2]
                                              [--selfplay]

The run's network (by default the best version of the strong preset's run, run0002) is compiled as self-play
compiles it (`inference.OpenVINOEngine`: all cores, one stream, latency hint), in
float32 and, where the CPU has bfloat16 units, bfloat16.  Its multiply-adds per
position are counted from its layers (`multiplyAdds`: convolutions and dense layers,
the rest is a rounding error), so its positions per second at batch sizes 16 to 512
are GFLOP/s.  Two yardsticks, since a virtual machine does not tell its clock: float32
against numpy's float32 matrix product of large square matrices (OpenBLAS, all cores),
a kernel near the FMA units' peak, so a lower bound of that peak; bfloat16 against
float32 at the same batch, where AVX512-BF16's dot products do at most twice float32's
multiply-adds per cycle (AMX many times that).  Where float32 reaches the product's
rate and bfloat16 twice float32's, a faster engine has nothing left to win for the
same network: the rest can only come from fewer multiply-adds (a smaller network) or
other hardware.  With --selfplay, one self-play phase of the run (its config, that version)
is played with its network calls recorded (`selfplay.recordedSelfplay`): the calls by
batch size, their share of the positions and of the network's time, and what the
network's time would be if every call ran at the rate of the largest band (lockstep
games end at different moves, so the last calls of a phase are small).  Nothing is
written.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))  # after the root: benchmarks/workers.py is not `workers`

import keras  # noqa: E402
import numpy as np  # noqa: E402

import inference  # noqa: E402
import runs  # noqa: E402
import selfplay  # noqa: E402
import storage  # noqa: E402
from config import STRONG  # noqa: E402

STRONG_RUN = STRONG.path("RUN_FOLDER")
"""The strong preset's run (run0002): the state the iteration benchmarks resume, which the
baseline commit of `make bench` can still read (run0006, shipped, has settings it lacks)."""
BATCHES = (16, 32, 64, 128, 256, 512)
BANDS = ((1, 16), (17, 32), (33, 64), (65, 96), (97, 128), (129, 1 << 20))
"""Batch-size bands of a self-play phase's calls (a call holds at most one position per
game: with the strong preset's 128 games the last band stays empty)."""
SQUARE = 2048
"""The side of the square float32 product that measures the yardstick (OpenBLAS at its
best)."""


def versionEngine(folder: Path, version: int | None):
    """(config, version, network, float32 OpenVINO engine) of `version` of the run in
    `folder` (None: its best), the engine not yet compiled."""
    cfg = runs.runConfig(folder)
    version = runs.bestVersion(folder) if version is None else version
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.model_path(folder, version))
    return cfg, version, network, inference.OpenVINOEngine(network.model, network.input_dim, "f32")


def throughput(compiled, x: np.ndarray, seconds: float) -> float:
    """Positions per second of `compiled` on batch `x`, one request, after a warm-up."""
    request = compiled.create_infer_request()
    for _ in range(20):
        request.infer([x])
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        request.infer([x])
        calls += 1
    return calls * len(x) / (time.perf_counter() - start)


def multiplyAdds(keras_model) -> int:
    """Multiply-adds of one position's forward pass: every Conv2D (output cells x
    kernel cells x input channels x output channels) and Dense (inputs x outputs)."""
    total = 0
    for layer in keras_model.layers:
        if isinstance(layer, keras.layers.Conv2D):
            kh, kw, cin, cout = layer.kernel.shape
            shape = layer.output.shape[1:]
            cells = shape[1] * shape[2] if layer.data_format == "channels_first" else shape[0] * shape[1]
            total += cells * kh * kw * cin * cout
        elif isinstance(layer, keras.layers.Dense):
            total += layer.kernel.shape[0] * layer.kernel.shape[1]
    return total


SGEMM = """
import sys, time
import numpy as np
side, seconds = int(sys.argv[1]), float(sys.argv[2])
rng = np.random.default_rng(0)
a, b = (rng.standard_normal((side, side)).astype(np.float32) for _ in range(2))
a @ b
calls, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    a @ b
    calls += 1
print(2 * side ** 3 * calls / (time.perf_counter() - start) / 1e9)
"""
"""The float32 yardstick's own program: numpy alone, in a fresh process."""


def sgemmGflops(seconds: float, side: int = SQUARE) -> float:
    """GFLOP/s of numpy's float32 matrix product (OpenBLAS, all cores, as the engine)
    on two side x side matrices: a kernel near the FMA units' peak, below it.  Measured
    in a process of its own: OpenBLAS's thread pool was seen to spin for good in a
    process that had run TensorFlow, OpenVINO and forked children (the test suite)."""
    done = subprocess.run([sys.executable, "-c", SGEMM, str(side), str(seconds)], capture_output=True, text=True,
                          check=True, timeout=60 + 10 * seconds)
    return float(done.stdout)


def callBands(calls: list) -> list[dict]:
    """Per band of `BANDS` that holds calls (`selfplay.Call`): its calls, positions,
    seconds and positions per second."""
    bands = []
    for low, high in BANDS:
        inside = [call for call in calls if low <= call.size <= high]
        if inside:
            positions, seconds = sum(c.size for c in inside), sum(c.seconds for c in inside)
            bands.append({"sizes": (low, high), "calls": len(inside), "positions": positions, "seconds": seconds,
                          "rate": positions / seconds})
    return bands


def fullBatchShare(bands: list[dict]) -> float:
    """The network's time if every position ran at the largest band's rate, as a
    share of the time its calls took."""
    positions, seconds = sum(b["positions"] for b in bands), sum(b["seconds"] for b in bands)
    return positions / bands[-1]["rate"] / seconds


def selfplayBatches(network, cfg) -> dict:
    """One self-play phase of `cfg` with `network`, its calls by batch band (printed)."""
    positions, seconds, calls = selfplay.recordedSelfplay(network, cfg)
    bands = callBands(calls)
    total_positions, total_seconds = sum(b["positions"] for b in bands), sum(b["seconds"] for b in bands)
    print(f"self-play: {cfg.EPISODES} games, {positions} positions in {len(calls)} calls (mean batch "
          f"{positions / len(calls):.1f}), {seconds:.1f} s, of which the network {total_seconds:.1f} s")
    for band in bands:
        low, high = band["sizes"]
        print(f"   batch {low:>3}-{min(high, 999):<3}: {band['calls']:>5} calls, "
              f"{band['positions'] / total_positions:>6.1%} of the positions, "
              f"{band['seconds'] / total_seconds:>6.1%} of the network's time, {band['rate']:>7.0f} positions/s")
    share = fullBatchShare(bands)
    print(f"   every call at the largest band's rate: the network's time x {share:.2f}")
    return {"positions": positions, "seconds": seconds, "calls": len(calls), "bands": bands,
            "full_batch_share": share}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="The network's evaluation against the CPU's matrix product limit.")
    parser.add_argument("--run-folder", type=Path, default=STRONG_RUN)
    parser.add_argument("--version", type=int, default=None, help="network version (default: the run's best)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per speed measurement")
    parser.add_argument("--selfplay", action="store_true",
                        help="also play one self-play phase and show its network calls by batch size")
    args = parser.parse_args(argv)
    folder = args.run_folder
    cfg, version, network, engine = versionEngine(folder, args.version)
    bound = engine.boundModel(network.model)
    macs = multiplyAdds(network.model)
    precisions = ["f32", "bf16"] if inference.cpuSupportsBF16() else ["f32"]
    product = sgemmGflops(args.seconds)
    print(f"version {version} of {folder}: {macs / 1e6:.2f} M multiply-adds per position "
          f"({2 * macs / 1e6:.1f} MFLOP); {engine.threads} threads; numpy's float32 {SQUARE}x{SQUARE} product: "
          f"{product:.0f} GFLOP/s")
    x = np.random.default_rng(cfg.SEED).integers(0, 2, (max(BATCHES), *network.input_dim)).astype(np.float32)
    results = {}
    print(f"{'precision':<9} " + " ".join(f"{'batch ' + str(b):>24}" for b in BATCHES))
    for precision in precisions:
        compiled = inference.compileForCPU(bound, precision, engine.threads)
        speeds = {b: throughput(compiled, x[:b], args.seconds) for b in BATCHES}
        gflops = {b: 2 * macs * speeds[b] / 1e9 for b in BATCHES}
        yardstick = ({b: product for b in BATCHES} if precision == "f32"
                     else results["f32"]["gflops"])
        results[precision] = {"positions_per_second": speeds, "gflops": gflops,
                              "against": {b: gflops[b] / yardstick[b] for b in BATCHES}}
        print(f"{precision:<9} " + " ".join(
            f"{speeds[b]:>7.0f}/s {gflops[b]:>4.0f} GF/s {results[precision]['against'][b]:>5.2f}x" for b in BATCHES))
    print("each batch: the network's positions/s, its GFLOP/s, and those against numpy's product (f32) or "
          "against f32 at that batch (bf16, whose dot products give at most 2x)")
    measured = {"version": version, "multiply_adds": macs, "float32_product_gflops": product, "results": results}
    if args.selfplay:
        measured["selfplay"] = selfplayBatches(network, cfg)
    return measured


if __name__ == "__main__":
    main()
