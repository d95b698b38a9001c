"""More fitting on the data a run already has: does its network get better?

Run: .venv/bin/python benchmarks/refit.py [--run-folder F] [--version V] [--memory FILE ...]
                                          [--replays 15,30] [--sets L1_R3 ...] [--limit L]
                                          [--selfplay-games G] [--set NAME=VALUE ...]
                                          [--filters W] [--targets N] [--truth]
                                          [--truth-labels FILE] [--record-positions RECORD ...]
                                          [--save-network FILE] [--out FILE]

Two training levers act only on the learner: more gradient steps on the same self-play
data, and a longer memory window (older positions kept).  Neither needs new self-play
to screen: version V of run F (default its best) is retrained further with the run's
own learner (`Agent.replay`: TRAINING_LOOPS fits of BATCH_SIZE positions each, the
learning rate of the run's current iteration) on the run's latest memory snapshot, or
on the rows of every `--memory` file together (older snapshots, e.g. `git show
REV:run_archive/connect4/run0002/memory/memory2708.npz > old.npz`: a window several
times the run's), with G more games of the version's own self-play added (the run's
self-play settings, or others by `--set`, e.g. RANDOM_OPENING_MOVES=14: does data from
other positions move it where the same amount of the run's own does not?).  Before and
after each count of replays (cumulative), the raw
network on Pons' sets (L positions each): its policy's mistakes (the highest legal
logit, as `make pons` counts them) and its value's mean distance from the position's
true result (+1 / 0 / -1 for the player to move).  If the figures do not move while the
training loss falls, the network is not short of fitting on that data; what it lacks
is other data.  `--filters W` asks whether it lacks capacity instead: the version's
network widened to W filters in every block (`model.transferWeights`: it starts
computing exactly what the version does) is refitted the same way; a wider network
that fits the same data to better figures says the trunk, not the data, is the limit.
`--targets N` first checks that data: the value targets the run trains on
(`loss.valueTargets`) against the solver's result for N positions of the memory drawn
per stage (as `benchmarks/targets.py` checks new self-play's).  `--truth` asks what
perfect targets would teach on the same positions: every distinct position of the rows
is labelled by the solver, and the rows' targets replaced by its answer (value and q
the position's true result for the player to move; the search policy without its
mistakes, its share on the moves that keep that result renormalised), so the run's own
learner fits the truth where it fitted self-play's targets.  A network that then moves
on Pons' sets is held back by its targets; one that does not, by its positions or its
shape (with `--filters`).  Labelling a full memory takes about 5 minutes (Zen 5);
`--truth-labels FILE` keeps the labels for the next refit (read when the file exists,
else written).  `--record-positions` adds, labelled the same way, the positions that the
games of whole-game records reached (`recordRows`): the agent against the solver, so
also the lines after its own mistakes that its self-play never plays out; scored in
whole games from other starts (`perfect.py --seed`), such a refit says whether seeing
those positions would move the network.  The refitted network is a yardstick, never saved into the run;
`--save-network FILE` keeps it elsewhere, e.g. to score it in whole games from a branch
that starts from it.  Pons' sets and the solver measure only.  About 7 s per replay of
the strong preset.
"""

from __future__ import annotations

import argparse
import json
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
from game import Game, GameState  # noqa: E402
from MCTS import legalPriors  # noqa: E402
from memory import Memory  # noqa: E402
from model import transferWeights  # noqa: E402
from storage import RunFileError  # noqa: E402
from pons import PONS_FOLDER, loadSets, setName  # noqa: E402
from smallnet import teacherSelfplay  # noqa: E402
from targets import targetAgreement, targetTable  # noqa: E402

DEFAULT_SETS = ["Test_L2_R2", "Test_L1_R2", "Test_L1_R3"]


class PonsTruth:
    """A Pons set (`name`, its positions with their scores `pairs`: `pons.loadSets`) with
    what the solver says of each position: the actions that keep its result, and that
    result (+1 / 0 / -1 for the player to move)."""

    def __init__(self, name: str, pairs: list[tuple[GameState, int]]):
        self.name = name
        self.states: list[GameState] = [state for state, _ in pairs]
        self.keeping = [evaluation.keepingActions(state) for state in self.states]
        self.results = np.array([evaluation.outcomeClass(score) for _, score in pairs], dtype=np.float64)


def networkFigures(model, truth: PonsTruth) -> dict:
    """The raw network on one set: `policy` the % of positions whose highest legal
    logit is a mistake, `value` the mean |network value - true result|."""
    values, logits = model.predict(model.convertToModelInputs(truth.states))
    moves = evaluation.highestLegalLogits(truth.states, logits)
    mistakes = sum(move not in keeping for move, keeping in zip(moves, truth.keeping))
    return {"policy": 100 * mistakes / len(moves),
            "value": float(np.mean(np.abs(np.asarray(values, dtype=np.float64).reshape(-1) - truth.results)))}


