"""Self-play and tournament games played by Ray workers, on this machine or many.

Self-play is where AlphaZero spends its compute, and its games are independent: with
the config's WORKERS = n, `Pool` starts n Ray actors (`Worker`), each holding its own
copy of the players' networks, and `funcs.playMatches(..., pool=pool)` hands them the
games.  Each worker plays its share of a match in lockstep, with the very code the
learner would run (`funcs.matchEpisodes` and `funcs.playEpisodes`, which the pool is
given by its maker, `funcs.workerPool`, and hands on to its workers), and sends every
game back the moment it ends; the learner scores the games and stores their positions
in episode order, then retrains and promotes as without workers.

- Same games: a game's seed is `funcs.episodeSeed(base, episode)`, `base` drawn once
  per match by the learner (`funcs.matchSeed`), so which worker plays a game, and how
  many workers there are, changes nothing but the batches its network calls share
  (numbers that can differ in their last bits, as between lanes: see `agent`).
- Weights: a player's weights go to the object store once per change, tagged with a
  version (a counter the pool bumps whenever the weights it would send differ from the
  last ones sent under that player's name).  Every call to a worker names the version
  it must play with and where to fetch it; a worker that holds another version fetches
  and loads that one first, so it never plays with a stale network.
- Faults: a worker that dies mid-match (killed, out of memory, its machine gone) is
  dropped, said in the project's words (which worker, what ended it, what follows:
  Ray's own raw report stays in its log files), and its unfinished games are dealt to
  the others; games it had sent back are kept, and each game is counted once.  With
  no worker left the match raises `WorkersLost`: the iteration is not recorded, and
  training again resumes from the last finished iteration, as after any crash.
- Logs: each game's main / tourney log lines are kept by its worker and written to the
  learner's log when the game is scored.  The MCTS log is not written for games
  played by workers.

Ray is imported at the top of this module; `funcs` imports this module only when
WORKERS > 0 (`funcs.workerPool`), because Ray is heavy and the in-process path needs
none of it.  This module does not import `funcs`: the game machinery comes in as
`Pool`'s `matchEpisodes` and `playEpisodes` (Ray sends module-level functions to the
workers by reference, so each worker process imports `funcs` itself).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import ray
from ray.exceptions import NodeDiedError, OutOfMemoryError, RayActorError, WorkerCrashedError

from agent import Agent, Evaluation
from config import Config, ConfigError
from game import Game, GameState
from memory import Memory

ENV = Game()
WORKER_DIED = (RayActorError, WorkerCrashedError, OutOfMemoryError, NodeDiedError)
"""What a call to a worker raises when the worker, its process or its machine is gone."""
_QUIET = logging.Logger("workers.quiet", logging.CRITICAL + 1)
"""The log of a game whose match log is off: writes nothing, formats nothing."""


class WorkersLost(RuntimeError):
    """Every worker of the pool died before a match's games were all played."""


def startRay(address: str | None = None) -> None:
    """Start a local Ray on this machine's CPUs (`address` None), without the
    dashboard, or join the cluster at `address` (see the README); quiet either way:
    warnings only, and the workers' own output (TensorFlow's start-up chatter) and
    Ray's raw reports of their deaths stay in Ray's log files instead of the
    learner's output (the pool says a death in its own words)."""
    if address is None:
        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, logging_level=logging.WARNING,
                 log_to_driver=False)
    else:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    # log_to_driver covers only the workers' output: the raylet's messages (a worker's death) are printed by a
    # thread of the driver behind this switch, which Ray has no public setting for (ray.util.rpdb sets it too).
    ray._private.worker._worker_logs_enabled = False


@dataclass(frozen=True)
class PlayerSpec:
    """What a worker needs to play as one of the learner's agents: its name, search
    settings and config, its network's class, and the version of its weights with the
    object-store reference to fetch them from (fetched only by a worker that does not
    hold that version)."""

    name: str
    sims: int
    cpuct: float
    config: Config
    network: type
    version: int
    weights: ray.ObjectRef


