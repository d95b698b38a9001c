"""The exported network (export.py): SavedModel and ONNX give the Keras network's
values and policy, and a damaged model file is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import export
import storage


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tiny_cfg):
    """A trained-looking tiny network (weights moved off their initial values) saved as
    version 7 and exported."""
    from model import Residual_CNN
    folder = tmp_path_factory.mktemp("run")
    network = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)
    rng = np.random.default_rng(3)
    network.model.set_weights([w + rng.normal(0, 0.1, w.shape).astype(w.dtype) for w in network.model.get_weights()])
    storage.save_model(network.model, storage.model_path(folder, 7))
    out = folder / "exported"
    return network, export.exportNetwork(storage.model_path(folder, 7), out, 7, folder), out


def test_exported_models_give_the_keras_values_and_policy(exported):
    network, result, _ = exported
    x = export.checkPositions(16, seed=5)
    values, logits = network.model(x, training=False)
    for run in (export.runSavedModel(result.saved_model, x), export.runOnnx(result.onnx, x)):
        np.testing.assert_allclose(np.asarray(run[0]), np.asarray(values), atol=export.TOLERANCE)
        np.testing.assert_allclose(np.asarray(run[1]), np.asarray(logits), atol=export.TOLERANCE)
    assert result.saved_model_difference <= export.TOLERANCE and result.onnx_difference <= export.TOLERANCE


def test_exported_policy_picks_the_same_moves(exported):
    network, result, _ = exported
    x = export.checkPositions(32, seed=9)
    keras_moves = np.argmax(np.asarray(network.model(x, training=False)[1]), axis=1)
    onnx_moves = np.argmax(export.runOnnx(result.onnx, x)[1], axis=1)
    assert (keras_moves == onnx_moves).all()


def test_export_writes_its_usage_beside_the_files(exported):
    _, _, out = exported
    text = (out / "README.txt").read_text()
    assert "version 7" in text and "(n, 2, 6, 7)" in text and "row * 7 + column" in text


def test_check_positions_are_seeded_network_inputs():
    a, b = export.checkPositions(10, seed=1), export.checkPositions(10, seed=1)
    assert a.shape == (10, 2, 6, 7) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert a[0].sum() == 0  # the empty board first
    assert not np.array_equal(a, export.checkPositions(10, seed=2))


def test_a_damaged_model_file_is_refused_by_name(tmp_path):
    bad = tmp_path / "version0001.keras"
    bad.write_bytes(b"not a keras archive")
    with pytest.raises(storage.RunFileError, match="version0001.keras"):
        export.exportNetwork(bad, tmp_path / "out", 1, tmp_path)
    assert not (tmp_path / "out" / "network.onnx").exists()


def test_the_command_line_exports_a_run_version(tmp_path, tiny_cfg, capsys):
    from model import Residual_CNN
    network = Residual_CNN.fromConfig(tiny_cfg, (2, 6, 7), 42)
    storage.save_model(network.model, storage.model_path(tmp_path, 2))
    export.main(["--run-folder", str(tmp_path), "--version", "2", "--out", str(tmp_path / "e")])
    assert "version 2 exported" in capsys.readouterr().out
    assert (tmp_path / "e" / "network.onnx").is_file() and (tmp_path / "e" / "saved_model").is_dir()
    with pytest.raises(SystemExit):
        export.main(["--run-folder", str(tmp_path), "--version", "5", "--out", str(tmp_path / "f")])


def test_the_command_line_refuses_a_version_below_1_and_an_output_that_is_a_file(tmp_path, capsys):
    afile = tmp_path / "out.txt"
    afile.write_text("kept")
    for arguments, message in [(["--version", "-1"], "argument --version: must be a positive number, got -1"),
                               (["--out", str(afile)], f"argument --out: {afile} is a file: give the path of a folder")]:
        with pytest.raises(SystemExit) as info:
            export.main(["--run-folder", str(tmp_path), *arguments])
        assert info.value.code == 2 and message in capsys.readouterr().err
    assert afile.read_text() == "kept"
