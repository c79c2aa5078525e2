"""`edgebench inspect`: MACs, parameters, quantization and peak activation memory of .tflite files.

The MAC totals below are worked out by hand from the layer shapes (printed by the
tool's own layer table and checked against the files with Netron-style dumps), not
copied from the MLPerf Tiny papers. TFLite semantics:

* CONV_2D:            out_h * out_w * out_c * k_h * k_w * (in_c / groups)
* DEPTHWISE_CONV_2D:  out_h * out_w * out_c * k_h * k_w
* FULLY_CONNECTED:    batch * out * in
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_DIR

from edgebench.errors import ModelError
from edgebench.runtime.inspect import inspect_model
from edgebench.runtime.tflite_file import read_model

MLPERF = MLPERF_DIR
DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"

# DS-CNN (KWS), input 1x49x10x1:
#   conv 10x4 stride 2 -> 25x5x64:  25*5*64 * 10*4*1    =   320,000
#   4 x depthwise 3x3 on 25x5x64:   25*5*64 * 3*3       =    72,000 each ->   288,000
#   4 x pointwise 1x1 64->64:       25*5*64 * 64        =   512,000 each -> 2,048,000
#   fully connected 64->12:         64*12               =       768
#   total                                               = 2,656,768  (~2.66 M; the papers' "2.7 M")
KWS_MACS = 320_000 + 4 * 72_000 + 4 * 512_000 + 768
# ResNet-8 (image classification), input 1x32x32x3:
#   conv 3x3 3->16 @32x32:       32*32*16 * 9*3   =   442,368
#   2 x conv 3x3 16->16 @32x32:  32*32*16 * 9*16  = 2,359,296 each
#   conv 3x3 s2 16->32 @16x16:   16*16*32 * 9*16  = 1,179,648
#   conv 3x3 32->32 @16x16:      16*16*32 * 9*32  = 2,359,296
#   shortcut 1x1 s2 16->32:      16*16*32 * 16    =   131,072
#   conv 3x3 s2 32->64 @8x8:     8*8*64 * 9*32    = 1,179,648
#   conv 3x3 64->64 @8x8:        8*8*64 * 9*64    = 2,359,296
#   shortcut 1x1 s2 32->64:      8*8*64 * 32      =   131,072
#   fully connected 64->10:                       =       640
#   total                                         = 12,501,632  (~12.5 M, as published)
RESNET_MACS = 442_368 + 2 * 2_359_296 + 1_179_648 + 2_359_296 + 131_072 + 1_179_648 + 2_359_296 + 131_072 + 640
# digits CNN, input 1x8x8x1: conv 3x3 1->16 same (8*8*16*9 = 9,216), conv 3x3 16->32 valid
# (6*6*32*9*16 = 165,888), fully connected 288->10 (2,880): 177,984
DIGITS_MACS = 9_216 + 165_888 + 2_880


@pytest.mark.parametrize("name,macs", [
    ("kws_ref_model.tflite", KWS_MACS), ("kws_ref_model_float32.tflite", KWS_MACS),
    ("pretrainedResnet.tflite", RESNET_MACS), ("pretrainedResnet_quant.tflite", RESNET_MACS),
])
def test_mlperf_tiny_macs_match_hand_count(name, macs):
    r = inspect_model(MLPERF / name)
    assert r.macs == macs
    assert r.macs_not_counted == ()
    assert sum(l.macs for l in r.layers) == macs


def test_kws_per_layer_table():
    r = inspect_model(MLPERF / "kws_ref_model.tflite")
    assert [l.op for l in r.layers[:3]] == ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D"]
    assert [l.macs for l in r.layers[:3]] == [320_000, 72_000, 512_000]
    assert r.layers[0].output_shapes == ((1, 25, 5, 64),)
    assert r.layers[11].op == "FULLY_CONNECTED" and r.layers[11].macs == 768
    assert (r.layers[9].op, r.layers[9].macs, r.layers[9].note) == ("AVERAGE_POOL_2D", 0, "no MACs")
    # params of the first conv: 64*10*4*1 int8 weights + 64 int32 biases
    assert (r.layers[0].params, r.layers[0].param_bytes) == (2_624, 2_560 + 64 * 4)
    assert r.operators == read_model(MLPERF / "kws_ref_model.tflite").operators
    assert any("batch dimension is dynamic" in n for n in r.notes)


def test_parameters_count_each_constant_once():
    # ResNet-8: weights + biases = 77,706, plus the 2-element shape constant of RESHAPE.
    fp32 = inspect_model(MLPERF / "pretrainedResnet.tflite")
    int8 = inspect_model(MLPERF / "pretrainedResnet_quant.tflite")
    assert fp32.params == int8.params == 77_706 + 2
    assert fp32.param_bytes == 4 * fp32.params
    # INT8: int8 weights, int32 biases (16+16+16+32+32+32+64+64+64+10 = 346 of them), int32 shape
    assert int8.param_bytes == (77_706 - 346) + 4 * 346 + 8


def test_quantization_of_every_tensor():
    r = inspect_model(MLPERF / "kws_ref_model.tflite")
    inp = r.inputs[0]
    assert inp.dtype == "int8" and inp.shape == (1, 49, 10, 1)
    assert inp.quant_dict() == {"scale": pytest.approx(0.5847029), "zero_point": 83, "channels": 1,
                                "quantized_dimension": None}
    conv_w = r.tensors[r.layers[0].inputs[1]]
    assert conv_w.constant and conv_w.per_channel
    q = conv_w.quant_dict()
    assert q["channels"] == 64 and q["quantized_dimension"] == 0 and len(q["scale"]) == 64
    assert len(r.tensors) == 35 and all(t.dtype in ("int8", "int32") for t in r.tensors)
    fp = inspect_model(MLPERF / "pretrainedResnet.tflite")
    assert all(t.quant_dict() is None for t in fp.tensors)


# Peak activations, by hand:
#   KWS INT8: the widest step holds two 25x5x64 int8 tensors (8,000 B each) = 16,000 B
#   (step 0 holds the 490 B input and the first 8,000 B output); FP32: 4x = 64,000 B.
#   ResNet-8 INT8: at the second 3x3 conv of the first block, the block input (kept for the
#   residual ADD), its input and its output are live: 3 x 32*32*16 = 49,152 B; FP32 196,608 B.
#   digits INT8: conv2 holds 8x8x16 (1,024 B) + 6x6x32 (1,152 B) = 2,176 B; FP32 8,704 B.
@pytest.mark.parametrize("path,peak,step", [
    (MLPERF / "kws_ref_model.tflite", 16_000, 1),
    (MLPERF / "kws_ref_model_float32.tflite", 64_000, 1),
    (MLPERF / "pretrainedResnet_quant.tflite", 49_152, 2),
    (MLPERF / "pretrainedResnet.tflite", 196_608, 2),
    (DIGITS / "digits_int8.tflite", 2_176, 1),
    (DIGITS / "digits_fp32.tflite", 8_704, 1),
])
def test_peak_activation_memory(path, peak, step):
    r = inspect_model(path)
    assert r.peak_activation_bytes == peak
    assert r.peak_op_index == step
    assert max(l.live_bytes for l in r.layers) == peak
    assert r.activation_bytes_no_reuse >= peak


def test_digits_models():
    for name in ("digits_fp32.tflite", "digits_int8.tflite"):
        r = inspect_model(DIGITS / name)
        assert r.macs == DIGITS_MACS
        assert r.params == 16 * 9 + 16 + 32 * 9 * 16 + 32 + 288 * 10 + 10 + 2
        assert r.layers[0].live_bytes == r.tensors[r.input_indices[0]].bytes + r.tensors[r.layers[0].outputs[0]].bytes


# --------------------------------------------------------------------------- synthetic graphs


def _build(tensors, ops, inputs, outputs) -> bytes:
    """A tiny .tflite: tensors = [(name, shape, dtype, data or None)], ops = [(op, ins, outs, options)]."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    types = {"float32": s.TensorType.FLOAT32, "int8": s.TensorType.INT8, "int32": s.TensorType.INT32}
    m = s.ModelT()
    m.version = 3
    m.buffers = [s.BufferT()]
    sg = s.SubGraphT()
    sg.tensors = []
    for name, shape, dtype, data in tensors:
        t = s.TensorT()
        t.name, t.shape, t.type, t.buffer = name, list(shape), types[dtype], 0
        if data is not None:
            b = s.BufferT()
            b.data = np.frombuffer(np.asarray(data, dtype=dtype).tobytes(), dtype=np.uint8)
            m.buffers.append(b)
            t.buffer = len(m.buffers) - 1
        sg.tensors.append(t)
    m.operatorCodes, sg.operators = [], []
    for op, ins, outs, opts in ops:
        c = s.OperatorCodeT()
        if op.startswith("custom:"):
            c.builtinCode = c.deprecatedBuiltinCode = s.BuiltinOperator.CUSTOM
            c.customCode = op.split(":", 1)[1]
        else:
            c.builtinCode = getattr(s.BuiltinOperator, op)
            c.deprecatedBuiltinCode = min(c.builtinCode, 127)
        m.operatorCodes.append(c)
        o = s.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = len(m.operatorCodes) - 1, list(ins), list(outs)
        if opts is not None:
            o.builtinOptionsType, o.builtinOptions = opts
        sg.operators.append(o)
    sg.inputs, sg.outputs = list(inputs), list(outputs)
    m.subgraphs = [sg]
    b = flatbuffers.Builder(0)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_grouped_conv_batched_fc_custom_op_and_liveness(tmp_path):
    from ai_edge_litert import schema_py_generated as s

    conv = s.Conv2DOptionsT()
    w = np.zeros((6, 3, 3, 2), np.float32)        # 6 filters over 2 of the 4 input channels: 2 groups
    tensors = [
        ("in", (1, 5, 5, 4), "float32", None),         # 0: 400 B
        ("w", w.shape, "float32", w),                   # 1
        ("conv_out", (1, 5, 5, 6), "float32", None),    # 2: 600 B
        ("custom_out", (1, 5, 5, 6), "float32", None),  # 3: 600 B
        ("sum", (1, 5, 5, 6), "float32", None),         # 4: 600 B
        ("flat", (3, 50), "float32", None),             # 5: 600 B
        ("shape", (2,), "int32", [3, 50]),              # 6
        ("fc_w", (7, 50), "float32", np.zeros((7, 50), np.float32)),  # 7
        ("fc_out", (3, 7), "float32", None),            # 8: 84 B
    ]
    ops = [
        ("CONV_2D", [0, 1, -1], [2], (s.BuiltinOptions.Conv2DOptions, conv)),
        ("custom:MyFancyOp", [2], [3], None),
        ("ADD", [2, 3], [4], None),
        ("RESHAPE", [4, 6], [5], None),
        ("FULLY_CONNECTED", [5, 7, -1], [8], None),
    ]
    p = tmp_path / "synthetic.tflite"
    p.write_bytes(_build(tensors, ops, [0], [8]))
    r = inspect_model(p)
    assert r.layers[0].macs == 5 * 5 * 6 * 3 * 3 * 2      # in_c / groups = 2
    assert r.layers[1].macs is None and "MyFancyOp" in r.layers[1].note
    assert r.layers[4].macs == 3 * 7 * 50                  # batch 3
    assert r.macs == 5 * 5 * 6 * 3 * 3 * 2 + 3 * 7 * 50
    assert [(l.index, l.op) for l in r.macs_not_counted] == [(1, "MyFancyOp")]
    d = r.to_dict()
    assert d["macs_complete"] is False
    assert d["macs_not_counted"][0]["op"] == "MyFancyOp"
    # liveness: conv_out is read by ops 1 and 2, so it stays live through step 2
    assert [l.live_bytes for l in r.layers] == [400 + 600, 600 + 600, 600 + 600 + 600, 600 + 600, 600 + 84]
    assert r.peak_activation_bytes == 1_800 and r.peak_op_index == 2
    assert set(r.peak_tensors) == {"conv_out", "custom_out", "sum"}
    assert r.params == 6 * 9 * 2 + 2 + 7 * 50
    assert r.activation_bytes_no_reuse == 400 + 4 * 600 + 84


