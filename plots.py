"""Plots of a run's progress (its metrics.jsonl) and of ratings (`ratings.rateVersions`)."""

from __future__ import annotations

from typing import Callable

import runs
import storage


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
    import matplotlib.pyplot as plt

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


def plotRatings(rows: list[dict]):
    """A figure of `rateVersions` rows: each player's Elo with a 95% interval (two
    standard errors), the random player at 0.  The caller closes the figure."""
    import matplotlib.pyplot as plt

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
