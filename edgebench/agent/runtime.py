"""The TFLite runtime on the board, found at run time, and one loaded model.

Order of preference: ``ai_edge_litert.interpreter`` (LiteRT), then
``tflite_runtime.interpreter``, then ``tensorflow.lite``; each imported lazily.
Kernel sets map to the interpreter's op resolver:

* ``xnnpack``   – ``OpResolverType.AUTO`` (optimized kernels, XNNPACK applied by default)
* ``builtin``   – ``BUILTIN_WITHOUT_DEFAULT_DELEGATES`` (optimized kernels, no XNNPACK)
* ``reference`` – ``BUILTIN_REF`` (reference kernels: edgebench's INT8 oracle)

An Edge TPU delegate (``delegate="edgetpu"``) is loaded from libedgetpu, through
``pycoral.utils.edgetpu`` when the runtime is tflite_runtime and pycoral is
importable, otherwise through the runtime's own ``load_delegate``.
"""
from __future__ import annotations

import importlib
import platform
import time
from typing import List, Optional, Tuple

import numpy as np

from .protocol import ModelFailure, RuntimeMissing, UsageFailure

CANDIDATES = (
    ("ai-edge-litert", "ai_edge_litert.interpreter", "ai_edge_litert"),
    ("tflite-runtime", "tflite_runtime.interpreter", "tflite_runtime"),
    ("tensorflow", "tensorflow.lite", "tensorflow"),
)
KERNELS = {
    "xnnpack": "AUTO",
    "builtin": "BUILTIN_WITHOUT_DEFAULT_DELEGATES",
    "reference": "BUILTIN_REF",
}
EDGETPU_LIBRARY = {"Linux": "libedgetpu.so.1", "Darwin": "libedgetpu.1.dylib", "Windows": "edgetpu.dll"}
RUNTIME_HINT = "pip install ai-edge-litert on the board (or tflite-runtime on older systems)"
EDGETPU_HINT = "install the Edge TPU runtime libedgetpu1-std from Coral's apt repository (packages.cloud.google.com/apt coral-edgetpu-stable) and plug the device in"


class Runtime:
    """The chosen runtime module: ``Interpreter``, ``OpResolverType``, ``load_delegate``."""

    def __init__(self, name: str, version: str, module):
        self.name = name
        self.version = version
        if name == "tensorflow":
            self.Interpreter = module.Interpreter
            self.OpResolverType = getattr(module.experimental, "OpResolverType", None)
            self.load_delegate = module.experimental.load_delegate
        else:
            self.Interpreter = module.Interpreter
            self.OpResolverType = getattr(module, "OpResolverType", None)
            self.load_delegate = module.load_delegate

    def describe(self) -> dict:
        return {"name": self.name, "version": self.version}


_cached: Optional[Tuple[Optional[Runtime], Optional[str]]] = None  # (Runtime or None, error text or None)


def find_runtime() -> Runtime:
    """The first importable runtime (cached); RuntimeMissing when there is none."""
    global _cached
    if _cached is None:
        errors = []
        for name, modname, topname in CANDIDATES:
            try:
                module = importlib.import_module(modname)
                top = importlib.import_module(topname)
            except Exception as exc:  # ImportError, or a broken install raising anything
                errors.append(f"{modname}: {type(exc).__name__}: {exc}")
                continue
            version = str(getattr(top, "__version__", "unknown"))
            _cached = (Runtime(name, version, module), None)
            break
        else:
            _cached = (None, "no TFLite runtime importable (" + "; ".join(errors) + ")")
    runtime, error = _cached
    if runtime is None:
        raise RuntimeMissing(error or "no TFLite runtime importable", hint=RUNTIME_HINT)
    return runtime


def runtime_summary() -> tuple:
    """``({name, version} or None, error text or None)`` without raising."""
    try:
        return find_runtime().describe(), None
    except RuntimeMissing as exc:
        return None, exc.message


def load_edgetpu_delegate(runtime: Runtime):
    """The Edge TPU delegate, or RuntimeMissing with an installation hint."""
    library = EDGETPU_LIBRARY.get(platform.system(), "libedgetpu.so.1")
    try:
        if runtime.name == "tflite-runtime":
            try:
                from pycoral.utils import edgetpu  # optional dependency: its absence is handled here
            except ImportError:
                edgetpu = None
            if edgetpu is not None:
                return edgetpu.load_edgetpu_delegate()
        return runtime.load_delegate(library)
    except (ValueError, OSError, RuntimeError) as exc:
        raise RuntimeMissing(f"cannot load the Edge TPU delegate {library}: {exc}", hint=EDGETPU_HINT) from exc


def tensor_detail(d: dict) -> dict:
    scale, zero_point = d.get("quantization", (0.0, 0))
    quant = {"scale": float(scale), "zero_point": int(zero_point)} if scale else None
    return {
        "name": d["name"],
        "index": int(d["index"]),
        "shape": [int(s) for s in d["shape"]],
        "shape_signature": [int(s) for s in d.get("shape_signature", d["shape"])],
        "dtype": np.dtype(d["dtype"]).name,
        "quant": quant,
    }


