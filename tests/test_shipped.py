"""The agent shipped with the project (run_archive/connect4/run0006, config.SHIPPED: the
strong preset's settings and the levers its lineage took up late): it loads safely, it is
trained, and players fall back to it."""

from __future__ import annotations

import json

import pytest

import evaluation
import play
import runs
import shipping
import storage
from config import SHIPPED, STRONG, Config

SHIPPED_MISTAKE_CEILING = 0.25
"""The shipped raw network's mistake share on 60 positions of the project's benchmark
set must stay below this. On them an untrained network makes 0.68, the run's best after
half an hour 0.32, after two hours 0.23, after five 0.15 (a guard against
shipping the wrong file, not a strength figure: see the README for those)."""


def test_the_shipped_run_is_the_shipped_preset_run_in_the_archive_format():
    folder = play.SHIPPED_RUN
    assert folder == SHIPPED.path("RUN_FOLDER") and folder.parent.name == "connect4"
    cfg = Config.from_json_file(storage.config_path(folder))
    assert cfg == SHIPPED  # so `make train PRESET=shipped` resumes it with the preset's own settings
    assert cfg.RUN_FOLDER == "run_archive/connect4/run0006"  # relative: a clone anywhere finds it
    late = {"OPENING_STONES", "VALUE_TARGET_Q_WEIGHT_OPENING", "WEIGHT_AVERAGE_DECAY", "RUN_FOLDER"}
    assert cfg.replace(**{name: getattr(STRONG, name) for name in late}) == STRONG
    checkpoint = runs.readCheckpoint(folder)
    rows = runs.readMetrics(folder)
    assert [row["iteration"] for row in rows][:checkpoint["iteration"]] == list(range(1, checkpoint["iteration"] + 1))
    # A promotion is checkpointed at once, before its iteration's row: the checkpoint may be one version ahead.
    assert rows[checkpoint["iteration"] - 1]["best_player_version"] in (checkpoint["best_player_version"] - 1,
                                                                        checkpoint["best_player_version"])


def test_the_shipped_run_holds_every_file_it_resumes_from():
    """What a fresh clone needs to resume the run where the checkpoint says (`make
    ship-run` stages these; a missing one would stop `make train PRESET=strong`)."""
    folder = play.SHIPPED_RUN
    files = shipping.resumeFiles(folder)
    assert all(path.exists() for path in files)
    checkpoint = runs.readCheckpoint(folder)
    assert storage.current_model_path(folder) in files and storage.curve_path(folder) in files
    assert storage.memory_path(folder, checkpoint["memory_iteration"]) in files
    shipped = shipping.shippedFiles(folder)
    assert all(path.exists() for path in shipped) and set(files) <= set(shipped)
    for record in storage.whole_games_records(folder):  # each record's version is there to reproduce it
        version = json.loads(record.read_text())["version"]
        assert record in shipped and storage.model_path(folder, version) in shipped


def test_the_shipped_network_loads_in_safe_mode_and_is_trained():
    version = play.SHIPPED_VERSION
    assert 1 < version <= play.trainedVersion(play.SHIPPED_RUN)
    assert storage.model_path(play.SHIPPED_RUN, version) in shipping.shippedFiles(play.SHIPPED_RUN)  # committed
    storage.load_model(storage.model_path(play.SHIPPED_RUN, version))  # safe mode, uncompiled
    agent = play.loadPlayer(version=version, run_folder=play.SHIPPED_RUN)
    positions = evaluation.benchmarkPositions(60, seed=11)
    shipped = evaluation.mistakeRate(positions, evaluation.networkChooser(agent.model)).rate
    untrained = evaluation.mistakeRate(positions, evaluation.networkChooser(
        play.loadPlayer(version=0, run_folder=play.SHIPPED_RUN).model)).rate
    assert shipped < SHIPPED_MISTAKE_CEILING and shipped < untrained


def test_a_run_without_a_trained_version_plays_the_shipped_agent_and_says_so(tmp_path):
    said = []
    agent = play.loadPlayer(run_folder=tmp_path / "fresh", say=said.append)
    assert len(said) == 1 and "shipped agent" in said[0] and str(play.SHIPPED_RUN) in said[0]
    assert f"version {play.SHIPPED_VERSION} of" in said[0]  # the pinned version, not the run's newest best
    assert agent.config.ROOT_SEARCH == STRONG.PLAY_ROOT_SEARCH and agent.MCTSsimulations == STRONG.PLAY_SIMS
    assert agent.cpuct == agent.config.CPUCT == STRONG.PLAY_CPUCT != STRONG.CPUCT
    assert agent.config.LEAF_BATCH == STRONG.PLAY_LEAF_BATCH > 1 == STRONG.LEAF_BATCH  # self-play: one leaf a call
    assert agent.moveSeconds == STRONG.PLAY_MOVE_SECONDS == 0.95  # the 1-second budget kept on a slower host
    untrained = play.loadPlayer(version=0, run_folder=tmp_path / "fresh", say=said.append)
    assert len(said) == 1 and untrained.config.ROOT_SEARCH == "puct"  # an explicit version is never replaced


def test_a_run_that_lost_its_checkpoint_is_refused_not_replaced_by_the_shipped_agent(run_folder, tmp_path):
    started = tmp_path / "started"  # a new run's start cut short: its config.json alone, no trained version
    storage.write_text(storage.config_path(started), Config().to_json())
    assert play.trainedVersion(started) is None
    storage.checkpoint_path(run_folder).unlink()
    said = []
    with pytest.raises(storage.RunFileError, match=r"without its checkpoint.json: .*saved: 1, 3"):
        play.loadPlayer(run_folder=run_folder, say=said.append)
    assert said == []


def test_the_version_people_play_is_the_shipped_agent_in_the_shipped_run_and_the_best_elsewhere(tmp_path):
    """The shipped run trains on past the shipped agent: `make perfect`, `make movetime`,
    `make export` and `python -m play --run-folder` of it, given no version, measure and
    play the pinned one, while any other run gives its best."""
    relative = play.SHIPPED_RUN.relative_to(play.SHIPPED_RUN.parents[2])
    assert play.playedVersion(play.SHIPPED_RUN) == play.SHIPPED_VERSION
    assert play.playedVersion(play.SHIPPED_RUN.parents[2] / "." / relative) == play.SHIPPED_VERSION
    storage.checkpoint_path(tmp_path).write_text(json.dumps(
        {"iteration": 9, "best_player_version": 4, "memory_iteration": None}))
    assert play.playedVersion(tmp_path) == runs.bestVersion(tmp_path) == 4
    played = play.loadPlayer(run_folder=play.SHIPPED_RUN).model.model.get_weights()
    pinned = storage.load_model(storage.model_path(play.SHIPPED_RUN, play.SHIPPED_VERSION)).get_weights()
    assert len(played) == len(pinned) and all((a == b).all() for a, b in zip(played, pinned))
