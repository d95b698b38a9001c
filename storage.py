"""Files of a run: where they live, and writing them so that nothing is ever torn.

Every file the pipeline writes goes through `atomic_write`: the content is written to
a temporary file in the same folder, flushed and fsynced, then renamed over the
target, so a kill at any instant leaves either the old file or the new one.

Layout of a run folder::

    config.json                the run's configuration (everything is built from it)
    checkpoint.json            iterations done, best version, memory snapshot (written at
                               the end of each iteration, and at once after a promotion)
    metrics.jsonl              one JSON row per finished iteration
    curve.jsonl                mistake rates of versions on Pons' sets (benchmarks/curve.py;
                               measurement only, training never reads it)
    logs/                      main, memory, tourney, mcts, model logs (logger_NAME.log, rotated)
    models/versionNNNN.keras   every promoted network (version 1 = the initial one)
    models/current.keras       the current network, after its latest retraining
    models/average.keras       the moving average of the current network's weights
                               (WEIGHT_AVERAGE_DECAY > 0), after its latest retraining
    models/NAME.damaged        a version found damaged when a lost checkpoint was rebuilt
                               (set aside: no run reads it)
    models/NAME.unrecorded     a version newer than the checkpoint's best (a killed promotion's, or
                               a checkpoint set back; set aside), and
    memory/NAME.unrecorded     snapshots newer than a rebuilt checkpoint (set aside, never overwritten)
    memory/memoryNNNN.npz      long-term memory after iteration NNNN (last K kept)
    tensorboard/               the metrics rows' scalars as TensorBoard event files (config
                               TENSORBOARD; a view, training never reads it)
    .lock                      held by the process training in the folder
    model.png                  the network's drawing, made by the notebook (needs graphviz)
"""

from __future__ import annotations

import errno
import fcntl
import glob
import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable


class RunFileError(RuntimeError):
    """A file of a run is missing, truncated or corrupt; the message names it and the
    way out."""


class ModelMismatchError(RunFileError):
    """A model file loads, but its layers do not fit the network the config builds:
    the model and the config come from different runs (or one of them is damaged)."""


class RunLockedError(RuntimeError):
    """Another process is training in (or archiving) the same run folder."""


LOCK_NAME = ".lock"


@contextmanager
def runLock(run_folder):
    """Hold the run folder's lock for the duration; refuse at once if another process
    holds it.  The operating system releases the lock when its process dies, so a
    killed run never leaves the folder locked."""
    folder = Path(run_folder)
    if folder.exists() and not folder.is_dir():
        raise RunFileError(f"the run folder {folder} is a file, not a folder: point RUN_FOLDER (--run-folder) at "
                           "a folder")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_NAME, "a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(f"another process is training in {folder} (it holds {folder / LOCK_NAME}); "
                                 "stop it first, or use another RUN_FOLDER") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class DiskFullError(OSError):
    """The disk filled up while a file was written; the old file is untouched."""


# -- the layout: every name of a run's files is written here and nowhere else ----------
def config_path(run_folder) -> Path:
    return Path(run_folder) / "config.json"


def checkpoint_path(run_folder) -> Path:
    return Path(run_folder) / "checkpoint.json"


def metrics_path(run_folder) -> Path:
    return Path(run_folder) / "metrics.jsonl"


def curve_path(run_folder) -> Path:
    """The run's learning curve on Pons' sets (benchmarks/curve.py; measurement only)."""
    return Path(run_folder) / "curve.jsonl"


def whole_games_path(run_folder, version: int, sims: int, starts: tuple[int, int] | None = None,
                     search: dict | None = None, ensemble: tuple[int, ...] = (),
                     play_seed: int | None = None) -> Path:
    """The whole-game benchmark's record of a version at `sims` simulations
    (benchmarks/perfect.py): measurement only, training never reads it.  With
    `starts` (won, drawn), the name of a record of that many starts kept beside
    the version's main record (benchmarks/perfect.py and levers.py never replace a
    larger one);
    with `search` (play-time search settings, NAME: value), one of the version
    searching otherwise, e.g. version0472-sims600-root_search-puct.json; with
    `ensemble` (other versions whose networks joined its own), e.g.
    version0777-sims600-ensemble-1009.json; with `play_seed`, the same starts played
    again with other draws in the games (the solver's ties), e.g.
    version0777-sims600-playseed1.json."""
    games = "" if starts is None else f"-won{starts[0]}-drawn{starts[1]}"
    settings = "".join(f"-{name.lower()}-{value}" for name, value in sorted((search or {}).items()))
    joined = "-ensemble" + "".join(f"-{member}" for member in ensemble) if ensemble else ""
    replayed = "" if play_seed is None else f"-playseed{play_seed}"
    return Path(run_folder) / "perfect" / f"version{version:04d}-sims{sims}{games}{settings}{joined}{replayed}.json"


def whole_games_version(path) -> int:
    """The version whose record `path` is (a name of `whole_games_path`), whatever its digits."""
    return int(Path(path).name.split("-")[0].removeprefix("version"))


