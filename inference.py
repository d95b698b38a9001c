"""Inference engines: how a Keras network is evaluated for the search.

The network is built, trained and saved by Keras (`model.py`); the search only needs
its forward pass, many thousands of times a second, at small batch sizes.  With Keras's
TensorFlow backend (the default) two engines give it:

- `TensorFlowEngine`: the Keras model's inference pass traced once into a TensorFlow
  concrete function.  It reads the live Keras variables, so it is never stale.
- `OpenVINOEngine`: the same pass compiled by OpenVINO for this CPU, in float32 or
  bfloat16 (which runs on the AMX / AVX512-BF16 matrix units where the CPU has them).
  Per-call overhead is a fraction of TensorFlow's, which matters at the batch sizes of
  a search.  The network is converted once with its weights as inputs; `refresh`
  binds the current weights as constants and compiles (a tenth of a second), so a
  weight change costs no re-conversion.  `Gen_Model` refreshes it whenever the Keras
  weights change.

With KERAS_BACKEND=jax, "auto" is `JaxEngine`: the network's own forward pass compiled
by XLA through `jax.jit`, the weights passed as arguments (both engines above trace the
network with TensorFlow, which a JAX-backed Keras model cannot be).

`inBackground` runs a call in a background thread (returning a
`concurrent.futures.Future`): TensorFlow and OpenVINO release the GIL while they
compute, so the search of some games proceeds on one core while the network evaluates
other games' leaves on the other.

`resolve` turns the config's INFERENCE and INFERENCE_PRECISION (`config.ENGINES`,
`config.PRECISIONS`, checked by `config.checkInference`) into what this machine supports.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BACKEND = keras.backend.backend()
"""Keras's backend in this process (KERAS_BACKEND): "tensorflow" or "jax"."""

if BACKEND == "jax":
    import jax

try:  # A regular dependency; where it cannot be imported all the same (installed by hand on a platform
    # without a wheel for it), "auto" falls back to TensorFlow and "openvino" says why it cannot run.
    import openvino as ov
    from openvino import opset13 as ov_ops
except ImportError:  # pragma: no cover - exercised only where OpenVINO cannot be installed
    ov = ov_ops = None

from config import ConfigError, checkInference  # noqa: E402

_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="inference")
"""The threads that run submitted calls (two: one per concurrent batch of the
ping-pong in `agent.runTogether`)."""


def inBackground(call, *args) -> Future:
    """`call(*args)` in one of the background threads."""
    return _BACKGROUND.submit(call, *args)


class EngineUnavailable(ConfigError):
    """The engine or precision the config asks for cannot run on this machine."""


def _openvinoCore():
    if ov is None:
        return None
    if not hasattr(_openvinoCore, "core"):
        _openvinoCore.core = ov.Core()
    return _openvinoCore.core


def cpuSupportsBF16() -> bool:
    """True when OpenVINO reports native bfloat16 support on this CPU."""
    core = _openvinoCore()
    return core is not None and "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def resolve(engine: str, precision: str) -> tuple[str, str]:
    """The (engine, precision) that `engine` / `precision` from the config mean on this
    machine: "auto" is OpenVINO in bf16 where the CPU supports it, else OpenVINO in
    f32, else TensorFlow in f32.  Raises EngineUnavailable for an explicit choice
    this machine cannot run (OpenVINO missing, bf16 without CPU support)."""
    checkInference(engine, precision)
    if BACKEND == "jax":
        return _resolveForJax(engine, precision)
    if engine == "auto":
        engine = "openvino" if ov is not None else "tensorflow"
    if engine == "openvino" and ov is None:
        raise EngineUnavailable("INFERENCE='openvino' but the openvino package cannot be imported here; "
                                "use INFERENCE='tensorflow' or 'auto'")
    if engine == "tensorflow":
        return engine, "f32"
    if precision == "auto":
        precision = "bf16" if cpuSupportsBF16() else "f32"
    elif precision == "bf16" and not cpuSupportsBF16():
        raise EngineUnavailable("INFERENCE_PRECISION='bf16' but this CPU has no native bfloat16 support; "
                                "use 'f32' or 'auto'")
    return engine, precision


def _resolveForJax(engine: str, precision: str) -> tuple[str, str]:
    """With the JAX backend only its own engine runs, in float32."""
    if engine != "auto":
        raise EngineUnavailable(f"INFERENCE={engine!r} traces the network with TensorFlow, which Keras's JAX "
                                "backend cannot; use INFERENCE='auto' (the JAX engine) or KERAS_BACKEND=tensorflow")
    if precision == "bf16":
        raise EngineUnavailable("INFERENCE_PRECISION='bf16' runs on OpenVINO, which needs Keras's TensorFlow "
                                "backend; use 'f32' or 'auto' with KERAS_BACKEND=jax")
    return "jax", "f32"


