"""Labelled data sets for accuracy runs (level 2): .npz files, image folders, built-in digits.

Every loader returns a :class:`Dataset`: ``x`` float32 (N, ...), ``y`` int64 (N,),
the class names when known, where the data came from, the preprocessing that
was applied (always declared by the caller, never guessed from the data), and the
sha256 of ``x``'s bytes (float32, C order), the same hash the model cards record.

Preprocessing order (image folders; .npz files take ``scale``/``mean``/``std`` too)::

    decode -> convert to ``channels`` (1: Pillow "L", 3: "RGB") -> resize (bilinear)
           -> float32 -> x * scale -> (x - mean) / std       layout N x H x W x C

An image whose size differs from the declared ``size`` is an error unless
``resize`` is given. Without ``channels`` the images must all be greyscale
("L") or all RGB; anything else (palette, alpha, 16-bit) needs ``channels``.

Label checks (one clear DataError each): labels missing, not integer class
indices, negative, >= the number of classes (when known), a count different from
the number of inputs, fewer samples than classes.
"""
from __future__ import annotations

import dataclasses
import hashlib
import numbers
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from edgebench.errors import DataError, UsageError

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".pgm", ".ppm", ".pbm")

# The built-in digits set: exactly models/digits/build.py's split and preprocessing.
DIGITS_TEST_SIZE = 0.3
DIGITS_RANDOM_STATE = 0
DIGITS_SPLITS = ("test", "train", "all")


@dataclass(frozen=True)
class Dataset:
    """A labelled data set: ``x`` float32 (N, ...), ``y`` int64 (N,)."""

    x: np.ndarray
    y: np.ndarray
    class_names: Optional[tuple]
    source: str
    preprocessing: dict = field(default_factory=dict)
    sha256: str = ""
    class_order: dict = field(default_factory=dict)   # an image folder: {"by", "map" folder -> index, "sorted"}

    @property
    def num_classes(self) -> Optional[int]:
        return None if self.class_names is None else len(self.class_names)

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def to_dict(self) -> dict:
        """Description for results (no arrays): source, count, shape, classes, preprocessing, hashes."""
        return {
            "source": self.source,
            "count": len(self),
            "shape": [int(d) for d in self.x.shape[1:]],
            "dtype": str(self.x.dtype),
            "num_classes": self.num_classes,
            "class_names": None if self.class_names is None else list(self.class_names),
            "preprocessing": dict(self.preprocessing),
            "sha256": self.sha256,
            "labels_sha256": hashlib.sha256(np.ascontiguousarray(self.y).tobytes()).hexdigest(),
            **({"class_order": dict(self.class_order)} if self.class_order else {}),
        }


