"""Playing against the agent and watching it think (play.py), and the typed game of
playMatchesBetweenVersions, with the tiny network."""

import html
import itertools
import threading

import numpy as np
import pytest

import boards
import funcs
import loggers as lg
import play
import storage
from agent import Agent, User
from game import COLUMNS, Game, GameState
from model import Residual_CNN
from replay import gamesFromLog, replayGame


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
    assert human.said[-1] == "You resigned after 0 moves: the agent wins."


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
    assert human.said[-2] == boards.boardText(match.state, match.last_action)  # the final board, then the result
    n = len(match.moves)
    assert match.outcome() in (f"You win in {n} moves!", f"The agent wins in {n} moves.",
                               f"Draw: the board is full after {n} moves.")
    if match.winner is not None:
        assert human.said[-2].count("[") >= 1 and len(match.state.winningFour()) == 4


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
        game.wait()
        assert game.state.stones in (stones + 1, stones + 2)
        assert game.match.moves[stones] == str(column + 1)
    assert GameState.fromMoves(game.match.moves).id == game.state.id
    assert html.escape(game.match.outcome()) in game.status.value and game.status.value.startswith("<h2>")
    assert f"in {len(game.match.moves)} moves" in game.status.value or "Draw" in game.status.value
    assert game.board.value == boards.boardSvg(game.state, game.match.last_action, game.CELL)
    assert "<table>" in game.thinking.value
    final = game.state.id
    game.buttons[0].click()
    assert game.state.id == final and "game is over" in game.status.value


def test_widget_game_agent_moves_first_when_the_human_plays_second(agent):
    game = play.WidgetGame(agent, human_first=False, sims=4)
    game.wait()
    assert game.state.stones == 1 and game.match.humanToMove
    assert "<table>" in game.thinking.value
    game.new_button.click()
    game.wait()
    assert game.state.stones == 1


def test_widget_click_on_a_full_column_changes_nothing(agent):
    game = play.WidgetGame(agent, human_first=True, sims=4, start="111111")
    before, board, thinking = game.state.id, game.board.value, game.thinking.value
    game.buttons[0].click()
    assert game.state.id == before and game.board.value == board and game.thinking.value == thinking
    assert "Column 1 is full" in game.status.value
    first = game.status.value
    game.buttons[0].click()
    assert game.status.value != first and "Refused 2 times in a row" in game.status.value
    assert game.state.id == before
    game.buttons[1].click()
    game.wait()
    assert game.state.stones == 8 and game.match.moves.startswith("1111112")


def test_widget_game_from_a_finished_position_only_says_so(agent):
    game = play.WidgetGame(agent, human_first=False, sims=4, start="1212121")
    assert game.match.over and game.match.winner == "agent" and game.thinking.value == ""
    game.buttons[4].click()
    assert game.match.moves == "1212121" and "game is over" in game.status.value


def test_widget_resign_ends_the_game_and_later_clicks_change_nothing(agent):
    game = play.WidgetGame(agent, human_first=True, sims=4)
    game.buttons[3].click()
    game.wait()
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
    assert [ax.get_title() for ax in fig.axes] == ["N", "policy", "Q", "P", "U"]
    assert [p.get_height() for p in fig.axes[0].patches] == [visits[c] for c in sorted(visits)]
    assert [p.get_height() for p in fig.axes[1].patches] == [row["policy"] for row in inspection.table]


def test_inspectMove_refuses_a_finished_game(agent):
    with pytest.raises(ValueError, match="game is over"):
        play.inspectMove(agent, "1212121")


@pytest.mark.parametrize("sims", [0, -3, 2.5, True])
def test_a_game_or_an_inspection_without_simulations_is_refused_by_name(agent, tiny_cfg, tiny_model, sims):
    for start in (lambda: play.playGame(agent, input_fn=lambda _: "4", output_fn=lambda _: None, sims=sims),
                  lambda: play.inspectMove(agent, "44", sims=sims),
                  lambda: Agent.fromConfig("a", tiny_cfg, tiny_model, mcts_simulations=sims)):
        with pytest.raises(ValueError, match=f"sims must be a positive number of MCTS simulations, got {sims!r}"):
            start()


