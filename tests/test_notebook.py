"""run.ipynb executes top to bottom, headlessly, with a tiny configuration."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from run_notebook import runNotebook

ROOT = Path(__file__).resolve().parent.parent
TINY = {"EPISODES": 2, "MCTS_SIMS": 4, "MEMORY_SIZE": 500, "BATCH_SIZE": 32, "MIN_MEMORY_SIZE": 32,
        "TRAINING_LOOPS": 1, "EVAL_EPISODES": 2, "EVAL_POSITIONS": 4, "EVAL_SIMS": 4,
        "HIDDEN_CNN_LAYERS": [{"filters": 4, "kernel_size": [3, 3]}]}


def test_notebook_runs_headlessly_with_a_tiny_config(tmp_path, monkeypatch):
    run_folder = tmp_path / "run"
    monkeypatch.setenv("CONNECT4_ITERATIONS", "1")
    monkeypatch.setenv("CONNECT4_CONFIG", json.dumps({**TINY, "RUN_FOLDER": str(run_folder)}))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own inline backend, as `make train` runs it
    executed = tmp_path / "executed.ipynb"
    runNotebook(ROOT / "run.ipynb", executed, timeout=600)
    notebook = nbformat.read(executed, as_version=4)
    errors = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
              if o.output_type == "error"]
    assert errors == []
    text = "".join(o.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs)
    assert "iteration 1:" in text and "best version:" in text and "scores:" in text
    pictured = [cell.source for cell in notebook.cells if cell.cell_type == "code"
                and any("image/png" in o.get("data", {}) for o in cell.outputs)]
    for figure in ("plotMetrics", "plotMistake", "plotRatings", "inspection.plot()", "stored.plot()"):
        assert any(figure in source for source in pictured), figure  # shown, not only drawn
    assert json.loads((run_folder / "checkpoint.json").read_text())["iteration"] == 1
    assert (run_folder / "models" / "version0001.keras").exists()