class TensorFlowEngine:
    """The Keras model's inference pass as a TensorFlow concrete function (traced once
    for any batch size, without autograph: it is one call).  Always current: it reads
    the Keras variables themselves."""

    name, precision = "tensorflow", "f32"
    lanes = 2
    """Games are played in two lanes (see `agent.runTogether`): TensorFlow's calls cost
    several times the search's Python, and overlapping the two pays."""

    def __init__(self, keras_model, input_dim: tuple):
        self._forward = tf.function(
            lambda x: keras_model(x, training=False), autograph=False,
            input_signature=[tf.TensorSpec((None, *input_dim), tf.float32)]).get_concrete_function()

    def refresh(self, keras_model) -> None:
        """Nothing to do: the traced function reads the live weights."""

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values (n,), logits (n, 42)) for model inputs `x`."""
        value, logits = self._forward(tf.constant(x, dtype=tf.float32))
        return value.numpy()[:, 0], logits.numpy()



def compileForCPU(model, precision: str, threads: int):
    """An OpenVINO model compiled as the engine compiles the network: for the CPU in
    `precision`, a call on `threads` cores, one stream, latency first (one call at a
    time, as the search makes them)."""
    return _openvinoCore().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": precision,
                                                       "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                                                       "PERFORMANCE_HINT": "LATENCY"})


class OpenVINOEngine:
    """The network compiled by OpenVINO for this CPU, in `precision` ("f32" / "bf16").

    The Keras forward pass is converted once with every weight as an input
    (`stateless_call`); `refresh` binds the model's current weights as constants and
    compiles, so a weight change costs a compilation, not a conversion.  A call uses
    `threads` cores (all, by default).  Each thread
    has its own inference request for the compiled network."""

    name = "openvino"
    lanes = 1
    """One lane: a call uses every core itself, which beats overlapping the search with
    a one-core call (measured in benchmarks/selfplay.py)."""

    def __init__(self, keras_model, input_dim: tuple, precision: str, threads: int = os.cpu_count() or 1):
        self.precision = precision
        self.threads = threads
        self._template = self._convert(keras_model, input_dim)
        self._compiled = None
        self._local = threading.local()

    @staticmethod
    def _convert(keras_model, input_dim: tuple):
        weights = keras_model.trainable_variables + keras_model.non_trainable_variables
        trainable = len(keras_model.trainable_variables)

        def forward(x, *values):
            outputs, _ = keras_model.stateless_call(list(values[:trainable]), list(values[trainable:]), x,
                                                    training=False)
            return outputs

        specs = [tf.TensorSpec((None, *input_dim), tf.float32)] + [tf.TensorSpec(w.shape, w.dtype) for w in weights]
        return ov.convert_model(tf.function(forward, input_signature=specs, autograph=False).get_concrete_function())

    def refresh(self, keras_model) -> None:
        """Compile the network with `keras_model`'s current weights."""
        self._compiled = compileForCPU(self.boundModel(keras_model), self.precision, self.threads)

    def boundModel(self, keras_model):
        """The converted network with `keras_model`'s current weights bound as
        constants: an OpenVINO model whose one input is the positions."""
        weights = [np.asarray(w) for w in keras_model.trainable_variables + keras_model.non_trainable_variables]
        bound = self._template.clone()
        parameters = bound.get_parameters()
        for parameter, value in zip(parameters[1:], weights):
            constant = ov_ops.constant(value)
            for target in list(parameter.output(0).get_target_inputs()):
                target.replace_source_output(constant.output(0))
        for parameter in parameters[1:]:
            bound.remove_parameter(parameter)
        bound.validate_nodes_and_infer_types()
        return bound

    def _request(self):
        """This thread's inference request for the current compilation."""
        compiled, request = getattr(self._local, "pair", (None, None))
        if compiled is not self._compiled:
            compiled, request = self._compiled, self._compiled.create_infer_request()
            self._local.pair = (compiled, request)
        return request

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values (n,), logits (n, 42)) for model inputs `x`."""
        request = self._request()
        # Contiguous, float32 and writeable (a cached read-only board is copied); kept alive
        # here because the tensor shares its memory.
        x = np.require(x, dtype=np.float32, requirements=("C", "W"))
        request.set_input_tensor(ov.Tensor(x, shared_memory=True))
        request.infer()  # no inputs to dispatch: about 150 us less per call than infer([x])
        return request.get_output_tensor(0).data[:, 0].copy(), request.get_output_tensor(1).data.copy()



class JaxEngine:
    """The Keras model's inference pass (`stateless_call`) compiled by XLA through
    `jax.jit`, for Keras's JAX backend.  `refresh` takes the current weights (arrays
    passed to the compiled call, so new weights cost no compilation).  Batches are
    padded to the next power of two, so a search's varying batch sizes compile a
    handful of shapes, not one per size."""

    name, precision = "jax", "f32"
    lanes = 2
    """Two lanes, as with TensorFlow: XLA's call releases the GIL, so one lane's search
    overlaps the other's network call."""

    def __init__(self, keras_model, input_dim: tuple):
        trainable = len(keras_model.trainable_variables)

        def forward(values, x):
            outputs, _ = keras_model.stateless_call(values[:trainable], values[trainable:], x, training=False)
            return outputs

        self._forward = jax.jit(forward)
        self._values: list | None = None

    def refresh(self, keras_model) -> None:
        """Take `keras_model`'s current weights."""
        self._values = [v.value for v in keras_model.trainable_variables + keras_model.non_trainable_variables]

    def run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values (n,), logits (n, 42)) for model inputs `x`."""
        n = len(x)
        padded = np.zeros((1 << max(n - 1, 0).bit_length(), *x.shape[1:]), dtype=np.float32)
        padded[:n] = x
        value, logits = self._forward(self._values, padded)
        return np.asarray(value)[:n, 0], np.asarray(logits)[:n]


def makeEngine(keras_model, input_dim: tuple, engine: str = "auto", precision: str = "auto"):
    """The engine `engine` / `precision` (config values, "auto" resolved for this
    machine and Keras backend) for `keras_model`, not yet refreshed."""
    engine, precision = resolve(engine, precision)
    if engine == "jax":
        return JaxEngine(keras_model, input_dim)
    if engine == "tensorflow":
        return TensorFlowEngine(keras_model, input_dim)
    return OpenVINOEngine(keras_model, input_dim, precision)