# -- humans in playMatches ---------------------------------------------------------------------
def test_playMatches_with_a_user_plays_a_full_game_and_the_log_replays_it(logging_to, agent, tiny_cfg, tmp_path):
    events = []
    entries = cycling_columns()

    def input_fn(prompt):
        events.append(("entry", next(entries)))
        return events[-1][1]

    user = User("you", 84, 42, input_fn, lambda text: events.append(("said", text)))
    log = logging_to(tiny_cfg, "tourney")
    try:
        scores, _, points, _ = funcs.playMatches(user, agent, 1, lg.logger_tourney, 0, goes_first=1)
    finally:
        lg.disable_all()
    assert sum(scores.values()) == 1 and points["you"][0] == -points["agent"][0]
    # the board is shown before every prompt; a refused entry is followed by a message instead
    accepted = [e[1] for e, after in zip(events, events[1:] + [("said", "1 2 3 4 5 6 7")])
                if e[0] == "entry" and after[0] == "said" and after[1].endswith("1 2 3 4 5 6 7")]
    replay = replayGame(log)
    final = GameState.fromMoves(replay.moves)
    assert final.isEndGame
    assert replay.players == {1: "you", -1: "agent"}
    assert replay.moves[::2] == "".join(accepted)
    winner = "drawn" if final.value[0] == 0 else replay.players[-final.playerTurn]
    assert scores[winner] == 1
    assert [f.player for f in replay.frames[:-1]] == ["you", "agent"] * (len(replay.moves) // 2) + \
        ["you"] * (len(replay.moves) % 2)


# -- loading saved versions and the terminal ---------------------------------------------------
def test_loadPlayer_loads_the_best_version_with_the_runs_config(run_folder, tiny_cfg):
    player = play.loadPlayer(run_folder=run_folder, sims=3)
    saved = storage.load_model(storage.model_path(run_folder, 3))
    assert isinstance(player, Agent) and player.MCTSsimulations == 3
    assert player.config == tiny_cfg
    assert all(np.array_equal(a, b) for a, b in zip(player.model.model.get_weights(), saved.get_weights()))
    assert play.loadPlayer(1, run_folder).MCTSsimulations == tiny_cfg.MCTS_SIMS  # PLAY_SIMS 0: MCTS_SIMS
    assert storage.saved_versions(run_folder) == [1, 3]
    storage.write_text(run_folder / "config.json", tiny_cfg.replace(PLAY_SIMS=tiny_cfg.MCTS_SIMS + 5).to_json())
    assert play.loadPlayer(1, run_folder).MCTSsimulations == tiny_cfg.MCTS_SIMS + 5
    assert play.loadPlayer(1, run_folder, sims=2).MCTSsimulations == 2
    assert play.loadPlayer(1, run_folder).config.ROOT_SEARCH == tiny_cfg.ROOT_SEARCH == "puct"  # PLAY_ROOT_SEARCH ""
    storage.write_text(run_folder / "config.json", tiny_cfg.replace(PLAY_ROOT_SEARCH="gumbel").to_json())
    player = play.loadPlayer(1, run_folder, sims=2)
    assert player.config.ROOT_SEARCH == "gumbel" and player.MCTSsimulations == 2
    assert player.config == tiny_cfg.replace(PLAY_ROOT_SEARCH="gumbel", ROOT_SEARCH="gumbel")
    storage.write_text(run_folder / "config.json", tiny_cfg.replace(PLAY_CPUCT=2.5).to_json())
    player = play.loadPlayer(1, run_folder)
    assert player.cpuct == player.config.CPUCT == 2.5 and tiny_cfg.CPUCT == 1.0
    assert player.moveSeconds == 0  # PLAY_MOVE_SECONDS 0: no limit
    storage.write_text(run_folder / "config.json", tiny_cfg.replace(PLAY_MOVE_SECONDS=0.8).to_json())
    player = play.loadPlayer(1, run_folder)
    assert player.moveSeconds == 0.8 and play.Match(player).agent.moveSeconds == 0.8


def test_loadPlayer_names_the_saved_versions_when_one_is_missing(run_folder):
    with pytest.raises(ValueError, match=r"no saved version 2; saved versions: 1, 3 \(or 0"):
        play.loadPlayer(2, run_folder)
    with pytest.raises(ValueError, match="version must be 0 .* got -1: -1 is a human"):
        play.loadPlayer(-1, run_folder)
    with pytest.raises(ValueError, match="version must be 0 .* got '777'$"):
        play.loadPlayer("777", run_folder)
    with pytest.raises(ValueError, match="version must be 0 .* got -5$"):
        play.loadPlayer(-5, run_folder)
    with pytest.raises(ValueError, match="sims must be a positive"):
        play.loadPlayer(1, run_folder, sims=0)


def test_loadPlayer_without_a_run_says_so_and_version_0_still_plays(tmp_path, tiny_cfg):
    said = []  # no run there: the shipped agent plays (see test_shipped), and that is said
    play.loadPlayer(run_folder=tmp_path / "nothing", cfg=tiny_cfg, say=said.append)
    assert len(said) == 1 and "shipped agent" in said[0]
    untrained = play.loadPlayer(0, tmp_path / "nothing", sims=2, cfg=tiny_cfg)
    assert untrained.MCTSsimulations == 2 and untrained.config == tiny_cfg


def test_terminal_entry_point_plays_a_game(run_folder):
    human = Script(cycling_columns())
    match = play.main(["--run-folder", str(run_folder), "--sims", "2", "--second"],
                      human.input_fn, human.output_fn)
    assert match.over and match.human == -1 and match.agent.MCTSsimulations == 2
    assert human.said[0] == "Playing version best with 2 simulations per move."


def test_terminal_entry_point_ends_on_ctrl_c_with_a_line_not_a_traceback(run_folder, capsys):
    human = Script(["4", KeyboardInterrupt()])
    with pytest.raises(SystemExit) as exit_:
        play.main(["--run-folder", str(run_folder), "--sims", "2"], human.input_fn, human.output_fn)
    assert exit_.value.code == 130 and "Interrupted: the game was left unfinished." in capsys.readouterr().err


def test_terminal_entry_point_names_a_missing_version(run_folder, capsys):
    with pytest.raises(SystemExit) as exit_:
        play.main(["--run-folder", str(run_folder), "--version", "7"])
    assert exit_.value.code == 2
    assert "saved versions: 1, 3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        play.main(["--run-folder", str(run_folder), "--version", "-5"])
    assert "got -5" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        play.main(["--sims", "0"])
    assert "must be a positive number" in capsys.readouterr().err


# -- the clickable board while the agent thinks -------------------------------------------------
def gated(agent: Agent, release: threading.Event) -> None:
    """Make every game copy of `agent` wait for `release` before each network call, so
    that a test acts while the agent's search is under way."""
    make = agent.forGame

    def forGame(seed):
        copy = make(seed)
        evaluate = copy.evaluateStates
        copy.evaluateStates = lambda states: (release.wait(30), evaluate(states))[1]
        return copy
    agent.forGame = forGame


def test_widget_draws_the_human_disc_at_once_and_ignores_clicks_while_the_agent_thinks(agent):
    release = threading.Event()
    gated(agent, release)
    game = play.WidgetGame(agent, human_first=True, sims=4)
    game.buttons[3].click()
    assert game.state.stones == 1 and game.board.value.count('data-disc="X"') == 1  # drawn before the reply
    assert "thinking" in game.status.value
    assert all(button.disabled for button in (*game.buttons, game.resign_button, game.new_button))
    for button in (game.buttons[3], game.buttons[2], game.new_button, game.resign_button):
        button.click()  # ignored, never queued
    release.set()
    game.wait()
    assert game.match.moves[0] == "4" and game.state.stones == 2 and not game.match.resigned
    assert game.board.value.count('data-disc="O"') == 1 and "thinking" not in game.status.value
    assert not any(button.disabled for button in (*game.buttons, game.resign_button, game.new_button))
    game.buttons[2].click()
    game.wait()
    assert game.state.stones == 4 and game.match.moves[2] == "3"


def test_widget_new_game_while_the_agent_opens_is_ignored(agent):
    release = threading.Event()
    gated(agent, release)
    game = play.WidgetGame(agent, human_first=False, sims=4)
    opening = game.match
    assert game.state.stones == 0 and "thinking" in game.status.value and game.new_button.disabled
    game.new_button.click()
    game.buttons[0].click()
    release.set()
    game.wait()
    assert game.match is opening and game.state.stones == 1 and game.match.humanToMove


def test_widget_shows_a_failed_search_and_wait_raises_it(agent):
    def broken(seed):
        copy = Agent.forGame(agent, seed)
        copy.evaluateStates = lambda states: 1 / 0
        return copy
    agent.forGame = broken
    game = play.WidgetGame(agent, human_first=True, sims=4)
    game.buttons[3].click()
    with pytest.raises(ZeroDivisionError):
        game.wait()
    assert "search failed: ZeroDivisionError" in game.status.value and not game.buttons[0].disabled


# -- the typed game of playMatchesBetweenVersions --------------------------------------------------
def test_versions_against_a_human_search_the_runs_play_simulations(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    storage.write_text(folder / "config.json", tiny_cfg.replace(PLAY_SIMS=7).to_json())
    storage.save_model(Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42).model, storage.model_path(folder, 1))
    entries, said = cycling_columns(), []
    funcs.playMatchesBetweenVersions(Game(), None, 1, -1, 1, lg.logger_tourney, 0, goes_first=1,
                                     cfg=tiny_cfg.replace(RUN_FOLDER=str(folder)), input_fn=lambda _: next(entries),
                                     output_fn=said.append)
    agent_lines = [line for text in said for line in text.splitlines() if line.startswith("plays column ")]
    assert agent_lines and all("(7 simulations this move" in line for line in agent_lines)


def test_versions_against_a_human_search_with_the_runs_play_root_search(tmp_path, tiny_cfg, monkeypatch):
    folder = tmp_path / "run"
    storage.write_text(folder / "config.json", tiny_cfg.replace(PLAY_ROOT_SEARCH="gumbel").to_json())
    storage.save_model(Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42).model, storage.model_path(folder, 1))
    made, versionPlayer = [], funcs.versionPlayer
    monkeypatch.setattr(funcs, "versionPlayer", lambda *args: made.append(versionPlayer(*args)) or made[-1])
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder))
    entries = cycling_columns()
    funcs.playMatchesBetweenVersions(Game(), None, 1, -1, 1, lg.logger_tourney, 0, goes_first=1, cfg=cfg,
                                     input_fn=lambda _: next(entries), output_fn=lambda text: None)
    assert made[0].config.ROOT_SEARCH == "gumbel"  # the agent a person plays
    made.clear()
    funcs.playMatchesBetweenVersions(Game(), None, 1, 1, 1, lg.logger_tourney, 0, cfg=cfg)
    assert [player.config.ROOT_SEARCH for player in made] == ["puct", "puct"]  # two networks: the run's own


