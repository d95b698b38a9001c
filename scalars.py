"""A run's metrics rows as TensorBoard scalars: the run's TensorBoard view.

Each metrics row (runs.py) becomes the scalars of one step, the row's iteration, in
<run folder>/tensorboard/ (`storage.tensorboard_folder`): written as each iteration
finishes where config TENSORBOARD is on (`ScalarWriter`), or rebuilt at once from a
whole run's metrics.jsonl (`rewrite`; `python -m scalars RUN_FOLDER`, `make tensorboard`),
for a run trained without the switch or a shipped run, whose committed files leave the
event files out.  A view only: training never reads it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import tensorflow as tf

import storage


def scalars(row: dict, prefix: str = "") -> list[tuple[str, float]]:
    """The numbers of a metrics row as (tag, value), by tag: nested entries tagged
    'scores/current_player', 'seconds/selfplay'; True / False as 1 / 0; entries
    without a value (None) and the iteration (the step) left out."""
    found = []
    for key, value in sorted(row.items()):
        tag = prefix + key
        if isinstance(value, dict):
            found += scalars(value, tag + "/")
        elif isinstance(value, (bool, int, float)) and tag != "iteration":
            found.append((tag, float(value)))
    return found


class ScalarWriter:
    """Writes metrics rows into a run folder's TensorBoard view, the event file opened
    by the first row written."""

    def __init__(self, run_folder):
        self.folder = storage.tensorboard_folder(run_folder)
        self._summaries: tf.summary.SummaryWriter | None = None

    def write(self, row: dict) -> None:
        """The row's `scalars` as step row['iteration'], flushed to disk at once."""
        if self._summaries is None:
            self._summaries = tf.summary.create_file_writer(str(self.folder))
        with self._summaries.as_default(step=row["iteration"]):
            for tag, value in scalars(row):
                tf.summary.scalar(tag, value)
        self._summaries.flush()


def rewrite(run_folder) -> Path:
    """Rebuild the TensorBoard view of the run in `run_folder` from its metrics.jsonl, one
    step per row; the view's old event files are replaced (they hold nothing the rows do
    not).  Holds the run's lock: never while it trains.  Returns the view's folder.  A
    row without an integer iteration raises RunFileError naming it."""
    path = storage.metrics_path(run_folder)
    rows = storage.read_json_lines(path, "metrics file", "delete that line, or restore the file")
    if not rows:
        raise storage.RunFileError(f"{run_folder} has no metrics rows to show: train first, or point at a run")
    for number, row in enumerate(rows, start=1):
        if not (isinstance(row, dict) and isinstance(row.get("iteration"), int)):
            raise storage.RunFileError(f"metrics file {path}: row {number} has no iteration to be its step")
    with storage.runLock(run_folder):
        writer = ScalarWriter(run_folder)
        shutil.rmtree(writer.folder, ignore_errors=True)
        for row in rows:
            writer.write(row)
    return writer.folder


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m scalars RUN_FOLDER")
    try:
        print(f"TensorBoard view rebuilt from the metrics rows: {rewrite(sys.argv[1])}")
    except (storage.RunFileError, storage.RunLockedError) as error:
        sys.exit(str(error))
