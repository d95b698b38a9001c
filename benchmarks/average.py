"""The mean of a run's saved versions: is the average of the weights along training a
better network than any one version?

Run: .venv/bin/python benchmarks/average.py [--run-folder F] --versions V ... [--last 5 10 20]
                                            [--sets L3_R1 ...] [--limit L] [--out FILE]

A run's promoted versions are points along one path of the learner's weights.  Their
mean (stochastic weight averaging; batch normalisation's moving statistics averaged
too) sits nearer the middle of the region the learner wanders in at a fixed learning
rate.  For the last K of the given versions, each K of `--last`, the mean's raw
network is scored on Pons' sets beside the last few versions alone (L positions a set;
the policy's mistakes, as `make pons` counts them, and the value's mean distance from
the true result).  `--out` saves the mean of the last max(K) versions as a .keras file
of the run's network: a branch can start from it (`python -m funcs --branch-from F
--branch-network FILE ...`), whose best version is then that mean, scored like any
version (`make perfect`, `benchmarks/curve.py`).  Training keeps such a mean itself
with WEIGHT_AVERAGE_DECAY.  Pons' sets measure only: nothing here trains.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import SHIPPED  # noqa: E402
from model import movingAverage  # noqa: E402
from pons import PONS_FOLDER, loadSets, setName  # noqa: E402
from refit import PonsTruth, networkFigures  # noqa: E402


def meanWeights(weights: list[list[np.ndarray]]) -> list[np.ndarray]:
    """The uniform mean of several networks' weight lists (`keras.Model.get_weights`),
    as running moving-average steps: the k-th network enters with weight 1/k."""
    mean = weights[0]
    for k, latest in enumerate(weights[1:], start=2):
        mean = movingAverage(mean, latest, (k - 1) / k)
    return mean


def scoreRow(label: str, network, weights: list[np.ndarray], sets: list[PonsTruth]) -> dict:
    """The raw network with `weights` on each set (`refit.networkFigures`)."""
    network.model.set_weights(weights)
    network.weightsChanged()
    return {"label": label, "sets": {truth.name: networkFigures(network, truth) for truth in sets}}


def formatRow(row: dict) -> str:
    figures = list(row["sets"].values())
    policy, value = (np.mean([f[key] for f in figures]) for key in ("policy", "value"))
    cells = "".join(f"  {f['policy']:>6.1f} / {f['value']:.3f}" for f in figures)
    return f"{row['label']:>12}{cells}  {policy:>6.2f} / {value:.3f}"


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--versions", type=cli.positive(int), nargs="+", required=True,
                        help="saved versions, oldest first: the means are of the last K of them")
    parser.add_argument("--last", type=cli.positive(int), nargs="+", default=None,
                        help="counts K of last versions to average (default: all the versions given)")
    parser.add_argument("--sets", type=setName, nargs="+", default=list(evaluation.PONS_SETS),
                        help="Pons' sets (default: all six)")
    parser.add_argument("--limit", type=cli.positive(int), default=1000, help="positions per set (default 1000)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER)
    parser.add_argument("--out", type=cli.outputPath(), default=None,
                        help="save the mean of the last max(K) versions to this .keras file")
    args = parser.parse_args(argv)
    counts = sorted(set(args.last or [len(args.versions)]))
    if counts[-1] > len(args.versions):
        parser.error(f"--last {counts[-1]} asks for more versions than the {len(args.versions)} given")
    folder = args.run_folder
    missing = [v for v in args.versions if not storage.model_path(folder, v).exists()]
    if missing:
        parser.error(f"{folder} has no version {missing[0]} ({runs.savedVersionsList(folder)})")
    try:
        pons_sets = loadSets(args.pons_folder, args.sets, args.limit)
    except ValueError as exc:
        parser.error(str(exc))
    network = runs.networkFor(runs.runConfig(folder), folder)
    weights = {}
    for version in args.versions:
        network.loadWeights(storage.model_path(folder, version))
        weights[version] = network.model.get_weights()
    sets = [PonsTruth(name, pairs) for name, pairs in pons_sets.items()]
    print(f"Raw networks of {folder} on Pons' sets ({args.limit} positions each): policy mistakes % / mean "
          "|value - true result|, then the mean over the sets", flush=True)
    print(f"{'network':>12}" + "".join(f"  {evaluation.ponsLabel(name).split(' ')[0]:>15}" for name in args.sets)
          + f"  {'mean':>15}", flush=True)
    table = []
    for version in args.versions[-min(3, len(args.versions)):]:
        table.append(scoreRow(f"version {version}", network, weights[version], sets))
        print(formatRow(table[-1]), flush=True)
    mean = None
    for count in counts:
        mean = meanWeights([weights[v] for v in args.versions[-count:]])
        table.append(scoreRow(f"mean of {count}", network, mean, sets))
        print(formatRow(table[-1]), flush=True)
    if args.out is not None:
        network.model.set_weights(mean)
        storage.save_model(network.model, args.out)
        print(f"saved the mean of versions {args.versions[-counts[-1]]}-{args.versions[-1]} ({counts[-1]} versions) "
              f"to {args.out}")
    return table


if __name__ == "__main__":
    main()
