"""Playing matches and the training loop.

`playMatches` plays all its episodes at once, in lockstep (`agent.runTogether`): every live game's search runs
to its next leaf, all leaves that need the same network are evaluated in one batched call, then every game
resumes.  Within a game the search is the sequential one (`Agent.actSteps` is the same code `Agent.act` runs);
only the network calls are shared.

With a worker pool (config WORKERS > 0) the same games are played by Ray workers, each its share in lockstep,
and scored here in episode order (see workers.py).

`train` is the tutorial's loop: self-play with the best network -> memory -> retrain the current network ->
tournament current vs best -> promote and save.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import time

import cli
import loggers as lg

if __name__ == "__main__":  # python -m funcs: --help, or a wrong argument, is answered before TensorFlow loads
    ARGUMENTS = cli.TRAINING.parse_args()

with lg.nativeStderrTo(os.devnull):  # TensorFlow's C++ start-up notices, hidden as the notebook hides them
    import keras
    import numpy as np
    from tqdm.auto import tqdm

    import branches
    import evaluation
    import gamelog
    import initialise
    import play
    import runs
    import storage
    from agent import Agent, User, oneHot, runTogether
    from config import DEFAULT, PRESETS, Config, ConfigError
    from game import ACTION_SIZE, COLUMNS, Game, GameState, playerPiece
    from loss import qWeights, valueTargets
    from memory import Memory
    from runs import versionPlayer

_INFO = logging.INFO


def episodeSeed(baseSeed: int, episode: int) -> int:
    """The seed of one episode's players, from the match's base seed."""
    return int(np.random.SeedSequence([baseSeed, episode]).generate_state(1)[0])


def _progress(total: int, desc: str | None):
    if desc is None:
        return None
    return tqdm(total=total, desc=desc, leave=False)


class Episode:
    """One game of a match.

    `players` maps playerTurn (1: moves first, -1: second) to the seat's player; `play()` is the whole game as a
    search generator (see `agent.runTogether`). Once `done`, `value` is the result for the player to move in
    `state` (-1: they lost, or resigned; 0: a draw). Given a `start` (`Memory.startPositions`) it plays from there."""

    def __init__(self, index: int, players: dict, names: dict, turns_until_tau0: int, noise: bool,
                 collect: Memory | None, logger: logging.Logger, opening: tuple[int, ...] = (),
                 start: GameState | None = None):
        self.index = index
        self.opening = opening  # unsearched first moves (a tournament's, `pairedOpening`)
        self.archived = start is not None
        self.players = players
        self.names = names
        self.turns_until_tau0 = turns_until_tau0
        self.noise = noise
        self.memory = Memory(collect.MEMORY_SIZE) if collect is not None else None
        self.logger = logger
        self.state = GameState.initial() if start is None else start
        self.turn = 0
        self.done = False
        self.value = 0
        self.side = 0  # the side that searches this game with a count of its own (`_drawSide`)

    @property
    def player(self):
        """The player to move (whose network answers the game's pending request)."""
        return self.players[self.state.playerTurn]

    def play(self):
        """Play the game to its end, yielding every leaf the searches need evaluated (a human's: `_playTyped`)."""
        if self.logger.isEnabledFor(_INFO):
            gamelog.logStart(self.logger, self.index + 1, self.names)
        humans = [turn for turn, player in self.players.items() if isinstance(player, User)]
        if humans:
            self._playTyped(humans[0])
            return
        if self.noise and not self.archived:
            self._playRandomOpening()
        for action in self.opening:
            self._playUnsearched(action)
        self.side = self._drawSide()
        while not self.done:
            tau = 1 if self.turn < self.turns_until_tau0 else 0
            simulations, stored = self._search()  # only an Agent's search takes a count of its own
            search = (self.player.actSteps(self.state, tau, self.noise) if simulations is None
                      else self.player.actSteps(self.state, tau, self.noise, simulations=simulations))
            move = yield from search
            self._playMove(*move, stored=stored)
        for player in self.players.values():
            if isinstance(player, Agent):  # the game's own copy (`_forGame`): its tree is read no more
                player.releaseTree()

    def _playTyped(self, human: int) -> None:
        """The game of the `User` playing `human` (a playerTurn) against the agent on the other side: the typed
        game of `play.typedGame` through the User's input and output (its agent searches on its own, asking the
        caller for nothing), each move logged (and stored) here as it is played; a resignation ends the game as
        a loss for the human."""
        user = self.players[human]
        match = play.Match(self.players[-human], human == 1, turns_until_tau0=self.turns_until_tau0,
                           moved=self._playMove)
        play.typedGame(match, user.input_fn, user.output_fn)
        if match.resigned:
            self.done, self.value = True, -1
            if self.logger.isEnabledFor(_INFO):
                gamelog.logResign(self.logger, self.index + 1, self.names[human])

    def _playRandomOpening(self) -> None:
        """Self-play only: the first k moves, k from 0..RANDOM_OPENING_MOVES of the first player's config, are
        random legal moves, neither searched nor stored (`Config.RANDOM_OPENING_MOVES`), drawn from the first
        player's per-game generator, so a game is the same wherever it is played; 0 draws nothing."""
        player = self.players[1]
        if not isinstance(player, Agent) or player.config.RANDOM_OPENING_MOVES == 0:
            return
        for _ in range(int(player.rng.integers(player.config.RANDOM_OPENING_MOVES + 1))):
            if self.done:
                return
            self._playUnsearched(int(player.rng.choice(self.state.allowedActions)))

    def _playUnsearched(self, action: int) -> None:
        """Play an opening's move, logged as a move with all its share on the column played."""
        if self.logger.isEnabledFor(_INFO):
            gamelog.logMove(self.logger, self.index + 1, self.names[self.state.playerTurn], self.state, action,
                            oneHot(action, ACTION_SIZE), None, None)
        self._advance(action)

    def _selfPlayConfig(self, player):
        """`player`'s config in self-play (where FAST_SEARCH_SIMS, STRONG_SEARCH_SIMS apply); else None."""
        return player.config if self.memory is not None and isinstance(player, Agent) else None

    def _drawSide(self) -> int:
        """The side (a playerTurn) whose every move of this game searches with a count of its own (`_search`),
        drawn from the first player's generator: STRONG_SEARCH_SIMS, every game; FAST_SEARCH_SIDE, with
        probability 1 - FULL_SEARCH_PROBABILITY; 0: none."""
        player, cfg = self.players[1], self._selfPlayConfig(self.players[1])
        if cfg is None or not (cfg.STRONG_SEARCH_SIMS or (cfg.FAST_SEARCH_SIMS and cfg.FAST_SEARCH_SIDE)):
            return 0
        if not cfg.STRONG_SEARCH_SIMS and player.rng.random() < cfg.FULL_SEARCH_PROBABILITY:
            return 0
        return 1 if player.rng.random() < 0.5 else -1

    def _search(self) -> tuple[int | None, bool]:
        """The next move's simulations (None: the mover's own) and whether its position is stored: the game's side
        (`_drawSide`) searches STRONG_SEARCH_SIMS (stored) or FAST_SEARCH_SIMS (not); else playout cap
        randomisation makes a move fast with probability 1 - FULL_SEARCH_PROBABILITY (the mover's generator)."""
        cfg = self._selfPlayConfig(self.player)
        if cfg is None:
            return None, True
        if self.state.playerTurn == self.side:
            return (cfg.STRONG_SEARCH_SIMS, True) if cfg.STRONG_SEARCH_SIMS else (cfg.FAST_SEARCH_SIMS, False)
        if not cfg.FAST_SEARCH_SIMS or cfg.FAST_SEARCH_SIDE or self.player.rng.random() < cfg.FULL_SEARCH_PROBABILITY:
            return None, True
        return cfg.FAST_SEARCH_SIMS, False

    def __getstate__(self) -> dict:
        """A finished game travels from a Ray worker to the learner (workers.py) without its players and logger,
        which belong to the process that played it; the learner scores it with its own logger."""
        return {**self.__dict__, "players": {}, "logger": None}

    def _playMove(self, action, pi, mcts_value, nn_value, stored: bool = True) -> None:
        """Play a searched move: its position to memory (self-play, unless a fast search's), the move to the log."""
        state = self.state
        if self.memory is not None and stored:
            self.memory.commit_stmemory(Game.identities, state, pi, mcts_value)
        if self.logger.isEnabledFor(_INFO):
            gamelog.logMove(self.logger, self.index + 1, self.names[state.playerTurn], state, action, pi,
                            mcts_value, nn_value)
        self._advance(action)

    def _advance(self, action: int) -> None:
        """Play `action` on the board (the final board goes to the log)."""
        self.state, self.value, self.done = self.state.takeAction(action)
        self.turn += 1
        if self.done:
            self.state.render(self.logger)


def matchSeed(player1) -> int:
    """The base seed of a match's per-episode seeds (`episodeSeed`): the next draw of the first player's random
    generator (0 for a human).  The learner draws it once per match, so every episode's seed is the same however
    many processes play."""
    return int(player1.rng.integers(2**32)) if isinstance(player1, Agent) else 0


def _seats(player1, player2, indices, base: int, goes_first: int):
    """For each episode in `indices`, (player moving first, player moving second) with their match names.
    goes_first 0 alternates (player1 starts the even episodes), 1 / -1 make player1 / player2 start every game.
    Agents get a per-game copy (own tree and random draws, seeded by `episodeSeed(base, episode)`); in self-play
    one copy plays both sides, sharing its tree, unless one side is to search more (STRONG_SEARCH_SIMS: each side
    its own tree, so the other does not start from the stronger side's visits).  Only the first episode's searches
    write to the MCTS log, so its blocks do not interleave."""
    shared = player2 is player1 and not (isinstance(player1, Agent) and player1.config.STRONG_SEARCH_SIMS)
    seats = []
    for e in indices:
        seed = episodeSeed(base, e)
        p1 = _forGame(player1, seed, e)
        p2 = p1 if shared else _forGame(player2, seed + 1, e)
        player1_starts = (e % 2 == 0) if goes_first == 0 else goes_first == 1
        seats.append(((p1, player1.name), (p2, player2.name)) if player1_starts
                     else ((p2, player2.name), (p1, player1.name)))
    return seats


def _forGame(player, seed: int, episode: int):
    if not isinstance(player, Agent):
        return player
    copy = player.forGame(seed)
    if episode > 0:
        copy.logger = None
    return copy


def matchEpisodes(player1, player2, indices, base: int, loggerOf, turns_until_tau0: int,
                  collect: Memory | None, goes_first: int = 0, starts: dict | None = None) -> list[Episode]:
    """Episodes `indices` of a match between player1 and player2 (see playMatches), not yet played, seated by
    `_seats` from the match's base seed `base`. `loggerOf(e)` is episode e's log: in this process one logger
    serves the whole match; a Ray worker gives each game its own, so that its lines travel with it (see
    workers.py).  With `collect`, positions are kept (in memories of its size) and the root noise is used;
    `starts`: episode -> its start (self-play's ARCHIVE_START_PROBABILITY, `Memory.startPositions`)."""
    seats = _seats(player1, player2, indices, base, goes_first)
    most = player1.config.EVAL_RANDOM_OPENING_MOVES if collect is None and isinstance(player2, Agent) and \
        isinstance(player1, Agent) else 0
    return [Episode(e, {1: first[0], -1: second[0]}, {1: first[1], -1: second[1]}, turns_until_tau0,
                    noise=collect is not None, collect=collect, logger=loggerOf(e),
                    opening=pairedOpening(base, e, most) if most else (), start=(starts or {}).get(e))
            for e, (first, second) in zip(indices, seats)]


def pairedOpening(base: int, episode: int, most: int) -> tuple[int, ...]:
    """The unsearched first moves of game `episode` of a match between agents: k random legal moves, k from 0..most
    (EVAL_RANDOM_OPENING_MOVES), drawn from the match's base seed and the game's pair: games 2j and 2j + 1 (seats
    swapped) play one opening, so a lopsided one favours each player once.  It stops before a move ending the game."""
    rng = np.random.default_rng([base, episode // 2])
    state, moves = GameState.initial(), []
    for _ in range(int(rng.integers(most + 1))):
        action = int(rng.choice(state.allowedActions))
        state, _, done = state.takeAction(action)
        if done:
            break
        moves.append(action)
    return tuple(moves)


def playEpisodes(episodes: list[Episode], finished=None, stop=None):
    """Play `episodes` to their ends, yielding them batch by batch once every game of the batch is over: agents
    play all at once in lockstep (`agent.runTogether`), a human one game at a time.  `finished(episode)` is
    called the moment each game ends (a progress bar, a Ray worker sending the game back).  `stop()` (agents
    only): once it says True, the games still running are abandoned, and a batch yields only its finished games."""
    humans = any(isinstance(player, User) for episode in episodes for player in episode.players.values())
    batches = [[e] for e in episodes] if humans else [episodes]

    def played(episode: Episode):
        yield from episode.play()
        if finished is not None:
            finished(episode)

    for batch in batches:
        runTogether([played(episode) for episode in batch], lambda i, batch=batch: batch[i].player,
                    None if humans else stop)
        yield [episode for episode in batch if episode.done]


def playMatches(player1, player2, EPISODES: int, logger: logging.Logger, turns_until_tau0: int,
                memory: Memory | None = None, goes_first: int = 0, progress: str | None = None,
                pool=None, decided=None):
    """Play EPISODES games between two players (the same object twice = self-play).

    With `memory`, every position is stored with its search policy and, at the end, the result for its player to
    move; Dirichlet root noise is used only then (self-play explores; tournaments and human games do not).
    Moves are sampled (tau=1) for the first `turns_until_tau0` turns of each game, then the search's best move
    is played (the most visited with PUCT, the sequential-halving winner with Gumbel); without `memory` two agents'
    games open with player1's EVAL_RANDOM_OPENING_MOVES (`pairedOpening`). A `User` plays an agent in the typed
    game of `play.typedGame`, a game at a time.

    `pool` (a `workers.Pool`, agents only): its Ray workers play the games, each its share in lockstep, with the
    players' current weights; they come back here to be scored and stored in episode order: the same games,
    memory and scores as here (a game's seed depends only on `matchSeed` and its episode number).

    `decided(scores, left)` (played in this process only): asked as the games end, with the wins per player name
    and draws so far and the number of games still running; once it says True the match stops, its unfinished
    games abandoned (a tournament whose promotion is settled, EVAL_STOP_WHEN_DECIDED).

    Returns (scores, memory, points, sp_scores): wins per player name and draws; points per player name, +1 / -1 / 0
    per game; wins of the starting ('sp') and the other ('nsp') player; over the games played."""
    if goes_first not in (-1, 0, 1):
        raise ValueError(f"goes_first must be 0 (alternate), 1 or -1, got {goes_first!r}")
    if (player1 is not player2 and player1.name == player2.name) or "drawn" in (player1.name, player2.name):
        raise ValueError("the two players of a match need distinct names other than 'drawn' (the scores are "
                         f"kept by name), got {player1.name!r} and {player2.name!r}")
    if isinstance(player1, User) or isinstance(player2, User):
        if not (isinstance(player1, Agent) or isinstance(player2, Agent)):
            raise ValueError("a human (User) plays against an agent (the typed game, play.typedGame), got "
                             f"{type(player1).__name__} and {type(player2).__name__}")
    scores = {player1.name: 0, "drawn": 0, player2.name: 0}
    sp_scores = {"sp": 0, "drawn": 0, "nsp": 0}
    points = {player1.name: [], player2.name: []}
    base = matchSeed(player1)
    selfplay = memory is not None and player1 is player2 and isinstance(player1, Agent)
    starts = memory.startPositions(player1.config.ARCHIVE_START_PROBABILITY, base, EPISODES) if selfplay else {}
    bar = _progress(EPISODES, progress)
    sofar = {player1.name: 0, "drawn": 0, player2.name: 0}

    def counted(episode: Episode) -> None:
        if bar is not None:
            bar.update(1)
        sofar[_winner(episode) or "drawn"] += 1

    stop = None if decided is None else (lambda: decided(sofar, EPISODES - sum(sofar.values())))
    try:
        if pool is None:
            episodes = matchEpisodes(player1, player2, range(EPISODES), base, lambda e: logger, turns_until_tau0,
                                     memory, goes_first, starts)
            finished = (episode for batch in playEpisodes(episodes, counted, stop) for episode in batch)
        else:
            finished = pool.playMatch(player1, player2, EPISODES, base, logger, turns_until_tau0, memory, goes_first,
                                      None if bar is None else counted, starts)
        for episode in finished:
            _score(episode, scores, sp_scores, points, memory)
    finally:
        if bar is not None:
            bar.close()
    return scores, memory, points, sp_scores


def _winner(episode: Episode) -> str | None:
    """The name of a finished game's winner (None: a draw); `value` -1: the player to move at the end lost."""
    return episode.names[-episode.state.playerTurn] if episode.value == -1 else None


def promoted(current_wins: int, best_wins: int, threshold: float) -> bool:
    """The tutorial's promotion rule: the current network's wins exceed the best network's x SCORING_THRESHOLD."""
    return current_wins > best_wins * threshold


def promotionSettled(scores: dict, left: int, threshold: float) -> bool:
    """True when `left` more tournament games cannot change `promoted` for the wins in `scores` ('current_player',
    'best_player'): the current network is promoted even if the best one wins them all, or not even if it wins
    them all itself."""
    current, best = scores["current_player"], scores["best_player"]
    return promoted(current, best + left, threshold) or not promoted(current + left, best, threshold)


def _score(episode: Episode, scores, sp_scores, points, memory: Memory | None) -> None:
    state = episode.state
    if memory is not None:
        episode.memory.setResult(state, episode.value)
        memory.commitGame(episode.memory)
    winner = _winner(episode)
    if winner is not None:
        scores[winner] += 1
        sp_scores["nsp" if state.playerTurn == 1 else "sp"] += 1
    else:
        scores["drawn"] += 1
        sp_scores["drawn"] += 1
    points[episode.names[state.playerTurn]].append(episode.value)
    points[episode.names[-state.playerTurn]].append(-episode.value)
    if episode.logger.isEnabledFor(_INFO):
        gamelog.logResult(episode.logger, episode.index + 1, winner, episode.turn)


# -- versions and humans ---------------------------------------------------------------
def playMatchesBetweenVersions(env: Game, run_version, player1version: int, player2version: int,
                               EPISODES: int, logger: logging.Logger, turns_until_tau0: int,
                               goes_first: int = 0, cfg: Config | None = None, input_fn=None,
                               output_fn=print):
    """Play two versions of a run against each other (-1: a human, typing columns; `input_fn` None: the builtin
    `input` at the time of asking).

    `run_version` is an archived run number (run_archive/connect4/runNNNN) or None for the live run folder;
    networks are built with that run's own config.  A game with a human is the typed game of `play.typedGame`,
    through `input_fn` and `output_fn` (the human's side, the board after each move, the agent's thinking after
    each of its moves, at the end the final board and the result line).  Against a human the agent searches the
    run's PLAY_SIMS simulations (0 there: its MCTS_SIMS) with its play-time search settings
    (`config.playSearch`), as in `play.py`; between two networks, MCTS_SIMS and the run's own search."""
    folder = runs.runFolder(cfg or DEFAULT, run_version)
    human = -1 in (player1version, player2version)
    sims, search, seconds = runs.playSettings(folder, cfg or DEFAULT) if human else (None, None, 0.0)
    players = [versionPlayer(name, env, cfg or DEFAULT, folder, version, input_fn, output_fn, sims, search, seconds)
               for name, version in (("player1", player1version), ("player2", player2version))]
    return playMatches(*players, EPISODES, logger, turns_until_tau0, None, goes_first)


# -- the training loop ------------------------------------------------------------------
def logMemorySample(memory: Memory, player: Agent, logger: logging.Logger, size: int = 10) -> None:
    """Log a few memory positions: board, value target (the result z mixed with the search's q by
    `loss.qWeights`, as retraining uses it) and search policy next to the network's value and prior (all for the
    position's player to move)."""
    if not logger.isEnabledFor(_INFO) or not len(memory):
        return
    picks = player.rng.choice(len(memory), size=min(size, len(memory)), replace=False)
    rows = [memory.ltmemory[i] for i in picks]
    weights = qWeights(rows, player.config)
    for row, weight, target, (value, probs) in zip(rows, weights, valueTargets(rows, weights),
                                                   player.evaluateStates([row["state"] for row in rows])):
        state = row["state"]
        state.render(logger)
        columns = [c for c in range(COLUMNS) if state.actionForColumn(c) is not None]
        logger.info("target value %+.3f (result z %+.0f, search q %+.3f, q weight %.2f), network value %+.3f "
                    "(for %s to move)", target, row["value"], row["q"], weight, value, playerPiece(state.playerTurn))
        logger.info("column        %s", " ".join(f"{c + 1:5d}" for c in columns))
        logger.info("search policy %s", " ".join(f"{row['AV'][state.actionForColumn(c)]:5.2f}" for c in columns))
        logger.info("network prior %s", " ".join(f"{probs[state.actionForColumn(c)]:5.2f}" for c in columns))


def evaluateBest(run: runs.RunState, progress: str | None = None, positions=None) -> dict[str, float]:
    """Mistake rates of the best network on `positions` (default: the run's benchmark set), against perfect play:
    the raw network (argmax of its policy) and the agent (MCTS, EVAL_SIMS)."""
    positions = run.benchmark() if positions is None else positions
    network = evaluation.mistakeRate(positions, evaluation.networkChooser(run.best_NN)).rate
    agent = evaluation.mistakeRate(positions, evaluation.agentChooser(run.best_NN, run.cfg, run.cfg.EVAL_SIMS,
                                                                      run.cfg.SEED), progress).rate
    lg.logger_main.info("mistake rate of version %d: network %.3f, agent %.3f", run.best_player_version,
                        network, agent)
    return {"network_mistake_rate": round(network, 4), "mistake_rate": round(agent, 4)}


def trainIteration(run: runs.RunState, progress: bool = True, pool=None) -> dict:
    """One iteration: self-play -> retrain -> tournament -> promote; then save memory, checkpoint and a metrics
    row. Returns the metrics row. `pool` (a `workers.Pool`): the Ray workers that play the self-play and
    tournament games (None: this process plays them)."""
    cfg = run.cfg
    iteration = run.iteration + 1
    keras.utils.set_random_seed(cfg.SEED + iteration)
    agent_seed = cfg.SEED * 1_000_003 + iteration
    best_player = Agent.fromConfig("best_player", cfg, run.best_NN, seed=agent_seed, logger=lg.logger_mcts)
    current_player = Agent.fromConfig("current_player", cfg, run.current_NN, seed=agent_seed + 1,
                                      logger=lg.logger_mcts)
    lg.logger_main.info("====== ITERATION %d (best version %d) ======", iteration, run.best_player_version)
    times = {}
    start, evaluated = time.perf_counter(), run.positionsEvaluated(pool)
    playMatches(best_player, best_player, cfg.EPISODES, lg.logger_main, cfg.TURNS_UNTIL_TAU0, run.memory,
                progress=f"iteration {iteration}: self-play" if progress else None, pool=pool)
    times["selfplay"] = time.perf_counter() - start
    selfplay_positions = run.positionsEvaluated(pool) - evaluated
    row = {"iteration": iteration, "promoted": False, "trained": False, "loss": None, "value_loss": None,
           "policy_loss": None, "scores": None, "sp_scores": None, "mistake_rate": None,
           "network_mistake_rate": None}
    if cfg.REANALYSE_POSITIONS and len(run.memory) >= cfg.MIN_MEMORY_SIZE:
        start = time.perf_counter()
        lg.logger_main.info("--- reanalysing %d positions ---", cfg.REANALYSE_POSITIONS)
        reanalyse(best_player, run.memory, cfg.REANALYSE_POSITIONS)
        times["reanalyse"] = time.perf_counter() - start
    if len(run.memory) >= cfg.MIN_MEMORY_SIZE:
        start = time.perf_counter()
        lg.logger_main.info("--- retraining ---")
        learning_rate = cfg.learningRateAt(iteration)
        current_player.model.setLearningRate(learning_rate)
        row.update(current_player.replay(run.memory.ltmemory,
                                         progress=f"iteration {iteration}: retraining" if progress else None),
                   trained=True, learning_rate=learning_rate)
        run.saveCurrentNetwork()
        times["retrain"] = time.perf_counter() - start
        logMemorySample(run.memory, current_player, lg.logger_memory)
        start = time.perf_counter()
        lg.logger_main.info("--- tournament ---")
        settled = (lambda sofar, left: promotionSettled(sofar, left, cfg.SCORING_THRESHOLD)) \
            if cfg.EVAL_STOP_WHEN_DECIDED else None
        challenger = current_player if run.challenger is run.current_NN else \
            Agent.fromConfig("current_player", cfg, run.challenger, seed=agent_seed + 1, logger=lg.logger_mcts)
        scores, _, _, sp_scores = playMatches(best_player, challenger, cfg.EVAL_EPISODES, lg.logger_tourney,
                                              cfg.EVAL_TURNS_UNTIL_TAU0,
                                              progress=f"iteration {iteration}: tournament" if progress else None,
                                              pool=pool, decided=settled)
        times["tournament"] = time.perf_counter() - start
        row.update(scores=scores, sp_scores=sp_scores)
        lg.logger_tourney.info("SCORES %s, STARTING PLAYER %s", scores, sp_scores)
        if promoted(scores["current_player"], scores["best_player"], cfg.SCORING_THRESHOLD):
            run.promote()
            row["promoted"] = True
            lg.logger_main.info("promoted: best version is now %d", run.best_player_version)
    if cfg.EVAL_POSITIONS > 0:
        start = time.perf_counter()
        lg.logger_main.info("--- evaluation against perfect play ---")
        if run.bestEvaluation is None or run.bestEvaluation[0] != run.best_player_version:
            run.bestEvaluation = (run.best_player_version,
                                  evaluateBest(run, f"iteration {iteration}: evaluation" if progress else None))
        row.update(run.bestEvaluation[1])
        times["evaluation"] = time.perf_counter() - start
    start = time.perf_counter()
    lg.logger_main.info("--- saving ---")
    run.saveMemory(iteration)
    times["save"] = time.perf_counter() - start
    row.update(best_player_version=run.best_player_version, memory_size=len(run.memory),
               selfplay_positions=selfplay_positions, seconds={k: round(v, 3) for k, v in times.items()})
    run.finishIteration(iteration, row)
    return row


def reanalyse(player: Agent, memory: Memory, count: int) -> list[dict]:
    """Refresh the targets of `count` rows of `memory`'s ltmemory, drawn without replacement by `player`'s
    generator, with `player`'s search (`Agent.reanalyse`); returns the rows."""
    picks = player.rng.choice(len(memory.ltmemory), size=min(count, len(memory.ltmemory)), replace=False)
    rows = [memory.ltmemory[i] for i in picks]
    player.reanalyse(rows)
    return rows


def workerPool(cfg: Config, say=runs.sayNow):
    """The Ray workers that play the games when cfg.WORKERS > 0 (a `workers.Pool`, to use in a `with`; `say` reports
    a worker's death), else a context holding None: the games are played here.  The pool is given this module's
    `matchEpisodes` and `playEpisodes`, which its workers play the games with (`workers` does not import this
    module); `workers` imports Ray, heavy (seconds, hundreds of MB) and needed only with WORKERS > 0."""
    if cfg.WORKERS == 0:
        return contextlib.nullcontext()
    import workers  # lazy: Ray is heavy and needed only with WORKERS > 0 (no cycle: workers imports no funcs)
    return workers.Pool(cfg.WORKERS, cfg.RAY_ADDRESS, say, matchEpisodes=matchEpisodes, playEpisodes=playEpisodes)


def train(iterations: int | None = None, cfg: Config | None = None, progress: bool = True, say=runs.sayNow,
          initial_run: int | None = None, initial_model_version: int | None = None,
          initial_memory_version: int | None = None, hours: float | None = None) -> list[dict]:
    """Run the training loop for `iterations` iterations (None: until interrupted), and with `hours` only until
    the run's training time (the sum of its iterations' phase times, `runs.trainingHours`; a resumed run's
    earlier iterations count) reaches `hours`.

    Resumes the run in cfg.RUN_FOLDER if there is one (see `runs.openRun`); the run folder is locked meanwhile,
    so a second trainer on it is refused.  An interrupt (KeyboardInterrupt) is reported and passed on: the run
    resumes from the last finished iteration.  Returns the metrics rows of the iterations run.

    With WORKERS > 0 that many Ray workers (`workerPool`, started once) play the games; WORKERS and RAY_ADDRESS
    come from `cfg` even when a run is resumed: they say where this session plays, not how the run learns."""
    cfg = cfg or DEFAULT
    with storage.runLock(cfg.path("RUN_FOLDER")):
        run = runs.openRun(cfg, initial_run, initial_model_version, initial_memory_version, say)
        lg.setup_loggers(run.folder, run.cfg)
        rows = []
        spent = 0.0 if hours is None else 3600 * (runs.trainingHours(runs.readMetrics(run.folder)) or [0.0])[-1]
        try:
            with workerPool(cfg, say) as pool:
                while ((iterations is None or len(rows) < iterations)
                       and (hours is None or spent < 3600 * hours)):
                    row = trainIteration(run, progress, pool)
                    rows.append(row)
                    spent += sum(row["seconds"].values())
                    say(runs.metricsSummary(row))
        except KeyboardInterrupt:
            say(f"Interrupted: {run.iteration} iterations are saved; training again resumes from there.")
            raise
    return rows


def main(argv: list[str] | None = None) -> None:
    """Train in a terminal, with progress bars: python -m funcs --iterations 3."""
    trainCommand(cli.TRAINING.parse_args(argv))


def trainCommand(args: argparse.Namespace) -> None:
    """Train as `cli.TRAINING`'s arguments say; a run that cannot go on ends in a message naming the way out."""
    cfg = PRESETS[args.preset]
    stops = (ConfigError, storage.RunFileError, storage.RunLockedError, storage.DiskFullError)
    try:
        cfg = cfg.replace(RUN_FOLDER=cfg.RUN_FOLDER if args.run_folder is None else args.run_folder,
                          RAY_ADDRESS=args.ray_address or cfg.RAY_ADDRESS,
                          WORKERS=cfg.WORKERS if args.workers is None else args.workers)
        if args.branch_from is None and args.branch_network:
            raise ConfigError("--branch-network makes a branch: give --branch-from too")
        if args.branch_from is None:
            cfg = branches.newRunConfig(cfg, dict(args.set), initialise.INITIAL_RUN_NUMBER)
        elif args.run_folder is None:
            raise ConfigError("--branch-from needs --run-folder, the new folder of the branch")
        else:
            branch = branches.branchRun(args.branch_from, cfg.path("RUN_FOLDER"), dict(args.set),
                                        network=args.branch_network)
            cfg = branch.replace(WORKERS=cfg.WORKERS, RAY_ADDRESS=cfg.RAY_ADDRESS, TENSORBOARD=cfg.TENSORBOARD)
        if cfg.WORKERS > 0:  # Ray's module, only when workers play (as in `workerPool`)
            import workers
            stops += (workers.WorkersLost,)
        train(args.iterations, cfg, progress=not args.no_progress, initial_run=initialise.INITIAL_RUN_NUMBER,
              initial_model_version=initialise.INITIAL_MODEL_VERSION,
              initial_memory_version=initialise.INITIAL_MEMORY_VERSION, hours=args.hours)
    except KeyboardInterrupt:
        pass
    except stops as error:
        cli.TRAINING.exit(1, f"{error}\n")


if __name__ == "__main__":
    trainCommand(ARGUMENTS)
