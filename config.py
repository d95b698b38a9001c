"""Configuration of a training run, with the tutorial's names and defaults.

Every value lives in one typed, validated dataclass, `Config`, under the tutorial's names (``EPISODES``,
``MCTS_SIMS`` ...); `DEFAULT` holds the defaults.  The tutorial read module globals (``config.EPISODES``); here
everything a run builds (networks, agents, memory, loggers) is built from a `Config` instance passed in
explicitly, so a resumed run is built from the config archived in its own run folder (``config.json``), and a
change is made with ``cfg.replace(MCTS_SIMS=100)``, which validates it."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent

ENGINES = ("auto", "tensorflow", "openvino")
"""The values of INFERENCE: the engines that can evaluate the network for the search."""
PRECISIONS = ("auto", "f32", "bf16")
"""The values of INFERENCE_PRECISION."""
VALUE_HEADS = ("tanh", "wdl")
"""The values of VALUE_HEAD."""
TRAINING_PRECISIONS = ("float32", "bfloat16")
"""The values of TRAINING_PRECISION."""
SEARCH_SETTINGS = ("ROOT_SEARCH", "CPUCT", "GUMBEL_SAMPLED_ACTIONS", "GUMBEL_C_VISIT", "GUMBEL_C_SCALE",
                   "MIRROR_AVERAGE", "LEAF_BATCH", "PRIOR_TEMPERATURE", "SECURE_CHILD")
"""The agent's search settings: a saved network loads with any of them (`withSearch` changes them at play time)."""


class ConfigError(ValueError):
    """A configuration value is missing, unknown or out of range."""


def checkInference(engine: str, precision: str) -> None:
    """Refuse an INFERENCE or INFERENCE_PRECISION the project does not know, and bf16 with TensorFlow (which has
    no bf16 engine here), naming the value: ConfigError.  Whether this machine can run a valid choice is
    `inference.resolve`'s question."""
    if engine not in ENGINES:
        raise ConfigError(f"INFERENCE must be one of {ENGINES}, got {engine!r}")
    if precision not in PRECISIONS:
        raise ConfigError(f"INFERENCE_PRECISION must be one of {PRECISIONS}, got {precision!r}")
    if engine == "tensorflow" and precision == "bf16":
        raise ConfigError("INFERENCE_PRECISION='bf16' needs INFERENCE='openvino' or 'auto'")


def _is_positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _is_finite_number(value) -> bool:
    """True for an int or float that is a finite float (an int beyond float's range, which JSON allows, is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


INT_LIMIT = 2**31
"""Every integer setting stays below this: numpy seeds and the C integers below numpy, Keras and Python's deque
are 32- or 64-bit, and no setting needs more."""


def _with_tuple_kernel(layer):
    """A layer entry with its kernel_size as a tuple (JSON gives a list); anything malformed is returned as it
    is, for `validate` to name."""
    if isinstance(layer, dict) and isinstance(layer.get("kernel_size"), (list, tuple)):
        return {**layer, "kernel_size": tuple(layer["kernel_size"])}
    return layer


LOGGER_NAMES = ("main", "memory", "tourney", "mcts", "model")
"""The run's logs (`loggers`), the keys of LOGGERS."""


def _default_loggers() -> dict[str, bool]:
    """The tutorial's choice: main, tourney and model on; memory and mcts (large) off."""
    return {name: name not in ("memory", "mcts") for name in LOGGER_NAMES}


_RANGES = {
    "CPUCT": (lambda v: v > 0, "be positive"), "EPSILON": (lambda v: 0 <= v <= 1, "lie in [0, 1]"),
    "ALPHA": (lambda v: v > 0, "be positive"), "REG_CONST": (lambda v: v >= 0, "not be negative"),
    "LEARNING_RATE": (lambda v: v > 0, "be positive"), "MOMENTUM": (lambda v: 0 <= v < 1, "lie in [0, 1)"),
    "SCORING_THRESHOLD": (lambda v: v > 0, "be positive"), "GUMBEL_C_VISIT": (lambda v: v >= 0, "not be negative"),
    "GUMBEL_C_SCALE": (lambda v: v > 0, "be positive"),
    "VALUE_TARGET_Q_WEIGHT": (lambda v: 0 <= v <= 1, "lie in [0, 1]"),
    "VALUE_TARGET_Q_WEIGHT_OPENING": (lambda v: 0 <= v <= 1, "lie in [0, 1]"),
    "FULL_SEARCH_PROBABILITY": (lambda v: 0 < v <= 1, "lie in (0, 1]"),
    "ARCHIVE_START_PROBABILITY": (lambda v: 0 <= v <= 1, "lie in [0, 1]"),
    "WEIGHT_AVERAGE_DECAY": (lambda v: 0 <= v < 1, "lie in [0, 1)"),
    "PLAY_MOVE_SECONDS": (lambda v: v >= 0, "not be negative (0: no limit)"),
    "SECURE_CHILD": (lambda v: v >= 0, "not be negative (0: the most visited move)")}
