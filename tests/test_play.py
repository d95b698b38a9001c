"""Playing against the agent and watching it think (play.py), with the tiny network."""

import html
import itertools
import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba

import funcs
import runs
import loggers as lg
import play
import storage
from agent import Agent, User
from game import COLUMNS, ROWS, Game, GameState, columnOf
from memory import Memory
from model import Residual_CNN


@pytest.fixture
def agent(tiny_cfg, tiny_model):
    return Agent("agent", 84, 42, 4, tiny_cfg.CPUCT, tiny_model, tiny_cfg)


class Script:
    """A scripted human: answers entries in turn (an exception instance is raised),
    and records everything said to them."""

    def __init__(self, entries):
        self.entries = iter(entries)
        self.said: list[str] = []

    def input_fn(self, prompt):
        answer = next(self.entries)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def output_fn(self, text):
        self.said.append(text)

    def text(self) -> str:
        return "\n".join(self.said)


def cycling_columns():
    """Entries '1'..'7' over and over: a refused (full) column is followed by the next."""
    return itertools.cycle([str(c) for c in (4, 3, 5, 2, 6, 1, 7)])


# -- boards ------------------------------------------------------------------------------
def test_boardText_brackets_the_last_move_and_keeps_the_board():
    state = GameState.fromMoves("4453")
    last = state.actionForColumn(2) + COLUMNS  # the disc just dropped in column 3
    text = play.boardText(state, last)
    lines = text.splitlines()
    assert lines[ROWS - 1] == " - -[O]X X - -"
    assert text.count("[") == 1 and text.count("]") == 1
    assert [line.replace("[", " ").replace("]", " ").strip().split() for line in lines] == \
        [line.split() for line in state.text().splitlines()]
    assert play.boardText(state) == "\n".join(" " + line for line in state.text().splitlines())


def test_boardText_brackets_discs_at_both_edges():
    state = GameState.fromMoves("17")
    assert play.boardText(state, state.actionForColumn(0) + COLUMNS).splitlines()[ROWS - 1] == "[X]- - - - - O"
    assert play.boardText(state, state.actionForColumn(6) + COLUMNS).splitlines()[ROWS - 1] == " X - - - - -[O]"


def test_boardFigure_draws_red_X_yellow_O_and_rings_the_last_move():
    state = GameState.fromMoves("44535")
    last = 4 * COLUMNS + 4  # the second disc of column 5, row 4 from the top
    assert state.board[last] == 1
    fig = play.boardFigure(state, last)
    ax = fig.axes[0]
    discs = [p for p in ax.patches if hasattr(p, "center")]
    assert len(discs) == ROWS * COLUMNS
    colours = [p.get_facecolor() for p in discs]
    assert colours.count(to_rgba(play.RED)) == 3 and colours.count(to_rgba(play.YELLOW)) == 2
    ringed = [p for p in discs if p.get_linewidth() > 0]
    assert len(ringed) == 1 and ringed[0].center == (5, ROWS - 4)
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in range(1, 8)]
    assert play.figureSvg(fig).startswith("<svg")


# -- what the agent thought ----------------------------------------------------------------
def test_thinkingTable_covers_the_legal_columns_with_shares_summing_to_one(agent):
    state = GameState.fromMoves("111111")
    agent.MCTSsimulations = 20
    action, pi, value, nn_value = agent.act(state, 0)
    rows = play.thinkingTable(agent)
    assert [row["column"] for row in rows] == [2, 3, 4, 5, 6, 7]
    assert [row["action"] for row in rows] == state.allowedActions
    assert math.isclose(sum(row["share"] for row in rows), 1.0)
    assert sum(row["N"] for row in rows) == 20
    for row in rows:
        assert math.isclose(row["share"], pi[row["action"]])
        assert math.isclose(row["U"], agent.cpuct * row["P"] * math.sqrt(20) / (1 + row["N"]))
        assert (row["net_after"] is None) == (row["N"] == 0)
    chosen = next(row for row in rows if row["action"] == action)
    assert chosen["N"] == max(row["N"] for row in rows) and math.isclose(chosen["Q"], value)
    text = play.thinkingText(play.Thinking(action, rows, value, nn_value))
    assert text.count("<- played") == 1 and f"plays column {columnOf(action) + 1}" in text