def _sha256(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


# ---------------------------------------------------------------- validation

def validate_labels(y, n: int, num_classes: Optional[int] = None, source: str = "data") -> np.ndarray:
    """Labels as int64 (N,), or DataError naming the first problem found."""
    if y is None:
        raise DataError(f"{source} has no labels", hint="accuracy needs a label per sample")
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataError(f"{source}: labels must be class indices of shape (N,), got shape {arr.shape}",
                        hint="for one-hot labels store y.argmax(axis=1)")
    if arr.dtype.kind not in "iu":
        integral = arr.dtype.kind == "f" and np.isfinite(arr).all() and np.array_equal(arr, np.round(arr))
        if not integral:
            raise DataError(f"{source}: labels must be integer class indices, got dtype {arr.dtype}",
                            hint="map class names to indices 0..C-1")
    labels = arr.astype(np.int64)
    if labels.size != n:
        raise DataError(f"{source}: {labels.size} labels for {n} inputs; they must match one to one")
    if n == 0:
        raise DataError(f"{source} is empty")
    if labels.min() < 0:
        raise DataError(f"{source}: {int((labels < 0).sum())} label(s) are negative (smallest {int(labels.min())})")
    if num_classes is not None and labels.max() >= num_classes:
        raise DataError(f"{source}: {int((labels >= num_classes).sum())} label(s) are >= the {num_classes} classes "
                        f"(largest {int(labels.max())})")
    classes = num_classes if num_classes is not None else int(labels.max()) + 1
    if n < classes:
        raise DataError(f"{source} has {n} sample(s), fewer than its {classes} classes",
                        hint="an accuracy test set needs at least one sample per class")
    return labels


def _as_inputs(x, source: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise DataError(f"{source}: inputs must be numeric, got dtype {arr.dtype}")
    if arr.ndim < 2 or arr.shape[0] < 1:
        raise DataError(f"{source}: inputs must be a batch (N, ...) with N >= 1, got shape {arr.shape}")
    out = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(out).all():
        raise DataError(f"{source}: inputs have {int((~np.isfinite(out)).sum())} non-finite value(s) (as float32)")
    return out


def normalize(x: np.ndarray, scale, mean, std, channels: int, source: str) -> tuple[np.ndarray, dict]:
    """Apply ``x * scale`` then ``(x - mean) / std``; return the array and the declared parameters."""
    def per_channel(value, name):
        if value is None:
            return None
        arr = np.asarray(value, dtype=np.float64).reshape(-1)
        if arr.size not in (1, channels) or not np.isfinite(arr).all():
            raise UsageError(f"{name} must be one finite number or one per channel ({channels}), got {value!r}")
        return arr

    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)
                              or not np.isfinite(float(scale)) or scale == 0):
        raise UsageError(f"scale must be a finite non-zero number, got {scale!r}")
    m, s = per_channel(mean, "mean"), per_channel(std, "std")
    if s is not None and np.any(s == 0):
        raise UsageError("std must not be 0")
    out = x.astype(np.float64)
    if scale is not None:
        out = out * float(scale)
    if m is not None:
        out = out - (m if m.size == 1 else m.reshape((1,) * (out.ndim - 1) + (-1,)))
    if s is not None:
        out = out / (s if s.size == 1 else s.reshape((1,) * (out.ndim - 1) + (-1,)))
    declared = {"scale": None if scale is None else float(scale),
                "mean": None if m is None else m.tolist(),
                "std": None if s is None else s.tolist()}
    return np.ascontiguousarray(out, dtype=np.float32), declared


def _class_names(names, source: str) -> Optional[tuple]:
    if names is None:
        return None
    names = tuple(str(n) for n in names)
    if len(set(names)) != len(names):
        raise DataError(f"{source}: class names repeat: {', '.join(names)}")
    return names


# ---------------------------------------------------------------- .npz

