"""A smaller network taught by a run's own: how strong a cheaper network can be.

Run: .venv/bin/python benchmarks/smallnet.py [--run-folder F] [--version V]
                                             --blocks B --filters W [--epochs E]
                                             [--teacher-weight T] [--selfplay-games G]
                                             [--sampled-games N] [--sims S] [--limit L]
                                             [--save-student FILE] [--out FILE]

The iteration's cost is the network's multiply-adds per position (docs/performance.md:
the calls run at the CPU's matrix units' limit), so a network with fewer of them at the
same strength is the lever left for a cheaper iteration.  This measures the first half of
that question without a run of its own: the run's best network (the teacher, version V,
default the best) and its memory snapshot (the positions its self-play stored: the
same data the run trained on, no solver, no Pons position), with G more games of the
teacher's own self-play (the run's self-play settings) where the snapshot's positions
are too few to teach from; a student of B blocks of W
filters (the run's config otherwise) is fitted to the memory's distinct positions for E
epochs, its targets blended: T x the teacher's own outputs (its value, its policy over
the legal moves) + (1 - T) x the memory's training targets (the search's policy, the
value target the run uses).  N more games, cheap where G games are dear, each moves
sampled from the teacher's raw policy (one network call a move, no search) after the
run's random opening moves, add their distinct positions with the teacher's outputs as
their only targets: a network is rebuilt from many positions, and the teacher's
function is what the student is to learn.  Then, for teacher and student: multiply-adds per position,
positions per second through the engine self-play uses (batches of 128, alternating),
agreement on held-out positions (the student's best move = the teacher's, mean |value
difference|), and mistake rates on Pons' sets (the raw network and the agent at S
simulations, L positions per set; the teacher's are read from the run's curve when it
has that row).  Pons' sets measure only.  A student that matches the teacher here is a
candidate for a run of its own; one that does not, is not worth one.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import numpy as np  # noqa: E402

import cli  # noqa: E402
import funcs  # noqa: E402
import runs  # noqa: E402
import storage  # noqa: E402
from agent import Agent  # noqa: E402
from config import SHIPPED  # noqa: E402
from curve import scoredRow  # noqa: E402
from game import CELLS, GameState  # noqa: E402
from loss import POLICY_NOT_LEGAL, qWeights  # noqa: E402
from memory import Memory, mergedRows  # noqa: E402
from model import Residual_CNN  # noqa: E402
from pons import PONS_FOLDER, PONS_SETS, evaluateSets, loadSets  # noqa: E402
from roofline import multiplyAdds  # noqa: E402

HOLDOUT = 0.05
"""Share of the distinct positions kept out of the fit, to measure agreement on."""
SPEED_BATCH = 128
"""Positions per timed call: a full self-play call of the strong preset (128 games)."""


def teacherSelfplay(teacher, cfg, games: int, say=print) -> list[dict]:
    """Memory rows (positions with their search policy, z and q, as self-play stores
    them) of `games` new games of `teacher` against itself with the run's self-play
    settings, EPISODES games at a time in lockstep, each batch seeded apart."""
    quiet = logging.getLogger("smallnet.selfplay")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    memory = Memory(games * 2 * teacher.output_dim)
    for batch, first in enumerate(range(0, games, cfg.EPISODES)):
        agent = Agent.fromConfig("teacher", cfg, teacher, seed=cfg.SEED * 1_000_003 + batch)
        funcs.playMatches(agent, agent, min(cfg.EPISODES, games - first), quiet, cfg.TURNS_UNTIL_TAU0, memory)
        say(f"  self-play: {min(games, first + cfg.EPISODES):,} of {games:,} games, {len(memory):,} positions")
    return list(memory.ltmemory)


def teacherSampledPositions(teacher, games: int, openingMoves: int, seed: int, lockstep: int = 1024,
                             say=print) -> list:
    """The distinct positions (not ended) of `games` games of `teacher` against itself,
    `lockstep` at a time: each game opens with 0 to `openingMoves` uniformly random
    moves, not kept, then every move is drawn from the teacher's raw policy (the
    softmax of its logits over the legal moves, for the player to move) and every
    position reached is kept, first occurrence order."""
    rng = np.random.default_rng(seed)
    seen: dict[int, GameState] = {}
    for first in range(0, games, lockstep):
        states = [GameState.initial() for _ in range(min(lockstep, games - first))]
        for i, opening in enumerate(rng.integers(0, openingMoves + 1, size=len(states))):
            for _ in range(opening):
                if not states[i].isEndGame:
                    states[i] = states[i].takeAction(int(rng.choice(states[i].allowedActions)))[0]
        live = [state for state in states if not state.isEndGame]
        while live:
            for state in live:
                seen.setdefault(state.id, state)
            _, logits = teacher.predict(teacher.convertToModelInputs(live))
            actions = sampledActions(legalSoftmax(logits, legalMask(live)), rng)
            moved = [state.takeAction(int(action))[0] for state, action in zip(live, actions)]
            live = [state for state in moved if not state.isEndGame]
        say(f"  sampled games: {first + len(states):,} of {games:,}, {len(seen):,} distinct positions")
    return list(seen.values())


def sampledActions(policy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column index per row of `policy`, drawn with the row's weights; entries at
    or below zero (POLICY_NOT_LEGAL among them) are never drawn."""
    cumulative = policy.clip(min=0.0).cumsum(axis=1)
    thresholds = (1.0 - rng.random((len(policy), 1))) * cumulative[:, -1:]
    return (cumulative < thresholds).sum(axis=1)


