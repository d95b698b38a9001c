"""The search (MCTS.py) and the agent's use of it, with the tiny real network.

Points of view: an edge's W and Q are for the player who chooses the edge (the
player to move at its in-node); a value given to backFill is for the player to move
at the leaf; Agent.act's value and NN value are for the player to move at the root.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import math
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import compiled
import game as game_module
import MCTS as mcts_module
from agent import Agent, runSerially, runTogether, simulationsWithin
from game import CELLS, GameState, columnOf
from MCTS import MCTS, Node, fewerCollections, legalPriors, reachableIds
from helpers import RowByRow
from model import Residual_CNN

PROJECT_ROOT = pathlib.Path(__file__).resolve().parent.parent


def make_agent(model, cfg, sims: int, seed: int = 0, logger=None) -> Agent:
    return Agent("tiny", 2 * CELLS, CELLS, sims, cfg.CPUCT, model, cfg, seed, logger)


def priors(state: GameState, weights: list[float]) -> np.ndarray:
    """Prior probabilities over the 42 actions: `weights` (one per legal move, in
    allowedActions order) normalised, 0 on illegal moves."""
    probs = np.zeros(CELLS)
    probs[state.allowedActions] = np.asarray(weights, dtype=float) / sum(weights)
    return probs


def uniform(state: GameState) -> np.ndarray:
    return priors(state, [1.0] * len(state.allowedActions))


def expanded_root(state: GameState, weights=None, cpuct: float = 1.0, **mcts_args) -> MCTS:
    """A search tree whose root (`state`) is expanded with the given prior weights
    (uniform by default) and network value 0, every edge made (as at a move's root)."""
    root = Node(state)
    mcts = MCTS(root, cpuct=cpuct, **mcts_args)
    probs = uniform(state) if weights is None else priors(state, weights)
    mcts.expandLeaf(root, probs, 0.0)
    root.allEdges()
    return mcts


def edge_for_column(node: Node, column: int):
    """The edge of the expanded `node` dropping a disc in `column` (0..6); every edge
    of the node is made first."""
    node.allEdges()
    return next(edge for action, edge in node.edges if action % 7 == column)


def root_visits(agent: Agent) -> int:
    return sum(edge.N for _, edge in agent.root.edges)


# -- tactics with the real (untrained) network ---------------------------------------------
@pytest.mark.parametrize(("moves", "winning_column"), [
    ("112233", 3),    # X completes the bottom row in column 4
    ("7112233", 3),   # O completes the bottom row in column 4
    ("121212", 0),    # X completes column 1
    ("1223433454", 3),  # X completes the rising diagonal with column 4's fourth disc
])
def test_takes_an_immediate_win(tiny_model, tiny_cfg, moves, winning_column):
    state = GameState.fromMoves(moves)
    agent = make_agent(tiny_model, tiny_cfg, sims=50)
    action, pi, value, _ = agent.act(state, tau=0)
    assert action == state.actionForColumn(winning_column)
    assert pi[action] == pi.max()
    assert value > 0.5  # the winning edge's Q, for the player to move


@pytest.mark.parametrize(("moves", "blocking_column"), [
    ("717263", 3),   # O holds columns 1-3 of the bottom row: X must play column 4
    ("21374", 4),    # X holds columns 2-4 of the bottom row (1 is O's): O must play column 5
])
def test_blocks_an_immediate_loss(tiny_model, tiny_cfg, moves, blocking_column):
    state = GameState.fromMoves(moves)
    for column in range(7):  # no win of its own for the player to move
        assert state.takeAction(state.actionForColumn(column))[1] == 0
    agent = make_agent(tiny_model, tiny_cfg, sims=200)
    action, *_ = agent.act(state, tau=0)
    assert action == state.actionForColumn(blocking_column)


# -- visit counts and tree reuse --------------------------------------------------------------
def test_root_visits_sum_to_the_simulations(tiny_model, tiny_cfg):
    state = GameState.fromMoves("44")
    agent = make_agent(tiny_model, tiny_cfg, sims=23)
    action, pi, value, nn_value = agent.act(state, tau=1)
    assert root_visits(agent) == agent.root.N == 23
    assert pi.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(pi)) <= set(state.allowedActions)
    assert action in state.allowedActions
    assert value == agent.mcts.tree[state.id].edges[state.allowedActions.index(action)][1].Q
    assert nn_value == agent.root.nn_value and -1 <= nn_value <= 1


def test_tree_reuse_keeps_the_subtree(tiny_model, tiny_cfg):
    sims = 120
    agent = make_agent(tiny_model, tiny_cfg, sims=sims)
    start = GameState.fromMoves("44")
    agent.act(start, tau=1)
    _, mine = max(agent.root.edges, key=lambda item: item[1].N)
    reply_action, reply = max(mine.outNode.edges, key=lambda item: item[1].N)
    node = reply.outNode
    before = {action: edge.N for action, edge in node.edges}
    assert sum(before.values()) > 0, "the reused node should carry statistics"
    old_nodes = list(agent.mcts.tree.values())
    subtree = reachableIds(node)
    assert 1 < len(subtree) < len(old_nodes)

    position = start.takeAction(mine.action)[0].takeAction(reply_action)[0]
    agent.act(position, tau=1)

    assert agent.root is node and agent.mcts.tree[position.id] is node
    assert root_visits(agent) == sum(before.values()) + sims
    assert all(edge.N >= before.get(action, 0) for action, edge in node.edges)
    tree = agent.mcts.tree
    assert subtree <= set(tree), "every node below the new root is kept"
    assert set(tree) == reachableIds(node), "the tree holds only what the new root reaches"
    assert start.id not in tree
    dropped = [old for old in old_nodes if old.id not in subtree]
    assert dropped and all(not old.edges and old.tree is None for old in dropped), "dropped nodes are unlinked"


