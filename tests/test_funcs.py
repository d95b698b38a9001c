"""playMatches (lockstep batching), the tournament, and the training loop end to end."""

from __future__ import annotations

import copy
import io
import json
import time
import logging
import logging.handlers
import shutil
from collections import defaultdict

import numpy as np
import pytest

import funcs
import inference
import loggers
import replay
import runs
import storage
from agent import Agent, runTogether
from config import Config
from game import Game, GameState
from memory import Memory
from helpers import RowByRow
from model import Residual_CNN

ENV = Game()


def makeAgent(name, model, cfg, seed=7, sims=None):
    return Agent(name, ENV.state_size, ENV.action_size, sims or cfg.MCTS_SIMS, cfg.CPUCT, model, cfg, seed=seed)


def quietLogger():
    logger = logging.getLogger("test.quiet")
    logger.disabled = True
    return logger


def recordingLogger(name):
    stream = io.StringIO()
    logger = logging.getLogger(name)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(logging.StreamHandler(stream))
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.disabled = False
    return logger, stream


def playOneAtATime(player1, player2, episodes, turns_until_tau0, noise=False):
    """The games funcs.playMatches(player1, player2, ...) plays (colours alternating),
    one at a time through Agent.act with the same per-game seeds, as move strings."""
    base = int(player1.rng.integers(2**32))
    games = []
    for e in range(episodes):
        seed = funcs.episodeSeed(base, e)
        one = player1.forGame(seed)
        two = one if player2 is player1 else player2.forGame(seed + 1)
        seats = {1: one, -1: two} if e % 2 == 0 else {1: two, -1: one}
        state, moves = GameState.initial(), ""
        while not state.isEndGame:
            action = seats[state.playerTurn].act(state, 1 if len(moves) < turns_until_tau0 else 0, noise)[0]
            moves += str(action % 7 + 1)
            state = state.takeAction(action)[0]
        games.append(moves)
    return games


def recordMoves(monkeypatch) -> dict[int, str]:
    """Record every move playMatches plays, per episode (as a move string)."""
    moves: dict[int, str] = defaultdict(str)
    play_move = funcs.Episode._playMove

    def recording(episode, action, *rest, **stored):
        moves[episode.index] += str(action % 7 + 1)
        return play_move(episode, action, *rest, **stored)
    monkeypatch.setattr(funcs.Episode, "_playMove", recording)
    return moves


def movesFromMemory(memory: Memory, episodes: int):
    """Per game, the actions in order, recovered from consecutive stored positions
    (each position is stored with its mirror image right after it)."""
    rows = [row for i, row in enumerate(memory.ltmemory) if i % 2 == 0]
    games, current = [], []
    for row in rows:
        if row["state"].stones == 0 and current:
            games.append(current)
            current = []
        current.append(row)
    games.append(current)
    assert len(games) == episodes
    return games


@pytest.mark.parametrize("engine", ["openvino", "tensorflow"])
@pytest.mark.parametrize("turns_until_tau0", [0, 4])
@pytest.mark.parametrize("match", ["self-play", "tournament"])
def test_batched_matches_play_the_same_games_as_one_game_at_a_time(tiny_cfg, monkeypatch, match, turns_until_tau0,
                                                                   engine):
    """playMatches runs its games in lockstep (with TensorFlow in two lanes whose
    network calls overlap the other lane's search); each game must still be the one
    its player plays alone."""
    episodes = 5
    cfg = tiny_cfg.replace(INFERENCE=engine, INFERENCE_PRECISION="f32")
    networks = [RowByRow.fromConfig(cfg, ENV.input_shape, ENV.action_size) for _ in range(2)]

    def players():
        one = makeAgent("one", networks[0], tiny_cfg, seed=11)
        return (one, one) if match == "self-play" else (one, makeAgent("two", networks[1], tiny_cfg, seed=12))
    batched = recordMoves(monkeypatch)
    selfplay = match == "self-play"  # self-play collects memory, and so uses root noise
    scores, _, _, _ = funcs.playMatches(*players(), episodes, quietLogger(), turns_until_tau0,
                                        Memory(10_000) if selfplay else None)
    sequential = playOneAtATime(*players(), episodes, turns_until_tau0, noise=selfplay)
    assert [batched[e] for e in range(episodes)] == sequential
    finals = [GameState.fromMoves(moves) for moves in sequential]
    assert all(final.isEndGame for final in finals)
    assert scores["drawn"] == sum(final.value[0] == 0 for final in finals)


def test_selfplay_memory_targets_are_z_for_the_player_to_move(tiny_model, tiny_cfg, monkeypatch):
    played = recordMoves(monkeypatch)
    agent = makeAgent("self", tiny_model, tiny_cfg)
    _, memory, _, _ = funcs.playMatches(agent, agent, 4, quietLogger(), 2, Memory(10_000))
    rows = list(memory.ltmemory)
    for e in range(4):  # games are committed in episode order, each position with its mirror image
        final = GameState.fromMoves(played[e])
        winner = -final.playerTurn if final.value[0] == -1 else None  # the last mover, if the game was won
        game_rows, rows = rows[:2 * len(played[e])], rows[2 * len(played[e]):]
        assert [row["state"].stones for row in game_rows[::2]] == list(range(len(played[e])))
        for row in game_rows:
            assert row["value"] == (0 if winner is None else 1 if row["playerTurn"] == winner else -1)
    assert rows == []
    for i in range(0, len(memory.ltmemory), 2):
        original, mirror = memory.ltmemory[i], memory.ltmemory[i + 1]
        assert mirror["value"] == original["value"]
        assert np.allclose(mirror["AV"], original["AV"].reshape(6, 7)[:, ::-1].ravel())


def storedGames(memory: Memory) -> list[list[GameState]]:
    """The positions memory holds, game by game (each stored with its mirror image
    right after it; a game's positions have one stone more each, the next game starts
    with fewer stones)."""
    games: list[list[GameState]] = []
    for row in list(memory.ltmemory)[::2]:
        if not games or row["state"].stones != games[-1][-1].stones + 1:
            games.append([])
        games[-1].append(row["state"])
    return games


