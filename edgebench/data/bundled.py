"""Models that ship with edgebench (the digits reference pair, see models/digits/model_card.md)."""
from __future__ import annotations

from pathlib import Path

from edgebench.errors import ModelError


def bundled_models_dir() -> Path:
    """``edgebench/_data/models`` in an installed wheel, else the source checkout's ``models/``."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_data" / "models", here.parent / "models"):
        if (candidate / "digits").is_dir():
            return candidate
    raise ModelError("the bundled models are missing from this installation",
                     "reinstall edgebench, or run from a source checkout that has models/")


def bundled_model(name: str) -> Path:
    """Path of a bundled model, e.g. ``digits_int8`` -> .../digits/digits_int8.tflite."""
    family = name.split("_")[0]
    path = bundled_models_dir() / family / f"{name}.tflite"
    if not path.exists():
        raise ModelError(f"no bundled model {name!r}", "bundled: digits_fp32, digits_int8")
    return path
