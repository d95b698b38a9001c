"""What the agent thought (thinking.py): the table, its one-line summary, the
narration of a typed game."""

import math

import pytest

import thinking
from agent import Agent
from game import GameState, columnOf


@pytest.fixture
def agent(tiny_cfg, tiny_model):
    return Agent("agent", 84, 42, 4, tiny_cfg.CPUCT, tiny_model, tiny_cfg)


def test_thinkingTable_covers_the_legal_columns_with_the_visit_shares_as_policy(agent):
    state = GameState.fromMoves("111111")
    agent.MCTSsimulations = 20
    action, pi, value, nn_value = agent.act(state, 0)
    rows = thinking.thinkingTable(agent, pi)
    assert [row["column"] for row in rows] == [2, 3, 4, 5, 6, 7]
    assert [row["action"] for row in rows] == state.allowedActions
    assert math.isclose(sum(row["policy"] for row in rows), 1.0)
    assert sum(row["N"] for row in rows) == 20
    for row in rows:
        assert math.isclose(row["policy"], row["N"] / 20)  # PUCT: the policy is the visit shares
        assert math.isclose(row["U"], agent.cpuct * row["P"] * math.sqrt(20) / (1 + row["N"]))
        assert (row["net_after"] is None) == (row["N"] == 0)
    chosen = next(row for row in rows if row["action"] == action)
    assert chosen["N"] == max(row["N"] for row in rows) and math.isclose(chosen["Q"], value)
    text = thinking.thinkingText(thinking.Thinking(action, rows, value, nn_value, 20))
    assert text.count("<- played") == 1 and f"plays column {columnOf(action) + 1}" in text


def test_thinkingTable_before_any_search_says_so(agent):
    with pytest.raises(ValueError, match="has not searched"):
        thinking.thinkingTable(agent, None)


def test_with_gumbel_the_policy_shown_is_the_improved_one(tiny_cfg, tiny_model):
    cfg = tiny_cfg.replace(ROOT_SEARCH="gumbel", GUMBEL_SAMPLED_ACTIONS=16)
    agent = Agent("agent", 84, 42, 32, cfg.CPUCT, tiny_model, cfg)
    action, pi, value, nn_value = agent.act(GameState.fromMoves("44"), 0)
    rows = thinking.thinkingTable(agent, pi)
    assert [row["policy"] for row in rows] == [pi[row["action"]] for row in rows]
    assert math.isclose(sum(row["policy"] for row in rows), 1.0)
    assert any(not math.isclose(row["policy"], row["N"] / 32) for row in rows)  # not the visit shares


def test_the_thinking_says_how_many_visits_came_from_the_reused_tree(agent):
    agent.MCTSsimulations = 30
    first = GameState.fromMoves("44")
    action, pi, value, nn_value = agent.act(first, 0)
    fresh = thinking.Thinking.of(agent, action, pi, value, nn_value)
    assert fresh.visits == 30 and fresh.reused == 0 and fresh.simulations == 30
    reply = next(a for a in first.takeAction(action)[0].allowedActions)
    second = first.takeAction(action)[0].takeAction(reply)[0]
    kept = sum(edge.N for _, edge in agent.mcts.tree[second.id].edges) if second.id in agent.mcts.tree else 0
    action, pi, value, nn_value = agent.act(second, 0)
    reused = thinking.Thinking.of(agent, action, pi, value, nn_value)
    assert reused.visits == 30 + kept and reused.reused == kept
    line = thinking.thinkingLine(reused)
    assert f"of {30 + kept} visits (30 simulations this move, {kept} kept from the previous move's tree)" in line
    assert "this move ran" not in thinking.thinkingHtml(reused) and "(30 simulations this move" in \
        thinking.thinkingHtml(reused)
    assert "kept from the search of the previous move" in thinking.thinkingHtml(reused)