def test_random_opening_moves_are_played_in_selfplay_only_and_never_stored(tiny_model, tiny_cfg, tmp_path,
                                                                           monkeypatch):
    """Self-play with RANDOM_OPENING_MOVES=4: each game's first k moves (k from 0..4,
    varying between games) are played unsearched and kept out of memory; the log
    still holds them, so its replay reaches the game's real final position.  A
    tournament with the same config starts every game with a search."""
    cfg = tiny_cfg.replace(RANDOM_OPENING_MOVES=4)
    agent = makeAgent("self", tiny_model, cfg, sims=4)
    path = tmp_path / "selfplay.log"
    with loggers.loggingTo(path, "test.random.opening") as logger:
        _, memory, _, _ = funcs.playMatches(agent, agent, 12, logger, 2, Memory(10_000))
    games = replay.gamesFromLog(path)
    stored = storedGames(memory)
    assert len(games) == len(stored) == 12
    openings = []
    for game, positions in zip(games, stored):
        final = GameState.fromMoves(game.moves)
        assert final.isEndGame
        opening = positions[0].stones
        openings.append(opening)
        assert [p.id for p in positions] == [GameState.fromMoves(game.moves[:n]).id
                                              for n in range(opening, final.stones)]
    assert set(openings) <= set(range(5)) and len(set(openings)) >= 3, openings

    searched = []
    act_steps = Agent.actSteps
    monkeypatch.setattr(Agent, "actSteps", lambda self, state, tau, noise=False:
                        searched.append(state.stones) or act_steps(self, state, tau, noise))
    funcs.playMatches(makeAgent("one", tiny_model, cfg, 1, sims=4), makeAgent("two", tiny_model, cfg, 2, sims=4),
                      4, quietLogger(), 0)
    assert searched.count(0) == 4, "every tournament game begins with a searched move"


def archiveOfSelfPlay(agent, games: int) -> Memory:
    """A memory holding the positions of `games` self-play games from the empty board."""
    _, memory, _, _ = funcs.playMatches(agent, agent, games, quietLogger(), 2, Memory(10_000))
    return memory


def test_archive_starts_play_each_game_from_a_drawn_memory_position_without_random_moves(tiny_model, tiny_cfg,
                                                                                         tmp_path):
    """Go-Exploit (ARCHIVE_START_PROBABILITY=1): every self-play game starts from a position of the memory, no
    random opening move played even with RANDOM_OPENING_MOVES; the games are stored from that position on, each
    position with the result z from its player's side, and the log replays each game from its start to its end."""
    cfg = tiny_cfg.replace(RANDOM_OPENING_MOVES=4, ARCHIVE_START_PROBABILITY=1.0)
    agent = makeAgent("self", tiny_model, cfg, sims=4)
    memory = archiveOfSelfPlay(makeAgent("self", tiny_model, tiny_cfg, sims=4), 3)
    archive = {row["state"].id for row in memory.ltmemory}
    before = len(memory)
    path = tmp_path / "selfplay.log"
    with loggers.loggingTo(path, "test.archive.starts") as logger:
        funcs.playMatches(agent, agent, 8, logger, 2, memory)
    games = replay.gamesFromLog(path)
    assert len(games) == 8
    starts = [game.frames[0].state for game in games]
    assert all(start.id in archive for start in starts)
    assert len({start.id for start in starts}) >= 4 and any(start.stones > 4 for start in starts)
    stored = [row for row in list(memory.ltmemory)[before:][::2]]
    assert [row["state"].id for row in stored] == [frame.state.id for game in games for frame in game.frames[:-1]]
    for game in games:
        final = game.frames[-1].state
        assert final.isEndGame
        rows, stored = stored[:len(game.frames) - 1], stored[len(game.frames) - 1:]
        loser = final.playerTurn if final.value[0] == -1 else None
        assert all(row["value"] == (0 if loser is None else -1 if row["playerTurn"] == loser else 1) for row in rows)


def test_archive_starts_are_drawn_by_probability_from_the_match_seed_and_none_by_default(tiny_model, tiny_cfg):
    """`Memory.startPositions`: the tutorial's 0 draws none, an empty memory gives none, the same base seed the
    same starts, another base others, and a probability of 0.5 starts about half of the games from memory."""
    memory = archiveOfSelfPlay(makeAgent("self", tiny_model, tiny_cfg, sims=4), 2)
    assert Config().ARCHIVE_START_PROBABILITY == 0 and memory.startPositions(0.0, 5, 100) == {}
    assert Memory(100).startPositions(1.0, 5, 100) == {}
    half = memory.startPositions(0.5, 5, 400)
    assert 150 < len(half) < 250
    assert {e: s.id for e, s in half.items()} == {e: s.id for e, s in memory.startPositions(0.5, 5, 400).items()}
    assert set(half) != set(memory.startPositions(0.5, 6, 400))
    assert set(memory.startPositions(1.0, 5, 10)) == set(range(10))


def test_paired_openings_are_shared_by_each_pair_of_games_and_never_end_a_game():
    """Games 2j and 2j + 1 of a match (seats swapped) get one opening, other pairs others; each is at most `most`
    legal moves from the empty board, drawn again from the same base seed, and stops before a move ending the game."""
    openings = [funcs.pairedOpening(11, e, 20) for e in range(40)]
    assert openings == [funcs.pairedOpening(11, e, 20) for e in range(40)]
    assert all(openings[e] == openings[e + 1] for e in range(0, 40, 2))
    assert len(set(openings)) == 20 and len({len(o) for o in openings}) > 5
    assert funcs.pairedOpening(12, 0, 20) != openings[0]
    for opening in openings:
        state = GameState.initial()
        for action in opening:
            assert action in state.allowedActions
            state, _, done = state.takeAction(action)
            assert not done
    assert max(len(funcs.pairedOpening(11, e, 3)) for e in range(40)) == 3
    assert {funcs.pairedOpening(11, e, 0) for e in range(4)} == {()}


def test_tournament_games_open_with_their_pairs_random_moves_and_self_play_does_not(tiny_model, tiny_cfg, tmp_path,
                                                                                   monkeypatch):
    """With EVAL_RANDOM_OPENING_MOVES=5 each game of a match between two agents starts with its pair's opening
    (`pairedOpening` of the match's base seed), unsearched and in the log; the first search comes after it, and
    the pair's two games seat the players the other way round.  Self-play with memory searches from move one."""
    cfg = tiny_cfg.replace(EVAL_RANDOM_OPENING_MOVES=5)
    one, two = makeAgent("one", tiny_model, cfg, 1, sims=4), makeAgent("two", tiny_model, cfg, 2, sims=4)
    base = int(copy.deepcopy(one.rng).integers(2**32))  # what `matchSeed` draws for the match
    first_searched = {}
    act_steps = Agent.actSteps
    monkeypatch.setattr(Agent, "actSteps", lambda self, state, tau, noise=False: first_searched.setdefault(
        id(self), state.stones) * 0 or act_steps(self, state, tau, noise))
    path = tmp_path / "tourney.log"
    with loggers.loggingTo(path, "test.paired.opening") as logger:
        funcs.playMatches(one, two, 8, logger, 0)
    games = replay.gamesFromLog(path)
    openings = [funcs.pairedOpening(base, e, 5) for e in range(8)]
    assert len({len(o) for o in openings}) > 1, "the seed gives openings of several lengths"
    for e, (game, opening) in enumerate(zip(games, openings)):
        assert game.moves.startswith("".join(str(a % 7 + 1) for a in opening))
        assert GameState.fromMoves(game.moves).isEndGame
    assert [games[e].players[1] for e in range(4)] == ["one", "two", "one", "two"]
    # each game's two copies (one per seat) start searching where the opening ends: for the mover, or one later
    assert sorted(first_searched.values()) == sorted(n for o in openings for n in (len(o), len(o) + 1))

    first_searched.clear()
    _, memory, _, _ = funcs.playMatches(one, one, 4, quietLogger(), 2, Memory(10_000))
    assert [game[0].stones for game in storedGames(memory)] == [0, 0, 0, 0]


