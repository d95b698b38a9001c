"""A run folder's life (runs.py): where training starts from, the player a version
makes, and what an iteration writes."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import branches
import funcs
import loggers
import runs
import shipping
import storage
from agent import Agent, User
from config import PROJECT_ROOT, Config, ConfigError
from game import Game, GameState
from helpers import randomPositions
from memory import Memory
from model import Residual_CNN

ENV = Game()


def test_versionPlayer_resolves_every_kind_of_version(run_folder, tiny_cfg):
    other = Config()  # the run's own config.json wins over the config passed in
    best = runs.versionPlayer("best", ENV, other, run_folder, None, mcts_simulations=3)
    saved = storage.load_model(storage.model_path(run_folder, 3))
    assert isinstance(best, Agent) and best.config == tiny_cfg and best.MCTSsimulations == 3
    assert all(np.array_equal(a, b) for a, b in zip(best.model.model.get_weights(), saved.get_weights()))
    assert runs.versionPlayer("one", ENV, other, run_folder, 1).MCTSsimulations == tiny_cfg.MCTS_SIMS
    untrained = runs.versionPlayer("untrained", ENV, other, run_folder, 0)
    assert isinstance(untrained, Agent)
    assert not all(np.array_equal(a, b) for a, b in zip(untrained.model.model.get_weights(), saved.get_weights()))
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
    storage.checkpoint_path(run_folder).unlink()
    with pytest.raises(storage.RunFileError, match=r"without its checkpoint.json: training in it rebuilds .*: 1, 3"):
        runs.versionPlayer("p", ENV, tiny_cfg, run_folder, None)
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
    state = GameState.fromMoves("44")
    run.memory.commit_stmemory(Game.identities, state, np.eye(42)[state.actionForColumn(3)], 0.25)
    run.memory.setResult(state, -1.0)
    run.memory.commit_ltmemory()
    for iteration in (1, 2, 3):
        run.saveMemory(iteration)
        assert runs.readCheckpoint(run.folder)["memory_iteration"] == (iteration - 1 or None)
        run.finishIteration(iteration, {"iteration": iteration, "best_player_version": 1, "seconds": {"selfplay": 1.0}})
        assert runs.readCheckpoint(run.folder) == {"iteration": iteration, "best_player_version": 1,
                                                   "memory_iteration": iteration}
    assert storage.memory_snapshots(run.folder) == [2, 3]
    assert [row["iteration"] for row in runs.readMetrics(run.folder)] == [1, 2, 3]
    loaded = Memory.load(storage.memory_path(run.folder, 3), cfg.MEMORY_SIZE).ltmemory
    assert [(row["id"], row["value"], row["q"]) for row in loaded] == [(state.id, -1.0, 0.25),
                                                                       (state.mirrored().id, -1.0, 0.25)]


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
    ({"best_player_version": 1, "memory_iteration": None}, "iteration is missing"),
    ({"iteration": 3, "best_player_version": 1}, "memory_iteration is missing"),
    ({"iteration": -1, "best_player_version": 1, "memory_iteration": None},
     "iteration must be an integer >= 0, got -1"),
    ({"iteration": 3, "best_player_version": 0, "memory_iteration": 3},
     "best_player_version must be an integer >= 1, got 0"),
    ({"iteration": 3, "best_player_version": True, "memory_iteration": 3},
     "best_player_version must be an integer >= 1, got True"),
    ({"iteration": 3, "best_player_version": 2, "memory_iteration": "3"},
     "memory_iteration must be an integer >= 0 or null, got '3'"),
])
def test_an_invalid_checkpoint_names_the_wrong_entry(tmp_path, values, message):
    storage.checkpoint_path(tmp_path).write_text(json.dumps(values))
    with pytest.raises(storage.RunFileError, match=f"checkpoint file .* is invalid: {message}; restore it"):
        runs.readCheckpoint(tmp_path)
    storage.checkpoint_path(tmp_path).write_text(json.dumps({"iteration": 3, "best_player_version": 2,
                                                             "memory_iteration": None}))
    assert runs.readCheckpoint(tmp_path)["best_player_version"] == 2


@pytest.mark.parametrize("line", ['{"iteration": 2, "best_player_version": 1}', '[2]',
                                  '{"iteration": "2", "best_player_version": 1, "seconds": {}}',
                                  '{"iteration": 2, "seconds": {}}',
                                  '{"iteration": 2, "best_player_version": 0, "seconds": {}}',
                                  '{"iteration": 2, "best_player_version": 1, "seconds": {"selfplay": "3"}}',
                                  '{"iteration": 2, "best_player_version": 1, "seconds": {"selfplay": NaN}}'])
def test_a_metrics_row_that_is_not_one_is_named_with_the_way_out(tmp_path, line):
    folder = tmp_path / "run"
    storage.write_text(storage.metrics_path(folder),
                       '{"iteration": 1, "best_player_version": 1, "seconds": {"selfplay": 3.0}}\n' + line + "\n")
    with pytest.raises(storage.RunFileError, match=r"metrics.jsonl: row 2 is not a metrics row; delete that line"):
        runs.readMetrics(folder)


# -- a run folder without its checkpoint: rebuilt from what it holds, or refused ---------
@pytest.fixture(scope="module")
def trained_run(tiny_cfg, tmp_path_factory):
    """A real tiny run of three iterations (memory snapshots of iterations 2 and 3)
    and its config; copy it (`runCopy`) before changing it."""
    folder = tmp_path_factory.mktemp("trained") / "run"
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, MIN_MEMORY_SIZE=32, EVAL_POSITIONS=0,
                           SCORING_THRESHOLD=0.5, MEMORY_SNAPSHOTS_KEPT=2, LOGGERS={})
    funcs.train(3, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder, cfg


def runCopy(trained_run, tmp_path) -> tuple[Path, Config]:
    """A copy of the trained run in tmp_path/run, and its config writing there."""
    folder, cfg = trained_run
    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(storage.LOCK_NAME))
    return copy, cfg.replace(RUN_FOLDER=str(copy))


def test_the_files_to_ship_are_refused_while_the_run_trains_or_a_record_is_damaged(trained_run, tmp_path, capsys):
    folder, _ = runCopy(trained_run, tmp_path)
    assert shipping.printShippedFiles(folder) is None
    assert capsys.readouterr().out.split() == [str(path) for path in shipping.shippedFiles(folder)]
    with storage.runLock(folder):
        assert "another process is training in" in shipping.printShippedFiles(folder)
    record = storage.whole_games_path(folder, 2, 8)
    storage.write_text(record, "{torn")
    assert f"whole-game record {record} is corrupt" in shipping.printShippedFiles(folder)
    assert "holds no run to ship" in shipping.printShippedFiles(tmp_path / "typo")
    assert not (tmp_path / "typo").exists() and capsys.readouterr().out == ""


def test_a_run_that_lost_its_checkpoint_is_rebuilt_and_goes_on_never_started_afresh(trained_run, tmp_path):
    folder, cfg = runCopy(trained_run, tmp_path)
    checkpoint = runs.readCheckpoint(folder)
    storage.checkpoint_path(folder).unlink()
    versions = {path: path.read_bytes() for path in (folder / "models").iterdir()}
    other = Config(RUN_FOLDER=str(folder), EPISODES=5)  # a preset's config: the folder's own wins
    said = []
    run = runs.openRun(other, say=said.append)
    assert run.cfg == cfg and run.iteration == 3 and run.memory_iteration == 3
    assert run.best_player_version == max(storage.saved_versions(folder))
    assert runs.readCheckpoint(folder) == checkpoint
    assert any("had no checkpoint.json: rebuilt it" in line and "3 iterations done" in line for line in said)
    assert {path: path.read_bytes() for path in (folder / "models").iterdir()} == versions
    rows = funcs.train(1, other, progress=False, say=lambda _: None)
    loggers.disable_all()
    assert rows[0]["iteration"] == 4 and [row["iteration"] for row in runs.readMetrics(folder)] == [1, 2, 3, 4]


def test_a_rebuild_sets_a_damaged_newest_version_aside_with_the_rows_that_name_it(trained_run, tmp_path):
    folder, cfg = runCopy(trained_run, tmp_path)
    best = runs.readCheckpoint(folder)["best_player_version"]
    storage.checkpoint_path(folder).unlink()
    storage.model_path(folder, best + 1).write_bytes(b"")  # a promotion whose file was emptied
    row = {**runs.readMetrics(folder)[-1], "iteration": 4, "best_player_version": best + 1}
    storage.append_line(storage.metrics_path(folder), json.dumps(row))
    later = storage.memory_path(folder, 4)
    shutil.copyfile(storage.memory_path(folder, 3), later)  # that iteration's snapshot, intact
    said = []
    run = runs.openRun(cfg, say=said.append)
    assert run.best_player_version == best and run.iteration == 3
    assert storage.saved_versions(folder)[-1] == best
    aside = storage.model_path(folder, best + 1).with_name(storage.model_name(best + 1) + ".damaged")
    assert aside.exists() and not storage.model_path(folder, best + 1).exists()
    assert any("is empty (0 bytes)" in line and aside.name in line for line in said)
    assert any("rows after iteration 3 name newer versions and are dropped" in line for line in said)
    assert not later.exists() and later.with_name(later.name + ".unrecorded").read_bytes() == \
        storage.memory_path(folder, 3).read_bytes()  # set aside, never overwritten by the iteration redone
    assert any("later memory snapshots are set aside, never overwritten: memory0004.npz.unrecorded" in line
               for line in said)
    assert [row["iteration"] for row in runs.readMetrics(folder)] == [1, 2, 3]


def test_without_metrics_a_rebuild_counts_iterations_by_the_newest_memory_snapshot(trained_run, tmp_path):
    folder, cfg = runCopy(trained_run, tmp_path)
    storage.checkpoint_path(folder).unlink()
    storage.metrics_path(folder).unlink()
    storage.memory_path(folder, 3).write_bytes(b"torn")
    said = []
    run = runs.openRun(cfg, say=said.append)
    assert run.iteration == 3 and run.memory_iteration == 2
    assert any("no metrics rows" in line for line in said)
    assert any("memory0003.npz" in line and "older memory snapshot of iteration 2" in line for line in said)


@pytest.mark.parametrize("lost", ["config", "versions"])
def test_a_run_that_cannot_be_rebuilt_is_refused_with_the_way_out(trained_run, tmp_path, lost):
    folder, cfg = runCopy(trained_run, tmp_path)
    storage.checkpoint_path(folder).unlink()
    if lost == "config":
        storage.config_path(folder).unlink()
        message = rf"config file {storage.config_path(folder)} is missing, beside files of a run .*move the run folder"
    else:
        for version in storage.saved_versions(folder):
            storage.model_path(folder, version).write_bytes(b"not a model")
        message = r"no checkpoint.json and no intact saved version .*not a \.keras archive.*move the run folder"
    before = sorted(path.relative_to(folder) for path in folder.rglob("*"))
    with pytest.raises(storage.RunFileError, match=message):
        runs.openRun(cfg, say=lambda _: None)
    assert sorted(path.relative_to(folder) for path in folder.rglob("*")) == before  # nothing written


def test_a_missing_config_beside_a_checkpoint_is_refused_with_the_way_out(trained_run, tmp_path):
    folder, cfg = runCopy(trained_run, tmp_path)
    storage.config_path(folder).unlink()
    with pytest.raises(storage.RunFileError, match=r"config\.json is missing, beside files of a run \(checkpoint"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_config_that_does_not_fit_the_models_names_both_files(trained_run, tmp_path):
    folder, cfg = runCopy(trained_run, tmp_path)
    wider = cfg.replace(HIDDEN_CNN_LAYERS=[{"filters": 6, "kernel_size": (3, 3)}])
    storage.config_path(folder).write_text(wider.to_json())
    with pytest.raises(storage.ModelMismatchError, match=r"version\d+\.keras does not fit the network .*built from "
                                                          rf"{storage.config_path(folder)}: restore the config"):
        runs.openRun(cfg, say=lambda _: None)


def test_a_folder_holding_only_the_config_of_a_start_cut_short_starts_with_that_config(tiny_cfg, tmp_path):
    folder = tmp_path / "run"
    own = tiny_cfg.replace(RUN_FOLDER=str(folder), HIDDEN_CNN_LAYERS=[{"filters": 4, "kernel_size": (3, 3)}])
    storage.write_text(storage.config_path(folder), own.to_json())
    assert runs.startingPoint(tiny_cfg.replace(RUN_FOLDER=str(folder))) == ("restart", own)
    said = []
    run = runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(folder)), say=said.append)
    assert run.cfg == own and "start cut short" in said[0] and run.best_NN.model.layers[2].kernel.shape[-1] == 4


# -- a branch of a run: the same state, one change --------------------------------------------
def test_a_branch_goes_on_from_the_runs_state_with_its_change(trained_run, tmp_path):
    source, cfg = runCopy(trained_run, tmp_path)
    def files():  # the lock file a branch takes is no file of the run
        return {path: path.read_bytes() for path in source.rglob("*") if path.is_file() and path.name != storage.LOCK_NAME}

    before = files()
    target = tmp_path / "branch"
    said = []
    branch_cfg = branches.branchRun(source, target, {"VALUE_HEAD": "wdl", "MCTS_SIMS": 6}, say=said.append)
    assert files() == before
    assert branch_cfg == cfg.replace(VALUE_HEAD="wdl", MCTS_SIMS=6, RUN_FOLDER=str(target))
    assert runs.folderConfig(target) == branch_cfg
    assert runs.readCheckpoint(target) == runs.readCheckpoint(source)
    assert runs.readMetrics(target) == runs.readMetrics(source)
    snapshot = runs.readCheckpoint(source)["memory_iteration"]
    assert storage.memory_path(target, snapshot).read_bytes() == storage.memory_path(source, snapshot).read_bytes()
    assert said == [f"Branched {source} at iteration 3 (best version {runs.readCheckpoint(source)['best_player_version']})"
                    f" into {target} with {{'VALUE_HEAD': 'wdl', 'MCTS_SIMS': 6}}."]
    rows = funcs.train(1, branch_cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    assert [row["iteration"] for row in rows] == [4] and rows[0]["trained"]
    assert len(runs.readMetrics(target)) == 4 and runs.readCheckpoint(target)["iteration"] == 4
    resumed = runs.openRun(branch_cfg, say=lambda _: None)
    assert resumed.best_NN.model.get_layer("wdl_head") is not None and resumed.cfg.VALUE_HEAD == "wdl"


def test_a_branch_inside_the_project_keeps_its_folder_relative_to_it(tmp_path):
    assert branches.storedFolder(PROJECT_ROOT / "run_archive" / "connect4" / "run0009") == "run_archive/connect4/run0009"
    assert branches.storedFolder(tmp_path / "branch") == str(tmp_path / "branch")


def test_a_branch_can_go_on_with_a_network_of_another_shape(trained_run, tmp_path):
    source, cfg = runCopy(trained_run, tmp_path)
    smaller = {"HIDDEN_CNN_LAYERS": [{"filters": 4, "kernel_size": (3, 3)}]}
    student = Residual_CNN.fromConfig(cfg.replace(**smaller), (2, 6, 7), 42)
    storage.save_model(student.model, tmp_path / "student.keras")
    said = []
    branch_cfg = branches.branchRun(source, tmp_path / "small", smaller, network=tmp_path / "student.keras",
                                    say=said.append)
    assert said[0].endswith(f"its networks from {tmp_path / 'student.keras'}.")
    best = runs.readCheckpoint(source)["best_player_version"]
    for path in (storage.model_path(tmp_path / "small", best), storage.current_model_path(tmp_path / "small")):
        weights = storage.load_model(path).get_weights()
        assert all(np.array_equal(a, b) for a, b in zip(weights, student.model.get_weights()))
        assert len(weights) == len(student.model.get_weights())
    assert runs.readCheckpoint(tmp_path / "small") == runs.readCheckpoint(source)
    rows = funcs.train(1, branch_cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    assert [row["iteration"] for row in rows] == [4]
    with pytest.raises(storage.ModelMismatchError):  # the file's network is not the branch config's
        branches.branchRun(source, tmp_path / "wrong", {}, network=tmp_path / "student.keras")
    with pytest.raises(storage.RunFileError, match="give a network saved for the branch's config"):
        branches.branchRun(source, tmp_path / "missing", smaller, network=tmp_path / "absent.keras")
    assert not (tmp_path / "wrong").exists() and not (tmp_path / "missing").exists()
    assert not list(tmp_path.glob(".wrong*")) and not list(tmp_path.glob(".missing*"))


def _judgements(folder: Path, version: int, x: np.ndarray) -> list[np.ndarray]:
    network = runs.networkFor(runs.folderConfig(folder), folder)
    network.loadWeights(storage.model_path(folder, version))
    return [np.asarray(output) for output in network.model(x)]


def test_a_branch_without_changes_holds_the_same_networks_and_a_wdl_one_judges_alike(trained_run, tmp_path):
    source, cfg = runCopy(trained_run, tmp_path)
    best = runs.readCheckpoint(source)["best_player_version"]
    branches.branchRun(source, tmp_path / "same", {}, say=lambda _: None)
    branches.branchRun(source, tmp_path / "wdl", {"VALUE_HEAD": "wdl"}, say=lambda _: None)
    for path in (storage.model_path(source, best), storage.current_model_path(source)):
        mine = storage.load_model(path).get_weights()
        theirs = storage.load_model(tmp_path / "same" / path.relative_to(source)).get_weights()
        assert all(np.array_equal(a, b) for a, b in zip(mine, theirs)) and len(mine) == len(theirs)
    x = runs.networkFor(cfg, source).convertToModelInputs(randomPositions(32, seed=3))
    (value, logits), (wdl_value, wdl_logits) = (_judgements(folder, best, x) for folder in (source, tmp_path / "wdl"))
    np.testing.assert_array_equal(wdl_logits, logits)
    np.testing.assert_allclose(wdl_value, value, atol=0.02)


def test_a_branch_is_refused_over_a_run_or_with_a_wrong_change(trained_run, tmp_path):
    source, _ = runCopy(trained_run, tmp_path)
    with pytest.raises(storage.RunFileError, match="is not an empty folder .*: branch into an empty or new folder "
                                                   r"\(to go on training a branch, train in its folder without"):
        branches.branchRun(source, source, {"VALUE_HEAD": "wdl"})
    with pytest.raises(ConfigError, match="MCTS_SIMS must be positive, got 0"):
        branches.branchRun(source, tmp_path / "branch", {"MCTS_SIMS": 0})
    with pytest.raises(ConfigError, match=r"unknown config keys \['SIMS'\]"):
        branches.branchRun(source, tmp_path / "branch", {"SIMS": 6})
    with pytest.raises(ConfigError, match="RUN_FOLDER, WORKERS cannot be set for a branch"):
        branches.branchRun(source, tmp_path / "branch", {"WORKERS": 2, "RUN_FOLDER": "elsewhere"})
    with storage.runLock(source), pytest.raises(storage.RunLockedError, match="another process is training"):
        branches.branchRun(source, tmp_path / "branch", {})
    assert not (tmp_path / "branch").exists() and not list(tmp_path.glob(".branch*"))


def test_a_failed_branch_leaves_nothing_and_can_be_made_again(trained_run, tmp_path):
    source, _ = runCopy(trained_run, tmp_path)
    current = storage.current_model_path(source)
    intact = current.read_bytes()
    current.write_bytes(b"not a model")
    with pytest.raises(storage.RunFileError, match=r"current\.keras is truncated or corrupt.*restore it in"):
        branches.branchRun(source, tmp_path / "branch", {"VALUE_HEAD": "wdl"})
    assert not (tmp_path / "branch").exists() and not list(tmp_path.glob(".branch*"))
    current.write_bytes(intact)
    (tmp_path / "branch").mkdir()  # an empty folder is a place to branch into
    branches.branchRun(source, tmp_path / "branch", {"VALUE_HEAD": "wdl"}, say=lambda _: None)
    assert runs.readCheckpoint(tmp_path / "branch") == runs.readCheckpoint(source)
    storage.model_path(source, runs.readCheckpoint(source)["best_player_version"]).unlink()
    with pytest.raises(storage.RunFileError, match=r"version\d+\.keras is missing; restore it in"):
        branches.branchRun(source, tmp_path / "other", {})
    assert not (tmp_path / "other").exists()
