"""Whole games against perfect play: the agent against the bitbully solver.

Run: make perfect   (or: .venv/bin/python benchmarks/perfect.py [--run-folder F]
                     [--version N] [--sims S] [--won W] [--drawn D] [--max-moves M]
                     [--seed K] [--play-seed K] [--own-search] [--set NAME=VALUE ...] [--ensemble V ...]
                     [--out FILE] [--no-classify])
       .venv/bin/python benchmarks/perfect.py --classify RECORD [--run-folder F] [--out FILE]

From seeded random openings of 0 to M moves (the rules only; Pons' sets are never read),
the agent people play (the run's PLAY_SIMS and other PLAY_ search settings, by default;
with --own-search the run's own search, as it trains) plays whole games against the
solver, which plays a best move (the best result, then the fastest win or slowest loss;
ties at random). A drawn opening is played from both colours, a decisive one by its
winning side, until there are W won and D drawn starts. A start is *kept* when the agent
ends with the result it was worth (a win from a won start, a draw from a drawn one).
Printed: the starts kept by start value and colour, and where each game not kept went
wrong: its first mistake, by stage of the game and cause (`evaluation.mistakeCause`: too
little search, the network's prior, or its values). Written: a JSON record with every
game (its moves, columns 1..7 from the empty board), every mistake's position, the
solver's score of each column, the network's value and the search's visits, priors and Q
there (default file: the run folder's perfect/versionNNNN-simsS.json, followed by the
search settings that differ from the run's own; a sample of fewer starts than that file
holds goes beside it, -wonW-drawnD after the simulations; the notebook's "Whole games against
perfect play" cell draws its losing moves). `--set` changes how the agent searches with
the saved network (`config.SEARCH_SETTINGS`: the root search, CPUCT, Gumbel's settings),
a lever at play time that needs no training. A record of settings other than the run's
own (the play settings' or --set's) is named after them (versionNNNN-simsS-root_search-
puct.json), never replaces the version's own, and stays out of the learning curve, which
compares versions at the run's own search (`--own-search` scores that where the run
plays people with another). `--ensemble V ...` is another lever at play time: other saved
versions of the run evaluate every leaf beside the agent's network, the search reading the
mean (`model.ensembleMean`); its record is named after them (version0777-sims600-ensemble-
1009.json) and stays out of the learning curve too. `--play-seed K` plays the same starts
with other draws in the games (the solver's choice among equally good moves; the agent's
own draws, where its search makes any): the same version played again shows how much of a
record is the games' luck rather than the network (record -playseedK, out of the curve).
`--classify RECORD` runs the deeper searches of a record
written with --no-classify afterwards (the same version, simulations and settings), so a
long benchmark can be classified once its games are in. """

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))

import keras  # noqa: E402
from records import readRecord  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
import play  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from config import SEARCH_SETTINGS, SHIPPED, ConfigError, playSearch, searchChanges, searchLabel  # noqa: E402
from game import Game  # noqa: E402


def recordAgent(folder: Path, version: int, sims: int, search: dict | None, ensemble: tuple[int, ...] = ()):
    """`version` of the run in `folder` as the benchmark's agent (also the agent that
    `benchmarks/horizon.py` searches a record's positions with): `sims` simulations per
    move, the play-time search settings `search` (NAME: value; None: the run's own), the
    networks of the run's versions `ensemble` evaluating every leaf beside its own."""
    cfg = runs.runConfig(folder)
    keras.utils.set_random_seed(cfg.SEED)
    agent = runs.versionPlayer("agent", Game(), cfg, folder, version, mcts_simulations=sims, search=search)
    agent.model.ensemble = [runs.versionPlayer("member", Game(), cfg, folder, member).model for member in ensemble]
    agent.logger = None
    return agent


def _deeper(agent, sims: int, seed: int) -> evaluation.Chooser:
    """The deeper search that classifies a mistake: the same network and search settings,
    DEEPER_SEARCH times the simulations."""
    return evaluation.agentChooser(agent.model, agent.config, evaluation.DEEPER_SEARCH * sims, seed)


def gamesSeed(seed: int, play_seed: int | None) -> int:
    """The seed of a record's games' draws (the solver's ties, the agent's draws): its
    play seed where it has one, else the seed that drew its starts."""
    return seed if play_seed is None else play_seed


