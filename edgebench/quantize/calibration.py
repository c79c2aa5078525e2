"""Calibration data for full-integer quantization (level 2).

Sources (labels are never needed for calibration):

* ``.npz``: the array named ``key`` (default ``x``; a file holding one array uses it);
* ``.npy``: the one array in the file;
* an image folder: images directly inside it, or in class subfolders
  (``root/<class>/<image>``), read with :func:`edgebench.data.datasets.load_image_folder`;
* ``digits`` or ``digits:<split>``: the built-in digits set
  (:func:`edgebench.data.datasets.load_digits`, already scaled to [0, 1]).

Preprocessing is declared, never guessed: ``scale``, ``mean``, ``std`` (arrays
and images, applied as ``x * scale`` then ``(x - mean) / std``, the order of
edgebench.data.datasets), and for images ``size``, ``resize`` and ``channels``.

Which samples: all of them, or ``count`` samples evenly spaced through the set
(indices ``i * n // count``), deterministic and not biased towards the first
class of a sorted image folder. The sha256 recorded is that of the float32
C-order bytes of exactly the samples the converter saw, the convention of the
digits model card.
"""
from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from edgebench.data import datasets as ds
from edgebench.errors import DataError, UsageError

ARRAY_KEYS = ("scale", "mean", "std")
IMAGE_KEYS = ("size", "resize", "channels")
PREPROCESS_KEYS = ARRAY_KEYS + IMAGE_KEYS


@dataclass(frozen=True)
class CalibrationData:
    """The samples a converter calibrates with: ``x`` float32 (N, ...)."""

    x: np.ndarray
    source: str
    preprocessing: dict = field(default_factory=dict)
    stored_dtype: str = "float32"
    available: int = 0            # samples in the source before selection
    selection: str = "all"

    @property
    def count(self) -> int:
        return int(self.x.shape[0])

    @property
    def sha256(self) -> str:
        return hashlib.sha256(np.ascontiguousarray(self.x, dtype=np.float32).tobytes()).hexdigest()

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "count": self.count,
            "sha256": self.sha256,
            "sha256_of": "float32 C-order bytes of the calibration samples",
            "shape": [int(d) for d in self.x.shape[1:]],
            "stored_dtype": self.stored_dtype,
            "available": self.available,
            "selection": self.selection,
            "preprocessing": dict(self.preprocessing),
        }


def parse_preprocess(items: Optional[Sequence[str]]) -> dict:
    """``["scale=1/255", "mean=0.5,0.5,0.5", "resize=32x32", "channels=3"]`` -> dict."""
    out: dict = {}
    for item in items or ():
        for part in _split_items(item):
            key, sep, value = part.partition("=")
            key, value = key.strip().lower(), value.strip()
            if not sep or not key or not value:
                raise UsageError(f"preprocessing {part!r} is not key=value",
                                 f"keys: {', '.join(PREPROCESS_KEYS)}; e.g. scale=1/255")
            if key not in PREPROCESS_KEYS:
                raise UsageError(f"unknown preprocessing key {key!r}",
                                 f"keys: {', '.join(PREPROCESS_KEYS)}")
            if key in out:
                raise UsageError(f"preprocessing {key!r} given twice")
            if key == "scale":
                out[key] = _number(value, key)
            elif key in ("mean", "std"):
                nums = [_number(v, key) for v in value.split(",")]
                out[key] = nums[0] if len(nums) == 1 else nums
            elif key in ("size", "resize"):
                try:
                    h, w = (int(v) for v in value.lower().split("x"))
                except ValueError:
                    raise UsageError(f"{key} must be HxW (e.g. 32x32), got {value!r}") from None
                out[key] = (h, w)
            else:
                try:
                    out[key] = int(value)
                except ValueError:
                    raise UsageError(f"channels must be 1 or 3, got {value!r}") from None
    return out


def _split_items(item: str) -> list:
    """'scale=1/255;mean=0.5' or one pair; commas belong to per-channel values."""
    return [p for p in (s.strip() for s in str(item).split(";")) if p]


