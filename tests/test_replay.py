"""Replaying stored games (replay.py) from memory snapshots and from the match logs,
whose lines gamelog.py writes and reads."""

import numpy as np
import pytest

import funcs
import gamelog
import loggers as lg
from agent import Agent
from game import Game, GameState, columnOf
from memory import Memory
from replay import gamesFromLog, gamesFromMemory, replayGame
from model import Residual_CNN


@pytest.fixture
def agent(tiny_cfg, tiny_model):
    return Agent("agent", 84, 42, 4, tiny_cfg.CPUCT, tiny_model, tiny_cfg)


def _selfplayReplays(logging_to, player, cfg, games: int, turns_until_tau0: int, tmp_path):
    """Self-play `games` games with the main log on; returns (memory, the games
    replayed from the saved memory, the games replayed from the log)."""
    log = logging_to(cfg, "main")
    memory = Memory(10_000)
    try:
        funcs.playMatches(player, player, games, lg.logger_main, turns_until_tau0, memory)
    finally:
        lg.disable_all()
    memory.save(tmp_path / "memory.npz")
    return memory, gamesFromMemory(tmp_path / "memory.npz"), gamesFromLog(log)


def test_selfplay_games_replay_alike_from_memory_and_from_the_log(logging_to, agent, tiny_cfg, tmp_path):
    memory, from_memory, from_log = _selfplayReplays(logging_to, agent, tiny_cfg, 3, 10, tmp_path)
    assert len(from_memory) == len(from_log) == 3
    rows = iter(memory.ltmemory)
    for kept, logged in zip(from_memory, from_log):
        final = GameState.fromMoves(logged.moves)
        assert final.isEndGame
        assert kept.moves == logged.moves[:-1]  # memory holds no position after the last move
        assert logged.outcome.endswith(f"after {len(logged.moves)} moves")
        result = final.value[0] * final.playerTurn  # for the first player
        assert kept.outcome == ("X wins" if result > 0 else "O wins" if result < 0 else "draw")
        for frame, logged_frame in zip(kept.frames, logged.frames):
            row = next(rows)
            assert frame.state.id == row["state"].id == logged_frame.state.id
            assert np.allclose([s or 0 for s in frame.shares], [s or 0 for s in logged_frame.shares], atol=0.006)
            next(rows)  # the mirror image
        assert logged.frames[-1].state.isEndGame and logged.frames[0].search_value is not None


def test_games_with_random_openings_replay_one_by_one_from_memory(logging_to, tiny_cfg, tiny_model, tmp_path):
    """Games that start after random opening moves start from any number of stones:
    memory's replay still tells them apart (none merged with the game before it)
    and each is the logged game from its first searched move on."""
    cfg = tiny_cfg.replace(RANDOM_OPENING_MOVES=6)
    player = Agent("agent", 84, 42, 4, cfg.CPUCT, tiny_model, cfg)
    _, from_memory, from_log = _selfplayReplays(logging_to, player, cfg, 10, 2, tmp_path)
    assert len(from_memory) == len(from_log) == 10
    openings = [kept.frames[0].state.stones for kept in from_memory]
    assert len(set(openings)) > 1, openings
    for kept, logged, opening in zip(from_memory, from_log, openings):
        assert kept.frames[0].state.id == logged.frames[opening].state.id
        assert kept.moves == logged.moves[opening:-1]


def test_memory_replay_follows_a_game_stored_mirrored_first(tmp_path):
    moves = "4453"
    memory = Memory(100)
    state = GameState.initial()
    for column in moves:
        pi = np.zeros(42)
        action = state.actionForColumn(int(column) - 1)
        pi[action] = 1
        (mine, mine_pi), (mirror, mirror_pi) = Game.identities(state, pi)
        for s, p in ((mirror, mirror_pi), (mine, mine_pi)):
            memory.ltmemory.append({"board": s.board, "state": s, "id": s.id, "AV": p,
                                    "playerTurn": s.playerTurn, "value": 0.0, "q": 0.0})
        state = state.takeAction(action)[0]
    memory.save(tmp_path / "m.npz")
    replay = replayGame(tmp_path / "m.npz")
    mirrored = "".join(str(8 - int(c)) for c in moves)
    assert replay.moves == mirrored[:-1] and replay.outcome == "draw"
    assert replay.frames[-1].action is None and replay.frames[-1].shares[int(mirrored[-1]) - 1] == 1


