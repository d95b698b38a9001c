"""Whole-game records compared start by start: which starts one version keeps and another
loses, and which starts a run's versions lose again and again.

Run: .venv/bin/python benchmarks/records.py [--run-folder F] [--sims S] [--play-search]
         [--starts WON DRAWN] (--versions V [V ...] | --from-version N) [--against FOLDER:V ...]
         [--record FILE ...]

Reads the run's whole-game records (`benchmarks/perfect.py`; the main record of each
version at S simulations, the run's own search: perfect/versionNNNN-simsS.json; with
--play-search, the record of the agent people play: each run's PLAY_* search settings, at
its PLAY_SIMS unless --sims says otherwise, e.g.
perfect/version0777-sims8000-cpuct-2.0-leaf_batch-16-root_search-puct.json; with --starts,
the records of exactly that many won and drawn starts, e.g. a 250 + 250 sample kept beside a
500 + 500 main record as perfect/version0777-sims8000-won250-drawn250-...json), never plays
a game. Printed:
- per version, the share of its won, drawn and all starts kept;
- the first version against each other one (other runs' versions too, with --against: two
  runs compared at equal iterations or hours), per starting value: the starts only the first
  kept and those only the other kept (the same opening, the agent on the same side), with
  the two-sided sign test's p of so uneven a split if either were as likely to keep such a
  start (`keptByOne`, the comparison of docs/strength.md and `benchmarks/levers.py`); with
  --record, any record file too, such as a version's same starts played again with other
  draws in the games (`perfect.py --play-seed`: perfect/version0777-sims600-playseed1.json);
- with three versions or more, the spread: per starting value, how many starts were lost by
  no version, by every version and by some only, and how many by each count of versions.
  Starts that every version loses are a fixed weakness; starts that some lose and others
  keep are where versions of equal strength differ by chance: of training, or of the games
  (one version's records played again with other seeds tell the two apart).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cli  # noqa: E402
import storage  # noqa: E402
from config import SHIPPED, Config, ConfigError, playSearch  # noqa: E402

START_VALUES = {"won": 1, "drawn": 0}
"""The starting values compared, by name: the start's solved value for the agent (1 a win, 0 a draw)."""


def keptByStart(record: dict) -> dict[tuple, bool]:
    """A whole-game record's starts, each as (opening, the agent's side, the start's value
    for the agent), to whether the agent kept it."""
    return {(game["start"]["opening"], game["start"]["side"], game["start"]["value"]): game["kept"]
            for game in record["games"]}


def signTestP(a: int, b: int) -> float:
    """Two-sided exact sign test: the chance of a split of a + b at least as uneven as
    (a, b) when each side is equally likely."""
    n, low = a + b, min(a, b)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(low + 1)) / 2 ** n)


def keptByOne(first: dict, other: dict) -> dict[str, dict]:
    """Per starting value ("won", "drawn"): of the starts both whole-game records played,
    how many only `first` kept and how many only `other`, with the sign test's p: the
    comparison that pairs two versions (or a lever's arms) start by start."""
    mine, theirs = keptByStart(first), keptByStart(other)
    split = {}
    for name, value in START_VALUES.items():
        common = [key for key in mine if key in theirs and key[2] == value]
        only = (sum(mine[k] and not theirs[k] for k in common), sum(theirs[k] and not mine[k] for k in common))
        split[name] = {"first_only": only[0], "other_only": only[1], "p": signTestP(*only)}
    return split


def lossSpread(records: list[dict]) -> dict[str, dict]:
    """Per starting value: of the starts every record played, how many `records` lost
    none of, all of and some of, and `by_count` {versions that lost it: starts}. Raises
    ValueError when the records did not play the same starts."""
    kept = [keptByStart(record) for record in records]
    starts = set(kept[0])
    for index, each in enumerate(kept[1:], start=1):
        if set(each) != starts:
            raise ValueError(f"record {index + 1} of {len(records)} played other starts than the first "
                             f"({len(set(each) ^ starts)} differ): compare records of the same openings")
    spread = {}
    for name, value in START_VALUES.items():
        losses = Counter(sum(not each[key] for each in kept) for key in starts if key[2] == value)
        spread[name] = {"starts": sum(losses.values()), "never_lost": losses[0], "always_lost": losses[len(records)],
                        "sometimes_lost": sum(losses.values()) - losses[0] - losses[len(records)],
                        "by_count": dict(sorted(losses.items()))}
    return spread


def readRecord(path: Path, keys: tuple[str, ...], way_out: str) -> dict:
    """The whole-game record in the JSON file `path`; one that cannot be read, is not
    JSON or is not a record with `keys` raises RunFileError naming it and `way_out`."""
    record = storage.read_json(path, "whole-game record", way_out)
    missing = [key for key in keys if key not in record] if isinstance(record, dict) else ["a JSON object"]
    if missing:
        raise storage.RunFileError(f"{path} is not a whole-game record (no {', '.join(missing)}): {way_out}")
    return record


