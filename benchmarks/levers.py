"""Levers compared from one start: branches of a run trained the same iterations, each
scored against perfect play.

Run: .venv/bin/python benchmarks/levers.py --from F --out DIR --iterations N
         [--set NAME=VALUE ...] [--branch-network FILE] [--baseline FOLDER]
         [--baseline-iterations M] [--sims S]
         [--won W] [--drawn D] [--limit L] [--pons-folder P]

Two arms start from the run in F where its checkpoint says (iteration I):
- the lever: DIR/lever, a branch of F (`branches.branchRun`) with the --set changes,
  its networks from --branch-network FILE where given (a network of the lever's shape,
  such as a smaller network taught by F with benchmarks/smallnet.py);
- the baseline: DIR/baseline, a branch of F without changes, or --baseline FOLDER, a
  run that went on from the same state (the shipped run itself, trained on), so that
  its hours are not spent twice.
Each arm is trained to iteration I + N (an arm already there is not trained again, and
an interrupted one resumes: runs are crash-safe; the start is kept in DIR/start.json, so a
later call measures from it even if F trained on since), then the version that was its best at
iteration I + N is scored: mistake rates on Pons' sets (L positions each, the agent at
S simulations) and whole games against the solver (W won and D drawn starts, S
simulations).  One lever at a time, the same start and the same iterations: what
differs is the lever.  Equal iterations, not equal clock hours, so that what else ran
on the machine meanwhile does not favour either arm; the table gives each arm's hours.
A lever that makes an iteration dearer (a wider network) is compared at equal hours by
giving the baseline more iterations (--baseline-iterations M: the baseline is scored at
I + M, the lever at I + N).
Printed: a table of both arms, and per starting value the whole-game starts kept by
one arm only (`records.keptByOne`, the baseline first: the pairing of the same starts,
with a sign test); written: DIR/levers.json.  Training never reads what is scored here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from curve import scoredRow, scoreOnPons  # noqa: E402
from perfect import checkStarts, scoreVersion  # noqa: E402
from pons import PONS_FOLDER, PONS_SETS, PonsSets, loadSets  # noqa: E402
from records import keptByOne  # noqa: E402

import branches  # noqa: E402
import cli  # noqa: E402
import funcs  # noqa: E402
import loggers  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import ConfigError  # noqa: E402


def pinnedStart(source: Path, out: Path) -> int:
    """The iteration both arms start from: the source's checkpoint when the comparison
    in `out` begins, kept in out/start.json so that a later call (an arm resumed, or
    scored again) measures from the same start even if the source trained on since."""
    pinned = out / "start.json"
    if pinned.exists():
        return json.loads(pinned.read_text())["iteration"]
    start = runs.readCheckpoint(source)["iteration"]
    storage.write_json(pinned, {"from": str(source), "iteration": start})
    return start


def checkBaseline(source: Path, baseline: Path, start: int) -> None:
    """Refuse (ValueError) a --baseline run that did not pass through the start: its
    best version and promotions at iteration `start` must be the source's."""
    mine, theirs = versionAt(baseline, start), versionAt(source, start)
    if (mine[0], mine[2]) != (theirs[0], theirs[2]):
        raise ValueError(f"{baseline} did not pass through the start's state: at iteration {start} its best "
                         f"version is {mine[0]} after {mine[2]} promotions, the start's {theirs[0]} after "
                         f"{theirs[2]}")


def trainArm(source: Path, folder: Path, changes: dict, start: int, until: int, say=print, *,
             network: Path | None = None) -> None:
    """Branch `source` (at iteration `start`) into `folder` with `changes` (its
    networks from the file `network` where given) unless `folder` holds the branch
    already, then train it until its iteration `until`."""
    if not storage.checkpoint_path(folder).exists():
        if runs.readCheckpoint(source)["iteration"] != start:
            raise ValueError(f"{source} has trained on since the comparison began at iteration {start}: branch "
                             "the arms from a copy of that state")
        branches.branchRun(source, folder, changes, say, network=network)
    done = runs.readCheckpoint(folder)["iteration"]
    if done < until:
        say(f"training {folder} from iteration {done} to {until}")
        funcs.train(until - done, runs.folderConfig(folder), progress=False, say=say)
        loggers.disable_all()