def test_transpositions_share_a_node():
    mcts = expanded_root(GameState.initial())
    for path in ("12", "32"):
        node = mcts.root
        for char in path:
            node = edge_for_column(node, int(char) - 1).outNode
            if node.isLeaf():
                mcts.expandLeaf(node, uniform(node.state), 0.0)
    via_123 = edge_for_column(edge_for_column(edge_for_column(mcts.root, 0).outNode, 1).outNode, 2).outNode
    via_321 = edge_for_column(edge_for_column(edge_for_column(mcts.root, 2).outNode, 1).outNode, 0).outNode
    assert via_123 is via_321 is mcts.tree[GameState.fromMoves("123").id]


# -- backFill and selection ------------------------------------------------------------------------
def test_backfill_adds_the_value_from_each_choosers_point_of_view():
    mcts = expanded_root(GameState.initial())
    x_edge = edge_for_column(mcts.root, 3)            # chosen by X
    o_node = x_edge.outNode
    mcts.expandLeaf(o_node, uniform(o_node.state), 0.0)
    o_edge = edge_for_column(o_node, 2)                # chosen by O
    x_leaf = o_edge.outNode                            # X to move

    mcts.backFill(x_leaf, 0.6, [x_edge, o_edge])       # 0.6 for X
    assert (x_edge.N, x_edge.W, x_edge.Q) == (1, 0.6, 0.6)
    assert (o_edge.N, o_edge.W, o_edge.Q) == (1, -0.6, -0.6)

    mcts.expandLeaf(x_leaf, uniform(x_leaf.state), 0.0)
    x_edge2 = edge_for_column(x_leaf, 4)               # chosen by X
    o_leaf = x_edge2.outNode                           # O to move
    mcts.backFill(o_leaf, 0.2, [x_edge, o_edge, x_edge2])  # 0.2 for O
    assert (x_edge.N, x_edge.W) == (2, pytest.approx(0.4))
    assert x_edge.Q == pytest.approx(0.2)
    assert (o_edge.N, o_edge.W) == (2, pytest.approx(-0.4))
    assert (x_edge2.N, x_edge2.W, x_edge2.Q) == (1, -0.2, -0.2)
    assert (mcts.root.N, o_node.N, x_leaf.N) == (2, 2, 1)


def test_terminal_leaf_is_a_loss_for_its_player_to_move():
    state = GameState.fromMoves("112233")             # X wins in column 4
    weights = [0.01] * len(state.allowedActions)
    weights[3] = 1.0
    mcts = expanded_root(state, weights)
    leaf, value, done, breadcrumbs = mcts.moveToLeaf()
    assert [edge.action for edge in breadcrumbs] == [state.actionForColumn(3)]
    assert done and value == -1 and leaf.state.playerTurn == -1
    mcts.backFill(leaf, value, breadcrumbs)
    assert breadcrumbs[0].Q == 1.0                     # a sure win for X, who chose it


def test_first_simulation_follows_the_prior():
    state = GameState.initial()
    mcts = expanded_root(state, weights=[1, 1, 1, 1, 1, 1, 3])
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert breadcrumbs[0] is mcts.root.edges[-1][1]


@pytest.mark.parametrize("cpuct", [0.1, 1.0, 3.0])
def test_selection_maximises_q_plus_u(cpuct):
    mcts = expanded_root(GameState.initial(), cpuct=cpuct)
    edges = [edge for _, edge in mcts.root.edges]
    for edge, (n, w) in zip(edges, [(4, 2.0), (4, -1.0), (1, 0.9), (0, 0.0), (4, 0.0), (4, 0.0), (3, 0.0)]):
        edge.N, edge.W, edge.Q = n, w, (w / n if n else 0.0)
    mcts.root.N = sum(edge.N for edge in edges)
    u = [cpuct * np.sqrt(mcts.root.N) * edge.P / (1 + edge.N) for edge in edges]
    scores = [edge.Q + ui for edge, ui in zip(edges, u)]
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert breadcrumbs[0] is edges[int(np.argmax(scores))]


@pytest.mark.parametrize(("cpuct", "column"), [(0.1, 0), (1.0, 6), (2.0, 6)])
def test_cpuct_weighs_the_prior_against_the_value(cpuct, column):
    """Column 1 has the higher Q (0.5 against 0.3), column 7 the higher prior (0.8 against 0.2),
    both 10 visits: a small CPUCT follows the value, CPUCT 1 or more the prior."""
    mcts = expanded_root(GameState.initial(), weights=[0.2, 0, 0, 0, 0, 0, 0.8], cpuct=cpuct)
    edges = [edge for _, edge in mcts.root.edges]
    for edge, q in ((edges[0], 0.5), (edges[6], 0.3)):
        edge.N, edge.W, edge.Q = 10, 10 * q, q
    mcts.root.N = 20
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert breadcrumbs[0] is edges[column]


# -- edges made when first chosen ------------------------------------------------------------------
def test_expansion_makes_no_edge_and_orders_the_untried_moves_by_prior():
    state = GameState.initial()
    mcts = MCTS(Node(state), cpuct=1.0)
    mcts.expandLeaf(mcts.root, priors(state, [1, 3, 2, 3, 1, 0.5, 2]), 0.25)
    root = mcts.root
    assert root.edges == [] and not root.isLeaf() and root.nn_value == 0.25
    columns = [action % 7 for action in reversed(root.untried)]
    assert columns == [1, 3, 2, 6, 0, 4, 5]  # highest prior first; equal priors: the first listed
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert [edge.action % 7 for edge in breadcrumbs] == [1]
    assert [action % 7 for action, _ in root.edges] == [1] and len(root.untried) == 6
    root.allEdges()
    assert [action for action, _ in root.edges] == state.allowedActions and root.untried == []
    assert edge_for_column(root, 1) is breadcrumbs[0]


