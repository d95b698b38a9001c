"""Self-play's training targets against perfect play: how often a game's result is the
position's true result, by self-play setting.

Run: .venv/bin/python benchmarks/targets.py [--run-folder F] [--version V] [--games G]
                                            [--positions N] [--arm NAME=VALUE,...] ... [--out FILE]
                                            [--search-sims N ...] [--search-positions K] [--search-set ...]
                                            [--by-stones] [--pons-set NAME ...] [--record RECORD]

The value head learns the results z of the run's own games (mixed with the search's q,
`loss.valueTargets` and `loss.qWeights`), so it can be no righter than they are: a
position whose game was lost by a mistake later on is taught as lost though it was
drawn. Version V of run F (default its best) plays G games against itself with the run's
self-play settings, and with each `--arm`'s changes instead (e.g. `--arm MCTS_SIMS=128`
or `--arm CPUCT=2.0,TURNS_UNTIL_TAU0=4`: a setting that makes self-play's games truer
makes its targets truer); N of the stored positions per stage are then checked against
the solver: per stage and true result, the share whose z is that result and the mean
|value target - true result|; with `--by-stones` z's and the search's stored q's by
stones on the board. With `--search-sims`, the first K of those positions per stage are
also valued by the network alone and by a new search of each N simulations (the run's
search, or `--search-set`'s): whether a deeper search's value of a position is truer
than the game's result, the fixed point the targets would move to if training learnt
from it. With `--pons-set` the values are checked on Pons' positions instead (a fixed
set: versions compare on the same positions), and no games are played; with `--record`
on the positions in which a whole-game record's agent moved (`benchmarks/perfect.py`),
by part of the game (a kept game; before, at or after the first mistake of one not
kept) and stage: the positions against the solver, where its games are lost, which
self-play may not visit. The solver measures only: nothing here trains.
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
from agent import Agent  # noqa: E402
from config import SHIPPED, ConfigError  # noqa: E402
from game import GameState  # noqa: E402
from loss import qWeights, valueTargets  # noqa: E402
from pons import PONS_FOLDER, PonsSets, loadSets, setName  # noqa: E402
from smallnet import teacherSelfplay  # noqa: E402


def stageOf(row: dict) -> str:
    """The stage of a row's position (`evaluation.phaseOf`)."""
    return evaluation.phaseOf(row["state"].stones)


STAGES = [stage for stage, _ in evaluation.PHASES]


def stagePicks(rows: list[dict], count: int, seed: int = 0, labelOf=stageOf,
               labels: list[str] = STAGES) -> list[tuple[str, list[dict], np.ndarray]]:
    """Up to `count` rows drawn per stage (or per label of `labels`, `labelOf(row)`
    naming a row's), each with the solver's result t (1 won, 0 drawn, -1 lost) for its
    player to move: the positions every source of values is checked on."""
    rng = np.random.default_rng(seed)
    named = np.array([labelOf(row) for row in rows])
    picks = []
    for label in labels:
        members = np.flatnonzero(named == label)
        picked = [rows[i] for i in rng.choice(members, size=min(count, len(members)), replace=False)]
        results = np.array([evaluation.solvedPosition(row["state"])[0] for row in picked])
        picks.append((label, picked, results))
    return picks


def _byResult(stage: str, results: np.ndarray, measures: dict[str, np.ndarray]) -> list[dict]:
    """One group per true result present: its positions and each measure's mean over them."""
    groups = []
    for result, name in ((1, "won"), (0, "drawn"), (-1, "lost")):
        chosen = results == result
        if chosen.any():
            groups.append({"stage": stage, "result": name, "positions": int(chosen.sum()),
                           **{key: float(np.mean(values[chosen])) for key, values in measures.items()}})
    return groups


def targetAgreement(rows: list[dict], count: int, cfg, seed: int = 0) -> list[dict]:
    """The memory's value targets against perfect play (`stagePicks`), grouped by the
    true result t for the player to move: per group the positions, the share whose game
    result z is t, and the mean |value target - t| (the target `cfg`'s run trains on:
    z mixed with the search's q by `loss.qWeights`)."""
    return targetGroups(stagePicks(rows, count, seed), cfg)


def targetGroups(picks: list[tuple[str, list[dict], np.ndarray]], cfg) -> list[dict]:
    """`targetAgreement` of positions already drawn (`stagePicks`)."""
    return [group for stage, picked, results in picks
            for group in _byResult(stage, results, {
                "z_is_result": np.array([row["value"] for row in picked]) == results,
                "target_error": np.abs(valueTargets(picked, qWeights(picked, cfg)) - results)})]


