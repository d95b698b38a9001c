"""Keras 3 backends: one tiny training iteration on each backend installed, in a
child process (KERAS_BACKEND is read when Keras is first imported), its run files
readable by the other backend, and the JAX engine's outputs equal to the network's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import storage
from config import PROJECT_ROOT

BACKENDS = ("tensorflow", "jax")
"""Both are dependencies of the project (pyproject.toml)."""

CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import config, funcs, inference, keras, storage
    cfg = config.Config.from_dict(json.loads(sys.argv[1]))
    funcs.train(1, cfg, progress=False, say=lambda text: None)
    from model import Residual_CNN
    network = Residual_CNN.fromConfig(cfg, (2, 6, 7), 42)
    network.loadWeights(sys.argv[2])
    x = np.random.default_rng(0).integers(0, 2, (5, 2, 6, 7)).astype(np.float32)
    values, logits = network.predict(x)
    keras_values, keras_logits = network.model(x, training=False)
    current_values, current_logits = storage.load_model(storage.current_model_path(cfg.RUN_FOLDER))(x, training=False)
    refused = None
    try:
        inference.resolve("openvino", "auto")
    except inference.EngineUnavailable as error:
        refused = str(error)
    print(json.dumps({"backend": keras.backend.backend(), "engine": network.currentEngine().name,
                      "difference": float(max(np.abs(values - np.asarray(keras_values)[:, 0]).max(),
                                              np.abs(logits - np.asarray(keras_logits)).max())),
                      "openvino_refused": refused, "current_values": np.asarray(current_values).tolist(),
                      "current_logits": np.asarray(current_logits).tolist()}))
""")


def _trainOneIteration(backend: str, tiny_cfg, folder: Path) -> dict:
    cfg = tiny_cfg.replace(RUN_FOLDER=str(folder), RUN_ARCHIVE_FOLDER=str(folder.parent / "archive"),
                           MCTS_SIMS=4, EVAL_POSITIONS=2, EVAL_SIMS=4, MIN_MEMORY_SIZE=32,
                           INFERENCE_PRECISION="f32")  # bf16 would differ from Keras's float32 by design
    env = dict(os.environ, KERAS_BACKEND=backend)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg.as_dict()),
                           str(storage.model_path(folder, 1))],
                          capture_output=True, text=True, env=env, cwd=PROJECT_ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def trained(tiny_cfg, tmp_path_factory) -> dict:
    """Backend name -> (the child's report, its run folder) after one iteration."""
    runs = {}
    for backend in BACKENDS:
        folder = tmp_path_factory.mktemp(backend) / "run"
        runs[backend] = (_trainOneIteration(backend, tiny_cfg, folder), folder)
    return runs


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_training_iteration_on_each_installed_backend(backend, trained):
    report, folder = trained[backend]
    assert report["backend"] == backend
    checkpoint = json.loads(storage.checkpoint_path(folder).read_text())
    assert checkpoint["iteration"] == 1
    rows = [json.loads(line) for line in storage.metrics_path(folder).read_text().splitlines()]
    assert len(rows) == 1 and np.isfinite(rows[0]["loss"])
    # the network's own engine on this backend gives the Keras model's outputs
    assert report["difference"] < 1e-4
    if backend == "jax":
        assert report["engine"] == "jax"
        assert "TensorFlow" in report["openvino_refused"]
    else:
        assert report["engine"] in ("openvino", "tensorflow") and report["openvino_refused"] is None


def test_a_network_trained_on_jax_loads_on_tensorflow_and_gives_its_outputs(trained):
    report, folder = trained["jax"]
    saved = storage.load_model(storage.current_model_path(folder))  # trained on JAX, read here on TensorFlow
    x = np.random.default_rng(0).integers(0, 2, (5, 2, 6, 7)).astype(np.float32)  # the child's inputs
    values, logits = saved(x, training=False)
    assert np.abs(np.asarray(values) - np.array(report["current_values"])).max() < 1e-4
    assert np.abs(np.asarray(logits) - np.array(report["current_logits"])).max() < 1e-4