def test_bad_models_raise_model_error(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        inspect_model(tmp_path / "nope.tflite")
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ModelError, match="not a TFLite model"):
        inspect_model(bad)


# --------------------------------------------------------------------------- CLI


@pytest.fixture()
def runner(monkeypatch):
    from typer.testing import CliRunner

    import edgebench.cli.output as output

    monkeypatch.setattr(output, "_consoles", {})
    return CliRunner()


def _invoke(runner, args, **kw):
    from edgebench.cli.app import app

    return runner.invoke(app, args, **kw)


def test_cli_tables(runner):
    res = _invoke(runner, ["inspect", str(MLPERF / "kws_ref_model.tflite"), "--layers", "--tensors"],
                  env={"COLUMNS": "140"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "2,656,768 (2.66 M) per inference" in out
    assert "16,000 B (15.6 KiB) at operator #1 DEPTHWISE_CONV_2D" in out
    assert "DEPTHWISE_CONV_2D" in out and "s=0.584703 zp=83" in out
    assert "axis 0 x64" in out                      # per-channel conv weights in --tensors
    assert "16,000*" in out                         # the peak row of --layers


def test_cli_narrow_terminal_keeps_numbers(runner):
    res = _invoke(runner, ["inspect", str(MLPERF / "pretrainedResnet_quant.tflite"), "--layers"],
                  env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "12,501,632" in res.stdout and "2,359,296" in res.stdout


def test_cli_json_is_the_report(runner):
    path = MLPERF / "pretrainedResnet_quant.tflite"
    res = _invoke(runner, ["inspect", str(path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data == json.loads(json.dumps(inspect_model(path).to_dict()))
    assert data["macs"] == RESNET_MACS and data["peak_activation_bytes"] == 49_152
    assert data["model"]["precision"] == "int8"
    assert data["kinds"]["peak_activation_bytes"].startswith("estimated")


def test_cli_bad_model_one_line_exit_1(tmp_path):
    bad = tmp_path / "model.tflite"
    bad.write_bytes(b"PK\x03\x04 a zip, not a model")
    proc = subprocess.run([sys.executable, "-c", "import sys; from edgebench.cli.app import main; main(sys.argv[1:])",
                           "inspect", str(bad)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("error: ") and "not a TFLite model" in proc.stderr
