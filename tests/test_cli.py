"""The terminal commands, run as a person runs them: ``python -m funcs`` and
``python -m play`` answer --help and wrong arguments without importing TensorFlow,
and print none of TensorFlow's start-up notices."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cli
import runs

ROOT = Path(__file__).resolve().parent.parent
NOTICES = ("oneDNN custom operations", "This TensorFlow binary is optimized", "absl::InitializeLog",
           "port.cc:", "cpu_feature_guard", "I0000 ")
"""What TensorFlow's C++ layer writes at start-up (and each of its log lines starts with)."""
ANSWERED = """
import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__")
except SystemExit as exit_:
    print("exit", exit_.code)
print("imported:", *[name for name in ("tensorflow", "keras") if name in sys.modules])
"""
"""A child that runs a command (`python -m <module> args...`) and says how it exited
and which heavy modules it imported."""


def command(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`python *args` from the project folder, in the environment a terminal gives
    (not the one the tests' imports set up)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("module, usage", [("funcs", "usage: python -m funcs [-h] [--iterations ITERATIONS]"),
                                           ("play", "usage: python -m play [-h] [--version VERSION]")])
def test_help_answers_without_importing_tensorflow(module, usage):
    done = command("-c", ANSWERED, module, "--help")
    assert done.stdout.startswith(usage) and "exit 0\nimported:\n" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("module, args, message", [
    ("funcs", ["--iterations", "0"], "argument --iterations: must be a positive number, got 0"),
    ("funcs", ["--hours", "-1"], "argument --hours: must be a positive number, got -1"),
    ("funcs", ["--preset", "weak"], "argument --preset: invalid choice: 'weak'"),
    ("play", ["--sims", "x"], "argument --sims: invalid int value: 'x'"),
])
def test_a_wrong_argument_is_refused_without_importing_tensorflow(module, args, message):
    done = command("-c", ANSWERED, module, *args)
    assert done.stdout == "exit 2\nimported:\n"
    assert message in done.stderr and not any(notice in done.stderr for notice in NOTICES)


def test_training_in_a_terminal_prints_no_tensorflow_notices(tmp_path, tiny_cfg):
    folder = tmp_path / "run"
    runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(folder), EPISODES=2, MCTS_SIMS=4, MIN_MEMORY_SIZE=32),
                 say=lambda _: None)
    done = command("-m", "funcs", "--iterations", "1", "--run-folder", str(folder), "--no-progress")
    assert done.returncode == 0 and "iteration 1: " in done.stdout
    assert not any(notice in done.stdout + done.stderr for notice in NOTICES)
    assert done.stderr == ""


def test_playing_in_a_terminal_prints_no_tensorflow_notices(run_folder):
    done = command("-m", "play", "--run-folder", str(run_folder), "--sims", "2", stdin="4\nq\n")
    assert done.returncode == 0 and done.stdout.startswith("Playing version best with 2 simulations per move.\n")
    assert done.stdout.endswith("You resigned after 2 moves: the agent wins.\n")
    assert not any(notice in done.stdout + done.stderr for notice in NOTICES)
    assert done.stderr == ""


def test_branch_settings_are_read_as_json_or_as_text():
    args = cli.TRAINING.parse_args(["--branch-from", "a", "--run-folder", "b", "--set", "VALUE_HEAD=wdl",
                                    "--set", "MCTS_SIMS=64", "--set", "LEARNING_RATE_SCHEDULE=[[10, 0.1]]"])
    assert args.set == [("VALUE_HEAD", "wdl"), ("MCTS_SIMS", 64), ("LEARNING_RATE_SCHEDULE", [[10, 0.1]])]
    done = command("-c", ANSWERED, "funcs", "--set", "MCTS_SIMS")
    assert done.stdout == "exit 2\nimported:\n" and "expected NAME=VALUE, got 'MCTS_SIMS'" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--branch-network", "small.keras"], "--branch-network makes a branch: give --branch-from too"),
    (["--branch-from", "run"], "--branch-from needs --run-folder, the new folder of the branch"),
])
def test_a_branch_without_its_source_or_folder_is_refused(args, message):
    done = command("-m", "funcs", "--iterations", "1", *args)
    assert done.returncode == 1 and message in done.stderr


def test_a_branch_is_made_and_trained_from_the_terminal(tmp_path, tiny_cfg):
    source = tmp_path / "run"
    runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(source), EPISODES=2, MCTS_SIMS=4, MIN_MEMORY_SIZE=32),
                 say=lambda _: None)
    done = command("-m", "funcs", "--branch-from", str(source), "--run-folder", str(tmp_path / "wdl"),
                   "--set", "VALUE_HEAD=wdl", "--iterations", "1", "--no-progress")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"Branched {source} at iteration 0 (best version 1) into {tmp_path / 'wdl'} with "
                                  "{'VALUE_HEAD': 'wdl'}.\nResumed run in ")
    assert "already holds a run" not in done.stdout and "iteration 1: " in done.stdout
    assert runs.runConfig(tmp_path / "wdl").VALUE_HEAD == "wdl" and runs.readCheckpoint(tmp_path / "wdl")["iteration"] == 1
    again = command("-m", "funcs", "--branch-from", str(source), "--run-folder", str(tmp_path / "wdl"),
                    "--iterations", "1")
    assert again.returncode == 1 and "to go on training a branch, train in its folder without --branch-from" in \
        again.stderr