def _number(text: str, key: str) -> float:
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(text)
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"preprocessing {key}={text!r} is not a number (e.g. 0.5 or 1/255)") from None
    if not np.isfinite(value):
        raise UsageError(f"preprocessing {key}={text!r} is not finite")
    return value


def exists(spec) -> None:
    """DataError for a calibration source that does not exist (checked before TensorFlow loads)."""
    text = str(spec)
    if text == "digits" or text.startswith("digits:"):
        return
    if not Path(text).exists():
        raise DataError(f"calibration data {text} does not exist",
                        "give a .npz or .npy file, an image folder, or digits[:split]")


def load_calibration(spec, preprocess: Optional[dict] = None, key: Optional[str] = None,
                     expected: Optional[str] = None, layout=None) -> CalibrationData:
    """Read every sample of ``spec`` with the declared preprocessing (no selection yet).

    ``expected`` (e.g. "float32 N x 8x8x1 for the model input 'image'") is named in dtype errors.
    ``layout`` (:class:`edgebench.data.layout.TensorLayout`, a model lowered from ONNX): arrays
    given in the source model's layout are transposed to the converted model's before the
    per-channel preprocessing; images are decoded H x W x C.
    """
    cal = _load_calibration(spec, preprocess, key, expected, layout)
    if layout is not None and "layout" not in cal.preprocessing:
        x, how = layout.adopt(cal.x, cal.source, images=True)
        cal = CalibrationData(x, cal.source, {**cal.preprocessing, "layout": how}, cal.stored_dtype, cal.available)
    return cal


def _load_calibration(spec, preprocess, key, expected, layout) -> CalibrationData:
    pre = dict(preprocess or {})
    text = str(spec)
    exists(text)
    if text == "digits" or text.startswith("digits:"):
        if pre:
            raise UsageError("the built-in digits set comes preprocessed (pixel / 16.0); "
                             "calibration preprocessing does not apply to it")
        d = ds.load_digits(text.partition(":")[2] or "train")
        return CalibrationData(d.x, d.source, dict(d.preprocessing), "float32", len(d))
    p = Path(text)
    if p.is_dir():
        return _load_folder(p, pre)
    if p.suffix.lower() not in (".npz", ".npy"):
        raise DataError(f"{p}: unsupported calibration data format {p.suffix or '(no suffix)'!r}",
                        "give a .npz or .npy file, an image folder, or digits[:split]")
    image_only = sorted(set(pre) & set(IMAGE_KEYS))
    if image_only:
        raise UsageError(f"calibration preprocessing {', '.join(image_only)} applies to image folders only",
                         "reshape or resize arrays before saving them")
    stored, label = _read_array(p, key)
    if stored.dtype.kind not in "fiu":
        want = f"; the model expects {expected}" if expected else ""
        raise DataError(f"{label}: calibration samples must be numeric, got dtype {stored.dtype}{want}",
                        "store float32 (or integer pixel) samples")
    if stored.ndim < 2 or stored.shape[0] < 1:
        want = f", the model expects {expected}" if expected else ""
        raise DataError(f"{label}: calibration data must be a batch N x ..., got shape {stored.shape}{want}",
                        "stack the samples along a first axis")
    x = np.ascontiguousarray(stored, dtype=np.float32)
    if not np.isfinite(x).all():
        raise DataError(f"{label}: {int((~np.isfinite(x)).sum())} calibration value(s) are not finite")
    moved = {}
    if layout is not None:
        x, how = layout.adopt(x, label)
        moved = {"layout": how}
    channels = int(x.shape[-1])
    x, declared = ds.normalize(x, pre.get("scale"), pre.get("mean"), pre.get("std"), channels, label)
    preprocessing = {"stored_dtype": str(stored.dtype), **moved, **declared,
                     "order": "x * scale, then (x - mean) / std"}
    return CalibrationData(x, label, preprocessing, str(stored.dtype), int(x.shape[0]))