def valueAgreement(picks: list[tuple[str, list[dict], np.ndarray]], valuesOf) -> list[dict]:
    """Values of the picked positions against perfect play: `valuesOf(rows)` gives one
    value in [-1, 1] per row for its player to move (the network's, or a new search's
    q).  Per stage and true result t: the positions, the share whose nearest result
    (-1, 0 or 1) is t, and the mean |value - t|."""
    groups = []
    for stage, picked, results in picks:
        values = np.asarray(valuesOf(picked), dtype=np.float64)
        groups += _byResult(stage, results, {"value_is_result": np.rint(values) == results,
                                             "value_error": np.abs(values - results)})
    return groups


def searchValues(agent: Agent, rows: list[dict], chunk: int = 256) -> np.ndarray:
    """Each row's position searched anew by `agent` (`Agent.reanalyse` on copies, so
    the rows keep their targets): q, the search's value of its best move for the
    player to move.  `chunk` positions at a time, to bound the trees held at once."""
    values = []
    for first in range(0, len(rows), chunk):
        copies = [dict(row) for row in rows[first:first + chunk]]
        agent.reanalyse(copies)
        values += [row["q"] for row in copies]
    return np.array(values)


def networkValues(network, rows: list[dict]) -> np.ndarray:
    """The network's value of each row's position, for its player to move."""
    return network.predict(network.convertToModelInputs([row["state"] for row in rows]))[0]


def stageSummary(groups: list[dict]) -> dict[str, dict]:
    """Per label (a stage, or a Pons set), over its results together: the positions
    and every measure of the groups (`targetAgreement`, `valueAgreement`) weighted by
    their positions."""
    summary = {}
    for label in dict.fromkeys(g["stage"] for g in groups):
        mine = [g for g in groups if g["stage"] == label]
        positions = sum(g["positions"] for g in mine)
        measures = [key for key in mine[0] if key not in ("stage", "result", "positions")]
        summary[label] = {"positions": positions,
                          **{key: sum(g[key] * g["positions"] for g in mine) / positions for key in measures}}
    return summary


def targetTable(groups: list[dict]) -> str:
    lines = [f"{'stage':<7} {'result':<6} {'positions':>9} {'z = result':>10} {'|target - result|':>17}"]
    lines += [f"{g['stage']:<7} {g['result']:<6} {g['positions']:>9} {g['z_is_result']:>10.2f} "
              f"{g['target_error']:>17.3f}" for g in groups]
    lines += [f"{stage:<7} {'all':<6} {s['positions']:>9} {s['z_is_result']:>10.3f} {s['target_error']:>17.3f}"
              for stage, s in stageSummary(groups).items()]
    return "\n".join(lines)


def stonesTable(picks: list[tuple[str, list[dict], np.ndarray]], bucket: int = 3) -> str:
    """The picked positions by stones on the board, `bucket` at a time: how often the
    game's result z and the search's stored q (its nearest result) are the true result
    t, and their mean |z - t| and (q - t)^2 (what the value head's squared error
    learns from): which of the two is the truer target at each depth."""
    rows = [(row["state"].stones, row["value"], row["q"], t)
            for _, picked, results in picks for row, t in zip(picked, results)]
    stones, z, q, t = (np.array(column, dtype=np.float64) for column in zip(*rows))
    lines = [f"{'stones':<7} {'positions':>9} {'z = t':>6} {'|z - t|':>8} {'(z - t)^2':>9} {'q ~ t':>6} "
             f"{'|q - t|':>8} {'(q - t)^2':>9}"]
    for first in range(0, 42, bucket):
        chosen = (stones >= first) & (stones < first + bucket)
        if chosen.any():
            zc, qc, tc = z[chosen], q[chosen], t[chosen]
            lines.append(f"{first:>2}-{first + bucket - 1:<4} {chosen.sum():>9} {np.mean(zc == tc):>6.3f} "
                         f"{np.mean(np.abs(zc - tc)):>8.3f} {np.mean((zc - tc) ** 2):>9.3f} "
                         f"{np.mean(np.rint(qc) == tc):>6.3f} {np.mean(np.abs(qc - tc)):>8.3f} "
                         f"{np.mean((qc - tc) ** 2):>9.3f}")
    return "\n".join(lines)