def whole_games_records(run_folder) -> list[Path]:
    """The run's whole-game benchmark records (`whole_games_path`), by name."""
    return sorted((Path(run_folder) / "perfect").glob("version*-sims*.json"))


def logs_folder(run_folder) -> Path:
    return Path(run_folder) / "logs"


def log_path(run_folder, name: str) -> Path:
    """The file of the logger `name` (main, memory, tourney, mcts, model; its rotated
    copies add .1, .2, ...)."""
    return logs_folder(run_folder) / f"logger_{name}.log"


def tensorboard_folder(run_folder) -> Path:
    """Where the run's TensorBoard event files go (`tensorboard --logdir` this folder or
    any folder above it)."""
    return Path(run_folder) / "tensorboard"


def model_plot_path(run_folder) -> Path:
    """The drawing of the network the notebook makes (where graphviz is installed)."""
    return Path(run_folder) / "model.png"


def current_model_path(run_folder) -> Path:
    return Path(run_folder) / "models" / "current.keras"


def average_model_path(run_folder) -> Path:
    return Path(run_folder) / "models" / "average.keras"


def model_name(version: int) -> str:
    return f"version{version:04d}.keras"


def model_path(run_folder, version: int) -> Path:
    return Path(run_folder) / "models" / model_name(version)


def memory_path(run_folder, iteration: int) -> Path:
    return Path(run_folder) / "memory" / f"memory{iteration:04d}.npz"


def saved_versions(run_folder) -> list[int]:
    """Version numbers of the networks saved in a run folder, ascending."""
    return _numbered(Path(run_folder) / "models", "version", ".keras")


def memory_snapshots(run_folder) -> list[int]:
    """Iterations whose memory snapshot is in a run folder, ascending."""
    return _numbered(Path(run_folder) / "memory", "memory", ".npz")


def run_files(run_folder) -> list[Path]:
    """The files of a run's record in a folder, whichever are there: config,
    checkpoint, metrics, curve, whole-game records, saved versions, the current network
    and its average, memory snapshots (not logs, drawings or TensorBoard files, which are views).  A
    folder holding any of them holds a run, which is never started afresh."""
    folder = Path(run_folder)
    named = [config_path(folder), checkpoint_path(folder), metrics_path(folder), curve_path(folder),
             current_model_path(folder), average_model_path(folder)]
    return ([path for path in named if path.exists()] + whole_games_records(folder)
            + [model_path(folder, v) for v in saved_versions(folder)]
            + [memory_path(folder, i) for i in memory_snapshots(folder)])


def set_aside(path, why: str = "damaged") -> Path:
    """Rename a file of a run that no run may read (damaged, or unrecorded) to NAME.WHY,
    or NAME.WHY-2, -3... where that is taken: kept for a person to look at, never
    overwritten, neither by the file that takes its name nor by a later one set aside;
    returns the new path."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.{why}")
    copy = 1
    while aside.exists():
        copy += 1
        aside = path.with_name(f"{path.name}.{why}-{copy}")
    return path.rename(aside)


def archived_run(archive_folder, game: str, run_number: int) -> Path:
    return Path(archive_folder) / game / f"run{run_number:04d}"


def archived_runs(archive_folder, game: str) -> list[int]:
    """Numbers of the runs archived for `game`, ascending."""
    return _numbered(Path(archive_folder) / game, "run", "")


def _numbered(folder: Path, prefix: str, suffix: str) -> list[int]:
    """The numbers NNNN of the entries PREFIXNNNNSUFFIX in `folder`, ascending."""
    names = (path.name for path in folder.glob(f"{prefix}[0-9][0-9][0-9][0-9]{suffix}"))
    return sorted(int(name[len(prefix):len(name) - len(suffix)]) for name in names)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_files(path) -> list[Path]:
    """The temporary files `atomic_write` makes for `path` (.NAME.XXXX.tmp...)."""
    path = Path(path)
    return sorted(path.parent.glob(f".{glob.escape(path.name)}.*.tmp*"))


def remove_temp_files(path) -> None:
    """Delete temporary files left for `path` by a write that was killed (a run folder
    has one writer, so none of them belongs to a write in progress)."""
    for tmp in temp_files(path):
        tmp.unlink(missing_ok=True)


def remove_leftover_temp_files(run_folder) -> list[Path]:
    """Delete every temporary file killed writes left in a run folder (call it with
    the run's lock held); returns what was removed."""
    folders = {Path(run_folder), model_path(run_folder, 0).parent, memory_path(run_folder, 0).parent}
    leftovers = [tmp for sub in folders for tmp in sub.glob(".*.tmp*")]
    for tmp in leftovers:
        tmp.unlink(missing_ok=True)
    return leftovers


def atomic_write(path, write: Callable[[Path], None], suffix: str = "") -> None:
    """Create or replace `path` atomically; `write(tmp_path)` writes the content to a
    temporary path in the same folder (ending with `suffix`).  Temporary files left
    for `path` by a killed earlier write are removed first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_temp_files(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp" + suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if _diskFull(exc):
            raise DiskFullError(errno.ENOSPC, f"disk full while writing {path}; the previous "
                                "version of the file is intact. Free some space and resume.") from None
        raise


def _diskFull(exc: BaseException | None) -> bool:
    """True when `exc`, or an error it was raised from (libraries such as Keras wrap
    the OSError), is 'no space left on device'."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def write_text(path, text: str) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(text))


def write_json(path, value) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=True))