def test_thinkingTable_before_any_search_says_so(agent):
    with pytest.raises(ValueError, match="has not searched"):
        play.thinkingTable(agent)


# -- the typed game ------------------------------------------------------------------------
def test_playGame_explains_bad_entries_and_leaves_the_board_unchanged(agent):
    human = Script(["abc", "0", "8", "", "q"])
    match = play.playGame(agent, True, human.input_fn, human.output_fn)
    assert match.moves == "" and match.state.stones == 0
    assert match.resigned and match.winner == "agent"
    problems = [s for s in human.said if "column" in s and "You play" not in s and "\n" not in s]
    assert len(problems) == 4
    assert "'abc' is not a number" in problems[0]
    assert "no column 0" in problems[1] and "no column 8" in problems[2]
    assert "type a column number" in problems[3]
    assert human.said[-1] == "You resigned: the agent wins."


def test_playGame_refuses_a_full_column(agent):
    human = Script(["1", "q"])
    match = play.playGame(agent, True, human.input_fn, human.output_fn, start="111111")
    assert match.moves == "111111" and match.state.id == GameState.fromMoves("111111").id
    assert any("Column 1 is full" in s for s in human.said)


def test_playGame_resigns_when_the_input_ends(agent):
    human = Script(["3", EOFError()])
    match = play.playGame(agent, True, human.input_fn, human.output_fn)
    assert match.resigned and len(match.moves) == 2 and match.moves[0] == "3"
    assert "Input closed: you resign." in human.said


@pytest.mark.parametrize("human_first", [True, False])
def test_playGame_plays_a_full_game_and_shows_the_thinking(agent, human_first):
    human = Script(cycling_columns())
    match = play.playGame(agent, human_first, human.input_fn, human.output_fn)
    assert match.over and not match.resigned
    assert GameState.fromMoves(match.moves).id == match.state.id
    agent_moves = len(match.moves) // 2 if human_first else (len(match.moves) + 1) // 2
    assert sum("plays column" in s for s in human.said) == agent_moves
    assert human.said[-1] == match.outcome() and match.outcome() != "Your move."


def test_playInNotebook_outside_a_kernel_plays_the_typed_game(agent):
    assert not play.widgetsWork()
    human = Script(["q"])
    match = play.playInNotebook(agent, input_fn=human.input_fn, output_fn=human.output_fn)
    assert isinstance(match, play.Match) and match.resigned


# -- the clickable board ----------------------------------------------------------------------
def test_widget_game_plays_a_full_game_by_clicks(agent):
    game = play.WidgetGame(agent, human_first=True, sims=4)
    assert len(game.buttons) == COLUMNS and game.state.stones == 0
    assert game.board.value.startswith("<svg")
    while not game.match.over:
        stones = game.state.stones
        column = next(c for c in (3, 2, 4, 1, 5, 0, 6) if game.state.actionForColumn(c) is not None)
        game.buttons[column].click()
        assert game.state.stones in (stones + 1, stones + 2)
        assert game.match.moves[stones] == str(column + 1)
    assert GameState.fromMoves(game.match.moves).id == game.state.id
    assert game.status.value == html.escape(game.match.outcome())
    assert "<table>" in game.thinking.value
    final = game.state.id
    game.buttons[0].click()
    assert game.state.id == final and "game is over" in game.status.value


def test_widget_game_agent_moves_first_when_the_human_plays_second(agent):
    game = play.WidgetGame(agent, human_first=False, sims=4)
    assert game.state.stones == 1 and game.match.humanToMove
    assert "<table>" in game.thinking.value
    game.new_button.click()
    assert game.state.stones == 1