def test_a_new_run_starts_with_the_set_changes_and_a_run_there_keeps_its_own(tmp_path, tiny_cfg):
    tiny = [f"--set={name}={json.dumps(getattr(tiny_cfg, name))}" for name in
            ("HIDDEN_CNN_LAYERS", "EPISODES", "EVAL_EPISODES", "TURNS_UNTIL_TAU0", "MEMORY_SIZE", "BATCH_SIZE",
             "FIT_BATCH_SIZE", "TRAINING_LOOPS", "EVAL_POSITIONS", "EVAL_SIMS")]
    folder = tmp_path / "colour"
    done = command("-m", "funcs", "--preset", "strong", "--run-folder", str(folder), "--set", "COLOUR_PLANE=true",
                   "--set", "MCTS_SIMS=4", "--set", "MIN_MEMORY_SIZE=32", *tiny, "--iterations", "1", "--no-progress")
    assert done.returncode == 0 and done.stderr == "" and "iteration 1: " in done.stdout
    started = runs.runConfig(folder)
    assert started.COLOUR_PLANE and started.MCTS_SIMS == 4 and started.ROOT_SEARCH == "gumbel"  # the preset's
    assert started.HIDDEN_CNN_LAYERS == tiny_cfg.HIDDEN_CNN_LAYERS and runs.readCheckpoint(folder)["iteration"] == 1
    again = command("-m", "funcs", "--run-folder", str(folder), "--set", "MCTS_SIMS=8", "--iterations", "1")
    assert again.returncode == 1 and f"{folder} already holds a run, which keeps its own config.json" in again.stderr
    fixed = command("-m", "funcs", "--run-folder", str(tmp_path / "new"), "--set", "WORKERS=2", "--iterations", "1")
    assert fixed.returncode == 1 and "WORKERS cannot be set with --set" in fixed.stderr
    assert runs.runConfig(folder).MCTS_SIMS == 4 and runs.readCheckpoint(folder)["iteration"] == 1
    assert not (tmp_path / "new").exists()


def refusal(parser, args: list[str], capsys) -> str:
    """The error `parser` gives for `args`, which it must refuse."""
    with pytest.raises(SystemExit):
        parser.parse_args(args)
    return capsys.readouterr().err


def test_an_output_path_is_refused_where_it_could_not_be_written(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=cli.outputPath())
    parser.add_argument("--plot", type=cli.outputPath(suffixes=(".png", ".svg")))
    parser.add_argument("--folder", type=cli.outputPath(folder=True))
    (tmp_path / "held.txt").write_text("kept")
    assert f"argument --out: {tmp_path} is a folder: give the path of a file" in refusal(
        parser, ["--out", str(tmp_path)], capsys)
    assert f"argument --out: {tmp_path / 'held.txt'} is a file: {tmp_path / 'held.txt' / 'x.json'} cannot be " \
           "written under it" in refusal(parser, ["--out", str(tmp_path / "held.txt" / "x.json")], capsys)
    assert f"argument --plot: {tmp_path / 'curve'} must end with one of .png, .svg" in refusal(
        parser, ["--plot", str(tmp_path / "curve")], capsys)
    assert f"argument --folder: {tmp_path / 'held.txt'} is a file: give the path of a folder" in refusal(
        parser, ["--folder", str(tmp_path / "held.txt")], capsys)
    args = parser.parse_args(["--out", str(tmp_path / "held.txt"), "--plot", str(tmp_path / "new" / "c.SVG"),
                              "--folder", str(tmp_path)])
    assert (args.out, args.plot, args.folder) == (tmp_path / "held.txt", tmp_path / "new" / "c.SVG", tmp_path)


def test_a_run_folder_must_be_a_folder_that_exists(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-folder", type=cli.runFolder)
    (tmp_path / "file").write_text("")
    assert f"argument --run-folder: no folder {tmp_path / 'nowhere'}" in refusal(
        parser, ["--run-folder", str(tmp_path / "nowhere")], capsys)
    assert f"argument --run-folder: {tmp_path / 'file'} is a file, not a run folder" in refusal(
        parser, ["--run-folder", str(tmp_path / "file")], capsys)
    assert parser.parse_args(["--run-folder", str(tmp_path)]).run_folder == tmp_path
