"""Benchmark inputs (level 2): seeded random data in the model's input range, or a user file.

Inputs are always float32 arrays shaped ``(N, *input_shape_without_batch)``;
the device quantizes them (that is part of the timed input preparation).

A user's file must hold real numbers: object, complex, boolean and string arrays
are refused (complex values are never silently cut to their real part). Values a
quantized input tensor cannot represent are clamped by the device's quantization;
:func:`load_inputs` counts them (``InputSet.clamped``, recorded in
:meth:`InputSet.describe`) and warns with :class:`edgebench.errors.InputWarning`.
"""
from __future__ import annotations

import hashlib
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgebench.data.layout import model_layout
from edgebench.errors import DataError, InputWarning

_QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}
FLOAT_DEFAULT_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class InputSet:
    x: np.ndarray            # float32 (N, *shape)
    source: str              # "random" or the file path
    seed: int | None
    low: float | None
    high: float | None
    clamped: int | None = None   # values outside a quantized input's range (None: not checked)

    def describe(self) -> dict:
        return {
            "source": self.source, "seed": self.seed, "count": int(self.x.shape[0]),
            "shape": list(self.x.shape[1:]), "dtype": str(self.x.dtype),
            "range": [self.low, self.high] if self.low is not None else None,
            "clamped": self.clamped,
            "sha256": hashlib.sha256(np.ascontiguousarray(self.x).tobytes()).hexdigest(),
        }


def input_range(tensor: dict, override: tuple | None = None) -> tuple[float, float]:
    """The real-valued range a model input can represent.

    Quantized inputs: the dequantized span of the integer type. Float inputs:
    [0, 1] unless ``override`` says otherwise (a float model has no declared range).
    """
    if override is not None:
        lo, hi = float(override[0]), float(override[1])
        if not lo < hi:
            raise DataError(f"input range {lo},{hi} is empty", "give LOW,HIGH with LOW < HIGH")
        return lo, hi
    q = tensor.get("quant")
    if q and tensor.get("dtype") in _QRANGE:
        scale, zp = float(np.ravel(q["scale"])[0]), float(np.ravel(q["zero_point"])[0])
        qmin, qmax = _QRANGE[tensor["dtype"]]
        return scale * (qmin - zp), scale * (qmax - zp)
    return FLOAT_DEFAULT_RANGE


MAX_RANDOM_BYTES = 1024 ** 3         # seeded random inputs drawn in memory at most (float32; float64 while drawn)


def random_inputs(tensor: dict, count: int = 64, seed: int = 0, override=None) -> InputSet:
    if count < 1:
        raise DataError(f"input count {count} must be at least 1", "use a positive --input-count")
    lo, hi = input_range(tensor, override)
    shape = tuple(int(d) for d in tensor["shape"][1:])
    need = count * int(np.prod(shape, dtype=np.float64)) * 4
    if need > MAX_RANDOM_BYTES:
        dims = "x".join(map(str, shape)) or "scalar"
        raise DataError(f"{count} random inputs of the model's input shape {dims} would take "
                        f"{need / 1024 ** 3:,.1f} GiB (at most {MAX_RANDOM_BYTES / 1024 ** 3:g} GiB are drawn)",
                        "lower --input-count, or give inputs with --inputs (a model with inputs this large is "
                        "probably damaged: edgebench inspect MODEL)")
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, size=(count, *shape)).astype(np.float32)
    return InputSet(x, "random", seed, lo, hi)


