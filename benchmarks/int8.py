"""INT8 inference as a lever: post-training quantization of the network (NNCF) against
the float32 and bfloat16 OpenVINO engines self-play uses.

Run: .venv/bin/python benchmarks/int8.py [--run-folder F] [--version N]
                                          [--calibration 3000] [--test 4096] [--seconds 2]

The run's network (its best version by default) is bound to its weights as the
OpenVINO engine does (`inference.OpenVINOEngine.boundModel`) and quantized to INT8 by
`nncf.quantize`, calibrated on positions of the run's own newest memory snapshot
(self-play positions: the inputs the quantized network would see).  Each variant is
compiled as the engine compiles (all cores, one stream, latency hint) and compared on
other positions of that snapshot with float32: the largest and mean difference of the
value, and how often the policy's highest logit is the same cell; then its positions
per second at batch sizes 32, 128 and 512 (self-play's batches lie in that range).
Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))  # after the root: benchmarks/workers.py is not `workers`

import nncf  # noqa: E402
import numpy as np  # noqa: E402

import inference  # noqa: E402
import storage  # noqa: E402
from memory import Memory  # noqa: E402
from roofline import STRONG_RUN, throughput, versionEngine  # noqa: E402

BATCHES = (32, 128, 512)


def snapshotInputs(folder: Path, cfg, network) -> np.ndarray:
    """`network`'s inputs of every position in the run's newest memory snapshot."""
    memory = Memory.load(storage.memory_path(folder, storage.memory_snapshots(folder)[-1]), cfg.MEMORY_SIZE)
    return network.convertToModelInputs([row["state"] for row in memory.ltmemory])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="INT8 (NNCF) against float32 and bfloat16 inference.")
    parser.add_argument("--run-folder", type=Path, default=STRONG_RUN)
    parser.add_argument("--version", type=int, default=None, help="network version (default: the run's best)")
    parser.add_argument("--calibration", type=int, default=3000, help="calibration positions")
    parser.add_argument("--test", type=int, default=4096, help="positions compared with float32")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per speed measurement")
    args = parser.parse_args(argv)
    folder = args.run_folder
    cfg, version, network, engine = versionEngine(folder, args.version)
    bound = engine.boundModel(network.model)
    inputs = snapshotInputs(folder, cfg, network)
    picks = np.random.default_rng(cfg.SEED).permutation(len(inputs))
    calibration = inputs[picks[:args.calibration]]
    test = np.ascontiguousarray(inputs[picks[args.calibration:args.calibration + args.test]])
    start = time.perf_counter()
    quantized = nncf.quantize(bound, nncf.Dataset([calibration[i:i + 1] for i in range(len(calibration))]),
                              subset_size=len(calibration))
    print(f"version {version} of {folder}: quantized in {time.perf_counter() - start:.1f} s on "
          f"{len(calibration)} self-play positions; compared on {len(test)} others")
    variants = {"f32": (bound, "f32"), "bf16": (bound, "bf16"), "int8": (quantized, "bf16")}
    if not inference.cpuSupportsBF16():
        variants = {"f32": (bound, "f32"), "int8": (quantized, "f32")}
    compiled = {name: inference.compileForCPU(model, precision, engine.threads) for name, (model, precision) in variants.items()}
    reference = compiled["f32"](test)
    base = {batch: throughput(compiled["f32"], test[:batch], args.seconds) for batch in BATCHES}
    print(f"{'variant':<8} {'value max/mean diff':>20} {'same best cell':>15}   "
          + "  ".join(f"{'batch ' + str(b):>16}" for b in BATCHES))
    for name, model in compiled.items():
        out = model(test)
        diff = np.abs(out[0][:, 0] - reference[0][:, 0])
        agree = float(np.mean(out[1].argmax(1) == reference[1].argmax(1)))
        speeds = base if name == "f32" else {b: throughput(model, test[:b], args.seconds) for b in BATCHES}
        print(f"{name:<8} {diff.max():>10.4f} / {diff.mean():<8.4f} {100 * agree:>14.1f}%   "
              + "  ".join(f"{speeds[b]:>7.0f}/s {speeds[b] / base[b]:>5.2f}x" for b in BATCHES))


if __name__ == "__main__":
    main()