def recordingMatches(monkeypatch) -> list:
    """The Matches play.typedGame drives from now on, in order."""
    matches, typed = [], play.typedGame

    def recording(match, *rest):
        matches.append(match)
        return typed(match, *rest)
    monkeypatch.setattr(play, "typedGame", recording)
    return matches


def test_the_tutorials_call_with_a_human_is_the_typed_game_of_play(run_folder, tiny_cfg, logging_to, monkeypatch,
                                                                   capsys):
    """playMatchesBetweenVersions(env, run_version, -1, version, EPISODES, logger, 0),
    the tutorial's call, with columns typed at the builtin input: each game is
    play.typedGame's (its side line, boards and prompts, the agent's thinking, the
    final board and Match.outcome's result line, printed), scored and logged as a
    match's games are."""
    entries = cycling_columns()
    monkeypatch.setattr("builtins.input", lambda prompt: next(entries))  # replaced after agent.py was imported
    matches = recordingMatches(monkeypatch)
    log = logging_to(tiny_cfg, "tourney")
    cfg = tiny_cfg.replace(RUN_FOLDER=str(run_folder))
    try:
        scores, _, points, _ = funcs.playMatchesBetweenVersions(Game(), None, -1, 3, 2, lg.logger_tourney, 0, cfg=cfg)
    finally:
        lg.disable_all()
    printed = capsys.readouterr().out
    games = printed.split("You play ")[1:]
    assert len(matches) == len(games) == 2 and [match.human for match in matches] == [1, -1]  # colours alternate
    for match, text in zip(matches, games):
        assert match.over and not match.resigned
        assert text.startswith(f"{boards.sideText(match.human)}. Type a column 1-7, q to resign.\n")
        assert text.endswith(f"{boards.boardText(match.state, match.last_action)}\n{match.outcome()}\n")
        assert match.outcome() in (f"You win in {len(match.moves)} moves!",
                                   f"The agent wins in {len(match.moves)} moves.",
                                   f"Draw: the board is full after {len(match.moves)} moves.")
        assert text.count("plays column ") == sum(1 for k in range(len(match.moves)) if (k % 2 == 0) != (match.human == 1))
    winners = [{"human": "player1", "agent": "player2", None: "drawn"}[match.winner] for match in matches]
    assert scores == {name: winners.count(name) for name in ("player1", "drawn", "player2")}
    assert points["player1"] == [1 if w == "player1" else -1 if w == "player2" else 0 for w in winners]
    assert [game.moves for game in gamesFromLog(log)] == [match.moves for match in matches]


