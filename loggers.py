"""The run's five logs: main, memory, tourney, mcts, model.

Each is a `logging.Logger` writing to ``<run folder>/logs/logger_<name>.log`` through a
rotating file handler, switched on or off by the config's LOGGERS.  Each file rotates
at LOG_MAX_BYTES / (5 * (LOG_BACKUP_COUNT + 1)) bytes, so all logs together, old
copies included, stay under LOG_MAX_BYTES.  A disabled logger answers False to
``isEnabledFor`` and every costly message in the project is formatted only behind that
test, so a disabled log costs nothing measurable.

`setup_loggers` may be called any number of times (each training run, a new run
folder): it closes and replaces the previous handlers instead of piling them up.
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from logging.handlers import RotatingFileHandler

import storage
from config import LOGGER_NAMES

_LOGGERS = {name: logging.getLogger(f"connect4.{name}") for name in LOGGER_NAMES}
logger_main = _LOGGERS["main"]
logger_memory = _LOGGERS["memory"]
logger_tourney = _LOGGERS["tourney"]
logger_mcts = _LOGGERS["mcts"]
logger_model = _LOGGERS["model"]


LINE_FORMAT = "%(asctime)s %(levelname)s %(message)s"
"""Every line of the logs: time, level, message."""
_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ (.*)")


def messageOf(line: str) -> str:
    """The message of a line LINE_FORMAT wrote (a line without its prefix is taken
    as the message itself)."""
    match = _LINE.fullmatch(line)
    return match.group(1) if match else line


def setup_loggers(run_folder, cfg) -> dict[str, logging.Logger]:
    """Point the five loggers at `run_folder`/logs, enabled per cfg.LOGGERS."""
    folder = storage.logs_folder(run_folder)
    folder.mkdir(parents=True, exist_ok=True)
    formatter = LineFormatter(LINE_FORMAT)
    for name, logger in _LOGGERS.items():
        close_handlers(logger)
        logger.propagate = False
        enabled = cfg.LOGGERS.get(name, False)
        logger.disabled = not enabled
        logger.setLevel(logging.INFO if enabled else logging.CRITICAL + 1)
        if enabled:
            handler = SizedRotatingFileHandler(storage.log_path(run_folder, name), maxBytes=fileCap(cfg),
                                               backupCount=cfg.LOG_BACKUP_COUNT, encoding="utf-8")
            handler.setFormatter(formatter)
            logger.addHandler(handler)
    return dict(_LOGGERS)


class LineFormatter(logging.Formatter):
    """LINE_FORMAT for messages of several lines: each line gets the time and level, so
    a record of many lines (a logged move: the board and what the search said) reads
    in the file as the lines of as many one-line records.  The format must end with
    the message."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = record.message
        if "\n" not in message:
            return super().formatMessage(record)
        record.message = ""
        prefix = super().formatMessage(record)
        record.message = message
        return "\n".join(prefix + line for line in message.split("\n"))


class SizedRotatingFileHandler(RotatingFileHandler):
    """A `RotatingFileHandler` that counts the bytes it writes instead of asking the
    file: the standard one decides each rotation by checking the path twice, seeking
    to the file's end and formatting the record a second time, which costs as much as
    writing it, and the game logs write a record for each of some 4,100 moves a
    strong-preset iteration.  It rotates before the same records (the size reached plus the record's length at
    or over maxBytes) and writes the same lines, as long as nothing else writes
    to the file while it is open."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.size: int | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + self.terminator
            if self.stream is None:
                self.stream = self._open()
            if self.size is None:
                self.size = self.stream.seek(0, os.SEEK_END)
            if self.maxBytes > 0 and self.size + len(line) >= self.maxBytes:
                self.doRollover()
                if self.stream is None:
                    self.stream = self._open()
                self.size = self.stream.seek(0, os.SEEK_END)
            self.stream.write(line)
            self.flush()
            self.size += len(line.encode(self.stream.encoding))
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)


def fileCap(cfg) -> int:
    """Size at which one log file rotates, so that the five logs and their rotated
    copies together stay under cfg.LOG_MAX_BYTES."""
    return max(1, cfg.LOG_MAX_BYTES // (len(LOGGER_NAMES) * (cfg.LOG_BACKUP_COUNT + 1)))


def close_handlers(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


@contextmanager
def nativeStderrTo(path):
    """For the duration, send what native code writes to the process's standard error
    (file descriptor 2) to the file `path`; Python's own `sys.stderr` is untouched.
    TensorFlow's C++ layer writes start-up notices there when it is first imported,
    which a Jupyter kernel would show as red blocks in whichever cell runs then."""
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


@contextmanager
def loggingTo(path, name: str):
    """For the duration, the logger `name` writes its INFO lines and above to the file `path` alone, not to its
    parents' handlers: a match's log to read back (`replay.gamesFromLog`) outside a run's loggers."""
    logger = logging.getLogger(name)
    handler = logging.FileHandler(path)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        handler.close()


def disable_all() -> None:
    """Switch every log off and close its file (e.g. before a run folder is removed)."""
    for logger in _LOGGERS.values():
        close_handlers(logger)
        logger.disabled = True
        logger.setLevel(logging.CRITICAL + 1)


disable_all()