def test_widget_click_on_a_full_column_changes_nothing(agent):
    game = play.WidgetGame(agent, human_first=True, sims=4, start="111111")
    before, board, thinking = game.state.id, game.board.value, game.thinking.value
    game.buttons[0].click()
    assert game.state.id == before and game.board.value == board and game.thinking.value == thinking
    assert "Column 1 is full" in game.status.value
    game.buttons[1].click()
    assert game.state.stones == 8 and game.match.moves.startswith("1111112")


def test_widget_game_from_a_finished_position_only_says_so(agent):
    game = play.WidgetGame(agent, human_first=False, sims=4, start="1212121")
    assert game.match.over and game.match.winner == "agent" and game.thinking.value == ""
    game.buttons[4].click()
    assert game.match.moves == "1212121" and "game is over" in game.status.value


def test_widget_resign_ends_the_game_and_later_clicks_change_nothing(agent):
    game = play.WidgetGame(agent, human_first=True, sims=4)
    game.buttons[3].click()
    game.resign_button.click()
    assert game.match.resigned and "resigned" in game.status.value
    before = game.state.id
    game.buttons[2].click()
    assert game.state.id == before and "game is over" in game.status.value
    game.new_button.click()
    assert game.state.stones == 0 and not game.match.over


# -- inspecting one search ------------------------------------------------------------------
def test_inspectMove_finds_the_winning_column(agent):
    moves = "121213"  # X holds column 1 three high, X to move
    state = GameState.fromMoves(moves)
    wins = [c for c in range(1, 8) if GameState.fromMoves(moves + str(c)).value[0] == -1]
    assert not state.isEndGame and wins == [1]
    logger = agent.logger
    inspection = play.inspectMove(agent, moves, sims=30)
    assert agent.logger is logger and agent.mcts is None
    assert inspection.column == 1 and inspection.action == state.actionForColumn(0)
    visits = {row["column"]: row["N"] for row in inspection.table}
    assert visits[1] == max(visits.values()) and sorted(visits.values())[-2] < visits[1]
    assert sum(visits.values()) == 30 and inspection.value == 1.0
    assert inspection.principal_variation[0] == 1
    assert 1 < inspection.tree_size <= 1 + 30  # the root and the positions the simulations reached
    assert inspection.log.count("=== simulation") == 30 and "chosen: column 1" in inspection.log
    assert "principal variation (columns): 1" in str(inspection)
    assert "<table>" in inspection._repr_html_()
    fig = inspection.plot()
    assert [ax.get_title() for ax in fig.axes] == ["N", "Q", "P", "U"]
    assert [p.get_height() for p in fig.axes[0].patches] == [visits[c] for c in sorted(visits)]


def test_inspectMove_refuses_a_finished_game(agent):
    with pytest.raises(ValueError, match="game is over"):
        play.inspectMove(agent, "1212121")


# -- humans in playMatches ---------------------------------------------------------------------
def _loggingTo(tmp_path, cfg, name):
    """Switch one of the run's logs on, in tmp_path/logs."""
    lg.setup_loggers(tmp_path, cfg.replace(LOGGERS={name: True}))
    return tmp_path / "logs" / f"logger_{name}.log"


