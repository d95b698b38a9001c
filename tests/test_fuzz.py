"""Inputs fuzzed: what a person or a file hands the project either works or raises the
project's own error naming the input, never a bare crash inside numpy, Keras or json.

Property-based (hypothesis, derandomized so every run tries the same examples): move
strings (`GameState.fromMoves`), typed columns (`agent.parseColumn`), config values
and config.json files, memory .npz files, checkpoint and metrics files, model files.
Each file test writes its examples over one file of a module-wide folder.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import runs
import storage
from agent import parseColumn
from config import DEFAULT, Config, ConfigError
from game import CELLS, GameState
from memory import Memory

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
"""Every property: a fixed set of examples, no time limit per example (the CPU may
be shared)."""
FEW = settings(FUZZ, max_examples=25)
"""For properties whose examples load networks (a tenth of a second each)."""

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**300, max_value=10**310)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
"""Anything JSON can hold, with NaN, infinities (json writes and reads them) and ints
beyond float's range."""

NESTED_TOO_DEEP = b"[" * 100_000
NUMBER_TOO_LONG = b"1" * 5000
"""Two texts json.loads fails on with other errors than JSONDecodeError (RecursionError,
ValueError of Python's integer string limit): every JSON file's property tries them."""


def jsonTexts() -> st.SearchStrategy[bytes]:
    """The bytes of a file meant to hold JSON: JSON values, broken text, binary noise,
    and the two texts json.loads fails on in other ways."""
    return st.one_of(JSON_VALUES.map(lambda v: json.dumps(v).encode()),
                     st.text(max_size=40).map(str.encode), st.binary(max_size=60),
                     st.sampled_from([NESTED_TOO_DEEP, NUMBER_TOO_LONG, b"", b"\xff\xfe"]))


def damaged(content: bytes) -> st.SearchStrategy[bytes]:
    """`content` cut short, with bytes flipped or overwritten, or emptied."""
    n = len(content)
    truncated = st.integers(0, n - 1).map(lambda k: content[:k])
    flipped = st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 255)), min_size=1, max_size=4).map(
        lambda flips: _flip(content, flips))
    zeroed = st.tuples(st.integers(0, n - 1), st.integers(1, 64)).map(
        lambda span: content[:span[0]] + bytes(min(span[1], n - span[0])) + content[span[0] + span[1]:])
    return st.one_of(truncated, flipped, zeroed, st.just(b""))


def _flip(content: bytes, flips) -> bytes:
    data = bytearray(content)
    for at, mask in flips:
        data[at] ^= mask
    return bytes(data)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def assertNames(error: BaseException, path) -> None:
    """The project's error names the file."""
    assert str(path) in str(error), str(error)


def readOrNamedError(path, content: bytes, read, error=storage.RunFileError):
    """Write `content` to `path` and return what `read()` makes of it, or None where it
    raises `error`, after checking that the error names the file."""
    path.write_bytes(content)
    try:
        return read()
    except error as raised:
        assertNames(raised, path)
        assert "File not found" not in str(raised)
        return None


# -- what a person types ------------------------------------------------------------------
MOVE_STRINGS = st.one_of(st.text(alphabet="1234567", max_size=45), st.text(alphabet="0123456789 x-", max_size=12),
                         st.text(max_size=12))


@FUZZ
@given(MOVE_STRINGS)
def test_a_move_string_gives_its_position_or_a_ValueError_naming_it(moves):
    try:
        state = GameState.fromMoves(moves)
    except ValueError as error:
        assert repr(moves) in str(error)
        return
    assert state.stones == len(moves) and set(moves) <= set("1234567")


@st.composite
def positions(draw) -> GameState:
    """A position of a legal game (maybe finished), from random legal columns."""
    state = GameState.initial()
    for column in draw(st.lists(st.integers(0, 6), max_size=42)):
        action = state.actionForColumn(column)
        if action is None:
            break
        state = state.takeAction(action)[0]
    return state


TYPED = st.one_of(st.integers(-3, 10).map(str), st.text(max_size=8), st.just("9" * 5000),
                  st.sampled_from([" 4 ", "4\n", "٣", "+3", "3.0", "1_0", "0x3", "\x00"]))


@FUZZ
@given(positions(), TYPED)
def test_a_typed_column_gives_a_legal_action_or_a_message(state, entry):
    action, message = parseColumn(entry, state)
    if action is None:
        assert isinstance(message, str) and message
    else:
        assert message is None and action in state.allowedActions


