"""What the agent's last search found, for a person watching it think.

Per legal column at the searched root: the visits, the search's policy, Q, the prior
P, the exploration bonus U and the network's value after the move; as a table (text, HTML) and as one
line (`thinkingLine`).

Points of view: every value belongs to the player to move at the searched root (the
agent), +1 a win and -1 a loss for them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from agent import Agent
from game import columnOf


@dataclass
class Thinking:
    """One search of the agent: the move it chose and, per legal column, its statistics.

    `value`: the chosen move's Q; `nn_value`: the network's value of the searched
    position; both for the player to move there (the agent)."""

    action: int
    table: list[dict]
    value: float
    nn_value: float
    simulations: int
    """Simulations this move's search ran (the table's visits may hold more: those of
    the tree kept from the search of the previous move)."""

    @classmethod
    def of(cls, agent: Agent, action: int, pi, value: float, nn_value: float) -> "Thinking":
        """The agent's last search, which chose `action` with policy `pi` (see `Agent.act`)."""
        return cls(action, thinkingTable(agent, pi), value, nn_value, agent.MCTSsimulations)

    @property
    def column(self) -> int:
        """The chosen column, 1..7."""
        return columnOf(self.action) + 1

    @property
    def visits(self) -> int:
        return sum(row["N"] for row in self.table)

    @property
    def reused(self) -> int:
        """Visits that came from the tree kept from the previous move's search."""
        return self.visits - self.simulations


def thinkingTable(agent: Agent, pi) -> list[dict]:
    """One row per legal column at the root of the agent's last search, left to right;
    `pi` is that search's policy over the 42 actions (`Agent.act`'s second value).

    Keys: column (1..7), action, N (visits), policy (pi of the move: its share of the
    visits with the PUCT root search; with Gumbel's, the improved policy, which is not
    the visit shares), Q (mean value
    of the move), P (prior), U = cpuct * P * sqrt(max(1, total N)) / (1 + N) (the
    exploration bonus the next simulation would see; Gumbel's root search chooses its
    root moves by sequential halving instead, and for it U only shows what PUCT would
    add), net_after (the network's value of the position after the move, or None if
    the search never evaluated it, e.g. the game ends there).  Q, U and net_after are
    for the player to move at the root."""
    if agent.root is None or not agent.root.edges:
        raise ValueError(f"{agent.name} has not searched a position yet: let it move first")
    edges = sorted(agent.root.edges, key=lambda pair: columnOf(pair[0]))
    scale = agent.mcts.explorationScale(agent.root)
    return [{"column": columnOf(action) + 1, "action": action, "N": edge.N,
             "policy": float(pi[action]), "Q": edge.Q, "P": edge.P,
             "U": scale * edge.P / (1 + edge.N),
             "net_after": _valueAfter(edge)}
            for action, edge in edges]


def _valueAfter(edge) -> float | None:
    """The network's value of the position after `edge`'s move, for the player making
    it; None when the search never evaluated that position."""
    if edge.N == 0 or edge.outNode.nn_value is None:
        return None
    return -edge.outNode.nn_value


def _signed(value) -> str:
    return "--" if value is None else f"{value:+.3f}"


def thinkingText(thinking: Thinking) -> str:
    """The table of a search as aligned text, the chosen column marked."""
    lines = ["col  visits  policy       Q      P      U  net after"]
    for row in thinking.table:
        mark = "  <- played" if row["action"] == thinking.action else ""
        lines.append(f"{row['column']:3d}  {row['N']:6d}  {row['policy']:6.2f}  {row['Q']:+.3f}  {row['P']:5.3f}"
                     f"  {row['U']:5.3f}  {_signed(row['net_after']):>9}{mark}")
    lines.append(thinkingLine(thinking))
    return "\n".join(lines)


def thinkingLine(thinking: Thinking) -> str:
    """The search in one line: the column played, its visits, the simulations this move
    ran and the visits kept from the previous move's tree, the values."""
    played = next(row["N"] for row in thinking.table if row["action"] == thinking.action)
    return (f"plays column {thinking.column}: {played} of {thinking.visits} visits ({thinking.simulations} "
            f"simulations this move, {thinking.reused} kept from the previous move's tree); its value for itself: "
            f"search {thinking.value:+.3f}, network before searching {thinking.nn_value:+.3f}")


def thinkingHtml(thinking: Thinking) -> str:
    """The table of a search as an HTML table, the chosen column in bold."""
    head = "".join(f"<th>{h}</th>" for h in ("column", "visits", "policy", "Q", "P", "U", "net after"))
    body = []
    for row in thinking.table:
        style = ' style="font-weight:bold"' if row["action"] == thinking.action else ""
        cells = (row["column"], row["N"], f"{row['policy']:.2f}", _signed(row["Q"]), f"{row['P']:.3f}",
                 f"{row['U']:.3f}", _signed(row["net_after"]))
        body.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table><p>It {html.escape(thinkingLine(thinking))}.</p>{_LEGEND}"


_LEGEND = ("<p><small>visits: simulations through the move, this move's and those kept from the search of "
           "the previous move (the tree is reused); policy: the search's policy for the move, the training "
           "target (PUCT: its share of the visits; Gumbel: the improved policy); Q: the visits' mean result; "
           "P: the network's prior; U: the exploration bonus the next simulation would add to Q (PUCT; "
           "Gumbel's root search keeps its candidates by their Gumbel draw, prior and Q instead); net after: "
           "the network's value of the position after the move. Values are for the searching player: +1 a "
           "win, -1 a loss.</small></p>")
