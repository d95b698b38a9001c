"""The strong preset's training iteration by phase, this tree beside another commit's.

Run: .venv/bin/python benchmarks/iteration.py [--run-folder F] [--iterations N]
                                               [--baseline COMMIT]

A copy of the run's resumable state (`shipping.resumeFiles`: its config, checkpoint,
metrics, best and current network, memory snapshot) is resumed for N iterations by
`python -m funcs` from this tree, and, with --baseline, another copy by the same
command from a checkout of COMMIT (a git worktree in a temporary folder, its rules and
search compiled as `make` compiles them): the same run, the same config, the same work
per iteration (games, simulations, gradient steps), one tree after the other.  The
first iteration of a resume pays one-time costs (tracing, compiling, the evaluation the
resume repeats) and is left out: printed are the medians of the others' phase times
(metrics.jsonl's `seconds`), their sum, and self-play's share of it.  The copies are
deleted; the run itself is never written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cli  # noqa: E402
import runs  # noqa: E402
import shipping  # noqa: E402
import storage  # noqa: E402
from config import STRONG  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STRONG_RUN = STRONG.path("RUN_FOLDER")
"""The strong preset's run (run0002): the state the iteration benchmarks resume, which the
baseline commit of `make bench` can still read (run0006, shipped, has settings it lacks)."""
PHASES = ("selfplay", "reanalyse", "retrain", "tournament", "evaluation", "save")


def copyRun(folder: Path, into: Path) -> Path:
    """A copy of the run's resumable files in `into`/run."""
    copy = into / "run"
    for path in shipping.resumeFiles(folder):
        target = copy / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return copy


def checkout(commit: str, into: Path) -> Path:
    """A worktree of `commit` in `into`/tree, its game.py and MCTS.py compiled."""
    tree = into / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), commit], check=True)
    subprocess.run([sys.executable, "setup.py", "--quiet", "build_ext", "--inplace"], cwd=tree, check=True,
                   capture_output=True)
    return tree


def timeIterations(tree: Path, run: Path, iterations: int) -> list[dict]:
    """The phase seconds of `iterations` iterations of the run copy `run`, trained by
    `python -m funcs` from the source tree `tree` (its modules first on the path)."""
    before = len(runs.readMetrics(run))
    env = dict(os.environ, PYTHONPATH=str(tree), TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-m", "funcs", "--run-folder", str(run), "--iterations", str(iterations),
                           "--no-progress", "--workers", "0"], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"training from {tree} failed:\n{done.stderr[-2000:]}")
    return [row["seconds"] for row in runs.readMetrics(run)[before:]]


def medians(seconds: list[dict]) -> dict[str, float]:
    """Median seconds per phase of the iterations after the first, and their sum."""
    later = seconds[1:] or seconds
    phases = {phase: statistics.median(row.get(phase, 0.0) for row in later) for phase in PHASES}
    return {**phases, "total": sum(phases.values())}


def table(columns: dict[str, dict[str, float]]) -> str:
    """Phases by tree, with the ratio of the last column to the first."""
    names = list(columns)
    lines = [f"{'phase':<12}" + "".join(f"{name:>14}" for name in names)
             + (f"{'ratio':>8}" if len(names) > 1 else "")]
    for phase in (*PHASES, "total"):
        cells = [columns[name][phase] for name in names]
        ratio = f"{cells[-1] / cells[0]:>8.2f}" if len(names) > 1 and cells[0] else ""
        lines.append(f"{phase:<12}" + "".join(f"{cell:>13.2f}s" for cell in cells) + ratio)
    for name in names:
        lines.append(f"self-play's share ({name}): {columns[name]['selfplay'] / columns[name]['total']:.0%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description="The strong preset's iteration by phase, resuming a run's copy.")
    parser.add_argument("--run-folder", type=cli.runFolder, default=STRONG_RUN)
    parser.add_argument("--iterations", type=int, default=6, help="iterations per tree, the first left out")
    parser.add_argument("--baseline", default=None, help="a commit to time beside this tree")
    args = parser.parse_args(argv)
    if args.iterations < 2:
        parser.error("--iterations must be at least 2 (the first is left out)")
    try:
        shipping.resumeFiles(args.run_folder)  # its checkpoint read before a baseline is checked out and built
    except storage.RunFileError as exc:
        parser.error(f"--run-folder: {exc}")
    columns = {}
    with tempfile.TemporaryDirectory(prefix="iteration-bench-") as scratch:
        scratch_path = Path(scratch)
        try:
            trees = {}
            if args.baseline:
                trees[args.baseline[:10]] = checkout(args.baseline, scratch_path)
            trees["this tree"] = ROOT
            for name, tree in trees.items():
                work = scratch_path / name.replace(" ", "-")
                seconds = timeIterations(tree, copyRun(args.run_folder, work), args.iterations)
                columns[name] = medians(seconds)
                print(f"{name}: {json.dumps([round(sum(s.values()), 2) for s in seconds])} s per iteration",
                      flush=True)
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(scratch_path / "tree")], capture_output=True)
    print(f"One iteration, resuming a copy of {args.run_folder} with its own config (median of "
          f"{args.iterations - 1}):")
    print(table(columns))
    return columns


if __name__ == "__main__":
    main()