def recordSearch(run_folder: Path, sims: int | None, play_search: bool) -> tuple[int, dict]:
    """(simulations, search settings) of the records read from the run in `run_folder`:
    `sims` (default 600) at the run's own search, or with `play_search` the search of the
    agent people play (the run's PLAY_* settings, `config.playSearch`) at `sims`, default
    its PLAY_SIMS (MCTS_SIMS where 0). Read from config.json directly, as
    `runs.playSettings` reads it, so that this script never loads Keras (0.1 s, not 8)."""
    if not play_search:
        return sims or 600, {}
    cfg = Config.from_json_file(storage.config_path(run_folder), "give the folder of a run with its config.json")
    return sims or cfg.PLAY_SIMS or cfg.MCTS_SIMS, playSearch(cfg)


def startsHeld(record: dict) -> tuple[int, int]:
    """(won, drawn): how many won and drawn starts the whole-game record played."""
    return record["summary"]["won"]["games"], record["summary"]["drawn"]["games"]


def startsNamed(starts: tuple[int, int] | None) -> str:
    """How a message names records of `starts` (won, drawn): "" for main records."""
    return "" if starts is None else f" of {starts[0]} won and {starts[1]} drawn starts"


def versionRecord(run_folder: Path, version: int, sims: int, search: dict | None = None,
                  starts: tuple[int, int] | None = None) -> dict:
    """The version's whole-game record at `sims` and the search settings `search` (NAME:
    value; None or {}: the run's own): its main record, or with `starts` (won, drawn) the
    record of exactly that many starts, the main one where it holds them, else the one
    perfect.py keeps beside a larger main record. FileNotFoundError names the command that
    writes it when there is none; RunFileError names a file that is not a record."""
    main = storage.whole_games_path(run_folder, version, sims, search=search)
    paths = [main] if starts is None else [main, storage.whole_games_path(run_folder, version, sims, starts,
                                                                          search=search)]
    for path in paths:
        if path.exists():
            record = readRecord(path, ("games", "summary"), "write it again with benchmarks/perfect.py")
            if starts is None or startsHeld(record) == starts:
                return record
    searched = "" if search else " --own-search"
    chosen = "" if starts is None else f" --won {starts[0]} --drawn {starts[1]}"
    raise FileNotFoundError(f"no whole-game record{startsNamed(starts)} of version {version} at {sims} simulations "
                            f"({' or '.join(map(str, paths))}): write it with benchmarks/perfect.py --run-folder "
                            f"{run_folder} --version {version} --sims {sims}{chosen}{searched}")


def namedRecord(path: Path, starts: tuple[int, int] | None) -> dict:
    """The whole-game record in the file `path`; with `starts` (won, drawn), ValueError
    unless it holds exactly that many won and drawn starts."""
    record = readRecord(path, ("games", "summary"), "give a record written by benchmarks/perfect.py")
    if starts is not None and startsHeld(record) != starts:
        raise ValueError(f"{path} holds {startsHeld(record)[0]} won and {startsHeld(record)[1]} drawn starts, "
                         f"not the {starts[0]} and {starts[1]} of --starts")
    return record


def recordedRecords(run_folder: Path, sims: int, first: int, search: dict | None = None,
                    starts: tuple[int, int] | None = None) -> dict[int, dict]:
    """The whole-game records at `sims` and `search` (with `starts`, the ones of exactly
    that many won and drawn starts: `versionRecord`) of the versions from `first` on, by
    version in number order; each file is read once, here, and a version without one is
    left out."""
    versions = {storage.whole_games_version(path) for path in storage.whole_games_records(run_folder)}
    found = {}
    for version in sorted(version for version in versions if version >= first):
        try:
            found[version] = versionRecord(run_folder, version, sims, search, starts)
        except FileNotFoundError:
            continue
    return found


def otherRunVersion(text: str) -> tuple[Path, int]:
    """An argparse type: FOLDER:V, version V of the run in FOLDER."""
    folder, _, version = text.rpartition(":")
    if not folder or not version.isdigit():
        raise argparse.ArgumentTypeError(f"wants FOLDER:VERSION (run_archive/connect4/run0005:683), got {text!r}")
    return Path(folder), int(version)


