"""The host-side model blob converter (edgebench.mcu): format, determinism,
footprint report, arena plan and errors. The engine that runs the blobs is
tested in test_firmware_engine.py."""
from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_DIR
from test_firmware_engine import TinyModel

from edgebench.errors import ModelError
from edgebench.mcu import FORMAT_VERSION, SUPPORTED_OPS, convert, parse
from edgebench.mcu.blob_plan import Buffer, live_lower_bound, plan
from edgebench.mcu.blob_quant import activation_range, add_params, quantize_multiplier, softmax_params

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits" / "digits_int8.tflite"
DIGITS_FP32 = ROOT / "models" / "digits" / "digits_fp32.tflite"
MLPERF = MLPERF_DIR


def _models():
    out = [DIGITS]
    for name in ("kws_ref_model.tflite", "pretrainedResnet_quant.tflite"):
        if (MLPERF / name).is_file():
            out.append(MLPERF / name)
    return out


# ---- format ------------------------------------------------------------------------

def test_header_and_crc_round_trip():
    blob = convert(DIGITS)
    data = blob.data
    magic, version, header_bytes, total, crc = struct.unpack_from("<4sHHII", data, 0)
    assert (magic, version, header_bytes, total) == (b"EBNN", FORMAT_VERSION, 64, len(data))
    assert crc == zlib.crc32(data[16:]) == blob.crc32
    info = parse(data)
    h = info["header"]
    assert h["n_layers"] == 6 and h["arena_bytes"] == blob.peak_arena_bytes
    assert h["tensors_offset"] == 64 and h["tensors_offset"] % 4 == 0
    assert h["data_offset"] % 4 == 0 and h["data_offset"] + h["data_bytes"] == len(data)
    assert h["source_sha256_prefix"] == blob.source_sha256[:32]
    assert [layer["op"] for layer in info["layers"]] == [
        "CONV_2D", "CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"]
    t_in, t_out = info["tensors"][h["input"]], info["tensors"][h["output"]]
    assert t_in["shape"] == [1, 8, 8, 1] and t_in["zero_point"] == -128
    assert t_out["shape"] == [1, 10] and t_out["scale"] == pytest.approx(1 / 256)
    for t in info["tensors"]:
        assert t["offset"] % 4 == 0
        if t["constant"]:
            assert h["data_offset"] <= t["offset"] and t["offset"] + t["bytes"] <= len(data)
        else:
            assert t["offset"] + t["bytes"] <= h["arena_bytes"]
    conv1 = info["layers"][0]
    assert conv1["pad"] == [1, 1] and conv1["filter"] == [3, 3] and conv1["channels"] == 16
    assert info["layers"][1]["pad"] == [0, 0]        # VALID
    assert info["layers"][1]["scratch_bytes"] == 3 * 3 * 16
    # RESHAPE shares its input's bytes
    reshape = info["layers"][3]
    assert info["tensors"][reshape["inputs"][0]]["offset"] == info["tensors"][reshape["output"]]["offset"]


def test_requantization_parameters_in_the_blob():
    info = parse(convert(DIGITS).data)
    data = convert(DIGITS).data
    conv = info["layers"][0]
    n = conv["channels"]
    arr = np.frombuffer(data, "<i4", count=3 * n, offset=conv["chan_offset"]).reshape(3, n)
    mult, shift = arr[1], arr[2]
    assert ((mult >= 1 << 30) & (mult <= 2**31 - 1)).all() and ((shift >= -31) & (shift <= 30)).all()
    assert conv["params"][:2] == [128, -128]          # -input zero point, output zero point
    fc = info["layers"][4]
    words = np.frombuffer(data, "<u4", count=3 * 10, offset=fc["chan_offset"]).reshape(3, 10)
    factors = (words[1].astype(np.uint64) | (words[2].astype(np.uint64) << np.uint64(32))).view("<f8")
    assert ((factors > 1e-4) & (factors < 1)).all()   # binary64 rescale factors
    smx = info["layers"][5]
    assert smx["params"][:3] == softmax_params(1.0, np.float32(0.19836153090000153))


