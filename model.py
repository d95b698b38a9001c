"""The network: the tutorial's residual CNN with a value head and a policy head.

Input: (2, 6, 7) per position, channel 0 the player to move's stones, channel 1 the
opponent's; with COLOUR_PLANE (3, 6, 7), channel 2 all ones when the first player is to
move, all zeros when the second is (`game.networkInputs`).  TensorFlow has no
channels-first convolution on CPU, so the model permutes to (6, 7, planes) first and is
channels-last inside.
Outputs: `value_head` (the expected result for the player to move, in [-1, 1]) and
`policy_head` (42 logits, one per cell).  With VALUE_HEAD "wdl" the value head ends in
`wdl_head`, three logits for a win, a draw and a loss, and `value_head` is their
expectation P(win) - P(loss) (a softmax, then a fixed dot product with (1, 0, -1)):
the search and every engine read the same two outputs whichever the head.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import layers, regularizers  # noqa: E402

import inference  # noqa: E402
import loggers  # noqa: E402
import storage  # noqa: E402
from config import DEFAULT  # noqa: E402
from game import CELLS, MIRRORED_CELL, inputShape, networkInputs  # noqa: E402
from loss import policyTargets, softmax_cross_entropy_with_logits, valueTargets, wdlTargets  # noqa: E402


EXPECTED_RESULT = np.array([[1.0], [0.0], [-1.0]], dtype=np.float32)
"""The fixed weights that turn (P(win), P(draw), P(loss)) into the expected result."""


class Gen_Model:
    """What every network of the project offers: batched prediction through a compiled
    call, training, saving and loading, inspection."""

    def __init__(self, reg_const: float, learning_rate: float, input_dim, output_dim,
                 run_folder=None, archive_folder=None, inference: str = "auto", precision: str = "auto"):
        self.reg_const = reg_const
        self.learning_rate = learning_rate
        self.input_dim = tuple(input_dim)
        self.colourPlane = self.input_dim == inputShape(colourPlane=True)
        """The input has the colour plane (COLOUR_PLANE): its shape says so."""
        self.output_dim = output_dim
        self.run_folder = DEFAULT.path("RUN_FOLDER") if run_folder is None else run_folder
        self.archive_folder = DEFAULT.path("RUN_ARCHIVE_FOLDER") if archive_folder is None else archive_folder
        self.model: keras.Model | None = None
        """The network the search, saving and loading see: outputs (value_head, policy_head)."""
        self.trainingModel: keras.Model | None = None
        """The same layers with the outputs retraining fits (compiled with the losses):
        `model` itself for a tanh value head, (wdl_head, policy_head) for a WDL head."""
        self.trainingTwin: keras.Model | None = None
        """With bfloat16 training: a copy of `model` whose layers compute in
        mixed_bfloat16, the one `trainingModel` fits; None in float32."""
        self.valueHeadKind = "tanh"
        """VALUE_HEAD: "tanh" or "wdl"."""
        self.inference = inference
        """The config's INFERENCE and INFERENCE_PRECISION: which engine evaluates the
        network for the search (see `inference.resolve`)."""
        self.precision = precision
        self.engine = None
        self._weightChanges = 0
        self._engineWeights = None
        self.positionsEvaluated = 0
        """Positions passed through `predict` so far (for throughput figures)."""
        self.ensemble: list[Gen_Model] = []
        """Other networks that evaluate every position `predict` is given beside this
        one, their outputs and its own combined by `ensembleMean` (a play-time lever,
        `benchmarks/perfect.py --ensemble`); empty: this network alone."""
        self._counting = threading.Lock()

    def weightsChanged(self) -> None:
        """Note that the Keras weights changed, so the engine is refreshed before its
        next call.  `fit`, `setWeightsFrom` and `loadWeights` call it; code that sets
        weights on `self.model` directly must call it too.  (Reading the optimizer's
        step counter instead would cost a TensorFlow call on every prediction.)"""
        self._weightChanges += 1

    def currentEngine(self):
        """The inference engine, built on first use and refreshed first whenever the
        Keras weights changed since its last refresh: it never serves stale weights."""
        if self.engine is None:
            self.engine = inference.makeEngine(self.model, self.input_dim, self.inference, self.precision)
        if self._engineWeights != self._weightChanges:
            self.engine.refresh(self.model)
            self._engineWeights = self._weightChanges
        return self.engine

    def predict(self, x: np.ndarray):
        """(values, logits) for a batch of model inputs: values shape (n,), each for
        its position's player to move; logits shape (n, 42).  With an `ensemble`,
        the mean of its members' outputs and this network's (`ensembleMean`)."""
        x = np.asarray(x, dtype=np.float32)
        with self._counting:
            self.positionsEvaluated += len(x)
        outputs = self.currentEngine().run(x)
        return ensembleMean([outputs, *(member.predict(x) for member in self.ensemble)]) if self.ensemble else outputs

    def predictAsync(self, x: np.ndarray) -> Future:
        """`predict(x)` started in a background thread; the future's result is its
        (values, logits).  The engines (the ensemble's too) are brought up to date
        here, in the caller's thread, so background calls never refresh them."""
        for network in (self, *self.ensemble):
            network.currentEngine()
        return inference.inBackground(self.predict, x)

    def setLearningRate(self, rate: float) -> None:
        """Use SGD learning rate `rate` in the next fits (a schedule's step)."""
        self.trainingModel.optimizer.learning_rate.assign(rate)

    def fit(self, states, targets, epochs, verbose, validation_split, batch_size) -> keras.callbacks.History:
        """Train on `states` / `targets` (dict by head): `epochs` passes in shuffled
        mini-batches of `batch_size`, like Keras `fit`, whose History it returns (the
        per-epoch means of the losses).  Without validation or verbose output, the
        steps are `train_on_batch` calls: Keras `fit` spends 12-16% of a small fit's
        time setting itself up (10 default fits: 7.0-7.3 s against 5.9-6.6 s, docs/performance.md);
        the shuffle draws from numpy's seeded global generator."""
        self.weightsChanged()
        if self.trainingTwin is None:
            return self._fitTrainingModel(states, targets, epochs, verbose, validation_split, batch_size)
        self.trainingTwin.set_weights(self.model.get_weights())
        history = self._fitTrainingModel(states, targets, epochs, verbose, validation_split, batch_size)
        self.model.set_weights(self.trainingTwin.get_weights())
        return history

    def _fitTrainingModel(self, states, targets, epochs, verbose, validation_split, batch_size):
        """`fit`'s passes over `trainingModel` (see `fit`)."""
        if validation_split or verbose:
            return self.trainingModel.fit(states, targets, epochs=epochs, verbose=verbose,
                                          validation_split=validation_split, batch_size=batch_size)
        history = keras.callbacks.History()
        history.history = {}
        n = len(states)
        targets = {head: np.asarray(target) for head, target in targets.items()}
        for _ in range(epochs):
            order = np.random.permutation(n)
            totals: dict[str, float] = {}
            for start in range(0, n, batch_size):
                rows = order[start:start + batch_size]
                logs = self.trainingModel.train_on_batch(states[rows],
                                                         {head: target[rows] for head, target in targets.items()},
                                                         return_dict=True)
                for name, value in logs.items():
                    totals[name] = totals.get(name, 0.0) + float(value) * len(rows)
            for name, total in totals.items():
                history.history.setdefault(name, []).append(total / n)
        return history

    @property
    def valueLossName(self) -> str:
        """The value head's loss in a fit's history: value_head_loss (tanh) or
        wdl_head_loss (WDL)."""
        return "wdl_head_loss" if self.valueHeadKind == "wdl" else "value_head_loss"

    def trainingData(self, minibatch, qWeight=0.0):
        """(model inputs, targets by output of `trainingModel`) for memory rows: the
        policy target, and the value target (1 - w) * z + w * q (w `qWeight`, one
        number or one per row: `loss.qWeights`) as one
        number (`loss.valueTargets`) or, for a WDL head, as win/draw/loss
        probabilities with that expectation (`loss.wdlTargets`)."""
        states = self.convertToModelInputs([row["state"] for row in minibatch])
        targets = {"policy_head": policyTargets(minibatch)}
        if self.valueHeadKind == "wdl":
            targets["wdl_head"] = wdlTargets(minibatch, qWeight)
        else:
            targets["value_head"] = valueTargets(minibatch, qWeight)
        return states, targets

    def modelPath(self, version: int):
        return storage.model_path(self.run_folder, version)

    def write(self, game: str, version: int) -> None:
        """Save as run_folder/models/versionNNNN.keras, atomically (`game` is the
        tutorial's argument: the run folder already belongs to one game)."""
        storage.save_model(self.model, self.modelPath(version))

    def read(self, game: str, run_number: int, version: int) -> keras.Model:
        """Load version `version` of archived run `run_number` (safe mode: no code runs).
        The tutorial's API, kept for its readers; the pipeline itself starts from an
        archived run through `runs.openRun`."""
        return storage.load_model(storage.model_path(storage.archived_run(self.archive_folder, game, run_number),
                                                     version))

    def setWeightsFrom(self, other: keras.Model) -> None:
        """Copy another model's weights (same architecture) into this network."""
        self.model.set_weights(other.get_weights())
        self.weightsChanged()

    def loadWeights(self, path, way_out: str = "resume from an earlier version (initialise.py)") -> None:
        """Take the weights of the .keras file at `path` (loaded in safe mode).  A
        missing or damaged file raises RunFileError naming the file and what is wrong
        with it; one whose layers do not fit this network (a config that does not match
        the run) raises its kind, ModelMismatchError."""
        saved = storage.load_model(path, way_out)
        try:
            self.setWeightsFrom(saved)
        except ValueError as exc:
            raise storage.ModelMismatchError(
                f"model file {path} does not fit the network built from the config (are its "
                f"HIDDEN_CNN_LAYERS or VALUE_HEAD different?): {str(exc)[:200]}; use the config.json of the run the "
                f"model comes from") from None

    def printWeightAverages(self, logger=None) -> None:
        """Log the mean absolute value and std of every layer's weights (model log)."""
        logger = loggers.logger_model if logger is None else logger
        if not logger.isEnabledFor(logging.INFO):
            return
        for i, layer in enumerate(self.model.layers):
            for weights in layer.get_weights():
                logger.info("WEIGHT LAYER %d (%s): ABSAV = %f, SD = %f", i, layer.name,
                            np.mean(np.abs(weights)), np.std(weights))
        logger.info("------------------")

    def viewLayers(self):
        """Plot every layer's weights (one row per layer); returns the figure."""
        import matplotlib.pyplot as plt  # here: a 0.4 s import training never needs
        weighted = [(layer.name, w) for layer in self.model.layers for w in layer.get_weights()[:1]]
        fig, axes = plt.subplots(len(weighted), 1, figsize=(10, 1.6 * len(weighted)), squeeze=False)
        for ax, (name, weights) in zip(axes[:, 0], weighted):
            flat = weights.reshape(-1, weights.shape[-1]) if weights.ndim > 1 else weights[None, :]
            ax.imshow(flat.T if flat.shape[0] > flat.shape[1] else flat, aspect="auto", cmap="coolwarm")
            ax.set_ylabel(name, rotation=0, ha="right", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.tight_layout()
        return fig


class Residual_CNN(Gen_Model):
    """The tutorial's architecture: a convolutional block, one residual block per
    further entry of `hidden_layers`, a value head (1x1 conv -> dense 20 -> tanh) and a
    policy head (1x1 conv with 2 filters -> dense 42 logits), L2 on every kernel,
    SGD with momentum, losses weighted 0.5 / 0.5."""

    def __init__(self, reg_const: float, learning_rate: float, input_dim, output_dim, hidden_layers,
                 momentum: float = 0.9, run_folder=None, archive_folder=None, inference: str = "auto",
                 precision: str = "auto", value_head: str = "tanh", training_precision: str = "float32"):
        super().__init__(reg_const, learning_rate, input_dim, output_dim, run_folder, archive_folder,
                         inference, precision)
        self.hidden_layers = hidden_layers
        self.momentum = momentum
        self.valueHeadKind = value_head
        self.trainingPrecision = resolveTrainingPrecision(training_precision)
        """TRAINING_PRECISION as this CPU runs it ("bfloat16" only with native support)."""
        self.model, self.trainingModel = self._build_model()

    @classmethod
    def fromConfig(cls, cfg, input_dim, output_dim, run_folder=None) -> "Residual_CNN":
        """The network `cfg` describes, writing to `run_folder` (default cfg's RUN_FOLDER):
        `input_dim` (the game's `input_shape`) with a colour plane more when cfg's
        COLOUR_PLANE says so."""
        if cfg.COLOUR_PLANE:
            input_dim = (input_dim[0] + 1, *input_dim[1:])
        return cls(cfg.REG_CONST, cfg.LEARNING_RATE, input_dim, output_dim, cfg.HIDDEN_CNN_LAYERS,
                   cfg.MOMENTUM, cfg.path("RUN_FOLDER") if run_folder is None else run_folder,
                   cfg.path("RUN_ARCHIVE_FOLDER"), cfg.INFERENCE, cfg.INFERENCE_PRECISION, cfg.VALUE_HEAD,
                   cfg.TRAINING_PRECISION)

    def _conv(self, x, filters, kernel_size, dtype=None):
        return layers.Conv2D(filters, kernel_size, padding="same", use_bias=False,
                             kernel_regularizer=regularizers.l2(self.reg_const), dtype=dtype)(x)

    def conv_layer(self, x, filters, kernel_size, dtype=None):
        """Convolution, batch normalisation, leaky ReLU; `dtype` a Keras dtype policy
        (None: the default, float32)."""
        x = self._conv(x, filters, kernel_size, dtype)
        x = layers.BatchNormalization(axis=-1, dtype=dtype)(x)
        return layers.LeakyReLU(dtype=dtype)(x)

    def residual_layer(self, input_block, filters, kernel_size, dtype=None):
        x = self.conv_layer(input_block, filters, kernel_size, dtype)
        x = self._conv(x, filters, kernel_size, dtype)
        x = layers.BatchNormalization(axis=-1, dtype=dtype)(x)
        x = layers.add([input_block, x], dtype=dtype)
        return layers.LeakyReLU(dtype=dtype)(x)

    def value_head(self, x, dtype=None):
        """The value output, in [-1, 1] for the player to move (+1 a win); with a WDL head
        also its logits (win, draw, loss for that player): (value, wdl logits or None).
        The last layers compute in float32 whatever `dtype` (the outputs losses read)."""
        x = self.conv_layer(x, 1, (1, 1), dtype)
        x = layers.Flatten(dtype=dtype)(x)
        x = layers.Dense(20, use_bias=False, kernel_regularizer=regularizers.l2(self.reg_const), dtype=dtype)(x)
        x = layers.LeakyReLU(dtype=dtype)(x)
        if self.valueHeadKind != "wdl":
            return layers.Dense(1, use_bias=False, activation="tanh", dtype="float32",
                                kernel_regularizer=regularizers.l2(self.reg_const), name="value_head")(x), None
        logits = layers.Dense(3, use_bias=False, kernel_regularizer=regularizers.l2(self.reg_const),
                              name="wdl_head", dtype="float32")(x)
        expectation = layers.Dense(1, use_bias=False, trainable=False, name="value_head", dtype="float32")
        value = expectation(layers.Softmax(name="wdl_probabilities", dtype="float32")(logits))
        expectation.set_weights([EXPECTED_RESULT])
        return value, logits

    def policy_head(self, x, dtype=None):
        """The 42 policy logits (the last layer in float32 whatever `dtype`)."""
        x = self.conv_layer(x, 2, (1, 1), dtype)
        x = layers.Flatten(dtype=dtype)(x)
        return layers.Dense(self.output_dim, use_bias=False, activation="linear", dtype="float32",
                            kernel_regularizer=regularizers.l2(self.reg_const), name="policy_head")(x)

    def _network(self, dtype=None) -> tuple[keras.Model, keras.Model]:
        """(network, the same layers with the outputs retraining fits), their layers
        computing in `dtype` (a Keras dtype policy; None: float32)."""
        main_input = keras.Input(shape=self.input_dim, name="main_input")
        x = layers.Permute((2, 3, 1), name="to_channels_last", dtype=dtype)(main_input)
        first, *rest = self.hidden_layers
        x = self.conv_layer(x, first["filters"], first["kernel_size"], dtype)
        for h in rest:
            x = self.residual_layer(x, h["filters"], h["kernel_size"], dtype)
        value, wdl_logits = self.value_head(x, dtype)
        policy = self.policy_head(x, dtype)
        model = keras.Model(inputs=main_input, outputs=[value, policy])
        training = model if wdl_logits is None else keras.Model(inputs=main_input, outputs=[wdl_logits, policy])
        return model, training

    def _build_model(self) -> tuple[keras.Model, keras.Model]:
        """(model, trainingModel): see `Gen_Model.model` and `Gen_Model.trainingModel`.
        With bfloat16 training the trainingModel belongs to a twin of `model` whose
        layers compute in mixed_bfloat16 (`Gen_Model.trainingTwin`); `fit` carries
        the weights across."""
        model, training = self._network()
        if self.trainingPrecision == "bfloat16":
            self.trainingTwin, training = self._network("mixed_bfloat16")
        if self.valueHeadKind == "wdl":
            value_loss = {"wdl_head": keras.losses.CategoricalCrossentropy(from_logits=True)}
        else:
            value_loss = {"value_head": "mean_squared_error"}
        training.compile(loss={**value_loss, "policy_head": softmax_cross_entropy_with_logits},
                         optimizer=keras.optimizers.SGD(learning_rate=self.learning_rate, momentum=self.momentum),
                         loss_weights={name: 0.5 for name in [*value_loss, "policy_head"]})
        return model, training

    def convertToModelInput(self, state) -> np.ndarray:
        """The network input of a position (shape `input_dim`), for its player to move
        (the tutorial's one-position API; the pipeline builds batches,
        `convertToModelInputs`)."""
        return self.convertToModelInputs([state])[0]

    def convertToModelInputs(self, states) -> np.ndarray:
        """The (n, *input_dim) network inputs of many positions, built at once."""
        return networkInputs(states, self.colourPlane).reshape(len(states), *self.input_dim)


def withMirrorImages(x: np.ndarray) -> np.ndarray:
    """Model inputs (n, planes..., 42 cells in all per plane) followed by their mirror
    images (left-right reflections, a symmetry of the rules): 2n inputs, for one
    network call whose outputs `mirrorAveraged` combines."""
    planes = x.reshape(len(x), -1, CELLS)
    return np.concatenate([x, planes[:, :, MIRRORED_CELL].reshape(x.shape)])


def mirrorAveraged(values: np.ndarray, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outputs for the inputs of `withMirrorImages` as (values, logits) of the n
    positions: each value (for the player to move, the same in a position and its
    mirror image) the mean of the two, each logit the mean of the position's own and
    its mirror image's logit of the reflected cell."""
    n = len(values) // 2
    values, logits = np.asarray(values), np.asarray(logits)
    return (values[:n] + values[n:]) / 2, (logits[:n] + logits[n:][:, MIRRORED_CELL]) / 2


def ensembleMean(outputs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Several networks' (values, logits) for the same positions as one network's:
    each value (for the player to move) the mean of theirs, each logit the mean of
    their log-probabilities, so that the policy is the normalised geometric mean of
    theirs (a mean of raw logits would let one network's scale outvote the others)."""
    values = np.mean([np.asarray(value, dtype=np.float32) for value, _ in outputs], axis=0)
    shifted = [np.asarray(logits, dtype=np.float32) - np.max(logits, axis=1, keepdims=True) for _, logits in outputs]
    return values, np.mean([z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)) for z in shifted], axis=0)


def resolveTrainingPrecision(precision: str) -> str:
    """TRAINING_PRECISION as this machine runs it: "bfloat16" stays so where the CPU
    has native bfloat16 units (OpenVINO's report, `inference.cpuSupportsBF16`); without
    them emulated bfloat16 would be slower than float32, so "float32", with a warning
    saying why."""
    if precision == "bfloat16" and not inference.cpuSupportsBF16():
        logging.getLogger(__name__).warning("TRAINING_PRECISION='bfloat16' but this CPU has no native bfloat16 "
                                            "support (or OpenVINO, which reports it, is missing): training "
                                            "in float32")
        return "float32"
    return precision


TANH_TO_WDL_SCALE = 1.5
"""A tanh value head's last weights w become WDL logits (1.5 w, 0, -1.5 w): their
expectation P(win) - P(loss) then has tanh's slope at 0 (2/3 of the logit times 1.5)
and stays within 0.02 of tanh(w.x) up to |tanh| = 0.95."""


def movingAverage(average: list[np.ndarray], latest: list[np.ndarray], decay: float) -> list[np.ndarray]:
    """decay * average + (1 - decay) * latest, weight by weight (the lists of
    `keras.Model.get_weights`, batch normalisation's moving statistics included):
    one step of the exponential moving average of a network's weights along its
    training (WEIGHT_AVERAGE_DECAY).  Each weight keeps its dtype."""
    return [(decay * old + (1.0 - decay) * new).astype(old.dtype) for old, new in zip(average, latest, strict=True)]


def transferWeights(source: keras.Model, target: keras.Model) -> None:
    """Give `target` the weights of `source`, a network of the same trunk and policy
    head, or of the same trunk made wider (more filters in every block): layers are
    paired in order among those of the same kind and weight shapes (the layer names
    differ between processes), the trunk's width counting as one shape.  A tanh value
    head becomes a WDL one: its last weights w turn into the logits (1.5 w, 0, -1.5 w)
    (`TANH_TO_WDL_SCALE`), so the new network starts from the old one's judgement.  A
    wider target keeps its own initial weights for the new filters and reads none of
    them (their weights into the old filters and the heads are zero: `_embedded`), so
    it computes what the source computed; training then puts them to use.  Likewise a
    target reading an input plane more (COLOUR_PLANE) starts with zero weights from it.
    Raises storage.ModelMismatchError when a layer of either has no counterpart
    (another trunk: deeper, narrower or of other kernels; a WDL head asked to become a
    tanh one; a target reading fewer input planes).  The weights are set on the Keras
    model itself: a `Gen_Model` holding `target` must then be told (`weightsChanged`)
    before its engine runs again."""
    fromWdl, toWdl = (any(layer.name == "wdl_head" for layer in m.layers) for m in (source, target))
    widths = _trunkWidth(source), _trunkWidth(target)
    if widths[1] < widths[0]:
        raise storage.ModelMismatchError(f"the target network's trunk is narrower ({widths[1]} filters) than the "
                                         f"source's ({widths[0]}): {_OTHER_SHAPE}")
    planes = [model.input_shape[1] for model in (source, target)]
    if planes[1] < planes[0]:
        raise storage.ModelMismatchError(f"the target network reads fewer input planes ({planes[1]}) than the "
                                         f"source ({planes[0]}): {_OTHER_SHAPE}")
    pending: dict[tuple, list[list[np.ndarray]]] = {}
    first = _firstConvolution(source)
    for layer in _transferable(source, fromWdl):
        weights = layer.get_weights()
        if toWdl and not fromWdl and layer.name == "value_head":
            (w,) = weights
            weights = [np.concatenate([w, np.zeros_like(w), -w], axis=1) * TANH_TO_WDL_SCALE]
        pending.setdefault(_weightKey(layer.__class__, weights, widths[0], layer is first), []).append(weights)
    first = _firstConvolution(target)
    for layer in _transferable(target, toWdl):
        mine = layer.get_weights()
        queue = pending.get(_weightKey(layer.__class__, mine, widths[1], layer is first))
        if not queue:
            raise storage.ModelMismatchError(f"the source network has no weights for layer {layer.name} "
                                             f"({[w.shape for w in mine]}): {_OTHER_SHAPE}")
        layer.set_weights([_embedded(theirs, own) for theirs, own in zip(queue.pop(0), mine)])
    unused = [key for key, queue in pending.items() for _ in queue]
    if unused:
        raise storage.ModelMismatchError(f"the target network has no layer for the source's weights "
                                         f"{unused[0][0]} {list(unused[0][1])}: {_OTHER_SHAPE}")


_OTHER_SHAPE = "another trunk (HIDDEN_CNN_LAYERS), or a WDL head asked to become a tanh one"


def _transferable(model: keras.Model, wdl: bool) -> list:
    """The layers with weights of `model`, without a WDL head's fixed expectation."""
    return [layer for layer in model.layers if layer.weights and not (wdl and layer.name == "value_head")]


def _firstConvolution(model: keras.Model):
    """The network's first convolution, the one that reads the input planes."""
    return next(layer for layer in model.layers if isinstance(layer, layers.Conv2D))


def _trunkWidth(model: keras.Model) -> int:
    """The filters of the network's first convolution: the trunk's width (every block
    of the presets has as many)."""
    return _firstConvolution(model).filters


def _weightKey(kind: type, weights: list[np.ndarray], width: int, readsInput: bool = False) -> tuple:
    """What pairs a layer with its counterpart: its kind and weight shapes, a
    dimension of the trunk's `width` written as "width", and for the convolution
    that `readsInput` the kernel's input planes as "planes"."""
    shapes = [tuple("width" if d == width else d for d in w.shape) for w in weights]
    if readsInput:
        kernel = shapes[0]
        shapes[0] = (*kernel[:-2], "planes", kernel[-1])
    return kind.__name__, tuple(shapes)


def _embedded(source: np.ndarray, own: np.ndarray) -> np.ndarray:
    """`source` where `own` (the target layer's initial weight) has the same shape;
    else `own` with `source` in its leading corner and, for a kernel (2 dimensions or
    more, inputs on the second last), zero from every new input: the new filters are
    computed but read by nothing yet."""
    if source.shape == own.shape:
        return source
    out = own.copy()
    if out.ndim >= 2:
        out[..., source.shape[-2]:, :] = 0
    out[tuple(slice(0, d) for d in source.shape)] = source
    return out