class _GameLog(logging.Handler):
    """The lines one game writes to its log, kept to travel back with the game."""

    def __init__(self, index: int):
        super().__init__()
        self.lines: list[str] = []
        self.logger = logging.Logger(f"workers.game{index}", logging.INFO)
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@ray.remote(num_cpus=1, max_restarts=0)
class Worker:
    """A Ray actor that plays games for the learner, with its own copy of each
    player's network (kept between calls, reloaded when the version changes).
    `matchEpisodes` and `playEpisodes`: the learner's game machinery (see `Pool`)."""

    def __init__(self, matchEpisodes: Callable, playEpisodes: Callable):
        self.matchEpisodes = matchEpisodes
        self.playEpisodes = playEpisodes
        self.networks: dict[str, tuple[tuple, int, object]] = {}
        """Per player name: (what the network was built from, version held, network)."""

    def _agent(self, spec: PlayerSpec) -> Agent:
        """The player `spec` describes, with its network at `spec.version`."""
        built = (spec.network, spec.config.to_json())
        held = self.networks.get(spec.name)
        if held is None or held[0] != built:
            held = (built, None, spec.network.fromConfig(spec.config, ENV.input_shape, ENV.action_size))
        if held[1] != spec.version:
            network = held[2]
            network.model.set_weights(ray.get(spec.weights))
            network.weightsChanged()
            held = (built, spec.version, network)
        self.networks[spec.name] = held
        return Agent(spec.name, ENV.state_size, ENV.action_size, spec.sims, spec.cpuct, held[2], spec.config)

    def evaluate(self, spec: PlayerSpec, states: list[GameState]) -> tuple[int, list[Evaluation]]:
        """(the version of the player's network this worker holds once `spec`'s is
        loaded, its evaluations of `states`: values for each position's player to
        move)."""
        agent = self._agent(spec)
        return self.networks[spec.name][1], agent.evaluateStates(states)

    def play(self, specs: list[PlayerSpec], indices: list[int], base: int, turns_until_tau0: int,
             collect: int | None, log: bool, goes_first: int, starts: dict | None = None):
        """Play episodes `indices` of a match (see `funcs.playMatches`; `specs` holds
        one player for self-play, else player1 and player2) in lockstep; yields each
        game as it ends: (the finished episode, a `funcs.Episode`, its log lines if
        `log`, the positions the networks evaluated since the previous yield).
        `collect`: keep the positions for memory (in memories of that size), with
        root noise; `starts`: episode -> the position it starts from (self-play's archive starts)."""
        players = [self._agent(spec) for spec in specs]
        logs = {e: _GameLog(e) for e in indices} if log else {}
        episodes = self.matchEpisodes(players[0], players[-1], indices, base,
                                      lambda e: logs[e].logger if log else _QUIET, turns_until_tau0,
                                      None if collect is None else Memory(collect), goes_first, starts)
        # The games run in a thread, so that each can be yielded (sent back) the moment it ends.
        finished: queue.Queue = queue.Queue()

        def playAll():
            try:
                for _ in self.playEpisodes(episodes, finished.put):
                    pass
            except BaseException as error:  # handed to the generator, which raises it to the learner
                finished.put(error)

        threading.Thread(target=playAll, daemon=True).start()
        networks = {id(player.model): player.model for player in players}.values()
        counted = sum(network.positionsEvaluated for network in networks)
        for _ in indices:
            item = finished.get()
            if isinstance(item, BaseException):
                raise item
            now = sum(network.positionsEvaluated for network in networks)
            yield item, logs[item.index].lines if log else [], now - counted
            counted = now


