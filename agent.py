"""Players: `Agent` (MCTS guided by a network) and `User` (a human at the keyboard).

A move's search is written as a generator, `Agent.actSteps`: it yields every leaf
position that needs the network and is resumed with that position's
(value, probabilities); with LEAF_BATCH > 1 it yields a list of leaf positions and
is resumed with a list of their evaluations.  `Agent.act` answers each request at once (one game, one
position per network call); `runTogether` drives many games' generators in
lockstep and answers all their requests with one batched call.  Both run the same
search code; only the network's numbers may differ in their last bits between batch
sizes (the CPU kernels sum in a different order), which can flip an exact tie.
"""

from __future__ import annotations

import builtins
import logging
import math
import time
from typing import Callable, Generator, Iterable, Iterator

import numpy as np
from tqdm.auto import tqdm

from config import DEFAULT, Config
from game import ACTION_SIZE, COLUMNS, STATE_SIZE, GameState, columnOf, playerPiece
from loss import qWeights
from memory import MergedRows
from model import mirrorAveraged, withMirrorImages
from MCTS import MCTS, Node, completedQ, fewerCollections, halvingVisits, improvedPolicy, legalPriors, sigma

Evaluation = tuple[float, list[float]]
"""(value for the player to move, prior probabilities over the 42 actions)."""
SearchSteps = Generator[GameState | list[GameState], Evaluation | list[Evaluation], tuple]
_END = object()
"""The end of `Agent.simulateInBatches`' root edges (an entry may be None)."""


def evaluationsOf(states: list[GameState], values: np.ndarray, logits: np.ndarray) -> list[Evaluation]:
    """A network's raw outputs for `states` as one (value, priors) per position: the
    value for its player to move, the priors a list over the 42 actions (softmax over
    the legal moves, `MCTS.legalPriors`; lists are what the search indexes fastest)."""
    rows = np.asarray(logits).tolist()  # Python floats: float32 values exactly, as doubles
    return [(value, legalPriors(row, state.allowedActions))
            for state, value, row in zip(states, np.asarray(values).tolist(), rows)]


def withTemperature(weights: np.ndarray, tau: float) -> np.ndarray:
    """`weights` (visit counts or shares, >= 0) raised to 1/tau and normalised to sum
    1: tau=1 leaves the proportions, a smaller tau sharpens them, and tau=0 is the
    limit, uniform over the largest."""
    if tau == 0:
        weights = (weights == weights.max()).astype(np.float64)
    elif tau != 1:
        weights = weights ** (1.0 / tau)
    return weights / weights.sum()


def _byColumn(edges: list, indices: list, values: np.ndarray) -> str:
    """`values` of the root edges at `indices`, as 'column:value' in column order (MCTS log)."""
    return " ".join(f"{columnOf(edges[i].action) + 1}:{values[i]:+.2f}"
                    for i in sorted(indices, key=lambda i: columnOf(edges[i].action)))


def positionsOf(request: GameState | list[GameState]) -> list[GameState]:
    """The positions a search generator asks the network for: one leaf, or a list."""
    return request if type(request) is list else [request]


def answerTo(request: GameState | list[GameState], evaluations: list[Evaluation]):
    """What a search generator is resumed with: the evaluation of its one leaf, or the
    list of its leaves' evaluations (`evaluations` in the order of `positionsOf`)."""
    return evaluations if type(request) is list else evaluations[0]


def runSerially(steps: SearchSteps, evaluate: Callable[[list[GameState]], list[Evaluation]]):
    """Drive a search generator to its end, evaluating its leaves as they are asked
    for (one network call per request); returns the generator's result."""
    with fewerCollections():
        try:
            request = next(steps)
            while True:
                request = steps.send(answerTo(request, evaluate(positionsOf(request))))
        except StopIteration as stop:
            return stop.value