def valueTable(sources: dict[str, list[dict]]) -> str:
    """Per source of values (`valueAgreement` groups) and label (stage or set): the
    share whose nearest result is the true one and the mean |value - result|."""
    labels = list(dict.fromkeys(g["stage"] for groups in sources.values() for g in groups))
    width = max(len(label) for label in labels) + 16
    lines = [f"{'values':<22}" + "".join(f"{label + ': nearest = t':>{width}} {'|v - t|':>8}" for label in labels)]
    for name, groups in sources.items():
        summary = stageSummary(groups)
        lines.append(f"{name:<22}" + "".join(
            f"{summary[label]['value_is_result']:>{width}.3f} {summary[label]['value_error']:>8.3f}" if label in summary
            else f"{'':>{width}} {'':>8}" for label in labels))
    return "\n".join(lines)


def ponsPicks(sets: PonsSets) -> list[tuple[str, list[dict], np.ndarray]]:
    """Pons' sets (`pons.loadSets`) as `stagePicks` would give them, one label per set:
    each set's positions (as rows holding their state) and their solved results for the
    player to move."""
    picks = []
    for name, solved in sets.items():
        stage, difficulty, _, _ = evaluation.PONS_SETS[name]
        picks.append((f"{stage}-{difficulty}", [{"state": state} for state, _ in solved],
                      np.array([evaluation.outcomeClass(score) for _, score in solved])))
    return picks


RECORD_PARTS = ("kept game", "before the 1st mistake", "at the 1st mistake", "after the 1st mistake")
"""Where a whole-game position falls: in a game the agent kept (it made no mistake), or
before, at or after the first mistake of a game it did not keep."""


def recordPart(game: evaluation.WholeGame, ply: int) -> str:
    """The part of the game (`RECORD_PARTS`) the agent's position at `ply` is in."""
    if not game.mistakes:
        return RECORD_PARTS[0]
    first = game.mistakes[0].ply
    return RECORD_PARTS[1] if ply < first else RECORD_PARTS[2] if ply == first else RECORD_PARTS[3]


def recordPicks(path: Path, count: int, seed: int = 0) -> list[tuple[str, list[dict], np.ndarray]]:
    """The positions in which a whole-game record's agent moved (`WholeGame.playerPlies`),
    as `stagePicks` gives them, up to `count` per part of the game (`recordPart`) and
    stage, labelled "part, stage", with their solved results for the agent."""
    record = storage.read_json(path, "whole-game record", "score the version again with benchmarks/perfect.py")
    rows = [{"state": GameState.fromMoves(game.moves[:ply]), "part": recordPart(game, ply)}
            for game in evaluation.readWholeGames(record) for ply in game.playerPlies]
    picks = stagePicks(rows, count, seed, lambda row: f"{row['part']}, {stageOf(row)}",
                       [f"{part}, {stage}" for part in RECORD_PARTS for stage in STAGES])
    return [(label, picked, results) for label, picked, results in picks if picked]


def labelTable(sources: dict[str, list[dict]]) -> str:
    """`valueTable` turned on its side, a line per label: for labels too many for columns."""
    summaries = {name: stageSummary(groups) for name, groups in sources.items()}
    labels = list(dict.fromkeys(label for summary in summaries.values() for label in summary))
    width = max(len(label) for label in labels)
    lines = [f"{'positions':>{width + 11}}" + "".join(f"  {name + ': nearest = t':>26} {'|v - t|':>7}"
                                                     for name in sources)]
    for label in labels:
        positions = next(summary[label]["positions"] for summary in summaries.values() if label in summary)
        lines.append(f"{label:<{width}} {positions:>10}" + "".join(
            f"  {summary[label]['value_is_result']:>26.3f} {summary[label]['value_error']:>7.3f}"
            for summary in summaries.values()))
    return "\n".join(lines)


def checkValues(picks: list[tuple[str, list[dict], np.ndarray]], network, cfg, sims: list[int],
                positions: int, table=valueTable) -> dict[str, list[dict]]:
    """The network's values and those of new searches of each of `sims` simulations
    (`cfg`'s search otherwise) on the first `positions` picked per label, against the
    true results (`valueAgreement`), printed as they come (by `table`)."""
    first = [(stage, picked[:positions], results[:positions]) for stage, picked, results in picks]
    sources = {"network": valueAgreement(first, lambda rows: networkValues(network, rows))}
    for count in sims:
        start = time.perf_counter()
        agent = Agent.fromConfig("search", cfg, network, seed=cfg.SEED, mcts_simulations=count)
        sources[f"search {count} sims"] = valueAgreement(first, lambda rows: searchValues(agent, rows))
        print(f"  searched at {count} simulations ({time.perf_counter() - start:.0f} s)", flush=True)
    print(table(sources), flush=True)
    return sources


