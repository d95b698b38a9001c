"""A run folder's life (runs.py): where training starts from, the player a version
makes, and what an iteration writes."""

import json

import numpy as np
import pytest

import runs
import storage
from agent import Agent, User
from config import Config
from game import Game
from memory import Memory

ENV = Game()


def test_versionPlayer_resolves_every_kind_of_version(run_folder, tiny_cfg):
    other = Config()  # the run's own config.json wins over the config passed in
    best = runs.versionPlayer("best", ENV, other, run_folder, None, mcts_simulations=3)
    saved = storage.load_model(storage.model_path(run_folder, 3))
    assert isinstance(best, Agent) and best.config == tiny_cfg and best.MCTSsimulations == 3
    assert all(np.array_equal(a, b) for a, b in zip(best.model.model.get_weights(), saved.get_weights()))
    assert runs.versionPlayer("one", ENV, other, run_folder, 1).MCTSsimulations == tiny_cfg.MCTS_SIMS
    assert isinstance(runs.versionPlayer("untrained", ENV, other, run_folder, 0), Agent)
    human = runs.versionPlayer("you", ENV, other, run_folder, -1)
    assert isinstance(human, User) and human.input_fn is None


def test_versionPlayer_refuses_what_the_folder_does_not_hold(run_folder, tmp_path, tiny_cfg):
    with pytest.raises(ValueError, match=r"no saved version 2; saved versions: 1, 3 \(or 0"):
        runs.versionPlayer("p", ENV, tiny_cfg, run_folder, 2)
    for bad in (-2, 1.5, True):
        with pytest.raises(ValueError, match="version must be -1 \\(a human\\), 0"):
            runs.versionPlayer("p", ENV, tiny_cfg, run_folder, bad)
    with pytest.raises(ValueError, match="sims must be a positive number"):
        runs.versionPlayer("p", ENV, tiny_cfg, run_folder, 1, mcts_simulations=0)
    with pytest.raises(storage.RunFileError, match="holds no run"):
        runs.versionPlayer("p", ENV, tiny_cfg, tmp_path / "empty", None)
    assert runs.savedVersionsList(tmp_path / "empty") == "none" and runs.savedVersionsList(run_folder) == "1, 3"


def test_runFolder_is_the_live_folder_or_an_archived_run(tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "live"), RUN_ARCHIVE_FOLDER=str(tmp_path / "archive"))
    assert runs.runFolder(cfg) == tmp_path / "live"
    assert runs.runFolder(cfg, 7) == tmp_path / "archive" / "connect4" / "run0007"


def test_startingPoint_names_the_config_training_will_use(run_folder, tiny_cfg, tmp_path):
    archive = tmp_path / "archive"
    storage.write_text(storage.config_path(archive / "connect4" / "run0002"), tiny_cfg.replace(EPISODES=7).to_json())
    fresh = Config(RUN_FOLDER=str(tmp_path / "fresh"), RUN_ARCHIVE_FOLDER=str(archive))
    assert runs.startingPoint(fresh) == ("new", fresh)
    start, cfg = runs.startingPoint(fresh, initial_run=2)
    assert start == "archive" and cfg.EPISODES == 7 and cfg.path("RUN_FOLDER") == tmp_path / "fresh"
    start, cfg = runs.startingPoint(Config(RUN_FOLDER=str(run_folder)), initial_run=2)
    assert start == "resume" and cfg == tiny_cfg.replace(RUN_FOLDER=str(run_folder))


def test_an_iteration_is_recorded_row_then_checkpoint_and_old_snapshots_go(tiny_cfg, tmp_path):
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), MEMORY_SNAPSHOTS_KEPT=2)
    run = runs.openRun(cfg, say=lambda _: None)
    for iteration in (1, 2, 3):
        run.saveMemory(iteration)
        assert runs.readCheckpoint(run.folder)["memory_iteration"] == (iteration - 1 or None)
        run.finishIteration(iteration, {"iteration": iteration, "seconds": {"selfplay": 1.0}})
        assert runs.readCheckpoint(run.folder) == {"iteration": iteration, "best_player_version": 1,
                                                   "memory_iteration": iteration}
    assert storage.memory_snapshots(run.folder) == [2, 3]
    assert [row["iteration"] for row in runs.readMetrics(run.folder)] == [1, 2, 3]
    assert isinstance(Memory.load(storage.memory_path(run.folder, 3), cfg.MEMORY_SIZE), Memory)


def test_a_promotion_is_saved_and_checkpointed_at_once(tiny_cfg, tmp_path):
    run = runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run")), say=lambda _: None)
    run.current_NN.model.set_weights([w + 1 for w in run.current_NN.model.get_weights()])
    run.saveCurrentNetwork()
    run.promote()
    assert run.best_player_version == 2 and runs.readCheckpoint(run.folder)["best_player_version"] == 2
    assert storage.saved_versions(run.folder) == [1, 2]
    for path in (storage.model_path(run.folder, 2), storage.current_model_path(run.folder)):
        saved = storage.load_model(path).get_weights()
        assert all(np.array_equal(a, b) for a, b in zip(saved, run.current_NN.model.get_weights()))


@pytest.mark.parametrize(("values", "message"), [
    ([1, 2], r"it must hold a JSON object, got \[1, 2\]"),
    ({"best_player_version": 1}, "iteration is missing"),
    ({"iteration": -1, "best_player_version": 1}, "iteration must be an integer >= 0, got -1"),
    ({"iteration": 3, "best_player_version": 0}, "best_player_version must be an integer >= 1, got 0"),
    ({"iteration": 3, "best_player_version": True}, "best_player_version must be an integer >= 1, got True"),
    ({"iteration": 3, "best_player_version": 2, "memory_iteration": "3"},
     "memory_iteration must be an integer >= 0 or null, got '3'"),
])
def test_an_invalid_checkpoint_names_the_wrong_entry(tmp_path, values, message):
    storage.checkpoint_path(tmp_path).write_text(json.dumps(values))
    with pytest.raises(storage.RunFileError, match=f"checkpoint file .* is invalid: {message}; restore it"):
        runs.readCheckpoint(tmp_path)
    storage.checkpoint_path(tmp_path).write_text(json.dumps({"iteration": 3, "best_player_version": 2}))
    assert runs.readCheckpoint(tmp_path)["best_player_version"] == 2


@pytest.mark.parametrize("line", ['{"iteration": 2}', '[2]', '{"iteration": "2", "seconds": {}}'])
def test_a_metrics_row_that_is_not_one_is_named_with_the_way_out(tmp_path, line):
    folder = tmp_path / "run"
    storage.write_text(storage.metrics_path(folder), '{"iteration": 1, "seconds": {"selfplay": 3.0}}\n' + line + "\n")
    with pytest.raises(storage.RunFileError, match=r"metrics.jsonl: row 2 is not a metrics row; delete that line"):
        runs.readMetrics(folder)
