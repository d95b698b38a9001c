"""Nothing lost (issue 6): a training run killed with SIGKILL at random moments, during
self-play, retraining and saving, resumes every time from intact files.  And every file
a run resumes from, deleted, emptied, truncated, overwritten or with bytes flipped,
either resumes (saying what it went past) or stops with the project's error naming it.

Each run is a fresh Python process doing ``funcs.train(None, cfg)`` on a tiny config;
the same call resumes the run.  After every kill, every file the run keeps loads, the
checkpoint never goes back, the memory snapshot it names never shrinks, and at most
the one write the kill interrupted leaves a temporary file behind.  The memory
snapshot the checkpoint names starts with every row of the previous one.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import funcs
import loggers
import runs
import storage
from config import Config, ConfigError
from memory import Memory

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROCESS_DEADLINE_S = 90


def _tiny_config(folder: Path) -> Config:
    return Config(HIDDEN_CNN_LAYERS=[{"filters": 8, "kernel_size": (3, 3)}] * 2, MCTS_SIMS=4, EPISODES=2,
                  EVAL_EPISODES=2, TURNS_UNTIL_TAU0=4, MEMORY_SIZE=100_000, BATCH_SIZE=32, MIN_MEMORY_SIZE=100,
                  FIT_BATCH_SIZE=32, TRAINING_LOOPS=1, EVAL_POSITIONS=0, SCORING_THRESHOLD=0.5,
                  MEMORY_SNAPSHOTS_KEPT=2,
                  LOGGERS={"main": True, "memory": False, "tourney": True, "mcts": False, "model": False},
                  RUN_FOLDER=str(folder), RUN_ARCHIVE_FOLDER=str(folder.parent / "archive"))


def _start(cfg: Config, log: Path) -> subprocess.Popen:
    """A training process: the same call starts the run and resumes it."""
    code = ("import config, funcs\n"
            f"cfg = config.Config.from_dict({cfg.as_dict()!r})\n"
            "funcs.train(None, cfg, progress=False)\n")
    with open(log, "w") as out:
        return subprocess.Popen([sys.executable, "-u", "-c", code], cwd=PROJECT_ROOT, stdout=out,
                                stderr=subprocess.STDOUT)


def _temp_files(folder: Path) -> set[Path]:
    return {p for sub in (folder, folder / "models", folder / "memory") if sub.is_dir()
            for p in sub.glob(".*.tmp*")}


def _checkpoint_iteration(folder: Path) -> int:
    try:
        return json.loads((folder / "checkpoint.json").read_text())["iteration"]
    except (FileNotFoundError, json.JSONDecodeError):
        return -1


def _kill_when(process: subprocess.Popen, log: Path, ready, delay_s: float) -> None:
    """Poll until `ready()` holds, wait `delay_s`, then SIGKILL the process (which must
    still be running: a training run only stops when killed)."""
    deadline = time.monotonic() + PROCESS_DEADLINE_S
    try:
        while not ready():
            assert process.poll() is None, f"training process ended by itself:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, (f"no kill moment within {PROCESS_DEADLINE_S} s:\n"
                                                 f"{log.read_text()[-3000:]}")
            time.sleep(0.002)
        time.sleep(delay_s)
        assert process.poll() is None, f"training process ended by itself:\n{log.read_text()[-3000:]}"
    finally:
        process.kill()
        process.wait()


class RunChecker:
    """Everything that must hold in the run folder after each kill, compared with the
    previous kill."""

    def __init__(self, folder: Path, cfg: Config):
        self.folder, self.cfg = folder, cfg
        self.iteration, self.best_version, self.rows = 0, 1, []
        self.temps: set[Path] = set()
        self.loaded: set[tuple] = set()  # (path, mtime, size) of files already checked

    def _fresh(self, path: Path) -> bool:
        stat = path.stat()
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key in self.loaded:
            return False
        self.loaded.add(key)
        return True

    def check(self) -> dict:
        folder, cfg = self.folder, self.cfg
        assert Config.from_json_file(folder / "config.json") == cfg
        checkpoint = storage.read_json(folder / "checkpoint.json", "checkpoint file", "")
        assert checkpoint["iteration"] >= self.iteration
        assert checkpoint["best_player_version"] >= self.best_version
        for path in sorted((folder / "models").glob("version*.keras")):
            if self._fresh(path):
                storage.load_model(path)
        assert storage.model_path(folder, checkpoint["best_player_version"]).exists()
        for path in sorted((folder / "memory").glob("memory*.npz")):
            if self._fresh(path):
                Memory.load(path, cfg.MEMORY_SIZE)
        if checkpoint["memory_iteration"] is not None:
            snapshot = Memory.load(storage.memory_path(folder, checkpoint["memory_iteration"]), cfg.MEMORY_SIZE)
            rows = [(row["id"], row["value"], row["AV"].tobytes()) for row in snapshot.ltmemory]
            # memory never fills up here, so a snapshot is the previous one plus new rows
            assert rows[:len(self.rows)] == self.rows, "a saved memory row was lost or altered"
            self.rows = rows
        metrics = (folder / "metrics.jsonl").read_text().splitlines() if (folder / "metrics.jsonl").exists() else []
        iterations = [json.loads(line)["iteration"] for line in metrics]
        assert iterations == sorted(set(iterations)), f"metrics rows repeated or out of order: {iterations}"
        assert all(i <= checkpoint["iteration"] + 1 for i in iterations)
        temps = _temp_files(folder)
        assert len(temps - self.temps) <= 1, f"more than the killed write left temp files: {temps}"
        targets = [(tmp.parent, re.match(r"\.(.+)\.\w+\.tmp", tmp.name).group(1)) for tmp in temps]
        assert len(set(targets)) == len(targets), f"two temp files for one file: {temps}"
        self.temps = temps
        self.iteration, self.best_version = checkpoint["iteration"], checkpoint["best_player_version"]
        return checkpoint


def test_training_survives_sigkill_at_random_moments(tmp_path):
    rng = random.Random(20240606)
    folder = tmp_path / "run"
    cfg = _tiny_config(folder)
    checker = RunChecker(folder, cfg)
    log = tmp_path / "train.log"
    main_log = folder / "logs" / "logger_main.log"

    def phase(marker: str):
        """Ready once the run logs `marker` anew (the main log is flushed per record)."""
        def count() -> int:
            return main_log.read_text().count(marker) if main_log.exists() else 0
        before = count()
        return lambda: count() > before

    def next_iteration_writes():
        """Ready at the first file write after the checkpoint has advanced."""
        start, before = checker.iteration, None

        def ready():
            nonlocal before
            if before is None:
                before = _temp_files(folder) if _checkpoint_iteration(folder) > start else None
                return False
            return bool(_temp_files(folder) - before)
        return ready

    # (when to kill, extra delay): during retraining; during self-play (a new
    # iteration has started); the instant a resumed run that has finished an
    # iteration starts writing a file (memory, model or checkpoint); during the
    # tournament; and at a random moment after a resume.
    plan = [(lambda: phase("--- retraining ---"), rng.uniform(0.0, 0.3)),
            (lambda: phase("====== ITERATION"), rng.uniform(0.0, 0.2)),
            (next_iteration_writes, 0.0),
            (lambda: phase("--- tournament ---"), rng.uniform(0.0, 0.1)),
            (lambda: (lambda: "Resumed run" in log.read_text()), rng.uniform(0.0, 2.0))]
    iterations = []
    for kill, (moment, delay) in enumerate(plan):
        ready = moment()
        process = _start(cfg, log)
        _kill_when(process, log, ready, delay)
        if kill > 0:
            assert "Resumed run" in log.read_text(), log.read_text()[-3000:]
        iterations.append(checker.check()["iteration"])
    assert max(iterations) >= 1 and iterations[2] > iterations[1]  # the resumed runs made progress


# -- every run file damaged in every way, then resumed ----------------------------------------
RUN_FILES = {
    "checkpoint": storage.checkpoint_path,
    "config": storage.config_path,
    "metrics": storage.metrics_path,
    "newest memory snapshot": lambda run: storage.memory_path(run, runs.readCheckpoint(run)["memory_iteration"]),
    "best model": lambda run: storage.model_path(run, runs.readCheckpoint(run)["best_player_version"]),
    "current model": storage.current_model_path,
}
"""The files a run resumes from (`shipping.resumeFiles`), by what they are."""


def _flipBytes(content: bytes, rng: random.Random) -> bytes:
    """Three bytes changed by their low seven bits (text stays ASCII text)."""
    data = bytearray(content)
    for at in rng.sample(range(len(data)), 3):
        data[at] ^= rng.randrange(1, 128)
    return bytes(data)


DAMAGES = {
    "deleted": None,
    "emptied": lambda content, rng: b"",
    "truncated": lambda content, rng: content[: len(content) // 2],
    "garbage": lambda content, rng: rng.randbytes(len(content)),
    "bytes flipped": _flipBytes,
}
"""Ways a file gets damaged (each given the file's bytes and a seeded generator)."""

LOADERS = {
    "checkpoint": lambda path, cfg: runs.readCheckpoint(path.parent),
    "config": lambda path, cfg: Config.from_json_file(path),
    "metrics": lambda path, cfg: runs.readMetrics(path.parent),
    "newest memory snapshot": lambda path, cfg: Memory.load(path, cfg.MEMORY_SIZE),
    "best model": lambda path, cfg: storage.load_model(path),
    "current model": lambda path, cfg: storage.load_model(path),
}
"""How the project reads each file: what resuming went past if it refuses the file."""


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A real tiny run of three iterations (memory snapshots of iterations 2 and 3, a
    current network), trained once for every damage: its folder and config."""
    folder = tmp_path_factory.mktemp("probe") / "run"
    cfg = _tiny_config(folder).replace(LOGGERS={}, SCORING_THRESHOLD=0.5)
    funcs.train(3, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder, cfg


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("name", RUN_FILES)
def test_a_damaged_run_file_resumes_or_stops_with_the_project_s_error_naming_it(finished_run, tmp_path, name,
                                                                               damage):
    """Resuming (`runs.openRun`, which `funcs.train` starts with) either gives the run
    state its checkpoint says, saying what it went past, or stops with RunFileError
    or ConfigError naming the damaged file."""
    original, cfg = finished_run
    folder = tmp_path / "run"
    shutil.copytree(original, folder, ignore=shutil.ignore_patterns(storage.LOCK_NAME))
    cfg = cfg.replace(RUN_FOLDER=str(folder))
    path = RUN_FILES[name](folder)
    if DAMAGES[damage] is None:
        path.unlink()
    else:
        path.write_bytes(DAMAGES[damage](path.read_bytes(), random.Random(f"{name} {damage}")))
    said: list[str] = []
    try:
        run = runs.openRun(cfg, say=said.append)
    except (storage.RunFileError, ConfigError) as error:
        assert str(path) in str(error), f"{name} {damage}: {error}"
        return
    checkpoint = runs.readCheckpoint(folder)  # the memory may fall back to an older snapshot than it names
    assert (run.iteration, run.best_player_version) == (checkpoint["iteration"], checkpoint["best_player_version"])
    assert run.memory_iteration <= checkpoint["memory_iteration"] and len(run.memory) > 0 and run.iteration <= 3
    assert storage.model_path(folder, run.best_player_version).exists()
    if path.exists():
        try:
            LOADERS[name](path, cfg)
        except (storage.RunFileError, ConfigError):
            assert path.name in " ".join(said), f"{name} {damage}: went past it silently: {said}"
    elif name == "checkpoint":
        assert any("rebuilt it" in line for line in said), said
    elif name != "metrics":  # without metrics rows nothing says the run had saved the file
        assert any(path.name in line and "is missing" in line for line in said), f"{name}: {said}"