def scoreVersion(folder: Path, version: int, sims: int, won: int, drawn: int, max_moves: int, seed: int,
                 classify: bool = True, progress: bool = True, search: dict | None = None,
                 ensemble: tuple[int, ...] = (), play_seed: int | None = None) -> dict:
    """The whole-game record (`evaluation.wholeGameRecord`) of `version` of the run in
    `folder`, its agent searching `sims` simulations per move, with the play-time
    search settings `search` (NAME: value; None: the run's own) and the run's versions
    `ensemble` beside its network.  `seed` draws the starts; `play_seed` (None: `seed`)
    the games' own draws (the solver's ties, the agent's draws)."""
    agent = recordAgent(folder, version, sims, search, ensemble)
    start = time.perf_counter()
    starts = evaluation.gameStarts(won, drawn, max_moves, seed)
    games_seed = gamesSeed(seed, play_seed)
    games = evaluation.playAgainstSolver(lambda i: agent.forGame(games_seed + i), starts, games_seed,
                                         progress="whole games" if progress else None)
    played = time.perf_counter() - start
    if classify:
        games = evaluation.classifyMistakes(games, _deeper(agent, sims, games_seed))
    about = {"run_folder": str(folder), "version": version, "sims": sims, "search": dict(search or {}),
             "ensemble": list(ensemble), "won_starts": won, "drawn_starts": drawn, "max_opening_moves": max_moves,
             "seed": seed, "play_seed": play_seed,
             "seconds": round(time.perf_counter() - start, 1), "seconds_playing": round(played, 1),
             "agent_moves": sum(game.playerMoves for game in games)}
    return evaluation.wholeGameRecord(games, about)


def classifyRecord(folder: Path, record: dict) -> dict:
    """`record` (written by `scoreVersion`, e.g. with --no-classify) with every mistake's
    cause set by the deeper searches `scoreVersion` would have run: its version of the
    run in `folder`, its simulations and search settings, its games' seed.  The games are
    not played again."""
    agent = recordAgent(folder, record["version"], record["sims"], record["search"] or None,
                        tuple(record.get("ensemble", ())))
    deeper = _deeper(agent, record["sims"], gamesSeed(record["seed"], record.get("play_seed")))
    games = evaluation.classifyMistakes(evaluation.readWholeGames(record), deeper)
    return evaluation.wholeGameRecord(games, {key: value for key, value in record.items()
                                              if key not in ("summary", "games")})


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"),
                        help="the run (default: the shipped run)")
    parser.add_argument("--version", type=cli.version, default=None, help=cli.VERSION_HELP)
    parser.add_argument("--sims", type=int, default=None,
                        help="agent simulations per move (default: the run's PLAY_SIMS, else MCTS_SIMS)")
    parser.add_argument("--won", type=int, default=500, help="won starts to play (default 500)")
    parser.add_argument("--drawn", type=int, default=500, help="drawn starts to play (default 500)")
    parser.add_argument("--max-moves", type=int, default=6, help="random opening moves, at most (default 6)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the openings and, unless --play-seed, of the games' draws (the solver's ties)")
    parser.add_argument("--play-seed", type=int, default=None, metavar="K",
                        help="seed of the games' draws (the solver's ties; the agent's, where its search draws): "
                             "the same starts played again with other luck, into a record of its own "
                             "(-playseedK; default: --seed)")
    parser.add_argument("--own-search", action="store_true",
                        help="search as the run trains (its ROOT_SEARCH, CPUCT...), not as it plays people "
                             "(PLAY_ROOT_SEARCH, PLAY_CPUCT, PLAY_LEAF_BATCH...): the learning curve's records")
    parser.add_argument("--set", action="append", default=[], type=cli.setting, metavar="NAME=VALUE",
                        help="a play-time search setting of the agent (repeatable; one of "
                             f"{', '.join(SEARCH_SETTINGS)}; default: the run's play settings, else its own "
                             "search; e.g. --set CPUCT=3)")
    parser.add_argument("--ensemble", type=cli.positive(int), nargs="+", default=[], metavar="V",
                        help="saved versions of the run whose networks evaluate every leaf beside the agent's, "
                             "the search reading the mean (a lever at play time; default: none)")
    parser.add_argument("--out", type=cli.outputPath(), default=None,
                        help="the JSON record (default: the run folder's perfect/versionNNNN-simsS.json, "
                             "followed by the search settings that differ from the run's own; with fewer starts "
                             "than that file holds, -wonW-drawnD after the simulations, beside it)")
    parser.add_argument("--no-classify", action="store_true",
                        help="skip the deeper searches that tell too little search from the network's errors")
    parser.add_argument("--classify", type=Path, default=None, metavar="RECORD",
                        help="classify the mistakes of RECORD (a record of --run-folder written with "
                             "--no-classify) in place, or into --out; no games are played")
    args = parser.parse_args(argv)
    if args.classify is not None:
        return classifyMain(args, parser)
    if args.sims is not None and args.sims < 1:
        parser.error("--sims must be at least 1")
    checkStarts(parser, args.won, args.drawn)
    if not 0 <= args.max_moves <= 20:
        parser.error("--max-moves must lie in 0..20")
    try:
        cfg = runs.runConfig(args.run_folder)
        version = play.playedVersion(args.run_folder, args.version)
        sims = args.sims or cfg.PLAY_SIMS or cfg.MCTS_SIMS
        played = {} if args.own_search else playSearch(cfg)
        search = searchChanges(cfg, {**played, **dict(args.set)})  # refused before any game
        ensemble = tuple(args.ensemble)
        out = args.out or recordPath(args.run_folder, version, sims, args.won, args.drawn, search, ensemble,
                                     args.play_seed)
        members = "".join(f", with version {member}" for member in ensemble)
        print(f"Whole games against the solver: version {version} of {args.run_folder}, {sims} simulations"
              f"{searchLabel(search)}{members}, {args.won} won and {args.drawn} drawn starts from openings of "
              f"0-{args.max_moves} random moves")
        record = scoreVersion(args.run_folder, version, sims, args.won, args.drawn, args.max_moves, args.seed,
                              classify=not args.no_classify, search=search, ensemble=ensemble,
                              play_seed=args.play_seed)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    storage.write_json(out, record)
    print(evaluation.wholeGameText(record["summary"]))
    print(f"{record['agent_moves']} agent moves in {record['seconds_playing']:.0f} s "
          f"({record['seconds_playing'] / max(1, record['agent_moves']):.2f} s per move, all games in lockstep); "
          f"record: {out}")
    return record