def runTogether(searches: list[SearchSteps], playerOf: Callable[[int], "Agent"],
                stop: Callable[[], bool] | None = None) -> list:
    """Drive many search generators in lockstep; returns each generator's result.
    `stop()`, asked after each round of network calls, ends the drive early when it
    says True: the generators still running are closed and their results are None.

    Each generator waiting for an evaluation has one pending request (a leaf, or a
    list of leaves: `positionsOf`).  The generators are
    dealt into lanes (generator i into lane i % lanes; as many lanes as the fewest any
    of the networks' engines asks for, see `inference`) that take turns: a
    lane's pending leaves are grouped by network (`playerOf(i).model`, the player whose
    search generator i runs now), each group goes to its network as ONE batched call
    started in the background, and while those calls run, the previous lane's results
    are handed back and its searches run on to their next leaves.  So the search
    (Python, one core) and the network (the other core) work at the same time.  Each
    generator runs the sequential search: only the network calls are shared, and the
    lanes change only which calls share a batch.  The garbage collector is eased
    meanwhile (`MCTS.fewerCollections`)."""
    results: list = [None] * len(searches)
    pending: dict[int, GameState] = {}

    def resume(i: int, evaluation) -> None:
        try:
            pending[i] = next(searches[i]) if evaluation is None else searches[i].send(evaluation)
        except StopIteration as stop:
            pending.pop(i, None)
            results[i] = stop.value

    def submit(lane: list[int]) -> list:
        groups: dict[int, tuple[Agent, list[int]]] = {}
        for i in lane:
            if i in pending:
                player = playerOf(i)
                groups.setdefault(id(player.model), (player, []))[1].append(i)
        calls = []
        for player, group in groups.values():
            requests = [pending[i] for i in group]
            if any(type(r) is list for r in requests):
                calls.append((group, requests, start(player, [s for r in requests for s in positionsOf(r)])))
            else:  # one leaf each (self-play's case): no per-leaf unpacking on the hot path
                calls.append((group, None, start(player, requests)))
        return calls

    def answer(group: list[int], requests: list | None, evaluations: list[Evaluation]) -> None:
        """Hand a group's evaluations back; `requests` None: each asked for one leaf."""
        if requests is None:
            for i, evaluation in zip(group, evaluations):
                resume(i, evaluation)
            return
        taken = 0
        for i, request in zip(group, requests):
            size = len(positionsOf(request))
            resume(i, answerTo(request, evaluations[taken:taken + size]))
            taken += size

    def deferred(player: Agent, states: list[GameState]):
        return lambda: player.evaluateStates(states)

    with fewerCollections():
        for i in range(len(searches)):
            resume(i, None)
        count = min((playerOf(i).model.currentEngine().lanes for i in pending), default=1)
        start = Agent.evaluateStatesAsync if count > 1 else deferred  # one lane: nothing to overlap
        lanes = [lane for lane in (list(range(k, len(searches), count)) for k in range(count)) if lane]
        inflight = [submit(lane) for lane in lanes]
        while any(inflight):
            for k, lane in enumerate(lanes):
                if inflight[k]:
                    for group, requests, collect in inflight[k]:
                        answer(group, requests, collect())
                    inflight[k] = submit(lane)
            if stop is not None and pending and stop():
                if count > 1:  # calls running in the background finish before their searches go
                    for calls in inflight:
                        for _, _, collect in calls:
                            collect()
                for i in list(pending):
                    searches[i].close()
                break
        return results


class User:
    """A human player.  A game against one is the typed game (`play.typedGame`, which
    `funcs.playMatches` plays for it): it asks the human for columns through
    `input_fn` (one line; raises EOFError at the end of input; None: the builtin
    `input` as it is when asking, which a notebook front end or a test may replace
    after this module is imported) and shows them the game through `output_fn`.  The
    constructor keeps the tutorial's signature; `state_size` and `action_size` are
    not used.
    """

    def __init__(self, name: str, state_size: int, action_size: int,
                 input_fn: Callable[[str], str] | None = None, output_fn: Callable[[str], None] = print):
        self.name = name
        self.input_fn = input_fn
        self.output_fn = output_fn


def simulationsWithin(count: int, seconds: float, started: float, clock=time.monotonic) -> Iterator[None]:
    """The root entries of `count` PUCT simulations (None: each descends by max Q + U),
    ending early once `seconds` > 0 have passed on `clock` since `started`: a move's
    time limit, checked before every simulation but the first (a move always searches)."""
    for done in range(count):
        if done and seconds and clock() - started >= seconds:
            return
        yield None


