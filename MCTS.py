"""Monte Carlo tree search with PUCT selection (the AlphaZero variant).

Points of view, which every value here carries:
- `Node.nn_value`: the network's value of the node's position for the player to move
  there.
- `Edge.W` / `Edge.Q`: total / mean value of the positions reached through the edge,
  for the player who *chooses* the edge (`Edge.playerTurn`, the player to move at the
  edge's in-node).  Selection maximises Q + U from the chooser's point of view.
- `backFill(leaf, value, ...)`: `value` is for the player to move at the leaf.

The tree is keyed by state id, so transpositions share a node.  Edges are made when
first chosen: an expanded node keeps the priors of its moves not tried yet, and the
best of them competes in selection with the score an edge of no visits would have
(Q = 0, U = scale * P).  So the search chooses as with every edge built at expansion
(exact ties aside: see `moveToLeaf`) while touching only the edges tried so far: most
moves of most nodes are never tried, and the edges a descent scans are what it spends
its time and its caches on.  The root of each move gets all its edges
(`Node.allEdges`): the noise, the Gumbel root search, the move choice and the logs see
every legal move there.

The search itself never calls a network: `moveToLeaf` stops at a leaf, someone
evaluates it (one call per leaf, or one call for many games' leaves), `expandLeaf`
and `backFill` finish the simulation.

Like game.py, this module is compiled to C by mypyc at install (setup.py, compiled.py),
so its types are checked (`mypy MCTS.py game.py`) and its classes' methods cannot be
replaced at run time.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import threading
from typing import Any, Iterator

import numpy as np

from compiled import refuseStaleCopy
from game import GameState, columnOf, playerPiece

_INFO = logging.INFO

refuseStaleCopy(__file__, "MCTS.py")


_collectionsEased = 0
"""How many `fewerCollections` blocks are open, in any thread: the first to open
eases the collector, the last to close restores it."""
_collectorSettings = gc.get_threshold()
_collectionsLock = threading.Lock()


@contextlib.contextmanager
def fewerCollections(threshold: int = 50_000) -> Iterator[None]:
    """Run searches with Python's cyclic garbage collector scanning far less often.

    A search allocates hundreds of thousands of small objects (nodes, edges, states);
    every 700 allocations start a collection, and every full one walks all live
    objects, the millions of TensorFlow's and Keras' modules among them: it took
    about half the search's time.  Inside the block the objects that already exist
    are frozen (left out of every collection; `gc.freeze`) and a collection starts
    every `threshold` allocations; on leaving, both are undone.  The trees of
    finished games are freed as they end (`MCTS.release`); others are still
    collected, only in larger batches.  Measured (benchmarks/selfplay.py step 2,
    search alone): 11,126-16,324 leaves/s before, 20,534-29,117 with it."""
    global _collectionsEased, _collectorSettings
    with _collectionsLock:
        _collectionsEased += 1
        if _collectionsEased == 1:
            _collectorSettings = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(threshold, *_collectorSettings[1:])
    try:
        yield
    finally:
        with _collectionsLock:
            _collectionsEased -= 1
            if _collectionsEased == 0:
                gc.set_threshold(*_collectorSettings)
                gc.unfreeze()


def legalPriors(logits: list[float], allowed: list[int]) -> list[float]:
    """The priors a leaf is expanded with: softmax of the network's `logits` (a list
    over the 42 actions) over the legal actions `allowed`, max-subtracted so large
    logits cannot overflow; 0 elsewhere, and 0 everywhere when nothing is legal (a
    finished game) or every legal logit is -inf.  Per position, in plain loops: after
    each network call numpy's machinery runs cold (its code and data evicted by the
    network), and its batch softmax cost more than these few exponentials."""
    priors = [0.0] * len(logits)
    if not allowed:
        return priors
    top = max([logits[action] for action in allowed])
    if top == -math.inf:
        return priors
    odds = [math.exp(logits[action] - top) for action in allowed]
    total = sum(odds)
    for action, odd in zip(allowed, odds):
        priors[action] = odd / total
    return priors


class Node:
    """A position in the tree.  `edges` is a list of (action, Edge) for the moves tried
    so far, in the order they were tried (all legal moves, in column order, after
    `allEdges`); `untried` the legal moves without an edge yet, ordered so that
    `untried[-1]` is the one of highest prior (equal priors: the first listed), and
    `untriedPriors` their priors, in the same order (only these are kept: a node
    holds no more than it will use).  A node is a leaf until expanded (and forever
    for a finished game).  `N` is the sum of the edges' visit counts (the simulations
    that went on from this node); `tree` is the search's table of nodes by state id,
    where children are looked up."""

    __slots__ = ("state", "playerTurn", "id", "edges", "untried", "untriedPriors", "nn_value", "N", "tree")

    def __init__(self, state: GameState, tree: dict[int, "Node"] | None = None):
        self.state = state
        self.playerTurn = state.playerTurn
        self.id = state.id
        self.edges: list[tuple[int, Edge]] = []
        self.untried: list[int] = []
        self.untriedPriors: list[float] = []
        self.nn_value: float | None = None
        self.N = 0
        self.tree = tree

    def isLeaf(self) -> bool:
        return not self.edges and not self.untried

    def tryNext(self) -> "Edge":
        """Make the edge of the untried move of highest prior (see `untried`)."""
        action = self.untried.pop()
        edge = Edge(self, self.untriedPriors.pop(), action)
        self.edges.append((action, edge))
        return edge

    def allEdges(self) -> None:
        """Give every untried move its edge (no visits yet) and list all edges in
        column order (`allowedActions`' order), as the tutorial's expansion does;
        selection chooses the same either way, exact ties aside."""
        while self.untried:
            self.tryNext()
        self.edges.sort(key=lambda pair: columnOf(pair[0]))


class Edge:
    """A move from `inNode` to `outNode`, with its statistics N, W, Q, P.

    An edge below the root is made when selection first chooses it, and its child is
    reached in the same descent; only a root's edges (`Node.allEdges`) may never be
    followed.  The child is made when first asked for, and looked up in the tree
    first (transpositions share a node)."""

    __slots__ = ("inNode", "_outNode", "playerTurn", "action", "N", "W", "Q", "P")

    def __init__(self, inNode: Node, prior: float, action: int):
        self.inNode = inNode
        self._outNode: Node | None = None
        self.playerTurn = inNode.playerTurn
        self.action = action
        self.N = 0
        self.W = 0.0
        self.Q = 0.0
        self.P = prior

    @property
    def outNode(self) -> Node:
        node = self._outNode
        if node is None:
            tree = self.inNode.tree
            if tree is None:
                raise ValueError("the edge's node belongs to no search tree (MCTS.addNode gives it one)")
            state = self.inNode.state.takeAction(self.action)[0]
            node = tree.get(state.id)
            if node is None:
                node = tree[state.id] = Node(state, tree)
            self._outNode = node
        return node


def forgetNode(node: Node) -> None:
    """Break the reference cycles of a node leaving its tree (its edges point back at
    it, it points at the table), so that reference counting frees it at once."""
    node.edges = []
    node.tree = None


def reachableIds(root: Node) -> set[int]:
    """The state ids of the nodes reached from `root` through made children
    (`Edge._outNode`), `root` included."""
    reached = {root.id}
    stack = [root]
    while stack:
        for _, edge in stack.pop().edges:
            child = edge._outNode
            if child is not None and child.id not in reached:
                reached.add(child.id)
                stack.append(child)
    return reached


class MCTS:
    """The search tree of one game for one player.

    `epsilon` > 0 mixes Dirichlet(`alpha`) noise into the root priors; the noise is
    drawn once per root (per move) by `drawRootNoise`, never per simulation.
    """

    def __init__(self, root: Node, cpuct: float, epsilon: float = 0.0, alpha: float = 0.8,
                 rng: np.random.Generator | None = None, logger: logging.Logger | None = None):
        self.root = root
        self.tree: dict[int, Node] = {}
        self.cpuct = cpuct
        self.epsilon = epsilon
        self.alpha = alpha
        self.rng = rng if rng is not None else np.random.default_rng()
        self.logger = logger
        self.rootNoise: np.ndarray | None = None
        self.rootPriors: list[float] | None = None
        self.simulations = 0
        self.addNode(root)

    def addNode(self, node: Node) -> None:
        node.tree = self.tree
        self.tree[node.id] = node

    def release(self) -> None:
        """Empty the tree, breaking its reference cycles (a node and its edges point at
        each other, every node at the table), so that dropping it frees its nodes at
        once by reference counting instead of leaving them to the garbage collector:
        128 games' trees left to it cost a full collection of every live object per
        iteration (docs/performance.md).  Call it only when nothing will read the
        tree again."""
        for node in self.tree.values():
            forgetNode(node)
        self.tree.clear()

    def changeRoot(self, node: Node) -> None:
        """Move the root (tree reuse between moves); the root noise is drawn anew.

        The tree keeps only the nodes the new root reaches through its edges' children:
        no later simulation can come back to the others (a move cannot be taken back),
        and a game's tree would otherwise hold every node of every earlier move, which
        250 games at 8,000 simulations in lockstep do not fit in memory.  A position
        that the new root's subtree may still reach, but that was reached only through a
        dropped branch (a transposition), is searched afresh when reached again.  The
        dropped nodes are freed at once, as in `release`; the table stays the same dict
        (every node holds it), losing only their entries."""
        self.root = node
        self.rootNoise = self.rootPriors = None
        reached = reachableIds(node)
        for dropped in [nodeId for nodeId in self.tree if nodeId not in reached]:
            forgetNode(self.tree.pop(dropped))

    def drawRootNoise(self) -> None:
        """Give the (expanded) root all its edges, draw this move's Dirichlet noise over
        them, and fix the priors selection sees at the root, (1 - epsilon) * P +
        epsilon * noise; no noise (rootNoise and rootPriors None) when epsilon is 0."""
        self.root.allEdges()
        if self.epsilon > 0 and self.root.edges:
            self.rootNoise = self.rng.dirichlet([self.alpha] * len(self.root.edges))
            eps = self.epsilon
            self.rootPriors = [(1 - eps) * edge.P + eps * float(nu)
                               for (_, edge), nu in zip(self.root.edges, self.rootNoise)]
        else:
            self.rootNoise = self.rootPriors = None

    def explorationScale(self, node: Node) -> float:
        """cpuct * sqrt(max(1, visits of node)): an edge's U is this times P / (1 + N).
        The max(1, .) makes the first simulation at a fresh node follow the prior
        instead of the first listed move."""
        return self.cpuct * math.sqrt(max(1, node.N))

    def _activeLogger(self) -> logging.Logger | None:
        """The MCTS logger when it writes INFO lines, else None."""
        logger = self.logger
        return logger if logger is not None and logger.isEnabledFor(_INFO) else None

    def moveToLeaf(self, rootEdge: Edge | None = None) -> tuple[Node, float, bool, list[Edge]]:
        """Descend from the root by max Q + U to a leaf (through `rootEdge` first, when
        given: Gumbel's root search chooses the root action itself).

        Returns (leaf, value, done, breadcrumbs): `value` is the game's result for the
        player to move at the leaf when `done` (-1: they lost, 0: draw), else 0.
        U = explorationScale(node) * P / (1 + N), Q from the point of view of the
        player choosing; an untried move scores what its edge would (Q = 0, U = scale *
        P), and its edge is made when it is chosen (`Node.tryNext`).  Ties go to the
        first listed edge (below the root, edges are listed in the order they were
        tried), and between a tried edge and an untried move to the edge.
        This is the search's hot loop: the rule is written out inline rather than
        through calls."""
        log = self._activeLogger()
        self.simulations += 1
        if log is not None:
            log.info("=== simulation %d ===", self.simulations)
        breadcrumbs = []
        node = self.root
        cpuct = self.cpuct
        priors = self.rootPriors
        if rootEdge is not None:
            breadcrumbs.append(rootEdge)
            node, priors = rootEdge.outNode, None
        while node.edges or node.untried:
            visits = node.N
            scale = cpuct * math.sqrt(visits) if visits > 1 else cpuct
            best_score = -math.inf
            best: Edge | None = None
            if priors is None:
                for _, edge in node.edges:
                    score = edge.Q + scale * edge.P / (1 + edge.N)
                    if score > best_score:
                        best_score, best = score, edge
                untriedPriors = node.untriedPriors
                if untriedPriors and scale * untriedPriors[-1] > best_score:
                    best = node.tryNext()
            else:
                for (_, edge), prior in zip(node.edges, priors):
                    score = edge.Q + scale * prior / (1 + edge.N)
                    if score > best_score:
                        best_score, best = score, edge
                priors = None
            assert best is not None, "a node with moves has a best one"
            if log is not None:
                self._logSelection(log, node, scale, best)
            breadcrumbs.append(best)
            node = best._outNode or best.outNode
        state = node.state
        return node, state.value[0], state.isEndGame, breadcrumbs

    def expandLeaf(self, leaf: Node, probs: Any, nn_value: float) -> None:
        """Expand `leaf`: its legal moves become untried moves with prior probs[action]
        (an edge is made when a move is first chosen, its child when first visited);
        `nn_value` is the network's value of the leaf for its player to move.  `probs`
        is indexable by action (a list is fastest)."""
        leaf.nn_value = float(nn_value)
        # Ascending prior, and the reversed listing keeps the first listed of equal priors last.
        leaf.untried = untried = sorted(reversed(leaf.state.allowedActions), key=probs.__getitem__)
        leaf.untriedPriors = [float(probs[action]) for action in untried]

    def backFill(self, leaf: Node, value: float, breadcrumbs: list[Edge]) -> None:
        """Add `value` (for the player to move at `leaf`) to every edge on the path,
        each from the point of view of the player who chose that edge."""
        player = leaf.playerTurn
        for edge in breadcrumbs:
            edge.inNode.N += 1
            n = edge.N = edge.N + 1
            edge.W += value if edge.playerTurn == player else -value
            edge.Q = edge.W / n
        log = self._activeLogger()
        if log is not None:
            self._logBackFill(log, leaf, value, breadcrumbs)

    @staticmethod
    def addVirtualLoss(breadcrumbs: list[Edge]) -> None:
        """Count a simulation whose leaf waits for the network as a visit lost by every
        player on its path (each edge from the point of view of the player who chose
        it: N + 1, W - 1), so that the next descents of the same batch of leaves turn
        elsewhere (virtual loss); `removeVirtualLoss` takes it back before the real
        value is backed up."""
        for edge in breadcrumbs:
            edge.inNode.N += 1
            n = edge.N = edge.N + 1
            edge.W -= 1.0
            edge.Q = edge.W / n

    @staticmethod
    def removeVirtualLoss(breadcrumbs: list[Edge]) -> None:
        """Undo `addVirtualLoss` on the same path."""
        for edge in breadcrumbs:
            edge.inNode.N -= 1
            n = edge.N = edge.N - 1
            edge.W += 1.0
            edge.Q = edge.W / n if n else 0.0

    # -- logging (only called when the MCTS logger is enabled) ---------------------------
    def _logSelection(self, lg: logging.Logger, node: Node, scale: float, chosen: Edge) -> None:
        """One line per legal move of `node`, in column order (untried moves with no
        visits), the chosen one marked."""
        if node is self.root and self.rootNoise is not None and self.rootPriors is not None:
            noise, priors = [float(nu) for nu in self.rootNoise], self.rootPriors
        else:
            noise, priors = [0.0] * len(node.edges), [edge.P for _, edge in node.edges]
        rows = [(action, edge.N, edge.P, nu, edge.Q, prior, edge is chosen)
                for (action, edge), nu, prior in zip(node.edges, noise, priors)]
        rows += [(action, 0, prior, 0.0, 0.0, prior, False) for action, prior in zip(node.untried, node.untriedPriors)]
        lg.info("depth %d, %s to move (sum N = %d)", self._depth(node), playerPiece(node.playerTurn),
                node.N)
        lg.info("  col     N       P   noise       Q       U     Q+U")
        for action, n, p, nu, q, prior, isChosen in sorted(rows, key=lambda row: columnOf(row[0])):
            u = scale * prior / (1 + n)
            lg.info("  %3d %5d %7.3f %7.3f %7.3f %7.3f %7.3f%s", columnOf(action) + 1, n, p, nu, q, u, q + u,
                    "  <-" if isChosen else "")
        lg.info("  chosen: column %d", columnOf(chosen.action) + 1)

    def _logBackFill(self, lg: logging.Logger, leaf: Node, value: float, breadcrumbs: list[Edge]) -> None:
        mover = playerPiece(leaf.playerTurn)
        path = " ".join(str(columnOf(e.action) + 1) for e in breadcrumbs) or "(root)"
        lg.info("leaf after columns %s, %s to move, value %+.3f for %s%s", path, mover, value, mover,
                " (game over)" if leaf.state.isEndGame else "")
        for line in leaf.state.text().splitlines():
            lg.info("    %s", line)
        for edge in breadcrumbs:
            lg.info("  backfill column %d (chosen by %s): N=%d W=%+.3f Q=%+.3f", columnOf(edge.action) + 1,
                    playerPiece(edge.playerTurn), edge.N, edge.W, edge.Q)

    def _depth(self, node: Node) -> int:
        return node.state.stones - self.root.state.stones


# -- Gumbel root search (Danihelka et al., ICLR 2022) ----------------------------------------
# The root's actions are compared by g + logits + sigma(q): g a Gumbel draw per action
# (0 when the move is not sampled), logits the network's (log-priors), q the completed
# Q-values rescaled to [0, 1].  All values are for the player to move at the root.

def completedQ(priors: np.ndarray, visits: np.ndarray, qvalues: np.ndarray, nnValue: float) -> np.ndarray:
    """Each root action's Q where it was visited, and for the unvisited ones the
    mixed value v_mix: the network's value of the root blended with the prior-weighted
    Q of the visited actions (weighted by their total visits).  Point of view: the
    player to move at the root."""
    visited = visits > 0
    total = visits.sum()
    if total == 0:
        return np.full(len(priors), float(nnValue))
    weight = priors[visited].sum()
    visitedValue = (priors[visited] @ qvalues[visited]) / weight if weight > 0 else qvalues[visited].mean()
    mixed = (nnValue + total * visitedValue) / (1 + total)
    return np.where(visited, qvalues, mixed)


def sigma(completed: np.ndarray, visits: np.ndarray, cVisit: float, cScale: float) -> np.ndarray:
    """The monotone transform of completed Q-values added to the logits: rescaled to
    [0, 1] by their min and max, times (cVisit + the most visits of any action) *
    cScale, so the search's evidence weighs more as visits grow."""
    low, high = completed.min(), completed.max()
    scaled = (completed - low) / (high - low) if high > low else np.zeros_like(completed)
    return (cVisit + visits.max()) * cScale * scaled


def improvedPolicy(logits: np.ndarray, completed: np.ndarray, visits: np.ndarray, cVisit: float,
                   cScale: float) -> np.ndarray:
    """softmax(logits + sigma(completed Q)) over the root's actions: the policy
    target of Gumbel AlphaZero.  It sums to 1 and ranks a higher completed Q higher
    among actions of equal prior."""
    scores = logits + sigma(completed, visits, cVisit, cScale)
    odds = np.exp(scores - scores.max())
    return odds / odds.sum()


def halvingVisits(simulations: int, considered: int, phase: int, phases: int, used: int) -> int:
    """Visits each of the `considered` actions gets in this phase of sequential
    halving: the budget left, shared evenly between the phases left and the actions
    of this one (at least one)."""
    return max(1, (simulations - used) // ((phases - phase) * considered))
