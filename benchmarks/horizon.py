"""How far the search sees, against how far away its mistakes' losses lie.

Run: .venv/bin/python benchmarks/horizon.py RECORD [--run-folder F] [--out FILE]

RECORD is a whole-game record of `benchmarks/perfect.py`. For the first mistake of every
game not kept, it sets beside each other:
- the plies from the position after the mistake to the end of the game when both sides
  play perfectly from there (`evaluation.Mistake.pliesToEnd`, from the solver's scores the
  record holds): the depth at which a search could first see that the move lost;
- how deep the record's agent looks from that position: its search is run again there
  (the record's version, simulations and search settings; a fresh tree, where the game
  reused the tree of the move before), and printed are the length of the principal
  variation below the move it plays (`play.principalVariation`) and the most stones
  below the root of any position its tree holds.
A mistake whose loss lies beyond the deepest position searched cannot be mended by the
search's arithmetic (a proven-value backup such as MCTS-solver, a threat check at the
leaves): only the network's judgement of the positions the search reaches can. Printed
per cause (`evaluation.mistakeCause`), the medians and how many losses lie within the
tree's reach; written with --out: a JSON row per mistake.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))

from perfect import recordAgent  # noqa: E402
from records import readRecord  # noqa: E402

import cli  # noqa: E402
import evaluation  # noqa: E402
import play  # noqa: E402
import storage  # noqa: E402
from config import SHIPPED, ConfigError  # noqa: E402
from game import GameState, columnOf  # noqa: E402


def firstMistakes(record: dict) -> list[evaluation.Mistake]:
    """The first mistake of every game of `record` that did not keep its start's value."""
    return [game.mistakes[0] for game in evaluation.readWholeGames(record) if game.mistakes and not game.kept]


def searchReach(agent, moves: str) -> tuple[int, int, int]:
    """Search the position after `moves` with a fresh copy of `agent`'s search; returns
    (the column it plays, its principal variation's length in plies, the most stones
    below the root of any position in its tree)."""
    player = agent.forGame(agent.config.SEED)
    state = GameState.fromMoves(moves)
    action = player.act(state, 0)[0]
    deepest = max(node.state.stones for node in player.mcts.tree.values()) - state.stones
    line = play.principalVariation(player, action)
    player.releaseTree()
    return columnOf(action) + 1, len(line), deepest


def horizonRows(folder: Path, record: dict) -> list[dict]:
    """One row per first mistake of `record` (`firstMistakes`): its position, cause,
    plies to the end of perfect play and the search's reach there (`searchReach`)."""
    agent = recordAgent(folder, record["version"], record["sims"], record["search"] or None,
                        tuple(record.get("ensemble", ())))
    rows = []
    for mistake in firstMistakes(record):
        column, line, deepest = searchReach(agent, mistake.moves)
        rows.append({"moves": mistake.moves, "cause": mistake.cause or "unclassified", "column": mistake.column,
                     "replayed_column": column, "plies_to_end": mistake.pliesToEnd, "line": line,
                     "deepest": deepest})
    return rows


def report(rows: list[dict]) -> str:
    """The printed table: per cause and for all, the mistakes, the medians of the plies
    to the end, of the principal variation and of the deepest position, and how many
    losses lie within the deepest position's reach."""
    lines = [f"{'cause':<13} {'mistakes':>8} {'to the end':>10} {'line':>6} {'deepest':>8} {'end within reach':>17}"]
    causes = sorted({row["cause"] for row in rows})
    for cause in causes + ["all"]:
        chosen = [row for row in rows if cause in ("all", row["cause"])]
        medians = [statistics.median(row[key] for row in chosen) for key in ("plies_to_end", "line", "deepest")]
        within = sum(row["plies_to_end"] <= row["deepest"] for row in chosen)
        lines.append(f"{cause:<13} {len(chosen):>8} {medians[0]:>10g} {medians[1]:>6g} {medians[2]:>8g} "
                     f"{within:>17}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("record", type=Path, help="a whole-game record of benchmarks/perfect.py")
    parser.add_argument("--run-folder", type=cli.runFolder, default=SHIPPED.path("RUN_FOLDER"),
                        help="the record's run (default: the shipped run)")
    parser.add_argument("--out", type=cli.outputPath(), default=None, help="a JSON file for the rows")
    args = parser.parse_args(argv)
    try:
        record = readRecord(args.record, ("version", "sims", "search", "games"),
                            "give a record written by benchmarks/perfect.py")
        if not firstMistakes(record):
            parser.error(f"{args.record} holds no game that lost its start's value: nothing to measure")
        print(f"The search's reach at the first mistakes of {args.record}: version {record['version']}, "
              f"{record['sims']} simulations{''.join(f', {k}={v}' for k, v in sorted(record['search'].items()))}")
        rows = horizonRows(args.run_folder, record)
    except (ConfigError, ValueError, storage.RunFileError) as exc:
        parser.error(str(exc))
    print(report(rows))
    print("to the end: plies from the position after the mistake to the end of perfect play; line: the principal "
          "variation below the move played; deepest: the most stones below the root in the search's tree")
    if args.out is not None:
        storage.write_json(args.out, rows)
    return rows


if __name__ == "__main__":
    main()