def test_quantize_multiplier_semantics():
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(0.25) == (1 << 30, -1)
    assert quantize_multiplier(2.0 ** -40) == (0, 0)            # flushed: shift < -31
    m, s = quantize_multiplier(1 - 2.0 ** -40)                   # rounds up to 1.0 -> halved
    assert (m, s) == (1 << 30, 1)
    assert quantize_multiplier(2.0 ** 40) == (2**31 - 1, 30)     # saturated
    # ReLU6 at scale 6/255 zero point -128: [-128, 127]; RELU_N1_TO_1
    assert activation_range(3, 6 / 255, -128) == (-128, 127)
    assert activation_range(1, 0.1, 5) == (5, 127)
    assert activation_range(2, 0.01, 0) == (-100, 100)
    p = add_params(0.5, 1, 0.25, -2, 0.5, 3)
    assert p[:4] == [-1, 2, 3, 20]


def test_conversion_is_deterministic():
    a = convert(DIGITS)
    b = convert(DIGITS.read_bytes(), name="digits_int8")
    assert a.data == b.data
    assert json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


def test_footprint_report():
    for path in _models():
        blob = convert(path)
        d = blob.to_dict()
        assert d["flash_bytes"] == len(blob.data) == blob.flash_bytes
        assert d["peak_arena_bytes"] % 4 == 0
        assert d["arena_lower_bound_bytes"] <= d["peak_arena_bytes"]
        # never worse than keeping every activation at once
        info = parse(blob.data)
        no_reuse = sum(t["bytes"] for t in info["tensors"] if not t["constant"]) + \
            sum(layer["scratch_bytes"] for layer in d["layers"])
        assert d["peak_arena_bytes"] <= no_reuse
        assert d["constant_bytes"] < d["flash_bytes"] < Path(path).stat().st_size
        assert set(d["operators"]) <= set(SUPPORTED_OPS)
        assert d["macs"] == sum(layer["macs"] for layer in d["layers"]) > 0
        json.dumps(d)
    d = convert(DIGITS).to_dict()
    assert d["macs"] == 177984 and d["input"]["bytes"] == 64 and d["output"]["bytes"] == 10


def test_parse_refuses_bad_blobs():
    data = convert(DIGITS).data
    with pytest.raises(ModelError, match="magic"):
        parse(b"TFL3" + data[4:])
    with pytest.raises(ModelError, match="version 7"):
        parse(data[:4] + struct.pack("<H", 7) + data[6:])
    with pytest.raises(ModelError, match="CRC"):
        parse(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ModelError, match="truncated"):
        parse(data[:-8])


# ---- arena planner -----------------------------------------------------------------

def test_planner_never_overlaps_live_buffers():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n_layers = int(rng.integers(1, 12))
        bufs = []
        for i in range(int(rng.integers(1, 15))):
            first = int(rng.integers(0, n_layers))
            bufs.append(Buffer(i, int(rng.integers(0, 5000)), first, int(rng.integers(first, n_layers))))
        peak = plan(bufs)
        assert peak % 4 == 0 and peak >= live_lower_bound(bufs, n_layers) - 4 * len(bufs)
        for a in bufs:
            assert a.offset % 4 == 0 and a.offset + a.size <= peak
            for b in bufs:
                if a is b or not a.size or not b.size or a.last < b.first or b.last < a.first:
                    continue
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset


# ---- errors ------------------------------------------------------------------------

def test_float_model_asks_for_quantization():
    with pytest.raises(ModelError) as err:
        convert(DIGITS_FP32)
    assert "FP32" in err.value.message and "edgebench quantize" in err.value.one_line()


