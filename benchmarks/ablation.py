"""Ablation of the strong preset's levers: each switched off in turn, the same training
time for each, mistakes against perfect play on the project's own benchmark set.

Run: make ablation   (or: .venv/bin/python benchmarks/ablation.py [--minutes M]
                      [--out F] [--variants strong puct ...])

Each variant is the strong preset with one lever switched off.  It trains a new run
from nothing in OUT/<variant> (resumed if the folder holds one: runs are crash-safe)
until its iterations' phase times (self-play, retraining, tournament, saving) add up
to M minutes; per-iteration evaluation is off, so it costs no training time.  Then
its best version is scored on the strong preset's benchmark set (EVAL_POSITIONS
seeded positions, the set the shipped run's metrics use): the MCTS agent at
EVAL_SIMS and the raw network.  One row per variant is appended to OUT/ablation.jsonl; the table printed
is every row there.  Only one variant trains at a time (the machine's cores are the
resource being shared out equally).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import evaluation  # noqa: E402
import funcs  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import DEFAULT, PROJECT_ROOT, STRONG, Config  # noqa: E402

VARIANTS = {
    "strong": ("the strong preset, every lever on", {}),
    "puct": ("PUCT root search instead of Gumbel (same simulations)", {"ROOT_SEARCH": "puct"}),
    "z-only": ("value target: game result only (no search value)", {"VALUE_TARGET_Q_WEIGHT": 0.0}),
    "no-merge": ("duplicate positions not merged", {"MERGE_DUPLICATES": False}),
    "tutorial-net": ("the tutorial's network (6 x 75 filters 4x4)", {"HIDDEN_CNN_LAYERS": DEFAULT.HIDDEN_CNN_LAYERS}),
    "no-random-openings": ("self-play games start from the empty board (no random opening moves)",
                           {"RANDOM_OPENING_MOVES": 0}),
}
"""name -> (what it changes, the config changes from the strong preset)."""

DEFAULT_OUT = PROJECT_ROOT / "benchmarks" / "ablation_runs"


def variantConfig(name: str, out: Path) -> Config:
    """The strong preset with variant `name`'s changes, training in out/name, without
    per-iteration evaluation and with only the main log."""
    return STRONG.replace(**VARIANTS[name][1], RUN_FOLDER=str(out / name), EVAL_POSITIONS=0,
                          LOGGERS={"main": True, "memory": False, "tourney": False, "mcts": False, "model": False})


def ablationTable(rows: list[dict]) -> str:
    """One line per variant (latest row per variant and training time), with its
    difference to the strong preset's agent at the same time."""
    latest = {(r["variant"], r["minutes"]): r for r in rows}
    width = max(len(name) for name in VARIANTS)
    header = f"{'variant':<{width}} {'minutes':>7} {'iters':>5} {'best':>4} {'agent %':>7} {'net %':>6} {'vs strong':>9}  change"
    lines = [header, "-" * len(header)]
    for (name, minutes), row in sorted(latest.items(), key=lambda item: (item[0][1], list(VARIANTS).index(item[0][0]))):
        base = latest.get(("strong", minutes))
        delta = f"{row['agent'] - base['agent']:+9.1f}" if base and name != "strong" else f"{'':>9}"
        lines.append(f"{name:<{width}} {minutes:>7g} {row['iterations']:>5} {row['best_version']:>4} {row['agent']:>7.1f} "
                     f"{row['network']:>6.1f} {delta}  {VARIANTS[name][0]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="training time per variant (default 10)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the runs go (default {DEFAULT_OUT})")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
                        help="variants to train (default: all)")
    args = parser.parse_args(argv)
    if args.minutes <= 0:
        parser.error("--minutes must be positive")
    results = args.out / "ablation.jsonl"
    positions = evaluation.benchmarkPositions(STRONG.EVAL_POSITIONS, STRONG.SEED)
    for name in args.variants:
        cfg, say = variantConfig(name, args.out), (lambda text: print(text, flush=True))
        funcs.train(None, cfg, progress=False, say=say, hours=args.minutes / 60)
        with storage.runLock(cfg.path("RUN_FOLDER")):
            run = runs.openRun(cfg, say=say)
            rates = funcs.evaluateBest(run, positions=positions)
        row = {"variant": name, "minutes": args.minutes, "iterations": run.iteration,
               "best_version": run.best_player_version, "positions": len(positions), "sims": run.cfg.EVAL_SIMS,
               "agent": round(100 * rates["mistake_rate"], 1), "network": round(100 * rates["network_mistake_rate"], 1)}
        storage.append_line(results, json.dumps(row, sort_keys=True))
        print(f"{name}: {row}", flush=True)
    rows = storage.read_json_lines(results, "ablation results", "delete that line and run its variant again")
    print(ablationTable(rows))
    return rows


if __name__ == "__main__":
    main()