def recordSearches(monkeypatch) -> list[tuple]:
    """Record every search an Agent starts from now on: (id of the agent copy, playerTurn, position id, its
    simulations: None for the agent's own count)."""
    searches = []
    act_steps = Agent.actSteps

    def recorded(self, state, tau, noise=False, simulations=None):
        searches.append((id(self), state.playerTurn, state.id, simulations))
        return act_steps(self, state, tau, noise, simulations)

    monkeypatch.setattr(Agent, "actSteps", recorded)
    return searches


def test_playout_cap_randomisation_stores_only_the_full_searches(tiny_model, tiny_cfg, monkeypatch):
    """Self-play with FAST_SEARCH_SIMS=3, FULL_SEARCH_PROBABILITY=0.5: every searched move
    is either a full search (MCTS_SIMS, its position stored) or a fast one of 3
    simulations (played, not stored), about half each; the games still end, their
    stored positions valued by the game's result.  A tournament with the same config
    searches every move in full."""
    cfg = tiny_cfg.replace(FAST_SEARCH_SIMS=3, FULL_SEARCH_PROBABILITY=0.5)
    searches = recordSearches(monkeypatch)
    agent = makeAgent("self", tiny_model, cfg, sims=6)
    _, memory, _, _ = funcs.playMatches(agent, agent, 8, quietLogger(), 2, Memory(10_000))
    assert {simulations for *_, simulations in searches} == {None, 3}
    full = [state_id for _, _, state_id, simulations in searches if simulations is None]
    fast = [state_id for _, _, state_id, simulations in searches if simulations == 3]
    assert 0.25 < len(fast) / len(searches) < 0.75, (len(fast), len(searches))
    stored = [row["state"].id for row in list(memory.ltmemory)[::2]]  # each position, then its mirror image
    assert sorted(stored) == sorted(full)
    for row in memory.ltmemory:
        assert row["value"] in (-1, 0, 1)

    searches.clear()
    funcs.playMatches(makeAgent("one", tiny_model, cfg, 1, sims=6), makeAgent("two", tiny_model, cfg, 2, sims=6),
                      2, quietLogger(), 0)
    assert searches and all(simulations is None for *_, simulations in searches)


def test_a_fast_side_plays_its_whole_game_fast_and_only_the_other_side_is_stored(tiny_model, tiny_cfg,
                                                                                 monkeypatch):
    """FAST_SEARCH_SIDE: the draw is a game's.  In a game with a fast side every move of
    that side is a fast search and every move of the other a full one; in the others
    every move is full (FULL_SEARCH_PROBABILITY of the games); only full searches are
    stored.  Each game has its own copy of the agent, which tells the games apart."""
    cfg = tiny_cfg.replace(FAST_SEARCH_SIMS=3, FULL_SEARCH_PROBABILITY=0.5, FAST_SEARCH_SIDE=True)
    searches = recordSearches(monkeypatch)
    agent = makeAgent("self", tiny_model, cfg, sims=6)
    _, memory, _, _ = funcs.playMatches(agent, agent, 12, quietLogger(), 2, Memory(10_000))
    games: dict[int, dict[int, set]] = {}
    for game, turn, _, simulations in searches:
        games.setdefault(game, {1: set(), -1: set()})[turn].add(simulations)
    assert len(games) == 12
    kinds = [(frozenset(sides[1]), frozenset(sides[-1])) for sides in games.values()]
    full, fast = frozenset({None}), frozenset({3})
    full_game, fast_first, fast_second = (full, full), (fast, full), (full, fast)
    assert set(kinds) <= {full_game, fast_first, fast_second} and full_game in kinds
    assert fast_first in kinds or fast_second in kinds
    full = [state_id for _, _, state_id, simulations in searches if simulations is None]
    assert sorted(row["state"].id for row in list(memory.ltmemory)[::2]) == sorted(full)


def test_a_strong_side_searches_more_with_a_tree_of_its_own_and_both_sides_are_stored(tiny_model, tiny_cfg,
                                                                                      monkeypatch):
    """STRONG_SEARCH_SIMS: in every self-play game one side (either colour, drawn per game) searches each move
    with the strong count and the other with its own; each side searches with a copy of its own (the other
    does not start from the stronger side's tree); every searched position is stored.  A tournament with the
    same config searches every move alike."""
    cfg = tiny_cfg.replace(STRONG_SEARCH_SIMS=20)
    searches = recordSearches(monkeypatch)
    agent = makeAgent("self", tiny_model, cfg, sims=6)
    _, memory, _, _ = funcs.playMatches(agent, agent, 12, quietLogger(), 2, Memory(10_000))
    sides: dict[tuple, set] = {}
    for copy, turn, _, simulations in searches:
        sides.setdefault((copy, turn), set()).add(simulations)
    assert len(sides) == 24 and len({copy for copy, _ in sides}) == 24, "two copies a game, one a side"
    assert all(len(sims) == 1 for sims in sides.values()), "a side searches every move alike"
    strong = [turn for (_, turn), sims in sides.items() if sims == {20}]
    assert len(strong) == 12 and set(strong) == {1, -1}, "one strong side a game, either colour"
    assert sorted(row["state"].id for row in list(memory.ltmemory)[::2]) == sorted(s[2] for s in searches)

    searches.clear()
    funcs.playMatches(makeAgent("one", tiny_model, cfg, 1, sims=6), makeAgent("two", tiny_model, cfg, 2, sims=6),
                      2, quietLogger(), 0)
    assert searches and all(simulations is None for *_, simulations in searches)


