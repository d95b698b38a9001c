"""What of a run goes into git: the files it resumes from, its whole-game records and the versions they
measure (`make ship-run`, which stages what `python -m shipping RUN_FOLDER` prints).

A shipped run is committed compactly: a fresh clone resumes it exactly where its checkpoint says and
reproduces every committed record, without the older versions and memory snapshots that are history.
"""

from __future__ import annotations

import sys
from pathlib import Path

import runs
import storage


def resumeFiles(folder) -> list[Path]:
    """The files a run resumes from exactly where its checkpoint says (config,
    checkpoint, metrics, learning curve where there is one, best and current network
    and the current one's average, the checkpoint's memory snapshot): what to commit of a run shipped in git
    (`make ship-run`); older versions and snapshots are history, not needed."""
    folder = Path(folder)
    checkpoint = runs.readCheckpoint(folder)
    files = [storage.config_path(folder), storage.checkpoint_path(folder), storage.metrics_path(folder),
             storage.model_path(folder, checkpoint["best_player_version"])]
    files += [path for path in (storage.curve_path(folder), storage.current_model_path(folder),
                                storage.average_model_path(folder)) if path.exists()]
    if checkpoint["memory_iteration"] is not None:
        files.append(storage.memory_path(folder, checkpoint["memory_iteration"]))
    return files


def shippedFiles(folder) -> list[Path]:
    """What `make ship-run` commits of a run: the files it resumes from (`resumeFiles`), its whole-game
    records, and the saved versions they measure (ensembles' members too), to reproduce them from a clone."""
    files = resumeFiles(folder)
    records = storage.whole_games_records(folder)
    measured = {version for record in (storage.read_json(path, "whole-game record", "restore it, or move it out of "
                                                         "perfect/") for path in records)
                for version in (record["version"], *record.get("ensemble", ()))}
    models = [storage.model_path(folder, version) for version in sorted(measured)]
    return files + records + [path for path in models if path.exists() and path not in files]


def printShippedFiles(folder) -> str | None:
    """Print `shippedFiles`, read holding the run's lock: refused while the run trains (a finishing iteration
    would change them). Returns what stops it, for sys.exit (None: printed)."""
    if not (Path(folder).is_dir() and storage.checkpoint_path(folder).exists()):
        return f"{folder} holds no run to ship (no checkpoint.json)"
    try:
        with storage.runLock(folder):
            print(*shippedFiles(folder))
    except (storage.RunFileError, storage.RunLockedError) as error:
        return str(error)
    return None


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m shipping RUN_FOLDER")
    sys.exit(printShippedFiles(sys.argv[1]))