def test_playMatches_with_a_user_plays_a_full_game_and_the_log_replays_it(agent, tiny_cfg, tmp_path):
    events = []
    entries = cycling_columns()

    def input_fn(prompt):
        events.append(("entry", next(entries)))
        return events[-1][1]

    user = User("you", 84, 42, input_fn, lambda text: events.append(("said", text)))
    log = _loggingTo(tmp_path, tiny_cfg, "tourney")
    try:
        scores, _, points, _ = funcs.playMatches(user, agent, 1, lg.logger_tourney, 0, goes_first=1)
    finally:
        lg.disable_all()
    assert sum(scores.values()) == 1 and points["you"][0] == -points["agent"][0]
    # the board is shown before every prompt; a refused entry is followed by a message instead
    accepted = [e[1] for e, after in zip(events, events[1:] + [("said", "1 2 3 4 5 6 7")])
                if e[0] == "entry" and after[0] == "said" and after[1].endswith("1 2 3 4 5 6 7")]
    replay = play.replayGame(log)
    final = GameState.fromMoves(replay.moves)
    assert final.isEndGame
    assert replay.players == {1: "you", -1: "agent"}
    assert replay.moves[::2] == "".join(accepted)
    winner = "drawn" if final.value[0] == 0 else replay.players[-final.playerTurn]
    assert scores[winner] == 1
    assert [f.player for f in replay.frames[:-1]] == ["you", "agent"] * (len(replay.moves) // 2) + \
        ["you"] * (len(replay.moves) % 2)


# -- replaying stored games --------------------------------------------------------------------
def test_selfplay_games_replay_alike_from_memory_and_from_the_log(agent, tiny_cfg, tmp_path):
    log = _loggingTo(tmp_path, tiny_cfg, "main")
    memory = Memory(10_000)
    try:
        funcs.playMatches(agent, agent, 3, lg.logger_main, 10, memory)
    finally:
        lg.disable_all()
    memory.save(tmp_path / "memory.npz")
    from_memory = play.gamesFromMemory(tmp_path / "memory.npz")
    from_log = play.gamesFromLog(log)
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
                                    "playerTurn": s.playerTurn, "value": 0.0})
        state = state.takeAction(action)[0]
    memory.save(tmp_path / "m.npz")
    replay = play.replayGame(tmp_path / "m.npz")
    mirrored = "".join(str(8 - int(c)) for c in moves)
    assert replay.moves == mirrored[:-1] and replay.outcome == "draw"
    assert replay.frames[-1].action is None and replay.frames[-1].shares[int(mirrored[-1]) - 1] == 1


def test_replayGame_chooses_a_game_and_names_the_range(agent, tiny_cfg, tmp_path):
    memory = Memory(10_000)
    funcs.playMatches(agent, agent, 2, lg.logger_main, 10, memory)
    memory.save(tmp_path / "memory.npz")
    games = play.gamesFromMemory(tmp_path / "memory.npz")
    assert play.replayGame(tmp_path / "memory.npz", 1).moves == games[0].moves
    assert play.replayGame(tmp_path / "memory.npz").moves == games[1].moves
    with pytest.raises(ValueError, match="holds 2 games: choose game 1 to 2"):
        play.replayGame(tmp_path / "memory.npz", 3)
    replay = min(games, key=len)
    text = str(replay)
    assert text.count("visit shares") == len(replay) and "plays" in text
    assert len(replay.plot().axes) == len(replay)
    assert replay.figure(0).axes[0].get_title().startswith("1. X plays")


def test_log_replay_skips_games_whose_start_is_missing(agent, tiny_cfg, tmp_path):
    log = _loggingTo(tmp_path, tiny_cfg, "main")
    try:
        funcs.playMatches(agent, agent, 2, lg.logger_main, 10)
    finally:
        lg.disable_all()
    lines = log.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "EPISODE 2:" in line)
    (tmp_path / "cut.log").write_text("\n".join(lines[start + 1:]) + "\n")
    full, cut = play.gamesFromLog(log), play.gamesFromLog(tmp_path / "cut.log")
    assert cut == []
    assert len(full) == 2 and all(GameState.fromMoves(g.moves).isEndGame for g in full)


# -- loading saved versions and the terminal ---------------------------------------------------
@pytest.fixture
def run_folder(tiny_cfg, tmp_path):
    """A run folder with versions 1 and 3 saved (different weights), best version 3."""
    folder = tmp_path / "run"
    network = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)
    storage.write_text(folder / "config.json", tiny_cfg.to_json())
    storage.save_model(network.model, storage.model_path(folder, 1))
    network.model.set_weights([w + 0.5 for w in network.model.get_weights()])
    storage.save_model(network.model, storage.model_path(folder, 3))
    storage.write_json(folder / "checkpoint.json", {"iteration": 4, "best_player_version": 3,
                                                    "memory_iteration": None})
    return folder