def versionAt(folder: Path, iteration: int) -> tuple[int, float, int]:
    """(best version, training hours since the start, promotions) of the run in
    `folder` as of `iteration` (its metrics rows)."""
    rows = [row for row in runs.readMetrics(folder) if row["iteration"] <= iteration]
    if not rows or rows[-1]["iteration"] != iteration:
        raise ValueError(f"{folder} has not reached iteration {iteration} (its metrics end at "
                         f"{rows[-1]['iteration'] if rows else 'none'})")
    return rows[-1]["best_player_version"], runs.trainingHours(rows)[-1], sum(row["promoted"] for row in rows)


def scoreArm(folder: Path, start: int, until: int, sims: int, won: int, drawn: int, limit: int,
             sets: PonsSets) -> tuple[dict, dict]:
    """(What the arm in `folder` reached at iteration `until`, from `start`: its best
    version, the hours and promotions since `start`, Pons' sets (`sets`, of `limit`
    positions each) and the whole games' summary; the whole-game record itself, for
    pairing the arms' games).  The scores go to the arm's own records (its curve.jsonl
    row and whole-game record of that version), and a version already scored there at
    these settings is not scored again."""
    version, hours, promotions = versionAt(folder, until)
    _, start_hours, start_promotions = versionAt(folder, start)
    pons = scoredRow(folder, version, sims, limit) or scoreOnPons(folder, version, sims, limit, sets)
    games = _wholeGames(folder, version, sims, won, drawn)
    return {"folder": str(folder), "version": version, "iterations": until - start,
            "hours": round(hours - start_hours, 3), "promotions": promotions - start_promotions,
            "pons": pons["sets"], "pons_positions": limit, "whole_games": games["summary"]}, games


def _wholeGames(folder: Path, version: int, sims: int, won: int, drawn: int) -> dict:
    """The whole-game record of `version` at `sims` simulations from `won` and `drawn`
    starts of the default openings (seed 0, up to 6 moves): read where the run's
    records hold one, else played and written there (beside the version's main
    record when that one has other settings: it is never replaced)."""
    main = storage.whole_games_path(folder, version, sims)
    paths = [main, storage.whole_games_path(folder, version, sims, (won, drawn))]
    for path in paths:
        if path.exists():
            record = json.loads(path.read_text())
            if (record["won_starts"], record["drawn_starts"], record["max_opening_moves"], record["seed"]) == \
                    (won, drawn, 6, 0):
                return record
    record = scoreVersion(folder, version, sims, won, drawn, max_moves=6, seed=0, classify=False, progress=False)
    storage.write_json(paths[1] if main.exists() else main, record)
    return record


def leversTable(arms: dict[str, dict]) -> str:
    """One line per arm: version, iterations, hours, promotions, whole-game shares
    kept, then the agent's (and the raw network's) Pons mistakes per set."""
    sets = list(PONS_SETS)
    header = (f"{'arm':<9} {'version':>7} {'iters':>5} {'hours':>5} {'promo':>5} {'won kept':>8} {'drawn kept':>10}  "
              + "  ".join(f"{PONS_SETS[s][0][:3]}-{PONS_SETS[s][1][:3]} agent/net" for s in sets))
    lines = [header, "-" * len(header)]
    for name, arm in arms.items():
        games = arm["whole_games"]
        shares = [f"{100 * games[k]['share']:.1f}%" if k in games else "-" for k in ("won", "drawn")]
        cells = "  ".join(f"{arm['pons'][s]['agent']:8.1f}/{arm['pons'][s]['network']:<6.1f}" for s in sets)
        lines.append(f"{name:<9} {arm['version']:>7} {arm['iterations']:>5} {arm['hours']:>5.2f} "
                     f"{arm['promotions']:>5} {shares[0]:>8} {shares[1]:>10}  {cells}")
    return "\n".join(lines)


def checkArguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> PonsSets:
    """Refuse (parser.error) what would otherwise stop the comparison only after hours of
    training: no lever, a --set the source's config refuses, a --branch-network file
    that is not there, --won and --drawn out of bounds, a Pons set file missing or
    damaged.  Returns Pons' sets, loaded."""
    if not args.set:
        parser.error("give the lever: at least one --set NAME=VALUE")
    if args.branch_network is not None and not args.branch_network.is_file():
        parser.error(f"--branch-network {args.branch_network}: no such file")
    checkStarts(parser, args.won, args.drawn)
    try:
        runs.folderConfig(args.source).replace(**dict(args.set))
        return loadSets(args.pons_folder, list(PONS_SETS), args.limit)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=cli.runFolder, required=True,
                        help="the run both arms start from")
    parser.add_argument("--out", type=cli.outputPath(folder=True), required=True,
                        help="folder of the arms and of levers.json")
    parser.add_argument("--iterations", type=cli.positive(int), required=True,
                        help="iterations the lever arm trains (and the baseline, unless --baseline-iterations)")
    parser.add_argument("--set", action="append", default=[], type=cli.setting, metavar="NAME=VALUE",
                        help="the lever: a config value of the lever arm (repeatable)")
    parser.add_argument("--branch-network", type=Path, default=None, metavar="FILE",
                        help="the lever arm's networks start as this file, a network of the lever's config "
                             "(a student of benchmarks/smallnet.py); default: the source's own")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a run that went on from the same state, scored as the baseline arm (default: a "
                             "branch without changes, trained here)")
    parser.add_argument("--baseline-iterations", type=cli.positive(int), default=None,
                        help="iterations of the baseline arm, to compare a dearer lever at equal hours "
                             "(default: --iterations)")
    parser.add_argument("--sims", type=cli.positive(int), default=600, help="agent simulations (default 600)")
    parser.add_argument("--won", type=int, default=250, help="won starts of the whole-game benchmark (default 250)")
    parser.add_argument("--drawn", type=int, default=250, help="drawn starts (default 250)")
    parser.add_argument("--limit", type=cli.positive(int), default=1000,
                        help="positions per Pons set (default: all 1,000)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER,
                        help=f"folder of the Test_L*_R* files (default: {PONS_FOLDER})")
    args = parser.parse_args(argv)
    sets = checkArguments(parser, args)
    try:
        start = pinnedStart(args.source, args.out)
        until = {"baseline": start + (args.baseline_iterations or args.iterations), "lever": start + args.iterations}
        baseline = args.baseline or args.out / "baseline"
        if args.baseline is None:
            trainArm(args.source, baseline, {}, start, until["baseline"])
        else:
            checkBaseline(args.source, args.baseline, start)
        trainArm(args.source, args.out / "lever", dict(args.set), start, until["lever"],
                 network=args.branch_network)
        scored = {name: scoreArm(folder, start, until[name], args.sims, args.won, args.drawn, args.limit, sets)
                  for name, folder in (("baseline", baseline), ("lever", args.out / "lever"))}
        arms = {name: arm for name, (arm, _) in scored.items()}
        split = keptByOne(scored["baseline"][1], scored["lever"][1])
    except (ConfigError, ValueError, storage.RunFileError, storage.RunLockedError) as exc:
        parser.error(str(exc))
    record = {"from": str(args.source), "start_iteration": start, "lever": dict(args.set),
              "network": None if args.branch_network is None else str(args.branch_network), "sims": args.sims,
              "arms": arms, "kept_by_one_arm": split}
    storage.write_json(args.out / "levers.json", record)
    print(f"From {args.source} at iteration {start}, {arms['baseline']['iterations']} iterations of the baseline, "
          f"{arms['lever']['iterations']} of the lever; lever {dict(args.set)}"
          f"{'' if args.branch_network is None else f' with the networks of {args.branch_network}'}; "
          f"agent at {args.sims} simulations:")
    print(leversTable(arms))
    for name, counts in split.items():
        print(f"{name} starts kept by one arm only: baseline {counts['first_only']}, lever {counts['other_only']} "
              f"(sign test p = {counts['p']:.3f})")
    return record


if __name__ == "__main__":
    main()
