"""A run folder's life: start it, resume it, record its iterations, archive it, and
the players its saved versions make.

A run lives in its folder (see `storage` for the layout).  `openRun` resumes the run
a folder holds, with the config it was started with, or starts one (from scratch or
from an archived run); resuming clears what a killed run left unrecorded (temporary
files removed, versions the checkpoint never named set aside) and falls back to older
memory snapshots when the newest is damaged.  A folder that holds any
file of a run is never started afresh: without its checkpoint the run is rebuilt
from what is there (`rebuildCheckpoint`), or refused with the way out.
`funcs.train` drives the iterations of the `RunState` this returns; the RunState
methods write what an iteration produced in the order the resume code relies on.

`versionPlayer` is the one place that turns "version v of the run in folder F" into a
player (the run's best version, a saved one, an untrained network or a human), with
the network built from that run's own config."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import keras

import evaluation
import loggers as lg
import scalars
import storage
from agent import Agent, User, checkedSimulations
from config import DEFAULT, Config, playSearch, withSearch
from game import Game, GameState
from memory import Memory
from model import Residual_CNN, movingAverage


def sayNow(text: str) -> None:
    """Print at once (also when stdout is a file or a pipe, which Python buffers)."""
    print(text, flush=True)


class RunState:
    """What a run has reached: its folder and config, the iteration counter, the best
    version, the memory and the two networks (best and current), with
    WEIGHT_AVERAGE_DECAY a third: the moving average of the current one's weights."""

    def __init__(self, folder: Path, cfg: Config, iteration: int, best_player_version: int,
                 memory: Memory, best_NN, current_NN, memory_iteration: int | None, average_NN=None):
        self.folder = folder
        self.cfg = cfg
        self.iteration = iteration
        self.best_player_version = best_player_version
        self.memory = memory
        self.best_NN = best_NN
        self.current_NN = current_NN
        self.memory_iteration = memory_iteration
        self.average_NN = average_NN
        self._benchmark: list[GameState] | None = None
        self.bestEvaluation: tuple[int, dict] | None = None
        """(version, mistake rates) of the last evaluation against perfect play: a
        version that was not replaced keeps its rates without being scored again."""
        self.scalarWriter = scalars.ScalarWriter(folder) if cfg.TENSORBOARD else None
        """The run's TensorBoard view (config TENSORBOARD), written a row at a time."""

    def benchmark(self) -> list[GameState]:
        """The run's seeded set of EVAL_POSITIONS positions scored against perfect play
        (generated once per session; the same for the same SEED)."""
        if self._benchmark is None:
            self._benchmark = evaluation.benchmarkPositions(self.cfg.EVAL_POSITIONS, self.cfg.SEED)
        return self._benchmark

    def positionsEvaluated(self, pool) -> int:
        """Positions the best network evaluated so far, here and in the workers of `pool`
        (a `workers.Pool`, or None)."""
        return self.best_NN.positionsEvaluated + (0 if pool is None else pool.positionsEvaluated)

    def checkpoint(self) -> dict:
        return {"iteration": self.iteration, "best_player_version": self.best_player_version,
                "memory_iteration": self.memory_iteration}

    # -- what an iteration writes, in the order resuming relies on ---------------------
    def saveCurrentNetwork(self) -> None:
        """Save the current network after its retraining, so that a resumed run keeps
        training it even when it was not promoted (`_loadSaved` reads it);
        with an average, first fold the retrained weights into it and save it too."""
        storage.save_model(self.current_NN.model, storage.current_model_path(self.folder))
        if self.average_NN is not None:
            self.average_NN.model.set_weights(movingAverage(self.average_NN.model.get_weights(),
                                                            self.current_NN.model.get_weights(),
                                                            self.cfg.WEIGHT_AVERAGE_DECAY))
            self.average_NN.weightsChanged()
            storage.save_model(self.average_NN.model, storage.average_model_path(self.folder))

    @property
    def challenger(self):
        """The network the tournament's current player plays with, which a promotion
        makes the best: the average of the current network's weights where the run
        keeps one (WEIGHT_AVERAGE_DECAY), else the current network itself."""
        return self.current_NN if self.average_NN is None else self.average_NN

    def promote(self) -> None:
        """Make the challenger (the current network, or its weights' average) the best one: saved as the next
        version, and the promotion checkpointed at once. A kill later in the iteration then redoes the iteration
        with the new best version, which is never lost; a kill between the save and the checkpoint leaves a
        version the checkpoint does not name, which resuming sets aside (`_clearUnrecorded`) before the tournament
        is played again."""
        self.best_player_version += 1
        self.best_NN.setWeightsFrom(self.challenger.model)
        self.best_NN.write("connect4", self.best_player_version)
        storage.write_json(storage.checkpoint_path(self.folder), self.checkpoint())

    def saveMemory(self, iteration: int) -> None:
        """Save memory as iteration `iteration`'s snapshot (the checkpoint names it only
        once `finishIteration` has run)."""
        self.memory.save(storage.memory_path(self.folder, iteration))

    def finishIteration(self, iteration: int, row: dict) -> None:
        """Record iteration `iteration` as done: its metrics row, then the checkpoint (naming the memory snapshot
        `saveMemory` wrote), then the removal of memory snapshots beyond MEMORY_SNAPSHOTS_KEPT, then with
        TENSORBOARD the row's scalars (`scalars.ScalarWriter`: a kill before them loses a step of the view, never
        repeats one). The row goes before the checkpoint: a kill between the two leaves a row beyond the
        checkpoint, which resuming drops (`dropMetricsAfter`), and the iteration is redone."""
        storage.append_line(storage.metrics_path(self.folder), json.dumps(row, sort_keys=True))
        self.iteration, self.memory_iteration = iteration, iteration
        storage.write_json(storage.checkpoint_path(self.folder), self.checkpoint())
        for old in storage.memory_snapshots(self.folder)[:-self.cfg.MEMORY_SNAPSHOTS_KEPT]:
            if old != iteration:
                storage.memory_path(self.folder, old).unlink(missing_ok=True)
        if self.scalarWriter is not None:
            self.scalarWriter.write(row)


