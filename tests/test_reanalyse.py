"""Reanalyse (REANALYSE_POSITIONS): memory rows' targets refreshed by a new search of the
best network before retraining; the game's result stays."""

import numpy as np
import pytest

import funcs
from config import DEFAULT, STRONG, ConfigError
from game import CELLS
from helpers import randomPositions
from memory import Memory
from test_funcs import makeAgent, tinyRunConfig


def _memory(states, marker: float = 9.0) -> Memory:
    """A memory of `states` whose targets are markers no search gives: AV all
    `marker`, q = `marker`, value alternating 1 / -1."""
    memory = Memory(1000)
    for i, state in enumerate(states):
        memory.ltmemory.append({"state": state, "board": state.board, "id": state.id, "playerTurn": state.playerTurn,
                                "AV": np.full(CELLS, marker, dtype=np.float32), "q": marker,
                                "value": 1.0 if i % 2 else -1.0})
    return memory


def test_none_is_the_tutorials_default_and_a_wrong_count_is_named():
    assert DEFAULT.REANALYSE_POSITIONS == 0 and STRONG.REANALYSE_POSITIONS == 0
    with pytest.raises(ConfigError, match=r"REANALYSE_POSITIONS \(300\) must not exceed MEMORY_SIZE \(256\)"):
        DEFAULT.replace(MEMORY_SIZE=256, BATCH_SIZE=256, MIN_MEMORY_SIZE=256, REANALYSE_POSITIONS=300)
    with pytest.raises(ConfigError, match="REANALYSE_POSITIONS"):
        DEFAULT.replace(REANALYSE_POSITIONS=-1)


def test_the_drawn_rows_get_the_searchs_targets_and_keep_their_results(tiny_model, tiny_cfg):
    memory = _memory(randomPositions(12, seed=3))
    agent = makeAgent("best_player", tiny_model, tiny_cfg, seed=4, sims=8)
    rows = funcs.reanalyse(agent, memory, 5)
    assert len(rows) == 5 and len({id(row) for row in rows}) == 5
    for row in rows:
        legal = row["state"].allowedActions
        assert row["AV"].dtype == np.float32 and row["AV"].sum() == pytest.approx(1.0, abs=1e-5)
        assert np.all(row["AV"][np.setdiff1d(np.arange(CELLS), legal)] == 0)
        assert -1.0 <= row["q"] <= 1.0
        fresh = makeAgent("fresh", tiny_model, tiny_cfg, seed=11, sims=8)
        _, pi, value, _ = fresh.act(row["state"], tau=0)
        np.testing.assert_allclose(row["AV"], pi, atol=1e-6)
        assert row["q"] == pytest.approx(value)
    untouched = [row for row in memory.ltmemory if not any(row is done for done in rows)]
    assert len(untouched) == 7 and all(row["q"] == 9.0 and np.all(row["AV"] == 9.0) for row in untouched)
    assert [row["value"] for row in memory.ltmemory] == [1.0 if i % 2 else -1.0 for i in range(12)]


def test_an_iteration_reanalyses_before_retraining_and_times_it(tmp_path, tiny_cfg, monkeypatch):
    order = []
    reanalyse, replay = funcs.reanalyse, funcs.Agent.replay
    monkeypatch.setattr(funcs, "reanalyse", lambda *args: order.append("reanalyse") or reanalyse(*args))
    monkeypatch.setattr(funcs.Agent, "replay", lambda *args, **kw: order.append("replay") or replay(*args, **kw))
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run", REANALYSE_POSITIONS=16)
    rows = funcs.train(2, cfg, progress=False, say=lambda _: None)
    assert order == ["reanalyse", "replay"] * 2
    assert all(row["seconds"]["reanalyse"] > 0 for row in rows)
    plain = funcs.train(1, tinyRunConfig(tiny_cfg, tmp_path / "plain"), progress=False, say=lambda _: None)
    assert "reanalyse" not in plain[0]["seconds"]