def memoryRows(paths: list[Path], memory_size: int) -> list[dict]:
    """The rows of every memory file, in order (each file read as the run reads its
    snapshot: RunFileError names a missing or damaged one)."""
    return [row for path in paths for row in Memory.load(path, memory_size).ltmemory]


def recordRows(paths: list[Path], model, batch: int = 4096) -> list[dict]:
    """Rows of every distinct unfinished position the games of whole-game records reached
    from their starts (`make perfect`: the agent against the solver, so also the positions
    after the agent's mistakes that its own self-play never reaches), with their mirror
    images, for `--truth` to label: value and q are left 0 for the solver's result, the
    policy is the network's own prior (the softmax of its legal logits), which `truthRows`
    rids of its mistakes."""
    states: dict[bytes, GameState] = {}
    for path in paths:
        for game in json.loads(path.read_text())["games"]:
            for ply in range(len(game["start"]["opening"]), len(game["moves"])):
                state = GameState.fromMoves(game["moves"][:ply])
                states.setdefault(positionKey(state), state)
    ordered = list(states.values())
    rows = []
    for first in range(0, len(ordered), batch):
        chunk = ordered[first:first + batch]
        _, logits = model.predict(model.convertToModelInputs(chunk))
        for state, cells in zip(chunk, np.asarray(logits, dtype=np.float64)):
            prior = np.array(legalPriors(cells.tolist(), state.allowedActions), dtype=np.float32)
            rows += [{"board": s.board, "state": s, "id": s.id, "AV": av, "playerTurn": s.playerTurn,
                      "value": 0.0, "q": 0.0} for s, av in Game.identities(state, prior)]
    return rows


Labels = dict[bytes, tuple[int, np.ndarray]]
"""The solver's answer by position (`positionKey`): the true result for the player to
move (+1 / 0 / -1) and a mask over the 42 cells of the moves that keep it."""


def positionKey(state: GameState) -> bytes:
    """A position's cells and player to move as bytes: the key of its label."""
    return state.board.astype(np.int8).tobytes() + bytes([state.playerTurn % 256])


def solverLabels(states: list[GameState], say=print, every: int = 5000) -> Labels:
    """The solver's label (`Labels`) of each distinct unfinished position in `states`."""
    labels: Labels = {}
    start = time.perf_counter()
    for state in states:
        key = positionKey(state)
        if key in labels or state.isEndGame:
            continue
        result, keeping = evaluation.solvedPosition(state)
        mask = np.zeros(len(state.board), dtype=bool)
        mask[list(keeping)] = True
        labels[key] = (result, mask)
        if len(labels) % every == 0:
            say(f"  {len(labels):,} positions labelled by the solver, {time.perf_counter() - start:.0f} s")
    return labels


def saveLabels(path: Path, labels: Labels) -> None:
    """Write `labels` as an .npz of plain arrays (no pickle), atomically."""
    keys = list(labels)
    arrays = {"keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), -1),
              "results": np.array([labels[k][0] for k in keys], dtype=np.int8),
              "keeping": np.array([labels[k][1] for k in keys], dtype=bool).reshape(len(keys), -1)}
    storage.atomic_write(path, lambda tmp: np.savez_compressed(tmp, **arrays), suffix=".npz")


def loadLabels(path: Path) -> Labels:
    """Labels written by `saveLabels`; a file that is not one raises RunFileError naming it."""
    try:
        with np.load(path, allow_pickle=False) as arrays:
            keys, results, keeping = arrays["keys"], arrays["results"], arrays["keeping"]
    except (OSError, ValueError, KeyError) as exc:
        raise RunFileError(f"{path} is not a file of solver labels written by refit.py --truth-labels ({exc}); "
                           "delete it to label the positions again") from None
    return {key.tobytes(): (int(result), mask) for key, result, mask in zip(keys, results, keeping)}


def rowLabels(rows: list[dict], path: Path | None) -> Labels:
    """The solver's labels of every position in `rows`: those kept in `path` (when it
    exists), the others labelled now and `path` (when given) rewritten with them all."""
    labels = loadLabels(path) if path is not None and path.exists() else {}
    missing = [row["state"] for row in rows if positionKey(row["state"]) not in labels]
    if missing:
        print(f"Labelling {len(missing):,} rows' positions with the solver", flush=True)
        labels.update(solverLabels(missing, say=lambda text: print(text, flush=True)))
        if path is not None:
            saveLabels(path, labels)
    return labels


