"""Class names of a classifier (level 2a): a labels file, or what the model itself carries.

The index a model gives a class is fixed by its training; an image folder only has names. So the
order that numbers the folders comes, first found, from:

1. ``--labels FILE``: one class name per line, line 1 is class 0 (blank lines and lines starting with
   ``#`` skipped) — :func:`read_labels`;
2. the model: a ``class_names`` list in its provenance sidecar, or a labels file packed into the
   ``.tflite`` (TFLite metadata keeps associated files as a zip archive appended to the model, e.g.
   ``labels.txt``) — :func:`model_labels`;
3. else the folder names in sorted order (said, and stored, as such).
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Optional

from edgebench.errors import DataError

MAX_LABELS_BYTES = 4 * 2 ** 20
SORTED_FOLDERS = "sorted folder names"


def parse_labels(text: str, source: str) -> tuple:
    """Class names, one per line (blank and ``#`` lines skipped); DataError for none or repeated names."""
    names = tuple(line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if not names:
        raise DataError(f"{source} names no class", "one class name per line, class 0 first")
    seen: dict = {}
    for i, n in enumerate(names):
        if n in seen:
            raise DataError(f"{source}: class name {n!r} on lines {seen[n] + 1} and {i + 1} (counting names)",
                            "each class once, in the model's order")
        seen[n] = i
    return names


def read_labels(path) -> tuple:
    """The class names of a labels file (``--labels``): one per line, line 1 is class 0."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"labels file {p} does not exist", "one class name per line, class 0 first")
    raw = p.read_bytes()[:MAX_LABELS_BYTES + 1]
    if len(raw) > MAX_LABELS_BYTES:
        raise DataError(f"labels file {p} is larger than {MAX_LABELS_BYTES // 2 ** 20} MB")
    try:
        return parse_labels(raw.decode("utf-8"), f"labels file {p}")
    except UnicodeDecodeError:
        raise DataError(f"labels file {p} is not UTF-8 text", "one class name per line, class 0 first") from None


def model_labels(model_path, sidecar: Optional[dict] = None) -> Optional[tuple]:
    """``(names, where)`` the model carries (module doc, 2.), or None."""
    names = (sidecar or {}).get("class_names") if isinstance(sidecar, dict) else None
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return tuple(names), "the model's sidecar (class_names)"
    try:
        if not zipfile.is_zipfile(model_path):
            return None
        with zipfile.ZipFile(model_path) as z:
            texts = [i for i in z.infolist() if i.filename.lower().endswith(".txt") and i.file_size <= MAX_LABELS_BYTES]
            pick = [i for i in texts if "label" in i.filename.lower()] or (texts if len(texts) == 1 else [])
            if not pick:
                return None
            text = io.TextIOWrapper(z.open(pick[0]), encoding="utf-8").read()
        return parse_labels(text, f"{pick[0].filename} in {Path(model_path).name}"), \
            f"{pick[0].filename} packed in {Path(model_path).name} (TFLite metadata)"
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, DataError):
        return None


__all__ = ["SORTED_FOLDERS", "model_labels", "parse_labels", "read_labels"]