def test_replayGame_chooses_a_game_and_names_the_range(agent, tiny_cfg, tmp_path):
    memory = Memory(10_000)
    funcs.playMatches(agent, agent, 2, lg.logger_main, 10, memory)
    memory.save(tmp_path / "memory.npz")
    games = gamesFromMemory(tmp_path / "memory.npz")
    assert replayGame(tmp_path / "memory.npz", 1).moves == games[0].moves
    assert replayGame(tmp_path / "memory.npz").moves == games[1].moves
    with pytest.raises(ValueError, match="holds 2 games: choose game 1 to 2"):
        replayGame(tmp_path / "memory.npz", 3)
    replay = min(games, key=len)
    text = str(replay)
    assert text.count("search policy") == len(replay) and "plays" in text
    assert len(replay.plot().axes) == len(replay)
    assert replay.figure(0).axes[0].get_title().startswith("1. X plays")


def test_log_replay_skips_games_whose_start_is_missing(logging_to, agent, tiny_cfg, tmp_path):
    log = logging_to(tiny_cfg, "main")
    try:
        funcs.playMatches(agent, agent, 2, lg.logger_main, 10)
    finally:
        lg.disable_all()
    lines = log.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "EPISODE 2:" in line)
    (tmp_path / "cut.log").write_text("\n".join(lines[start + 1:]) + "\n")
    full, cut = gamesFromLog(log), gamesFromLog(tmp_path / "cut.log")
    assert cut == []
    assert len(full) == 2 and all(GameState.fromMoves(g.moves).isEndGame for g in full)


def test_a_tournament_log_replays_every_game_with_its_own_moves(logging_to, tiny_cfg, tmp_path, monkeypatch):
    played: dict[int, str] = {}
    play_move = funcs.Episode._playMove

    def recording(episode, action, *rest, **stored):
        played[episode.index] = played.get(episode.index, "") + str(columnOf(action) + 1)
        return play_move(episode, action, *rest, **stored)
    monkeypatch.setattr(funcs.Episode, "_playMove", recording)
    networks = [Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42) for _ in range(2)]
    best, current = (Agent(name, 84, 42, 8, 1.0, network, tiny_cfg, seed=i)
                     for i, (name, network) in enumerate(zip(("best", "current"), networks)))
    log = logging_to(tiny_cfg, "tourney")
    try:
        funcs.playMatches(best, current, 6, lg.logger_tourney, 2)
    finally:
        lg.disable_all()
    replays = gamesFromLog(log)
    assert [replay.moves for replay in replays] == [played[e] for e in range(6)]
    assert [replay.players[1] for replay in replays] == ["best", "current"] * 3
    assert all(GameState.fromMoves(replay.moves).isEndGame for replay in replays)


def test_every_log_line_format_reads_back_what_it_wrote():
    written = {gamelog.START: dict(game=3, first="best player", second="current (v2)"),
               gamelog.RESULT: dict(game=12, winner=gamelog.DRAW, moves=42),
               gamelog.TO_MOVE: dict(game=1, player="you", piece="O", policy="search policy",
                                     shares="1:0.10 2:-- 3:0.90"),
               gamelog.VALUES: dict(game=2, piece="X", search=-0.25, network=0.5),
               gamelog.ACTION: dict(game=9, column=7), gamelog.RESIGNS: dict(game=4, player="player1")}
    for line_format, values in written.items():
        parsed = line_format.parse(line_format.line(**values))
        assert parsed is not None and {k: type(v)(parsed[k]) for k, v in values.items()} == values
        others = [other for other in written if other is not line_format]
        assert all(other.parse(line_format.line(**values)) is None for other in others)
    older = "game 5: best_player (X) to move; visit shares by column: 1:0.50 2:0.50"  # before the label changed
    assert gamelog.TO_MOVE.parse(older)["shares"] == "1:0.50 2:0.50"
    assert gamelog.parseShares(gamelog.sharesText([0.1, None, 0.9])) == [0.1, None, 0.9]
    assert lg.messageOf("2026-01-02 03:04:05,678 INFO game 1: action: column 3") == "game 1: action: column 3"
    assert all(gamelog.BOARD_ROW.fullmatch(row) for row in GameState.fromMoves("4453").text().splitlines()[:-1])