def test_a_human_resigning_in_a_match_loses_it_and_the_log_says_so(run_folder, tiny_cfg, logging_to):
    said, log = [], logging_to(tiny_cfg, "tourney")
    try:
        scores, _, points, _ = funcs.playMatchesBetweenVersions(
            Game(), None, 3, -1, 1, lg.logger_tourney, 0, goes_first=-1, cfg=tiny_cfg.replace(RUN_FOLDER=str(run_folder)),
            input_fn=lambda _, typed=iter(["4", "q"]): next(typed), output_fn=said.append)
    finally:
        lg.disable_all()
    assert scores == {"player1": 1, "drawn": 0, "player2": 0} and points == {"player1": [1], "player2": [-1]}
    assert said[-1] == "You resigned after 2 moves: the agent wins."
    assert "game 1: player2 resigns" in log.read_text()


def test_a_human_plays_an_agent_only(tiny_cfg):
    user = User("you", 84, 42, lambda _: "4", print)
    with pytest.raises(ValueError, match="a human .* plays against an agent .* got User and User"):
        funcs.playMatches(user, user, 1, lg.logger_tourney, 0)


def test_the_principal_variation_starts_with_the_move_gumbel_played(tiny_cfg, tiny_model):
    """Gumbel's root search plays the winner of its sequential halving, which need not
    be the most visited move: the variation shown starts with the move played."""
    cfg = tiny_cfg.replace(ROOT_SEARCH="gumbel", GUMBEL_SAMPLED_ACTIONS=16)
    agent = Agent("agent", 84, 42, 32, cfg.CPUCT, tiny_model, cfg)
    inspections = [play.inspectMove(agent, moves) for moves in ("", "4", "44", "1234", "7", "4455", "123")]
    assert all(inspection.principal_variation[0] == inspection.column for inspection in inspections)
    assert all(len(inspection.principal_variation) > 1 for inspection in inspections)
    played_less_visited = [inspection for inspection in inspections
                           if max(row["N"] for row in inspection.table)
                           > next(row["N"] for row in inspection.table if row["column"] == inspection.column)]
    assert played_less_visited  # the case this is about occurs among these positions
    log = inspections[0].log  # the log tells how the halving chose
    assert "Gumbel root search: 32 simulations among 7 of 7 moves" in log
    assert log.count("halving phase") == 3 and "halving phase 3 of 3" in log
    assert log.rstrip().endswith(f"Gumbel root search chooses column {inspections[0].column}")


def test_terminal_entry_point_says_through_its_output_that_it_plays_the_shipped_agent(tmp_path):
    human = Script(["q"])
    play.main(["--run-folder", str(tmp_path / "fresh"), "--sims", "2"], human.input_fn, human.output_fn)
    assert "playing the shipped agent" in human.said[0]
