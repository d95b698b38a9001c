"""Memory: capacity, mirrored positions, results from each player's point of view,
.npz files that never hold pickle and that fail loudly when damaged."""

import numpy as np
import pytest

from config import Config
from game import Game, GameState
from loss import qWeights
from memory import Memory, MergedRows, mergedRows
from storage import RunFileError

X_WINS = "4455667"  # X (player 1) builds 4-5-6-7 on the bottom row and wins on move 7


def _one_hot(action):
    pi = np.zeros(42)
    pi[action] = 1.0
    return pi


def _play(moves: str, memory: Memory) -> GameState:
    """Play a column string, committing each position (before its move) with a one-hot
    search policy; returns the final position."""
    state = GameState.initial()
    for char in moves:
        action = state.actionForColumn(int(char) - 1)
        memory.commit_stmemory(Game.identities, state, _one_hot(action))
        state, _, _ = state.takeAction(action)
    return state


def _finished_game(moves: str = X_WINS, size: int = 1000) -> Memory:
    game = Memory(size)
    final = _play(moves, game)
    game.setResult(final, final.value[0])
    return game


def test_memory_size_bounds_long_term_memory():
    memory = Memory(5)
    assert memory.ltmemory.maxlen == 5
    game = _finished_game()
    newest = [entry["id"] for entry in game.stmemory][-5:]
    memory.commitGame(game)
    assert len(memory) == 5
    assert [entry["id"] for entry in memory.ltmemory] == newest


def test_commit_stmemory_stores_the_position_and_its_mirror():
    memory = Memory(100)
    state = GameState.fromMoves("112")  # X: columns 1 and 2, O: column 1; O to move
    pi = np.zeros(42)
    pi[state.actionForColumn(0)] = 0.75
    pi[state.actionForColumn(3)] = 0.25
    memory.commit_stmemory(Game.identities, state, pi)
    original, mirror = memory.stmemory
    assert original["id"] == state.id and original["playerTurn"] == -1
    assert np.array_equal(original["board"], state.board) and np.array_equal(original["AV"], pi)
    expected = GameState.fromMoves("776")
    assert mirror["id"] == expected.id and mirror["playerTurn"] == -1
    assert mirror["AV"][expected.actionForColumn(6)] == 0.75
    assert mirror["AV"][expected.actionForColumn(3)] == 0.25
    assert mirror["AV"].sum() == 1.0
    assert len(memory) == 0  # nothing reaches long-term memory before the game ends


def test_setResult_gives_each_position_the_result_for_its_player_to_move():
    game = Memory(1000)
    final = _play(X_WINS, game)
    assert final.isEndGame and final.playerTurn == -1 and final.value[0] == -1  # O to move, O has lost
    game.setResult(final, final.value[0])
    assert len(game.stmemory) == 2 * len(X_WINS)
    for entry in game.stmemory:
        # X won: +1 wherever X is to move, -1 wherever O is to move.
        assert entry["value"] == (1 if entry["playerTurn"] == 1 else -1)
    assert {entry["playerTurn"] for entry in game.stmemory} == {1, -1}


def test_setResult_of_a_draw_is_zero_everywhere():
    game = Memory(1000)
    final = _play("1234", game)
    game.setResult(final, 0)
    assert all(entry["value"] == 0 for entry in game.stmemory)


def test_commitGame_moves_the_game_and_clears_it():
    memory = Memory(1000)
    game = _finished_game()
    ids = [entry["id"] for entry in game.stmemory]
    memory.commitGame(game)
    assert [entry["id"] for entry in memory.ltmemory] == ids
    assert len(game.stmemory) == 0 and game.stmemory.maxlen == 1000


def test_commit_ltmemory_and_clear_stmemory():
    memory = _finished_game()
    count = len(memory.stmemory)
    memory.commit_ltmemory()
    assert len(memory) == count and len(memory.stmemory) == 0
    _play("12", memory)
    memory.clear_stmemory()
    assert len(memory.stmemory) == 0 and len(memory) == count


def test_save_load_round_trip(tmp_path):
    memory = Memory(1000)
    memory.commitGame(_finished_game())
    memory.commitGame(_finished_game("1234"))  # an unfinished game: all values 0
    path = tmp_path / "memory" / "memory0003.npz"
    memory.save(path)
    loaded = Memory.load(path, 1000)
    assert len(loaded) == len(memory)
    for saved, back in zip(memory.ltmemory, loaded.ltmemory):
        assert np.array_equal(back["board"], saved["board"])
        assert np.array_equal(back["AV"], saved["AV"])
        assert back["value"] == saved["value"] and back["playerTurn"] == saved["playerTurn"]
        assert back["id"] == saved["id"] and back["state"].id == saved["state"].id
    assert [p.name for p in path.parent.iterdir()] == ["memory0003.npz"]