"""The float settings' ranges: (test, the rule as `validate`'s message says it)."""


@dataclass
class Config:
    """All settings of a run.  Field names are the tutorial's where it has one.

    A Config is validated when made and not changed after (an assignment such as
    ``cfg.MCTS_SIMS = -3`` raises ConfigError): a variant is made with `replace`."""

    # --- self-play ---------------------------------------------------------------
    EPISODES: int = 30
    """Self-play games per iteration."""
    MCTS_SIMS: int = 50
    """MCTS simulations per move (self-play and tournaments)."""
    MEMORY_SIZE: int = 30000
    """Positions kept in long-term memory (oldest dropped first)."""
    TURNS_UNTIL_TAU0: int = 10
    """Self-play moves are sampled from visit counts (tau=1) for this many turns of each game, then the most
    visited move is played (tau=0).  With the Gumbel root search, tau=1 means the Gumbel draw that makes its
    chosen move a sample, tau=0 no draw: the best move by logits and completed Q."""
    RANDOM_OPENING_MOVES: int = 0
    """Self-play games start with k uniformly random legal moves, k drawn for each game from
    0..RANDOM_OPENING_MOVES: those moves are neither searched nor stored, so the games (and memory) cover many
    more positions than the search's own, nearly fixed, openings.  Only the rules are used.  0 (the tutorial):
    every move is searched; at most 20.  Tournaments and play against people never use it."""
    ARCHIVE_START_PROBABILITY: float = 0.0
    """Go-Exploit (Trudeau & Bowling): the chance a self-play game starts from a memory position drawn uniformly
    (no random opening then) instead of the empty board: shorter games from reachable positions.  0: the tutorial."""
    FAST_SEARCH_SIMS: int = 0
    """Playout cap randomisation (KataGo): > 0, a searched self-play move is a full search (MCTS_SIMS, stored)
    with probability FULL_SEARCH_PROBABILITY, else a fast one of FAST_SEARCH_SIMS (played, not stored): more
    games' results per hour.  0 (the tutorial): all full.  Below MCTS_SIMS; never in tournaments or play."""
    FULL_SEARCH_PROBABILITY: float = 0.25
    """With FAST_SEARCH_SIMS > 0: the chance of a full, stored search (KataGo's 0.25)."""
    FAST_SEARCH_SIDE: bool = False
    """With FAST_SEARCH_SIMS > 0: True, a game's draw, not a move's: with probability 1 - FULL_SEARCH_PROBABILITY
    one side (either colour) plays every move fast, the other full and stored (it learns to punish mistakes)."""
    STRONG_SEARCH_SIMS: int = 0
    """> 0 (above MCTS_SIMS): one side of every self-play game (either colour) searches each move with this many
    simulations, both sides stored: the stronger side punishes more of the other's mistakes, so their results
    and continuations show what they cost.  0 (the tutorial): both sides search alike.  Not with FAST_SEARCH_SIMS."""
    CPUCT: float = 1.0
    """Exploration constant of the PUCT selection rule."""
    EPSILON: float = 0.2
    """Weight of the Dirichlet noise mixed into the root priors during self-play, with
    ROOT_SEARCH "puct" (Gumbel's root search explores through its Gumbel draws)."""
    ALPHA: float = 0.8
    """Concentration of that Dirichlet noise."""
    ROOT_SEARCH: str = "puct"
    """How the root's move is searched and chosen: "puct" (the tutorial: every simulation descends by max Q + U,
    the move and the policy target come from the visit counts) or "gumbel" (Gumbel AlphaZero: sampled actions
    compared by sequential halving, the policy target from completed Q-values; PUCT below the root, no noise)."""
    GUMBEL_SAMPLED_ACTIONS: int = 16
    """Gumbel root search: how many root actions (at most) are considered."""
    GUMBEL_C_VISIT: float = 50.0
    """Gumbel root search: sigma(q) = (GUMBEL_C_VISIT + max visits) * GUMBEL_C_SCALE * q."""
    GUMBEL_C_SCALE: float = 0.1
    """Gumbel root search: see GUMBEL_C_VISIT."""
    LEAF_BATCH: int = 1
    """Leaves one search sends to the network in one call: each descent leaves a virtual loss on its path so
    that the next turns elsewhere (`Agent.simulateInBatches`).  A call of 8 positions costs little more than a
    call of 1, so one game's search (a person's opponent) runs more simulations a second.  1 (the tutorial)."""
    MIRROR_AVERAGE: bool = False
    """The search evaluates each leaf with its mirror image (a symmetry of the rules) in the same network call
    and uses the mean of the two outputs: less of the network's noise, at twice the positions evaluated (little
    more time in one game's small calls; twice in self-play's full batches).  False (the tutorial): one."""
    PRIOR_TEMPERATURE: float = 1.0
    """The softmax temperature of the network's policy where the search expands a leaf: priors proportional to
    exp(logit / PRIOR_TEMPERATURE) over the legal moves. Above 1 the priors are flatter, so a move the network
    rates low still draws some visits; the policy the network learns from is untouched.  1 (the tutorial): the
    network's own softmax."""
    SECURE_CHILD: float = 0.0
    """PUCT's move at tau = 0: > 0 the "secure child" (Chaslot et al. 2008), the root move of highest Q - SECURE_CHILD
    / sqrt(N): a move whose value fell late in the search gives way to one whose value held.  0: the most visited."""

    # --- retraining --------------------------------------------------------------
    BATCH_SIZE: int = 256
    """Positions sampled from memory for each training loop."""
    FIT_BATCH_SIZE: int = 32
    """Mini-batch size inside each fit call (the tutorial's hard-coded 32)."""
    EPOCHS: int = 1
    """Epochs over each sampled batch."""
    REG_CONST: float = 1e-4
    """L2 regularisation of every convolution and dense kernel."""
    LEARNING_RATE: float = 0.1
    """SGD learning rate."""
    LEARNING_RATE_SCHEDULE: list = field(default_factory=list)
    """[[iteration, rate], ...], iterations increasing: from each listed iteration on, retraining uses that rate
    instead of LEARNING_RATE.  Empty (the tutorial): the same LEARNING_RATE throughout."""
    MOMENTUM: float = 0.9
    """SGD momentum."""
    TRAINING_LOOPS: int = 10
    """Samples-and-fits per iteration."""
    VALUE_TARGET_Q_WEIGHT: float = 0.0
    """The value target of a position is (1 - w) * z + w * q: z the game's result, q the search's
    value of the move played (both for the player to move).  0 is the tutorial (z only)."""
    OPENING_STONES: int = 0
    """Positions of fewer stones take w = VALUE_TARGET_Q_WEIGHT_OPENING: an opening's z follows many later moves,
    each a chance of a mistake, so its q can be the truer target.  0 is the tutorial (none)."""
    VALUE_TARGET_Q_WEIGHT_OPENING: float = 0.0
    VALUE_HEAD: str = "tanh"
    """What the value head predicts, for the player to move: "tanh" (the tutorial: one number in
    [-1, 1], trained by mean squared error against the value target) or "wdl" (the probabilities of
    a win, a draw and a loss, trained by cross-entropy; the search reads their expectation P(win) -
    P(loss)).  A tanh head cannot tell a drawn position from an unclear one (both near 0)."""
    TRAINING_PRECISION: str = "float32"
    """The arithmetic of retraining's gradient steps: "float32" (the tutorial) or "bfloat16"
    (Keras's mixed_bfloat16: the layers compute in bfloat16 on the CPU's bfloat16 units, the weights
    and the heads' outputs stay float32).  The saved networks and the search's engine are float32
    either way; a CPU without native bfloat16 trains in float32 and says so."""
    MERGE_DUPLICATES: bool = False
    """Retraining samples distinct positions: the rows of a position that occurs
    several times in memory are merged into one, with their policy and value targets
    averaged (openings occur in nearly every game).  False is the tutorial."""
    MIN_MEMORY_SIZE: int = 256
    """Retraining (and so the tournament) starts once memory holds this many
    positions.  The tutorial waits for a full memory: set it to MEMORY_SIZE for that."""
    REANALYSE_POSITIONS: int = 0
    """Memory positions whose targets are refreshed each iteration, before retraining, by a new
    search of the best network (Reanalyse, as in MuZero): their policy target and search value q
    become what today's network finds there; the game's result stays.  Positions stay in memory for
    many iterations; this keeps their targets nearer the current network's, at the price of a
    search per position.  0 is the tutorial (none)."""
    WEIGHT_AVERAGE_DECAY: float = 0.0
    """d > 0: after each retraining the run keeps average = d * average + (1 - d) * current network,
    weight by weight (`model.movingAverage`); the tournament's current player plays with the average,
    and a promotion makes it the best network.  The mean of the weights along training's path is a
    better network than any one point of it (stochastic weight averaging); retraining goes on from its
    own weights.  0 (the tutorial): the current player is the network retraining fits."""
    HIDDEN_CNN_LAYERS: list = field(default_factory=lambda: [{"filters": 75, "kernel_size": (4, 4)} for _ in range(6)])
    """First entry: the convolutional block; every further entry: one residual block."""
    COLOUR_PLANE: bool = False
    """A third input plane: ones when the first player is to move, zeros for the second (AlphaZero's colour
    plane, `game.networkInputs`: whose turn, at every cell, not left to a count of stones).  False: the tutorial."""

    # --- inference -----------------------------------------------------------------
    INFERENCE: str = "auto"
    """Which engine evaluates the network for the search: "openvino" (compiled for
    this CPU), "tensorflow" (the Keras model's own pass) or "auto" (OpenVINO where it
    is installed, else TensorFlow).  Training is always Keras."""
    INFERENCE_PRECISION: str = "auto"
    """"f32", "bf16" (OpenVINO only: the CPU's bfloat16 matrix units; values within
    about 0.005 of f32) or "auto" (bf16 where the CPU supports it natively, else f32)."""

    # --- tournament --------------------------------------------------------------
    EVAL_EPISODES: int = 20
    """Tournament games between the current and the best network per iteration (even: each starts half)."""
    EVAL_TURNS_UNTIL_TAU0: int = 4
    """Tournament moves sampled at the start of each game (from visit counts, or by the Gumbel draw
    with ROOT_SEARCH="gumbel"; see TURNS_UNTIL_TAU0), then the best is played.  The tutorial plays
    every tournament move at tau=0, which makes the games between two fixed networks (nearly)
    repeat: 20 games are then little more than 2 games played 10 times.  0: the tutorial's."""
    EVAL_RANDOM_OPENING_MOVES: int = 0
    """Tournament games start with k random legal moves, unsearched, k from 0..EVAL_RANDOM_OPENING_MOVES for each pair
    of games, which play one opening with the seats swapped (`funcs.pairedOpening`): without them a tournament is a
    few distinct games (a run's 20 were 6), a challenger judged on a few lines.  0 (the tutorial); at most 20."""
    EVAL_STOP_WHEN_DECIDED: bool = False
    """The tournament stops as soon as its remaining games cannot change whether the current network
    is promoted (the same rule, the same decision); its scores are then over the games played.
    False (the tutorial): every game is played.  Ray workers' games (WORKERS > 0) are all played."""
    SCORING_THRESHOLD: float = 1.3
    """The current network is promoted when its wins exceed the best network's wins times this factor."""

    # --- evaluation against perfect play ----------------------------------------
    EVAL_POSITIONS: int = 100
    """Positions of the seeded benchmark set scored after each iteration (0 = off)."""
    EVAL_SIMS: int = 50
    """MCTS simulations the agent uses on that benchmark set."""
    PLAY_SIMS: int = 0
    """MCTS simulations of the agent a person plays or inspects (the notebook's play
    cells, `make play`, `play.loadPlayer`); 0: MCTS_SIMS, as in the tutorial."""
    PLAY_ROOT_SEARCH: str = ""
    """The root search of that agent, "puct" or "gumbel" (also what `make perfect`
    measures by default); "": ROOT_SEARCH, as in the tutorial."""
    PLAY_CPUCT: float = 0.0
    """The exploration constant of that agent's search; 0: CPUCT, as in the tutorial. Self-play
    keeps CPUCT: a search of a few dozen simulations and one of thousands need not explore alike."""
    PLAY_LEAF_BATCH: int = 0
    """Leaves per network call of that agent's search (LEAF_BATCH); 0: LEAF_BATCH."""
    PLAY_MIRROR_AVERAGE: bool = False
    """True: that agent's search averages each leaf with its mirror (MIRROR_AVERAGE); False: as MIRROR_AVERAGE."""
    PLAY_PRIOR_TEMPERATURE: float = 0.0
    """The policy temperature of that agent's search (PRIOR_TEMPERATURE); 0: PRIOR_TEMPERATURE."""
    PLAY_MOVE_SECONDS: float = 0.0
    """That agent's time limit per move (PUCT only): it stops at PLAY_SIMS or after these seconds, so a move keeps
    its time on a slower host; 0: none, the tutorial's fixed count.  The measuring scripts ignore it."""

    # --- where the games are played ----------------------------------------------
    WORKERS: int = 0
    """Ray workers that play the self-play and tournament games (each holds its own copy of the
    networks and plays its share of the games in lockstep); the learner keeps memory, retraining and
    promotion.  0: every game is played in the training process, without Ray.  The games, and so
    memory, are the same for any number (see workers.py).  Taken from the config given to training,
    also when a run is resumed."""
    RAY_ADDRESS: str | None = None
    """With WORKERS > 0: the Ray cluster to join ("host:6379" of the machine that ran
    `ray start --head`), or None to start a local Ray on this machine's CPUs."""

    # --- housekeeping ------------------------------------------------------------
    SEED: int = 0
    """Seed of every random draw of the run (numpy, Python, TensorFlow)."""
    RUN_FOLDER: str = "run"
    """The live run folder (relative paths are relative to the project root)."""
    RUN_ARCHIVE_FOLDER: str = "run_archive"
    """Where finished runs are archived: ``<archive>/connect4/runNNNN/``."""
    LOGGERS: dict = field(default_factory=_default_loggers)
    """Which log files are written: main, memory, tourney, mcts, model."""
    LOG_MAX_BYTES: int = 50_000_000
    """Cap on the total size of the run's logs: each of the five logs rotates at
    LOG_MAX_BYTES / (5 * (LOG_BACKUP_COUNT + 1)) bytes."""
    LOG_BACKUP_COUNT: int = 2
    """Rotated copies kept per log."""
    MEMORY_SNAPSHOTS_KEPT: int = 3
    """Memory snapshots kept in the run folder (older ones are deleted)."""
    TENSORBOARD: bool = field(default=False, compare=False)
    """Write each iteration's metrics row (losses, tournament scores, promotion, mistake rates, phase
    seconds...) as TensorBoard scalars to <run folder>/tensorboard/, step = iteration, so that
    `tensorboard --logdir` shows the run beside other Keras runs; metrics.jsonl stays the record.
    Like WORKERS it is taken from the config given to training, also when a run is resumed: it changes
    what is written beside the run, not how it learns (configs differing only in it are equal)."""

    def __post_init__(self) -> None:
        if isinstance(self.HIDDEN_CNN_LAYERS, (list, tuple)):
            layers = [_with_tuple_kernel(layer) for layer in self.HIDDEN_CNN_LAYERS]
            object.__setattr__(self, "HIDDEN_CNN_LAYERS", layers)
        if isinstance(self.LEARNING_RATE_SCHEDULE, (list, tuple)):
            schedule = [list(step) if isinstance(step, (list, tuple)) else step for step in self.LEARNING_RATE_SCHEDULE]
            object.__setattr__(self, "LEARNING_RATE_SCHEDULE", schedule)
        if isinstance(self.LOGGERS, dict):  # its own copy: a change to one config's logs leaves the others'
            object.__setattr__(self, "LOGGERS", dict(self.LOGGERS))
        self.validate()
        object.__setattr__(self, "_validated", True)

    def __setattr__(self, name: str, value) -> None:
        if getattr(self, "_validated", False):
            raise ConfigError(f"a Config is not changed in place (it was validated when made): use "
                              f"cfg.replace({name}={value!r})")
        object.__setattr__(self, name, value)

    # -- validation ----------------------------------------------------------------
    def validate(self) -> None:
        """Raise ConfigError naming the first wrong value."""
        positive_ints = ["GUMBEL_SAMPLED_ACTIONS", "EPISODES", "MCTS_SIMS", "MEMORY_SIZE", "BATCH_SIZE",
                         "FIT_BATCH_SIZE", "EPOCHS", "TRAINING_LOOPS", "MIN_MEMORY_SIZE", "EVAL_EPISODES", "EVAL_SIMS",
                         "LOG_MAX_BYTES", "MEMORY_SNAPSHOTS_KEPT", "LEAF_BATCH"]
        non_negative_ints = ["TURNS_UNTIL_TAU0", "RANDOM_OPENING_MOVES", "FAST_SEARCH_SIMS", "STRONG_SEARCH_SIMS",
                             "EVAL_TURNS_UNTIL_TAU0", "EVAL_RANDOM_OPENING_MOVES", "EVAL_POSITIONS", "SEED", "WORKERS",
                             "LOG_BACKUP_COUNT", "PLAY_SIMS", "REANALYSE_POSITIONS", "PLAY_LEAF_BATCH",
                             "OPENING_STONES"]
        for name in positive_ints + non_negative_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name} must be an integer, got {value!r}")
            if name in positive_ints and value <= 0:
                raise ConfigError(f"{name} must be positive, got {value}")
            if value < 0:
                raise ConfigError(f"{name} must not be negative, got {value}")
            if value >= INT_LIMIT:
                raise ConfigError(f"{name} must be below 2**31 (numpy seeds and C integers are 32-bit), got {value}")
        for name in ("RANDOM_OPENING_MOVES", "EVAL_RANDOM_OPENING_MOVES"):
            if getattr(self, name) > 20:
                raise ConfigError(f"{name} must be at most 20 (games of random moves teach and tell nothing; "
                                  f"a random game is often over by then), got {getattr(self, name)}")
        if self.OPENING_STONES > 42:
            raise ConfigError(f"OPENING_STONES must be at most 42 (the board's cells), got {self.OPENING_STONES}")
        if self.FAST_SEARCH_SIMS >= self.MCTS_SIMS:
            raise ConfigError(f"FAST_SEARCH_SIMS ({self.FAST_SEARCH_SIMS}) must be below MCTS_SIMS ({self.MCTS_SIMS}): "
                              f"a fast search is the cheaper one (0 turns playout cap randomisation off)")
        if self.STRONG_SEARCH_SIMS and (self.STRONG_SEARCH_SIMS <= self.MCTS_SIMS or self.FAST_SEARCH_SIMS):
            raise ConfigError(f"STRONG_SEARCH_SIMS ({self.STRONG_SEARCH_SIMS}) must be 0 or above MCTS_SIMS "
                              f"({self.MCTS_SIMS}), with FAST_SEARCH_SIMS 0 (got {self.FAST_SEARCH_SIMS})")
        for name, (inRange, rule) in _RANGES.items():
            value = getattr(self, name)
            if not _is_finite_number(value):
                raise ConfigError(f"{name} must be a finite number, got {value!r}")
            if not inRange(value):
                raise ConfigError(f"{name} must {rule}, got {value}")
        if not _is_finite_number(self.PRIOR_TEMPERATURE) or self.PRIOR_TEMPERATURE <= 0:
            raise ConfigError(f"PRIOR_TEMPERATURE must be a positive finite number, got {self.PRIOR_TEMPERATURE!r}")
        for name, own in [("PLAY_CPUCT", "CPUCT"), ("PLAY_PRIOR_TEMPERATURE", "PRIOR_TEMPERATURE")]:
            value = getattr(self, name)
            if not _is_finite_number(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number, 0 ({own}) or positive, got {value!r}")
        if self.EVAL_EPISODES % 2:
            raise ConfigError(f"EVAL_EPISODES must be even, so that each network starts half of the "
                              f"tournament games, got {self.EVAL_EPISODES}")
        if self.BATCH_SIZE > self.MEMORY_SIZE:
            raise ConfigError(f"BATCH_SIZE ({self.BATCH_SIZE}) must not exceed MEMORY_SIZE ({self.MEMORY_SIZE})")
        if self.REANALYSE_POSITIONS > self.MEMORY_SIZE:
            raise ConfigError(f"REANALYSE_POSITIONS ({self.REANALYSE_POSITIONS}) must not exceed MEMORY_SIZE "
                              f"({self.MEMORY_SIZE})")
        if not self.BATCH_SIZE <= self.MIN_MEMORY_SIZE <= self.MEMORY_SIZE:
            raise ConfigError(f"MIN_MEMORY_SIZE ({self.MIN_MEMORY_SIZE}) must lie between BATCH_SIZE "
                              f"({self.BATCH_SIZE}) and MEMORY_SIZE ({self.MEMORY_SIZE})")
        if self.ROOT_SEARCH not in ("puct", "gumbel"):
            raise ConfigError(f"ROOT_SEARCH must be 'puct' or 'gumbel', got {self.ROOT_SEARCH!r}")
        if self.PLAY_ROOT_SEARCH not in ("", "puct", "gumbel"):
            raise ConfigError(f"PLAY_ROOT_SEARCH must be '' (ROOT_SEARCH), 'puct' or 'gumbel', "
                              f"got {self.PLAY_ROOT_SEARCH!r}")
        if self.PLAY_MOVE_SECONDS and (self.PLAY_ROOT_SEARCH or self.ROOT_SEARCH) != "puct":
            raise ConfigError("PLAY_MOVE_SECONDS needs the PUCT root search at play time (PLAY_ROOT_SEARCH='puct')")
        if self.VALUE_HEAD not in VALUE_HEADS:
            raise ConfigError(f"VALUE_HEAD must be one of {VALUE_HEADS}, got {self.VALUE_HEAD!r}")
        if self.TRAINING_PRECISION not in TRAINING_PRECISIONS:
            raise ConfigError(f"TRAINING_PRECISION must be one of {TRAINING_PRECISIONS}, "
                              f"got {self.TRAINING_PRECISION!r}")
        for name in [f.name for f in dataclasses.fields(self) if f.type == "bool"]:  # every switch
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        checkInference(self.INFERENCE, self.INFERENCE_PRECISION)
        if self.RAY_ADDRESS is not None and (not isinstance(self.RAY_ADDRESS, str) or not self.RAY_ADDRESS.strip()):
            raise ConfigError(f"RAY_ADDRESS must be None (a local Ray) or a cluster address such as "
                              f"'10.0.0.1:6379', got {self.RAY_ADDRESS!r}")
        self._validate_layers()
        self._validate_schedule()
        for name in ["RUN_FOLDER", "RUN_ARCHIVE_FOLDER"]:
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{name} must be a non-empty path string, got {value!r}")
            if "\0" in value:
                raise ConfigError(f"{name} must not hold a NUL character (no path does), got {value!r}")
        if not isinstance(self.LOGGERS, dict):
            raise ConfigError(f"LOGGERS must be a dict of logger name -> bool, got {self.LOGGERS!r}")
        unknown = set(self.LOGGERS) - set(LOGGER_NAMES)
        if unknown:
            raise ConfigError(f"LOGGERS has unknown logger names {', '.join(sorted(map(repr, unknown)))}; "
                              f"known: {', '.join(LOGGER_NAMES)}")
        if not all(isinstance(v, bool) for v in self.LOGGERS.values()):
            raise ConfigError(f"LOGGERS values must be True or False, got {self.LOGGERS!r}")

    def _validate_schedule(self) -> None:
        schedule = self.LEARNING_RATE_SCHEDULE
        if not isinstance(schedule, list):
            raise ConfigError(f"LEARNING_RATE_SCHEDULE must be a list of [iteration, rate] pairs, got {schedule!r}")
        previous = 0
        for i, step in enumerate(schedule):
            ok = (isinstance(step, list) and len(step) == 2 and _is_positive_int(step[0])
                  and _is_finite_number(step[1]) and step[1] > 0)
            if not ok:
                raise ConfigError(f"LEARNING_RATE_SCHEDULE[{i}] must be [iteration (positive int), "
                                  f"rate (positive number)], got {step!r}")
            if step[0] <= previous:
                raise ConfigError(f"LEARNING_RATE_SCHEDULE iterations must increase, got {step[0]} after {previous}")
            previous = step[0]

    def learningRateAt(self, iteration: int) -> float:
        """The SGD learning rate of retraining in `iteration` (LEARNING_RATE_SCHEDULE's
        latest step at or before it, else LEARNING_RATE)."""
        return float(([self.LEARNING_RATE] + [r for start, r in self.LEARNING_RATE_SCHEDULE if start <= iteration])[-1])

    def _validate_layers(self) -> None:
        layers = self.HIDDEN_CNN_LAYERS
        if not isinstance(layers, list) or not layers:
            raise ConfigError("HIDDEN_CNN_LAYERS must be a non-empty list of "
                              f"{{'filters': int, 'kernel_size': (int, int)}}, got {layers!r}")
        for i, layer in enumerate(layers):
            ok = (isinstance(layer, dict) and set(layer) == {"filters", "kernel_size"}
                  and _is_positive_int(layer["filters"]) and layer["filters"] <= 4096
                  and isinstance(layer["kernel_size"], tuple) and len(layer["kernel_size"]) == 2
                  and all(_is_positive_int(k) and k <= 7 for k in layer["kernel_size"]))
            if not ok:
                raise ConfigError(f"HIDDEN_CNN_LAYERS[{i}] must be {{'filters': 1..4096, 'kernel_size': (1..7, "
                                  f"1..7)}} (the board is 6 x 7), got {layer!r}")
            if layer["filters"] != layers[0]["filters"]:
                raise ConfigError(f"HIDDEN_CNN_LAYERS[{i}] has {layer['filters']} filters but the first layer "
                                  f"has {layers[0]['filters']}: a residual block adds its input to its "
                                  "output, so every layer needs the same number of filters")

    # -- (de)serialisation -------------------------------------------------------------
    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def replace(self, **changes) -> "Config":
        """A copy with some values changed (validated; unknown names refused)."""
        return Config.from_dict({**self.as_dict(), **changes})

    @classmethod
    def from_dict(cls, values: dict) -> "Config":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown config keys {unknown}")
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json_file(cls, path: Path | str, way_out: str = "restore it or start a new run") -> "Config":
        """Read a config archived in a run folder; errors name the file and `way_out`."""
        path = Path(path)
        try:
            values = json.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist; {way_out}") from None
        except (ValueError, RecursionError) as exc:  # not JSON, not text, a number too long, nested too deep
            raise ConfigError(f"config file {path} is corrupt ({str(exc)[:200]}); {way_out}") from None
        except OSError as exc:
            raise ConfigError(f"config file {path} cannot be read ({exc.strerror or exc}); {way_out}") from None
        if not isinstance(values, dict):
            raise ConfigError(f"config file {path} does not hold a JSON object; {way_out}")
        try:
            return cls.from_dict(values)
        except ConfigError as exc:
            raise ConfigError(f"config file {path}: {exc}; {way_out}") from None

    def path(self, name: str) -> Path:
        """RUN_FOLDER or RUN_ARCHIVE_FOLDER as an absolute path."""
        folder = Path(getattr(self, name))
        return folder if folder.is_absolute() else PROJECT_ROOT / folder


def withSearch(cfg: Config, search: dict | None) -> Config:
    """`cfg` with the play-time search settings `search` (names of SEARCH_SETTINGS, as
    NAME: value) changed and validated; any other name is refused by name (ConfigError):
    a saved network was trained for its run's other settings."""
    if not search:
        return cfg
    unknown = sorted(set(search) - {f.name for f in dataclasses.fields(Config)})
    if unknown:
        raise ConfigError(f"unknown config keys {unknown}; the search settings are {', '.join(SEARCH_SETTINGS)}")
    others = sorted(set(search) - set(SEARCH_SETTINGS))
    if others:
        raise ConfigError(f"{', '.join(others)} cannot change at play time: only the search settings "
                          f"{', '.join(SEARCH_SETTINGS)} can")
    return cfg.replace(**search)


def searchChanges(cfg: Config, search: dict | None) -> dict:
    """The settings of `search` that change `cfg`'s search (validated by `withSearch`),
    a float setting as a float (CPUCT=2 as 2.0): what names a record of them, so that
    the same search is named one way and the run's own search has no name."""
    changed = withSearch(cfg, search)
    changes = {}
    for name in sorted(search or {}):
        value, own = getattr(changed, name), getattr(cfg, name)
        if value != own:
            changes[name] = float(value) if isinstance(own, float) else value
    return changes


def playSearch(cfg: Config) -> dict:
    """The search settings of the agent a person plays (PLAY_ROOT_SEARCH, PLAY_CPUCT,
    PLAY_LEAF_BATCH, PLAY_MIRROR_AVERAGE, PLAY_PRIOR_TEMPERATURE), as changes of `cfg`'s
    own search (`withSearch`): {} where it plays with the run's search."""
    play = {"ROOT_SEARCH": cfg.PLAY_ROOT_SEARCH, "CPUCT": cfg.PLAY_CPUCT, "LEAF_BATCH": cfg.PLAY_LEAF_BATCH,
            "MIRROR_AVERAGE": cfg.PLAY_MIRROR_AVERAGE, "PRIOR_TEMPERATURE": cfg.PLAY_PRIOR_TEMPERATURE}
    return searchChanges(cfg, {name: value for name, value in play.items() if value})


def searchLabel(search: dict | None) -> str:
    """Play-time search settings as printed after what they change: ", NAME=value" each."""
    return "".join(f", {name}={value}" for name, value in sorted((search or {}).items()))


DEFAULT = Config()


STRONG = DEFAULT.replace(
    ROOT_SEARCH="gumbel", MCTS_SIMS=32, GUMBEL_SAMPLED_ACTIONS=16, EPISODES=128, TURNS_UNTIL_TAU0=12,
    RANDOM_OPENING_MOVES=8, VALUE_TARGET_Q_WEIGHT=0.5, MERGE_DUPLICATES=True, MEMORY_SIZE=100_000,
    MIN_MEMORY_SIZE=2048, BATCH_SIZE=2048, FIT_BATCH_SIZE=128, TRAINING_LOOPS=4, LEARNING_RATE=0.02,
    LEARNING_RATE_SCHEDULE=[[150, 0.002], [1400, 0.0005]], TENSORBOARD=True,
    HIDDEN_CNN_LAYERS=[{"filters": 64, "kernel_size": (3, 3)} for _ in range(6)],
    EVAL_EPISODES=20, SCORING_THRESHOLD=1.2, EVAL_POSITIONS=200, EVAL_SIMS=32, PLAY_SIMS=8000, PLAY_ROOT_SEARCH="puct",
    PLAY_CPUCT=2.0, PLAY_LEAF_BATCH=16, PLAY_MOVE_SECONDS=0.95, RUN_FOLDER="run_archive/connect4/run0002")
"""The preset for a strong agent on a CPU in hours (`make train PRESET=strong`, or
`cfg = config.STRONG` in the notebook).  What it changes, and why:
- Gumbel AlphaZero root search with 32 simulations: it improves the policy with few
  simulations, where PUCT needs hundreds; the first 12 moves of a self-play game
  (random opening moves included) are random or sampled through the Gumbel draws,
  later ones are the search's best.
- Each self-play game starts with 0 to 8 uniformly random moves, neither searched nor
  stored (RANDOM_OPENING_MOVES): without them a run plays the same few openings and
  stops improving on varied positions within 2 hours (docs/strength.md).
- 128 self-play games per iteration: large network batches.
- Value target half game result, half search value; duplicate positions merged.
- A smaller, cheaper network (6 blocks of 64 filters 3x3) and more, larger training
  batches with a lower learning rate, dropped tenfold at iteration 150 (about 1.8 hours
  in) and fourfold at 1400 (10.9 hours in, the benchmark set flat for some 280 iterations).
- A promotion threshold of 1.2, and 200 benchmark positions after each iteration.
- Against people it searches 8,000 simulations (PLAY_SIMS) with PUCT at the root
  (PLAY_ROOT_SEARCH), twice self-play's exploration constant (PLAY_CPUCT) and 16 leaves
  per network call (PLAY_LEAF_BATCH): against the solver PUCT held more drawn starts than
  Gumbel's root search, CPUCT 2 more than 1, 8,000 simulations more than 4,800; 16 leaves
  a call bring a move of 8,000 to 0.75 s on Zen 4, stopped at 0.95 s (PLAY_MOVE_SECONDS).
- Its iterations' scalars go to TensorBoard too (TENSORBOARD); it trains run0002 in place."""

SHIPPED = STRONG.replace(OPENING_STONES=15, VALUE_TARGET_Q_WEIGHT_OPENING=1.0, WEIGHT_AVERAGE_DECAY=0.98,
                         RUN_FOLDER="run_archive/connect4/run0006")
"""The shipped run's settings (`make train PRESET=shipped` trains it on; the play cells start from it): the strong
preset's and its lineage's late levers (docs/strength.md): run0002 trained the strong preset to iteration 2805,
its branch run0005 learned q alone as the value target under 15 stones, run0006 branched at 3371 to average weights."""

PRESETS = {"default": DEFAULT, "strong": STRONG, "shipped": SHIPPED}
"""The named configurations (`make train PRESET=name`)."""


def preset(name: str) -> Config:
    """The configuration named `name` in PRESETS; another name raises ConfigError listing the presets there are."""
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; the presets are {', '.join(sorted(PRESETS))}")
    return PRESETS[name]
