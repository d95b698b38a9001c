"""Plots of a run's progress (its metrics.jsonl), its learning curve (Pons' sets and whole
games against the solver), a losing move of a whole game, and ratings
(`ratings.rateVersions`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import json

import matplotlib.pyplot as plt

import boards
import evaluation
import runs
import storage
from game import GameState, columnOf


def _series(rows: list[dict], read: Callable[[dict], float | None]) -> tuple[list[int], list[float]]:
    """(iterations, values) of the rows where `read` finds a value."""
    points = []
    for row in rows:
        try:
            value = read(row)
        except (KeyError, TypeError):
            continue
        if value is not None:
            points.append((row["iteration"], value))
    return [x for x, _ in points], [y for _, y in points]


def plotMetrics(run_folder):
    """A figure of a run's progress from its metrics.jsonl: training losses, the
    tournament (wins of the current and the best network, promotions starred), the
    mistake rate on the benchmark positions with the best version, and memory size.
    Rows missing a value leave a gap; safe to call while training appends rows (each
    append is atomic); a damaged file raises runs.readMetrics' RunFileError.  The
    caller closes the figure (matplotlib.pyplot.close)."""

    rows = runs.readMetrics(run_folder)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    (loss_ax, tourney_ax), (mistake_ax, memory_ax) = axes
    for key in ("loss", "value_loss", "policy_loss"):
        loss_ax.plot(*_series(rows, lambda r, key=key: r[key]), marker=".", label=key)
    loss_ax.set_title("training loss (last loop of the iteration)")

    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["current_player"]), marker=".", label="current wins")
    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["best_player"]), marker=".", label="best wins")
    tourney_ax.plot(*_series(rows, lambda r: r["scores"]["drawn"]), marker=".", label="draws")
    promoted = _series(rows, lambda r: r["scores"]["current_player"] if r["promoted"] else None)
    tourney_ax.plot(*promoted, linestyle="", marker="*", markersize=12, label="promoted")
    tourney_ax.set_title("tournament: current vs best network")

    mistake_ax.plot(*_series(rows, lambda r: 100 * r["mistake_rate"]), marker=".", color="C3",
                    label="agent (MCTS)")
    mistake_ax.plot(*_series(rows, lambda r: 100 * r["network_mistake_rate"]), marker=".", color="C1",
                    label="raw network")
    mistake_ax.legend(fontsize=8, loc="upper right")
    mistake_ax.set_ylabel("% of benchmark positions")
    mistake_ax.set_title("mistakes against perfect play")
    version_ax = mistake_ax.twinx()
    version_ax.step(*_series(rows, lambda r: r["best_player_version"]), where="post", color="grey",
                    label="best version")
    version_ax.set_ylabel("best version")

    memory_ax.plot(*_series(rows, lambda r: r["memory_size"]), marker=".")
    memory_ax.set_title("positions in memory")
    for ax in (loss_ax, tourney_ax, mistake_ax, memory_ax):
        ax.set_xlabel("iteration")
    for ax in (loss_ax, tourney_ax):
        ax.legend(fontsize=8)
    if not rows:
        fig.suptitle(f"no finished iteration in {storage.metrics_path(run_folder)} yet")
    fig.tight_layout()
    return fig


def _perVersion(rows: list[dict]) -> list[dict]:
    """One curve row per version, the one scored on the most positions, in order of
    training hours."""
    chosen: dict[int, dict] = {}
    for row in rows:
        if row["version"] not in chosen or row["limit"] > chosen[row["version"]]["limit"]:
            chosen[row["version"]] = row
    return sorted(chosen.values(), key=lambda r: r["hours"])


def sharedHistories(run_folder) -> list[tuple[Path, set[int]]]:
    """The other runs beside this one (in the same archive folder) whose metrics begin as this
    run's do, each with the versions the two share: this run was branched from it
    (`branches.branchRun` copies the metrics), or both from one state. Every version that
    was the best before their last common iteration is the same network in both, so its
    scores in either run are this run's; the one still the best there is not counted (a
    branch may have widened or replaced it). A neighbour whose files are damaged is passed
    over: they are not this run's."""
    folder = Path(run_folder).resolve()
    rows = runs.readMetrics(folder)
    found = []
    for other in sorted(p for p in folder.parent.iterdir() if p != folder and storage.metrics_path(p).is_file()):
        try:
            theirs = runs.readMetrics(other)
        except storage.RunFileError:
            continue
        common = next((k for k, (mine, their) in enumerate(zip(rows, theirs)) if mine != their),
                      min(len(rows), len(theirs)))
        shared = {1} | {row["best_player_version"] for row in rows[:common]}
        if common and len(shared) > 1:
            found.append((other, shared - {rows[common - 1]["best_player_version"]}))
    return found