def test_all_edges_are_listed_left_to_right_like_the_legal_moves():
    state = GameState.fromMoves("4455")  # columns 4 and 5 hold two discs: cell order is not column order
    mcts = MCTS(Node(state), cpuct=1.0)
    mcts.expandLeaf(mcts.root, priors(state, [1, 2, 3, 4, 5, 6, 7]), 0.0)
    mcts.moveToLeaf()
    mcts.root.allEdges()
    assert [action for action, _ in mcts.root.edges] == state.allowedActions
    assert sorted(state.allowedActions) != state.allowedActions


def searched_leaves(state: GameState, simulations: int, allEdges: bool, moves: int = 1) -> tuple[list, int]:
    """The path of every simulation of a search from `state` whose evaluations are
    fixed pseudo-random numbers per position (priors without ties), with every
    edge made at expansion (`allEdges`, the tutorial's way) or when first chosen; and
    how many edges the tree holds at the end.  With `moves` > 1 the search plays on
    as self-play does: `simulations` per move with Dirichlet noise at the root, then
    the most visited move, the tree kept for the next move."""
    mcts = MCTS(Node(state), cpuct=1.5, epsilon=0.25, rng=np.random.default_rng(7))
    paths = []
    for move in range(simulations * moves):
        if move % simulations == 0 and move:
            _, edge = max(mcts.root.edges, key=lambda pair: (pair[1].N, -pair[0]))
            mcts.changeRoot(edge.outNode)
        if move % simulations == 0 and moves > 1 and not mcts.root.isLeaf():
            mcts.drawRootNoise()
        leaf, value, done, breadcrumbs = mcts.moveToLeaf()
        if not done:
            rng = np.random.default_rng(leaf.id % 2**32)
            probs = np.zeros(CELLS)
            probs[leaf.state.allowedActions] = rng.dirichlet([1.0] * len(leaf.state.allowedActions))
            value = float(rng.uniform(-1, 1))
            mcts.expandLeaf(leaf, probs.tolist(), value)
            if allEdges:
                leaf.allEdges()
        mcts.backFill(leaf, value, breadcrumbs)
        paths.append([edge.action for edge in breadcrumbs])
    return paths, sum(len(node.edges) for node in mcts.tree.values())


@pytest.mark.parametrize("moves", ["", "4453", "112233"])
def test_edges_made_when_chosen_search_exactly_as_all_edges_made(moves):
    state = GameState.fromMoves(moves)
    lazy, lazyEdges = searched_leaves(state, 400, allEdges=False)
    eager, eagerEdges = searched_leaves(state, 400, allEdges=True)
    assert lazy == eager
    assert lazyEdges < eagerEdges / 2


def test_edges_made_when_chosen_search_as_all_edges_made_with_noise_and_tree_reuse():
    lazy, _ = searched_leaves(GameState.fromMoves("44"), 60, allEdges=False, moves=6)
    eager, _ = searched_leaves(GameState.fromMoves("44"), 60, allEdges=True, moves=6)
    assert len(lazy) == 360 and lazy == eager


# -- Dirichlet noise ----------------------------------------------------------------------------
def noise_seen_during(agent: Agent, state: GameState, noise: bool) -> list:
    """Search one move and return the root noise in force at each leaf evaluation
    (root expansion excluded)."""
    seen = []

    def evaluate(states):
        if states[0].id != state.id:
            seen.append(agent.mcts.rootNoise)
        return agent.evaluateStates(states)

    runSerially(agent.actSteps(state, 1, noise), evaluate)
    return seen


def test_noise_is_drawn_once_per_move(tiny_model, tiny_cfg):
    agent = make_agent(tiny_model, tiny_cfg, sims=12)
    state = GameState.fromMoves("44")
    first = noise_seen_during(agent, state, noise=True)
    assert len(first) >= 10 and first[0] is not None
    assert all(drawn is first[0] for drawn in first)
    assert len(first[0]) == len(agent.root.edges) and first[0].sum() == pytest.approx(1.0)
    assert agent.mcts.epsilon == tiny_cfg.EPSILON

    _, mine = max(agent.root.edges, key=lambda item: item[1].N)
    reply_action, _ = max(mine.outNode.edges, key=lambda item: item[1].N)
    nxt = state.takeAction(mine.action)[0].takeAction(reply_action)[0]
    second = noise_seen_during(agent, nxt, noise=True)
    assert all(drawn is second[0] for drawn in second)
    assert second[0] is not first[0] and not np.allclose(second[0], first[0])


def test_no_noise_without_the_flag(tiny_model, tiny_cfg):
    agent = make_agent(tiny_model, tiny_cfg, sims=8)
    state = GameState.fromMoves("44")
    noise_seen_during(agent, state, noise=True)
    seen = noise_seen_during(agent, state, noise=False)
    assert seen and all(drawn is None for drawn in seen)
    assert agent.mcts.epsilon == 0.0
    agent.act(GameState.fromMoves("4"), tau=1)  # the default: no noise
    assert agent.mcts.rootNoise is None and agent.mcts.epsilon == 0.0