def runConfig(run_folder, fallback: Config | None = None) -> Config:
    """The config a run was built with (its config.json), else `fallback`."""
    path = storage.config_path(run_folder)
    return Config.from_json_file(path) if path.exists() or fallback is None else fallback


def playSettings(run_folder, fallback: Config | None = None) -> tuple[int | None, dict, float]:
    """(simulations, search settings, move time limit) of an agent of the run against a person: its PLAY_SIMS
    (None where 0: the agent's MCTS_SIMS), its other PLAY_* search settings as changes of its search
    (`config.playSearch`; {}: none) and its PLAY_MOVE_SECONDS (0: no limit)."""
    cfg = runConfig(run_folder, fallback)
    return cfg.PLAY_SIMS or None, playSearch(cfg), cfg.PLAY_MOVE_SECONDS


def readCheckpoint(folder: Path) -> dict:
    path = storage.checkpoint_path(folder)
    way_out = ("restore it, or delete it: training then rebuilds it from the run's saved versions, memory "
               "snapshots and metrics")
    values = storage.read_json(path, "checkpoint file", way_out)
    problem = checkpointProblem(values)
    if problem:
        raise storage.RunFileError(f"checkpoint file {path} is invalid: {problem}; {way_out}")
    return values


def _isInt(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def checkpointProblem(values) -> str | None:
    """What is wrong with a checkpoint's contents (None: nothing): a JSON object with
    iteration (int >= 0), best_player_version (int >= 1) and memory_iteration (int
    >= 0, or null before the first snapshot)."""
    if not isinstance(values, dict):
        return f"it must hold a JSON object, got {values!r}"
    for key in ("iteration", "best_player_version", "memory_iteration"):
        if key not in values:
            return f"{key} is missing"
    checks = {"iteration": (lambda v: _isInt(v) and v >= 0, "an integer >= 0"),
              "best_player_version": (lambda v: _isInt(v) and v >= 1, "an integer >= 1"),
              "memory_iteration": (lambda v: v is None or (_isInt(v) and v >= 0), "an integer >= 0 or null")}
    for key, (valid, meaning) in checks.items():
        if not valid(values.get(key)):
            return f"{key} must be {meaning}, got {values[key]!r}"
    return None


def savedVersionsList(folder) -> str:
    """The versions saved in a run folder, for messages: '1, 2, 5', or 'none'."""
    return ", ".join(map(str, storage.saved_versions(folder))) or "none"


def runFolder(cfg: Config, run_number: int | None = None) -> Path:
    """The live run folder (cfg's RUN_FOLDER) when `run_number` is None, else the
    folder of archived run `run_number` (run_archive/connect4/runNNNN)."""
    if run_number is None:
        return cfg.path("RUN_FOLDER")
    return storage.archived_run(cfg.path("RUN_ARCHIVE_FOLDER"), "connect4", run_number)


def bestVersion(folder) -> int:
    """The best version of the run in `folder`, from its checkpoint."""
    if storage.run_files(folder) and not storage.checkpoint_path(folder).exists():
        raise storage.RunFileError(f"{folder} holds a run without its checkpoint.json: training in it rebuilds "
                                   f"the checkpoint from the run's files; or choose a saved version (saved: "
                                   f"{savedVersionsList(folder)}) or 0 (an untrained network)")
    if not storage.checkpoint_path(folder).exists():
        raise storage.RunFileError(f"{folder} holds no run (no checkpoint.json): train first, point "
                                   "run_folder at a run, or choose version 0 (an untrained network)")
    return readCheckpoint(Path(folder))["best_player_version"]


def versionPlayer(name: str, env: Game, cfg: Config, run_folder, version: int | None, input_fn=None, output_fn=print,
                  mcts_simulations: int | None = None, search: dict | None = None, move_seconds: float = 0.0):
    """A player for `version` of the run in `run_folder`: None the run's best version, -1 a human (typing through
    `input_fn` / `output_fn`; `input_fn` None: the builtin `input` at the time of asking), 0 an untrained
    network, n the saved network models/version000n.keras. Networks are built with the run's own config.json
    (else `cfg`); `mcts_simulations` overrides its MCTS_SIMS, `search` its play-time search settings
    (`config.withSearch`), `move_seconds` its moves' time limit. A version the folder does not hold is refused."""
    folder = Path(run_folder)
    if mcts_simulations is not None:
        checkedSimulations(mcts_simulations)
    if version is None:
        version = bestVersion(folder)
    if isinstance(version, bool) or not isinstance(version, int) or version < -1:
        raise ValueError(f"version must be -1 (a human), 0 (an untrained network) or a saved version, got {version!r}")
    if version == -1:
        return User(name, env.state_size, env.action_size, input_fn, output_fn)
    if version > 0 and not storage.model_path(folder, version).exists():
        raise ValueError(f"run folder {folder} has no saved version {version}; saved versions: "
                         f"{savedVersionsList(folder)} (or 0 for an untrained network)")
    run_cfg = withSearch(runConfig(folder, cfg), search)
    network = Residual_CNN.fromConfig(run_cfg, env.input_shape, env.action_size, folder)
    if version > 0:
        network.loadWeights(storage.model_path(folder, version), f"saved versions: {savedVersionsList(folder)}")
    return Agent.fromConfig(name, run_cfg, network, logger=lg.logger_mcts, mcts_simulations=mcts_simulations,
                            move_seconds=move_seconds)


_METRICS_WAY_OUT = ("delete that line (metrics are a record; training reads them only for the time a run has "
                    "trained, which `--hours` counts, and to rebuild a lost checkpoint; that line's iteration no "
                    "longer counts)")


def readMetrics(folder) -> list[dict]:
    """The rows of a run's metrics.jsonl (none if it does not exist yet); a damaged
    line raises RunFileError naming the file and the line."""
    path = storage.metrics_path(folder)
    rows = storage.read_json_lines(path, "metrics file", _METRICS_WAY_OUT)
    for number, row in enumerate(rows, start=1):
        if not isMetricsRow(row):
            raise storage.RunFileError(f"metrics file {path}: row {number} is not a metrics row; {_METRICS_WAY_OUT}")
    return rows


def isMetricsRow(row) -> bool:
    """Whether `row` holds what runs reads of a metrics row: iteration (an integer >=
    0), best_player_version (an integer >= 1) and seconds (phase -> finite seconds)."""
    return (isinstance(row, dict) and _isInt(row.get("iteration")) and row["iteration"] >= 0
            and _isInt(row.get("best_player_version")) and row["best_player_version"] >= 1
            and isinstance(row.get("seconds"), dict)
            and all(_isInt(v) or (isinstance(v, float) and math.isfinite(v)) for v in row["seconds"].values()))


def metricsSummary(row: dict) -> str:
    """An iteration's metrics row as the one line training prints."""
    text = f"iteration {row['iteration']}: memory {row['memory_size']}"
    if row["trained"]:
        text += (f", loss {row['loss']:.3f} (value {row['value_loss']:.3f}, policy {row['policy_loss']:.3f})"
                 f", tournament {row['scores']}, {'promoted' if row['promoted'] else 'not promoted'}")
    text += f", best version {row['best_player_version']}"
    if row["mistake_rate"] is not None:
        text += (f" (mistakes against perfect play: agent {row['mistake_rate']:.1%}, "
                 f"network {row['network_mistake_rate']:.1%})")
    return text + ", " + ", ".join(f"{k} {v:.1f}s" for k, v in row["seconds"].items())


def trainingHours(rows: list[dict]) -> list[float]:
    """For each metrics row, the run's training time in hours at the end of that
    iteration: the running sum of its phase times."""
    total, hours = 0.0, []
    for row in rows:
        total += sum(row["seconds"].values()) / 3600
        hours.append(total)
    return hours


def promotionHours(rows: list[dict]) -> dict[int, tuple[int, float]]:
    """version -> (the iteration it became the best, the training hours until then),
    from metrics rows.  Version 1, the untrained network, is the best from the start."""
    found = {1: (0, 0.0)}
    for row, hours in zip(rows, trainingHours(rows)):
        found.setdefault(row["best_player_version"], (row["iteration"], hours))
    return found


def readCurve(folder) -> list[dict]:
    """The rows of a run's curve.jsonl: one per (version, simulations, positions) scored
    on Pons' sets (none before benchmarks/curve.py ran)."""
    return storage.read_json_lines(storage.curve_path(folder), "curve file",
                                   "delete that line (the curve is a measurement record: benchmarks/curve.py "
                                   "scores a version again)")


def networkFor(cfg: Config, folder: Path) -> Residual_CNN:
    """An untrained network as `cfg` describes it, writing to `folder`."""
    env = Game()
    return Residual_CNN.fromConfig(cfg, env.input_shape, env.action_size, folder)


def _networks(cfg: Config, folder: Path):
    return networkFor(cfg, folder), networkFor(cfg, folder)


def openRun(cfg: Config | None = None, initial_run: int | None = None, initial_model_version: int | None = None,
            initial_memory_version: int | None = None, say=sayNow) -> RunState:
    """Resume the run in the run folder, start one from an archived run, or start anew.

    A run folder with a checkpoint is always resumed with its own config.json (a different `cfg` is reported and
    ignored); one that lost its checkpoint is rebuilt from what it holds (`rebuildCheckpoint`) and resumed the
    same way. A folder that holds nothing of a run, or only the config.json of a start cut short (redone with
    that config), starts a run: with `initial_run` from the archived run's config, model version and memory;
    else from an untrained network saved as version 1. TENSORBOARD, like WORKERS, is `cfg`'s in every case."""
    cfg = cfg or DEFAULT
    folder = cfg.path("RUN_FOLDER")
    start, run_cfg = startingPoint(cfg, initial_run)
    run_cfg = run_cfg.replace(TENSORBOARD=cfg.TENSORBOARD)
    if start in ("resume", "rebuild"):
        if run_cfg.replace(RUN_FOLDER=cfg.RUN_FOLDER, WORKERS=cfg.WORKERS, RAY_ADDRESS=cfg.RAY_ADDRESS) != cfg:
            say(f"{folder} already holds a run: resuming it with its own config.json "
                "(move the folder away to start a new run with another config).")
        if start == "rebuild":
            rebuildCheckpoint(folder, run_cfg, say)
        return _resume(folder, run_cfg, say)
    if start == "archive":
        return _startFromArchive(folder, run_cfg, initial_run, initial_model_version, initial_memory_version, say)
    if start == "restart":
        say(f"{folder} holds only the config.json of a start cut short: starting the run with it.")
    return _startNew(folder, run_cfg, say)


def startingPoint(cfg: Config, initial_run: int | None = None) -> tuple[str, Config]:
    """What training with `cfg` does in cfg's run folder, and the config it then uses: ("resume", the run's own
    config.json) when the folder holds a run (a checkpoint); ("rebuild", its config.json) when it holds files of
    a run (`storage.run_files`) but no checkpoint; else ("archive", archived run `initial_run`'s config) when
    starting from one; else ("restart", its config.json) when the folder holds only that (a new start cut
    short); else ("new", cfg). A folder with files of a run but no config.json is refused (RunFileError). The
    configs returned write to cfg's run folder."""
    folder = cfg.path("RUN_FOLDER")
    files = set(storage.run_files(folder))
    config = storage.config_path(folder)
    if storage.checkpoint_path(folder) in files:
        return "resume", folderConfig(folder)
    if files - {config}:
        return "rebuild", folderConfig(folder)
    if initial_run is not None:
        return "archive", Config.from_json_file(storage.config_path(runFolder(cfg, initial_run))).replace(
            RUN_FOLDER=str(folder), RUN_ARCHIVE_FOLDER=cfg.RUN_ARCHIVE_FOLDER)
    if files:
        return "restart", folderConfig(folder)
    return "new", cfg


def folderConfig(folder: Path) -> Config:
    """The config.json of the run in `folder`, writing to `folder`; a missing or damaged
    one raises RunFileError or ConfigError naming it and the way out (a run is never
    started afresh over its own files)."""
    path = storage.config_path(folder)
    way_out = (f"restore it (the config the run was started with), or move the run folder {folder} away to start "
               "a new run")
    if not path.exists():
        held = ", ".join(str(file.relative_to(folder)) for file in storage.run_files(folder)[:5])
        raise storage.RunFileError(f"config file {path} is missing, beside files of a run ({held}); the run is "
                                   f"built from it: {way_out}")
    return Config.from_json_file(path, way_out).replace(RUN_FOLDER=str(folder))


def _startNew(folder: Path, cfg: Config, say) -> RunState:
    keras.utils.set_random_seed(cfg.SEED)
    best_NN, current_NN = _networks(cfg, folder)
    current_NN.setWeightsFrom(best_NN.model)
    storage.write_text(storage.config_path(folder), cfg.to_json())
    best_NN.write("connect4", 1)
    run = RunState(folder, cfg, 0, 1, Memory(cfg.MEMORY_SIZE), best_NN, current_NN, None,
                   _averageNetwork(cfg, folder, current_NN, say))
    storage.write_json(storage.checkpoint_path(folder), run.checkpoint())
    say(f"New run in {folder}: version 1 is the untrained network.")
    return run


def _resume(folder: Path, cfg: Config, say) -> RunState:
    checkpoint = readCheckpoint(folder)
    best_NN, current_NN = _networks(cfg, folder)
    version = checkpoint["best_player_version"]
    storage.remove_leftover_temp_files(folder)
    _loadBest(best_NN, folder, version, f"set best_player_version in {storage.checkpoint_path(folder)} to an "
                                        f"intact saved version (saved: {savedVersionsList(folder)})")
    _clearUnrecorded(folder, version, say)  # only once the checkpoint's version loaded: a wrong one touches nothing
    retrained = any(row.get("trained") for row in readMetrics(folder))
    _loadSaved(current_NN, best_NN, "best version", storage.current_model_path(folder), say, expected=retrained)
    memory, memory_iteration = _resumeMemory(folder, cfg, checkpoint["memory_iteration"], say)
    dropMetricsAfter(folder, checkpoint["iteration"])
    say(f"Resumed run in {folder}: {checkpoint['iteration']} iterations done, best version "
        f"{version}, {len(memory)} positions in memory.")
    return RunState(folder, cfg, checkpoint["iteration"], version, memory, best_NN, current_NN, memory_iteration,
                    _averageNetwork(cfg, folder, current_NN, say, retrained))


def _loadBest(network, folder: Path, version: int, way_out: str) -> None:
    """Load saved version `version` into `network`; a model that does not fit the
    network built from the folder's config.json names that file too (one of the two
    is not the run's)."""
    try:
        network.loadWeights(storage.model_path(folder, version), way_out)
    except storage.ModelMismatchError as error:
        raise storage.ModelMismatchError(f"{str(error).split('; ')[0]}; the network is built from "
                                         f"{storage.config_path(folder)}: restore the config the run was started "
                                         "with") from None


def rebuildCheckpoint(folder: Path, cfg: Config, say) -> None:
    """Write the checkpoint of a run folder that lost it (deleted, or a partial copy) from what the folder holds,
    and say what was rebuilt. The best version is the newest saved version that loads (damaged newer ones are
    set aside); the iterations done are the metrics rows' up to the first row that names a newer version
    (without rows, the newest memory snapshot's); the memory is the newest snapshot no newer than that (resuming
    falls back to older ones if it is damaged), later ones set aside as NAME.unrecorded, never overwritten by
    the iterations redone. Raises RunFileError with the way out when no saved version is intact."""
    storage.remove_leftover_temp_files(folder)
    best = _newestIntactVersion(folder, cfg, say)
    rows = readMetrics(folder)
    iteration = 0
    for row in rows:
        if row["best_player_version"] > best:
            break
        iteration = row["iteration"]
    snapshots = storage.memory_snapshots(folder)
    if not rows:
        iteration = max(snapshots, default=0)
    memory_iteration = max((i for i in snapshots if i <= iteration), default=None)
    later = [storage.set_aside(storage.memory_path(folder, i), "unrecorded").name for i in snapshots if i > iteration]
    storage.write_json(storage.checkpoint_path(folder), {"iteration": iteration, "best_player_version": best,
                                                         "memory_iteration": memory_iteration})
    memory = ("no memory snapshot (memory starts empty)" if memory_iteration is None
              else f"the memory snapshot of iteration {memory_iteration}")
    dropped = (f"; the metrics rows after iteration {iteration} name newer versions and are dropped"
               if rows and rows[-1]["iteration"] > iteration else "")
    dropped += f"; the later memory snapshots are set aside, never overwritten: {', '.join(later)}" if later else ""
    say(f"{folder} had no checkpoint.json: rebuilt it from what the folder holds: {iteration} iterations done "
        f"({'metrics.jsonl' if rows else 'no metrics rows: the newest memory snapshot'}), best version {best} "
        f"(the newest saved version that loads), {memory}{dropped}.")


def _newestIntactVersion(folder: Path, cfg: Config, say) -> int:
    """The newest saved version that loads into the network `cfg` builds; newer damaged ones are set aside
    (`storage.set_aside`), said aloud. None intact: RunFileError."""
    network = networkFor(cfg, folder)
    damaged = []
    for version in reversed(storage.saved_versions(folder)):
        try:
            _loadBest(network, folder, version, "")
        except storage.ModelMismatchError:
            raise
        except storage.RunFileError as error:
            damaged.append((version, str(error).split("; ")[0]))
            continue
        for old, problem in damaged:
            say(f"{problem}: set aside as {storage.set_aside(storage.model_path(folder, old)).name}.")
        return version
    problems = "; ".join(problem for _, problem in damaged) or f"{storage.model_path(folder, 1).parent} holds none"
    raise storage.RunFileError(f"{folder} has no checkpoint.json and no intact saved version to rebuild it from "
                               f"({problems}): restore checkpoint.json or a model file, or move the run folder away "
                               "to start a new run")


def _clearUnrecorded(folder: Path, best_version: int, say) -> None:
    """Set aside the saved versions newer than the checkpoint's best as NAME.unrecorded (`storage.set_aside`),
    said aloud, so that the next promotion's file takes a free name. A kill between a promotion's save and its
    checkpoint leaves one, best + 1 (the resumed iteration plays that tournament again); a checkpoint set back
    by hand, or restored from git beside a run trained on, leaves others. None is deleted: what it is, only
    a person can tell."""
    for version in storage.saved_versions(folder):
        if version > best_version:
            aside = storage.set_aside(storage.model_path(folder, version), "unrecorded")
            say(f"{storage.model_path(folder, version)} is newer than the checkpoint's best version "
                f"{best_version} (a promotion the checkpoint never recorded): set aside as {aside.name}.")


def _loadSaved(network, fallback, fallback_name: str, path: Path, say, expected: bool = False) -> None:
    """`network` as last saved in `path` (the current network, `RunState.saveCurrentNetwork`,
    or its average), else with the weights of `fallback`: a damaged file said aloud, and a
    missing one where it is `expected` (the run has retrained, so it saved the file)."""
    network.setWeightsFrom(fallback.model)
    if expected and not path.exists():
        say(f"{path} is missing, though the run has retrained: {path.name} restarts from the {fallback_name}.")
    if path.exists():
        try:
            network.loadWeights(path)
        except storage.RunFileError as error:
            network.setWeightsFrom(fallback.model)  # a load that failed midway leaves no mixture
            say(f"{str(error).split('; ')[0]}; {path.name} restarts from the {fallback_name}.")


def _averageNetwork(cfg: Config, folder: Path, current_NN, say, retrained: bool = False):
    """With WEIGHT_AVERAGE_DECAY > 0 the average of the current network's weights as
    last saved, else (a new run) as the current network; missing after the run `retrained`,
    said aloud (a branch turning the average on saves it at once, `branches.branchRun`)."""
    if cfg.WEIGHT_AVERAGE_DECAY == 0:
        return None
    average = networkFor(cfg, folder)
    _loadSaved(average, current_NN, "current network", storage.average_model_path(folder), say, expected=retrained)
    return average


def _resumeMemory(folder: Path, cfg: Config, iteration: int | None, say) -> tuple[Memory, int | None]:
    """The memory snapshot the checkpoint names, or, if it is damaged, the newest intact older one (said aloud).
    Raises RunFileError when none is intact."""
    if iteration is None:
        return Memory(cfg.MEMORY_SIZE), None
    candidates = [iteration] + [older for older in reversed(storage.memory_snapshots(folder)) if older < iteration]
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
    raise storage.RunFileError("no intact memory snapshot in " + str(storage.memory_path(folder, 0).parent) + ": "
                               + "; ".join(problems) + ". To resume with an empty memory, set memory_iteration "
                               f"to null in {storage.checkpoint_path(folder)}.")


def dropMetricsAfter(folder: Path, iteration: int) -> None:
    """Remove metrics rows of iterations the checkpoint does not include (written just
    before a kill); the resumed run redoes those iterations."""
    rows = readMetrics(folder)
    kept = [row for row in rows if row["iteration"] <= iteration]
    if len(kept) != len(rows):
        storage.write_text(storage.metrics_path(folder), "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))


def _startFromArchive(folder: Path, run_cfg: Config, run_number: int, model_version, memory_version,
                      say) -> RunState:
    archive = runFolder(run_cfg, run_number)
    if model_version is None:
        model_version = readCheckpoint(archive)["best_player_version"]
    best_NN, current_NN = _networks(run_cfg, folder)
    best_NN.loadWeights(storage.model_path(archive, model_version))
    current_NN.setWeightsFrom(best_NN.model)
    memory = Memory(run_cfg.MEMORY_SIZE)
    if memory_version is not None:
        memory = Memory.load(storage.memory_path(archive, memory_version), run_cfg.MEMORY_SIZE)
    storage.write_text(storage.config_path(folder), run_cfg.to_json())
    best_NN.write("connect4", model_version)
    run = RunState(folder, run_cfg, 0, model_version, memory, best_NN, current_NN, None,
                   _averageNetwork(run_cfg, folder, current_NN, say))
    if memory_version is not None:
        memory.save(storage.memory_path(folder, 0))
        run.memory_iteration = 0
    storage.write_json(storage.checkpoint_path(folder), run.checkpoint())
    say(f"New run in {folder} from archived run {run_number}: model version {model_version}, "
        f"{len(memory)} positions in memory (memory version {memory_version}).")
    return run


def archiveRun(cfg: Config | None = None, run_number: int | None = None) -> Path:
    """Copy the live run folder to run_archive/connect4/runNNNN (next free number by
    default), from where initialise.py can start a new run.  The copy is made under a
    temporary name and renamed when complete; training must not run meanwhile."""
    cfg = cfg or DEFAULT
    if run_number is None:
        run_number = max(storage.archived_runs(cfg.path("RUN_ARCHIVE_FOLDER"), "connect4"), default=0) + 1
    target = runFolder(cfg, run_number)
    if target.exists():
        raise FileExistsError(f"{target} already exists: choose another run number")
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    with storage.runLock(cfg.path("RUN_FOLDER")):
        shutil.copytree(cfg.path("RUN_FOLDER"), partial, ignore=shutil.ignore_patterns(storage.LOCK_NAME))
    partial.rename(target)
    return target