def lineageCurve(run_folder, shared: list[tuple[Path, set[int]]] | None = None) -> list[dict]:
    """The run's curve rows (curve.jsonl), and those its neighbours scored of the versions
    it shares with them (`shared`, by default `sharedHistories`): a branch's curve from the
    start of its history, one row per (version, sims, positions), the run's own first."""
    rows = runs.readCurve(run_folder)
    for other, versions in sharedHistories(run_folder) if shared is None else shared:
        try:
            rows += [row for row in runs.readCurve(other) if row["version"] in versions]
        except storage.RunFileError:
            continue
    unique = {}
    for row in rows:
        unique.setdefault((row["version"], row["sims"], row["limit"]), row)
    return list(unique.values())


def wholeGameCurve(run_folder, shared: list[tuple[Path, set[int]]] | None = None) -> list[dict]:
    """One row per whole-game record (`make perfect`) of a best version searching with
    the run's own settings (not `--set`'s), on its own draws (not a `--play-seed` replay),
    the run's and its neighbours' of the versions it shares with them (`shared`, by
    default `sharedHistories`; one row per version and simulations, the run's own first):
    version, sims, the training hours it had had when promoted, and the shares of won,
    drawn and all starts kept (None where it played no such start)."""
    hours = runs.promotionHours(runs.readMetrics(run_folder))
    rows, seen = [], set()
    shared = sharedHistories(run_folder) if shared is None else shared
    for folder, versions in [(Path(run_folder), set(hours)), *shared]:
        records = [json.loads(path.read_text()) for path in storage.whole_games_records(folder)]
        for record in sorted(records, key=lambda r: -len(r["games"])):  # of a version's records, the most starts
            version, sims = record["version"], record["sims"]
            replayed = record.get("play_seed") is not None
            if version not in versions or record.get("search") or record.get("ensemble") or replayed \
                    or (version, sims) in seen:
                continue
            seen.add((version, sims))
            summary = record["summary"]
            rows.append({"version": version, "sims": sims, "hours": hours[version][1],
                         **{name: summary[name]["share"] if name in summary else None
                            for name in ("won", "drawn", "all")}})
    return sorted(rows, key=lambda r: (r["sims"], r["hours"]))


