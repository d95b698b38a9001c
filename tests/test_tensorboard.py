"""TensorBoard (config TENSORBOARD): each iteration's metrics row as scalars in
<run folder>/tensorboard/, step = iteration, read back here as TensorBoard reads them;
nothing written with the switch off, and nothing of it among the files a shipped run
commits."""

from __future__ import annotations

import shutil

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util.tensor_util import make_ndarray

import config
import funcs
import loggers
import runs
import shipping
import scalars
import storage


def readScalars(folder) -> dict[str, dict[int, float]]:
    """tag -> {step: value} of every scalar in the event files of `folder`, read by
    TensorBoard's own reader (tf.summary writes scalars as tensors)."""
    events = EventAccumulator(str(folder), size_guidance={"tensors": 0})
    events.Reload()
    return {tag: {event.step: float(make_ndarray(event.tensor_proto)) for event in events.Tensors(tag)}
            for tag in events.Tags()["tensors"]}


@pytest.fixture(scope="module")
def iterations(tiny_cfg, tmp_path_factory):
    """Two tiny iterations with TENSORBOARD on (only the second has the memory to
    retrain and play the tournament): the run folder and the metrics rows."""
    folder = tmp_path_factory.mktemp("tensorboard") / "run"
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, MIN_MEMORY_SIZE=150, EVAL_POSITIONS=2, EVAL_SIMS=2,
                           LOGGERS={}, TENSORBOARD=True)
    rows = funcs.train(2, cfg, progress=False, say=lambda _: None)
    loggers.disable_all()
    return folder, rows


def test_each_iteration_s_metrics_row_is_written_as_scalars_of_its_step(iterations):
    folder, rows = iterations
    written = readScalars(storage.tensorboard_folder(folder))
    assert rows[1]["trained"] and not rows[0]["trained"]
    for row in rows:
        expected = dict(scalars.scalars(row))
        assert {tag: steps[row["iteration"]] for tag, steps in written.items()
                if row["iteration"] in steps} == pytest.approx(expected)
    second = {tag: steps[2] for tag, steps in written.items() if 2 in steps}
    for tag in ("loss", "value_loss", "policy_loss", "scores/current_player", "scores/best_player", "promoted",
                "mistake_rate", "network_mistake_rate", "seconds/selfplay", "seconds/tournament", "learning_rate"):
        assert tag in second, tag
    assert second["promoted"] == float(rows[1]["promoted"]) and second["loss"] == pytest.approx(rows[1]["loss"])
    assert "iteration" not in written and "loss" not in {tag for tag, steps in written.items() if 1 in steps}


def test_a_metrics_row_s_numbers_are_its_scalars():
    row = {"iteration": 3, "loss": 0.5, "promoted": True, "scores": {"best_player": 2, "drawn": 0},
           "mistake_rate": None, "seconds": {"selfplay": 1.5}, "note": "text"}
    assert scalars.scalars(row) == [("loss", 0.5), ("promoted", 1.0), ("scores/best_player", 2.0),
                                    ("scores/drawn", 0.0), ("seconds/selfplay", 1.5)]


def test_nothing_is_written_with_the_switch_off_and_nothing_of_it_is_shipped(iterations, tiny_cfg, tmp_path):
    folder = tmp_path / "run"
    funcs.train(1, tiny_cfg.replace(RUN_FOLDER=str(folder), MCTS_SIMS=4, EVAL_POSITIONS=0, LOGGERS={}),
                progress=False, say=lambda _: None)
    loggers.disable_all()
    assert not storage.tensorboard_folder(folder).exists()
    on, _ = iterations
    assert not any(storage.tensorboard_folder(on) in path.parents for path in shipping.resumeFiles(on))


def test_the_switch_is_on_in_the_strong_preset_and_taken_from_the_config_given_to_training(tiny_cfg, tmp_path):
    assert config.STRONG.TENSORBOARD and not config.DEFAULT.TENSORBOARD
    assert config.STRONG.replace(TENSORBOARD=False) == config.STRONG  # it is not how the run learns
    cfg = tiny_cfg.replace(RUN_FOLDER=str(tmp_path / "run"), LOGGERS={})
    runs.openRun(cfg, say=lambda _: None)
    said = []
    assert runs.openRun(cfg.replace(TENSORBOARD=True), say=said.append).cfg.TENSORBOARD
    assert not any("own config.json" in line for line in said)
    with pytest.raises(config.ConfigError, match="TENSORBOARD must be True or False, got 1"):
        cfg.replace(TENSORBOARD=1)


def test_a_run_s_view_is_rebuilt_from_its_metrics_rows_alone(iterations, tmp_path):
    """A copy of the run without its event files (as a shipped run is committed), and one whose view holds a
    stray step: both rebuilt with exactly the rows' scalars, the lock held and given back."""
    original, rows = iterations
    expected = readScalars(storage.tensorboard_folder(original))
    for stray in (False, True):
        folder = tmp_path / f"copy{stray}"
        shutil.copytree(original, folder, ignore=shutil.ignore_patterns("tensorboard", storage.LOCK_NAME))
        if stray:
            scalars.ScalarWriter(folder).write({"iteration": 7, "loss": 9.0})
        assert scalars.rewrite(folder) == storage.tensorboard_folder(folder)
        assert readScalars(storage.tensorboard_folder(folder)) == expected
        with storage.runLock(folder):  # given back
            pass


def test_a_folder_without_metrics_rows_has_no_view_to_rebuild(tmp_path):
    with pytest.raises(storage.RunFileError, match="has no metrics rows to show"):
        scalars.rewrite(tmp_path / "empty")
    assert not (tmp_path / "empty").exists()
    storage.write_text(storage.metrics_path(tmp_path / "run"), '{"iteration": 1}\n{"loss": 0.5}\n')
    with pytest.raises(storage.RunFileError, match=r"metrics.jsonl: row 2 has no iteration to be its step"):
        scalars.rewrite(tmp_path / "run")
    assert not storage.tensorboard_folder(tmp_path / "run").exists()