def test_dynamic_range_and_uint8_io_models_are_refused(tmp_path):
    g = TinyModel()
    x = g.tensor((1, 4), "float32")
    w = g.tensor((3, 4), "int8", scale=0.1, zp=0, data=np.ones((3, 4), np.int8))
    y = g.tensor((1, 3), "float32")
    g.op("FULLY_CONNECTED", [x, w, -1], [y], g.options("FullyConnectedOptions"))
    with pytest.raises(ModelError) as err:
        convert(g.build([x], [y]))
    assert "dynamic-range" in err.value.message and "edgebench quantize" in err.value.one_line()

    g = TinyModel()
    x = g.tensor((1, 4), "uint8", scale=0.1, zp=128)
    xi = g.tensor((1, 4), "int8", scale=0.1, zp=0)
    w = g.tensor((3, 4), "int8", scale=0.1, zp=0, data=np.ones((3, 4), np.int8))
    y = g.tensor((1, 3), "int8", scale=0.2, zp=0)
    g.op("QUANTIZE", [x], [xi])
    g.op("FULLY_CONNECTED", [xi, w, -1], [y], g.options("FullyConnectedOptions"))
    with pytest.raises(ModelError) as err:
        convert(g.build([x], [y]))
    assert "uint8" in err.value.message and "int8 input and output" in err.value.message


def test_unsupported_variants_name_the_layer(tmp_path):
    g = TinyModel()
    x = g.tensor((1, 4, 4, 4), scale=0.1, zp=0)
    w = g.tensor((2, 3, 3, 2), scale=0.1, zp=0, data=np.ones((2, 3, 3, 2), np.int8))   # groups of 2
    y = g.tensor((1, 4, 4, 2), scale=0.1, zp=0)
    g.op("CONV_2D", [x, w, -1], [y], g.options("Conv2DOptions", padding=0, strideH=1, strideW=1))
    with pytest.raises(ModelError, match=r"layer 0 \(CONV_2D\): grouped convolution"):
        convert(g.build([x], [y]))

    g = TinyModel()
    x = g.tensor((1, 4), scale=0.1, zp=0)
    y = g.tensor((1, 4), scale=0.1, zp=0)
    g.op("SOFTMAX", [x], [y], g.options("SoftmaxOptions", beta=1.0))
    with pytest.raises(ModelError, match=r"layer 0 \(SOFTMAX\): output quantization"):
        convert(g.build([x], [y]))


def test_not_a_model(tmp_path):
    with pytest.raises(ModelError, match="not a TFLite model"):
        convert(b"\x00" * 64)
    with pytest.raises(ModelError, match="does not exist"):
        convert(tmp_path / "missing.tflite")
    p = tmp_path / "two_inputs.tflite"
    g = TinyModel()
    a = g.tensor((1, 4), scale=0.1, zp=0)
    b = g.tensor((1, 4), scale=0.1, zp=0)
    y = g.tensor((1, 4), scale=0.2, zp=0)
    g.op("ADD", [a, b], [y], g.options("AddOptions"))
    p.write_bytes(g.build([a, b], [y]))
    with pytest.raises(ModelError, match="2 inputs and 1 outputs"):
        convert(p)


# ---- damaged models: converted or refused, never a crash ---------------------------

def _convert_or_refuse(data: bytes) -> str:
    """'converted' (and the blob reads back) or 'refused' (ModelError); anything else fails."""
    try:
        blob = convert(data, name="mutant")
    except ModelError as exc:
        assert exc.message and "\n" not in exc.message
        return "refused"
    assert parse(blob.data)["header"]["n_layers"] >= 1
    return "converted"


def test_byte_flipped_models_are_converted_or_refused():
    """300 seeded mutants of digits_int8 with 1 to 3 bytes replaced (this found IndexError,
    ValueError and AttributeError escaping the converter)."""
    import random

    src = DIGITS.read_bytes()
    rng = random.Random(20261125)
    outcomes = []
    for _ in range(300):
        d = bytearray(src)
        for _ in range(rng.choice((1, 2, 3))):
            d[rng.randrange(len(d))] = rng.randrange(256)
        outcomes.append(_convert_or_refuse(bytes(d)))
    # both outcomes happen: most single-byte changes hit weights, many hit the structure
    assert outcomes.count("converted") > 30 and outcomes.count("refused") > 30