# -- config values and config.json files --------------------------------------------------
FIELDS = list(DEFAULT.as_dict())


@FUZZ
@given(st.sampled_from(FIELDS), JSON_VALUES)
@example("CPUCT", 10**400)
def test_a_config_value_makes_a_config_that_round_trips_or_a_ConfigError_naming_the_field(name, value):
    try:
        cfg = DEFAULT.replace(**{name: value})
    except ConfigError as error:
        assert name in str(error)
        return
    assert Config.from_dict(json.loads(cfg.to_json())) == cfg
    assert Memory(cfg.MEMORY_SIZE).ltmemory.maxlen == cfg.MEMORY_SIZE


@st.composite
def configFiles(draw) -> bytes:
    """A config.json: the default's with one value changed or one key added or
    dropped, or any JSON text or bytes."""
    values = DEFAULT.as_dict()
    kind = draw(st.sampled_from(["change", "add", "drop", "text"]))
    if kind == "text":
        return draw(jsonTexts())
    name = draw(st.sampled_from(FIELDS))
    if kind == "change":
        values[name] = draw(JSON_VALUES)
    elif kind == "add":
        values[draw(st.text(max_size=8))] = draw(JSON_VALUES)
    else:
        del values[name]
    return json.dumps(values).encode()


@FUZZ
@given(configFiles())
@example(NESTED_TOO_DEEP)
@example(NUMBER_TOO_LONG)
def test_a_config_file_gives_a_config_or_a_ConfigError_naming_it(folder, content):
    path = folder / "config.json"
    readOrNamedError(path, content, lambda: Config.from_json_file(path), ConfigError)


# -- checkpoint and metrics files ---------------------------------------------------------
@st.composite
def checkpointFiles(draw) -> bytes:
    """checkpoint.json: its three entries with any values, a valid one damaged, or any
    JSON text or bytes."""
    valid = json.dumps({"iteration": 3, "best_player_version": 2, "memory_iteration": 3}).encode()
    kind = draw(st.sampled_from(["entries", "damaged", "text"]))
    if kind == "entries":
        keys = ["iteration", "best_player_version", "memory_iteration"]
        return json.dumps({key: draw(JSON_VALUES) for key in keys if draw(st.booleans())}).encode()
    return draw(damaged(valid) if kind == "damaged" else jsonTexts())


@FUZZ
@given(checkpointFiles())
@example(NESTED_TOO_DEEP)
@example(NUMBER_TOO_LONG)
def test_a_checkpoint_file_gives_a_valid_checkpoint_or_a_RunFileError_naming_it(folder, content):
    checkpoint = readOrNamedError(storage.checkpoint_path(folder), content, lambda: runs.readCheckpoint(folder))
    assert checkpoint is None or runs.checkpointProblem(checkpoint) is None


ROW = {"iteration": 2, "best_player_version": 1, "loss": 0.5, "promoted": False,
       "scores": {"best_player": 1, "current_player": 1, "drawn": 0}, "seconds": {"selfplay": 1.5, "save": 0.1}}


@st.composite
def metricsFiles(draw) -> bytes:
    """metrics.jsonl: rows with one entry changed, valid lines damaged, or any JSON
    lines or bytes."""
    kind = draw(st.sampled_from(["rows", "damaged", "lines"]))
    valid = "".join(json.dumps({**ROW, "iteration": i}) + "\n" for i in (1, 2)).encode()
    if kind == "rows":
        row = dict(ROW)
        row[draw(st.sampled_from([*ROW, "other"]))] = draw(JSON_VALUES)
        return valid + (json.dumps(row) + "\n").encode()
    if kind == "damaged":
        return draw(damaged(valid))
    return b"\n".join(draw(st.lists(jsonTexts(), max_size=3)))


@FUZZ
@given(metricsFiles())
@example(NESTED_TOO_DEEP)
@example(NUMBER_TOO_LONG)
def test_a_metrics_file_gives_rows_training_reads_or_a_RunFileError_naming_it(folder, content):
    rows = readOrNamedError(storage.metrics_path(folder), content, lambda: runs.readMetrics(folder))
    if rows is None:
        return
    assert len(runs.trainingHours(rows)) == len(rows)
    assert runs.promotionHours(rows)[1] == (0, 0.0)