class LoadedModel:
    """An allocated interpreter plus what the timed loop needs about its tensors."""

    def __init__(self, path: str, kernels: str = "xnnpack", threads: int = 1,
                 delegate: Optional[str] = None, batch: int = 1, preserve_all_tensors: bool = False):
        if kernels not in KERNELS:
            raise UsageFailure(f"unknown kernel set {kernels!r}; choose one of {', '.join(KERNELS)}")
        if delegate not in (None, "edgetpu"):
            raise UsageFailure(f"unknown delegate {delegate!r}; choose edgetpu or none")
        if not isinstance(threads, int) or threads < 1:
            raise UsageFailure(f"threads must be a positive integer, got {threads!r}")
        if not isinstance(batch, int) or batch < 1:
            raise UsageFailure(f"batch must be a positive integer, got {batch!r}")
        rt = find_runtime()
        self.runtime = rt
        self.kernels, self.threads, self.delegate = kernels, threads, delegate
        self.preserve_all_tensors = bool(preserve_all_tensors)
        kwargs = {"model_path": path, "num_threads": threads}
        if self.preserve_all_tensors:  # every intermediate tensor keeps its value (the `tensors` op)
            kwargs["experimental_preserve_all_tensors"] = True
        if delegate == "edgetpu":
            kwargs["experimental_delegates"] = [load_edgetpu_delegate(rt)]
        resolver = KERNELS[kernels]
        if rt.OpResolverType is not None:
            kwargs["experimental_op_resolver_type"] = getattr(rt.OpResolverType, resolver)
        elif kernels != "xnnpack":
            raise RuntimeMissing(f"{rt.name} {rt.version} cannot select the {kernels!r} kernel set "
                                 "(no OpResolverType)", hint=RUNTIME_HINT)
        self.op_resolver = resolver
        t0 = time.perf_counter()
        try:
            self.interpreter = rt.Interpreter(**kwargs)
        except TypeError as exc:
            if "preserve_all_tensors" not in str(exc):
                raise
            raise RuntimeMissing(f"{rt.name} {rt.version} cannot keep intermediate tensors "
                                 "(no experimental_preserve_all_tensors)", hint=RUNTIME_HINT) from None
        except (ValueError, RuntimeError) as exc:
            raise ModelFailure(f"not a usable TFLite model: {_first_line(exc)}",
                               hint="check that the file is a .tflite flatbuffer (not .h5/.keras/SavedModel)") from exc
        self._resize_batch(batch)
        try:
            self.interpreter.allocate_tensors()
        except (ValueError, RuntimeError) as exc:
            text = str(exc)
            hint = ("the model was compiled for the Edge TPU: load it with delegate edgetpu"
                    if "edgetpu-custom-op" in text else None)
            raise ModelFailure(f"cannot allocate tensors ({kernels} kernels): {_first_line(exc)}", hint=hint) from exc
        self.load_s = time.perf_counter() - t0
        self.inputs = [tensor_detail(d) for d in self.interpreter.get_input_details()]
        self.outputs = [tensor_detail(d) for d in self.interpreter.get_output_details()]
        if len(self.inputs) != 1:
            raise ModelFailure(f"the model has {len(self.inputs)} inputs; protocol v1 drives single-input models only")
        self.batch = self.inputs[0]["shape"][0] if self.inputs[0]["shape"] else 1

    def _resize_batch(self, batch: int) -> None:
        self.batch_resizable = False
        for d in self.interpreter.get_input_details():
            sig = list(d.get("shape_signature", d["shape"]))
            if sig and sig[0] == -1:
                self.batch_resizable = True
        if batch == 1 and not self.batch_resizable:
            return
        for d in self.interpreter.get_input_details():
            shape = [int(s) for s in d["shape"]]
            if not shape:
                continue
            if not self.batch_resizable and shape[0] != batch:
                raise UsageFailure(
                    f"the model's batch dimension is fixed at {shape[0]} (shape_signature "
                    f"{list(d.get('shape_signature', shape))}); cannot run batch {batch}")
            if shape[0] != batch:
                self.interpreter.resize_tensor_input(d["index"], [batch] + shape[1:], strict=True)

    def describe(self) -> dict:
        return {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "runtime": self.runtime.describe(),
            "kernels": self.kernels,
            "op_resolver": self.op_resolver,
            "threads": self.threads,
            "delegate": self.delegate,
            "batch": self.batch,
            "batch_resizable": self.batch_resizable,
            "load_s": self.load_s,
            "preserve_all_tensors": self.preserve_all_tensors,
        }

    def sample_shape(self) -> List[int]:
        """Shape of one input sample (the input shape without its batch dimension)."""
        return self.inputs[0]["shape"][1:]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
