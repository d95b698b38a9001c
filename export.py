"""The trained network exported for use outside this project.

`python -m export` writes a version of a run's network (its best by default) as a
TensorFlow SavedModel (Keras `Model.export`, servable by TF Serving, loadable with
`tf.saved_model.load`) and as an ONNX file (for onnxruntime, OpenVINO and other
runtimes), then checks that both give the Keras model's values and policy on a set of
seeded positions before it says they are done.

What a user of the exported network needs to know (`describe` writes it beside the
files):
- Input `main_input`: float32, shape (n, 2, 6, 7).  Channel 0 holds the stones of the
  player to move, channel 1 the opponent's, row 0 the top row, column 0 the leftmost
  (`game.networkInputs`).  A network of a run with COLOUR_PLANE reads (n, 3, 6, 7):
  channel 2 is all ones when the first player is to move, all zeros when the second is.
- Output 0, the value: shape (n, 1), in [-1, 1], the expected result for the player
  to move (1 a win, -1 a loss).
- Output 1, the policy: shape (n, 42) logits, one per cell (row * 7 + column).  A move
  in a column lands on that column's lowest empty cell: keep the logits of those cells
  (at most one per column), softmax them, and ignore the rest.
"""

from __future__ import annotations

import argparse
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
import tensorflow as tf  # noqa: E402

import cli  # noqa: E402
import play  # noqa: E402
import storage  # noqa: E402
from config import SHIPPED  # noqa: E402
from game import GameState, inputShape, networkInputs  # noqa: E402

TOLERANCE = 1e-4
"""Largest difference allowed between an exported model's outputs and Keras's
(float32 kernels differ in summation order, never by more than rounding)."""


@dataclass(frozen=True)
class Exported:
    """Where an export put its files, and the largest difference of each from Keras's
    outputs (values and logits) on the check positions."""
    saved_model: Path
    onnx: Path
    saved_model_difference: float
    onnx_difference: float


def randomPositions(count: int, seed: int = 0) -> list[GameState]:
    """`count` positions from seeded random games, the empty board first (never a
    finished one): inputs to compare a network's exports, or its backends, on."""
    rng = np.random.default_rng(seed)
    positions, state = [], GameState.initial()
    while len(positions) < count:
        positions.append(state)
        state, _, done = state.takeAction(int(rng.choice(state.allowedActions)))
        if done:
            state = GameState.initial()
    return positions


def checkPositions(count: int = 64, seed: int = 0, colourPlane: bool = False) -> np.ndarray:
    """(count, 2, 6, 7) network inputs of `randomPositions`; (count, 3, 6, 7) with the
    colour plane."""
    return networkInputs(randomPositions(count, seed), colourPlane).reshape(count, *inputShape(colourPlane))


def largestDifference(outputs, reference) -> float:
    """The largest absolute difference between two (value, logits) pairs."""
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(outputs, reference))


def runSavedModel(folder: Path, x: np.ndarray):
    """(values, logits) of the SavedModel in `folder` for inputs `x`."""
    loaded = tf.saved_model.load(str(folder))  # held while it runs: its function reads the object's variables
    return [output.numpy() for output in loaded.serve(tf.constant(x))]


def runOnnx(path: Path, x: np.ndarray):
    """(values, logits) of the ONNX file at `path` for inputs `x` (onnxruntime)."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def describe(version: int, run_folder: Path) -> str:
    """The text saved beside the exported files: where they come from and how to feed
    and read them (this module's docstring, from "What a user" on)."""
    usage = __doc__[__doc__.index("What a user"):].split("\n", 2)[2]
    return (f"Connect Four AlphaZero network: version {version} of the run in {run_folder}.\n"
            f"saved_model/ (TensorFlow SavedModel, signature 'serve') and network.onnx hold the same network.\n\n"
            f"{usage}")


def exportNetwork(model_file, out_folder, version: int, run_folder) -> Exported:
    """Export the .keras network at `model_file` into `out_folder` (saved_model/,
    network.onnx, README.txt) and check both against Keras on `checkPositions`.
    Raises storage.RunFileError for a missing or damaged model file, and
    RuntimeError if an exported model's outputs differ by more than TOLERANCE."""
    model = storage.load_model(model_file, "export another version (--version) or check the run folder")
    out = Path(out_folder)
    out.mkdir(parents=True, exist_ok=True)
    saved_model, onnx_file = out / "saved_model", out / "network.onnx"
    model.export(str(saved_model), format="tf_saved_model", verbose=False)
    with warnings.catch_warnings():  # Keras's ONNX path probes numpy for a removed alias
        warnings.filterwarnings("ignore", message="In the future `np.object`", category=FutureWarning)
        model.export(str(onnx_file), format="onnx", verbose=False)
    (out / "README.txt").write_text(describe(version, Path(run_folder)))
    x = checkPositions(colourPlane=model.input_shape[1:] == inputShape(colourPlane=True))
    reference = model(x, training=False)
    exported = Exported(saved_model, onnx_file, largestDifference(runSavedModel(saved_model, x), reference),
                        largestDifference(runOnnx(onnx_file, x), reference))
    for name, difference in (("SavedModel", exported.saved_model_difference), ("ONNX", exported.onnx_difference)):
        if difference > TOLERANCE:
            raise RuntimeError(f"the exported {name} differs from the Keras network by {difference:.2e} "
                               f"(more than {TOLERANCE:.0e}) on the check positions")
    return exported


def main(argv: list[str] | None = None) -> None:
    """python -m export [--run-folder F] [--version N] [--out DIR]"""
    parser = argparse.ArgumentParser(description="Export a trained network as a TensorFlow SavedModel and ONNX.")
    parser.add_argument("--run-folder", default=str(SHIPPED.path("RUN_FOLDER")),
                        help="run folder (default: the shipped run)")
    parser.add_argument("--version", type=cli.positive(int), default=None, help=cli.VERSION_HELP)
    parser.add_argument("--out", type=cli.outputPath(folder=True), default=None,
                        help="output folder (default: exported/versionNNNN)")
    args = parser.parse_args(argv)
    try:
        version = play.playedVersion(args.run_folder, args.version)
        out = Path(args.out or f"exported/version{version:04d}")
        exported = exportNetwork(storage.model_path(args.run_folder, version), out, version, args.run_folder)
    except (storage.RunFileError, RuntimeError) as error:
        parser.exit(1, f"{error}\n")
    print(f"version {version} exported to {exported.saved_model} and {exported.onnx}; largest difference from "
          f"Keras on {len(checkPositions())} positions: SavedModel {exported.saved_model_difference:.1e}, "
          f"ONNX {exported.onnx_difference:.1e}")


if __name__ == "__main__":
    main()