def truthRows(rows: list[dict], labels: Labels) -> list[dict]:
    """`rows` with the solver's targets in place of self-play's: value and q the true
    result for the row's player to move, and the search policy AV without its mistakes
    (its share on the moves that keep the result, renormalised; spread evenly over them
    where the search gave them none)."""
    out = []
    for row in rows:
        result, mask = labels[positionKey(row["state"])]
        kept = np.where(mask, np.asarray(row["AV"], dtype=np.float64), 0.0)
        policy = kept / kept.sum() if kept.sum() > 0 else mask / mask.sum()
        out.append({**row, "value": float(result), "q": float(result), "AV": policy.astype(np.float32)})
    return out


def refit(agent: Agent, rows: list[dict], replays: list[int], sets: list[PonsTruth], say=print) -> list[dict]:
    """Figures after 0 replays and after each count in `replays` (increasing,
    cumulative): one row each, with the last fit's losses and the seconds spent
    fitting since the row before."""
    def figures(done: int, losses: dict | None, seconds: float) -> dict:
        row = {"replays": done, "losses": losses, "seconds": seconds,
               "sets": {truth.name: networkFigures(agent.model, truth) for truth in sets}}
        say(tableRow(row))
        return row

    table, done = [figures(0, None, 0.0)], 0
    for target in replays:
        start, losses = time.perf_counter(), None
        while done < target:
            losses = agent.replay(rows)
            done += 1
        table.append(figures(done, losses, time.perf_counter() - start))
    return table


def tableHeader(names: list[str]) -> str:
    columns = "".join(f"  {evaluation.ponsLabel(name).split(' ')[0]:>20}" for name in names)
    return f"{'replays':>7} {'loss':>6} {'value':>6} {'seconds':>7}{columns}\n" + \
        f"{'':>29}" + "".join(f"  {'policy % / |v - t|':>20}" for _ in names)


def tableRow(row: dict) -> str:
    losses = row["losses"] or {}
    loss, value = (f"{losses[key]:6.3f}" if key in losses else f"{'-':>6}" for key in ("loss", "value_loss"))
    cells = "".join(f"  {f['policy']:>11.1f} / {f['value']:.3f}" for f in row["sets"].values())
    return f"{row['replays']:>7} {loss} {value} {row['seconds']:>7.0f}{cells}"


def widened(cfg, filters: int | None):
    """`cfg` with every block of its trunk `filters` wide (None: `cfg` itself).  A
    narrower trunk than the run's is refused: the weights could not carry over."""
    if filters is None:
        return cfg
    width = cfg.HIDDEN_CNN_LAYERS[0]["filters"]
    if filters < width:
        raise ConfigError(f"--filters {filters} is narrower than the run's trunk ({width} filters): a refit "
                          "can only widen it")
    return cfg.replace(HIDDEN_CNN_LAYERS=[dict(layer, filters=filters) for layer in cfg.HIDDEN_CNN_LAYERS])


