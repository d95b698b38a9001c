"""Mistake rates against perfect play on Pascal Pons' six standard position sets.

Run: make pons   (or: .venv/bin/python benchmarks/pons.py [--version N] [--run-folder F]
                  [--sims S] [--limit L] [--sets L1_R1 L2_R2 ...] [--set NAME=VALUE ...])

For each set (stage of the game x difficulty), the share of positions where the move
chosen is a mistake (its win / draw / loss outcome for the player to move is worse
than the best available), for the raw network (highest policy logit among legal
moves) and for the MCTS agent (S simulations, no noise, the search's best move), beside
the published figures of AlphaZero.jl's trained MCTS player and a depth-5 minimax.
The network is version N of the run folder (default: the run's best version; 0, or a
folder that holds no run: an untrained network built from that run's config, else the
default config).  `--set` changes how the agent searches (`config.SEARCH_SETTINGS`,
e.g. --set ROOT_SEARCH=puct; not to be confused with --sets), a play-time lever that
needs no training.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import keras  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
from evaluation import PONS_SETS  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import DEFAULT, PROJECT_ROOT, SEARCH_SETTINGS, ConfigError, searchChanges, searchLabel  # noqa: E402
from game import Game, GameState  # noqa: E402

PONS_FOLDER = PROJECT_ROOT.parent / "shared" / "pons"

PonsSets = dict[str, list[tuple[GameState, int]]]
"""Pons' sets by name: each set's positions with their scores (`evaluation.loadPonsSet`)."""


def setName(name: str) -> str:
    """'L1_R2' or 'Test_L1_R2' -> 'Test_L1_R2'; unknown names are refused."""
    full = name if name.startswith("Test_") else f"Test_{name}"
    if full not in PONS_SETS:
        raise argparse.ArgumentTypeError(f"unknown set {name!r}; sets: {', '.join(PONS_SETS)}")
    return full


def loadSets(folder: Path, names: list[str], limit: int | None) -> PonsSets:
    """The first `limit` positions (None: all) of each set of `names` in `folder`, every
    set read before any is scored, so that a set file missing or not of 'moves score'
    lines (ValueError naming it) never costs the sets scored before it."""
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise ValueError(f"{folder} lacks the set files {missing} (--pons-folder: the folder of Pons' sets)")
    return {name: evaluation.loadPonsSet(folder / name, limit) for name in names}


def evaluateSets(model, cfg, sims: int, sets: PonsSets, say=lambda text: None) -> list[dict]:
    """One row per set of `sets` (`loadSets`): positions scored, mistake rates (%) of the
    network and of the agent, the reference figures, seconds taken.  `say` hears a line
    per set done."""
    rows = []
    for name, positions in sets.items():
        start = time.perf_counter()
        states = [state for state, _ in positions]
        network = evaluation.mistakeRate(states, evaluation.networkChooser(model))
        agent = evaluation.mistakeRate(states, evaluation.agentChooser(model, cfg, sims))
        stage, difficulty, reference, minimax = PONS_SETS[name]
        rows.append({"set": name, "stage": stage, "difficulty": difficulty, "positions": len(states),
                     "network": 100 * network.rate, "agent": 100 * agent.rate, "reference": reference,
                     "minimax": minimax, "seconds": time.perf_counter() - start})
        say(f"{name} ({stage} {difficulty}): network {100 * network.rate:.1f}%, agent {100 * agent.rate:.1f}% "
            f"of {len(states)} positions, {rows[-1]['seconds']:.0f} s")
    return rows


def formatTable(rows: list[dict], sims: int) -> str:
    header = (f"{'set':<11} {'stage':<7} {'difficulty':<10} {'positions':>9} {'network %':>9} "
              f"{f'agent({sims}) %':>13} {'ref MCTS %':>10} {'minimax5 %':>10} {'seconds':>8}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['set']:<11} {r['stage']:<7} {r['difficulty']:<10} {r['positions']:>9} "
                     f"{r['network']:>9.1f} {r['agent']:>13.1f} {r['reference']:>10.1f} {r['minimax']:>10.1f} "
                     f"{r['seconds']:>8.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=cli.runFolder, default=DEFAULT.path("RUN_FOLDER"),
                        help="run folder holding config.json and models/ (default: the live run)")
    parser.add_argument("--version", type=int, default=None,
                        help="saved network version to evaluate (default: the run's best version, or an "
                             "untrained network when the folder holds no run; 0: an untrained network)")
    parser.add_argument("--sims", type=int, default=None,
                        help="MCTS simulations of the agent (default: the run's EVAL_SIMS)")
    parser.add_argument("--limit", type=int, default=100, help="positions per set (default 100; 0: all)")
    parser.add_argument("--sets", type=setName, nargs="+", default=list(PONS_SETS),
                        help="sets to score, e.g. L1_R1 L2_R2 (default: all six)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER,
                        help=f"folder of the Test_L*_R* files (default: {PONS_FOLDER})")
    parser.add_argument("--set", action="append", default=[], type=cli.setting, metavar="NAME=VALUE",
                        help="a play-time search setting of the agent (repeatable; one of "
                             f"{', '.join(SEARCH_SETTINGS)})")
    args = parser.parse_args(argv)
    if args.version is None and not storage.checkpoint_path(args.run_folder).exists():
        args.version = 0
    if args.version is not None and args.version < 0:
        parser.error("--version must be 0 (untrained) or a saved version number")
    if args.sims is not None and args.sims < 1:
        parser.error("--sims must be at least 1")
    if args.limit < 0:
        parser.error("--limit must be 0 (all positions) or more")
    try:
        sets = loadSets(args.pons_folder, args.sets, args.limit or None)
        cfg = runs.runConfig(args.run_folder, DEFAULT)
        search = searchChanges(cfg, dict(args.set))
        sims = args.sims or cfg.EVAL_SIMS
        keras.utils.set_random_seed(cfg.SEED)
        version = runs.bestVersion(args.run_folder) if args.version is None else args.version
        player = runs.versionPlayer("evaluated", Game(), cfg, args.run_folder, version, mcts_simulations=sims,
                                    search=search)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    what = "untrained network" if version == 0 else f"version {version} of {args.run_folder}"
    print(f"Pons benchmark: {what}, agent with {sims} simulations{searchLabel(search)}, "
          f"up to {args.limit or 'all'} positions per set")
    rows = evaluateSets(player.model, player.config, sims, sets)
    print(formatTable(rows, sims))
    return rows


if __name__ == "__main__":
    main()
