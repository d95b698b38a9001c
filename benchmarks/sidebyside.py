"""Two runs side by side at equal iterations or at equal hours, from their metrics alone: a run started
afresh with a lever (`python -m funcs --preset strong --run-folder F --set NAME=VALUE`) against the run
that trained the same preset without it.

Run: .venv/bin/python benchmarks/sidebyside.py BASELINE LEVER [--window W [--cost R] | --hours H]

Both runs score their best network after every iteration on the same seeded benchmark positions
(EVAL_POSITIONS of SEED, `evaluation.benchmarkPositions`): the agent at EVAL_SIMS simulations and the
raw network, mistakes against perfect play. One score on 200 positions has a standard error of some 2.5
points, so the table gives each run's mean over windows of W iterations, up to the iteration the shorter
run has reached, beside the hours each took (a run on another host or an older commit takes other hours
for the same iterations: iterations, not hours, are compared) and its promotions. A lever that makes an
iteration dearer (a deeper network) is compared at equal cost: with --cost R (the lever's iteration R
times the baseline's on one host, measured), the lever's iterations 1..i stand beside the baseline's
1..R*i; or at equal training hours (--hours H: windows of H hours of each run's clock, up to the hours
the shorter run has trained; each run's hours include its host's speed, so they compare fairly only
between runs on hosts alike). The two runs must share their benchmark positions (EVAL_POSITIONS and
SEED); their iterations are compared one for one (or hour for hour). Where the lever's versions have
been scored on Pons' sets (`benchmarks/curve.py`, its curve.jsonl), each is printed beside the
baseline's scored version nearest in iteration (or in hours) at the same simulations and positions.
Reads only metrics.jsonl, curve.jsonl and config.json; plays nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cli  # noqa: E402
import loggers as lg  # noqa: E402
from config import ConfigError  # noqa: E402

with lg.nativeStderrTo(os.devnull):  # TensorFlow's start-up notices (runs reads configs through keras' modules)
    import runs
    import storage
    from evaluation import PONS_SETS


@dataclass(frozen=True)
class Window:
    """One run's iterations `first`..`last` (both counted): the mean mistake rates (fractions) of its best
    network after each, the agent's and the raw network's, its training hours at `last`, and how many of
    those iterations promoted a network."""
    first: int
    last: int
    agent: float
    network: float
    hours: float
    promotions: int


def windows(rows: list[dict], width: int, iterations: int, scale: float = 1.0) -> list[Window]:
    """The first `iterations` metrics rows of a run, in windows of `width` iterations (the last one
    shorter where `iterations` is not a multiple), each iteration's scores those of the best network after
    it; with `scale` s, window k spans the run's iterations s times further (rows round(s * k * width) up
    to round(s * (k + 1) * width), the run `scale` times cheaper an iteration than the one it stands beside).
    Rows without a score (EVAL_POSITIONS 0) cannot be compared: ValueError names the iteration."""
    bounds = [round(scale * edge) for edge in [*range(0, iterations, width), iterations]]
    if bounds[-1] > len(rows):
        raise ValueError(f"{bounds[-1]} iterations to compare, the run has trained {len(rows)}")
    _checkScored(rows[:bounds[-1]])
    hours = runs.trainingHours(rows)
    return [_window(rows[start:end], hours[end - 1]) for start, end in zip(bounds, bounds[1:])]


def hourWindows(rows: list[dict], width: float, until: float) -> list[Window | None]:
    """A run's iterations that ended within its first `until` training hours, in windows of `width` hours
    of its clock (window k holds the iterations ending in (k * width, (k + 1) * width]; the last one is
    shorter where `until` is not a multiple), each averaged as by `windows`; None for a window in which no
    iteration ended (an iteration longer than `width`). ValueError as `windows`."""
    hours = runs.trainingHours(rows)
    ended = [i for i, at in enumerate(hours) if at <= until + _SLACK]
    _checkScored([rows[i] for i in ended])
    members: dict[int, list[int]] = {}
    for i in ended:
        members.setdefault(max(0, math.ceil(hours[i] / width - _SLACK) - 1), []).append(i)
    return [_window([rows[i] for i in members[bucket]], hours[members[bucket][-1]]) if bucket in members else None
            for bucket in range(max(1, math.ceil(until / width - _SLACK)))]


_SLACK = 1e-9
"""Hours that differ by less than this are equal (sums of phase times in floating point)."""


def _checkScored(rows: list[dict]) -> None:
    """ValueError naming the first row without a benchmark score (EVAL_POSITIONS 0): it cannot be compared."""
    unscored = [row["iteration"] for row in rows if row.get("mistake_rate") is None]
    if unscored:
        raise ValueError(f"iteration {unscored[0]} has no benchmark score (EVAL_POSITIONS 0): nothing to compare")


def _window(part: list[dict], hours: float) -> Window:
    """Consecutive metrics rows as one window, `hours` the run's clock at the last of them."""
    return Window(part[0]["iteration"], part[-1]["iteration"],
                  sum(row["mistake_rate"] for row in part) / len(part),
                  sum(row["network_mistake_rate"] for row in part) / len(part),
                  hours, sum(bool(row.get("promoted")) for row in part))


