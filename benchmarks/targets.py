"""Self-play's training targets against perfect play: how often a game's result is the
position's true result, by self-play setting.

Run: .venv/bin/python benchmarks/targets.py [--run-folder F] [--version V] [--games G]
                                            [--positions N] [--arm NAME=VALUE,...] ... [--out FILE]

The value head learns the results z of the run's own games (mixed with the search's
q, `loss.valueTargets`), so it can be no righter than they are: a position whose game
was lost by a mistake later on is taught as lost though it was drawn.  Version V of
run F (default its best) plays G games against itself with the run's self-play
settings, and with each `--arm`'s changes instead (e.g. `--arm MCTS_SIMS=128` or
`--arm CPUCT=2.0,TURNS_UNTIL_TAU0=4`: a setting that makes self-play's games truer
makes its targets truer); N of the stored positions per stage are then checked against
the solver: per stage and true result, the share whose z is that result and the mean
|value target - true result|.  The solver measures only: nothing here trains.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import numpy as np  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import STRONG, ConfigError  # noqa: E402
from loss import valueTargets  # noqa: E402
from smallnet import teacherSelfplay  # noqa: E402


def targetAgreement(rows: list[dict], count: int, q_weight: float, seed: int = 0) -> list[dict]:
    """The memory's value targets against perfect play: `count` rows drawn per stage
    (`evaluation.phaseOf`), grouped by the solver's result t for the player to move;
    per group the positions, the share whose game result z is t, and the mean |value
    target - t| (the target the run trains on: z mixed with the search's q by
    `q_weight`)."""
    rng = np.random.default_rng(seed)
    stages = np.array([evaluation.phaseOf(int(np.count_nonzero(row["state"].board))) for row in rows])
    groups = []
    for stage, _ in evaluation.PHASES:
        members = np.flatnonzero(stages == stage)
        picked = [rows[i] for i in rng.choice(members, size=min(count, len(members)), replace=False)]
        results = np.array([evaluation.outcomeClass(max(evaluation.solverScores(row["state"]).values()))
                            for row in picked])
        targets = valueTargets(picked, q_weight)
        z = np.array([row["value"] for row in picked])
        for result, name in ((1, "won"), (0, "drawn"), (-1, "lost")):
            chosen = results == result
            if chosen.any():
                groups.append({"stage": stage, "result": name, "positions": int(chosen.sum()),
                               "z_is_result": float(np.mean(z[chosen] == result)),
                               "target_error": float(np.mean(np.abs(targets[chosen] - result)))})
    return groups


def stageSummary(groups: list[dict]) -> dict[str, dict]:
    """Per stage, over its results together: positions, the share whose z is the true
    result, the mean |value target - true result|."""
    summary = {}
    for stage, _ in evaluation.PHASES:
        mine = [g for g in groups if g["stage"] == stage]
        positions = sum(g["positions"] for g in mine)
        if positions:
            summary[stage] = {"positions": positions,
                              "z_is_result": sum(g["z_is_result"] * g["positions"] for g in mine) / positions,
                              "target_error": sum(g["target_error"] * g["positions"] for g in mine) / positions}
    return summary


def targetTable(groups: list[dict]) -> str:
    lines = [f"{'stage':<7} {'result':<6} {'positions':>9} {'z = result':>10} {'|target - result|':>17}"]
    lines += [f"{g['stage']:<7} {g['result']:<6} {g['positions']:>9} {g['z_is_result']:>10.2f} "
              f"{g['target_error']:>17.3f}" for g in groups]
    lines += [f"{stage:<7} {'all':<6} {s['positions']:>9} {s['z_is_result']:>10.3f} {s['target_error']:>17.3f}"
              for stage, s in stageSummary(groups).items()]
    return "\n".join(lines)


def armChanges(text: str) -> dict:
    """'MCTS_SIMS=128,CPUCT=2.0' -> {'MCTS_SIMS': 128, 'CPUCT': 2.0} (`cli.setting` each)."""
    return dict(cli.setting(part) for part in text.split(","))


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=STRONG.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--version", type=int, default=None, help="the network that plays (default: the run's best)")
    parser.add_argument("--games", type=cli.positive(int), default=512, help="games per arm (default 512)")
    parser.add_argument("--positions", type=cli.positive(int), default=1500,
                        help="positions per stage checked against the solver (default 1500)")
    parser.add_argument("--arm", action="append", type=armChanges, default=None, metavar="NAME=VALUE,...",
                        help="self-play settings changed for one arm (repeatable; default: one arm, the run's own)")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    folder = args.run_folder
    cfg = runs.runConfig(folder)
    arms = args.arm or [{}]
    try:
        configs = [cfg.replace(**changes) for changes in arms]
    except ConfigError as exc:
        parser.error(str(exc))
    version = runs.bestVersion(folder) if args.version is None else args.version
    if not storage.model_path(folder, version).exists():
        parser.error(f"{folder} has no version {version} ({runs.savedVersionsList(folder)})")
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.model_path(folder, version))
    results = []
    for changes, arm_cfg in zip(arms, configs):
        keras.utils.set_random_seed(cfg.SEED)
        start = time.perf_counter()
        rows = teacherSelfplay(network, arm_cfg, args.games, say=lambda text: None)
        played = time.perf_counter() - start
        groups = targetAgreement(rows, args.positions, arm_cfg.VALUE_TARGET_Q_WEIGHT, cfg.SEED)
        print(f"Version {version} of {folder}, self-play {changes or 'as the run plays it'}: {args.games} games, "
              f"{len(rows):,} positions stored ({played:.0f} s); {args.positions} a stage against the solver "
              f"({time.perf_counter() - start - played:.0f} s)\n{targetTable(groups)}", flush=True)
        results.append({"changes": changes, "positions_stored": len(rows), "groups": groups,
                        "stages": stageSummary(groups)})
    if args.out is not None:
        storage.write_json(args.out, {"run_folder": str(folder), "version": version, "games": args.games,
                                      "arms": results})
    return results


if __name__ == "__main__":
    main()
