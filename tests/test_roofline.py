"""The roofline benchmark (benchmarks/roofline.py): the network's multiply-adds and a
run of the script on a tiny run."""

from __future__ import annotations

import keras
import pytest

import inference
import storage
from benchmarks import roofline
from game import ACTION_SIZE, INPUT_SHAPE, inputShape
from model import Residual_CNN


def test_multiply_adds_count_convolutions_per_output_cell_and_dense_layers():
    inputs = keras.Input((6, 7, 2))
    x = keras.layers.Conv2D(4, (3, 3), padding="same")(inputs)
    x = keras.layers.Conv2D(3, (1, 1))(x)
    x = keras.layers.Conv2D(2, (3, 3), padding="valid")(x)  # 4 x 5 output cells
    outputs = keras.layers.Dense(5)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    assert roofline.multiplyAdds(model) == 42 * 9 * 2 * 4 + 42 * 4 * 3 + 20 * 9 * 3 * 2 + 40 * 5


def test_calls_fall_into_batch_bands_and_the_full_batch_share_weighs_positions_by_rate():
    Call = roofline.selfplay.Call  # the module roofline itself reads
    calls = [Call(8, 0.004, ()), Call(8, 0.004, ()), Call(128, 0.016, ()), Call(100, 0.0125, ())]
    bands = roofline.callBands(calls)
    assert [(b["sizes"], b["calls"], b["positions"]) for b in bands] == [((1, 16), 2, 16), ((97, 128), 2, 228)]
    assert bands[0]["rate"] == pytest.approx(2000) and bands[1]["rate"] == pytest.approx(8000)
    # 244 positions at 8,000/s against the 0.0365 s the calls took
    assert roofline.fullBatchShare(bands) == pytest.approx(244 / 8000 / 0.0365)


def test_the_script_measures_each_precision_at_each_batch(run_folder, capsys):
    result = roofline.main(["--run-folder", str(run_folder), "--seconds", "0.01", "--selfplay"])
    assert result["version"] == 3 and result["multiply_adds"] > 0 and result["float32_product_gflops"] > 0
    precisions = ["f32", "bf16"] if inference.cpuSupportsBF16() else ["f32"]
    assert list(result["results"]) == precisions
    for measured in result["results"].values():
        assert list(measured["positions_per_second"]) == list(roofline.BATCHES)
        assert all(speed > 0 for speed in measured["positions_per_second"].values())
        for batch, gflops in measured["gflops"].items():
            assert gflops * 1e9 == pytest.approx(2 * result["multiply_adds"] * measured["positions_per_second"][batch])
            yardstick = (result["float32_product_gflops"] if measured is result["results"]["f32"]
                         else result["results"]["f32"]["gflops"][batch])
            assert measured["against"][batch] == pytest.approx(gflops / yardstick)
    played = result["selfplay"]
    assert played["positions"] == sum(band["positions"] for band in played["bands"]) > 0
    assert played["calls"] == sum(band["calls"] for band in played["bands"])
    assert 0 < played["full_batch_share"]
    out = capsys.readouterr().out
    assert "multiply-adds per position" in out and "of the network's time" in out


def test_a_run_with_the_colour_plane_is_measured_on_its_own_input_shape(tiny_cfg, tmp_path):
    folder = tmp_path / "run"
    cfg = tiny_cfg.replace(COLOUR_PLANE=True)
    network = Residual_CNN.fromConfig(cfg, INPUT_SHAPE, ACTION_SIZE)
    storage.write_text(storage.config_path(folder), cfg.to_json())
    storage.save_model(network.model, storage.model_path(folder, 2))
    storage.write_json(storage.checkpoint_path(folder), {"iteration": 2, "best_player_version": 2,
                                                         "memory_iteration": None})
    _, version, loaded, engine = roofline.versionEngine(folder, None)
    assert version == 2 and loaded.input_dim == inputShape(colourPlane=True)
    assert str(engine.boundModel(loaded.model).input(0).get_partial_shape()) == "[?,3,6,7]"
    result = roofline.main(["--run-folder", str(folder), "--seconds", "0.01"])
    assert all(speed > 0 for speed in result["results"]["f32"]["positions_per_second"].values())