def test_loadPlayer_loads_the_best_version_with_the_runs_config(run_folder, tiny_cfg):
    player = play.loadPlayer(run_folder=run_folder, sims=3)
    saved = storage.load_model(storage.model_path(run_folder, 3))
    assert isinstance(player, Agent) and player.MCTSsimulations == 3
    assert player.config == tiny_cfg
    assert all(np.array_equal(a, b) for a, b in zip(player.model.model.get_weights(), saved.get_weights()))
    assert play.loadPlayer(1, run_folder).MCTSsimulations == tiny_cfg.MCTS_SIMS
    assert runs.savedVersions(run_folder) == [1, 3]


def test_loadPlayer_names_the_saved_versions_when_one_is_missing(run_folder):
    with pytest.raises(ValueError, match=r"no saved version 2; saved versions: 1, 3 \(or 0"):
        play.loadPlayer(2, run_folder)
    with pytest.raises(ValueError, match="version must be 0"):
        play.loadPlayer(-1, run_folder)
    with pytest.raises(ValueError, match="sims must be a positive"):
        play.loadPlayer(1, run_folder, sims=0)


def test_loadPlayer_without_a_run_says_so_and_version_0_still_plays(tmp_path, tiny_cfg):
    with pytest.raises(storage.RunFileError, match="no checkpoint.json"):
        play.loadPlayer(run_folder=tmp_path / "nothing", cfg=tiny_cfg)
    untrained = play.loadPlayer(0, tmp_path / "nothing", sims=2, cfg=tiny_cfg)
    assert untrained.MCTSsimulations == 2 and untrained.config == tiny_cfg


def test_terminal_entry_point_plays_a_game(run_folder):
    human = Script(cycling_columns())
    match = play.main(["--run-folder", str(run_folder), "--sims", "2", "--second"],
                      human.input_fn, human.output_fn)
    assert match.over and match.human == -1 and match.agent.MCTSsimulations == 2
    assert human.said[0] == "Playing version best with 2 simulations per move."


def test_terminal_entry_point_names_a_missing_version(run_folder, capsys):
    with pytest.raises(SystemExit) as exit_:
        play.main(["--run-folder", str(run_folder), "--version", "7"])
    assert exit_.value.code == 2
    assert "saved versions: 1, 3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        play.main(["--sims", "0"])
    assert "must be a positive number" in capsys.readouterr().err


def test_boardText_in_colour_draws_red_and_yellow_discs():
    state = GameState.fromMoves("45")
    plain = play.boardText(state, state.actionForColumn(4) + COLUMNS)
    coloured = play.boardText(state, state.actionForColumn(4) + COLUMNS, colour=True)
    assert coloured.count("\033[31m●") == 1 and coloured.count("\033[33m●") == 1  # X red, O yellow
    assert "X" not in coloured and "O" not in coloured and "[" in coloured
    assert coloured.splitlines()[-1] == plain.splitlines()[-1]  # the column numbers stay


def test_a_tournament_log_replays_every_game_with_its_own_moves(tiny_cfg, tmp_path, monkeypatch):
    played: dict[int, str] = {}
    play_move = funcs.Episode._playMove

    def recording(episode, action, *rest):
        played[episode.index] = played.get(episode.index, "") + str(columnOf(action) + 1)
        return play_move(episode, action, *rest)
    monkeypatch.setattr(funcs.Episode, "_playMove", recording)
    networks = [Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42) for _ in range(2)]
    best, current = (Agent(name, 84, 42, 8, 1.0, network, tiny_cfg, seed=i)
                     for i, (name, network) in enumerate(zip(("best", "current"), networks)))
    log = _loggingTo(tmp_path, tiny_cfg, "tourney")
    try:
        funcs.playMatches(best, current, 6, lg.logger_tourney, 2)
    finally:
        lg.disable_all()
    replays = play.gamesFromLog(log)
    assert [replay.moves for replay in replays] == [played[e] for e in range(6)]
    assert [replay.players[1] for replay in replays] == ["best", "current"] * 3
    assert all(GameState.fromMoves(replay.moves).isEndGame for replay in replays)
