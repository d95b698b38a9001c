"""Branches of a run: another run folder started from a run's state, with config changes.

Two branches of one state, each with one change, compare that change alone
(benchmarks/levers.py); `python -m funcs --branch-from F --run-folder D --set NAME=VALUE`
makes one and trains it; `--set` without `--branch-from` changes a new run's config
(`newRunConfig`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import runs
import storage
from config import PROJECT_ROOT, Config, ConfigError
from model import transferWeights
from runs import sayNow


BRANCH_FIXED = ("RUN_FOLDER", "RUN_ARCHIVE_FOLDER", "WORKERS", "RAY_ADDRESS", "TENSORBOARD")
"""Settings a branch cannot change: where it lives and where its games are played are
given when it trains (`--run-folder`, `--workers` ...), not by its config."""


def refuseFixed(changes: dict, where: str) -> None:
    """ConfigError naming the settings of BRANCH_FIXED among `changes` (set `where`: for a branch, for a new
    run): training is told them by its options."""
    fixed = sorted(set(changes) & set(BRANCH_FIXED))
    if fixed:
        raise ConfigError(f"{', '.join(fixed)} cannot be set {where}: they say where a run lives or plays, which "
                          "training is told (--run-folder, --workers, --ray-address)")


def newRunConfig(cfg: Config, changes: dict, initial_run: int | None = None) -> Config:
    """`cfg` with `changes` (validated; none: `cfg` itself) for a run to start in cfg's run folder (`--set`
    without `--branch-from`); refused (ConfigError) where the folder already holds a run, which keeps its own
    config.json, and for the names of BRANCH_FIXED (`refuseFixed`)."""
    if not changes:
        return cfg
    refuseFixed(changes, "with --set for a new run")
    if runs.startingPoint(cfg, initial_run)[0] in ("resume", "rebuild"):
        raise ConfigError(f"{cfg.path('RUN_FOLDER')} already holds a run, which keeps its own config.json: --set "
                          "changes a new run's config (another --run-folder) or a branch's (--branch-from)")
    return cfg.replace(**changes)


def storedFolder(folder: Path) -> str:
    """A branch's RUN_FOLDER as its config.json keeps it: relative to the project when inside it (a clone
    elsewhere finds it there, as `Config.path` reads it), else the absolute path."""
    return str(folder.relative_to(PROJECT_ROOT)) if folder.is_relative_to(PROJECT_ROOT) else str(folder)


def branchRun(source, target, changes: dict, say=sayNow, *, network=None) -> Config:
    """Start run folder `target` as a branch of the run in `source`, exactly where its checkpoint says, with its
    config changed by `changes` (validated; ConfigError names a wrong one, or one of BRANCH_FIXED): the same
    iteration counter, metrics (so the clock and the learning-rate schedule go on), memory snapshot, best and
    current network (and its weights' average, WEIGHT_AVERAGE_DECAY). Two branches of one state, each with one
    change, compare that change alone. The networks are rebuilt from the new config with the old weights
    (`model.transferWeights`: a tanh value head becomes a WDL head, a trunk given more filters computes what the
    narrower one did, the rest stays as it was). With `network`, a .keras file of a network of the new config's
    shape (a smaller one taught by the run's, `benchmarks/smallnet.py --save-student`, or a mean of versions:
    `benchmarks/average.py --out`), the branch's networks all start as that one instead: a network of another
    shape goes on from the run's state, its best still numbered as the source's best version (the branch's
    folder, not the number, says which network it is). The source is locked meanwhile (a trainer there could
    delete the snapshot being copied: RunLockedError), and the branch is built in a temporary folder renamed to
    `target` when complete, so a failed branch leaves nothing behind (a killed one leaves the temporary folder,
    which the next branch into `target` removes). `target` must be a new or empty folder (RunFileError
    otherwise); training in it then resumes the branch. Returns the branch's config."""
    source, target = Path(source), Path(target).resolve()
    held = sorted(target.iterdir()) if target.is_dir() else []
    if held or (target.exists() and not target.is_dir()):
        raise storage.RunFileError(f"{target} is not an empty folder ({held[0].name if held else 'a file'}...): "
                                   "branch into an empty or new folder (to go on training a branch, train in its "
                                   "folder without --branch-from)")
    refuseFixed(changes, "for a branch")
    checkpoint = runs.readCheckpoint(source)
    cfg = runs.folderConfig(source).replace(**changes, RUN_FOLDER=storedFolder(target))
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with storage.runLock(source):
            _writeBranch(source, partial, checkpoint, cfg, network)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if target.exists():
        target.rmdir()  # empty (checked above)
    partial.rename(target)
    say(f"Branched {source} at iteration {checkpoint['iteration']} (best version "
        f"{checkpoint['best_player_version']}) into {target} with {changes}"
        + (f", its networks from {network}." if network is not None else "."))
    return cfg


def _writeBranch(source: Path, folder: Path, checkpoint: dict, cfg: Config, network_file) -> None:
    """The files of a branch of `source` at `checkpoint`, with config `cfg`, in `folder`;
    its networks from `network_file` where given, else from the source's."""
    network = runs.networkFor(cfg, folder)
    best = storage.model_path(source, checkpoint["best_player_version"])
    current = storage.current_model_path(source)
    copies = [(best, best)] + ([(current, current)] if current.exists() else [])
    if cfg.WEIGHT_AVERAGE_DECAY > 0:  # the average starts as the current network where the source keeps none
        average = storage.average_model_path(source)
        copies.append((average if average.exists() else copies[-1][0], average))
    for old, new in copies:
        origin, way_out = ((old, f"restore it in {source}, or branch from another run") if network_file is None else
                           (Path(network_file), "give a network saved for the branch's config"))
        transferWeights(storage.load_model(origin, way_out), network.model)
        storage.save_model(network.model, folder / new.relative_to(source))
    if checkpoint["memory_iteration"] is not None:
        memory = storage.memory_path(source, checkpoint["memory_iteration"])
        storage.atomic_write(storage.memory_path(folder, checkpoint["memory_iteration"]),
                             lambda tmp: shutil.copyfile(memory, tmp), suffix=".npz")
    if storage.metrics_path(source).exists():
        storage.atomic_write(storage.metrics_path(folder),
                             lambda tmp: shutil.copyfile(storage.metrics_path(source), tmp))
        runs.dropMetricsAfter(folder, checkpoint["iteration"])
    storage.write_text(storage.config_path(folder), cfg.to_json())
    storage.write_json(storage.checkpoint_path(folder), checkpoint)
