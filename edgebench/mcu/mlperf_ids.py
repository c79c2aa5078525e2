"""MLPerf Tiny model ids and the reference firmwares' input and result conventions (level 2).

The MLCommons runner (``benchmark/runner`` of mlcommons/tiny) reads ``profile%``'s
``m-model-[ID]`` and looks ID up in its test script (``tests.yaml``): only ``kws01``,
``ic01``, ``vww01``, ``ad01`` (and ``sww01``, streaming, not a ``db``/``infer`` model)
have a script, any other id stops it before the first command. The reference firmwares
read the ``db`` buffer differently per benchmark, and edgebench's firmware can do the
same on the device (``eb-model ID input=... results=...``, firmware/PROTOCOL.md):

* ``kws01`` keyword spotting: the int8 input tensor as is; the 12 dequantized scores.
* ``ic01`` image classification, ``vww01`` person detection: uint8 pixels, the device
  subtracts 128 (``uint8-offset``); the dequantized scores.
* ``ad01`` anomaly detection: float32 features (640 of them, little-endian), quantized on
  the device; one score, the mean squared error between input and output (``mse``).

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edgebench.errors import UsageError

INPUT_ENCODINGS = ("int8", "uint8-offset", "float32")
RESULTS_MODES = ("outputs", "mse")
_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,16}")


@dataclass(frozen=True)
class RunnerModel:
    """One benchmark of the runner: its id, task, input shape and the reference firmware's conventions."""

    model_id: str
    task: str
    input_shape: tuple
    input_encoding: str
    results: str
    runner_infer: str       # the runner's stock performance step (tests_performance.yaml)

    def to_dict(self) -> dict:
        return {"model_id": self.model_id, "task": self.task, "input_shape": list(self.input_shape),
                "input_encoding": self.input_encoding, "results": self.results,
                "runner_infer": self.runner_infer}


RUNNER_MODELS = {m.model_id: m for m in (
    RunnerModel("kws01", "keyword spotting (DS-CNN)", (1, 49, 10, 1), "int8", "outputs", "infer 70 10"),
    RunnerModel("ic01", "image classification (ResNet-8)", (1, 32, 32, 3), "uint8-offset", "outputs", "infer 20 5"),
    RunnerModel("vww01", "person detection (MobileNetV1 96x96)", (1, 96, 96, 3), "uint8-offset", "outputs",
                "infer 20 5"),
    RunnerModel("ad01", "anomaly detection (dense autoencoder)", (1, 640), "float32", "mse", "infer 1500 10"),
)}


def check_model_id(model_id: str) -> str:
    """``model_id`` if the firmware accepts it (1-16 of A-Z a-z 0-9 _ - .), else a UsageError."""
    if not isinstance(model_id, str) or not _ID_RE.fullmatch(model_id):
        raise UsageError(f"model id {model_id!r} is not 1 to 16 characters of A-Z a-z 0-9 . _ -",
                         f"use the MLCommons runner's id ({', '.join(RUNNER_MODELS)}) or a short token")
    return model_id


def check_choice(value: str, choices: tuple, what: str) -> str:
    if value not in choices:
        raise UsageError(f"unknown {what} {value!r}", f"use one of {', '.join(choices)}")
    return value


def runner_model_for(model) -> RunnerModel | None:
    """The MLPerf Tiny benchmark a model is recognisably one of: by its input shape."""
    try:
        shape = tuple(int(d) for d in model.inputs[0].shape)
    except (AttributeError, IndexError, TypeError, ValueError):
        return None
    return next((m for m in RUNNER_MODELS.values() if m.input_shape == shape), None)


def default_model_id(model) -> str:
    """The runner's id when the model is recognisably an MLPerf Tiny one, else its name made a token."""
    ref = runner_model_for(model)
    if ref is not None:
        return ref.model_id
    return (re.sub(r"[^A-Za-z0-9_.-]", "_", str(getattr(model, "name", "")))[:16]) or "model"


def runner_note(model_id: str, model, input_encoding: str, results: str) -> str | None:
    """What the MLCommons runner would trip over with these settings, in one sentence (None: nothing)."""
    if model_id not in RUNNER_MODELS:
        return (f"model id {model_id!r} is not one the MLCommons runner has a script for "
                f"({', '.join(RUNNER_MODELS)}): it stops at once; give --model-id")
    ref = RUNNER_MODELS[model_id]
    diffs = [f"{flag} {want} (deployed: {v})" for flag, v, want in
             (("--input-encoding", input_encoding, ref.input_encoding), ("--results", results, ref.results))
             if v != want]
    if diffs:
        return (f"the MLCommons runner sends {model_id} data the way its reference firmware reads it: use "
                + ", ".join(diffs))
    return None


__all__ = ["INPUT_ENCODINGS", "RESULTS_MODES", "RUNNER_MODELS", "RunnerModel", "check_model_id", "check_choice",
           "runner_model_for", "default_model_id", "runner_note"]
