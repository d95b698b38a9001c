"""The mean of a run's saved versions (benchmarks/average.py): the uniform mean of their
weights, scored on Pons-format sets and saved for a branch."""

from __future__ import annotations

import numpy as np
import pytest

import branches
import runs
import storage
from benchmarks import average


def test_the_mean_weights_every_network_alike():
    nets = [[np.full((2, 2), v, dtype=np.float32), np.array([3 * v], dtype=np.float32)] for v in (1.0, 2.0, 6.0)]
    mean = average.meanWeights(nets)
    np.testing.assert_allclose(mean[0], 3.0)
    np.testing.assert_allclose(mean[1], [9.0])
    assert average.meanWeights(nets[:1]) is nets[0]


def test_the_mean_of_two_versions_is_scored_saved_and_starts_a_branch(run_folder, pons_folder, tmp_path):
    out = tmp_path / "mean.keras"
    table = average.main(["--run-folder", str(run_folder), "--versions", "1", "3", "--last", "2", "1",
                          "--sets", "L1_R3", "--limit", "3", "--pons-folder", str(pons_folder), "--out", str(out)])
    assert [row["label"] for row in table] == ["version 1", "version 3", "mean of 1", "mean of 2"]
    assert table[1]["sets"] == table[2]["sets"]
    saved = storage.load_model(out).get_weights()
    one, three = (storage.load_model(storage.model_path(run_folder, v)).get_weights() for v in (1, 3))
    assert all(np.allclose(s, (a + b) / 2, atol=1e-6) for s, a, b in zip(saved, one, three))
    branches.branchRun(run_folder, tmp_path / "branch", {"WEIGHT_AVERAGE_DECAY": 0.9}, say=lambda _: None,
                       network=out)
    best = storage.load_model(storage.model_path(tmp_path / "branch", 3)).get_weights()
    assert all(np.allclose(b, s) for b, s in zip(best, saved))
    assert runs.readCheckpoint(tmp_path / "branch")["best_player_version"] == 3


def test_versions_the_run_does_not_hold_or_too_many_to_average_are_refused(run_folder, capsys):
    with pytest.raises(SystemExit):
        average.main(["--run-folder", str(run_folder), "--versions", "1", "2"])
    assert "has no version 2 (1, 3)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        average.main(["--run-folder", str(run_folder), "--versions", "1", "3", "--last", "3"])
    assert "--last 3 asks for more versions than the 2 given" in capsys.readouterr().err


def test_a_bad_set_file_or_output_is_refused_before_anything_is_scored(run_folder, pons_folder, tmp_path, capsys):
    args = ["--run-folder", str(run_folder), "--versions", "1", "3", "--sets", "L1_R3", "--pons-folder",
            str(pons_folder)]
    with pytest.raises(SystemExit):
        average.main([*args, "--out", str(tmp_path)])
    assert f"argument --out: {tmp_path} is a folder" in capsys.readouterr().err
    (pons_folder / "Test_L1_R3").write_text("112233 1\n44 four\n")
    with pytest.raises(SystemExit):
        average.main(args)
    assert "Test_L1_R3, line 2" in capsys.readouterr().err