def test_tournament_batches_per_network_and_alternates_colours(tiny_cfg):
    networks = [Residual_CNN.fromConfig(tiny_cfg, ENV.input_shape, ENV.action_size) for _ in range(2)]
    batch_sizes = {0: [], 1: []}
    for index, network in enumerate(networks):
        predict = network.predict

        def recording(x, predict=predict, index=index):
            batch_sizes[index].append(len(x))
            return predict(x)
        network.predict = recording
    logger, stream = recordingLogger("test.tourney")
    episodes = 6
    scores, _, points, sp_scores = funcs.playMatches(makeAgent("best", networks[0], tiny_cfg, 1),
                                                     makeAgent("current", networks[1], tiny_cfg, 2),
                                                     episodes, logger, 0)
    # each network's leaves of all games where it is to move go in one call: calls hold several
    # positions (a network plays one side of every game, so at most all games' leaves, usually half)
    for sizes in batch_sizes.values():
        assert sum(sizes) / len(sizes) > 1.5 and max(sizes) <= episodes
    starts = [line for line in stream.getvalue().splitlines() if line.startswith("EPISODE") and " vs " in line]
    assert [line.split(": ")[1].split(" (X)")[0] for line in starts] == ["best", "current"] * 3
    assert scores["best"] + scores["current"] + scores["drawn"] == episodes
    assert sp_scores["sp"] + sp_scores["nsp"] + sp_scores["drawn"] == episodes
    assert sorted(points) == ["best", "current"] and len(points["best"]) == episodes


def test_a_batch_of_one_and_games_ending_early_leave_cleanly(tiny_model, tiny_cfg):
    agent = makeAgent("solo", tiny_model, tiny_cfg, sims=4)
    scores, memory, _, _ = funcs.playMatches(agent, agent, 1, quietLogger(), 42, Memory(1000))
    assert sum(scores.values()) == 1 and len(memory.ltmemory) > 0
    # sampling every move (tau=1) makes game lengths differ; every game still finishes once
    agent = makeAgent("many", tiny_model, tiny_cfg, sims=2)
    _, memory, points, _ = funcs.playMatches(agent, agent, 8, quietLogger(), 42, Memory(10_000))
    lengths = [len(game) for game in movesFromMemory(memory, 8)]
    assert len(set(lengths)) > 1
    assert len(points["many"]) == 16


def test_a_finished_game_releases_its_own_players_trees_only(tiny_model, tiny_cfg):
    agent = makeAgent("solo", tiny_model, tiny_cfg, sims=4)
    episodes = funcs.matchEpisodes(agent, agent, [0, 1], 7, lambda e: quietLogger(), 42, None)
    players = [player for episode in episodes for player in episode.players.values()]
    assert all(player is not agent for player in players)
    for _ in funcs.playEpisodes(episodes):
        pass
    assert all(episode.done for episode in episodes)
    assert all(player.mcts is None and player.root is None for player in players)
    agent.act(GameState.initial(), tau=0)
    funcs.playMatches(agent, agent, 2, quietLogger(), 42)
    assert agent.mcts is not None and len(agent.mcts.tree) > 1, "the caller's own agent keeps its tree"


@pytest.mark.parametrize(("current", "best", "threshold", "promoted"), [
    (7, 5, 1.3, True), (6, 5, 1.2, False), (5, 6, 1.0, False), (6, 5, 1.0, True), (0, 0, 1.3, False),
    (1, 0, 1.3, True), (0, 1, 0.0, False), (3, 3, 0.5, True)])
def test_the_promotion_rule_is_the_tutorials_strict_comparison(current, best, threshold, promoted):
    """Promoted when the current network's wins exceed the best one's x SCORING_THRESHOLD: not at
    equality (6 against 5 x 1.2), not when every game was drawn, and never with the players swapped."""
    assert funcs.promoted(current, best, threshold) is promoted


@pytest.mark.parametrize("threshold", [1.0, 1.2, 1.3, 2.0])
def test_a_tournament_is_settled_only_when_no_remaining_games_can_change_the_promotion(threshold):
    games = 8
    for played in range(games + 1):
        for current in range(played + 1):
            for best in range(played - current + 1):
                left = games - played
                outcomes = {funcs.promoted(current + c, best + b, threshold)
                            for c in range(left + 1) for b in range(left - c + 1)}
                settled = funcs.promotionSettled({"current_player": current, "best_player": best}, left, threshold)
                assert settled == (len(outcomes) == 1), (current, best, left)


@pytest.mark.parametrize("engine", ["openvino", "tensorflow"])  # one lane; two, with calls in the background
def test_a_match_told_it_is_decided_stops_with_the_games_played_so_far(tiny_cfg, engine):
    cfg = tiny_cfg.replace(INFERENCE=engine)
    networks = [Residual_CNN.fromConfig(cfg, ENV.input_shape, ENV.action_size) for _ in range(2)]
    assert networks[0].currentEngine().lanes == (2 if engine == "tensorflow" else 1)
    players = [makeAgent("best_player", networks[0], cfg, 1, sims=4),
               makeAgent("current_player", networks[1], cfg, 2, sims=4)]
    asked = []

    def afterThree(scores, left):
        asked.append((dict(scores), left))
        return sum(scores.values()) >= 3

    scores, _, points, sp_scores = funcs.playMatches(*players, 10, quietLogger(), 2, decided=afterThree)
    played = sum(scores.values())
    assert 3 <= played < 10 and sum(sp_scores.values()) == played
    assert len(points["best_player"]) == len(points["current_player"]) == played
    assert asked[-1][0] == scores and asked[-1][1] == 10 - played
    assert all(sum(sofar.values()) + left == 10 for sofar, left in asked)
    full, _, _, _ = funcs.playMatches(*players, 10, quietLogger(), 2)
    assert sum(full.values()) == 10


def test_a_stopped_drive_closes_the_searches_still_running(tiny_model, tiny_cfg):
    player = makeAgent("player", tiny_model, tiny_cfg)
    closed = []

    def search(steps: int):
        try:
            for _ in range(steps):
                yield GameState.initial()
            return steps
        finally:
            closed.append(steps)

    rounds = []
    results = runTogether([search(1), search(2), search(50)], lambda i: player,
                          stop=lambda: rounds.append(1) or len(rounds) >= 3)
    assert results == [1, 2, None] and sorted(closed) == [1, 2, 50] and len(rounds) == 3