def test_gumbel_root_search_draws_no_dirichlet_noise(tiny_model, tiny_cfg):
    """Gumbel's root search explores through its Gumbel draws and never reads noisy root
    priors: self-play draws no Dirichlet noise for it."""
    cfg = tiny_cfg.replace(ROOT_SEARCH="gumbel", GUMBEL_SAMPLED_ACTIONS=4)
    agent = make_agent(tiny_model, cfg, sims=8)
    seen = noise_seen_during(agent, GameState.fromMoves("44"), noise=True)
    assert seen and all(drawn is None for drawn in seen)
    assert agent.mcts.epsilon == 0.0 and len(agent.root.edges) == 7


def test_change_root_draws_anew():
    mcts = expanded_root(GameState.initial(), epsilon=0.25, rng=np.random.default_rng(0))
    mcts.drawRootNoise()
    first = mcts.rootNoise
    child = edge_for_column(mcts.root, 3).outNode
    mcts.expandLeaf(child, uniform(child.state), 0.0)
    mcts.changeRoot(child)
    assert mcts.rootNoise is None
    mcts.drawRootNoise()
    assert mcts.rootNoise is not None and not np.allclose(mcts.rootNoise, first)


def test_noise_concentration_follows_alpha():
    """Dirichlet(alpha) over the 7 root moves: a small alpha puts nearly all the noise on one
    move, a large one spreads it evenly (the same generator seed for both)."""
    shares = {}
    for alpha in (0.03, 100.0):
        mcts = expanded_root(GameState.initial(), epsilon=0.25, alpha=alpha, rng=np.random.default_rng(3))
        mcts.drawRootNoise()
        shares[alpha] = np.asarray(mcts.rootNoise)
    assert np.isclose(shares[0.03].sum(), 1) and np.isclose(shares[100.0].sum(), 1)
    assert shares[0.03].max() > 0.9 and np.all(np.abs(shares[100.0] - 1 / 7) < 0.05)


def test_noise_steers_the_root_selection():
    # epsilon 1: the root priors are the noise alone, so the first simulation
    # follows the largest noise share, not the (strong) prior on column 1.
    mcts = expanded_root(GameState.initial(), [50, 1, 1, 1, 1, 1, 1], epsilon=1.0,
                         rng=np.random.default_rng(3))
    mcts.drawRootNoise()
    favourite = int(np.argmax(mcts.rootNoise))
    assert favourite != 0
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert breadcrumbs[0] is mcts.root.edges[favourite][1]


def test_noise_only_at_the_root():
    # The root's own priors favour column 7 and the noise column 1: the root follows the
    # noise (epsilon 1), the child its own priors (column 7), untouched by the noise.
    mcts = expanded_root(GameState.initial(), [1, 1, 1, 1, 1, 1, 50], epsilon=1.0)
    child = mcts.root.edges[0][1].outNode
    mcts.expandLeaf(child, priors(child.state, [1, 1, 1, 1, 1, 1, 50]), 0.0)
    mcts.drawRootNoise()
    mcts.rootNoise = np.array([0.94, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01])
    mcts.rootPriors = list(mcts.rootNoise)
    _, _, _, breadcrumbs = mcts.moveToLeaf()
    assert breadcrumbs == [mcts.root.edges[0][1], child.edges[-1][1]]
    assert breadcrumbs[1].action % 7 == 6


# -- the move choice from the visit counts -------------------------------------------------------
def agent_with_visits(model, cfg, visits: list[int], seed: int = 0, q: list[float] | None = None) -> Agent:
    """An agent whose root (the empty board) has these visits per column, each visited edge's Q from `q`
    (default 0.1 each)."""
    agent = make_agent(model, cfg, sims=1, seed=seed)
    agent.buildMCTS(GameState.initial())
    agent.mcts.expandLeaf(agent.root, uniform(agent.root.state), 0.0)
    agent.root.allEdges()
    for (_, edge), n, value in zip(agent.root.edges, visits, q or [0.1] * len(visits)):
        edge.N, edge.W, edge.Q = n, value * n, value if n else 0.0
    return agent


def test_get_av_is_a_float_distribution(tiny_model, tiny_cfg):
    visits = [1, 2, 3, 4, 5, 6, 7]
    agent = agent_with_visits(tiny_model, tiny_cfg, visits)
    actions = GameState.initial().allowedActions
    n = np.array(visits, dtype=float)
    for tau, expected in [(1, n / n.sum()), (0.5, n**2 / (n**2).sum()), (2, np.sqrt(n) / np.sqrt(n).sum())]:
        pi, values = agent.getAV(tau)
        assert pi.dtype == np.float64
        assert np.allclose(pi[actions], expected) and pi.sum() == pytest.approx(1.0)
        assert np.count_nonzero(pi) == len(actions)
    assert np.allclose(values[actions], [0.1] * 7)


def test_tau_zero_breaks_ties_at_random(tiny_model, tiny_cfg):
    visits = [3, 7, 1, 7, 2, 0, 5]
    tied = {GameState.initial().actionForColumn(c) for c in (1, 3)}
    chosen = set()
    for seed in range(20):
        agent = agent_with_visits(tiny_model, tiny_cfg, visits, seed)
        pi0, _ = agent.getAV(0)
        assert set(np.flatnonzero(pi0)) == tied and np.allclose(pi0[list(tied)], 0.5)
        pi, values = agent.getAV(1)
        action, value = agent.chooseAction(pi, values, 0)
        assert value == values[action]
        chosen.add(action)
    assert chosen == tied