def _read_array(p: Path, key: Optional[str]) -> tuple:
    try:
        if p.suffix.lower() == ".npy":
            if key is not None:
                raise UsageError(f"{p} is a .npy file holding one array; --calib-key applies to .npz files")
            return np.load(p, allow_pickle=False), f"npy:{p}"
        with np.load(p, allow_pickle=False) as npz:
            names = list(npz.files)
            if key is None:
                key = "x" if "x" in names else (names[0] if len(names) == 1 else None)
            if key is None or key not in names:
                raise DataError(f"{p} has no calibration array {key or 'x'!r} (arrays: {', '.join(names) or 'none'})",
                                "name it with --calib-key")
            return npz[key], f"npz:{p} [{key}]"
    except (DataError, UsageError):
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{p} is not a readable {p.suffix} file ({exc})") from None


def _load_folder(root: Path, pre: dict) -> CalibrationData:
    subdirs = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    kwargs = {k: pre[k] for k in PREPROCESS_KEYS if k in pre}
    if subdirs:
        d = ds.load_image_folder(root, **kwargs)
        layout = "class subfolders (labels unused)"
    else:
        # Flat folder: present it to load_image_folder as one class subfolder.
        with tempfile.TemporaryDirectory(prefix="edgebench-calib-") as tmp:
            link = Path(tmp) / "images"
            link.symlink_to(root.resolve(), target_is_directory=True)
            try:
                d = ds.load_image_folder(tmp, **kwargs)
            except DataError as exc:
                raise DataError(exc.message.replace(str(tmp), str(root)).replace("images/", ""),
                                exc.hint) from None
        layout = "images directly in the folder"
    pre_out = {**d.preprocessing, "layout_on_disk": layout}
    return CalibrationData(d.x, f"folder:{root}", pre_out, "image", len(d))


def select(calib: CalibrationData, count: Optional[int], batch: int) -> tuple:
    """(selected CalibrationData, notes): ``count`` evenly spaced samples, a multiple of ``batch``."""
    n = calib.count
    notes = []
    if count is not None and count < 1:
        raise UsageError(f"--calib-count must be at least 1, got {count}")
    want = n if count is None else count
    if want > n:
        notes.append(f"asked for {want} calibration samples, the data has {n}: using {n}")
        want = n
    usable = (want // batch) * batch
    if usable == 0:
        raise DataError(f"{calib.source}: {want} calibration sample(s) cannot fill one batch of {batch}",
                        "give more samples or a smaller --batch")
    if usable != want:
        notes.append(f"{want - usable} calibration sample(s) left out to fill whole batches of {batch}")
    if usable == n:
        x, how = calib.x, f"all {n}"
    else:
        idx = (np.arange(usable, dtype=np.int64) * n) // usable
        x, how = calib.x[idx], f"{usable} of {n}, evenly spaced (indices i * {n} // {usable})"
    chosen = CalibrationData(np.ascontiguousarray(x, dtype=np.float32), calib.source, calib.preprocessing,
                             calib.stored_dtype, n, how)
    return chosen, notes


def check_against_input(calib: CalibrationData, input_name: str, input_shape: tuple | None, input_dtype: str,
                        batch: int) -> tuple:
    """The fixed input shape (batch, ...) the model is exported with; DataError if the data does not fit."""
    sample = tuple(int(d) for d in calib.x.shape[1:])
    if input_shape is None:  # the model does not declare its input (subclassed Keras model)
        input_shape = (None,) * (len(sample) + 1)
    model_sample = tuple(input_shape[1:]) if len(input_shape) >= 1 else ()
    expected = "x".join("?" if d is None else str(d) for d in model_sample) or "scalar"
    if not input_dtype.startswith("float"):
        raise DataError(f"the model input {input_name!r} is {input_dtype}; integer quantization with "
                        "calibration needs a float input", "quantize the float model this one came from")
    if len(sample) != len(model_sample) or any(d is not None and d != s for d, s in zip(model_sample, sample)):
        got = "x".join(map(str, sample)) or "scalar"
        raise DataError(
            f"calibration samples from {calib.source} have shape {got}, the model input {input_name!r} "
            f"expects N x {expected} (model input shape {_shape_text(input_shape)})",
            "reshape the data, or declare resize/channels for image folders")
    return (int(batch),) + sample


def _shape_text(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"