def test_an_early_stopped_tournament_decides_as_the_full_one(tmp_path, tiny_cfg):
    rows = {}
    for stop in (False, True):
        cfg = tinyRunConfig(tiny_cfg, tmp_path / str(stop), EVAL_EPISODES=12, SCORING_THRESHOLD=1.0,
                            EVAL_STOP_WHEN_DECIDED=stop)
        rows[stop] = funcs.train(3, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    for full, early in zip(rows[False], rows[True]):
        assert early["promoted"] == full["promoted"] and early["best_player_version"] == full["best_player_version"]
        assert sum(early["scores"].values()) <= sum(full["scores"].values()) == 12
    assert any(sum(row["scores"].values()) < 12 for row in rows[True])


def test_goes_first_is_validated(tiny_model, tiny_cfg):
    agent = makeAgent("a", tiny_model, tiny_cfg)
    with pytest.raises(ValueError, match="goes_first"):
        funcs.playMatches(agent, agent, 1, quietLogger(), 0, goes_first=2)


def test_two_players_need_distinct_names_other_than_drawn(tiny_model, tiny_cfg):
    """The scores are kept by name: two players under one name would be counted as one."""
    for first, second in (("a", "a"), ("drawn", "b"), ("a", "drawn")):
        with pytest.raises(ValueError, match=f"distinct names other than 'drawn'.*got '{first}' and '{second}'"):
            funcs.playMatches(makeAgent(first, tiny_model, tiny_cfg), makeAgent(second, tiny_model, tiny_cfg), 1,
                              quietLogger(), 0)
    agent = makeAgent("a", tiny_model, tiny_cfg)
    scores, _, _, _ = funcs.playMatches(agent, agent, 1, quietLogger(), 0)  # self-play: one player, one name
    assert sum(scores.values()) == 1


def test_human_plays_through_versions(tmp_path, tiny_cfg):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), MCTS_SIMS=2)
    runs.openRun(cfg, say=lambda _: None)
    typed = iter(["x", "9", ""] + [str(c) for c in [1, 2, 3, 4, 5, 6, 7] * 6])
    shown = []
    scores, _, points, _ = funcs.playMatchesBetweenVersions(Game(), None, -1, 1, 1, quietLogger(), 0, goes_first=1,
                                                            cfg=cfg, input_fn=lambda _: next(typed),
                                                            output_fn=shown.append)
    assert sum(scores.values()) == 1
    assert any("not a number" in line for line in shown)
    assert any("no column 9" in line for line in shown)
    assert any(line.endswith("1 2 3 4 5 6 7") for line in shown)  # the human sees the board


def tinyRunConfig(tiny_cfg, folder, **changes):
    return tiny_cfg.replace(**{"RUN_FOLDER": str(folder), "EPISODES": 3, "MCTS_SIMS": 4, "MIN_MEMORY_SIZE": 32,
                               "LOGGERS": {"main": True, "memory": True, "tourney": True, "mcts": True, "model": True},
                               **changes})


def test_one_iteration_writes_a_complete_run_and_decides_promotion(tmp_path, tiny_cfg):
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run", SCORING_THRESHOLD=0.5)
    rows = funcs.train(1, cfg, progress=False, say=lambda _: None)
    folder = tmp_path / "run"
    row = rows[0]
    assert Config.from_json_file(folder / "config.json") == cfg.replace(RUN_FOLDER=str(folder))
    assert row["trained"] and row["memory_size"] > 0
    scores = row["scores"]
    assert row["promoted"] == (scores["current_player"] > scores["best_player"] * 0.5)
    checkpoint = json.loads((folder / "checkpoint.json").read_text())
    assert checkpoint == {"iteration": 1, "best_player_version": 1 + row["promoted"], "memory_iteration": 1}
    x = np.stack([GameState.fromMoves(moves).binary.reshape(2, 6, 7) for moves in ("", "4453", "1122")])
    current = storage.load_model(folder / "models" / "current.keras")(x)[1].numpy()
    version1 = storage.load_model(storage.model_path(folder, 1))(x)[1].numpy()
    assert not np.allclose(current, version1)  # retraining changed the current network
    assert row["promoted"], scores  # this seed's tournament; the rule itself: test_the_promotion_rule...
    promoted = storage.load_model(storage.model_path(folder, 2))(x)[1].numpy()
    assert np.allclose(promoted, current, atol=1e-6)
    assert len(Memory.load(storage.memory_path(folder, 1), cfg.MEMORY_SIZE)) == row["memory_size"]
    metrics = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert metrics == [row]
    for field in ("loss", "value_loss", "policy_loss", "mistake_rate", "network_mistake_rate"):
        assert isinstance(row[field], float) and row[field] >= 0, field
    assert row["mistake_rate"] <= 1 and row["network_mistake_rate"] <= 1
    assert set(row["scores"]) == {"best_player", "current_player", "drawn"}
    assert sum(row["scores"].values()) == cfg.EVAL_EPISODES
    assert set(row["seconds"]) == {"selfplay", "retrain", "tournament", "evaluation", "save"}
    # self-play evaluates at least the root of every move of every game (memory holds each position twice)
    assert row["selfplay_positions"] >= row["memory_size"] // 2
    for name in ("main", "memory", "tourney", "mcts", "model"):
        assert (folder / "logs" / f"logger_{name}.log").stat().st_size > 0
    assert "search policy" in (folder / "logs" / "logger_memory.log").read_text()
    loggers.disable_all()


def test_resume_uses_the_run_config_not_the_callers(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    first = tinyRunConfig(tiny_cfg, folder, HIDDEN_CNN_LAYERS=[{"filters": 4, "kernel_size": (3, 3)}])
    funcs.train(1, first, progress=False, say=lambda _: None)
    said = []
    other = tinyRunConfig(tiny_cfg, folder, HIDDEN_CNN_LAYERS=[{"filters": 16, "kernel_size": (3, 3)}])
    run = runs.openRun(other, say=said.append)
    assert run.cfg.HIDDEN_CNN_LAYERS == first.HIDDEN_CNN_LAYERS
    assert run.best_NN.model.layers[2].kernel.shape[-1] == 4
    assert run.iteration == 1 and len(run.memory) > 0
    assert "resuming it with its own config" in said[0] and "1 iterations done" in said[1]
    said.clear()
    runs.openRun(first.replace(WORKERS=2, RAY_ADDRESS="10.0.0.1:6379"), say=said.append)
    assert len(said) == 1 and "1 iterations done" in said[0]  # where games are played is not the run's config
    rows = funcs.train(1, other, progress=False, say=lambda _: None)
    assert rows[0]["iteration"] == 2
    assert [json.loads(line)["iteration"] for line in (folder / "metrics.jsonl").read_text().splitlines()] == [1, 2]
    loggers.disable_all()


def test_a_new_run_starts_from_an_archived_one(tmp_path, tiny_cfg):
    archive = tmp_path / "archive"
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "first", RUN_ARCHIVE_FOLDER=str(archive))
    funcs.train(1, cfg, progress=False, say=lambda _: None)
    target = runs.archiveRun(cfg)
    assert target == archive / "connect4" / "run0001"
    second = cfg.replace(RUN_FOLDER=str(tmp_path / "second"))
    said = []
    run = runs.openRun(second, initial_run=1, initial_model_version=1, initial_memory_version=1, say=said.append)
    archived = storage.load_model(storage.model_path(target, 1))
    x = np.zeros((1, 2, 6, 7), dtype=np.float32)
    assert np.allclose(run.best_NN.predict(x)[1], archived(x)[1].numpy(), atol=1e-6)
    assert len(run.memory) == len(Memory.load(storage.memory_path(target, 1), cfg.MEMORY_SIZE))
    assert "from archived run 1" in said[0]
    with pytest.raises(FileExistsError):
        runs.archiveRun(cfg, run_number=1)