def test_secure_child_plays_the_move_whose_value_held_over_the_most_visited(tiny_model, tiny_cfg):
    visits = [100, 900, 0, 50, 4, 0, 0]
    q = [0.3, 0.1, 0.0, 0.35, 0.9, 0.0, 0.0]
    columns = {}
    for a in (0.0, 1.0, 5.0):
        agent = agent_with_visits(tiny_model, tiny_cfg.replace(SECURE_CHILD=a), visits, q=q)
        pi, values = agent.getAV(1)
        action, value = agent.chooseAction(pi, values, 0)
        assert value == values[action]
        columns[a] = columnOf(action)
    # Columns from 0.  0: the most visited (1); 1: Q - 1/sqrt(N) is 0.20 / 0.067 / 0.21 / 0.40 for columns 0, 1,
    # 3, 4, the 4-visit column 4 first; 5: 0.3 - 0.5, 0.1 - 0.167, 0.35 - 0.707, 0.9 - 2.5: column 1's bound holds.
    assert columns == {0.0: 1, 1.0: 4, 5.0: 1}


def test_secure_child_never_plays_an_unvisited_move(tiny_model, tiny_cfg):
    agent = agent_with_visits(tiny_model, tiny_cfg.replace(SECURE_CHILD=1.0), [0, 0, 3, 0, 0, 0, 0],
                              q=[0.0, 0.0, -0.9, 0.0, 0.0, 0.0, 0.0])
    pi, values = agent.getAV(1)
    assert agent.chooseAction(pi, values, 0)[0] == agent.root.edges[2][0]
    for _, edge in agent.root.edges:
        edge.N = 0
    with pytest.raises(ValueError, match="no root move has been visited"):
        agent.chooseAction(pi, values, 0)


def test_chooseAction_samples_the_shares_sharpened_by_tau(tiny_model, tiny_cfg):
    agent = agent_with_visits(tiny_model, tiny_cfg, [2, 8, 0, 0, 0, 0, 0], seed=3)
    pi, values = agent.getAV(1)
    first, second = GameState.initial().actionForColumn(0), GameState.initial().actionForColumn(1)
    for tau, share in [(1, 0.8), (0.5, 64 / 68), (2, np.sqrt(8) / (np.sqrt(2) + np.sqrt(8)))]:
        picks = [agent.chooseAction(pi, values, tau)[0] for _ in range(4000)]
        assert set(picks) == {first, second}
        assert picks.count(second) / len(picks) == pytest.approx(share, abs=0.025)


# -- network outputs to priors ----------------------------------------------------------------------
def test_priors_from_huge_logits_are_finite():
    state = GameState.fromMoves("444444")  # column 4 full
    legal = state.allowedActions
    logits = np.full(CELLS, -1e4)
    logits[3] = 1e5                         # an illegal cell (column 4 is full)
    logits[legal[0]], logits[legal[1]] = 1e4, 1e4 - 1
    probs = np.array(legalPriors(logits.tolist(), legal))
    assert np.isfinite(probs).all() and probs.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(probs)) == {legal[0], legal[1]}
    assert probs[legal[0]] / probs[legal[1]] == pytest.approx(np.e)
    assert legalPriors(logits.tolist(), []) == [0.0] * CELLS  # a finished game: nothing is legal
    assert legalPriors([-math.inf] * CELLS, legal) == [0.0] * CELLS


def test_priors_are_a_softmax_over_the_legal_moves():
    states = [GameState.fromMoves(moves) for moves in ("", "444444", "1112223")]
    logits = np.random.default_rng(0).normal(size=(3, CELLS)).astype(np.float32)
    for row, state in zip(logits, states):
        legal = state.allowedActions
        probs = np.array(legalPriors(row.tolist(), legal))
        expected = np.exp(row[legal].astype(np.float64))
        np.testing.assert_allclose(probs[legal], expected / expected.sum(), rtol=1e-12)
        assert np.delete(probs, legal).tolist() == [0.0] * (CELLS - len(legal))


def test_get_preds_with_a_saturated_network(tiny_cfg):
    model = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), CELLS)
    head = model.model.get_layer("policy_head")
    head.set_weights([w * 1e4 for w in head.get_weights()])
    model.weightsChanged()
    state = GameState.fromMoves("4444443")
    _, logits = model.predict(model.convertToModelInput(state)[None])
    assert np.abs(logits).max() > 1e3
    value, probs, allowed = make_agent(model, tiny_cfg, sims=1).get_preds(state)
    assert allowed == state.allowedActions
    assert np.isfinite(probs).all() and probs.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(probs)) <= set(allowed)
    assert -1 <= value <= 1


# -- logging ----------------------------------------------------------------------------------------
@pytest.fixture
def logger():
    """A fresh logger of its own, handlers removed afterwards."""
    lg = logging.getLogger(f"test_mcts.{id(object())}")
    lg.propagate = False
    yield lg
    for handler in list(lg.handlers):
        lg.removeHandler(handler)


def test_search_log_is_written_when_enabled(tiny_model, tiny_cfg, logger):
    stream = io.StringIO()
    logger.addHandler(logging.StreamHandler(stream))
    logger.setLevel(logging.INFO)
    make_agent(tiny_model, tiny_cfg, sims=3, logger=logger).act(GameState.fromMoves("44"), tau=1)
    text = stream.getvalue()
    assert "tiny searches 3 simulations, X to move" in text
    for n in (1, 2, 3):
        assert f"=== simulation {n} ===" in text
    assert "  col     N       P   noise       Q       U     Q+U" in text
    assert "chosen: column" in text and "backfill column" in text
    assert "1 2 3 4 5 6 7" in text
    assert "searched" not in text  # no time limit, nothing to report
    limited = make_agent(tiny_model, tiny_cfg, sims=3, logger=logger)
    limited.moveSeconds = 10.0
    limited.act(GameState.fromMoves("44"), tau=1)
    assert "searched 3 simulations in " in stream.getvalue() and "(limit 10.00 s)" in stream.getvalue()


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.mark.parametrize("switch_off", ["disabled", "level"])
def test_nothing_is_formatted_when_the_log_is_off(tiny_model, tiny_cfg, logger, monkeypatch, switch_off):
    recorder = Recorder()
    logger.addHandler(recorder)
    if switch_off == "disabled":
        logger.setLevel(logging.INFO)
        logger.disabled = True
    else:
        logger.setLevel(logging.WARNING)

    def forbidden(*args, **kwargs):
        raise AssertionError("log text built while the log is off")

    monkeypatch.setattr(logger, "info", forbidden)
    agent = make_agent(tiny_model, tiny_cfg, sims=5, logger=logger)
    agent.act(GameState.fromMoves("44"), tau=1)
    assert recorder.records == []
    assert root_visits(agent) == 5


