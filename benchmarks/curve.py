"""The learning curve of a run: mistake rates on Pascal Pons' sets against hours of
training, version by version.

Run: make curve   (or: .venv/bin/python benchmarks/curve.py [--run-folder F]
                   [--versions 3 7 12] [--sims S] [--limit L] [--pons-folder D]
                   [--plot PNG] [--no-scoring])

For each saved version of the run (default: every version the folder holds that has
no figures yet at these settings), scores the raw network and the MCTS agent (S
simulations, with the run's own search: ROOT_SEARCH, not PLAY_ROOT_SEARCH, so that every
version is scored alike) on the six sets (L positions each),
and appends one row per version to
the run's `curve.jsonl`.  S is by default the simulations of the curve's latest row, so
that a curve goes on at the budget it was measured with even when PLAY_SIMS changes; a
run without rows starts at its PLAY_SIMS (else MCTS_SIMS).  Each row carries the training time the version had had when
it became the best: the sum of the phase times of the run's iterations up to its
promotion (metrics.jsonl), in hours.  The table printed is the whole curve so far, with
the versions the run shares with the runs beside it (a branch: `plots.lineageCurve`);
`--plot` also saves its figure (`plots.plotCurve`, the README's), and `--no-scoring`
only prints and draws what is there.
Training never reads these files: they are measurement only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from pons import PONS_FOLDER, PONS_SETS, PonsSets, evaluateSets, loadSets  # noqa: E402

import cli  # noqa: E402
import plots  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import SHIPPED, ConfigError  # noqa: E402
from game import Game  # noqa: E402

FIGURE_SUFFIXES = tuple(f".{kind}" for kind in FigureCanvasBase.get_supported_filetypes())
"""The file names --plot takes: those whose ending names a format matplotlib writes
(a name without one would get ".png" added, another file than the one named)."""


def curveTable(rows: list[dict]) -> str:
    """One line per (version, sims, positions): hours, then network / agent mistake %
    per set."""
    sets = list(PONS_SETS)
    header = f"{'version':>7} {'iter':>5} {'hours':>6} {'sims':>5} {'pos':>5}  " + "  ".join(
        f"{PONS_SETS[s][0][:3]}-{PONS_SETS[s][1][:3]} net/agent" for s in sets)
    lines = [header, "-" * len(header)]
    for row in sorted(rows, key=lambda r: (r["sims"], r["limit"], r["version"])):
        cells = "  ".join(f"{row['sets'][s]['network']:8.1f}/{row['sets'][s]['agent']:<6.1f}" for s in sets)
        lines.append(f"{row['version']:>7} {row['iteration']:>5} {row['hours']:>6.2f} {row['sims']:>5} "
                     f"{row['limit']:>5}  {cells}")
    minimax = "  ".join(f"{'minimax5':>8} {PONS_SETS[s][3]:<6.1f}" for s in sets)
    return "\n".join(lines + [f"{'':>30}  {minimax}"])


def curveSims(rows: list[dict]) -> int | None:
    """The simulations the curve's latest row (in file order) was scored with; None
    for a curve without rows."""
    return rows[-1]["sims"] if rows else None


def scoreOnPons(folder: Path, version: int, sims: int, limit: int, sets: PonsSets) -> dict:
    """Score `version` of the run in `folder` on Pons' sets (the raw network, and the
    agent at `sims` simulations; `sets` of `limit` positions each), append the curve row to
    the run's curve.jsonl and return it.  The version must have been the run's best
    (its hours are those of its promotion)."""
    cfg = runs.runConfig(folder)
    iteration, at = runs.promotionHours(runs.readMetrics(folder))[version]
    keras.utils.set_random_seed(cfg.SEED)
    player = runs.versionPlayer("curve", Game(), cfg, folder, version, mcts_simulations=sims)
    scored = evaluateSets(player.model, cfg, sims, sets,
                          say=lambda text: print(f"  version {version}: {text}", flush=True))
    row = {"version": version, "iteration": iteration, "hours": round(at, 3), "sims": sims, "limit": limit,
           "sets": {r["set"]: {"network": round(r["network"], 2), "agent": round(r["agent"], 2)} for r in scored}}
    storage.append_line(storage.curve_path(folder), json.dumps(row, sort_keys=True))
    return row


def scoredRow(folder: Path, version: int, sims: int, limit: int) -> dict | None:
    """The run's curve row of `version` at these settings, if it was scored."""
    return next((row for row in runs.readCurve(folder)
                 if (row["version"], row["sims"], row["limit"]) == (version, sims, limit)), None)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--versions", type=int, nargs="+", default=None,
                        help="versions to score (default: every saved version without figures yet)")
    parser.add_argument("--sims", type=int, default=None,
                        help="agent simulations (default: those of the curve's latest row; a run without rows: "
                             "its PLAY_SIMS, the simulations it plays people with, else its MCTS_SIMS)")
    parser.add_argument("--limit", type=int, default=1000, help="positions per set (default: all 1000)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER,
                        help=f"folder of the Test_L*_R* files (default: {PONS_FOLDER})")
    parser.add_argument("--plot", type=cli.outputPath(suffixes=FIGURE_SUFFIXES), default=None,
                        help="also save the curve's figure to this file (.png, .svg, .pdf...)")
    parser.add_argument("--no-scoring", action="store_true", help="score nothing: print (and plot) the curve as it is")
    args = parser.parse_args(argv)
    if args.sims is not None and args.sims < 1:
        parser.error("--sims must be at least 1")
    if args.limit < 1:
        parser.error("--limit must be at least 1 position per set")
    folder = args.run_folder
    try:
        cfg = runs.runConfig(folder)
    except (ConfigError, storage.RunFileError) as exc:
        parser.error(str(exc))
    curve = runs.readCurve(folder)
    sims = args.sims or curveSims(curve) or cfg.PLAY_SIMS or cfg.MCTS_SIMS
    hours = runs.promotionHours(runs.readMetrics(folder))
    done = {(r["version"], r["sims"], r["limit"]) for r in curve}
    versions = [] if args.no_scoring else args.versions or [v for v in storage.saved_versions(folder) if (v, sims, args.limit) not in done]
    unsaved = [version for version in versions if not storage.model_path(folder, version).exists()]
    if unsaved:
        parser.error(f"{folder} has no version {unsaved[0]} (saved: {runs.savedVersionsList(folder)})")
    never_best = [version for version in versions if version not in hours]
    if never_best:
        parser.error(f"version {never_best[0]} never was the best version of {folder} (metrics.jsonl)")
    try:
        sets = loadSets(args.pons_folder, list(PONS_SETS), args.limit) if versions else {}
    except ValueError as exc:
        parser.error(str(exc))
    for version in versions:
        row = scoreOnPons(folder, version, sims, args.limit, sets)
        print(f"version {version} (iteration {row['iteration']}, {row['hours']:.2f} h): "
              + ", ".join(f"{s} {r['network']}/{r['agent']}" for s, r in row["sets"].items()), flush=True)
    shared = plots.sharedHistories(folder)
    for other, versions in shared:
        print(f"with the scores of versions {min(versions)}-{max(versions)} in {other}, a history this run shares")
    rows = plots.lineageCurve(folder, shared)
    print(curveTable(rows))
    if args.plot:
        savePlot(folder, args.plot)
    return rows


def savePlot(folder: Path, path: Path) -> None:
    """The run's learning-curve figure, written to `path` (its format by its ending),
    atomically and with any folders it needs."""
    fig = plots.plotCurve(folder)
    storage.atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=90), suffix=path.suffix)
    plt.close(fig)
    print(f"figure saved to {path}")


if __name__ == "__main__":
    main()