def test_loggers_are_replaced_not_piled_up_and_capped(tmp_path, tiny_cfg):
    cfg = tiny_cfg.replace(LOG_MAX_BYTES=60_000, LOG_BACKUP_COUNT=1,
                           LOGGERS={"main": True, "memory": False, "tourney": False, "mcts": True, "model": False})
    for _ in range(3):
        loggers.setup_loggers(tmp_path, cfg)
    assert len(loggers.logger_mcts.handlers) == 1 and len(loggers.logger_main.handlers) == 1
    assert loggers.logger_model.handlers == [] and not loggers.logger_model.isEnabledFor(logging.INFO)
    agent = Agent("a", ENV.state_size, ENV.action_size, 30, 1.0,
                  Residual_CNN.fromConfig(cfg, ENV.input_shape, ENV.action_size), cfg, logger=loggers.logger_mcts)
    funcs.playMatches(agent, agent, 2, loggers.logger_main, 0)
    files = list((tmp_path / "logs").glob("logger_*.log*"))
    assert {f.name for f in files} == {"logger_main.log", "logger_main.log.1", "logger_mcts.log", "logger_mcts.log.1"}
    # a record may overshoot the rotation size by its own length
    assert sum(f.stat().st_size for f in files) <= 60_000 + 2 * 1_000
    loggers.disable_all()