def load_npz(path, x_key: str = "x", y_key: str = "y", class_names: Optional[Sequence[str]] = None,
             num_classes: Optional[int] = None, scale=None, mean=None, std=None, layout=None) -> Dataset:
    """Load arrays ``x_key`` (inputs) and ``y_key`` (labels) from a .npz file.

    ``layout`` (:class:`edgebench.data.layout.TensorLayout` of a model converted from ONNX):
    inputs given in the source model's layout (NCHW) are transposed to the model's (NHWC)
    before the per-channel ``mean``/``std``.

    Class names come from ``class_names``, else from a ``class_names`` array in
    the file, else are unknown. ``scale``/``mean``/``std`` as in the module
    docstring; by default the inputs are used as stored (cast to float32).
    """
    p = Path(path)
    source = str(p)
    if not p.is_file():
        raise DataError(f"no data file {source}")
    try:
        loaded = np.load(p, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise DataError(f"{source} is a single .npy array, not a .npz file with inputs and labels",
                            hint="save both with numpy.savez(path, x=..., y=...)")
        with loaded as npz:
            arrays = {key: npz[key] for key in npz.files}
    except DataError:
        raise
    except ValueError as exc:
        if "pickled" in str(exc):
            raise DataError(f"{source} is not a readable .npz file (not a zip archive of arrays)",
                            hint="save it with numpy.savez(path, x=..., y=...)") from None
        if "Object arrays" in str(exc):
            raise DataError(f"{source} holds object arrays (Python objects), which are not loaded",
                            hint="store numeric x and integer y arrays") from None
        raise DataError(f"{source} is not a readable .npz file ({exc})",
                        hint="save it with numpy.savez(path, x=..., y=...)") from None
    except (OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise DataError(f"{source} is not a readable .npz file ({type(exc).__name__}: {exc})",
                        hint="save it with numpy.savez(path, x=..., y=...)") from None
    present = ", ".join(sorted(arrays)) or "none"
    if x_key not in arrays:
        raise DataError(f"{source} has no input array {x_key!r} (arrays: {present})", hint="name it with the x key")
    if y_key not in arrays:
        raise DataError(f"{source} has no labels: no array {y_key!r} (arrays: {present})",
                        hint="name the label array with the y key")
    stored = arrays[x_key]
    x = _as_inputs(stored, source)
    names = class_names if class_names is not None else arrays.get("class_names")
    names = _class_names(None if names is None else list(np.asarray(names).reshape(-1)), source)
    if names is not None and num_classes is not None and len(names) != num_classes:
        raise DataError(f"{source}: {len(names)} class names for {num_classes} classes")
    y = validate_labels(arrays[y_key], x.shape[0], num_classes or (None if names is None else len(names)), source)
    moved = {}
    if layout is not None:
        x, how = layout.adopt(x, source)
        moved = {"layout": how}
    x, declared = normalize(x, scale, mean, std, x.shape[-1], source)
    preprocessing = {"stored_dtype": str(stored.dtype), **moved, **declared,
                     "order": "x * scale, then (x - mean) / std"}
    return Dataset(x=x, y=y, class_names=names, source=f"npz:{source} [{x_key}, {y_key}]",
                   preprocessing=preprocessing, sha256=_sha256(x))


# ---------------------------------------------------------------- image folders

def _pil():
    try:
        from PIL import Image  # optional dependency: its absence is handled here
    except ImportError:
        raise DataError("reading image folders needs Pillow, which is not installed",
                        hint="pip install pillow") from None
    return Image


def _pair(value, name: str) -> Optional[tuple]:
    if value is None:
        return None
    try:
        h, w = (int(v) for v in value)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be (height, width), got {value!r}") from None
    if h < 1 or w < 1:
        raise UsageError(f"{name} must be positive, got {value!r}")
    return h, w


def load_image_folder(root, *, size=None, resize=None, channels: Optional[int] = None, scale=None,
                      mean=None, std=None, class_names: Optional[Sequence[str]] = None,
                      names_from: Optional[str] = None) -> Dataset:
    """Load ``root/<class>/<image>`` (one subfolder per class) into N x H x W x C float32.

    Classes are the subfolder names in sorted order unless ``class_names`` gives
    the order (it must name every subfolder; ``names_from`` says where it came from, e.g. a labels file);
    the mapping is kept in ``Dataset.class_order``; files are read in sorted order.
    ``size=(H, W)`` declares the expected size; ``resize=(H, W)`` resizes every
    image to it; with neither, all images must share one size. ``channels`` 1 or 3;
    ``scale`` (e.g. 1/255), ``mean``/``std`` (scalar or per channel): see the
    module docstring. Hidden files are skipped; any other non-image file is an error.
    """
    Image = _pil()
    base = Path(root)
    source = str(base)
    if not base.is_dir():
        raise DataError(f"no image folder {source}")
    size, resize = _pair(size, "size"), _pair(resize, "resize")
    if size and resize and size != resize:
        raise UsageError(f"size {size} and resize {resize} disagree", hint="give one of them")
    if channels is not None and channels not in (1, 3):
        raise UsageError(f"channels must be 1 or 3, got {channels!r}")
    folders = sorted(d.name for d in base.iterdir() if d.is_dir() and not d.name.startswith("."))
    if not folders:
        raise DataError(f"{source} has no class subfolders", hint="put the images of each class in root/<class>/")
    if class_names is not None:
        names = _class_names(class_names, source) or ()
        if set(names) != set(folders):
            raise DataError(f"{source}: class names {', '.join(names)} do not match the subfolders "
                            f"{', '.join(folders)}")
    else:
        names = tuple(folders)

    mode = {1: "L", 3: "RGB"}.get(channels) if channels is not None else None
    target = resize or size
    images, labels = [], []
    for label, name in enumerate(names):
        for f in sorted((base / name).iterdir()):
            if f.name.startswith(".") or f.is_dir():
                continue
            rel = f"{name}/{f.name}"
            if f.suffix.lower() not in IMAGE_EXTENSIONS:
                raise DataError(f"{source}: {rel} is not an image file ({', '.join(IMAGE_EXTENSIONS)})")
            try:
                with Image.open(f) as img:
                    img.load()
                    if mode is None and img.mode not in ("L", "RGB"):
                        raise DataError(f"{source}: {rel} has mode {img.mode}",
                                        hint="declare channels=1 or channels=3 to convert it")
                    im = img.convert(mode) if mode and img.mode != mode else img.copy()
            except DataError:
                raise
            except Exception as exc:  # Pillow raises many types for undecodable files
                raise DataError(f"{source}: cannot decode {rel} ({exc})") from None
            w, h = im.size
            if resize is not None:
                if (h, w) != resize:
                    im = im.resize((resize[1], resize[0]), Image.BILINEAR)
            elif target is None:
                target = (h, w)
            elif (h, w) != target:
                what = "the declared size" if size else "the size of the first image"
                raise DataError(f"{source}: {rel} is {h}x{w}, {what} is {target[0]}x{target[1]}",
                                hint=f"pass resize=({target[0]}, {target[1]}) to resize")
            arr = np.asarray(im, dtype=np.float32)
            images.append(arr[..., None] if arr.ndim == 2 else arr)
            labels.append(label)
    if not images:
        raise DataError(f"{source} has no images in its class subfolders")
    shapes = {a.shape[-1] for a in images}
    if len(shapes) > 1:
        raise DataError(f"{source} mixes greyscale and colour images", hint="declare channels=1 or channels=3")
    x = np.stack(images)
    y = validate_labels(np.asarray(labels, dtype=np.int64), x.shape[0], len(names), source)
    x, declared = normalize(x, scale, mean, std, x.shape[-1], source)
    preprocessing = {
        "decode": "Pillow", "channels": int(x.shape[-1]),
        "mode": mode or ("L" if x.shape[-1] == 1 else "RGB"),
        "size": [int(x.shape[1]), int(x.shape[2])],
        "resize": None if resize is None else list(resize),
        "resample": "bilinear" if resize is not None else None,
        **declared,
        "order": "decode, convert, resize, x * scale, then (x - mean) / std",
        "layout": "NHWC",
    }
    order = {"by": names_from or "given class names" if class_names is not None else "sorted folder names",
             "map": {name: i for i, name in enumerate(names)}, "sorted": list(folders)}
    return Dataset(x=x, y=y, class_names=names, source=f"folder:{source}",
                   preprocessing=preprocessing, sha256=_sha256(x), class_order=order)


# ---------------------------------------------------------------- built-in digits

def load_digits(split: str = "test") -> Dataset:
    """scikit-learn's digits with models/digits/build.py's split and preprocessing.

    ``pixel / 16.0`` (computed in float64, stored float32) in N x 8 x 8 x 1, split by
    ``train_test_split(test_size=0.3, random_state=0, stratify=y)``: ``"train"``
    1,257, ``"test"`` 540 images; ``"all"`` 1,797 in the original order.
    """
    if split not in DIGITS_SPLITS:
        raise UsageError(f"unknown digits split {split!r}", hint=f"choose one of {', '.join(DIGITS_SPLITS)}")
    try:
        from sklearn.datasets import load_digits as sk_load_digits  # optional dependency: its absence is handled here
        from sklearn.model_selection import train_test_split  # optional dependency: its absence is handled here
    except ImportError:
        raise DataError("the built-in digits set needs scikit-learn", hint="pip install 'edgebench[digits]' (scikit-learn)") from None
    digits = sk_load_digits()
    x = (digits.images.astype(np.float64) / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    how = "all 1797 images in load_digits order"
    if split != "all":
        x_train, x_test, y_train, y_test = train_test_split(
            x, y, test_size=DIGITS_TEST_SIZE, random_state=DIGITS_RANDOM_STATE, stratify=y)
        x, y = (x_train, y_train) if split == "train" else (x_test, y_test)
        how = (f"{split} split of train_test_split(test_size={DIGITS_TEST_SIZE}, "
               f"random_state={DIGITS_RANDOM_STATE}, stratify=y)")
    x = np.ascontiguousarray(x)
    names = tuple(str(i) for i in range(10))
    y = validate_labels(y, x.shape[0], len(names), "digits")
    preprocessing = {"scale": 1.0 / 16.0, "mean": None, "std": None, "channels": 1, "size": [8, 8],
                     "layout": "NHWC", "order": "pixel (0..16) / 16.0 in float64, then float32",
                     "split": how}
    return Dataset(x=x, y=y, class_names=names, source=f"builtin:digits/{split} (sklearn.datasets.load_digits)",
                   preprocessing=preprocessing, sha256=_sha256(x))


def load_dataset(spec, **options) -> Dataset:
    """Load by description: ``digits`` / ``digits:<split>``, a ``.npz`` file, or an image folder.

    ``options`` go to the matching loader (:func:`load_digits`, :func:`load_npz`,
    :func:`load_image_folder`). ``layout`` (a model converted from ONNX): see :func:`load_npz`;
    decoded images and the digits set are H x W x C already and are checked against it.
    """
    layout = options.pop("layout", None)
    text = str(spec)
    if text == "digits" or text.startswith("digits:"):
        return _images_in(load_digits(text.partition(":")[2] or options.pop("split", "test"), **options), layout)
    p = Path(text)
    if p.is_dir():
        return _images_in(load_image_folder(p, **options), layout)
    if p.suffix.lower() == ".npz":
        return load_npz(p, layout=layout, **options)
    if not p.exists():
        raise DataError(f"no data set {text}", hint="give a .npz file, an image folder, or 'digits'")
    raise DataError(f"{text} is neither a .npz file nor an image folder")


def _images_in(d: Dataset, layout) -> Dataset:
    if layout is None:
        return d

    x, how = layout.adopt(d.x, d.source, images=True)
    return dataclasses.replace(d, x=x, preprocessing={**d.preprocessing, "layout": how}, sha256=_sha256(x))


# ---------------------------------------------------------------- against a model

def check_against_model(dataset: Dataset, input_shape, num_classes: Optional[int] = None) -> None:
    """DataError unless ``dataset`` fits a model's input shape and class count.

    ``input_shape`` may carry a batch axis (``(1, 8, 8, 1)``, any batch size or
    None/-1) or not (``(8, 8, 1)``); None or -1 elsewhere matches any size.
    """
    sample = tuple(int(d) for d in dataset.x.shape[1:])
    shape = tuple(input_shape)

    def fits(model_dims) -> bool:
        return len(model_dims) == len(sample) and all(
            d is None or int(d) < 0 or int(d) == s for d, s in zip(model_dims, sample))

    if not (fits(shape) or (len(shape) == len(sample) + 1 and fits(shape[1:]))):
        raise DataError(
            f"data samples have shape {'x'.join(map(str, sample))}, the model expects "
            f"{'x'.join('?' if d is None or int(d) < 0 else str(d) for d in shape)}",
            hint="declare preprocessing (resize, channels) or reshape the data to the model's input")
    if num_classes is not None:
        y = dataset.y
        if int(y.max()) >= num_classes:
            raise DataError(f"{int((y >= num_classes).sum())} label(s) are >= the model's {num_classes} outputs "
                            f"(largest label {int(y.max())})")
        if dataset.num_classes is not None and dataset.num_classes != num_classes:
            raise DataError(f"the data set has {dataset.num_classes} classes, the model {num_classes} outputs")
        if len(dataset) < num_classes:
            raise DataError(f"the data set has {len(dataset)} samples, fewer than the model's {num_classes} classes")