def secureChild(edges: list, a: float) -> int:
    """The action of the visited edge of highest Q - a / sqrt(N) (the "secure child" of
    Chaslot et al. 2008; Q for the player choosing): a lower bound on each move's value
    that trusts a well-visited Q more.  Exact ties go to the first listed edge."""
    scores = [(edge.Q - a / math.sqrt(edge.N), action) for action, edge in edges if edge.N > 0]
    if not scores:
        raise ValueError("no root move has been visited: search before choosing")
    return max(scores, key=lambda pair: pair[0])[1]


def oneHot(action: int, size: int) -> np.ndarray:
    pi = np.zeros(size)
    pi[action] = 1
    return pi


def searchWithoutNetwork(act, state: GameState, tau: float) -> SearchSteps:
    """A search generator for a player that needs no network (a reference opponent,
    see `ratings`): it asks for nothing and returns act(state, tau)."""
    yield from ()
    return act(state, tau)


def checkedSimulations(count) -> int:
    """`count` as a number of MCTS simulations a move, refused with a ValueError naming it
    unless a positive integer (a search of none has no visits to choose a move by)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"sims must be a positive number of MCTS simulations, got {count!r}")
    return count


class Resign(Exception):
    """The human resigned or closed the input."""


def parseColumn(entry: str, state: GameState) -> tuple[int | None, str | None]:
    """(action, None) for a legal column entry '1'..'7', else (None, message)."""
    if state.isEndGame:
        return None, "The game is over: no column can be played."
    text = entry.strip()
    if not text:
        return None, "Please type a column number from 1 to 7 (q to resign)."
    try:
        column = int(text)
    except ValueError:
        return None, f"{text!r} is not a number: type a column from 1 to 7 (q to resign)."
    if not 1 <= column <= COLUMNS:
        return None, f"There is no column {column}: columns are numbered 1 to 7."
    action = state.actionForColumn(column - 1)
    if action is None:
        return None, f"Column {column} is full: choose another."
    return action, None


def askForColumn(state: GameState, input_fn=None, output_fn=print) -> int:
    """Prompt until a legal column is typed; returns its action.  Raises Resign on
    'q' / 'quit' / 'resign' or at the end of input.  `input_fn` None: the builtin
    `input` as it is at each prompt."""
    if state.isEndGame:
        raise ValueError("the game is over: there is no move to ask for")
    while True:
        try:
            entry = (input_fn or builtins.input)("Your move (column 1-7, q to resign): ")
        except EOFError:
            output_fn("Input closed: you resign.")
            raise Resign from None
        if entry.strip().lower() in ("q", "quit", "resign"):
            raise Resign
        action, message = parseColumn(entry, state)
        if action is not None:
            return action
        output_fn(message)


class Agent:
    """An AlphaZero player: MCTS with priors and leaf values from `model`.

    `config` supplies the root search (ROOT_SEARCH, GUMBEL_*), the root noise
    (EPSILON, ALPHA), the retraining settings of `replay` (TRAINING_LOOPS,
    BATCH_SIZE, EPOCHS, FIT_BATCH_SIZE, VALUE_TARGET_Q_WEIGHT, MERGE_DUPLICATES) and
    the seed of the agent's random draws; `logger` receives the MCTS log.  The
    constructor keeps the tutorial's signature; its `state_size` is not used (the
    network knows its input).

    The search's *best move* (what tau=0 plays) is the most visited root edge with
    PUCT, and the last action standing after sequential halving with Gumbel.
    """

    def __init__(self, name: str, state_size: int, action_size: int, mcts_simulations: int,
                 cpuct: float, model, config: Config = DEFAULT, seed: int | None = None,
                 logger: logging.Logger | None = None):
        self.name = name
        self.action_size = action_size
        self.cpuct = cpuct
        self.MCTSsimulations = checkedSimulations(mcts_simulations)
        self.model = model
        self.config = config
        self.logger = logger
        self.rng = np.random.default_rng(config.SEED if seed is None else seed)
        self.mcts: MCTS | None = None
        self.root: Node | None = None
        self.moveSeconds = 0.0
        """> 0: a PUCT move stops searching after this many seconds even short of its
        simulations (PLAY_MOVE_SECONDS, for the agent a person plays); 0: no limit."""
        self.train_overall_loss: list[float] = []
        self.train_value_loss: list[float] = []
        self.train_policy_loss: list[float] = []

    @classmethod
    def fromConfig(cls, name: str, cfg: Config, model, seed: int | None = None, logger: logging.Logger | None = None,
                   mcts_simulations: int | None = None, move_seconds: float = 0.0) -> "Agent":
        """The agent `cfg` describes (its MCTS_SIMS unless `mcts_simulations`, its CPUCT),
        playing with `model`, each move limited to `move_seconds` (0: none); like
        `Residual_CNN.fromConfig`."""
        sims = cfg.MCTS_SIMS if mcts_simulations is None else mcts_simulations
        agent = cls(name, STATE_SIZE, ACTION_SIZE, sims, cfg.CPUCT, model, cfg, seed, logger)
        agent.moveSeconds = move_seconds
        return agent

    def forGame(self, seed: int) -> "Agent":
        """A player for one more concurrent game: same network and settings, its own
        tree and random draws."""
        player = Agent(self.name, STATE_SIZE, self.action_size, self.MCTSsimulations,
                       self.cpuct, self.model, self.config, seed, self.logger)
        player.moveSeconds = self.moveSeconds
        return player

    # -- one move ------------------------------------------------------------------
    def act(self, state: GameState, tau: float, noise: bool = False):
        """Search from `state` and choose a move (one network call per leaf).

        Returns (action, pi, value, NN_value): pi the search's policy over the 42
        actions (the training target: visit shares with PUCT, the improved policy
        with Gumbel), value the chosen edge's Q and NN_value
        the network's value of `state`, both for the player to move in `state`."""
        return runSerially(self.actSteps(state, tau, noise), self.evaluateStates)

    def actSteps(self, state: GameState, tau: float, noise: bool = False,
                 simulations: int | None = None) -> SearchSteps:
        """The search for one move as a generator (see the module docstring).
        `noise`: mix Dirichlet noise into the root priors (self-play only; the PUCT
        root's exploration: Gumbel's root search explores through its own Gumbel
        draws and never reads the root's priors with noise, so none is drawn).
        `simulations`: this move's count (a fast self-play search,
        `Config.FAST_SEARCH_SIMS`); None: the agent's MCTSsimulations.  With PUCT,
        `moveSeconds` may end the move's search sooner (`simulationsWithin`)."""
        started = time.monotonic()
        sims = self.MCTSsimulations if simulations is None else simulations
        if state.isEndGame:
            raise ValueError("cannot search a finished game: it has no legal moves")
        if self.mcts is None or state.id not in self.mcts.tree:
            self.buildMCTS(state)
        else:
            self.changeRootMCTS(state)
        self.mcts.epsilon = self.config.EPSILON if noise and self.config.ROOT_SEARCH == "puct" else 0.0
        if self.root.isLeaf():
            self.evaluateLeaf(self.root, (yield state))
        self.mcts.drawRootNoise()
        log = self.activeLogger()
        if log is not None:
            log.info("****** %s searches %d simulations, %s to move ******", self.name, sims,
                     playerPiece(state.playerTurn))
            state.render(log)
        if self.config.ROOT_SEARCH == "gumbel":
            action, pi, value = yield from self.gumbelSearch(tau, sims)
            return action, pi, value, self.root.nn_value
        visits = self.root.N
        yield from self.simulate(simulationsWithin(sims, self.moveSeconds, started))
        if log is not None and self.moveSeconds:
            log.info("searched %d simulations in %.2f s (limit %.2f s)", self.root.N - visits,
                     time.monotonic() - started, self.moveSeconds)
        pi, values = self.getAV(1)
        action, value = self.chooseAction(pi, values, tau)
        return action, pi, value, self.root.nn_value

    def activeLogger(self) -> logging.Logger | None:
        """The agent's (MCTS) logger when it writes INFO lines, else None."""
        logger = self.logger
        return logger if logger is not None and logger.isEnabledFor(logging.INFO) else None

    def gumbelSearch(self, tau: float, sims: int) -> SearchSteps:
        """Gumbel AlphaZero's root search (Danihelka et al. 2022), PUCT below the root.

        The root's actions are ranked by g + logits: g a Gumbel draw per action when
        tau > 0 (the move is sampled: this replaces both root noise and visit-count
        sampling), 0 when tau = 0.  The best GUMBEL_SAMPLED_ACTIONS (at most one per
        simulation) are considered; sequential halving shares exactly `sims`
        simulations among them, keeping after each
        phase the better half by g + logits + sigma(completed Q).  Returns (action,
        pi, value): the last action standing, the improved policy
        softmax(logits + sigma(completed Q)) over the 42 actions (the training
        target), and the chosen edge's Q; values for the player to move.  The MCTS
        log (INFO) gets the candidates, each phase's survivors and the choice."""
        cfg = self.config
        edges = [edge for _, edge in self.root.edges]
        priors = np.array([edge.P for edge in edges])
        logits = np.log(np.maximum(priors, 1e-30))
        gumbel = self.rng.gumbel(size=len(edges)) if tau > 0 else np.zeros(len(edges))
        considered = list(np.argsort(-(gumbel + logits), kind="stable")[:min(cfg.GUMBEL_SAMPLED_ACTIONS, sims)])
        phases = max(1, math.ceil(math.log2(len(considered))))
        log = self.activeLogger()
        if log is not None:
            log.info("Gumbel root search: %d simulations among %d of %d moves; g + logit: %s", sims,
                     len(considered), len(edges), _byColumn(edges, considered, gumbel + logits))
        used = 0
        for phase in range(phases):
            perAction = halvingVisits(sims, len(considered), phase, phases, used)
            # The last phase spends what is left, and a budget smaller than one visit per action
            # and phase runs out early: a move always costs exactly `sims`.
            schedule = (considered * perAction if phase < phases - 1
                        else [considered[k % len(considered)] for k in range(sims - used)])[:sims - used]
            yield from self.simulate(edges[index] for index in schedule)
            used += len(schedule)
            visits, completed = self._completedQ(edges, priors)
            scores = gumbel + logits + sigma(completed, visits, cfg.GUMBEL_C_VISIT, cfg.GUMBEL_C_SCALE)
            kept = sorted(considered, key=lambda i: -scores[i])[:max(1, math.ceil(len(considered) / 2))]
            if log is not None:
                log.info("halving phase %d of %d: %d simulations; g + logit + sigma(completed Q): %s; kept "
                         "columns %s", phase + 1, phases, len(schedule), _byColumn(edges, considered, scores),
                         " ".join(str(columnOf(edges[i].action) + 1) for i in kept))
            considered = kept
        chosen = edges[considered[0]]
        if log is not None:
            log.info("Gumbel root search chooses column %d", columnOf(chosen.action) + 1)
        visits, completed = self._completedQ(edges, priors)
        pi = np.zeros(self.action_size, dtype=np.float64)
        pi[[edge.action for edge in edges]] = improvedPolicy(logits, completed, visits, cfg.GUMBEL_C_VISIT,
                                                             cfg.GUMBEL_C_SCALE)
        return chosen.action, pi, chosen.Q

    def _completedQ(self, edges: list, priors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(visits, completed Q) of the root's edges now, Q for the player to move at the
        root (see MCTS.completedQ)."""
        visits = np.array([edge.N for edge in edges], dtype=np.float64)
        return visits, completedQ(priors, visits, np.array([edge.Q for edge in edges]), self.root.nn_value)

    def simulate(self, rootEdges: Iterable) -> SearchSteps:
        """Simulations, one per entry of `rootEdges`: descend to a leaf (through that
        root edge first; None: by max Q + U from the root), have it evaluated (a
        request to the caller, unless the game is over there) and expanded, back the
        value up.  One generator for all of a move's simulations: the search's
        per-leaf cost is mostly Python calls, and a generator per simulation would add
        one more to each.  LEAF_BATCH > 1: `simulateInBatches`."""
        if self.config.LEAF_BATCH > 1:
            yield from self.simulateInBatches(rootEdges, self.config.LEAF_BATCH)
            return
        mcts = self.mcts
        for rootEdge in rootEdges:
            leaf, value, done, breadcrumbs = mcts.moveToLeaf(rootEdge)
            if not done:
                value = self.evaluateLeaf(leaf, (yield leaf.state))
            mcts.backFill(leaf, value, breadcrumbs)

    def simulateInBatches(self, rootEdges: Iterable, batch: int) -> SearchSteps:
        """`simulate`'s simulations with up to `batch` leaves per request: each descent
        leaves a virtual loss on its path (`MCTS.addVirtualLoss`) so that the next one
        turns elsewhere, and the batch goes to the network as one call, which costs
        little more than a call for one leaf.  A descent that reaches a leaf already in
        the batch ends the batch and is made again after it; a finished game's leaf
        is backed up at once.  Every entry of `rootEdges` still gives one simulation
        backed up with its leaf's value."""
        mcts = self.mcts
        upcoming = iter(rootEdges)
        rootEdge = next(upcoming, _END)
        while rootEdge is not _END:
            leaves: list[Node] = []
            paths: list[list] = []
            waiting: set[int] = set()
            while rootEdge is not _END and len(leaves) < batch:
                leaf, value, done, breadcrumbs = mcts.moveToLeaf(rootEdge)
                if done:
                    mcts.backFill(leaf, value, breadcrumbs)
                elif leaf.id in waiting:
                    break
                else:
                    mcts.addVirtualLoss(breadcrumbs)
                    waiting.add(leaf.id)
                    leaves.append(leaf)
                    paths.append(breadcrumbs)
                rootEdge = next(upcoming, _END)
            if leaves:
                evaluations = yield [leaf.state for leaf in leaves]
                for leaf, path, evaluation in zip(leaves, paths, evaluations):
                    mcts.removeVirtualLoss(path)
                    mcts.backFill(leaf, self.evaluateLeaf(leaf, evaluation), path)

    def evaluateLeaf(self, leaf: Node, evaluation: Evaluation) -> float:
        """Expand an unfinished leaf with the network's (value, probs) for it; returns
        the value, for the leaf's player to move."""
        value, probs = evaluation
        self.mcts.expandLeaf(leaf, probs, value)
        return value

    def get_preds(self, state: GameState):
        """(value for the player to move, probs over the 42 actions, allowedActions)."""
        value, probs = self.evaluateStates([state])[0]
        return value, np.asarray(probs), state.allowedActions

    def evaluateStates(self, states: list[GameState]) -> list[Evaluation]:
        """One network call for many positions; each value is for its player to move.
        With MIRROR_AVERAGE the call also evaluates their mirror images, and each
        position gets the mean of its own and its mirror image's outputs; the priors
        are the softmax at PRIOR_TEMPERATURE (`_outputs`)."""
        return evaluationsOf(states, *self._outputs(*self.model.predict(self._inputs(states))))

    def evaluateStatesAsync(self, states: list[GameState]) -> Callable[[], list[Evaluation]]:
        """`evaluateStates` started in the background: returns the function that waits
        for the network and gives the evaluations."""
        future = self.model.predictAsync(self._inputs(states))
        return lambda: evaluationsOf(states, *self._outputs(*future.result()))

    def _inputs(self, states: list[GameState]) -> np.ndarray:
        inputs = self.model.convertToModelInputs(states)
        return withMirrorImages(inputs) if self.config.MIRROR_AVERAGE else inputs

    def _outputs(self, values: np.ndarray, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's (values, logits) as the search uses them: values for each
        position's player to move, averaged with the mirror images' (MIRROR_AVERAGE),
        the logits divided by PRIOR_TEMPERATURE."""
        if self.config.MIRROR_AVERAGE:
            values, logits = mirrorAveraged(values, logits)
        temperature = self.config.PRIOR_TEMPERATURE
        return values, (logits if temperature == 1 else np.asarray(logits) / temperature)

    def getAV(self, tau: float):
        """(pi, values) over the 42 actions at the root: pi the visit counts N
        sharpened by `tau` (`withTemperature`), values the edges' Q for the player to
        move at the root."""
        pi = np.zeros(self.action_size, dtype=np.float64)
        values = np.zeros(self.action_size, dtype=np.float64)
        for action, edge in self.root.edges:
            pi[action] = edge.N
            values[action] = edge.Q
        return withTemperature(pi, tau), values

    def chooseAction(self, pi: np.ndarray, values: np.ndarray, tau: float):
        """Choose from the visit shares `pi` (getAV(1)): tau=0 the most visited move
        (with SECURE_CHILD > 0 the root's `secureChild` instead), ties broken at
        random; otherwise a move sampled from `withTemperature(pi, tau)`.  Returns
        (action, the chosen edge's Q for the player to move)."""
        if tau != 0:
            action = int(self.rng.choice(len(pi), p=withTemperature(pi, tau)))
        elif self.config.SECURE_CHILD > 0:
            action = secureChild(self.root.edges, self.config.SECURE_CHILD)
        else:
            action = int(self.rng.choice(np.flatnonzero(pi == pi.max())))
        return action, float(values[action])

    def reanalyse(self, rows: list[dict]) -> None:
        """Refresh memory rows' search targets with this agent's network (REANALYSE_POSITIONS):
        each row's position is searched anew as self-play searches a move after its
        sampled opening (no root noise, tau 0: with Gumbel no draws), all of them at once
        in lockstep, each by its own copy of this agent; the row's `AV` becomes the
        search's policy and `q` its value of the best move, for the row's player to
        move.  The game's result `value` is kept.  Not logged."""
        players = [self.forGame(int(seed)) for seed in self.rng.integers(2**31, size=len(rows))]
        for player in players:
            player.logger = None
        searches = [player.actSteps(row["state"], 0, False) for player, row in zip(players, rows)]
        for row, player, (_, pi, value, _) in zip(rows, players, runTogether(searches, players.__getitem__)):
            row["AV"], row["q"] = np.asarray(pi, dtype=np.float32), float(value)
            player.releaseTree()

    # -- the tree --------------------------------------------------------------------
    def buildMCTS(self, state: GameState) -> None:
        self.root = Node(state)
        self.mcts = MCTS(self.root, self.cpuct, 0.0, self.config.ALPHA, self.rng, self.logger)

    def releaseTree(self) -> None:
        """Drop the search tree, freed at once (`MCTS.release`): for a game's own
        player once its game is over."""
        if self.mcts is not None:
            self.mcts.release()
        self.mcts = self.root = None

    def changeRootMCTS(self, state: GameState) -> None:
        self.root = self.mcts.tree[state.id]
        self.mcts.changeRoot(self.root)

    # -- learning --------------------------------------------------------------------
    def replay(self, ltmemory, progress: str | None = None) -> dict[str, float]:
        """Retrain the network on memory: TRAINING_LOOPS times, fit on BATCH_SIZE
        positions sampled without replacement.  Returns the last loop's losses.
        `progress`: the label of a progress bar over the loops (None: no bar)."""
        cfg = self.config
        memory = MergedRows(ltmemory) if cfg.MERGE_DUPLICATES else list(ltmemory)
        loops = range(cfg.TRAINING_LOOPS)
        if progress is not None:
            loops = tqdm(loops, desc=progress, leave=False)
        for _ in loops:
            picks = self.rng.choice(len(memory), size=min(cfg.BATCH_SIZE, len(memory)), replace=False)
            minibatch = [memory[i] for i in picks]
            states, targets = self.model.trainingData(minibatch, qWeights(minibatch, cfg))
            fit = self.model.fit(states, targets, epochs=cfg.EPOCHS, verbose=0, validation_split=0,
                                 batch_size=cfg.FIT_BATCH_SIZE)
            history = fit.history
            self.train_overall_loss.append(round(history["loss"][-1], 4))
            self.train_value_loss.append(round(history[self.model.valueLossName][-1], 4))
            self.train_policy_loss.append(round(history["policy_head_loss"][-1], 4))
        self.model.printWeightAverages()
        return {"loss": self.train_overall_loss[-1], "value_loss": self.train_value_loss[-1],
                "policy_loss": self.train_policy_loss[-1]}
