"""Reading .tflite files on the host: identity, precision, operators, bad files."""
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_DIR

from edgebench.data.inputs import input_range, load_inputs, random_inputs
from edgebench.errors import DataError, ModelError
from edgebench.modelfile import read_model

MLPERF = MLPERF_DIR
DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"


def test_int8_model_is_described():
    m = read_model(MLPERF / "kws_ref_model.tflite")
    assert m.precision == "int8"
    assert m.sha256 == "aeea436800704fce17b17292e4412630ad856e9d777c044c64ef748a880bd0ae"
    assert m.operators["DEPTHWISE_CONV_2D"] == 4
    assert m.inputs[0].to_dict()["quant"] == {"scale": pytest.approx(0.5847029), "zero_point": 83}


def test_kws_float_model_is_really_dynamic_range():
    # The MLPerf Tiny "float32" KWS file stores its CONV_2D weights as int8: the
    # tool must say so instead of calling it FP32.
    assert read_model(MLPERF / "kws_ref_model_float32.tflite").precision == "dynamic-range"
    assert read_model(MLPERF / "pretrainedResnet.tflite").precision == "fp32"


def test_digits_pair():
    assert read_model(DIGITS / "digits_fp32.tflite").precision == "fp32"
    assert read_model(DIGITS / "digits_int8.tflite").precision == "int8"


def test_missing_and_corrupt_models(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        read_model(tmp_path / "nope.tflite")
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"PK\x03\x04 not a model at all")
    with pytest.raises(ModelError, match="not a TFLite model"):
        read_model(bad)
    trunc = tmp_path / "trunc.tflite"
    trunc.write_bytes((MLPERF / "kws_ref_model.tflite").read_bytes()[:2000])
    with pytest.raises(ModelError, match="corrupt"):
        read_model(trunc)


def test_input_range_of_quantized_input():
    t = read_model(MLPERF / "kws_ref_model.tflite").inputs[0].to_dict()
    lo, hi = input_range(t)
    assert lo == pytest.approx(0.5847029 * (-128 - 83))
    assert hi == pytest.approx(0.5847029 * (127 - 83))
    x = random_inputs(t, count=8, seed=3)
    assert x.x.shape == (8, 49, 10, 1) and x.x.dtype == np.float32
    assert x.x.min() >= lo and x.x.max() <= hi
    assert np.array_equal(x.x, random_inputs(t, count=8, seed=3).x)
    assert not np.array_equal(x.x, random_inputs(t, count=8, seed=4).x)


def test_user_inputs_shape_checked(tmp_path):
    t = read_model(DIGITS / "digits_int8.tflite").inputs[0].to_dict()
    good = tmp_path / "good.npz"
    np.savez(good, x=np.zeros((5, 8, 8, 1), np.float32))
    assert load_inputs(good, t).x.shape == (5, 8, 8, 1)
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((5, 9, 9, 1), np.float32))
    with pytest.raises(DataError, match=r"do not fit the model input .* \[1, 8, 8, 1\]"):
        load_inputs(bad, t)


def test_mutated_models_give_a_model_error_or_a_model_never_anything_else():
    """Seeded byte flips, truncations and smashed 32-bit offsets/lengths of a real model: the
    reader returns a description or raises ModelError; no other exception, no endless read."""
    import random

    from edgebench.modelfile import parse_model

    data = (DIGITS / "digits_int8.tflite").read_bytes()
    rng = random.Random(1234)
    refused = 0
    for _ in range(300):
        b = bytearray(data)
        r = rng.random()
        if r < 0.4:
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif r < 0.6:
            b = b[:rng.randrange(len(b))]
        else:
            p = rng.randrange(0, min(len(b) - 4, 4096)) & ~3
            b[p:p + 4] = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, rng.randrange(1 << 32)]).to_bytes(4, "little")
        try:
            parse_model(bytes(b))
        except ModelError as exc:
            refused += 1
            assert "TFLite model" in exc.one_line()
    assert refused > 50


def test_structural_check_names_the_problem():
    from edgebench.modelfile import verify_flatbuffer

    data = (DIGITS / "digits_int8.tflite").read_bytes()
    assert verify_flatbuffer(data) is None
    assert "root table offset" in verify_flatbuffer(b"\xff\xff\x00\x00" + data[4:])
    assert "expected b'TFL3'" in verify_flatbuffer(data[:4] + b"XXXX" + data[8:])
    assert "too short" in verify_flatbuffer(b"\x00\x00")
