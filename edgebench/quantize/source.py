"""The model to quantize: identify it, load it, make its fixed-batch export copy (level 2).

Supported inputs:

* a Keras v3 archive (``.keras``) or a legacy HDF5 model (``.h5``/``.hdf5``), loaded
  with ``keras.saving.load_model(compile=False)``;
* a SavedModel directory (``saved_model.pb`` + ``variables/``), loaded with
  ``tf.saved_model.load`` and its ``serving_default`` signature;
* an ONNX model (``.onnx``), lowered to a Keras functional model by
  :mod:`edgebench.quantize.onnx_lower` (batch fixed, NCHW inputs made NHWC).

Identity (recorded as ``derived_from`` in every sidecar): the path as given, and
the sha256 of the file (Keras) or of ``saved_model.pb`` (SavedModel; the sha256 of
the whole directory tree is recorded too, since the weights live in ``variables/``).

Fixing the batch: a Keras model is converted from a *copy* whose input layer has
the fixed batch size (rebuilt from the model's config with the same layer names,
weights copied, checked on one sample). Converting a ``tf.function`` with a fixed
signature instead makes TF 2.21 + Keras 3 fail during calibration (READ_VARIABLE
on an uninitialised resource), which models/digits/build.py ran into first. A
SavedModel is wrapped in a fixed-shape ``tf.function`` over its signature, which
calibrates fine because the loaded object owns its variables.
"""
from __future__ import annotations

import collections
import contextlib
import copy as _copy
import hashlib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from edgebench.errors import ModelError, UsageError
from edgebench.quantize._tf import Quiet, first_error_line, keras_version
from edgebench.quantize.onnx_lower import read_onnx
from edgebench.quantize.onnx_lower.lower import lower

KERAS_SUFFIXES = (".keras",)
ONNX_SUFFIXES = (".onnx",)
H5_SUFFIXES = (".h5", ".hdf5")
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


@dataclass(frozen=True)
class SourceModel:
    """Where a model came from: path as given, kind, and its hash."""

    path: str
    kind: str                 # "keras" | "h5" | "saved_model" | "onnx"
    sha256: str
    sha256_of: str            # what was hashed: the file, or "saved_model.pb"
    tree_sha256: Optional[str] = None   # SavedModel: every file under the directory

    def to_dict(self) -> dict:
        d = {"path": self.path, "kind": self.kind, "sha256": self.sha256, "sha256_of": self.sha256_of}
        if self.tree_sha256 is not None:
            d["tree_sha256"] = self.tree_sha256
        return d