def oneScoreError(rate: float, positions: int) -> float:
    """The standard error of one mistake rate `rate` measured on `positions` positions (binomial)."""
    return math.sqrt(rate * (1 - rate) / positions)


def table(baseline: list[Window], lever: list[Window]) -> str:
    """The two runs' windows as a Markdown table, mistakes in percent, the lever's agent minus the baseline's;
    the iterations the baseline's, and the lever's beside them where they differ (`windows`' scale)."""
    alike = all((old.first, old.last) == (new.first, new.last) for old, new in zip(baseline, lever))
    lines = [f"| iterations{'' if alike else ' (baseline, lever)'} | baseline hours | baseline agent / network % "
             "| lever hours | lever agent / network % | lever - baseline, agent | promotions (baseline, lever) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for old, new in zip(baseline, lever):
        span = f"{old.first}-{old.last}" + ("" if alike else f", {new.first}-{new.last}")
        lines.append(f"| {span} | {old.hours:.2f} | {100 * old.agent:.1f} / {100 * old.network:.1f} "
                     f"| {new.hours:.2f} | {100 * new.agent:.1f} / {100 * new.network:.1f} "
                     f"| {100 * (new.agent - old.agent):+.1f} | {old.promotions}, {new.promotions} |")
    return "\n".join(lines)


def hourTable(baseline: list[Window | None], lever: list[Window | None], width: float, until: float) -> str:
    """The two runs' hour windows (`hourWindows`) as a Markdown table: each run's iterations in the window
    and its means in percent, the lever's agent minus the baseline's; "-" where a run ended no iteration."""
    lines = ["| hours | baseline iterations | baseline agent / network % | lever iterations | lever agent / network % "
             "| lever - baseline, agent | promotions (baseline, lever) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for bucket, (old, new) in enumerate(zip(baseline, lever)):
        cells = [f"{bucket * width:.2f}-{min((bucket + 1) * width, until):.2f}"]
        for window in (old, new):
            cells += ([f"{window.first}-{window.last}", f"{100 * window.agent:.1f} / {100 * window.network:.1f}"]
                      if window else ["-", "-"])
        cells.append(f"{100 * (new.agent - old.agent):+.1f}" if old and new else "-")
        cells.append(", ".join(str(window.promotions) if window else "-" for window in (old, new)))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ponsBeside(baseline: list[dict], lever: list[dict], by: str = "iteration",
               scale: float = 1.0) -> list[tuple[dict, dict]]:
    """Each of the lever's curve rows (`benchmarks/curve.py`) with the baseline's row nearest to it in
    iteration (`by` "iteration"; `scale` times the lever's, as `windows`) or training hours (`by` "hours")
    among those of the same simulations and positions (the earlier on a tie); rows without such a partner
    are left out."""
    pairs = []
    for row in sorted(lever, key=lambda row: row[by]):
        alike = [old for old in baseline if (old["sims"], old["limit"]) == (row["sims"], row["limit"])]
        if alike:
            pairs.append((min(alike, key=lambda old: (abs(old[by] - scale * row[by]), old[by])), row))
    return pairs


def ponsTable(pairs: list[tuple[dict, dict]], by: str = "iteration") -> str:
    """Pons' sets beside each other as a Markdown table: the agent's mistakes in percent, baseline / lever, set by
    set from end-easy to begin-hard; each version with its iteration or hours (`by`, as `ponsBeside`)."""
    def label(row: dict) -> str:
        return f"{row['version']} ({row['iteration'] if by == 'iteration' else format(row['hours'], '.2f') + ' h'})"
    lines = [f"| baseline version ({by}) | lever version ({by}) | sims, positions | "
             + " | ".join(f"{stage}-{difficulty}" for stage, difficulty, *_ in PONS_SETS.values()) + " |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in PONS_SETS) + " |"]
    for old, new in pairs:
        lines.append(f"| {label(old)} | {label(new)} | {new['sims']}, {new['limit']} | "
                     + " | ".join(f"{old['sets'][name]['agent']:.1f} / {new['sets'][name]['agent']:.1f}"
                                  for name in PONS_SETS) + " |")
    return "\n".join(lines)


def compare(baseline_folder: Path, lever_folder: Path, width: int, hours: float | None = None,
            cost: float = 1.0) -> str:
    """The side-by-side report of two run folders (see the module's docstring): windows of `width` iterations
    (the baseline's `cost` times as many), or of `hours` training hours where given; ConfigError where their
    benchmark positions differ or either has no iteration yet."""
    configs = [runs.runConfig(folder) for folder in (baseline_folder, lever_folder)]
    if len({(cfg.EVAL_POSITIONS, cfg.SEED) for cfg in configs}) > 1:
        raise ConfigError("the runs score different benchmark positions (EVAL_POSITIONS, SEED): "
                          + ", ".join(f"{cfg.EVAL_POSITIONS}, {cfg.SEED}" for cfg in configs))
    both = [runs.readMetrics(folder) for folder in (baseline_folder, lever_folder)]
    iterations = min(int(len(both[0]) / cost + 1e-9), len(both[1]))
    if iterations == 0:
        raise ConfigError("a run has trained no iteration yet: nothing to compare")
    if hours is None:
        old, new = windows(both[0], width, iterations, cost), windows(both[1], width, iterations)
        scope = (f"the first {iterations} iterations, means over {width}" if cost == 1 else
                 f"the lever's first {iterations} iterations beside the baseline's {round(cost * iterations)} "
                 f"(an iteration of the lever costing {cost:g} of the baseline's), means over {width} of the lever's")
        body, by, rate = table(old, new), "iteration", old[-1].agent
    else:
        until = min(runs.trainingHours(rows)[-1] for rows in both)
        oldHours, newHours = (hourWindows(rows, hours, until) for rows in both)
        scored = [window for window in oldHours if window]
        if not scored:
            raise ConfigError(f"the baseline ended no iteration within the lever's {until:.2f} hours: "
                              "nothing to compare")
        scope = f"the first {until:.2f} training hours of each, means over {hours:g} hours"
        body, by, rate = hourTable(oldHours, newHours, hours, until), "hours", scored[-1].agent
    return (f"baseline {baseline_folder}, lever {lever_folder}: {scope}; one score on {configs[0].EVAL_POSITIONS} "
            f"positions has a standard error of {100 * oneScoreError(rate, configs[0].EVAL_POSITIONS):.1f} points "
            f"at {100 * rate:.1f}%\n\n" + body
            + _ponsPart(baseline_folder, lever_folder, by, cost if hours is None else 1.0))


def _ponsPart(baseline_folder: Path, lever_folder: Path, by: str, scale: float) -> str:
    """The Pons' sets part of the report: nothing where no lever version has a partner to stand beside."""
    pairs = ponsBeside(runs.readCurve(baseline_folder), runs.readCurve(lever_folder), by, scale)
    return ("\n\nPons' sets, the agent's mistakes in %, baseline / lever (benchmarks/curve.py):\n\n"
            + ponsTable(pairs, by) if pairs else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", type=cli.runFolder, help="the run without the lever")
    parser.add_argument("lever", type=cli.runFolder, help="the run with it")
    means = parser.add_mutually_exclusive_group()
    means.add_argument("--window", type=cli.positive(int), default=50, help="iterations per mean (default 50)")
    means.add_argument("--hours", type=cli.positive(float),
                       help="compare at equal training hours instead, H hours per mean")
    parser.add_argument("--cost", type=cli.positive(float), default=1.0,
                        help="the lever's iteration costs R times the baseline's (measured on one host): its "
                             "iterations 1..i beside the baseline's 1..R*i (default 1)")
    args = parser.parse_args(argv)
    if args.hours is not None and args.cost != 1.0:
        parser.error("--cost compares iterations; --hours compares the runs' clocks: give one of them")
    try:
        print(compare(args.baseline, args.lever, args.window, args.hours, args.cost))
    except (ConfigError, ValueError, storage.RunFileError) as error:
        parser.exit(1, f"{error}\n")


if __name__ == "__main__":
    main()
