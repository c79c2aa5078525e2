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
from edgebench.modelfile import read_model
from edgebench.runtime.inspect import inspect_model

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
    assert sum(layer.macs for layer in r.layers) == macs


def test_kws_per_layer_table():
    r = inspect_model(MLPERF / "kws_ref_model.tflite")
    assert [layer.op for layer in r.layers[:3]] == ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D"]
    assert [layer.macs for layer in r.layers[:3]] == [320_000, 72_000, 512_000]
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
    assert max(layer.live_bytes for layer in r.layers) == peak
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
    assert [(layer.index, layer.op) for layer in r.macs_not_counted] == [(1, "MyFancyOp")]
    d = r.to_dict()
    assert d["macs_complete"] is False
    assert d["macs_not_counted"][0]["op"] == "MyFancyOp"
    # liveness: conv_out is read by ops 1 and 2, so it stays live through step 2
    assert [layer.live_bytes for layer in r.layers] == [400 + 600, 600 + 600, 600 + 600 + 600, 600 + 600, 600 + 84]
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


def test_cli_tables(typer_invoke):
    res = typer_invoke(["inspect", str(MLPERF / "kws_ref_model.tflite"), "--layers", "--tensors"],
                       env={"COLUMNS": "140"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "2,656,768 (2.66 M) per inference" in out
    assert "16,000 B (15.6 KiB) at operator #1 DEPTHWISE_CONV_2D" in out
    assert "DEPTHWISE_CONV_2D" in out and "s=0.584703 zp=83" in out
    assert "axis 0 x64" in out                      # per-channel conv weights in --tensors
    assert "16,000*" in out                         # the peak row of --layers


def test_cli_narrow_terminal_keeps_numbers(typer_invoke):
    res = typer_invoke(["inspect", str(MLPERF / "pretrainedResnet_quant.tflite"), "--layers"],
                       env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "12,501,632" in res.stdout and "2,359,296" in res.stdout


def test_cli_json_is_the_report(typer_invoke):
    path = MLPERF / "pretrainedResnet_quant.tflite"
    res = typer_invoke(["inspect", str(path), "--json"])
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


# --------------------------------------------------------------------------- fit check (--board)

def _tiny(op: str, shape=(1, 4, 4, 3)) -> bytes:
    """A one-operator int8 model: MEAN over H and W, or an element-wise op (GELU: unsupported)."""
    from test_firmware_engine import TinyModel

    g = TinyModel()
    x = g.tensor(shape, scale=0.05, zp=3)
    if op == "MEAN":
        a = g.tensor((2,), "int32", data=np.array([1, 2], np.int32))
        y = g.tensor((1, shape[3]), scale=0.04, zp=-2)
        g.op("MEAN", [x, a], [y], g.options("ReducerOptions", keepDims=False))
    else:
        y = g.tensor(shape, scale=1 / 128, zp=0)
        g.op(op, [x], [y])
    return g.build([x], [y])


def _profile_file(tmp_path, base: str, name: str, **firmware) -> Path:
    """A copy of a builtin board profile under another name with other firmware sizes."""
    import yaml

    from edgebench.boards.registry import builtin_boards_dir

    data = yaml.safe_load((builtin_boards_dir() / f"{base}.yaml").read_text())
    data["name"] = name
    data["firmware"].update(firmware)
    d = tmp_path / "boards"
    d.mkdir(exist_ok=True)
    (d / f"{name}.yaml").write_text(yaml.safe_dump(data))
    return d


def test_fit_on_an_emulated_board_uses_the_firmware_build():
    from edgebench.boards.registry import get_profile
    from edgebench.mcu import convert
    from edgebench.mcu.fit import FIRMWARE_BUILD, check_fit

    model = MLPERF / "kws_ref_model.tflite"
    fit = check_fit(model, get_profile("qemu-m4"))
    blob = convert(model)
    assert fit.ok and not fit.missing and fit.refused is None
    checks = {c.what: c for c in fit.checks}
    assert set(checks) == {"model buffer", "arena", "input buffer", "flash", "RAM"}   # + the AN386 map (datasheet)
    assert (checks["model buffer"].need_bytes, checks["model buffer"].have_bytes) == (blob.flash_bytes, 1048576)
    assert (checks["arena"].need_bytes, checks["arena"].have_bytes) == (blob.peak_arena_bytes, 1048576)
    assert (checks["input buffer"].need_bytes, checks["input buffer"].have_bytes) == (49 * 10, 65536)
    assert all(c.basis == FIRMWARE_BUILD for c in fit.checks if c.what in ("model buffer", "arena", "input buffer"))
    assert checks["flash"].have_bytes == checks["RAM"].have_bytes == 4 << 20


def test_fit_on_a_real_board_is_estimated_from_the_datasheet():
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import DATASHEET, RAM_PLACEMENT, check_fit

    fit = check_fit(MLPERF / "pretrainedResnet_quant.tflite", get_profile("nrf5340-dk"))
    checks = {c.what: c for c in fit.checks}
    # no edgebench port: the model can only arrive by upload into RAM, so only that placement is offered
    assert fit.placements == (RAM_PLACEMENT,)
    assert set(checks) == {"RAM"} and all(c.basis == DATASHEET for c in fit.checks)
    assert checks["RAM"].have_bytes == 512 * 1024
    # the Cortex-M33's DSP kernels keep a static scratch (firmware/core/kernels/dsp/eb_dsp.h)
    assert checks["RAM"].need_bytes == fit.arena_bytes + fit.blob_bytes + 4096
    assert "DSP kernel scratch" in checks["RAM"].note
    assert fit.ok
    assert any(u.startswith("model buffer") for u in fit.unknown)     # no edgebench port: not known


def _big_fc(depth: int = 1334, units: int = 512) -> bytes:
    """One FULLY_CONNECTED layer with depth x units int8 weights (1334 x 512: 667 KiB)."""
    from test_firmware_engine import TinyModel

    rng = np.random.default_rng(7)
    g = TinyModel()
    x = g.tensor((1, depth), scale=0.02, zp=1)
    wt = g.tensor((units, depth), scale=[0.01], zp=[0], data=rng.integers(-127, 128, (units, depth)).astype(np.int8))
    y = g.tensor((1, units), scale=0.5, zp=0)
    g.op("FULLY_CONNECTED", [x, wt, -1], [y], g.options("FullyConnectedOptions"))
    return g.build([x], [y])


def test_fit_a_667_kib_model_fits_nucleo_l4r5zi_from_flash_only(tmp_path):
    """The issue's case: a 667 KiB model fits the board's 2 MB flash but not its 640 KB RAM next to
    its arena; the fit check says which placement fits, and deploy (RAM) says to link it in instead."""
    from edgebench.boards.registry import get_profile
    from edgebench.errors import ModelError
    from edgebench.mcu.fit import FLASH_PLACEMENT, RAM_PLACEMENT, check_fit

    fit = check_fit(_big_fc(), get_profile("nucleo-l4r5zi"))
    assert 667 * 1024 <= fit.blob_bytes < 680 * 1024
    assert fit.fits_in(FLASH_PLACEMENT) and not fit.fits_in(RAM_PLACEMENT) and fit.ok
    assert fit.to_dict()["placements"] == {"ram": False, "flash": True}
    ram = [c for c in fit.checks if c.what == "RAM"]
    assert {c.placement: c.need_bytes for c in ram} == {
        RAM_PLACEMENT: fit.arena_bytes + fit.blob_bytes + 4096, FLASH_PLACEMENT: fit.arena_bytes + 4096}
    fit.raise_if_unfit()                                   # bench/verify: the image may hold it
    with pytest.raises(ModelError) as exc:
        fit.raise_if_unfit(RAM_PLACEMENT)                  # deploy: uploads into RAM
    assert "with its blob in ram" in exc.value.message
    assert "edgebench flash --board nucleo-l4r5zi --model" in exc.value.hint
    path = tmp_path / "big_fc.tflite"
    path.write_bytes(_big_fc())
    proc = _main("inspect", str(path), "--board", "nucleo-l4r5zi")
    assert proc.returncode == 0, proc.stderr
    assert "blob in flash" in proc.stdout and "blob in ram" in proc.stdout
    assert proc.stdout.count("does not fit") == 1


def test_fit_names_missing_operators_by_engine_version(tmp_path):
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import check_fit

    mean = _tiny("MEAN")
    assert check_fit(mean, get_profile("qemu-m7")).ok                  # engine version 2 runs MEAN
    old = get_profile("old-m7", extra_dirs=(_profile_file(tmp_path, "qemu-m7", "old-m7", engine_version=1),))
    fit = check_fit(mean, old)
    assert not fit.ok and [(op, n, k) for op, n, k, _ in fit.missing] == [("MEAN", 1, 0)]
    assert fit.blob_bytes is not None                                  # this edgebench can size it
    gelu = check_fit(_tiny("GELU"), get_profile("qemu-m7"))
    assert [m[0] for m in gelu.missing] == ["GELU"] and gelu.blob_bytes is None
    with pytest.raises(ModelError) as err:
        gelu.raise_if_unfit()
    assert "lacks GELU (layer 0 't1')" in err.value.one_line()


def test_fit_refuses_a_float_model_with_the_converters_reason():
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import check_fit

    fit = check_fit(MLPERF / "kws_ref_model_float32.tflite", get_profile("qemu-m4"))
    assert not fit.ok and "full-INT8 models only" in fit.refused and "edgebench quantize" in fit.hint()


def _main(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from edgebench.cli.app import main; main(sys.argv[1:])",
                           *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "300"})


def test_cli_fit_too_small_arena_exit_2(tmp_path):
    boards = _profile_file(tmp_path, "qemu-m4", "tiny-m4", arena_bytes=8192)
    args = ["inspect", str(MLPERF / "kws_ref_model.tflite"), "--board", "tiny-m4", "--boards-dir", str(boards)]
    proc = _main(*args)
    assert proc.returncode == 2, proc.stderr
    assert "does not fit" in proc.stdout and "NO" in proc.stdout and "firmware build" in proc.stdout
    assert proc.stderr.startswith("error: ") and "arena: needs 16,064 bytes, the board has 8,192" in proc.stderr
    proc = _main(*args, "--json")
    assert proc.returncode == 2
    fit = json.loads(proc.stdout)["fit"]
    arena = next(c for c in fit["checks"] if c["what"] == "arena")
    assert not fit["fits"] and arena == {**arena, "have_bytes": 8192, "fits": False, "basis": "firmware build"}
    proc = _main("inspect", str(MLPERF / "kws_ref_model.tflite"), "--board", "qemu-m4")
    assert proc.returncode == 0 and "verdict: fits" in proc.stdout


def test_deploy_refuses_before_upload(tmp_path):
    model = tmp_path / "gelu.tflite"
    model.write_bytes(_tiny("GELU"))
    proc = _main("deploy", str(model), "--board", "posix-sim")
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "does not fit posix-sim" in proc.stderr
    assert "GELU (layer 0" in proc.stderr and "connecting" not in proc.stderr


@pytest.mark.parametrize("board", ["posix-sim", "qemu-m4", "qemu-m7", "qemu-f405", "nucleo-f446re", "nucleo-f411re",
                                   "nucleo-l4r5zi", "unicorn-l4r5zi"])
def test_profile_sizes_match_the_firmware_build(board):
    """The profile's model buffer, arena, input buffer and engine version are those the port builds with."""
    import re
    import shutil

    from conftest import missing

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import ENGINE_VERSION

    if shutil.which("gcc") is None or shutil.which("make") is None:
        missing("gcc and make are needed to read the firmware configuration")  # fails under CI=true
    fw_dir = Path(__file__).resolve().parents[1] / "firmware"
    p = get_profile(board)
    cflags = subprocess.run(["make", "-s", "-C", str(fw_dir), f"PORT={p.firmware.port}", "print-PORT_CFLAGS"],
                            capture_output=True, text=True, check=True).stdout.split()
    defs = subprocess.run(["gcc", "-E", "-dM", *[f for f in cflags if f.startswith("-D")],
                           "-include", str(fw_dir / "core" / "eb_engine.h"), str(fw_dir / "core" / "eb_config.h")],
                          capture_output=True, text=True, check=True).stdout

    def value(name: str) -> int:
        expr = re.search(rf"#define {name} (.+)", defs).group(1)
        return int(eval(re.sub(r"(\d+)u", r"\1", expr)))   # e.g. (256u * 1024u)

    assert p.firmware.model_buffer_bytes == value("EB_MODEL_MAX_BYTES")
    assert p.firmware.arena_bytes == value("EB_ARENA_BYTES")
    assert p.firmware.input_buffer_bytes == value("EB_INPUT_MAX_BYTES")
    assert p.firmware.engine_version == value("EB_ENGINE_VERSION") == ENGINE_VERSION