def checkStarts(parser: argparse.ArgumentParser, won: int, drawn: int) -> None:
    """Refuse (parser.error) --won and --drawn that are negative or both 0: no games to play."""
    if won < 0 or drawn < 0 or won + drawn == 0:
        parser.error("--won and --drawn must not be negative, and not both 0")


def recordPath(run_folder, version: int, sims: int, won: int, drawn: int, search: dict, ensemble: tuple,
               play_seed: int | None = None) -> Path:
    """Where a record of `won` + `drawn` starts goes: the version's record of that search
    and play seed (`storage.whole_games_path`), unless that one holds more starts, which a
    smaller sample never replaces: then the name with its starts, beside it."""
    main = storage.whole_games_path(run_folder, version, sims, search=search, ensemble=ensemble, play_seed=play_seed)
    if main.exists():
        held = storage.read_json(main, "whole-game record", "restore it, or move it out of perfect/")
        if held["won_starts"] + held["drawn_starts"] > won + drawn:
            return storage.whole_games_path(run_folder, version, sims, (won, drawn), search=search, ensemble=ensemble,
                                            play_seed=play_seed)
    return main


def classifyMain(args, parser: argparse.ArgumentParser) -> dict:
    """--classify: the record's mistakes classified, written back (or to --out)."""
    try:
        record = readRecord(args.classify, ("version", "sims", "search", "seed", "games"),
                            "give a record written by benchmarks/perfect.py")
        print(f"Classifying the mistakes of {args.classify}: version {record['version']} of {args.run_folder}, "
              f"deeper searches of {evaluation.DEEPER_SEARCH * record['sims']} simulations")
        record = classifyRecord(args.run_folder, record)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    out = args.out or args.classify
    storage.write_json(out, record)
    print(evaluation.wholeGameText(record["summary"]))
    print(f"record: {out}")
    return record


if __name__ == "__main__":
    main()
