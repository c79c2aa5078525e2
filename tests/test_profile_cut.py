"""Cutting a model into single-operator models (edgebench.runtime.cut): each cut operator, run
alone with LiteRT's reference kernels on the values it sees inside the model, gives the bytes the
whole model gives for that operator; its tensors keep their quantization."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import MLPERF_DIR, require_file  # noqa: E402

from edgebench.errors import ModelError  # noqa: E402
from edgebench.runtime.cut import cut_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _whole(path):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = np.random.default_rng(0).integers(-128, 128, size=d["shape"]).astype(d["dtype"])
    it.set_tensor(d["index"], x)
    it.invoke()
    return it


def _check_every_operator(path) -> list:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    cm = cut_model(path)
    whole = _whole(path)
    notes = []
    for k in range(len(cm)):
        first = cm.cut(k)
        assert first.ok, first.reason
        cut = cm.cut(k, {i: whole.get_tensor(i) for i in first.frozen_inputs})
        it = Interpreter(model_content=cut.data, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        ins = it.get_input_details()
        assert len(ins) == 1, "a cut model has one input (the agent drives single-input models)"
        original = {d["index"]: d for d in whole.get_tensor_details()}
        src = original[cut.input_tensor]
        assert ins[0]["quantization"] == src["quantization"] and list(ins[0]["shape"]) == list(src["shape"])
        it.set_tensor(ins[0]["index"], whole.get_tensor(cut.input_tensor))
        it.invoke()
        for out, t in zip(it.get_output_details(), cut.output_tensors):
            assert out["quantization"] == original[t]["quantization"]
            assert np.array_equal(it.get_tensor(out["index"]), whole.get_tensor(t)), (k, cut.op)
        notes += list(cut.notes)
    return notes


def test_every_operator_of_the_digits_model_alone_gives_the_models_bytes():
    assert _check_every_operator(DIGITS_INT8) == []


def test_resnet8_residual_adds_keep_their_second_operand_as_a_constant():
    path = require_file(MLPERF_DIR / "pretrainedResnet_quant.tflite")
    notes = _check_every_operator(path)
    assert len([n for n in notes if "stored as constants" in n]) == 3     # the three residual ADDs


def test_without_values_a_further_input_holds_its_zero_point_and_says_so():
    path = require_file(MLPERF_DIR / "pretrainedResnet_quant.tflite")
    cm = cut_model(path)
    add = next(k for k in range(len(cm)) if cm.op_name(k) == "ADD")
    cut = cm.cut(add)
    assert cut.ok and len(cut.frozen_inputs) == 1
    assert any("zero point" in n for n in cut.notes)


def test_a_float_model_cuts_too():
    path = require_file(MLPERF_DIR / "kws_ref_model_float32.tflite")
    assert _check_every_operator(path) == []


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        cut_model(tmp_path / "missing.tflite")
    with pytest.raises(ModelError, match="is a directory"):      # read as inspect reads a model
        cut_model(tmp_path)
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ModelError, match="not a TFLite model"):
        cut_model(bad)
    with pytest.raises(ModelError, match="cannot be read"):       # bytes no reader verified
        cut_model(b"\x00" * 64)
    with pytest.raises(ModelError, match="no operator 99"):
        cut_model(DIGITS_INT8).cut(99)