def append_line(path, line: str) -> None:
    """Append one line to a text file by rewriting it atomically (a torn last line is
    impossible; the files appended to stay small)."""
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    write_text(path, old + line.rstrip("\n") + "\n")


def read_json_lines(path, what: str, way_out: str) -> list:
    """The values of a file of one JSON value per line (a record such as metrics.jsonl
    or curve.jsonl); none if the file does not exist yet.  A damaged file or line
    raises RunFileError naming `what`, the file, the line and `way_out`."""
    path = Path(path)
    if not path.exists():
        return []
    values = []
    for number, line in enumerate(_read_text(path, what, way_out).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            raise RunFileError(f"{what} {path} line {number} is corrupt ({str(exc)[:200]}); {way_out}") from None
    return values


def read_json(path, what: str, way_out: str):
    """Parse a JSON file, or raise RunFileError naming it and `way_out`."""
    path = Path(path)
    text = _read_text(path, what, way_out)
    if not text.strip():
        raise RunFileError(f"{what} {path} is empty; {way_out}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RunFileError(f"{what} {path} is corrupt ({str(exc)[:200]}); {way_out}") from None


def _read_text(path: Path, what: str, way_out: str) -> str:
    """The text of a run's file, or RunFileError naming it: missing, unreadable, or not
    UTF-8 text (bytes damaged on disk)."""
    try:
        return path.read_text()
    except FileNotFoundError:
        raise RunFileError(f"{what} {path} is missing; {way_out}") from None
    except UnicodeDecodeError as exc:
        raise RunFileError(f"{what} {path} is corrupt: not text ({exc}); {way_out}") from None
    except OSError as exc:
        raise RunFileError(f"{what} {path} cannot be read ({exc.strerror or exc}); {way_out}") from None


def save_model(model, path) -> None:
    """Save a Keras model as a .keras file, atomically."""
    atomic_write(path, lambda tmp: model.save(tmp), suffix=".keras")


def load_model(path, way_out: str = "resume from an earlier version (initialise.py)"):
    """Load a .keras file in Keras safe mode (no code from the file is executed),
    uncompiled: its weights are all a run reads from it, so the loss it was trained
    with is never needed.  A missing or damaged file raises RunFileError naming it,
    what is wrong with it (`modelFileProblem`) and `way_out`."""
    import keras  # heavy: only reading or writing a network pays for it

    path = Path(path)
    if not path.exists():
        raise RunFileError(f"model file {path} is missing; {way_out}")
    problem = modelFileProblem(path)
    if problem:
        raise RunFileError(f"model file {path} {problem}; {way_out}")
    try:
        return keras.models.load_model(path, compile=False, safe_mode=True)
    except Exception as exc:  # Keras raises many kinds for a damaged archive
        if "safe_mode" in str(exc):
            raise RunFileError(f"model file {path} holds code (e.g. a Lambda layer), which is never "
                               f"loaded; {way_out}") from None
        raise RunFileError(f"model file {path} is truncated or corrupt: Keras cannot read it "
                           f"({type(exc).__name__}: {str(exc)[:200]}); {way_out}") from None


def modelFileProblem(path) -> str | None:
    """What keeps the file at `path` from being a .keras archive, said after its name
    (None: nothing found; Keras may still refuse it): empty, not a zip file (cut short,
    or another kind of file), without a model's members, or with bytes changed on disk
    (a member fails its checksum).  Keras itself says "File not found" for most of
    these."""
    size = Path(path).stat().st_size
    if size == 0:
        return "is empty (0 bytes): its write never happened or the file was emptied"
    if not zipfile.is_zipfile(path):
        return (f"is truncated or corrupt: {size} bytes that are not a .keras archive (a zip file), "
                "a copy cut short or another kind of file")
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            damaged = archive.testzip()
    except Exception as exc:  # zipfile raises many kinds for a damaged archive
        return f"is truncated or corrupt: a damaged zip archive ({type(exc).__name__}: {str(exc)[:200]})"
    missing = [shown for start, shown in _KERAS_MEMBERS.items() if not any(n.startswith(start) for n in names)]
    if missing:
        return f"is truncated or corrupt: a zip file without the .keras archive's {' and '.join(missing)}"
    if damaged is not None:
        return f"is truncated or corrupt: its member {damaged} fails its checksum (bytes changed on disk)"
    return None


_KERAS_MEMBERS = {"config.json": "config.json", "model.weights.": "model.weights.h5"}
"""The members every .keras archive holds, the architecture and the weights: the start
of each name (the weights may also be model.weights.npz), and the name said."""