# -- memory files -------------------------------------------------------------------------
DTYPES = st.sampled_from(["int8", "int64", "uint8", "float16", "float32", "float64", "bool", "complex64", "U3", "S2"])
FIELDS_ON_DISK = {"board": ((CELLS,), "int8"), "playerTurn": ((), "int8"), "AV": ((CELLS,), "float32"),
                  "value": ((), "float32"), "q": ((), "float32")}
"""What a memory file holds (memory.py): array -> (shape of a row, dtype)."""


@st.composite
def memoryArrays(draw) -> dict[str, np.ndarray]:
    """The arrays of a memory file: mostly each field, of its shape and dtype; now and
    then one missing, of another shape or dtype, with values a memory holds or any of
    its dtype."""
    rows = draw(st.integers(0, 4))
    arrays = {}
    for name, (shape, dtype) in FIELDS_ON_DISK.items():
        if not draw(st.integers(0, 19)):
            continue
        if not draw(st.integers(0, 9)):
            shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=5))
        else:
            shape = (rows, *shape)
        dtype = dtype if draw(st.integers(0, 2)) else draw(DTYPES)
        arrays[name] = draw(hnp.arrays(dtype, shape, elements=_elements(name, dtype) if draw(st.booleans()) else None))
    if draw(st.booleans()):
        arrays[draw(st.text(alphabet="abcxyz", min_size=1, max_size=4))] = np.zeros(2)
    return arrays


def _elements(name: str, dtype: str):
    """Values a memory's field holds, in `dtype` (None: any of the dtype)."""
    kind = np.dtype(dtype).kind
    if kind not in "if":
        return None
    if name in ("board", "value"):
        return st.sampled_from([0, 1, -1])
    if name == "playerTurn":
        return st.sampled_from([1, -1])
    return st.floats(0 if name == "AV" else -1, 1, width=8 * np.dtype(dtype).itemsize) if kind == "f" else None


def _npz(arrays: dict[str, np.ndarray], compressed: bool) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def memory_file(folder) -> bytes:
    """The bytes of a memory file of a few positions, as training writes it."""
    memory, state = Memory(50), GameState.initial()
    for column in (3, 3, 2, 4):
        memory.commit_stmemory(lambda s, av: [(s, av)], state, np.full(CELLS, 1 / 7, dtype=np.float32), 0.5)
        state = state.takeAction(state.actionForColumn(column))[0]
    memory.setResult(state, -1.0)
    memory.commit_ltmemory()
    path = folder / "valid.npz"
    memory.save(path)
    return path.read_bytes()


@settings(FUZZ, max_examples=200)
@given(st.data())
def test_a_memory_file_gives_a_memory_or_a_RunFileError_naming_it(folder, memory_file, data):
    content = data.draw(st.one_of(st.builds(_npz, memoryArrays(), st.booleans()), st.builds(_npz, memoryArrays(),
                                  st.booleans()), damaged(memory_file), st.binary(max_size=100),
                                  st.just(_npz({"board": np.array([None, 1], dtype=object)}, False))))
    path = storage.memory_path(folder, 1)
    path.parent.mkdir(exist_ok=True)
    memory = readOrNamedError(path, content, lambda: Memory.load(path, 100))
    for row in [] if memory is None else memory.ltmemory:
        assert row["state"].playerTurn in (1, -1) and row["value"] in (-1.0, 0.0, 1.0) and -1 <= row["q"] <= 1
        assert row["AV"].shape == (CELLS,) and ((row["AV"] >= 0) & (row["AV"] <= 1)).all()


# -- model files --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_file(tiny_model, folder) -> bytes:
    path = folder / "saved.keras"
    storage.save_model(tiny_model.model, path)
    return path.read_bytes()


def _zipOf(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


@FEW
@given(st.data())
def test_a_model_file_loads_or_raises_a_RunFileError_naming_it(folder, model_file, data):
    members = zipfile.ZipFile(io.BytesIO(model_file))
    content = data.draw(st.one_of(
        damaged(model_file), st.binary(max_size=200),
        st.dictionaries(st.sampled_from(members.namelist() + ["other.txt"]),
                        st.sampled_from([b"", b"{}", b"not json"]) | st.just(members.read("config.json")),
                        max_size=3).map(_zipOf)))
    path = folder / "version0001.keras"
    model = readOrNamedError(path, content, lambda: storage.load_model(path))
    assert model is None or len(model.get_weights()) > 0
