"""Training memory: positions from self-play with their search policy and result.

`stmemory` collects the positions of the game being played; when it ends, each
position gets `value` = the final result for the player to move in that position
(z in the AlphaZero paper), and the game moves to `ltmemory`, which keeps the newest
MEMORY_SIZE positions.

Each position also keeps `q`, the search's value of the move played there (for the
player to move), which a config may mix into the value target
(VALUE_TARGET_Q_WEIGHT).

On disk a memory is a numpy .npz of plain arrays (never pickle): board (n, 42) int8,
playerTurn (n,) int8, AV (n, 42) float32, value (n,) float32, q (n,) float32 (a file
without q loads with q = value).
"""

from __future__ import annotations

import zipfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import storage
from game import CELLS, GameState

_FIELDS = {"board": ((CELLS,), np.int8), "playerTurn": ((), np.int8),
           "AV": ((CELLS,), np.float32), "value": ((), np.float32)}
_OPTIONAL_FIELDS = {"q": ((), np.float32)}
_ARCHIVE_STREAM = 1  # the archive starts' draws, apart from the games' own generators (seeded by base and game)
_WAY_OUT = ("resuming a run falls back to its previous memory snapshot (the last MEMORY_SNAPSHOTS_KEPT are "
            "kept); otherwise start a new run")


class Memory:
    """Self-play positions: `stmemory` for the game in progress, `ltmemory` the newest
    MEMORY_SIZE finished positions.  Each entry holds the position (`state`, `board`,
    `id`, `playerTurn`), its search policy `AV` over the 42 cells, the search's value
    `q` of the move played (for that position's player to move; the game's result
    when the search gave none; retraining mixes it into the value target by
    VALUE_TARGET_Q_WEIGHT), and once the game is over its `value`: the game's result
    for that position's player to move."""

    def __init__(self, MEMORY_SIZE: int):
        self.MEMORY_SIZE = MEMORY_SIZE
        self.ltmemory: deque[dict] = deque(maxlen=MEMORY_SIZE)
        self.stmemory: deque[dict] = deque(maxlen=MEMORY_SIZE)

    def __len__(self) -> int:
        return len(self.ltmemory)

    def commit_stmemory(self, identities, state: GameState, actionValues: np.ndarray,
                        searchValue: float | None = None) -> None:
        """Store a position and its symmetric copies (from `identities`) with their
        search policy and the search's value `searchValue` of the move played (for
        the player to move; None: none, and then q is z); `value` is filled in when
        the game ends."""
        for symmetric_state, symmetric_values in identities(state, actionValues):
            self.stmemory.append({"board": symmetric_state.board, "state": symmetric_state,
                                  "id": symmetric_state.id, "AV": symmetric_values,
                                  "playerTurn": symmetric_state.playerTurn, "q": searchValue})

    def setResult(self, finalState: GameState, value: float) -> None:
        """Give every short-term position its z: `value` is the result for the player to
        move in `finalState`, so positions with that player to move get `value` and
        the others `-value`."""
        for move in self.stmemory:
            move["value"] = value if move["playerTurn"] == finalState.playerTurn else -value
            if move["q"] is None:
                move["q"] = move["value"]

    def commitGame(self, gameMemory: "Memory") -> None:
        """Move a finished game's short-term memory (results set) into long-term memory."""
        self.ltmemory.extend(gameMemory.stmemory)
        gameMemory.clear_stmemory()

    def commit_ltmemory(self) -> None:
        """Move this memory's own short-term positions (results set) into long-term memory
        (the tutorial's API; concurrent games each keep their own short-term memory and
        are moved in by `commitGame`)."""
        self.commitGame(self)

    def clear_stmemory(self) -> None:
        self.stmemory = deque(maxlen=self.MEMORY_SIZE)

    def startPositions(self, probability: float, base: int, games: int) -> dict[int, GameState]:
        """Go-Exploit's archive starts (ARCHIVE_START_PROBABILITY): game number -> the position it starts from,
        for each of `games` self-play games drawn (with `probability`) to start from a long-term position, the
        position drawn uniformly.  The draws come from the match's base seed and the game's number, so a game
        starts alike wherever it is played; none while long-term memory is empty."""
        starts: dict[int, GameState] = {}
        if probability == 0 or not self.ltmemory:
            return starts
        for game in range(games):
            rng = np.random.default_rng([base, game, _ARCHIVE_STREAM])
            if rng.random() < probability:
                starts[game] = self.ltmemory[int(rng.integers(len(self.ltmemory)))]["state"]
        return starts

    # -- files -----------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the long-term memory as an .npz of plain arrays, atomically."""
        rows = list(self.ltmemory)
        arrays = {name: np.array([row[name] for row in rows], dtype=dtype).reshape((len(rows), *shape))
                  for name, (shape, dtype) in {**_FIELDS, **_OPTIONAL_FIELDS}.items()}
        storage.atomic_write(path, lambda tmp: _save_npz(tmp, arrays))

    @classmethod
    def load(cls, path, MEMORY_SIZE: int) -> "Memory":
        """Read a memory file; a missing, corrupt or pickled file raises RunFileError
        naming it.  Pickled objects are never loaded."""
        arrays = _load_arrays(path)
        memory = cls(MEMORY_SIZE)
        for row, (board, turn, av, value, q) in enumerate(
                zip(arrays["board"], arrays["playerTurn"], arrays["AV"], arrays["value"], arrays["q"])):
            try:
                state = GameState(board, int(turn))
            except ValueError as exc:
                raise storage.RunFileError(f"memory file {path}: row {row} is not a position ({exc}); "
                                           f"{_WAY_OUT}") from None
            memory.ltmemory.append({"board": state.board, "state": state, "id": state.id,
                                    "AV": av, "playerTurn": int(turn), "value": float(value), "q": float(q)})
        return memory


