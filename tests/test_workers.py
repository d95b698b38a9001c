"""Games played by Ray workers (workers.py): the same iteration as in one process,
weights by version, workers dying mid-match.

One local Ray session and one pool of two workers serve the whole module (starting
Ray and its workers takes tens of seconds); the test that kills workers runs last.
The networks are helpers.RowByRow, whose numbers do not depend on how positions
are batched, so games played by two workers (smaller batches) are move for move and
bit for bit those played in one process.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import time

import numpy as np
import pytest
import ray

import funcs
import helpers
import loggers
import replay
import runs
import workers
from agent import Agent
from game import Game, GameState
from memory import Memory

ENV = Game()
QUIET = logging.getLogger("test.workers.quiet")
QUIET.disabled = True


@pytest.fixture(scope="module")
def pool():
    """Two workers on a local Ray started for this module (shut down after it)."""
    workers.startRay()
    # The workers cannot import the tests folder: RowByRow travels to them by value.
    ray.cloudpickle.register_pickle_by_value(helpers)
    try:
        with workers.Pool(2, say=lambda _: None, matchEpisodes=funcs.matchEpisodes,
                          playEpisodes=funcs.playEpisodes) as pool:
            yield pool
    finally:
        ray.shutdown()


def rowByRowRun(tiny_cfg, folder):
    """A new tiny run in `folder` whose two networks are RowByRow copies of its own."""
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), EPISODES=4, MCTS_SIMS=4, MIN_MEMORY_SIZE=32, EVAL_EPISODES=2,
                           EVAL_POSITIONS=0, LOGGERS={"main": True, "memory": False, "tourney": True, "mcts": False,
                                                      "model": False})
    run = runs.openRun(cfg, say=lambda _: None)
    for name in ("best_NN", "current_NN"):
        network = helpers.RowByRow.fromConfig(cfg, ENV.input_shape, ENV.action_size)
        network.setWeightsFrom(getattr(run, name).model)
        setattr(run, name, network)
    return run


def iteration(tiny_cfg, folder, pool):
    """Run one iteration of a new tiny run; returns (metrics row, memory rows, the
    self-play and tournament games read back from the logs)."""
    run = rowByRowRun(tiny_cfg, folder)
    loggers.setup_loggers(run.folder, run.cfg)
    try:
        row = funcs.trainIteration(run, progress=False, pool=pool)
    finally:
        loggers.disable_all()
    games = {name: [(game.moves, game.outcome) for game in replay.gamesFromLog(folder / "logs" / f"logger_{name}.log")]
             for name in ("main", "tourney")}
    return row, list(run.memory.ltmemory), games


def sameRows(rows, expected) -> None:
    assert len(rows) == len(expected)
    for row, other in zip(rows, expected):
        assert row["id"] == other["id"] and row["playerTurn"] == other["playerTurn"]
        assert row.get("value") == other.get("value") and row["q"] == other["q"]  # values: once a game is scored
        assert np.array_equal(row["AV"], other["AV"])


def test_an_iteration_on_two_workers_collects_the_positions_of_one_process(pool, tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(EVAL_RANDOM_OPENING_MOVES=3)  # the workers' tournament games open as this process's
    row, memory, games = iteration(cfg, tmp_path / "workers", pool)
    expected_row, expected_memory, expected_games = iteration(cfg, tmp_path / "alone", None)
    assert row["trained"] and row["scores"] is not None  # the tournament was played too
    assert len(pool.actors) == 2 and pool.replayed == 0
    sameRows(memory, expected_memory)
    assert {k: v for k, v in row.items() if k != "seconds"} == {k: v for k, v in expected_row.items() if k != "seconds"}
    # each game's log lines came back with it: the logs hold the same games, in episode order
    assert len(games["main"]) == 4 and len(games["tourney"]) == 2
    assert games == expected_games


def agentOn(network, cfg, seed=3):
    return Agent("best_player", ENV.state_size, ENV.action_size, cfg.MCTS_SIMS, cfg.CPUCT, network, cfg, seed=seed)


def test_a_worker_plays_with_the_version_of_the_weights_it_is_given(pool, tiny_cfg):
    cfg = tiny_cfg.replace(MCTS_SIMS=4)
    networks = [helpers.RowByRow.fromConfig(cfg, ENV.input_shape, ENV.action_size) for _ in range(3)]
    learner = networks[0]
    states = [GameState.fromMoves(moves) for moves in ("", "4453", "1122334")]
    seen = []
    for source in networks[1:]:  # version k: the weights of networks[k]
        learner.setWeightsFrom(source.model)
        answers = pool.evaluate(agentOn(learner, cfg), states)
        version = answers[0][0]
        assert [held for held, _ in answers] == [version, version]
        expected = agentOn(source, cfg).evaluateStates(states)
        for _, evaluations in answers:
            for (value, probs), (expected_value, expected_probs) in zip(evaluations, expected):
                assert value == pytest.approx(expected_value, abs=1e-6)
                assert np.allclose(probs, expected_probs, atol=1e-6)
        seen.append((version, [value for value, _ in expected]))
        # and it plays with them: its games are the ones this process plays with these weights
        player, reference = agentOn(learner, cfg), agentOn(source, cfg)
        _, memory, _, _ = funcs.playMatches(player, player, 2, QUIET, 2, Memory(5000), pool=pool)
        _, alone, _, _ = funcs.playMatches(reference, reference, 2, QUIET, 2, Memory(5000))
        sameRows(list(memory.ltmemory), list(alone.ltmemory))
    (first, first_values), (second, second_values) = seen
    assert second > first
    assert not np.allclose(first_values, second_values, atol=1e-3)  # the two versions are told apart
    assert pool.evaluate(agentOn(learner, cfg), states)[0][0] == second  # unchanged weights keep their version


def test_workers_play_archive_starts_as_this_process_does(pool, tiny_cfg):
    """Self-play with ARCHIVE_START_PROBABILITY=0.5 on the workers: each game starts where it does in this
    process (the starts are drawn by the learner), so the memory holds the same rows."""
    cfg = tiny_cfg.replace(MCTS_SIMS=4, ARCHIVE_START_PROBABILITY=0.5)
    network = helpers.RowByRow.fromConfig(cfg, ENV.input_shape, ENV.action_size)
    memories = []
    for on in (pool, None):
        player = agentOn(network, cfg)
        _, memory, _, _ = funcs.playMatches(player, player, 2, QUIET, 2, Memory(5000))
        archived = len(memory)
        funcs.playMatches(player, player, 6, QUIET, 2, memory, pool=on)
        memories.append(list(memory.ltmemory))
    sameRows(*memories)
    empty_starts = sum(row["state"].stones == 0 for row in memories[0][archived::2])
    assert empty_starts < 6  # some of the six games started from the archive


def test_more_workers_than_free_cpus_are_refused_by_name(pool, tiny_cfg, tmp_path, capsys):
    folder = tmp_path / "run"
    runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(folder)), say=lambda _: None)
    with pytest.raises(SystemExit):
        funcs.main(["--iterations", "1", "--run-folder", str(folder), "--workers", "64", "--no-progress"])
    assert re.search(r"WORKERS = 64 needs 64 free CPUs, but this machine has \d+ free \(of \d+\): lower WORKERS",
                     capsys.readouterr().err)
    assert runs.readCheckpoint(folder)["iteration"] == 0
    with pytest.raises(SystemExit):
        funcs.main(["--iterations", "1", "--run-folder", str(folder), "--workers", "-1"])
    assert "WORKERS must not be negative" in capsys.readouterr().err
    loggers.disable_all()


def test_killed_workers_games_are_played_again_once_and_none_left_is_an_error(pool, tiny_cfg, capfd):
    cfg = tiny_cfg.replace(MCTS_SIMS=4)
    network = helpers.RowByRow.fromConfig(cfg, ENV.input_shape, ENV.action_size)
    episodes, base = 8, 12345
    agent = agentOn(network, cfg)
    alone = funcs.matchEpisodes(agent, agent, range(episodes), base, lambda e: QUIET, 2, Memory(5000))
    for _ in funcs.playEpisodes(alone):
        pass
    assert len(pool.actors) == 2
    pids = ray.get([actor.__ray_call__.remote(lambda worker: os.getpid()) for actor in pool.actors])
    back, killed, said = [], [], []
    pool.say = said.append

    def killTheOther(episode):
        """On the first game back, kill the other worker's process (games are dealt
        alternately), whose games are then still being played."""
        back.append(episode.index)
        if not killed:
            killed.append(pool.actors[1 - episode.index % 2])
            os.kill(pids[1 - episode.index % 2], signal.SIGKILL)

    played = list(pool.playMatch(agent, agent, episodes, base, QUIET, 2, Memory(5000), 0, killTheOther))
    assert len(pool.actors) == 1 and killed[0] not in pool.actors
    assert pool.replayed >= 1
    number = pool.numbers[killed[0]]
    assert said == [f"Ray worker {number} of 2 died (its process was killed or crashed; Ray's ActorDiedError): its "
                    f"{pool.replayed} unfinished games of this match are played again by the 1 worker left, which "
                    f"play every game from now on."]
    time.sleep(2)  # Ray's own report of the death, had it been printed, comes from a thread of its own
    out, err = capfd.readouterr()
    assert "(raylet)" not in out + err and "A worker died" not in out + err
    assert sorted(back) == list(range(episodes))  # every game came back once: counted once, none lost
    assert [episode.index for episode in played] == list(range(episodes))
    for episode, expected in zip(played, alone):
        assert episode.state.id == expected.state.id and episode.value == expected.value
        sameRows(list(episode.memory.stmemory), list(expected.memory.stmemory))

    def killTheLast(episode):
        if pool.actors:
            ray.kill(pool.actors[0])

    with pytest.raises(workers.WorkersLost, match=r"all 2 Ray workers have died \(the last, worker \d: its process "
                                                  r"was killed or crashed.*of the match's 8 games were not "
                                                  r"played.*resumes from the last finished iteration"):
        list(pool.playMatch(agent, agent, episodes, base, QUIET, 2, Memory(5000), 0, killTheLast))
    assert pool.actors == []