def legalMask(states) -> np.ndarray:
    """(n, 42) booleans: the legal moves of each position."""
    mask = np.zeros((len(states), CELLS), dtype=bool)
    for i, state in enumerate(states):
        mask[i, state.allowedActions] = True
    return mask


def legalSoftmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Each row's softmax over its legal moves, POLICY_NOT_LEGAL at the others (the
    policy loss's target format)."""
    masked = np.where(legal, logits, -np.inf)
    exp = np.exp(masked - masked.max(axis=1, keepdims=True))
    return np.where(legal, exp / exp.sum(axis=1, keepdims=True), POLICY_NOT_LEGAL).astype(np.float32)


def predictAll(network, inputs: np.ndarray, batch: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """(values, logits) of `network` for every input, in batches."""
    parts = [network.predict(inputs[i:i + batch]) for i in range(0, len(inputs), batch)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def blendedTargets(stored: dict, teacher: dict, weight: float) -> dict:
    """`weight` x the teacher's targets + (1 - weight) x the stored ones, per head;
    illegal policy entries stay POLICY_NOT_LEGAL (both hold it in the same places)."""
    value = weight * teacher["value_head"] + (1 - weight) * stored["value_head"]
    policy = np.where(stored["policy_head"] == POLICY_NOT_LEGAL, POLICY_NOT_LEGAL,
                      weight * teacher["policy_head"] + (1 - weight) * stored["policy_head"])
    return {"value_head": value.astype(np.float32), "policy_head": policy.astype(np.float32)}


def teacherTargets(teacher, inputs: np.ndarray, states: list) -> dict:
    """The teacher's outputs as targets for `states` (model inputs `inputs`): its value
    (for the player to move) and its softmax over the legal moves."""
    values, logits = predictAll(teacher, inputs)
    return {"value_head": values.astype(np.float32), "policy_head": legalSoftmax(logits, legalMask(states))}


def withTeacherTargets(teacher, inputs: np.ndarray, targets: dict, states: list) -> tuple[np.ndarray, dict]:
    """`inputs` and `targets` followed by `states`' inputs with the teacher's outputs
    (`teacherTargets`) as their targets."""
    if not states:
        return inputs, targets
    more = teacher.convertToModelInputs(states)
    taught = teacherTargets(teacher, more, states)
    return np.concatenate([inputs, more]), {head: np.concatenate([targets[head], taught[head]]) for head in taught}


def agreement(student, teacher, inputs: np.ndarray, legal: np.ndarray) -> dict:
    """On `inputs`: the share of positions where the student's best legal move is the
    teacher's, and the mean |value difference| (values for the player to move)."""
    student_values, student_logits = predictAll(student, inputs)
    teacher_values, teacher_logits = predictAll(teacher, inputs)
    best = lambda logits: np.argmax(np.where(legal, logits, -np.inf), axis=1)  # noqa: E731
    return {"best_move_agreement": float(np.mean(best(student_logits) == best(teacher_logits))),
            "value_abs_difference": float(np.mean(np.abs(student_values - teacher_values)))}


def distil(student, inputs: np.ndarray, targets: dict, epochs: int, rate: float, batch: int,
           say=print) -> list[float]:
    """Fit `student` for `epochs` passes, the learning rate `rate` dropped tenfold for
    the last third; returns each epoch's mean loss."""
    losses = []
    for epoch in range(epochs):
        student.setLearningRate(rate if epoch < epochs - epochs // 3 else rate / 10)
        history = student.fit(inputs, targets, epochs=1, verbose=0, validation_split=0, batch_size=batch)
        losses.append(float(history.history["loss"][-1]))
        say(f"  epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    return losses


def positionsPerSecond(networks: dict, x: np.ndarray, rounds: int = 5, seconds: float = 1.0) -> dict:
    """Positions per second of each network's self-play engine on batch `x`: `rounds`
    alternating windows of `seconds` each, the median per network."""
    rates: dict[str, list[float]] = {name: [] for name in networks}
    for network in networks.values():
        network.predict(x)
    for _ in range(rounds):
        for name, network in networks.items():
            calls, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                network.predict(x)
                calls += 1
            rates[name].append(calls * len(x) / (time.perf_counter() - start))
    return {name: float(np.median(r)) for name, r in rates.items()}


def ponsRates(network, cfg, sims: int, limit: int, pons_folder: Path, label: str) -> dict:
    """{set: {"network": %, "agent": %}} for `network` on every Pons set."""
    rows = evaluateSets(network, cfg, sims, loadSets(pons_folder, list(PONS_SETS), limit),
                        say=lambda text: print(f"  {label}: {text}", flush=True))
    return {r["set"]: {"network": round(r["network"], 2), "agent": round(r["agent"], 2)} for r in rows}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-folder", type=Path, default=SHIPPED.path("RUN_FOLDER"),
                        help="the teacher's run (default: the shipped run)")
    parser.add_argument("--version", type=int, default=None, help="the teacher (default: the run's best)")
    parser.add_argument("--blocks", type=cli.positive(int), required=True,
                        help="the student's blocks (the first convolutional block included)")
    parser.add_argument("--filters", type=cli.positive(int), required=True, help="the student's filters")
    parser.add_argument("--epochs", type=cli.positive(int), default=20, help="passes over the memory (default 20)")
    parser.add_argument("--teacher-weight", type=float, default=0.5,
                        help="share of the teacher's outputs in the targets, 0 to 1 (default 0.5)")
    parser.add_argument("--selfplay-games", type=int, default=0,
                        help="games of the teacher's own self-play added to the memory's positions (default 0)")
    parser.add_argument("--sampled-games", type=int, default=0,
                        help="games sampled from the teacher's raw policy, their positions added (default 0)")
    parser.add_argument("--sims", type=cli.positive(int), default=600, help="agent simulations (default 600)")
    parser.add_argument("--limit", type=cli.positive(int), default=1000, help="Pons positions per set (default 1000)")
    parser.add_argument("--pons-folder", type=Path, default=PONS_FOLDER)
    parser.add_argument("--save-student", type=Path, default=None, help="save the student as this .keras file")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if not 0.0 <= args.teacher_weight <= 1.0:
        parser.error(f"--teacher-weight must be between 0 and 1, not {args.teacher_weight}")
    for option in ("selfplay_games", "sampled_games"):
        if getattr(args, option) < 0:
            parser.error(f"--{option.replace('_', '-')} must not be negative, not {getattr(args, option)}")
    folder = args.run_folder
    cfg = runs.runConfig(folder)
    checkpoint = runs.readCheckpoint(folder)
    if checkpoint["memory_iteration"] is None:
        parser.error(f"{folder} has no memory snapshot to teach from")
    version = runs.bestVersion(folder) if args.version is None else args.version
    if not storage.model_path(folder, version).exists():
        parser.error(f"{folder} has no version {version} ({runs.savedVersionsList(folder)})")

    keras.utils.set_random_seed(cfg.SEED)
    teacher = runs.networkFor(cfg, folder)
    teacher.loadWeights(storage.model_path(folder, version))
    student_cfg = cfg.replace(HIDDEN_CNN_LAYERS=[{"filters": args.filters, "kernel_size": (3, 3)}] * args.blocks)
    student = Residual_CNN.fromConfig(student_cfg, teacher.input_dim, teacher.output_dim, run_folder=folder)

    rows = list(Memory.load(storage.memory_path(folder, checkpoint["memory_iteration"]), cfg.MEMORY_SIZE).ltmemory)
    if args.selfplay_games:
        rows += teacherSelfplay(teacher, cfg, args.selfplay_games, say=lambda text: print(text, flush=True))
    rows = mergedRows(rows)
    order = np.random.default_rng(cfg.SEED).permutation(len(rows))
    held = max(1, int(HOLDOUT * len(rows)))
    fitted, kept = [rows[i] for i in order[held:]], [rows[i] for i in order[:held]]
    inputs, stored = teacher.trainingData(fitted, qWeights(fitted, cfg))
    targets = blendedTargets(stored, teacherTargets(teacher, inputs, [r["state"] for r in fitted]),
                             args.teacher_weight)
    sampled: list = []
    if args.sampled_games:
        known = {row["id"] for row in rows}
        sampled = [state for state in teacherSampledPositions(teacher, args.sampled_games, cfg.RANDOM_OPENING_MOVES,
                                                              cfg.SEED, say=lambda text: print(text, flush=True))
                   if state.id not in known]
        inputs, targets = withTeacherTargets(teacher, inputs, targets, sampled)
    print(f"Teacher: version {version} of {folder} ({len(cfg.HIDDEN_CNN_LAYERS)} blocks of "
          f"{cfg.HIDDEN_CNN_LAYERS[0]['filters']} filters); student: {args.blocks} blocks of {args.filters} filters; "
          f"{len(inputs):,} positions fitted, {held:,} held out, teacher weight {args.teacher_weight}", flush=True)
    start = time.perf_counter()
    losses = distil(student, inputs, targets, args.epochs, cfg.LEARNING_RATE, cfg.FIT_BATCH_SIZE,
                    say=lambda text: print(text, flush=True))
    fit_seconds = time.perf_counter() - start

    if args.save_student is not None:
        storage.save_model(student.model, args.save_student)
    kept_inputs = teacher.convertToModelInputs([row["state"] for row in kept])
    result = {"teacher": {"version": version, "layers": len(cfg.HIDDEN_CNN_LAYERS),
                          "filters": cfg.HIDDEN_CNN_LAYERS[0]["filters"], "multiply_adds": multiplyAdds(teacher.model)},
              "student": {"layers": args.blocks, "filters": args.filters, "multiply_adds": multiplyAdds(student.model),
                          "epochs": args.epochs, "teacher_weight": args.teacher_weight, "fit_seconds": fit_seconds,
                          "selfplay_games": args.selfplay_games, "sampled_games": args.sampled_games,
                          "sampled_positions": len(sampled), "positions": len(inputs), "losses": losses,
                          **agreement(student, teacher, kept_inputs, legalMask([r["state"] for r in kept]))},
              "sims": args.sims, "limit": args.limit}
    speed = positionsPerSecond({"teacher": teacher, "student": student}, kept_inputs[:SPEED_BATCH])
    for name in ("teacher", "student"):
        result[name]["positions_per_s"] = speed[name]
    curve_row = scoredRow(folder, version, args.sims, args.limit)
    result["teacher"]["pons"] = (curve_row["sets"] if curve_row is not None else
                                 ponsRates(teacher, cfg, args.sims, args.limit, args.pons_folder, "teacher"))
    result["student"]["pons"] = ponsRates(student, cfg, args.sims, args.limit, args.pons_folder, "student")
    print(formatResult(result))
    if args.out is not None:
        storage.write_json(args.out, result)
    return result


def formatResult(result: dict) -> str:
    teacher, student = result["teacher"], result["student"]
    lines = [f"{'':<22}{'teacher':>12}{'student':>12}{'ratio':>8}",
             f"{'multiply-adds':<22}{teacher['multiply_adds']:>12,}{student['multiply_adds']:>12,}"
             f"{student['multiply_adds'] / teacher['multiply_adds']:>8.2f}",
             f"{'positions/s (128)':<22}{teacher['positions_per_s']:>12,.0f}{student['positions_per_s']:>12,.0f}"
             f"{student['positions_per_s'] / teacher['positions_per_s']:>8.2f}"]
    for name, rates in teacher["pons"].items():
        for kind in ("network", "agent"):
            label = f"{name} {kind if kind == 'network' else 'agent ' + str(result['sims'])} %"
            lines.append(f"{label:<22}{rates[kind]:>12.2f}{student['pons'][name][kind]:>12.2f}")
    lines.append(f"held out: student's best move = teacher's in {100 * student['best_move_agreement']:.1f}%, "
                 f"mean |value difference| {student['value_abs_difference']:.3f}; fit {student['fit_seconds']:.0f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