# -- Gumbel root search ----------------------------------------------------------------------------
def test_improved_policy_sums_to_one_and_prefers_the_higher_completed_q():
    logits = np.log(np.array([0.25, 0.25, 0.25, 0.25]))
    visits = np.array([4.0, 4.0, 4.0, 0.0])
    completed = mcts_module.completedQ(np.exp(logits), visits, np.array([0.5, -0.2, 0.1, 0.0]), nnValue=0.0)
    pi = mcts_module.improvedPolicy(logits, completed, visits, cVisit=50, cScale=0.1)
    assert pi.sum() == pytest.approx(1.0)
    assert pi[0] > pi[2] > pi[1]  # equal priors: ordered by Q
    assert completed[3] == pytest.approx((0.0 + 12 * (0.5 - 0.2 + 0.1) / 3) / 13)  # v_mix for the unvisited
    assert pi[3] == pytest.approx(np.exp(logits[3] + mcts_module.sigma(completed, visits, 50, 0.1)[3])
                                  / np.exp(logits + mcts_module.sigma(completed, visits, 50, 0.1)).sum())


def test_sigma_grows_with_visits_and_is_zero_for_equal_values():
    completed = np.array([0.2, -0.4, 0.6])
    few, many = (mcts_module.sigma(completed, np.array(v), 50, 0.1) for v in ([1.0, 1, 1], [100.0, 1, 1]))
    assert few.argmax() == many.argmax() == 2 and few.argmin() == 1 and many[2] > few[2]
    assert not mcts_module.sigma(np.full(3, 0.3), np.ones(3), 50, 0.1).any()


def gumbel_agent(model, cfg, sims, seed=0):
    return make_agent(model, cfg.replace(ROOT_SEARCH="gumbel", MCTS_SIMS=sims), sims, seed)


def test_gumbel_search_spends_its_simulations_and_targets_a_legal_policy(tiny_model, tiny_cfg):
    state = GameState.fromMoves("4444")
    agent = gumbel_agent(tiny_model, tiny_cfg, 16)
    action, pi, value, nn_value = agent.act(state, tau=1)
    assert root_visits(agent) == 16
    assert action in state.allowedActions and pi.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(pi)) == set(state.allowedActions)  # completed Q gives every legal move weight
    assert value == edge_for_column(agent.root, action % 7).Q
    assert pi[action] > 0 and -1 <= nn_value <= 1


@pytest.mark.parametrize(("moves", "winning_column"), [("112233", 3), ("121212", 0)])
def test_gumbel_search_takes_an_immediate_win(tiny_model, tiny_cfg, moves, winning_column):
    state = GameState.fromMoves(moves)
    action, pi, _, _ = gumbel_agent(tiny_model, tiny_cfg, 16).act(state, tau=0)
    assert action % 7 == winning_column and pi.argmax() % 7 == winning_column


def test_gumbel_search_without_sampling_is_deterministic_and_with_it_varies(tiny_model, tiny_cfg):
    state = GameState.initial()
    greedy = {gumbel_agent(tiny_model, tiny_cfg, 8, seed).act(state, tau=0)[0] for seed in range(6)}
    sampled = {gumbel_agent(tiny_model, tiny_cfg, 8, seed).act(state, tau=1)[0] for seed in range(12)}
    assert len(greedy) == 1 and len(sampled) > 1