def plotCurve(run_folder):
    """The learning curve against hours of training: the mistake rates of the run's
    best version on its own benchmark set after each iteration (metrics.jsonl); on
    each of Pons' sets per scored version (`lineageCurve`: curve.jsonl, written by
    `make curve`, with the scores of the history the run shares with others): the
    agent at the most simulations any row used, the raw network from every version
    (a version scored more than once shows its largest sample); and the share of its
    won and drawn starts each version kept in whole games against the solver
    (`make perfect`, at the most simulations any record used; at the run's own
    search, see `wholeGameCurve`).  The caller closes the figure."""

    rows = runs.readMetrics(run_folder)
    fig, (own_ax, pons_ax, games_ax) = plt.subplots(1, 3, figsize=(17, 4.2))
    hours = runs.trainingHours(rows)
    for key, label in (("mistake_rate", "agent"), ("network_mistake_rate", "raw network")):
        points = [(h, 100 * r[key]) for h, r in zip(hours, rows) if r[key] is not None]
        own_ax.plot([h for h, _ in points], [m for _, m in points], marker=".", label=label)
    own_ax.set_title("the run's benchmark set")
    shared = sharedHistories(run_folder)
    curve = lineageCurve(run_folder, shared)
    sims = max((r["sims"] for r in curve), default=0)
    agent, network = _perVersion([r for r in curve if r["sims"] == sims]), _perVersion(curve)
    for name in sorted({name for row in curve for name in row["sets"]}):
        line = pons_ax.plot([r["hours"] for r in agent], [r["sets"][name]["agent"] for r in agent], marker="o",
                            label=evaluation.ponsLabel(name))[0]
        pons_ax.plot([r["hours"] for r in network], [r["sets"][name]["network"] for r in network], linestyle=":",
                     color=line.get_color())
    pons_ax.set_title(f"Pons' sets: agent at {sims} simulations (solid), raw network (dotted)")
    for ax in (own_ax, pons_ax):
        ax.set_ylabel("% mistakes against perfect play")
    _plotWholeGames(games_ax, wholeGameCurve(run_folder, shared))
    for ax in (own_ax, pons_ax, games_ax):
        ax.set_xlabel("hours of training")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _plotWholeGames(ax, rows: list[dict]) -> None:
    sims = max((r["sims"] for r in rows), default=0)
    rows = [r for r in rows if r["sims"] == sims]
    for key, label in (("won", "won starts kept"), ("drawn", "drawn starts kept"), ("all", "all")):
        points = [(r["hours"], 100 * r[key]) for r in rows if r[key] is not None]
        ax.plot([h for h, _ in points], [k for _, k in points], marker="o", label=label,
                linestyle="--" if key == "all" else "-")
    ax.set_title(f"whole games against the solver ({sims} simulations)" if rows
                 else "whole games against the solver: none scored yet at the run's own search (make perfect)")
    ax.set_ylabel("% of starts kept")


def plotMistake(mistake: evaluation.Mistake):
    """A losing move of a whole game (a `Mistake` of a record, `evaluation.readWholeGames`):
    the position before it with the search's visit shares above the columns, and the
    position after it, the move ringed; the titles give the ply, the solver's verdict
    and the columns that would have kept the value."""
    before = GameState.fromMoves(mistake.moves)
    action = next(a for a in before.allowedActions if columnOf(a) == mistake.column - 1)
    after, _, _ = before.takeAction(action)
    visits = {row["column"]: row["N"] for row in mistake.table or []}
    total = sum(visits.values())
    shares = ([visits[c + 1] / total if c + 1 in visits else None for c in range(7)] if total else None)
    fig = boards.newFigure((7.4, 3.8))
    outcome = {1: "won", 0: "drawn", -1: "lost"}
    boards.drawBoard(fig.add_subplot(1, 2, 1), before, None, shares,
                     f"ply {mistake.ply}: visit shares; {outcome[mistake.before]} for the player to move")
    boards.drawBoard(fig.add_subplot(1, 2, 2), after, action, None, f"played {mistake.column}: now {outcome[mistake.after]} "
                           f"(keeping: {', '.join(map(str, mistake.keeping))})")
    fig.tight_layout()
    return fig


def plotRatings(rows: list[dict]):
    """A figure of `rateVersions` rows: each player's Elo with a 95% interval (two
    standard errors), the random player at 0.  The caller closes the figure."""

    fig, ax = plt.subplots(figsize=(7, 3.5))
    players = [row["player"] for row in rows]
    ax.errorbar(range(len(rows)), [row["elo"] for row in rows], yerr=[2 * row["stderr"] for row in rows],
                fmt="o", capsize=4)
    ax.set_xticks(range(len(rows)), players)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel("Elo (random player = 0)")
    ax.set_title("ratings from a round robin (95% intervals)")
    fig.tight_layout()
    return fig