def _fields(obj, out: list) -> list:
    """(object, attribute, index) of every scalar number in a schema object tree (not buffer data)."""
    for attr, v in vars(obj).items():
        if isinstance(v, bool) or v is None or attr == "data":
            continue
        if isinstance(v, (int, float)):
            out.append((obj, attr, None))
        elif isinstance(v, (list, np.ndarray)):
            for i, e in enumerate(v[:8]):
                if hasattr(e, "__dict__"):
                    _fields(e, out)
                elif isinstance(e, (int, float, np.integer, np.floating)):
                    out.append((obj, attr, i))
        elif hasattr(v, "__dict__"):
            _fields(v, out)
    return out


def test_structurally_mutated_models_are_converted_or_refused():
    """250 seeded mutants made through the schema's object API: one to three numbers anywhere in
    the model (shapes, tensor, buffer and operator indices, options, quantization) set to a
    boundary value, packed again as a well-formed flatbuffer."""
    import random

    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    src = DIGITS.read_bytes()
    rng = random.Random(9)
    ints = [0, 1, -1, 2, 3, 127, -128, 255, 65535, 65536, 2**31 - 1, -2**31]
    floats = [0.0, -1.0, 1e-30, 1e30, float("inf"), float("nan")]
    outcomes = []
    while len(outcomes) < 250:
        m = s.ModelT.InitFromPackedBuf(bytearray(src), 0)      # a fresh copy: arrays are views of it
        fields = _fields(m, [])
        for _ in range(rng.choice((1, 1, 2, 3))):
            obj, attr, i = rng.choice(fields)
            cur = getattr(obj, attr) if i is None else getattr(obj, attr)[i]
            new = rng.choice(floats) if isinstance(cur, (float, np.floating)) else rng.choice(ints + [int(cur) + 1])
            try:
                if i is None:
                    setattr(obj, attr, new)
                else:
                    getattr(obj, attr)[i] = new
            except (OverflowError, ValueError):      # does not fit the array's type
                continue
        b = flatbuffers.Builder(1024)
        try:
            b.Finish(m.Pack(b), file_identifier=b"TFL3")
        except Exception:                            # the schema cannot even write it (e.g. -1 in a uint)
            continue
        outcomes.append(_convert_or_refuse(bytes(b.Output())))
    assert outcomes.count("converted") > 30 and outcomes.count("refused") > 30


def _fc_model(mutate=None) -> bytes:
    g = TinyModel()
    x = g.tensor((1, 4), scale=0.1, zp=0)
    w = g.tensor((3, 4), scale=0.1, zp=0, data=np.ones((3, 4), np.int8))
    y = g.tensor((1, 3), scale=0.2, zp=0)
    ins, opts = [x, w, -1], g.options("FullyConnectedOptions")
    if mutate:
        ins, opts = mutate(g, ins, opts)
    g.op("FULLY_CONNECTED", ins, [y], opts)
    return g.build([x], [y])


@pytest.mark.parametrize("mutate,needle", [
    (lambda g, ins, o: (ins, g.options("Pool2DOptions", strideH=1)),
     r"options Pool2DOptions do not belong to FULLY_CONNECTED"),
    (lambda g, ins, o: (ins[:1], o), "missing the filter"),
    (lambda g, ins, o: ([ins[0], -1, -1], o), "missing the filter"),
    (lambda g, ins, o: ([ins[0], g.tensor((3, 5), scale=0.1, zp=0, data=np.ones(12, np.int8)), -1], o),
     r"tensor 3 needs 15 bytes of constant data, its buffer holds 12"),  # the model check sees it first
    (lambda g, ins, o: ([ins[0], ins[1], g.tensor((3,), "int32", data=np.ones(5, np.int32))], o),
     "needs 12 bytes, its buffer holds 20"),
])
def test_damaged_operators_are_refused_with_the_reason(mutate, needle):
    assert _convert_or_refuse(_fc_model()) == "converted"
    with pytest.raises(ModelError, match=needle):
        convert(_fc_model(mutate))