def load_inputs(path, tensor: dict, key: str | None = None, limit: int | None = None, layout=None,
                model=None) -> InputSet:
    """Load a user's .npy or .npz (array ``x`` or the first array, or ``key``) and check it.

    ``layout`` (:class:`edgebench.data.layout.TensorLayout`, a model converted from ONNX): inputs
    given in the ONNX model's layout (NCHW) are transposed to the model's. ``model`` (its path, or
    an object with ``.path``): the layout its sidecar records, when ``layout`` is not given; every
    verb's ``--inputs`` passes its model here, so all accept the same arrays.

    Refuses anything but a regular file holding real numbers of the input's shape;
    warns (:class:`InputWarning`) when values lie outside a quantized input's range.
    """
    if layout is None and model is not None:
        layout = model_layout(model)
    p = Path(path)
    if not p.exists():
        raise DataError(f"input file {p} does not exist", "check the --inputs path")
    if not p.is_file():
        raise DataError(f"input file {p} is not a regular file", "give a .npy or .npz file")
    try:
        loaded = np.load(p, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                names = list(loaded.files)
                name = key or ("x" if "x" in names else (names[0] if names else None))
                if name is None or name not in names:
                    raise DataError(f"{p}: no array {key or 'x'!r} (has {names})", "name the inputs array x")
                arr = loaded[name]
        else:
            arr = loaded
    except DataError:
        raise
    except ValueError as exc:
        if "pickled" in str(exc):
            raise DataError(f"{p}: not a readable .npy/.npz file (numpy would have to unpickle it)",
                            "save inputs with numpy.save/savez") from None
        if "Object arrays" in str(exc):
            raise DataError(f"{p}: holds an object array (Python objects), not numbers",
                            "save a numeric float32 array with numpy.save/savez") from None
        raise DataError(f"{p}: not a readable .npy/.npz file ({exc})", "save inputs with numpy.save/savez") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise DataError(f"{p}: not a readable .npy/.npz file ({exc})", "save inputs with numpy.save/savez") from None
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        raise DataError(f"{p}: inputs are complex ({arr.dtype}); a model input takes real numbers",
                        "save the real values you mean (e.g. x.real or abs(x)) as float32")
    if arr.dtype.kind not in "fiu":
        raise DataError(f"{p}: inputs have dtype {arr.dtype}, not real numbers", "save float32 inputs")
    shape = tuple(int(d) for d in tensor["shape"])
    per = shape[1:]
    if arr.shape == shape and shape[0] == 1:
        arr = arr.reshape((1, *per))
    elif arr.ndim == len(per):  # one sample without the batch axis
        arr = arr.reshape((1, *arr.shape))
    if layout is not None and arr.ndim == len(shape):
        arr, _ = layout.adopt(arr, str(p))
    if tuple(arr.shape[1:]) != per:
        raise DataError(
            f"{p}: inputs of shape {tuple(arr.shape)} do not fit the model input "
            f"{tensor.get('name')!r} of shape {list(shape)}",
            f"give an array shaped (N, {', '.join(map(str, per))})",
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise DataError(f"{p}: inputs contain NaN or infinity", "clean the input data")
    with np.errstate(over="ignore"):
        arr = arr.astype(np.float32)
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{p}: inputs contain values too large for float32", "scale the input data")
    if limit:
        arr = arr[:limit]
    if arr.shape[0] == 0:
        raise DataError(f"{p}: holds no samples", "give at least one input")
    clamped = count_clamped(arr, tensor)
    if clamped:
        lo, hi = input_range(tensor)
        warnings.warn(InputWarning(
            f"{p}: {clamped:,} of {arr.size:,} input values lie outside the range [{lo:.6g}, {hi:.6g}] the "
            f"{tensor.get('dtype')} input {tensor.get('name')!r} can represent and will be clamped"), stacklevel=2)
    return InputSet(arr, str(p), None, float(arr.min()), float(arr.max()), clamped)


def count_clamped(x: np.ndarray, tensor: dict) -> int | None:
    """How many values of ``x`` quantizing into ``tensor`` would clamp (None for a float input,
    which has no range). A value within half a quantization step of the range is not clamped."""
    q = tensor.get("quant")
    if not q or tensor.get("dtype") not in _QRANGE:
        return None
    lo, hi = input_range(tensor)
    half = abs(float(np.ravel(q["scale"])[0])) / 2
    return int(np.count_nonzero((x < lo - half) | (x > hi + half)))
