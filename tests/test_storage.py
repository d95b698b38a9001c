"""File safety: atomic writes, disk full, damaged or unsafe model files."""

import errno
import io
import os
import re
import subprocess
import zipfile
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import storage
from storage import DiskFullError, RunFileError

ROOT = Path(__file__).resolve().parent.parent


def _half_written(content: bytes, error: BaseException):
    """A writer that writes half of `content` to the temporary file, then fails."""
    def write(tmp):
        with open(tmp, "wb") as handle:
            handle.write(content[: len(content) // 2])
            handle.flush()
            raise error
    return write


def _temp_files(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


def test_atomic_write_replaces_the_file(tmp_path):
    path = tmp_path / "sub" / "data.bin"
    storage.atomic_write(path, lambda tmp: tmp.write_bytes(b"first"))
    storage.atomic_write(path, lambda tmp: tmp.write_bytes(b"second"))
    assert path.read_bytes() == b"second"
    assert _temp_files(path.parent) == []


def test_writer_failing_midway_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "checkpoint.json"
    path.write_text("old content")
    with pytest.raises(RuntimeError, match="writer broke"):
        storage.atomic_write(path, _half_written(b"new content " * 100, RuntimeError("writer broke")))
    assert path.read_text() == "old content"
    assert _temp_files(tmp_path) == []


def test_interrupt_midway_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "memory0001.npz"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        storage.atomic_write(path, _half_written(b"x" * 1000, KeyboardInterrupt()))
    assert path.read_bytes() == b"old"
    assert _temp_files(tmp_path) == []


def test_disk_full_gives_DiskFullError_naming_the_file_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "models" / "version0003.keras"
    path.parent.mkdir()
    path.write_bytes(b"old model")
    full = OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(DiskFullError) as info:
        storage.atomic_write(path, _half_written(b"m" * 4096, full), suffix=".keras")
    assert str(path) in str(info.value)
    assert info.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"old model"
    assert _temp_files(path.parent) == []


def test_other_os_errors_pass_through_unchanged(tmp_path):
    path = tmp_path / "config.json"
    with pytest.raises(PermissionError):
        storage.atomic_write(path, _half_written(b"abc", PermissionError(errno.EACCES, "denied")))
    assert not path.exists()
    assert _temp_files(tmp_path) == []


def test_leftover_temp_file_of_a_killed_write_is_removed_by_the_next_write(tmp_path):
    path = tmp_path / "checkpoint.json"
    leftover = tmp_path / ".checkpoint.json.k1ll3d_x.tmp"
    other = tmp_path / ".config.json.abcdefgh.tmp"
    leftover.write_text("torn")
    other.write_text("torn")
    assert storage.temp_files(path) == [leftover]
    storage.write_json(path, {"iteration": 2})
    assert not leftover.exists()
    assert other.exists()  # another file's leftover is that file's business
    assert storage.read_json(path, "checkpoint file", "") == {"iteration": 2}


def test_append_line_adds_whole_lines(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"iteration": 1}')  # a file whose last line lacks its newline
    storage.append_line(path, '{"iteration": 2}')
    storage.append_line(path, '{"iteration": 3}\n')
    assert path.read_text().splitlines() == ['{"iteration": 1}', '{"iteration": 2}', '{"iteration": 3}']


@pytest.mark.parametrize("content", [b'{"iteration": ', b"\x80\x81garbage"])
def test_read_json_of_a_corrupt_file_names_it(tmp_path, content):
    path = tmp_path / "checkpoint.json"
    path.write_bytes(content)
    with pytest.raises(RunFileError, match="restore it") as info:
        storage.read_json(path, "checkpoint file", "restore it")
    assert str(path) in str(info.value)


def test_read_json_lines_skips_blank_lines_and_names_a_corrupt_line(tmp_path):
    path = tmp_path / "curve.jsonl"
    assert storage.read_json_lines(path, "curve file", "rescore it") == []  # not written yet
    path.write_text('{"version": 1}\n\n[2]\n')
    assert storage.read_json_lines(path, "curve file", "rescore it") == [{"version": 1}, [2]]
    storage.append_line(path, '{"version": 3, "sets": {')
    with pytest.raises(RunFileError, match=r"curve file .*curve\.jsonl line 4 is corrupt .*; rescore it"):
        storage.read_json_lines(path, "curve file", "rescore it")
    path.write_bytes(b"\x80\x81")
    with pytest.raises(RunFileError, match="curve file .* is corrupt"):
        storage.read_json_lines(path, "curve file", "rescore it")


def test_read_json_of_a_missing_file_names_it(tmp_path):
    with pytest.raises(RunFileError) as info:
        storage.read_json(tmp_path / "checkpoint.json", "checkpoint file", "start anew")
    assert str(tmp_path / "checkpoint.json") in str(info.value)


def test_paths_of_the_run_layout(tmp_path):
    assert storage.model_path(tmp_path, 7) == tmp_path / "models" / "version0007.keras"
    assert storage.memory_path(tmp_path, 12) == tmp_path / "memory" / "memory0012.npz"
    assert storage.archived_run(tmp_path, "connect4", 3) == tmp_path / "connect4" / "run0003"
    assert storage.current_model_path(tmp_path) == tmp_path / "models" / "current.keras"
    assert [storage.config_path(tmp_path), storage.checkpoint_path(tmp_path), storage.metrics_path(tmp_path),
            storage.logs_folder(tmp_path)] == [tmp_path / name for name in ("config.json", "checkpoint.json",
                                                                            "metrics.jsonl", "logs")]


def test_numbered_files_are_listed_by_number_and_others_ignored(tmp_path):
    for path in (storage.model_path(tmp_path, 12), storage.model_path(tmp_path, 3), storage.current_model_path(tmp_path),
                 storage.memory_path(tmp_path, 5), storage.memory_path(tmp_path, 40),
                 storage.archived_run(tmp_path / "archive", "connect4", 2) / "config.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / "models" / ".version0004.keras.x1.tmp.keras").write_text("")
    assert storage.saved_versions(tmp_path) == [3, 12]
    assert storage.memory_snapshots(tmp_path) == [5, 40]
    assert storage.archived_runs(tmp_path / "archive", "connect4") == [2]
    assert storage.saved_versions(tmp_path / "nothing") == [] == storage.archived_runs(tmp_path, "connect4")


def test_a_model_file_loads_without_the_project_s_loss_function(tmp_path, tiny_model):
    """storage loads models uncompiled, so it needs nothing from model.py or loss.py
    (a fresh interpreter that imports only storage loads a saved network)."""
    storage.save_model(tiny_model.model, storage.model_path(tmp_path, 1))
    code = ("import sys, storage; model = storage.load_model(sys.argv[1]); "
            "print(sorted(m for m in ('model', 'loss') if m in sys.modules), len(model.get_weights()))")
    done = subprocess.run([sys.executable, "-c", code, str(storage.model_path(tmp_path, 1))], capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.split() == ["[]", str(len(tiny_model.model.get_weights()))]


@pytest.fixture(scope="module")
def saved_model(tiny_model, tmp_path_factory):
    path = storage.model_path(tmp_path_factory.mktemp("run"), 1)
    storage.save_model(tiny_model.model, path)
    return path


def test_save_model_leaves_only_the_keras_file(saved_model):
    assert [p.name for p in saved_model.parent.iterdir()] == [saved_model.name]


def test_load_model_of_a_missing_file_names_it(tmp_path):
    path = tmp_path / "models" / "version0004.keras"
    with pytest.raises(RunFileError, match="missing") as info:
        storage.load_model(path)
    assert str(path) in str(info.value)


def _flipped(content: bytes, at: float) -> bytes:
    """`content` with the byte at fraction `at` of its length inverted."""
    i = int(len(content) * at)
    return content[:i] + bytes([content[i] ^ 0xFF]) + content[i + 1:]


def _zip_of(**members: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.mark.parametrize(("damage", "cause"), [
    (lambda content: b"", r"is empty \(0 bytes\)"),
    (lambda content: content[: len(content) // 2], r"truncated or corrupt: \d+ bytes that are not a \.keras archive"),
    (lambda content: np.random.default_rng(0).bytes(len(content)), "not a .keras archive"),
    (lambda content: _flipped(content, 0.5), r"its member model\.weights\.h5 fails its checksum"),
    (lambda content: _zip_of(**{"config.json": "{}"}), r"without the \.keras archive's model\.weights\.h5"),
    (lambda content: _zip_of(**{"config.json": "{}", "model.weights.h5": "x"}), "Keras cannot read it"),
])
def test_a_damaged_model_file_is_named_with_the_real_cause(saved_model, tmp_path, damage, cause):
    """Keras says "File not found" for an empty or truncated file that exists."""
    path = tmp_path / "version0002.keras"
    path.write_bytes(damage(saved_model.read_bytes()))
    with pytest.raises(RunFileError, match=f"model file {re.escape(str(path))} [^;]*{cause}.*; restore it") as info:
        storage.load_model(path, "restore it")
    assert "File not found" not in str(info.value)


def test_load_model_refuses_a_lambda_layer_without_running_it(tmp_path):
    marker = tmp_path / "the_lambda_ran"
    # The lambda leaves a marker file each time it runs; its source names the marker
    # literally so the saved bytecode carries it.
    side_effect = eval(f"lambda z: (__import__('pathlib').Path({str(marker)!r}).touch(), z)[1]")
    inputs = keras.Input((3,))
    unsafe = keras.Model(inputs, keras.layers.Lambda(side_effect)(inputs))
    path = tmp_path / "version0005.keras"
    unsafe.save(path)
    marker.unlink(missing_ok=True)  # building the model ran it once

    with pytest.raises(RunFileError, match="Lambda") as info:
        storage.load_model(path)
    assert str(path) in str(info.value)
    assert not marker.exists()

    # The marker does work: loading unsafely and calling the model runs the lambda.
    keras.models.load_model(path, safe_mode=False)(np.zeros((1, 3), np.float32))
    assert marker.exists()


def test_disk_full_wrapped_by_a_library_is_still_recognised(tmp_path):
    path = tmp_path / "version0004.keras"
    path.write_bytes(b"old model")

    def keras_like_save(tmp):
        try:
            _half_written(b"m" * 100, OSError(errno.ENOSPC, "No space left on device"))(tmp)
        except OSError as exc:
            raise ValueError("could not write the archive") from exc
    with pytest.raises(DiskFullError, match="disk full while writing"):
        storage.atomic_write(path, keras_like_save, suffix=".keras")
    assert path.read_bytes() == b"old model" and _temp_files(tmp_path) == []
    with pytest.raises(ValueError, match="plain failure"):
        storage.atomic_write(path, lambda tmp: (_ for _ in ()).throw(ValueError("plain failure")))
