"""The roofline benchmark (benchmarks/roofline.py): the network's multiply-adds and a
run of the script on a tiny run."""

from __future__ import annotations

import keras
import pytest

import inference
from benchmarks import roofline


def test_multiply_adds_count_convolutions_per_output_cell_and_dense_layers():
    inputs = keras.Input((6, 7, 2))
    x = keras.layers.Conv2D(4, (3, 3), padding="same")(inputs)
    x = keras.layers.Conv2D(3, (1, 1))(x)
    x = keras.layers.Conv2D(2, (3, 3), padding="valid")(x)  # 4 x 5 output cells
    outputs = keras.layers.Dense(5)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    assert roofline.multiplyAdds(model) == 42 * 9 * 2 * 4 + 42 * 4 * 3 + 20 * 9 * 3 * 2 + 40 * 5


def test_the_script_measures_each_precision_at_each_batch(run_folder, capsys):
    result = roofline.main(["--run-folder", str(run_folder), "--seconds", "0.01"])
    assert result["version"] == 3 and result["multiply_adds"] > 0 and result["float32_peak_gflops"] > 0
    precisions = ["f32", "bf16"] if inference.cpuSupportsBF16() else ["f32"]
    assert list(result["results"]) == precisions
    for measured in result["results"].values():
        assert list(measured["positions_per_second"]) == list(roofline.BATCHES)
        assert all(speed > 0 for speed in measured["positions_per_second"].values())
        for batch, gflops in measured["gflops"].items():
            assert gflops * 1e9 == pytest.approx(2 * result["multiply_adds"] * measured["positions_per_second"][batch])
    assert "multiply-adds per position" in capsys.readouterr().out