def recordFile(text: str) -> Path:
    """An argparse type: a whole-game record's file, which must exist."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no record file {text!r}")
    return path


def recordLabel(path: Path, record: dict) -> str:
    """How the report names the record in the file `path`: "run0006/777 play seed 1" for a
    version's starts played again (`perfect.py --play-seed`), else the file's name."""
    if any(record.get(key) is None for key in ("run_folder", "version", "play_seed")):
        return path.stem
    return f"{otherRunLabel(Path(record['run_folder']), record['version'])} play seed {record['play_seed']}"


def otherRunLabel(folder: Path, version: int) -> str:
    """How the report names version `version` of the run in `folder`: run0005/683."""
    return f"{folder.name}/{version}"


def report(records: dict[int | str, dict]) -> str:
    """The printed comparison of `records` (version, or another run's label: record), the
    first one first."""
    versions = list(records)
    width = max([7, *(len(str(version)) for version in versions)])
    others = max([5, *(len(str(version)) for version in versions[1:])])
    lines = [f"{'version':>{width}} {'won kept':>8} {'drawn kept':>10} {'all kept':>8}"]
    for version, record in records.items():
        shares = [100 * record["summary"][kind]["share"] for kind in ("won", "drawn", "all")]
        lines.append(f"{version:>{width}} {shares[0]:>7.1f}% {shares[1]:>9.1f}% {shares[2]:>7.1f}%")
    if len(versions) > 1:
        lines += ["", f"kept by one only, version {versions[0]} first: won (p), drawn (p)"]
    for version in versions[1:]:
        split = keptByOne(records[versions[0]], records[version])
        cells = [f"{split[k]['first_only']} and {split[k]['other_only']} (p = {split[k]['p']:.2f})"
                 for k in START_VALUES]
        lines.append(f"{versions[0]:>{width}} against {version!s:<{others}} won {cells[0]}, drawn {cells[1]}")
    if len(versions) > 2:
        lines += ["", f"starts lost by how many of the {len(versions)} versions"]
        for name, row in lossSpread(list(records.values())).items():
            counts = ", ".join(f"{count}: {starts}" for count, starts in row["by_count"].items())
            lines.append(f"{name:<6} {row['starts']} starts: lost by none {row['never_lost']}, by all "
                         f"{row['always_lost']}, by some {row['sometimes_lost']} (by count {counts})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[int | str, dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"))
    parser.add_argument("--sims", type=cli.positive(int), default=None,
                        help="the records' simulations (default 600; with --play-search each run's PLAY_SIMS)")
    parser.add_argument("--play-search", action="store_true",
                        help="the records of the agent people play (each run's PLAY_* search settings), not of "
                             "the run's own search")
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--versions", type=int, nargs="+", metavar="V",
                        help="these versions, the first compared to each other one")
    chosen.add_argument("--from-version", type=int, metavar="N", help="every version from N on with a record")
    parser.add_argument("--starts", type=cli.positive(int), nargs=2, metavar=("WON", "DRAWN"),
                        help="the records of exactly WON won and DRAWN drawn starts: a version's main record where "
                             "it holds them, else the smaller one perfect.py keeps beside it (default: main records)")
    parser.add_argument("--against", type=otherRunVersion, action="append", default=[], metavar="FOLDER:V",
                        help="version V of the run in FOLDER (its record at the same simulations; with "
                             "--play-search, at its own run's play search), compared with the first version like "
                             "the run's own (repeatable)")
    parser.add_argument("--record", type=recordFile, action="append", default=[], metavar="FILE",
                        help="a whole-game record file (perfect.py's, e.g. a --play-seed one), compared with the "
                             "first version like the run's own, named by its version and play seed, else by its "
                             "file (repeatable)")
    args = parser.parse_args(argv)
    try:
        searches = {folder: recordSearch(folder, args.sims, args.play_search)
                    for folder in dict.fromkeys([args.run_folder, *(folder for folder, _ in args.against)])}
    except ConfigError as error:
        parser.error(str(error))
    sims, search = searches[args.run_folder]
    starts = tuple(args.starts) if args.starts else None
    listed = {} if args.versions else recordedRecords(args.run_folder, sims, args.from_version, search, starts)
    versions = args.versions or list(listed)
    others = [otherRunLabel(*each) for each in args.against]
    for option, what, named in (("--versions", "version", versions), ("--against", "version", others),
                                ("--record", "file", args.record)):
        repeated = [each for each in dict.fromkeys(named) if named.count(each) > 1]
        if repeated:
            parser.error(f"{option} names {what} {repeated[0]} more than once: give different {what}s")
    if not versions:
        parser.error(f"no whole-game record{startsNamed(starts)} at {sims} simulations from version "
                     f"{args.from_version} on in {args.run_folder / 'perfect'}")
    try:
        sources = {**{v: (args.run_folder, v) for v in versions}, **dict(zip(others, args.against))}
        records = {label: listed[version] if folder == args.run_folder and version in listed
                   else versionRecord(folder, version, *searches[folder], starts)
                   for label, (folder, version) in sources.items()}
        named = {recordLabel(path, record): record for path, record in
                 ((path, namedRecord(path, starts)) for path in args.record)}
        if len(named) < len(args.record) or set(named) & set(records):
            raise ValueError("two records to compare have the same name (a version and play seed): give each once")
        records |= named
        print(report(records))
    except (FileNotFoundError, ValueError, storage.RunFileError) as error:
        parser.error(str(error))
    return records


if __name__ == "__main__":
    main()