def test_load_into_a_smaller_memory_keeps_the_newest(tmp_path):
    memory = Memory(1000)
    memory.commitGame(_finished_game())
    path = tmp_path / "memory0001.npz"
    memory.save(path)
    assert [e["id"] for e in Memory.load(path, 4).ltmemory] == [e["id"] for e in memory.ltmemory][-4:]


def test_empty_memory_round_trip(tmp_path):
    path = tmp_path / "memory0000.npz"
    Memory(10).save(path)
    assert len(Memory.load(path, 10)) == 0


def _arrays(rows: int = 3) -> dict:
    return {"board": np.zeros((rows, 42), np.int8), "playerTurn": np.ones(rows, np.int8),
            "AV": np.full((rows, 42), 1 / 42, np.float32), "value": np.zeros(rows, np.float32)}


def test_well_formed_arrays_load(tmp_path):
    path = tmp_path / "memory0001.npz"
    np.savez(path, **_arrays())
    assert len(Memory.load(path, 10)) == 3


class _Payload:
    """Unpickling this writes a marker file: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickled_object_array_is_refused_and_never_unpickled(tmp_path):
    path = tmp_path / "memory0001.npz"
    marker = tmp_path / "code_ran"
    arrays = _arrays(1)
    arrays["board"] = np.array([_Payload(marker)], dtype=object)
    np.savez(path, **arrays)
    with pytest.raises(RunFileError, match="pickle") as info:
        Memory.load(path, 10)
    assert str(path) in str(info.value)
    assert not marker.exists()
    with np.load(path, allow_pickle=True) as data:  # the payload is live: loading it unsafely runs it
        data["board"]
    assert marker.exists()


def _damaged(tmp_path, kind: str):
    path = tmp_path / "memory0002.npz"
    if kind == "truncated":
        memory = Memory(1000)
        memory.commitGame(_finished_game())
        memory.save(path)
        content = path.read_bytes()
        path.write_bytes(content[: len(content) // 2])
    elif kind == "garbage":
        path.write_bytes(np.random.default_rng(1).bytes(3000))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "missing array":
        arrays = _arrays()
        del arrays["AV"]
        np.savez(path, **arrays)
    elif kind == "wrong board shape":
        np.savez(path, **{**_arrays(), "board": np.zeros((3, 41), np.int8)})
    elif kind == "wrong value length":
        np.savez(path, **{**_arrays(), "value": np.zeros(2, np.float32)})
    elif kind == "floating disc":
        board = np.zeros((3, 42), np.int8)
        board[0, 0] = 1  # a disc on the top row above empty cells
        np.savez(path, **{**_arrays(), "board": board})
    elif kind == "bad playerTurn":
        np.savez(path, **{**_arrays(), "playerTurn": np.array([1, 0, 1], np.int8)})
    elif kind == "not found":
        pass
    return path


@pytest.mark.parametrize("kind", ["truncated", "garbage", "empty", "missing array", "wrong board shape",
                                  "wrong value length", "floating disc", "bad playerTurn", "not found"])
def test_damaged_file_gives_RunFileError_naming_it(tmp_path, kind):
    path = _damaged(tmp_path, kind)
    with pytest.raises(RunFileError) as info:
        Memory.load(path, 1000)
    assert str(path) in str(info.value)
    assert "pickle" not in str(info.value)  # a damaged file is not reported as a pickle


def test_loading_refuses_policies_and_results_out_of_range(tmp_path):
    state = GameState.initial()
    good = {"board": np.zeros((1, 42), np.int8), "playerTurn": np.ones(1, np.int8),
            "AV": np.full((1, 42), 1 / 7, np.float32), "value": np.ones(1, np.float32)}
    for name, bad, message in [("AV", np.full((1, 42), np.nan, np.float32), "outside"),
                               ("value", np.full(1, 0.5, np.float32), "other than")]:
        path = tmp_path / f"bad_{name}.npz"
        np.savez(path, **{**good, name: bad})
        with pytest.raises(RunFileError, match=message):
            Memory.load(path, 10)
    np.savez(tmp_path / "good.npz", **good)
    assert Memory.load(tmp_path / "good.npz", 10).ltmemory[0]["state"].id == state.id


def test_each_position_keeps_the_search_value_and_mixes_it_into_the_value_target(tiny_model):
    memory = Memory(100)
    state = GameState.fromMoves("4")
    memory.commit_stmemory(Game.identities, state, _one_hot(state.actionForColumn(3)), 0.4)
    memory.setResult(state, -1.0)  # the player to move in `state` (O) lost
    rows = list(memory.stmemory)
    assert [row["q"] for row in rows] == [0.4, 0.4] and [row["value"] for row in rows] == [-1.0, -1.0]
    _, z_only = tiny_model.trainingData(rows)
    _, mixed = tiny_model.trainingData(rows, qWeight=0.25)
    np.testing.assert_allclose(z_only["value_head"], [-1.0, -1.0])
    np.testing.assert_allclose(mixed["value_head"], [0.75 * -1.0 + 0.25 * 0.4] * 2)


def test_an_opening_takes_its_own_q_weight_and_later_positions_the_runs(tiny_model):
    states = [GameState.fromMoves(moves) for moves in ("4", "4433", "443322")]  # 1, 4 and 6 stones
    rows = [{"board": state.board, "state": state, "id": state.id, "AV": _one_hot(state.allowedActions[0]),
             "value": -1.0, "q": 0.5} for state in states]
    cfg = Config(VALUE_TARGET_Q_WEIGHT=0.25, OPENING_STONES=5, VALUE_TARGET_Q_WEIGHT_OPENING=1.0)
    np.testing.assert_allclose(qWeights(rows, cfg), [1.0, 1.0, 0.25])
    np.testing.assert_allclose(qWeights(rows, Config(VALUE_TARGET_Q_WEIGHT=0.25)), [0.25] * 3)  # OPENING_STONES 0
    _, targets = tiny_model.trainingData(rows, qWeights(rows, cfg))
    np.testing.assert_allclose(targets["value_head"], [0.5, 0.5, 0.75 * -1.0 + 0.25 * 0.5])


def test_without_a_search_value_q_is_the_result_and_survives_a_round_trip(tmp_path):
    memory = Memory(1000)
    memory.commitGame(_finished_game())
    path = tmp_path / "memory0001.npz"
    memory.save(path)
    assert [row["q"] for row in Memory.load(path, 1000).ltmemory] == [row["value"] for row in memory.ltmemory]
    np.savez(tmp_path / "old.npz", **_arrays())  # a file from before q existed
    assert [row["q"] for row in Memory.load(tmp_path / "old.npz", 10).ltmemory] == [0.0] * 3


def test_merging_duplicates_keeps_one_row_per_position_with_averaged_targets():
    memory = Memory(1000)
    for moves in ("4444", "4343"):  # both games start 4, so the openings repeat
        game = Memory(1000)
        final = _play(moves, game)
        game.setResult(final, 1.0)
        memory.commitGame(game)
    rows = list(memory.ltmemory)
    merged = mergedRows(rows)
    assert len({row["id"] for row in merged}) == len(merged) == len({row["id"] for row in rows})
    empty = [row for row in rows if row["id"] == GameState.initial().id]
    assert len(empty) == 4  # two games, each with its mirror
    [merged_empty] = [row for row in merged if row["id"] == GameState.initial().id]
    np.testing.assert_allclose(merged_empty["AV"], np.mean([row["AV"] for row in empty], axis=0))
    assert merged_empty["value"] == pytest.approx(np.mean([row["value"] for row in empty]))
    after_one = [row for row in rows if row["id"] == GameState.fromMoves("4").id]
    # replies: column 4 (cell 31) twice, column 3 (cell 37) and, in its mirror image, column 5 (cell 39)
    assert sorted(int(np.flatnonzero(row["AV"])[0]) for row in after_one) == [31, 31, 37, 39]
    [merged_after_one] = [row for row in merged if row["id"] == GameState.fromMoves("4").id]
    np.testing.assert_allclose(merged_after_one["AV"][[31, 37, 39]], [0.5, 0.25, 0.25])


def test_merged_rows_read_in_any_order_are_those_merged_at_once():
    memory = Memory(1000)
    for moves in ("4444", "4343", "4433", "4343"):
        game = Memory(1000)
        game.setResult(_play(moves, game), 1.0)
        memory.commitGame(game)
    rows = list(memory.ltmemory)
    eager, lazy = mergedRows(rows), MergedRows(rows)
    assert len(lazy) == len(eager) < len(rows)
    for i in np.random.default_rng(0).permutation(len(lazy)):
        assert lazy[i].keys() == eager[i].keys()
        for key, value in eager[i].items():
            np.testing.assert_array_equal(lazy[i][key], value)
        assert lazy[i] is lazy[i]  # a merged position is averaged once
