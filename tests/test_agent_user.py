"""The human player's input: parseColumn, askForColumn (no network needed)."""

import pytest

from agent import Resign, askForColumn, parseColumn
from game import GameState


def scripted(entries):
    """An input_fn answering the given entries in turn (an exception instance is
    raised instead of answered); records the prompts it was shown."""
    answers = iter(entries)
    prompts = []

    def input_fn(prompt):
        prompts.append(prompt)
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    input_fn.prompts = prompts
    return input_fn


@pytest.mark.parametrize("entry, words", [
    ("abc", ["'abc'", "not a number"]),
    ("0", ["no column 0", "1 to 7"]),
    ("8", ["no column 8", "1 to 7"]),
    ("-3", ["no column -3"]),
    ("", ["type a column number"]),
    ("   ", ["type a column number"]),
    ("2.5", ["'2.5'", "not a number"]),
])
def test_parseColumn_refuses_bad_entries_with_a_message_naming_the_problem(entry, words):
    action, message = parseColumn(entry, GameState.initial())
    assert action is None
    for word in words:
        assert word in message


def test_parseColumn_refuses_a_full_column_naming_it():
    state = GameState.fromMoves("333333")
    action, message = parseColumn("3", state)
    assert action is None and "Column 3 is full" in message
    assert parseColumn("4", state) == (state.actionForColumn(3), None)


def test_parseColumn_accepts_columns_1_to_7_with_spaces():
    state = GameState.fromMoves("44")
    for column in range(1, 8):
        assert parseColumn(f" {column}\n", state) == (state.actionForColumn(column - 1), None)


def test_parseColumn_after_the_game_is_over_says_so():
    won = GameState.fromMoves("1212121")
    assert won.isEndGame
    action, message = parseColumn("5", won)
    assert action is None and "game is over" in message


def test_askForColumn_explains_every_bad_entry_then_returns_the_good_one():
    state = GameState.fromMoves("111111")
    before = state.id
    messages = []
    input_fn = scripted(["x", "0", "8", "", "1", "5"])
    action = askForColumn(state, input_fn, messages.append)
    assert action == state.actionForColumn(4)
    assert len(messages) == 5
    assert "'x' is not a number" in messages[0]
    assert "no column 0" in messages[1]
    assert "no column 8" in messages[2]
    assert "type a column number" in messages[3]
    assert "Column 1 is full" in messages[4]
    assert len(input_fn.prompts) == 6 and "1-7" in input_fn.prompts[0]
    assert state.id == before


@pytest.mark.parametrize("entry", ["q", "Q", " quit ", "resign"])
def test_askForColumn_resigns_on_q(entry):
    messages = []
    with pytest.raises(Resign):
        askForColumn(GameState.initial(), scripted(["9", entry, "4"]), messages.append)
    assert len(messages) == 1 and "no column 9" in messages[0]


def test_askForColumn_resigns_when_the_input_ends():
    messages = []
    with pytest.raises(Resign):
        askForColumn(GameState.initial(), scripted([EOFError()]), messages.append)
    assert messages == ["Input closed: you resign."]


def test_askForColumn_refuses_a_finished_game():
    with pytest.raises(ValueError, match="game is over"):
        askForColumn(GameState.fromMoves("1212121"), scripted(["3"]), print)