def _freeCPUs(wanted: int, patience: float = 10.0) -> tuple[float, float]:
    """(free CPUs, CPUs) of the Ray cluster, waiting up to `patience` seconds for
    `wanted` to be free: the CPUs of workers just killed (a previous pool) come back
    a moment after `ray.kill` returns."""
    deadline = time.monotonic() + patience
    while True:
        free = ray.available_resources().get("CPU", 0)
        if free >= wanted or time.monotonic() > deadline:
            return free, ray.cluster_resources().get("CPU", 0)
        time.sleep(0.2)


class Pool:
    """The learner's side of n Ray workers: starts them (and a local Ray, or joins
    the cluster at `address`, unless Ray is already initialised), keeps the players'
    weights versioned in the object store, deals each match's games, gathers them
    back, replays the games of workers that died.  Use it in a `with` (or call
    `close`): the workers are killed at the end, and a Ray it started is shut down.
    `say` reports worker deaths.  A cluster with fewer free CPUs than workers is
    refused (ConfigError) rather than left waiting for workers that cannot start.
    `matchEpisodes` and `playEpisodes`: the code that plays a match's games in
    lockstep (`funcs.matchEpisodes` and `funcs.playEpisodes`, as `funcs.workerPool`
    passes them), handed on to every worker; module-level functions, so that Ray
    sends them by reference."""

    def __init__(self, workers: int, address: str | None = None, say: Callable[[str], None] = print, *,
                 matchEpisodes: Callable, playEpisodes: Callable):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"a worker pool needs a positive number of workers, got {workers!r}")
        self.ownsRay = not ray.is_initialized()
        if self.ownsRay:
            startRay(address)
        free, cpus = _freeCPUs(workers)
        if free < workers:
            if self.ownsRay:
                ray.shutdown()
            where = "this machine" if address is None else f"the Ray cluster at {address}"
            raise ConfigError(f"WORKERS = {workers} needs {workers} free CPUs, but {where} has {free:g} free (of "
                              f"{cpus:g}): lower WORKERS, or add machines (ray start --address=...)")
        self.size = workers
        self.actors = [Worker.options(scheduling_strategy="SPREAD").remote(matchEpisodes, playEpisodes)
                       for _ in range(workers)]
        self.numbers = {actor: number for number, actor in enumerate(self.actors, start=1)}
        """Each worker's number (1..workers), to name it when it dies."""
        self.say = say
        self.positionsEvaluated = 0
        """Positions the workers' networks evaluated for the games that came back."""
        self.replayed = 0
        """Games dealt again because the worker playing them died."""
        self._version = 0
        self._sent: dict[str, tuple[int, list[np.ndarray], ray.ObjectRef]] = {}

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self.ownsRay:
            ray.shutdown()

    # -- weights ---------------------------------------------------------------------
    def spec(self, player: Agent) -> PlayerSpec:
        """The worker's view of `player`, its weights versioned: the version stays while
        the weights equal the last ones sent under the player's name, else the
        weights go to the object store under the next version."""
        weights = player.model.model.get_weights()
        sent = self._sent.get(player.name)
        if sent is None or len(sent[1]) != len(weights) or not all(
                np.array_equal(old, new) for old, new in zip(sent[1], weights)):
            self._version += 1
            sent = (self._version, weights, ray.put(weights))
            self._sent[player.name] = sent
        return PlayerSpec(player.name, player.MCTSsimulations, player.cpuct, player.config, type(player.model),
                          sent[0], sent[2])

    def evaluate(self, player: Agent, states: list[GameState]) -> list[tuple[int, list[Evaluation]]]:
        """Each worker's (version held, evaluations of `states`) for `player`'s current
        weights; it also makes every worker ready to play (network built and loaded)."""
        spec = self.spec(player)
        return ray.get([actor.evaluate.remote(spec, states) for actor in self.actors])

    # -- matches ---------------------------------------------------------------------
    def playMatch(self, player1: Agent, player2: Agent, episodes: int, base: int, logger: logging.Logger,
                  turns_until_tau0: int, memory: Memory | None, goes_first: int,
                  finished: Callable[[object], None] | None = None, starts: dict | None = None):
        """Have the workers play a match's `episodes` games (seeded from `base`), each
        worker its share; `finished(episode)` is called as each game comes back (an
        episode: what `matchEpisodes` made, a `funcs.Episode`, finished).
        Then yields the finished episodes in episode order, each game's log lines
        written to `logger` first and the episode given `logger` (for its result).
        `starts`: episode -> the position it starts from (`funcs.matchEpisodes`).
        Raises WorkersLost when every worker died first."""
        if not (isinstance(player1, Agent) and isinstance(player2, Agent)):
            raise ValueError("only agents can play on Ray workers: a human or a reference player plays in this "
                             f"process (got {type(player1).__name__} and {type(player2).__name__})")
        specs = [self.spec(player1)] + ([] if player2 is player1 else [self.spec(player2)])
        log = logger.isEnabledFor(logging.INFO)
        collect = None if memory is None else memory.MEMORY_SIZE
        games: dict[int, tuple[object, list[str]]] = {}  # episode number: (finished episode, its log lines)
        streams: dict = {}

        def deal(indices: list[int]) -> None:
            for k, actor in enumerate(self.actors):
                share = indices[k::len(self.actors)]
                if share:
                    stream = actor.play.remote(specs, share, base, turns_until_tau0, collect, log, goes_first,
                                               {e: starts[e] for e in share if e in (starts or {})})
                    streams[stream] = (actor, share)

        deal(list(range(episodes)))
        while streams:
            [stream], _ = ray.wait(list(streams), num_returns=1)
            actor, _ = streams[stream]
            try:
                episode, lines, positions = ray.get(next(stream))
            except StopIteration:
                del streams[stream]
                continue
            except WORKER_DIED as error:
                self._lost(actor, error, streams, games, episodes, deal)
                continue
            if episode.index in games:
                continue
            games[episode.index] = (episode, lines)
            self.positionsEvaluated += positions
            if finished is not None:
                finished(episode)
        for e in range(episodes):
            episode, lines = games[e]
            for line in lines:
                logger.info(line)
            episode.logger = logger
            yield episode

    def _lost(self, actor, error: Exception, streams: dict, games: dict, episodes: int, deal) -> None:
        """A worker died: drop it, say so (through `say`) and deal its unfinished games
        (of every call it was given) to the others; with none left, raise WorkersLost."""
        unfinished = sorted({e for owner, share in streams.values() if owner == actor for e in share
                             if e not in games})
        for stream in [stream for stream, (owner, _) in streams.items() if owner == actor]:
            del streams[stream]
        ray.kill(actor)  # a worker that is only unreachable must not come back and play on
        self.actors = [other for other in self.actors if other != actor]
        if not self.actors:
            raise WorkersLost(
                f"all {self.size} Ray workers have died (the last, worker {self.numbers[actor]}: {deathCause(error)}); "
                f"{episodes - len(games)} of the match's {episodes} games were not played.  The iteration is not "
                f"recorded: training again resumes from the last finished iteration (check the worker machines with "
                f"`ray status`).")
        left = len(self.actors)
        self.say(f"Ray worker {self.numbers[actor]} of {self.size} died ({deathCause(error)}): its {len(unfinished)} "
                 f"unfinished games of this match are played again by the {left} worker{'s' * (left > 1)} left, "
                 f"which play every game from now on.")
        self.replayed += len(unfinished)
        deal(unfinished)


def deathCause(error: Exception) -> str:
    """What ended a worker, in words, from the error a call to it raised (one of
    WORKER_DIED); the error's name stays, to look it up in Ray's log files."""
    if isinstance(error, OutOfMemoryError):
        cause = "its machine ran low on memory and Ray stopped it"
    elif isinstance(error, NodeDiedError):
        cause = "its machine left the Ray cluster"
    else:
        cause = "its process was killed or crashed"
    return f"{cause}; Ray's {type(error).__name__}"