def armChanges(text: str) -> dict:
    """'MCTS_SIMS=128,CPUCT=2.0' -> {'MCTS_SIMS': 128, 'CPUCT': 2.0} (`cli.setting` each)."""
    return dict(cli.setting(part) for part in text.split(","))


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=cli.runFolder, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--version", type=int, default=None, help="the network that plays (default: the run's best)")
    parser.add_argument("--games", type=cli.positive(int), default=512, help="games per arm (default 512)")
    parser.add_argument("--positions", type=cli.positive(int), default=1500,
                        help="positions per stage checked against the solver (default 1500)")
    parser.add_argument("--arm", action="append", type=armChanges, default=None, metavar="NAME=VALUE,...",
                        help="self-play settings changed for one arm (repeatable; default: one arm, the run's own)")
    parser.add_argument("--search-sims", type=cli.positive(int), nargs="+", default=[], metavar="N",
                        help="also check the network's values and new searches' values of the first positions "
                             "drawn per stage, a search of N simulations each (e.g. 32 600 2400)")
    parser.add_argument("--search-positions", type=cli.positive(int), default=500,
                        help="positions per stage searched anew (default 500; at most --positions)")
    parser.add_argument("--search-set", type=armChanges, default={}, metavar="NAME=VALUE,...",
                        help="settings of those searches (default the run's own, e.g. ROOT_SEARCH=puct,CPUCT=2.0)")
    parser.add_argument("--by-stones", action="store_true",
                        help="also print z's and the stored q's truth by stones on the board")
    parser.add_argument("--pons-set", type=setName, action="append", default=[], metavar="NAME",
                        help="check the network's values (and --search-sims searches') on this Pons set "
                             "(e.g. L1_R3), --search-positions of its positions, instead of self-play's "
                             "(repeatable)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER, help="where Pons' sets are")
    parser.add_argument("--record", type=Path, default=None, metavar="RECORD",
                        help="check the values on the positions a whole-game record's agent moved in "
                             "(benchmarks/perfect.py's JSON), --search-positions of them per stage, instead of "
                             "self-play's")
    parser.add_argument("--out", type=cli.outputPath(), default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    folder = args.run_folder
    arms = args.arm or [{}]
    try:
        cfg = runs.runConfig(folder)
        configs = [cfg.replace(**changes) for changes in arms]
        search_cfg = cfg.replace(**args.search_set)
        version = runs.bestVersion(folder) if args.version is None else args.version
        pons_sets = loadSets(args.pons_folder, args.pons_set, args.search_positions)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    if not storage.model_path(folder, version).exists():
        parser.error(f"{folder} has no version {version} ({runs.savedVersionsList(folder)})")
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.model_path(folder, version))
    if args.pons_set:
        print(f"Version {version} of {folder} on Pons' sets:", flush=True)
        values = checkValues(ponsPicks(pons_sets), network, search_cfg,
                             args.search_sims, args.search_positions)
        results = [{"pons_sets": args.pons_set, "values": values}]
        if args.out is not None:
            storage.write_json(args.out, {"run_folder": str(folder), "version": version, "pons": results[0]})
        return results
    if args.record:
        print(f"Version {version} of {folder} on the positions of {args.record}:", flush=True)
        values = checkValues(recordPicks(args.record, args.search_positions, cfg.SEED), network, search_cfg,
                             args.search_sims, args.search_positions, labelTable)
        if args.out is not None:
            storage.write_json(args.out, {"run_folder": str(folder), "version": version,
                                          "record": {"path": str(args.record), "values": values}})
        return [{"record": str(args.record), "values": values}]
    results = []
    for changes, arm_cfg in zip(arms, configs):
        keras.utils.set_random_seed(cfg.SEED)
        start = time.perf_counter()
        rows = teacherSelfplay(network, arm_cfg, args.games, say=lambda text: None)
        played = time.perf_counter() - start
        picks = stagePicks(rows, args.positions, cfg.SEED)
        groups = targetGroups(picks, arm_cfg)
        print(f"Version {version} of {folder}, self-play {changes or 'as the run plays it'}: {args.games} games, "
              f"{len(rows):,} positions stored ({played:.0f} s); {args.positions} a stage against the solver "
              f"({time.perf_counter() - start - played:.0f} s)\n{targetTable(groups)}", flush=True)
        if args.by_stones:
            print(stonesTable(picks), flush=True)
        results.append({"changes": changes, "positions_stored": len(rows), "groups": groups,
                        "stages": stageSummary(groups),
                        "values": checkValues(picks, network, search_cfg, args.search_sims, args.search_positions)
                        if args.search_sims else {}})
    if args.out is not None:
        storage.write_json(args.out, {"run_folder": str(folder), "version": version, "games": args.games,
                                      "arms": results})
    return results


if __name__ == "__main__":
    main()