def writtenLogs(folder, handlerClass, records) -> dict[str, bytes]:
    """The files a rotating handler of `handlerClass` leaves after `records`, written
    to a log that already held 230 bytes."""
    folder.mkdir()
    (folder / "x.log").write_text("an earlier line\n" * 10 + "é" * 35 + "\n", encoding="utf-8")
    logger = logging.getLogger(f"test.rotation.{folder.name}")
    logger.propagate, logger.level = False, logging.INFO
    handler = handlerClass(folder / "x.log", maxBytes=500, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    for record in records:
        logger.info(record)
    logger.removeHandler(handler)
    handler.close()
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_logs_rotate_before_the_same_records_as_the_standard_handler(tmp_path):
    records = [("é" if i % 7 == 0 else "-") * (i * 13 % 90) + f" record {i}" for i in range(200)]
    standard = writtenLogs(tmp_path / "standard", logging.handlers.RotatingFileHandler, records)
    sized = writtenLogs(tmp_path / "sized", loggers.SizedRotatingFileHandler, records)
    assert set(standard) == {"x.log", "x.log.1", "x.log.2"}
    assert sized == standard
    assert b"record 199" in sized["x.log"] and b"record 0\n" not in b"".join(sized.values())


def test_retraining_follows_the_learning_rate_schedule_and_records_the_rate(tmp_path, tiny_cfg):
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run", LEARNING_RATE=0.05, LEARNING_RATE_SCHEDULE=[[2, 0.004]])
    run = runs.openRun(cfg, say=lambda _: None)
    rates = []
    for _ in range(2):
        row = funcs.trainIteration(run, progress=False)
        rates.append((row["learning_rate"], float(run.current_NN.model.optimizer.learning_rate.numpy())))
    assert rates == [(0.05, pytest.approx(0.05)), (0.004, pytest.approx(0.004))]
    assert [r["learning_rate"] for r in runs.readMetrics(tmp_path / "run")] == [0.05, 0.004]


def test_resume_drops_metrics_rows_beyond_the_checkpoint_and_names_a_corrupt_metrics_file(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    funcs.train(1, cfg, progress=False, say=lambda _: None)
    metrics = folder / "metrics.jsonl"
    row = json.loads(metrics.read_text())
    storage.append_line(metrics, json.dumps({**row, "iteration": 2}))  # as if killed before the checkpoint
    runs.openRun(cfg, say=lambda _: None)
    assert [r["iteration"] for r in runs.readMetrics(folder)] == [1]
    storage.append_line(metrics, '{"iteration": 2, "loss": 0.')
    with pytest.raises(storage.RunFileError, match=r"metrics\.jsonl line 2 is corrupt"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_missing_model_or_checkpoint_names_the_file(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    storage.model_path(folder, 1).unlink()
    with pytest.raises(storage.RunFileError, match=r"version0001\.keras is missing.*best_player_version"):
        runs.openRun(cfg, say=lambda _: None)
    (folder / "checkpoint.json").write_text("{not json")
    with pytest.raises(storage.RunFileError, match=r"checkpoint\.json is corrupt"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_promotion_is_checkpointed_before_the_rest_of_the_iteration(tmp_path, tiny_cfg, monkeypatch):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder, SCORING_THRESHOLD=1e-6, EVAL_EPISODES=4)
    run = runs.openRun(cfg, say=lambda _: None)

    def killed(*args, **kwargs):
        raise RuntimeError("killed after the tournament")
    monkeypatch.setattr(funcs, "evaluateBest", killed)
    with pytest.raises(RuntimeError, match="killed"):
        funcs.trainIteration(run, progress=False)
    checkpoint = runs.readCheckpoint(folder)
    assert checkpoint == {"iteration": 0, "best_player_version": 2, "memory_iteration": None}
    resumed = runs.openRun(cfg, say=lambda _: None)
    x = np.zeros((1, 2, 6, 7), dtype=np.float32)
    assert np.allclose(resumed.best_NN.predict(x)[1], run.current_NN.predict(x)[1], atol=1e-6)
    assert np.allclose(resumed.current_NN.predict(x)[1], run.current_NN.predict(x)[1], atol=1e-6)


def test_resume_falls_back_to_an_older_memory_snapshot_and_says_so(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder, MIN_MEMORY_SIZE=256, MEMORY_SIZE=300)
    funcs.train(2, cfg, progress=False, say=lambda _: None)
    older = Memory.load(storage.memory_path(folder, 1), cfg.MEMORY_SIZE)
    storage.memory_path(folder, 2).write_bytes(b"torn")
    said = []
    run = runs.openRun(cfg, say=said.append)
    assert run.memory_iteration == 1 and len(run.memory) == len(older)
    assert "memory0002.npz" in said[0] and "older memory snapshot of iteration 1" in said[0]
    storage.memory_path(folder, 1).write_bytes(b"torn too")
    with pytest.raises(storage.RunFileError, match="no intact memory snapshot.*memory_iteration to null"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_damaged_best_model_names_the_saved_versions(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    storage.model_path(folder, 1).write_bytes(b"not a model")
    with pytest.raises(storage.RunFileError, match=r"version0001\.keras is truncated or corrupt.*saved: 1"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_second_trainer_on_the_same_run_folder_is_refused(tmp_path, tiny_cfg):
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run")
    with storage.runLock(tmp_path / "run"):
        with pytest.raises(storage.RunLockedError, match="another process is training"):
            funcs.train(1, cfg, progress=False, say=lambda _: None)
        with pytest.raises(storage.RunLockedError):
            runs.archiveRun(cfg.replace(RUN_ARCHIVE_FOLDER=str(tmp_path / "archive")))
    assert not (tmp_path / "run" / "checkpoint.json").exists()


def test_an_archive_start_cut_short_is_redone_with_the_archived_config(tmp_path, tiny_cfg):
    archive = tmp_path / "archive"
    first = tinyRunConfig(tiny_cfg, tmp_path / "first", RUN_ARCHIVE_FOLDER=str(archive),
                          HIDDEN_CNN_LAYERS=[{"filters": 4, "kernel_size": (3, 3)}])
    funcs.train(1, first, progress=False, say=lambda _: None)
    runs.archiveRun(first)
    second_folder = tmp_path / "second"
    second = first.replace(RUN_FOLDER=str(second_folder), HIDDEN_CNN_LAYERS=[{"filters": 12, "kernel_size": (3, 3)}])
    second_folder.mkdir()
    (second_folder / "config.json").write_text(second.to_json())  # a start killed before its checkpoint
    run = runs.openRun(second, initial_run=1, say=lambda _: None)
    assert run.cfg.HIDDEN_CNN_LAYERS == first.HIDDEN_CNN_LAYERS
    assert run.best_NN.model.layers[2].kernel.shape[-1] == 4
    assert Config.from_json_file(second_folder / "config.json").HIDDEN_CNN_LAYERS == first.HIDDEN_CNN_LAYERS


def test_version_numbers_below_minus_one_are_refused(tmp_path, tiny_cfg):
    with pytest.raises(ValueError, match="version must be -1"):
        funcs.versionPlayer("p", ENV, tiny_cfg, tmp_path, -2)


def noiseColumns(log_text):
    """The noise column of every MCTS table row in a log."""
    return [float(line.split()[3]) for line in log_text.splitlines()
            if len(line.split()) >= 7 and line.split()[0].isdigit() and "." in line.split()[3]]


def test_root_noise_only_in_selfplay(tiny_cfg):
    model = Residual_CNN.fromConfig(tiny_cfg, ENV.input_shape, ENV.action_size)
    for memory, expect_noise in [(None, False), (Memory(1000), True)]:
        logger, stream = recordingLogger(f"test.mcts.noise.{expect_noise}")
        agent = Agent("a", ENV.state_size, ENV.action_size, 8, 1.0, model, tiny_cfg, logger=logger)
        funcs.playMatches(agent, agent, 2, quietLogger(), 0, memory)
        noise = noiseColumns(stream.getvalue())
        assert noise, "the MCTS log should hold selection tables"
        assert any(value > 0 for value in noise) == expect_noise


def test_act_calls_the_network_once_per_simulation_at_most(tiny_model, tiny_cfg):
    calls = []
    agent = makeAgent("a", tiny_model, tiny_cfg, sims=10)
    evaluate = agent.evaluateStates
    agent.evaluateStates = lambda states: calls.append(len(states)) or evaluate(states)
    state = GameState.initial()
    agent.act(state, 0)
    assert len(calls) == 11  # the root's expansion, then one per simulation (no extra call to log a value)
    state = state.takeAction(agent.act(state, 0)[0])[0]
    calls.clear()
    agent.act(state, 0)  # the root was expanded during the previous search: tree reuse
    assert len(calls) <= 10


def test_terminal_training_resumes_a_run_with_progress_bars(tmp_path, tiny_cfg, capsys):
    folder = tmp_path / "run"
    runs.openRun(tinyRunConfig(tiny_cfg, folder), say=lambda _: None)
    funcs.main(["--iterations", "1", "--run-folder", str(folder)])
    out, err = capsys.readouterr()
    assert "Resumed run" in out and "iteration 1:" in out
    assert "self-play" in err and "tournament" in err  # tqdm bars go to stderr
    assert runs.readCheckpoint(folder)["iteration"] == 1
    with pytest.raises(SystemExit):
        funcs.main(["--iterations", "0"])
    with pytest.raises(SystemExit):
        funcs.main(["--hours", "0"])
    assert "argument --hours: must be a positive number, got 0" in capsys.readouterr().err
    funcs.main(["--hours", "1e-9", "--run-folder", str(folder), "--no-progress"])  # its time is spent already
    assert runs.readCheckpoint(folder)["iteration"] == 1
    loggers.disable_all()


def test_terminal_training_names_a_run_folder_it_cannot_use(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("notes")
    for folder, message in [("", "RUN_FOLDER must be a non-empty path string, got ''"),
                            (str(afile), f"the run folder {afile} is a file, not a folder")]:
        with pytest.raises(SystemExit) as info:
            funcs.main(["--iterations", "1", "--run-folder", folder, "--no-progress"])
        assert info.value.code == 1 and message in capsys.readouterr().err
    assert afile.read_text() == "notes"


def gamesPlayed(tmp_path, tiny_cfg, turns_until_tau0, name):
    """The move strings of 8 games between two fixed networks, read back from the log."""

    networks = [Residual_CNN.fromConfig(tiny_cfg, ENV.input_shape, ENV.action_size) for _ in range(2)]
    for network in networks:  # sharp priors, as a trained network has: the search has no ties to break
        policy = network.model.get_layer("policy_head")
        policy.set_weights([w * 200 for w in policy.get_weights()])
        network.weightsChanged()
    path = tmp_path / f"{name}.log"
    with loggers.loggingTo(path, f"test.tourney.{name}") as logger:
        funcs.playMatches(makeAgent("best", networks[0], tiny_cfg, 1, sims=50),
                          makeAgent("current", networks[1], tiny_cfg, 2, sims=50), 8, logger, turns_until_tau0)
    return [game.moves for game in replay.gamesFromLog(path)]


def test_a_sampled_opening_makes_tournament_games_differ(tmp_path, tiny_cfg):
    greedy = gamesPlayed(tmp_path, tiny_cfg, 0, "greedy")
    sampled = gamesPlayed(tmp_path, tiny_cfg, tiny_cfg.EVAL_TURNS_UNTIL_TAU0, "sampled")
    assert len(greedy) == len(sampled) == 8
    openings = {name: {game[:4] for game in games} for name, games in [("greedy", greedy), ("sampled", sampled)]}
    # greedy play nearly replays one opening per colour assignment (ties aside)
    assert len(openings["sampled"]) >= 6 and len(openings["sampled"]) > len(openings["greedy"]), openings


def test_resume_clears_what_a_kill_left_unrecorded(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    shutil.copy(storage.model_path(folder, 1), storage.model_path(folder, 2))  # promoted, never checkpointed
    (folder / "memory").mkdir(exist_ok=True)
    leftover = folder / "memory" / ".memory0001.npz.abcd.tmp"
    leftover.write_bytes(b"half")
    said = []
    runs.openRun(cfg, say=said.append)
    assert storage.saved_versions(folder) == [1] and not leftover.exists()
    assert (folder / "models" / "version0002.keras.unrecorded").exists()  # set aside, never deleted
    assert "version0002.keras" in said[0] and "promotion the checkpoint never recorded" in said[0]


def savedBytes(folder) -> dict:
    return {path.name: path.read_bytes() for path in (folder / "models").iterdir()}


def test_a_checkpoint_naming_a_version_not_saved_touches_no_saved_version(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    for version in (2, 3):
        shutil.copy(storage.model_path(folder, 1), storage.model_path(folder, version))
    before = savedBytes(folder)
    storage.write_json(storage.checkpoint_path(folder), {"iteration": 3, "best_player_version": 5,
                                                         "memory_iteration": None})
    with pytest.raises(storage.RunFileError, match=r"version0005\.keras is missing; set best_player_version .*"
                                                   r"\(saved: 1, 2, 3\)"):
        runs.openRun(cfg, say=lambda _: None)
    assert savedBytes(folder) == before


@pytest.mark.parametrize("newer", [[2, 3], [2]])
def test_versions_beyond_a_checkpoint_set_back_by_hand_are_set_aside_never_deleted(tmp_path, tiny_cfg, newer):
    """Set back to version 1 with 2 and 3 saved, or with 2 saved that a metrics row names: kept aside, byte for
    byte, and the next promotion's file takes a free name."""
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    for version in newer:
        storage.save_model(Residual_CNN.fromConfig(cfg, (2, 6, 7), 42).model, storage.model_path(folder, version))
    storage.append_line(storage.metrics_path(folder), json.dumps(
        {"iteration": 1, "best_player_version": newer[-1], "seconds": {"selfplay": 1.0}}))
    before = savedBytes(folder)
    said = []
    runs.openRun(cfg, say=said.append)
    assert storage.saved_versions(folder) == [1]
    assert savedBytes(folder) == {(name if name == "version0001.keras" else name + ".unrecorded"): content
                                  for name, content in before.items()}
    aside = [line for line in said if "newer than the checkpoint's best version 1 (" in line and "set aside" in line]
    assert len(aside) == len(newer)


def test_a_config_that_does_not_fit_the_saved_models_is_named(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    cfg = tinyRunConfig(tiny_cfg, folder)
    runs.openRun(cfg, say=lambda _: None)
    changed = cfg.replace(HIDDEN_CNN_LAYERS=[{"filters": 16, "kernel_size": (3, 3)}])
    (folder / "config.json").write_text(changed.to_json())
    with pytest.raises(storage.RunFileError, match=r"version0001\.keras does not fit the network"):
        runs.openRun(cfg, say=lambda _: None)
    (folder / "config.json").write_text("{broken")
    with pytest.raises(SystemExit):
        funcs.main(["--iterations", "1", "--run-folder", str(folder)])


def test_the_memory_log_shows_the_value_target_retraining_uses(tiny_cfg, tiny_model):
    memory = Memory(100)
    state = GameState.fromMoves("4")
    memory.commit_stmemory(Game.identities, state, np.eye(ENV.action_size)[state.actionForColumn(3)], 0.4)
    memory.setResult(state, -1.0)
    memory.commit_ltmemory()
    logger, stream = recordingLogger("memory-sample")
    funcs.logMemorySample(memory, makeAgent("current", tiny_model, tiny_cfg.replace(VALUE_TARGET_Q_WEIGHT=0.25)),
                          logger, size=1)
    assert "target value -0.650 (result z -1, search q +0.400, q weight 0.25)" in stream.getvalue()
    logger, stream = recordingLogger("memory-sample-opening")
    opening = tiny_cfg.replace(VALUE_TARGET_Q_WEIGHT=0.25, OPENING_STONES=2, VALUE_TARGET_Q_WEIGHT_OPENING=1.0)
    funcs.logMemorySample(memory, makeAgent("current", tiny_model, opening), logger, size=1)
    assert "target value +0.400 (result z -1, search q +0.400, q weight 1.00)" in stream.getvalue()


def test_terminal_training_names_an_engine_this_machine_cannot_run(tmp_path, tiny_cfg, monkeypatch, capsys):
    folder = tmp_path / "run"
    runs.openRun(tinyRunConfig(tiny_cfg, folder, INFERENCE="openvino", INFERENCE_PRECISION="bf16"),
                 say=lambda _: None)
    monkeypatch.setattr(inference, "cpuSupportsBF16", lambda: False)  # a CPU without bfloat16 units
    with pytest.raises(SystemExit) as info:
        funcs.main(["--iterations", "1", "--run-folder", str(folder), "--no-progress"])
    assert info.value.code == 1
    assert "INFERENCE_PRECISION='bf16' but this CPU has no native bfloat16 support" in capsys.readouterr().err
    assert runs.readCheckpoint(folder)["iteration"] == 0
    loggers.disable_all()


class Slow(Residual_CNN):
    """The real tiny network, slowed down, recording when each call ran."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[float, float, int]] = []

    def predict(self, x):
        start = time.perf_counter()
        time.sleep(0.02)
        result = Residual_CNN.predict(self, x)
        self.calls.append((start, time.perf_counter(), len(x)))
        return result


def test_the_lanes_network_calls_overlap_the_other_lanes_search(tiny_cfg):
    network = Slow.fromConfig(tiny_cfg.replace(INFERENCE="tensorflow"), ENV.input_shape, ENV.action_size)
    assert network.currentEngine().lanes == 2
    agent = makeAgent("one", network, tiny_cfg, sims=4)
    funcs.playMatches(agent, agent, 6, quietLogger(), 0, Memory(10_000))
    calls = sorted(network.calls)
    overlapping = sum(later[0] < earlier[1] for earlier, later in zip(calls, calls[1:]))
    assert overlapping >= len(calls) // 2  # the two lanes' calls run at the same time
    assert max(size for _, _, size in calls) == 3  # each lane's batch holds its 3 games


def test_a_best_version_is_scored_against_perfect_play_once(tmp_path, tiny_cfg, monkeypatch):
    scored = []
    evaluate = funcs.evaluateBest

    def counting(run, progress=None):
        scored.append(run.best_player_version)
        return evaluate(run, progress)
    monkeypatch.setattr(funcs, "evaluateBest", counting)
    cfg = tinyRunConfig(tiny_cfg, tmp_path / "run", SCORING_THRESHOLD=1e9)  # never promoted
    rows = funcs.train(2, cfg, progress=False, say=lambda _: None)
    assert scored == [1]
    assert rows[0]["mistake_rate"] == rows[1]["mistake_rate"] is not None
    loggers.disable_all()