def outcomeDistribution(values) -> np.ndarray:
    """(win, draw, loss) probabilities, shape (n, 3), whose expectation P(win) - P(loss)
    is each of `values` (in [-1, 1], for the player to move): a result -1, 0 or 1 is
    its one-hot outcome; a value in between shares its weight between the draw and
    the outcome on its side (0.4 -> 0.4 win, 0.6 draw)."""
    values = np.clip(np.asarray(values, dtype=np.float32), -1.0, 1.0)
    return np.stack([np.maximum(values, 0.0), 1.0 - np.abs(values), np.maximum(-values, 0.0)], axis=-1)


class MergedRows(Sequence):
    """One row per distinct position of `rows` (first occurrence order), its search
    policy, z and q each the mean over that position's rows; a merged row also keeps
    `z_wdl`, the share of its games won, drawn and lost (a WDL head's target: a mean z
    of 0 may be all draws or half wins and half losses).

    Rows are grouped at once, but a position's means are taken only when its row is
    first read: retraining reads the few thousand rows it samples of tens of
    thousands, and averaging every repeated position of a full memory up front would be
    most of the merge's cost (docs/performance.md)."""

    def __init__(self, rows):
        groups: dict[int, list[dict]] = {}
        for row in rows:
            groups.setdefault(row["id"], []).append(row)
        self._groups = list(groups.values())
        self._merged: dict[int, dict] = {}

    def __len__(self) -> int:
        return len(self._groups)

    def __getitem__(self, index: int) -> dict:
        group = self._groups[index]
        if len(group) == 1:
            return group[0]
        merged = self._merged.get(index)
        if merged is None:
            values = [row["value"] for row in group]
            merged = {**group[0], "AV": np.mean([row["AV"] for row in group], axis=0),
                      "value": float(np.mean(values)), "z_wdl": outcomeDistribution(values).mean(axis=0),
                      "q": float(np.mean([row["q"] for row in group]))}
            self._merged[index] = merged
        return merged


def mergedRows(rows) -> list[dict]:
    """`MergedRows(rows)` as a list, every position's means taken."""
    return list(MergedRows(rows))


def _save_npz(tmp, arrays) -> None:
    with open(tmp, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def _load_arrays(path) -> dict[str, np.ndarray]:
    """The arrays of a memory file (q taken from value in a file without q), checked
    for presence, kind, shape and range."""
    if not Path(path).exists():
        raise storage.RunFileError(f"memory file {path} is missing; {_WAY_OUT}")
    if not zipfile.is_zipfile(path):
        raise storage.RunFileError(f"memory file {path} is not an .npz archive (truncated or corrupt); "
                                   f"{_WAY_OUT}")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files if name in {**_FIELDS, **_OPTIONAL_FIELDS}}
    except ValueError as exc:
        if "pickle" in str(exc):
            raise storage.RunFileError(f"memory file {path} holds pickled objects, which are never "
                                       f"loaded (they could run code); {_WAY_OUT}") from None
        raise storage.RunFileError(f"memory file {path} is corrupt ({exc}); {_WAY_OUT}") from None
    except Exception as exc:  # zipfile and numpy raise many kinds for a damaged archive
        raise storage.RunFileError(f"memory file {path} is truncated or corrupt ({type(exc).__name__}: "
                                   f"{str(exc)[:200]}); {_WAY_OUT}") from None
    missing = sorted(set(_FIELDS) - set(arrays))
    if missing:
        raise storage.RunFileError(f"memory file {path} lacks arrays {missing}; {_WAY_OUT}")
    arrays.setdefault("q", arrays["value"])
    _checkArrays(path, arrays)
    return arrays


def _checkArrays(path, arrays: dict[str, np.ndarray]) -> None:
    """Raise RunFileError naming the memory file and the first array that is not what
    memory writes: numbers of the right kind (integers for board and playerTurn), one
    row per position, values in range."""
    rows = len(arrays["board"]) if arrays["board"].ndim else 0
    for name, (shape, dtype) in {**_FIELDS, **_OPTIONAL_FIELDS}.items():
        kinds, meaning = ("iu", "integers") if np.dtype(dtype).kind == "i" else ("iuf", "real numbers")
        if arrays[name].dtype.kind not in kinds:
            raise storage.RunFileError(f"memory file {path}: array {name} holds {arrays[name].dtype} values, "
                                       f"expected {meaning}; {_WAY_OUT}")
        if arrays[name].shape != (rows, *shape):
            raise storage.RunFileError(f"memory file {path}: array {name} has shape {arrays[name].shape}, "
                                       f"expected {(rows, *shape)}; {_WAY_OUT}")
    av, value = arrays["AV"], arrays["value"]
    if not (np.isfinite(arrays["q"]).all() and (np.abs(arrays["q"]) <= 1).all()):
        raise storage.RunFileError(f"memory file {path}: array q holds values outside [-1, 1] or NaN; {_WAY_OUT}")
    if not (np.isfinite(av).all() and (av >= 0).all() and (av <= 1).all()):
        raise storage.RunFileError(f"memory file {path}: array AV holds values outside [0, 1] or NaN; {_WAY_OUT}")
    if not np.isin(value, (-1.0, 0.0, 1.0)).all():
        raise storage.RunFileError(f"memory file {path}: array value holds results other than -1, 0, 1; "
                                   f"{_WAY_OUT}")