def test_constant_graph_ends_and_empty_dimensions_are_refused():
    g = TinyModel()
    x = g.tensor((1, 4), scale=0.1, zp=0, data=np.ones(4, np.int8))       # the input has data
    y = g.tensor((1, 4), scale=0.1, zp=0)
    g.op("RESHAPE", [x], [y])
    with pytest.raises(ModelError, match="model input 't0' is a constant tensor"):
        convert(g.build([x], [y]))
    g = TinyModel()
    x = g.tensor((1, 0, 4), scale=0.1, zp=0)
    y = g.tensor((1, 0), scale=0.1, zp=0)
    g.op("RESHAPE", [x], [y])
    # the model reader refuses an empty input before the converter sees it (issue 22 item 9)
    with pytest.raises(ModelError, match=r"zero-size dimension in its shape \[1, 0, 4\]"):
        convert(g.build([x], [y]))


def _conv_model(c: int, oc: int, k: int, wq: np.ndarray, bias: np.ndarray) -> bytes:
    g = TinyModel()
    x = g.tensor((1, 3, 3, c), scale=0.05, zp=-3)
    wt = g.tensor(wq.shape, scale=np.full(oc, 0.01), zp=np.zeros(oc, int), data=wq, axis=0)
    bt = g.tensor((oc,), "int32", scale=0.05 * np.full(oc, 0.01), zp=np.zeros(oc, int), data=bias)
    y = g.tensor((1, 3, 3, oc), scale=0.5, zp=1)
    g.op("CONV_2D", [x, wt, bt], [y], g.options("Conv2DOptions", padding=0, strideH=1, strideW=1,
                                                 dilationHFactor=1, dilationWFactor=1))
    return g.build([x], [y])


@pytest.mark.parametrize("c,k,biased", [(8, 1, True), (6, 1, False), (8, 3, False)])
def test_a_1x1_convolution_over_whole_groups_stores_its_filter_biased(c, k, biased):
    """Blob format 3 (firmware/BLOB.md "Filter layouts"): a 1x1 CONV_2D over a multiple of four input
    channels stores its even input-channel weights as w ^ 0x80 and raises bias' by 128 * sum(odd w),
    as FULLY_CONNECTED does; other convolutions keep the plain blocked filter and bias'. The zero-weight
    output channels are counted in the layer summary."""
    oc = 5
    rng = np.random.default_rng(7)
    wq = rng.integers(-128, 128, size=(oc, k, k, c)).astype(np.int8)
    wq[2] = 0                                              # an output channel with all-zero weights
    bias = rng.integers(-5000, 5000, size=oc).astype(np.int32)
    blob = convert(_conv_model(c, oc, k, wq, bias))
    info = parse(blob.data)
    layer = info["layers"][0]
    t = info["tensors"][layer["inputs"][1]]
    stored = np.frombuffer(blob.data, np.int8, t["bytes"], t["offset"])
    rows = wq.reshape(oc, -1)
    plain = rows.copy()
    if biased:
        plain[:, 0::2] = (plain[:, 0::2].view(np.uint8) ^ 0x80).view(np.int8)
    # the first block of four rows, group by group: row 0's four bytes, row 1's, row 2's, row 3's
    depth = rows.shape[1]
    first = stored[:16].reshape(4, 4)
    assert (first == plain[:4, :4]).all()
    assert (stored[4 * depth:] == plain[4]).all()          # the last row plain
    chan = np.frombuffer(blob.data, "<i4", oc, layer["chan_offset"])
    folded = bias.astype(np.int64) + 3 * rows.astype(np.int64).sum(axis=1)    # -input zero point = 3
    odd = 128 * rows[:, 1::2].astype(np.int64).sum(axis=1)
    assert (chan == folded + (odd if biased else 0)).all()
    assert blob.layers[0]["zero_weight_channels"] == 1
