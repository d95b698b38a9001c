"""A run folder's life: start it, resume it, archive it.

A run lives in its folder (see `storage` for the layout).  `openRun` resumes the run
a folder holds, with the config it was started with, or starts one (from scratch or
from an archived run); resuming removes what a killed run left unrecorded and falls
back to older memory snapshots when the newest is damaged.  `funcs.train` drives the
iterations of the `RunState` this returns.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import storage
from config import DEFAULT, Config
from game import Game, GameState
from memory import Memory


def sayNow(text: str) -> None:
    """Print at once (also when stdout is a file or a pipe, which Python buffers)."""
    print(text, flush=True)


class RunState:
    """What a run has reached: its folder and config, the iteration counter, the best
    version, the memory and the two networks (best and current)."""

    def __init__(self, folder: Path, cfg: Config, iteration: int, best_player_version: int,
                 memory: Memory, best_NN, current_NN, memory_iteration: int | None):
        self.folder = folder
        self.cfg = cfg
        self.iteration = iteration
        self.best_player_version = best_player_version
        self.memory = memory
        self.best_NN = best_NN
        self.current_NN = current_NN
        self.memory_iteration = memory_iteration
        self._benchmark: list[GameState] | None = None

    def benchmark(self) -> list[GameState]:
        """The run's seeded set of EVAL_POSITIONS positions scored against perfect play
        (generated once per session; the same for the same SEED)."""
        if self._benchmark is None:
            import evaluation
            self._benchmark = evaluation.benchmarkPositions(self.cfg.EVAL_POSITIONS, self.cfg.SEED)
        return self._benchmark

    def checkpoint(self) -> dict:
        return {"iteration": self.iteration, "best_player_version": self.best_player_version,
                "memory_iteration": self.memory_iteration}


def runConfig(run_folder, fallback: Config | None = None) -> Config:
    """The config a run was built with (its config.json), else `fallback`."""
    path = Path(run_folder) / "config.json"
    return Config.from_json_file(path) if path.exists() or fallback is None else fallback


def readCheckpoint(folder: Path) -> dict:
    path = folder / "checkpoint.json"
    way_out = ("restore it, or move the run folder away to start a new run "
               "(models/ and memory/ keep every saved version)")
    values = storage.read_json(path, "checkpoint file", way_out)
    ok = (isinstance(values, dict)
          and isinstance(values.get("iteration"), int) and values["iteration"] >= 0
          and isinstance(values.get("best_player_version"), int) and values["best_player_version"] >= 1
          and (values.get("memory_iteration") is None or isinstance(values["memory_iteration"], int)))
    if not ok:
        raise storage.RunFileError(f"checkpoint file {path} is invalid ({values!r}); {way_out}")
    return values


def savedVersions(folder) -> list[int]:
    """Version numbers of the networks saved in a run folder, ascending."""
    names = (Path(folder) / "models").glob("version[0-9][0-9][0-9][0-9].keras")
    return sorted(int(path.stem[len("version"):]) for path in names)


def readMetrics(folder) -> list[dict]:
    """The rows of a run's metrics.jsonl (none if it does not exist yet); a damaged
    line raises RunFileError naming the file and the line."""
    path = Path(folder) / "metrics.jsonl"
    if not path.exists():
        return []
    try:
        text = path.read_text()
    except UnicodeDecodeError as exc:
        raise storage.RunFileError(f"metrics file {path} is corrupt ({exc}); delete it (metrics are a "
                                   "record only, training does not read them)") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise storage.RunFileError(f"metrics file {path} line {number} is corrupt ({exc}); delete that "
                                       "line (metrics are a record only, training does not read them)") from None
        if not isinstance(row, dict) or not isinstance(row.get("iteration"), int):
            raise storage.RunFileError(f"metrics file {path} line {number} is not a metrics row; delete that line")
        rows.append(row)
    return rows


def _networks(cfg: Config, folder: Path):
    from model import Residual_CNN

    env = Game()
    return (Residual_CNN.fromConfig(cfg, env.input_shape, env.action_size, folder),
            Residual_CNN.fromConfig(cfg, env.input_shape, env.action_size, folder))


def openRun(cfg: Config | None = None, initial_run: int | None = None, initial_model_version: int | None = None,
            initial_memory_version: int | None = None, say=sayNow) -> RunState:
    """Resume the run in the run folder, start one from an archived run, or start anew.

    A run folder with a checkpoint is always resumed with its own config.json (a
    different `cfg` is reported and ignored).  Otherwise (nothing started, or a start
    cut short, which is redone) with `initial_run` the archived run's config, model
    version and memory start the new run; else a new run starts from an untrained
    network saved as version 1."""
    cfg = cfg or DEFAULT
    folder = cfg.path("RUN_FOLDER")
    if (folder / "checkpoint.json").exists():
        run_cfg = Config.from_json_file(folder / "config.json")
        if run_cfg.replace(RUN_FOLDER=cfg.RUN_FOLDER) != cfg:
            say(f"{folder} already holds a run: resuming it with its own config.json "
                "(move the folder away to start a new run with another config).")
        return _resume(folder, run_cfg.replace(RUN_FOLDER=str(folder)), say)
    if initial_run is not None:
        return _startFromArchive(folder, cfg, initial_run, initial_model_version, initial_memory_version, say)
    return _startNew(folder, cfg, say)


def _startNew(folder: Path, cfg: Config, say) -> RunState:
    import keras

    keras.utils.set_random_seed(cfg.SEED)
    best_NN, current_NN = _networks(cfg, folder)
    current_NN.setWeightsFrom(best_NN.model)
    storage.write_text(folder / "config.json", cfg.to_json())
    best_NN.write("connect4", 1)
    run = RunState(folder, cfg, 0, 1, Memory(cfg.MEMORY_SIZE), best_NN, current_NN, None)
    storage.write_json(folder / "checkpoint.json", run.checkpoint())
    say(f"New run in {folder}: version 1 is the untrained network.")
    return run


def _resume(folder: Path, cfg: Config, say) -> RunState:
    checkpoint = readCheckpoint(folder)
    best_NN, current_NN = _networks(cfg, folder)
    version = checkpoint["best_player_version"]
    _removeLeftovers(folder, version, say)
    best_NN.loadWeights(storage.model_path(folder, version), way_out=(
        f"set best_player_version in {folder / 'checkpoint.json'} to an intact saved version "
        f"(saved: {', '.join(map(str, savedVersions(folder))) or 'none'})"))
    _loadCurrentNetwork(current_NN, best_NN, folder, say)
    memory, memory_iteration = _resumeMemory(folder, cfg, checkpoint["memory_iteration"], say)
    _dropMetricsAfter(folder, checkpoint["iteration"])
    say(f"Resumed run in {folder}: {checkpoint['iteration']} iterations done, best version "
        f"{version}, {len(memory)} positions in memory.")
    return RunState(folder, cfg, checkpoint["iteration"], version, memory, best_NN, current_NN, memory_iteration)


def _removeLeftovers(folder: Path, best_version: int, say) -> None:
    """Delete what a killed run left unrecorded: temporary files, and a model saved
    for a promotion the kill kept out of the checkpoint (the resumed iteration redoes
    that tournament)."""
    storage.remove_leftover_temp_files(folder)
    for version in savedVersions(folder):
        if version > best_version:
            storage.model_path(folder, version).unlink()
            say(f"Removed {storage.model_path(folder, version)}: its promotion never reached the checkpoint.")


def _loadCurrentNetwork(current_NN, best_NN, folder: Path, say) -> None:
    """The current network as last saved (models/current.keras), else the best one."""
    path = folder / "models" / "current.keras"
    current_NN.setWeightsFrom(best_NN.model)
    if path.exists():
        try:
            current_NN.loadWeights(path)
        except storage.RunFileError as error:
            say(f"{error}\nThe current network restarts from the best version.")


def _resumeMemory(folder: Path, cfg: Config, iteration: int | None, say) -> tuple[Memory, int | None]:
    """The memory snapshot the checkpoint names, or, if it is damaged, the newest
    intact older one (said aloud).  Raises RunFileError when none is intact."""
    if iteration is None:
        return Memory(cfg.MEMORY_SIZE), None
    candidates = [iteration] + sorted((int(p.stem[len("memory"):]) for p in (folder / "memory").glob("memory*.npz")
                                       if int(p.stem[len("memory"):]) < iteration), reverse=True)
    problems = []
    for candidate in candidates:
        try:
            memory = Memory.load(storage.memory_path(folder, candidate), cfg.MEMORY_SIZE)
        except storage.RunFileError as error:
            problems.append(str(error).split(";")[0])
            continue
        if problems:
            say("; ".join(problems) + f". Resuming with the older memory snapshot of iteration {candidate}.")
        return memory, candidate
    raise storage.RunFileError("no intact memory snapshot in " + str(folder / "memory") + ": " + "; ".join(problems)
                               + f". To resume with an empty memory, set memory_iteration to null in "
                               f"{folder / 'checkpoint.json'}.")


def _dropMetricsAfter(folder: Path, iteration: int) -> None:
    """Remove metrics rows of iterations the checkpoint does not include (written just
    before a kill); the resumed run redoes those iterations."""
    rows = readMetrics(folder)
    kept = [row for row in rows if row["iteration"] <= iteration]
    if len(kept) != len(rows):
        storage.write_text(folder / "metrics.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))


def _startFromArchive(folder: Path, cfg: Config, run_number: int, model_version, memory_version, say) -> RunState:
    archive = storage.archived_run(cfg.path("RUN_ARCHIVE_FOLDER"), "connect4", run_number)
    run_cfg = Config.from_json_file(archive / "config.json").replace(
        RUN_FOLDER=str(folder), RUN_ARCHIVE_FOLDER=cfg.RUN_ARCHIVE_FOLDER)
    if model_version is None:
        model_version = readCheckpoint(archive)["best_player_version"]
    best_NN, current_NN = _networks(run_cfg, folder)
    best_NN.loadWeights(archive / "models" / storage.model_name(model_version))
    current_NN.setWeightsFrom(best_NN.model)
    memory = Memory(run_cfg.MEMORY_SIZE)
    if memory_version is not None:
        memory = Memory.load(storage.memory_path(archive, memory_version), run_cfg.MEMORY_SIZE)
    storage.write_text(folder / "config.json", run_cfg.to_json())
    best_NN.write("connect4", model_version)
    run = RunState(folder, run_cfg, 0, model_version, memory, best_NN, current_NN, None)
    if memory_version is not None:
        memory.save(storage.memory_path(folder, 0))
        run.memory_iteration = 0
    storage.write_json(folder / "checkpoint.json", run.checkpoint())
    say(f"New run in {folder} from archived run {run_number}: model version {model_version}, "
        f"{len(memory)} positions in memory (memory version {memory_version}).")
    return run


def pruneMemorySnapshots(folder: Path, keep: int, current: int | None) -> None:
    snapshots = sorted((folder / "memory").glob("memory*.npz"))
    for old in snapshots[:-keep]:
        if current is None or old != storage.memory_path(folder, current):
            old.unlink(missing_ok=True)


def archiveRun(cfg: Config | None = None, run_number: int | None = None) -> Path:
    """Copy the live run folder to run_archive/connect4/runNNNN (next free number by
    default), from where initialise.py can start a new run.  The copy is made under a
    temporary name and renamed when complete; training must not run meanwhile."""
    cfg = cfg or DEFAULT
    archive_root = cfg.path("RUN_ARCHIVE_FOLDER") / "connect4"
    if run_number is None:
        taken = [int(p.name[3:]) for p in archive_root.glob("run[0-9][0-9][0-9][0-9]")]
        run_number = max(taken, default=0) + 1
    target = storage.archived_run(cfg.path("RUN_ARCHIVE_FOLDER"), "connect4", run_number)
    if target.exists():
        raise FileExistsError(f"{target} already exists: choose another run number")
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    with storage.runLock(cfg.path("RUN_FOLDER")):
        shutil.copytree(cfg.path("RUN_FOLDER"), partial, ignore=shutil.ignore_patterns(storage.LOCK_NAME))
    partial.rename(target)
    return target