def test_searches_ease_the_garbage_collector_and_restore_it(tiny_model, tiny_cfg):
    """While a search runs, the collector starts rarely and leaves the objects that
    existed before it alone (frozen); afterwards both are as they were, also when the
    search fails, and a nested block leaves the outer one's settings in place."""
    before = gc.get_threshold()
    seen = []
    agent = Agent("a", 84, 42, 4, 1.0, tiny_model, tiny_cfg)
    evaluate = agent.evaluateStates
    agent.evaluateStates = lambda states: seen.append((gc.get_threshold()[0], gc.get_freeze_count())) or evaluate(states)
    agent.act(GameState.initial(), 0)
    assert seen and all(threshold > before[0] and frozen > 0 for threshold, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError):
        with fewerCollections():
            with fewerCollections():
                pass
            assert gc.get_threshold()[0] > before[0] and gc.get_freeze_count() > 0
            raise RuntimeError("a search failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


# -- the compiled build (setup.py compiles game.py and MCTS.py with mypyc) ---------------------------
_SEARCH_SCRIPT = """
import json
import numpy as np
import compiled
import game
import MCTS
from game import GameState

def evaluate(state):
    rng = np.random.default_rng(state.id % 2**63)
    return float(rng.uniform(-1, 1)), rng.random(42).tolist()

root = MCTS.Node(GameState.fromMoves("4453"))
search = MCTS.MCTS(root, cpuct=1.0)
for _ in range(300):
    leaf, value, done, path = search.moveToLeaf()
    if not done:
        value, probs = evaluate(leaf.state)
        search.expandLeaf(leaf, probs, value)
    search.backFill(leaf, value, path)
root.allEdges()
print(json.dumps([compiled.runsCompiled(game) and compiled.runsCompiled(MCTS), [(action, edge.N, edge.W, edge.Q) for action, edge in root.edges], len(search.tree)]))
"""


def _runImportingFrom(folder, script: str) -> subprocess.CompletedProcess:
    """Run `script` in a fresh interpreter that imports modules from `folder` first and
    the rest of the project from its root."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(PROJECT_ROOT)]))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=folder)


@pytest.mark.parametrize("module", [mcts_module, game_module])
def test_the_rules_and_the_search_run_compiled(module):
    assert compiled.runsCompiled(module), f"{module.__name__} imported from {module.__file__}: setup.py compiles it"


def test_the_compiled_search_is_the_source_search(tmp_path):
    """300 simulations with a deterministic stand-in network: the compiled modules and
    game.py and MCTS.py run as plain Python give the same visits, values and tree, bit
    for bit."""
    compiled.copySources(tmp_path)
    plain = _runImportingFrom(tmp_path, _SEARCH_SCRIPT)
    built = _runImportingFrom(PROJECT_ROOT, _SEARCH_SCRIPT)
    assert plain.returncode == 0 and built.returncode == 0, plain.stderr + built.stderr
    plainResult, compiledResult = json.loads(plain.stdout), json.loads(built.stdout)
    assert (plainResult[0], compiledResult[0]) == (False, True)
    assert plainResult[1:] == compiledResult[1:]
    assert sum(n for _, n, _, _ in compiledResult[1]) == 299  # the first simulation expands the root


@pytest.mark.parametrize("name", ["game", "MCTS"])
def test_a_compiled_copy_older_than_its_source_refuses_to_load(tmp_path, name):
    for extension in PROJECT_ROOT.glob(f"{name}[._]*.so"):  # the module and its native library
        shutil.copy(extension, tmp_path / extension.name)
    source = tmp_path / f"{name}.py"
    shutil.copy(PROJECT_ROOT / source.name, source)
    built = min(path.stat().st_mtime for path in tmp_path.glob("*.so"))
    os.utime(source, (built + 60, built + 60))
    stale = _runImportingFrom(tmp_path, f"import {name}")
    assert stale.returncode != 0
    assert f"compiled from an older {name}.py" in stale.stderr and "make .venv/.installed" in stale.stderr
    os.utime(source, (built - 60, built - 60))
    current = _runImportingFrom(tmp_path, f"import compiled, {name}; print(compiled.runsCompiled({name}))")
    assert current.returncode == 0 and current.stdout.strip() == "True", current.stderr


def _garbageAfterSearch(model, cfg, release: bool) -> int:
    """Objects the cyclic garbage collector finds after an agent searched three moves
    of a game and was dropped, with or without releasing its tree first."""
    gc.collect()
    gc.disable()
    try:
        agent = make_agent(model, cfg, sims=24, seed=5)
        state = GameState.initial()
        for _ in range(3):
            action, *_ = agent.act(state, tau=0)
            state = state.takeAction(action)[0]
        if release:
            agent.releaseTree()
            assert agent.mcts is None and agent.root is None
        del agent
        return gc.collect()
    finally:
        gc.enable()


def test_a_released_tree_is_freed_without_the_garbage_collector(tiny_model, tiny_cfg):
    kept = _garbageAfterSearch(tiny_model, tiny_cfg, release=False)
    released = _garbageAfterSearch(tiny_model, tiny_cfg, release=True)
    assert kept > 200, "an unreleased tree is cyclic garbage (the control)"
    assert released < 20, f"{released} objects of a released tree were left to the collector"


def test_release_empties_the_tree_and_unlinks_its_nodes(tiny_model, tiny_cfg):
    agent = make_agent(tiny_model, tiny_cfg, sims=16, seed=6)
    agent.act(GameState.initial(), tau=0)
    mcts = agent.mcts
    nodes = list(mcts.tree.values())
    assert len(nodes) > 1 and any(node.edges for node in nodes)
    mcts.release()
    assert mcts.tree == {} and all(not node.edges and node.tree is None for node in nodes)


# -- leaves in batches (LEAF_BATCH, virtual loss) -------------------------------------------
def test_a_virtual_loss_turns_the_next_descent_away_and_is_taken_back_exactly():
    mcts = expanded_root(GameState.initial())
    leaf, _, _, path = mcts.moveToLeaf()
    first = path[0]
    before = [(edge.N, edge.W, edge.Q) for _, edge in mcts.root.edges]
    mcts.addVirtualLoss(path)
    assert (first.N, first.W, first.Q, mcts.root.N) == (1, -1.0, -1.0, 1)  # a loss for the player choosing it
    assert mcts.moveToLeaf()[3][0] is not first
    mcts.removeVirtualLoss(path)
    assert [(edge.N, edge.W, edge.Q) for _, edge in mcts.root.edges] == before and mcts.root.N == 0
    mcts.backFill(leaf, 0.5, path)
    assert (first.N, first.Q, mcts.root.N) == (1, -0.5, 1)  # backed up as if no virtual loss had been there


class Recording:
    """Evaluates requests with the tiny network and keeps them."""

    def __init__(self, agent: Agent):
        self.agent, self.requests = agent, []

    def __call__(self, states):
        self.requests.append(list(states))
        return self.agent.evaluateStates(states)


@pytest.mark.parametrize("root_search", ["puct", "gumbel"])
def test_batched_search_backs_up_every_simulation_and_evaluates_each_leaf_once(tiny_model, tiny_cfg, root_search):
    cfg = tiny_cfg.replace(LEAF_BATCH=8, ROOT_SEARCH=root_search, GUMBEL_SAMPLED_ACTIONS=7)
    agent = make_agent(tiny_model, cfg, sims=100)
    state = GameState.fromMoves("4435")
    recording = Recording(agent)
    action, pi, _, _ = runSerially(agent.actSteps(state, 0), recording)
    assert root_visits(agent) == agent.root.N == 100
    batches = recording.requests[1:]  # the root's own evaluation comes first, alone
    assert max(map(len, batches)) == 8 and sum(map(len, batches)) <= 100  # finished games need no network
    assert len(batches) <= 100 / 4  # most batches full: virtual loss spreads the descents
    leaves = [s.id for batch in recording.requests for s in batch]
    assert len(leaves) == len(set(leaves))  # no position evaluated twice
    expanded = [node for node in agent.mcts.tree.values() if node.nn_value is not None]
    assert len(expanded) == len(leaves)
    for node in agent.mcts.tree.values():  # no virtual loss left behind
        assert node.N == sum(edge.N for _, edge in node.edges)
        for _, edge in node.edges:
            assert abs(edge.W) <= edge.N and edge.Q == pytest.approx(edge.W / edge.N if edge.N else 0.0)
    assert action in state.allowedActions and pi.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("root_search", ["puct", "gumbel"])
def test_a_move_searched_with_its_own_count_spends_exactly_that_many_simulations(tiny_model, tiny_cfg, root_search):
    """actSteps(simulations=n), a fast self-play search (FAST_SEARCH_SIMS): n simulations
    instead of the agent's own count, with either root search."""
    agent = make_agent(tiny_model, tiny_cfg.replace(ROOT_SEARCH=root_search, GUMBEL_SAMPLED_ACTIONS=7), sims=40)
    state = GameState.fromMoves("4435")
    runSerially(agent.actSteps(state, 1, simulations=5), agent.evaluateStates)
    assert root_visits(agent) == agent.root.N == 5
    fresh = make_agent(tiny_model, agent.config, sims=40)
    runSerially(fresh.actSteps(state, 1), fresh.evaluateStates)
    assert root_visits(fresh) == 40


def test_a_moves_time_limit_ends_its_simulations_once_the_seconds_have_passed():
    """simulationsWithin: the full count without a limit or within it; with it, no entry
    after the limit has passed, and always the first (a move always searches)."""
    ticks = iter(range(100))
    clock = lambda: float(next(ticks))  # noqa: E731  (one second per reading)
    assert len(list(simulationsWithin(7, 0.0, 0.0, clock))) == 7
    assert len(list(simulationsWithin(7, 100.0, 0.0, clock))) == 7
    started = clock()
    assert len(list(simulationsWithin(50, 3.0, started, clock))) == 3  # read at 1 and 2 s go on, at 3 s stop
    assert len(list(simulationsWithin(5, 1.0, -10.0, clock))) == 1


@pytest.mark.parametrize("leaf_batch", [1, 8])
def test_a_move_with_a_time_limit_stops_short_of_its_simulations_and_still_chooses(tiny_model, tiny_cfg, leaf_batch):
    """Agent.moveSeconds (PLAY_MOVE_SECONDS): a limit far below what 5,000 simulations of the
    tiny network take ends the search early, with a legal move and policy; a copy for a
    game keeps the limit; none: the full count."""
    agent = make_agent(tiny_model, tiny_cfg.replace(LEAF_BATCH=leaf_batch), sims=5000)
    agent.moveSeconds = 0.05
    state = GameState.fromMoves("4435")
    action, pi, _, _ = agent.act(state, tau=0)
    assert 1 <= root_visits(agent) < 5000
    assert action in state.allowedActions and pi.sum() == pytest.approx(1.0)
    assert agent.forGame(3).moveSeconds == 0.05
    unlimited = make_agent(tiny_model, tiny_cfg, sims=300)
    unlimited.act(state, tau=0)
    assert root_visits(unlimited) == 300


def test_batched_search_takes_an_immediate_win_and_blocks_an_immediate_loss(tiny_model, tiny_cfg):
    cfg = tiny_cfg.replace(LEAF_BATCH=8)
    win = GameState.fromMoves("112233")
    assert make_agent(tiny_model, cfg, sims=50).act(win, tau=0)[0] == win.actionForColumn(3)
    threat = GameState.fromMoves("717263")
    assert make_agent(tiny_model, cfg, sims=200).act(threat, tau=0)[0] == threat.actionForColumn(3)


def test_games_in_lockstep_search_in_batches_as_one_game_alone(tiny_cfg):
    """Games searching one leaf a call and games searching four share the network's calls."""
    network = RowByRow.fromConfig(tiny_cfg, (2, 6, 7), 42)  # row by row: numbers independent of the batch
    states = [GameState.fromMoves(moves) for moves in ("4", "43", "1234", "", "5")]
    configs = [tiny_cfg.replace(LEAF_BATCH=1 if i % 2 else 4) for i in range(len(states))]
    alone = [make_agent(network, cfg, 60, seed=i).act(state, tau=0)
             for i, (cfg, state) in enumerate(zip(configs, states))]
    agents = [make_agent(network, cfg, 60, seed=i) for i, cfg in enumerate(configs)]
    together = runTogether([agent.actSteps(state, 0) for agent, state in zip(agents, states)], agents.__getitem__)
    for (action, pi, value, nn_value), (other, other_pi, other_value, other_nn) in zip(alone, together):
        assert action == other and value == other_value and nn_value == other_nn
        np.testing.assert_array_equal(pi, other_pi)