def replayCounts(text: str) -> list[int]:
    """'15,30' -> [15, 30]: positive and increasing (they are cumulative)."""
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--replays takes counts like 15,30, not {text!r}") from None
    if not counts or counts[0] < 1 or any(b <= a for a, b in zip(counts, counts[1:])):
        raise argparse.ArgumentTypeError(f"--replays counts must be positive and increasing, not {text!r}")
    return counts


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=cli.runFolder, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--version", type=int, default=None, help="the network to refit (default: the run's best)")
    parser.add_argument("--memory", type=Path, nargs="+", default=None,
                        help="memory files to fit on, together (default: the run's latest snapshot)")
    parser.add_argument("--replays", type=replayCounts, default=[15, 30],
                        help="cumulative counts of replays after which to score (default 15,30)")
    parser.add_argument("--sets", type=setName, nargs="+", default=DEFAULT_SETS,
                        help="Pons' sets (default: middle-medium, begin-medium, begin-hard)")
    parser.add_argument("--limit", type=cli.positive(int), default=1000, help="positions per set (default 1000)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER)
    parser.add_argument("--selfplay-games", type=int, default=0,
                        help="games of the version's own self-play added to the memory's rows (default 0)")
    parser.add_argument("--set", action="append", default=[], type=cli.setting, metavar="NAME=VALUE",
                        help="a self-play setting for those games (repeatable), e.g. RANDOM_OPENING_MOVES=14")
    parser.add_argument("--filters", type=cli.positive(int), default=None,
                        help="refit the version widened to this many filters in every block (default: as it is)")
    parser.add_argument("--targets", type=int, default=0,
                        help="first check the memory's value targets on this many positions per stage (default 0)")
    parser.add_argument("--truth", action="store_true",
                        help="fit the solver's targets on the same positions instead of self-play's")
    parser.add_argument("--truth-labels", type=cli.outputPath(), default=None,
                        help="with --truth: the solver's labels, read from this .npz when it exists, else written")
    parser.add_argument("--record-positions", type=Path, nargs="+", default=[], metavar="RECORD",
                        help="also fit the positions the games of these whole-game records reached (needs --truth)")
    parser.add_argument("--save-network", type=cli.outputPath(), default=None,
                        help="save the refitted network as this .keras file (outside the run; a branch can "
                             "start from it: python -m funcs --branch-from F --branch-network FILE)")
    parser.add_argument("--out", type=cli.outputPath(), default=None, help="also write the table to this JSON file")
    args = parser.parse_args(argv)
    if args.truth_labels is not None and not args.truth:
        parser.error("--truth-labels keeps the labels of --truth: give --truth too")
    if args.record_positions and not args.truth:
        parser.error("--record-positions needs --truth: the solver labels the records' positions")
    missing = [str(path) for path in args.record_positions if not path.is_file()]
    if missing:
        parser.error(f"no whole-game record at {', '.join(missing)}")
    for option in ("targets", "selfplay_games"):
        if getattr(args, option) < 0:
            parser.error(f"--{option.replace('_', '-')} must not be negative, not {getattr(args, option)}")
    if args.set and not args.selfplay_games:
        parser.error("--set changes the added self-play games: give --selfplay-games too")
    folder = args.run_folder
    try:
        cfg = runs.runConfig(folder)
        selfplay_cfg = cfg.replace(**dict(args.set))
        fit_cfg = widened(cfg, args.filters)
        checkpoint = runs.readCheckpoint(folder)
        version = runs.bestVersion(folder) if args.version is None else args.version
        pons_sets = loadSets(args.pons_folder, args.sets, args.limit)
    except (ConfigError, ValueError, RunFileError) as exc:
        parser.error(str(exc))
    if not storage.model_path(folder, version).exists():
        parser.error(f"{folder} has no version {version} ({runs.savedVersionsList(folder)})")
    paths = args.memory
    if paths is None:
        if checkpoint["memory_iteration"] is None:
            parser.error(f"{folder} has no memory snapshot: name memory files with --memory")
        paths = [storage.memory_path(folder, checkpoint["memory_iteration"])]

    keras.utils.set_random_seed(cfg.SEED)
    network = runs.networkFor(cfg, folder)
    network.loadWeights(storage.model_path(folder, version))
    fitted = network
    if args.filters is not None:
        fitted = runs.networkFor(fit_cfg, folder)
        transferWeights(network.model, fitted.model)
        fitted.weightsChanged()
    learning_rate = cfg.learningRateAt(checkpoint["iteration"])
    fitted.setLearningRate(learning_rate)
    agent = Agent.fromConfig("refit", fit_cfg, fitted)
    rows = memoryRows(paths, cfg.MEMORY_SIZE)
    if args.selfplay_games:
        rows += teacherSelfplay(network, selfplay_cfg, args.selfplay_games, say=lambda text: print(text, flush=True))
    if args.record_positions:
        rows += recordRows(args.record_positions, network)
    if args.targets > 0:
        print("The value targets fitted, against perfect play:\n"
              + targetTable(targetAgreement(rows, args.targets, cfg, cfg.SEED)), flush=True)
    if args.truth:
        rows = truthRows(rows, rowLabels(rows, args.truth_labels))
    sets = [PonsTruth(name, pairs) for name, pairs in pons_sets.items()]
    print(f"Version {version} of {folder}{f' widened to {args.filters} filters' if args.filters else ''} refitted on {len(rows):,} memory rows ({len(paths)} file(s)"
          f"{f', {args.selfplay_games} self-play games {dict(args.set)}' if args.selfplay_games else ''}"
          f"{f', the positions of {len(args.record_positions)} whole-game record(s)' if args.record_positions else ''}), "
          f"{'the solver' if args.truth else 'self-play'}'s targets, "
          f"{cfg.TRAINING_LOOPS} fits of {cfg.BATCH_SIZE} positions a replay, learning rate "
          f"{learning_rate}; raw network on {args.limit} positions a set", flush=True)
    print(tableHeader(args.sets), flush=True)
    table = refit(agent, rows, args.replays, sets, say=lambda text: print(text, flush=True))
    if args.save_network is not None:
        storage.save_model(fitted.model, args.save_network)
    if args.out is not None:
        storage.write_json(args.out, {"run_folder": str(folder), "version": version, "memory": [str(p) for p in paths],
                                      "selfplay_games": args.selfplay_games, "settings": dict(args.set),
                                      "filters": args.filters, "truth": args.truth, "rows": len(rows),
                                      "record_positions": [str(p) for p in args.record_positions],
                                      "table": table})
    return table


if __name__ == "__main__":
    main()