def _sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tree_sha256(root: Path) -> str:
    """sha256 over (relative path, size, sha256) of every file, in sorted order."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        h.update(f"{rel}\0{f.stat().st_size}\0{_sha256_file(f)}\n".encode())
    return h.hexdigest()


def identify(path) -> SourceModel:
    """Check that ``path`` is a model quantize can read (before TensorFlow is imported)."""
    p = Path(path)
    if not p.exists():
        raise ModelError(f"model file {p} does not exist", "check the path")
    if p.is_dir():
        pb = p / "saved_model.pb"
        if not pb.is_file():
            raise ModelError(f"{p} is a directory without saved_model.pb, not a SavedModel",
                             "pass a .keras or .h5 file, or a SavedModel directory")
        return SourceModel(str(path), "saved_model", _sha256_file(pb), "saved_model.pb", _tree_sha256(p))
    if not p.is_file():
        raise ModelError(f"{p} is not a regular file", "pass a .keras or .h5 file, or a SavedModel directory")
    try:   # /proc/self/mem and the like are "regular" yet cannot be read
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(512)
    except OSError as exc:
        raise ModelError(f"cannot read model file {p}: {exc.strerror or exc}",
                         "pass a .keras, .h5 or .onnx file, or a SavedModel directory") from None
    suffix = p.suffix.lower()
    what = _content_kind(p, head, size)
    if what == "tflite":
        raise ModelError(f"{p} is already a TFLite model; quantize converts Keras, ONNX and SavedModel models",
                         "pass the .keras/.h5/.onnx file or SavedModel it was made from")
    if suffix in ONNX_SUFFIXES:
        return SourceModel(str(path), "onnx", _sha256_file(p), "file")
    if what == "keras" and suffix in KERAS_SUFFIXES:
        return SourceModel(str(path), "keras", _sha256_file(p), "file")
    if what == "h5" and suffix in H5_SUFFIXES:
        return SourceModel(str(path), "h5", _sha256_file(p), "file")
    if suffix in KERAS_SUFFIXES and what != "h5":
        raise ModelError(f"cannot load {p} with keras.saving.load_model: not a Keras v3 archive "
                         f"(a .keras file is a zip archive; this one is {what})",
                         "re-save the model with model.save('model.keras')")
    if suffix in H5_SUFFIXES and what != "keras":
        raise ModelError(f"cannot load {p} with keras.saving.load_model: not an HDF5 file (it is {what})",
                         "re-save the model with model.save('model.h5')")
    if what in ("keras", "h5"):
        kind = "a zip archive (a Keras v3 .keras file?)" if what == "keras" else "an HDF5 file (a legacy .h5 model?)"
        raise ModelError(f"{p} is {kind} but is named {suffix or '(no suffix)'!r}",
                         "rename it to .keras (zip archive) or .h5 (HDF5) to match its content")
    expected = {".keras": "a Keras v3 archive (a zip file)", ".h5": "an HDF5 model", ".hdf5": "an HDF5 model",
                ".tflite": "a TFLite model"}.get(suffix, "a Keras model (.keras, .h5), an ONNX model (.onnx) or a "
                                                       "SavedModel directory")
    raise ModelError(f"{p} is not {expected}: it is {what}",
                     "quantize reads .keras, .h5 and .onnx files and SavedModel directories")


def _content_kind(p: Path, head: bytes, size: int) -> str:
    """What a file holds, from its first bytes: "tflite", "keras" (zip), "h5", or a description."""
    if size == 0:
        return "an empty file (0 bytes)"
    if len(head) >= 8 and head[4:8] == b"TFL3":
        return "tflite"
    if head.startswith(_HDF5_MAGIC):
        return "h5"
    if head.startswith(b"PK\x03\x04") and zipfile.is_zipfile(p):
        return "keras"
    if head.startswith(b"PK"):
        return f"a damaged or truncated zip archive ({size:,} bytes)"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return f"{size:,} bytes of an unknown format (first bytes {head[:8]!r})"
    if "\x00" in text:
        return f"{size:,} bytes of an unknown format (first bytes {head[:8]!r})"
    return f"a text file ({size:,} bytes)"


@dataclass
class ImportedModel:
    """A loaded model and what the converter needs from it."""

    source: SourceModel
    loader: str                   # e.g. "keras.saving.load_model (Keras 3.15.1)"
    input_name: str
    input_shape: Optional[tuple]  # model's own input shape, None for free dimensions;
                                  # None altogether for a subclassed Keras model (taken from the data)
    input_dtype: str
    obj: Any                      # the Keras model, or the loaded SavedModel object
    signature: Any = None         # SavedModel: the serving function
    onnx: Any = None              # ONNX: (OnnxGraph, onnx_lower.lower.Lowered); obj is the lowered Keras model


def load(tf, source: SourceModel, batch: int = 1) -> ImportedModel:
    if source.kind == "saved_model":
        return _load_saved_model(tf, source)
    if source.kind == "onnx":
        return _load_onnx(tf, source, batch)
    return _load_keras(tf, source)


def check_onnx_inputs(g):
    """``g`` (an :class:`~edgebench.quantize.onnx_lower.graph.OnnxGraph`) when it has the one input quantize
    supports, else UsageError naming them."""
    if len(g.inputs) != 1:
        raise UsageError(f"{g.path} has {len(g.inputs)} inputs "
                         f"({', '.join(repr(i.name) for i in g.inputs)}); quantize supports models with one input")
    return g


def _load_onnx(tf, source: SourceModel, batch: int) -> ImportedModel:
    """Read the ONNX file and lower it to a Keras model whose input has batch ``batch``."""
    # lazy: tensorflow, sklearn, pandas (optional; import tensorflow 18.8 s, sklearn 6.0 s, pandas 1.3 s), loaded only where used
    import keras

    g = check_onnx_inputs(read_onnx(source.path, batch))
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    import onnx

    q = Quiet()
    with q:
        lowered = lower(g, keras, tf)
    lay = lowered.inputs[0]
    loader = (f"edgebench ONNX lowering (onnx {onnx.__version__}, opset {g.opset}, produced by {g.producer}; "
              f"Keras {keras_version(tf)})")
    return ImportedModel(source, loader, lay.name, (None,) + tuple(lay.model_shape[1:]), "float32",
                       lowered.model, onnx=(g, lowered))


def _load_keras(tf, source: SourceModel) -> ImportedModel:
    # lazy: tensorflow, sklearn, pandas (optional; import tensorflow 18.8 s, sklearn 6.0 s, pandas 1.3 s), loaded only where used
    import keras

    loader = f"keras.saving.load_model (Keras {keras_version(tf)})"
    q = Quiet()
    try:
        with q:
            model = keras.saving.load_model(source.path, compile=False)
    except Exception as exc:
        raise ModelError(f"cannot load {source.path} with {loader}: {first_error_line(exc, q.text)}",
                         "check that it was saved by Keras with model.save() and that custom "
                         "layers are importable") from None
    inputs = _keras_inputs(model)
    if inputs is not None and len(inputs) != 1:
        raise UsageError(f"{source.path} has {len(inputs)} inputs; quantize supports models with one input")
    if inputs is None:  # a subclassed model: the calibration data will give the input shape
        return ImportedModel(source, loader, "input", None, "float32", model)
    t = inputs[0]
    shape = tuple(None if d is None else int(d) for d in t.shape)
    name = str(getattr(t, "name", "input") or "input")
    dtype = str(getattr(t, "dtype", "float32"))
    return ImportedModel(source, loader, name, shape, _dtype_name(dtype), model)


def _keras_inputs(model):
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        return None
    if not inputs:
        return None
    return list(inputs)


def _dtype_name(dtype) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    return name.replace("tf.", "").replace("<dtype: '", "").replace("'>", "")


def _load_saved_model(tf, source: SourceModel) -> ImportedModel:
    loader = f"tf.saved_model.load (TensorFlow {tf.__version__})"
    q = Quiet()
    try:
        with q:
            obj = tf.saved_model.load(source.path)
    except Exception as exc:
        raise ModelError(f"cannot load {source.path} with {loader}: {first_error_line(exc, q.text)}",
                         "re-export it with model.export(dir) or tf.saved_model.save") from None
    sigs = dict(getattr(obj, "signatures", {}) or {})
    if not sigs:
        raise ModelError(f"{source.path}: the SavedModel has no signatures",
                         "export it with a serving signature (model.export(dir))")
    key = "serving_default" if "serving_default" in sigs else sorted(sigs)[0]
    sig = sigs[key]
    args, kwargs = sig.structured_input_signature
    specs = dict(kwargs or {})
    if args or len(specs) != 1:
        n = len(args) + len(specs)
        raise UsageError(f"{source.path}: signature {key!r} has {n} inputs; quantize supports models with one input")
    name, spec = next(iter(specs.items()))
    shape = tuple(None if d is None else int(d) for d in spec.shape.as_list())
    return ImportedModel(source, f"{loader}, signature {key!r}", name, shape, _dtype_name(spec.dtype), obj, sig)


@contextlib.contextmanager
def isolated_keras_names():
    """Keras auto-names layers from a process-wide counter ("dense", "dense_1", ...), and those
    names end up in the .tflite tensor names. Inside this block the counter starts from zero
    (and is restored afterwards), so a subclassed model loads with the same layer names, and
    converts to the same bytes, however many models the process made before."""
    try:
        from keras.src.backend.common import global_state  # optional dependency: its absence is handled here
    except ImportError:  # pragma: no cover - another Keras layout: names may depend on history
        yield
        return
    key = "object_name_uids"
    saved = global_state.get_global_attribute(key)
    global_state.set_global_attribute(key, collections.defaultdict(int))
    try:
        yield
    finally:
        global_state.set_global_attribute(key, saved)


# ---------------------------------------------------------------- fixed-batch export copy

def export_target(tf, loaded: ImportedModel, shape: tuple, probe) -> tuple:
    """(converter factory, how) for a model whose input has exactly ``shape``.

    ``probe`` is one calibration batch of that shape, used to check the copy.
    The factory returns a fresh ``TFLiteConverter`` on each call.
    """
    if loaded.signature is not None:
        return _saved_model_target(tf, loaded, shape)
    if loaded.onnx is not None:    # built with the fixed shape already
        model, opset = loaded.obj, loaded.onnx[0].opset

        def factory():
            return tf.lite.TFLiteConverter.from_keras_model(model)

        return factory, f"TFLiteConverter.from_keras_model (Keras model lowered from ONNX opset {opset})"
    return _keras_target(tf, loaded, shape, probe)


def _saved_model_target(tf, loaded: ImportedModel, shape: tuple):
    sig, name = loaded.signature, loaded.input_name

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.dtypes.as_dtype(loaded.input_dtype), name=name)])
    def serve(x):
        return sig(**{name: x})

    concrete = serve.get_concrete_function()

    def factory():
        return tf.lite.TFLiteConverter.from_concrete_functions([concrete], loaded.obj)

    return factory, "TFLiteConverter.from_concrete_functions (SavedModel signature, fixed input shape)"


def _keras_target(tf, loaded: ImportedModel, shape: tuple, probe):
    model = loaded.obj
    copy, how = None, ""
    try:
        copy = _rebuild_with_shape(model, shape)
        how = "TFLiteConverter.from_keras_model (copy rebuilt from the model config with a fixed input shape)"
    except Exception:
        copy = None
    if copy is not None:
        try:
            a = np.asarray(model(probe, training=False))
            b = np.asarray(copy(probe, training=False))
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6):
                copy = None
        except Exception:
            copy = None
    if copy is None:  # subclassed models and configs that do not round-trip: wrap instead
        # lazy: tensorflow, sklearn, pandas (optional; import tensorflow 18.8 s, sklearn 6.0 s, pandas 1.3 s), loaded only where used
        import keras

        inp = keras.Input(batch_shape=shape, name=loaded.input_name.split(":")[0] or "input",
                          dtype=loaded.input_dtype)
        copy = keras.Model(inp, model(inp), name=getattr(model, "name", "model") or "model")
        how = "TFLiteConverter.from_keras_model (model wrapped under a fixed-shape keras.Input)"

    def factory():
        return tf.lite.TFLiteConverter.from_keras_model(copy)

    return factory, how


def _rebuild_with_shape(model, shape: tuple):
    """Rebuild a Functional/Sequential model from its config with the input batch_shape fixed."""
    config = _copy.deepcopy(model.get_config())
    layers = config.get("layers") if isinstance(config, dict) else None
    if not layers:
        raise ValueError("no layer list in the config")
    patched = 0
    for layer in layers:
        if layer.get("class_name") == "InputLayer":
            cfg = layer.setdefault("config", {})
            cfg["batch_shape"] = list(shape)
            cfg.pop("batch_input_shape", None)
            patched += 1
    if "build_input_shape" in config:
        config["build_input_shape"] = list(shape)
        patched += 1
    if patched == 0:
        raise ValueError("no InputLayer in the config")
    rebuilt = model.__class__.from_config(config)
    rebuilt.set_weights(model.get_weights())
    return rebuilt
