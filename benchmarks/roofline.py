"""The network against the CPU's own limit: how much of what this CPU's matrix units
can do the self-play network's evaluation already gets.

Run: .venv/bin/python benchmarks/roofline.py [--run-folder F] [--version N] [--seconds 2]

The run's network (the shipped run's best version by default) is compiled as self-play
compiles it (`inference.OpenVINOEngine`: all cores, one stream, latency hint), in
float32 and, where the CPU has bfloat16 units, bfloat16.  Its multiply-adds per
position are counted from its layers (`multiplyAdds`: convolutions and dense layers,
the rest is a rounding error), so its positions per second at batch sizes 32, 128 and
512 are GFLOP/s.  Beside them, the float32 peak as numpy's matrix product (OpenBLAS)
reaches it on large square matrices with the same threads.  The ratios say what a
faster engine could still win for the same network (bfloat16's dot products do at
most twice float32's multiply-adds per cycle on AVX512-BF16, many times that on AMX):
the rest can only come from fewer multiply-adds (a smaller network) or other
hardware.  Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402

import inference  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from int8 import SHIPPED_RUN, throughput  # noqa: E402
from model import Residual_CNN  # noqa: E402

BATCHES = (16, 32, 64, 128, 256, 512)
SQUARE = 2048
"""The side of the square float32 product that measures the peak (OpenBLAS at its best)."""


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


def sgemmGflops(seconds: float, side: int = SQUARE) -> float:
    """GFLOP/s of numpy's float32 matrix product (OpenBLAS, all cores, as the engine)
    on two side x side matrices: a kernel that runs near the FMA units' peak."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((side, side)).astype(np.float32) for _ in range(2))
    a @ b
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        calls += 1
    return 2 * side ** 3 * calls / (time.perf_counter() - start) / 1e9


def compiledAs(model, precision: str, threads: int):
    """`model` compiled as `inference.OpenVINOEngine.refresh` compiles the network."""
    return ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": precision,
                                                  "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                                                  "PERFORMANCE_HINT": "LATENCY"})


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="The network's evaluation against the CPU's matrix product limit.")
    parser.add_argument("--run-folder", type=Path, default=SHIPPED_RUN)
    parser.add_argument("--version", type=int, default=None, help="network version (default: the run's best)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per speed measurement")
    args = parser.parse_args(argv)
    folder = args.run_folder
    cfg = runs.runConfig(folder)
    version = runs.bestVersion(folder) if args.version is None else args.version
    network = Residual_CNN.fromConfig(cfg, (2, 6, 7), 42, run_folder=folder)
    network.loadWeights(storage.model_path(folder, version))
    engine = inference.OpenVINOEngine(network.model, (2, 6, 7), "f32")
    bound = engine.boundModel(network.model)
    macs = multiplyAdds(network.model)
    precisions = ["f32", "bf16"] if inference.cpuSupportsBF16() else ["f32"]
    peak = sgemmGflops(args.seconds)
    print(f"version {version} of {folder}: {macs / 1e6:.2f} M multiply-adds per position "
          f"({2 * macs / 1e6:.1f} MFLOP); {engine.threads} threads; float32 peak (numpy's {SQUARE}x{SQUARE} "
          f"product): {peak:.0f} GFLOP/s")
    x = np.random.default_rng(cfg.SEED).integers(0, 2, (max(BATCHES), 2, 6, 7)).astype(np.float32)
    results = {}
    print(f"{'precision':<9} " + " ".join(f"{'batch ' + str(b):>24}" for b in BATCHES))
    for precision in precisions:
        compiled = compiledAs(bound, precision, engine.threads)
        speeds = {b: throughput(compiled, x[:b], args.seconds) for b in BATCHES}
        gflops = {b: 2 * macs * speeds[b] / 1e9 for b in BATCHES}
        results[precision] = {"positions_per_second": speeds, "gflops": gflops}
        print(f"{precision:<9} " + " ".join(f"{speeds[b]:>7.0f}/s {gflops[b]:>4.0f} GF/s {gflops[b] / peak:>5.2f}x"
                                            for b in BATCHES))
    print("each batch: the network's positions/s, its GFLOP/s, and those against the float32 peak")
    return {"version": version, "multiply_adds": macs, "float32_peak_gflops": peak, "results": results}


if __name__ == "__main__":
    main()
