"""`edgebench quantize model.onnx` and the path to a board, without torch.

The ONNX models are built with onnx.helper. The end-to-end case is a small digits CNN
whose convolution is seeded and whose classifier head is fitted by least squares on
onnxruntime's features (no training framework): ONNX -> FP32 + INT8 .tflite (calibration
given NCHW) -> verify on the emulated Cortex-M4 (qemu-system-arm, firmware built under
EDGEBENCH_FIRMWARE_BUILD) bit-exact with the reference kernels, inputs given NCHW ->
accuracy of the INT8 model against its FP32 baseline on the digits test split, given NCHW.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import message_lines, missing, require_tool
from onnx_graphs import init, model
from test_quantize import run_cli

pytestmark = [pytest.mark.tensorflow, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")]


@pytest.fixture(scope="module")
def onnx_mod():
    try:
        import onnx
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        missing(f"{exc.name} is not importable (pip install 'edgebench[onnx]')")
    return onnx


def node(op, ins, outs, **attrs):
    from onnx import helper

    return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)


def digits_cnn(onnx, folder):
    """(path, x_train NCHW, y_train, x_test NCHW, y_test): conv 8x3x3 (seeded) -> Relu -> MaxPool 2 ->
    Flatten (NCHW order: the row permutation matters) -> Gemm (least squares on one-hot labels) -> Softmax."""
    import onnxruntime as ort

    from edgebench.data.datasets import load_digits

    train, test = load_digits("train"), load_digits("test")
    to_nchw = lambda x: np.ascontiguousarray(x.transpose(0, 3, 1, 2))  # noqa: E731
    xtr, xte = to_nchw(train.x), to_nchw(test.x)
    rng = np.random.default_rng(3)
    conv_w, conv_b = rng.standard_normal((8, 1, 3, 3)) * 0.6, rng.normal(0, 0.1, 8)
    feats = [node("Conv", ["image", "cw", "cb"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
             node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]), node("Flatten", ["p"], ["f"])]
    fm = model(feats, {"image": ["batch", 1, 8, 8]}, {"f": ["batch", 128]}, [init("cw", conv_w), init("cb", conv_b)])
    sess = ort.InferenceSession(fm.SerializeToString(), providers=["CPUExecutionProvider"])
    f = sess.run(None, {"image": xtr})[0].astype(np.float64)
    a = np.hstack([f, np.ones((len(f), 1))])
    onehot = np.eye(10)[train.y] * 8.0
    sol = np.linalg.solve(a.T @ a + 1.0 * np.eye(a.shape[1]), a.T @ onehot)
    head = [node("Gemm", ["f", "gw", "gb"], ["logits"], transB=1), node("Softmax", ["logits"], ["probs"], axis=1)]
    full = model(feats + head, {"image": ["batch", 1, 8, 8]}, {"probs": ["batch", 10]},
                 [init("cw", conv_w), init("cb", conv_b), init("gw", sol[:-1].T), init("gb", sol[-1])])
    path = folder / "digits_cnn.onnx"
    onnx.save(full, str(path))
    return path, xtr, train.y, xte, test.y


@pytest.fixture(scope="module")
def digits(onnx_mod, tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx_digits")
    path, xtr, _, xte, yte = digits_cnn(onnx_mod, d)
    np.savez(d / "calib_nchw.npz", x=xtr[:200])
    np.savez(d / "test_nchw.npz", x=xte, y=yte)
    np.save(d / "verify_nchw.npy", xte[:8])
    return {"dir": d, "model": path, "x_test": xte, "y_test": yte}


@pytest.fixture(scope="module")
def quantized(digits):
    from edgebench.quantize import quantize_model

    d = digits["dir"]
    r = quantize_model(digits["model"], d / "calib_nchw.npz", out=d / "digits_int8.tflite")
    return r


def test_quantize_onnx_records_layout_and_faithfulness(quantized, digits):
    from edgebench.modelfile import read_model
    from edgebench.provenance import read_sidecar

    int8, fp32 = read_model(quantized.int8.path), read_model(quantized.fp32.path)
    assert int8.precision == "int8" and int8.inputs[0].shape == [1, 8, 8, 1]        # NHWC, batch 1
    assert fp32.precision == "fp32" and set(int8.operators) <= {"CONV_2D", "MAX_POOL_2D", "RESHAPE",
                                                                  "FULLY_CONNECTED", "SOFTMAX"}
    side = read_sidecar(quantized.int8.path)
    lay = side["layout"]["inputs"][0]
    assert lay["perm"] == [0, 2, 3, 1] and lay["source_shape"] == [1, 1, 8, 8] and lay["layout"] == "NHWC"
    assert side["derived_from"]["kind"] == "onnx" and "onnx" in side["derived_from"]["loader"]
    faith = side["lowering"]["faithfulness"]
    assert faith["passed"] and faith["samples"] == 32 and faith["max_abs_error"] < 1e-5
    assert "transposed to NHWC" in side["calibration"]["preprocessing"]["layout"]
    # the calibration hash is of the samples the converter saw: NHWC
    import hashlib

    from edgebench.data.datasets import load_digits

    x = np.ascontiguousarray(load_digits("train").x[:200], dtype=np.float32)
    assert side["calibration"]["sha256"] == hashlib.sha256(x.tobytes()).hexdigest()
    assert quantized.to_dict()["lowering"]["onnx_operators"]["Gemm"] == 1


def test_a_wrong_lowering_is_refused(digits, monkeypatch, tmp_path):
    """The faithfulness check catches a lowering mistake (here: Relu lowered as Tanh) and writes nothing."""
    from edgebench.errors import ModelError
    from edgebench.quantize import quantize_model
    from edgebench.quantize.onnx_lower import ops_tensor, table

    monkeypatch.setitem(table.OPS, "Relu", table.Op(ops_tensor.tanh))
    with pytest.raises(ModelError) as e:
        quantize_model(digits["model"], digits["dir"] / "calib_nchw.npz", out=tmp_path / "bad_int8.tflite")
    assert "differs from onnxruntime by up to" in e.value.one_line() and "probs" in e.value.one_line()
    assert not list(tmp_path.glob("*.tflite*"))


def test_cli_refusals_and_inspect(onnx_mod, digits, tmp_path):
    two = model([node("Add", ["a", "b"], ["y"])], {"a": [1, 3, 4, 4], "b": [1, 3, 4, 4]}, {"y": [1, 3, 4, 4]})
    onnx_mod.save(two, str(tmp_path / "two.onnx"))
    np.save(tmp_path / "c.npy", np.zeros((4, 3, 4, 4), np.float32))
    erf = model([node("Erf", ["x"], ["y"])], {"x": [1, 3, 4, 4]}, {"y": [1, 3, 4, 4]})
    onnx_mod.save(erf, str(tmp_path / "erf.onnx"))
    for args, needle in (([tmp_path / "two.onnx"], "has 2 inputs ('a', 'b'); quantize supports models with one input"),
                         ([tmp_path / "erf.onnx"], "ONNX operator Erf (node 'erf_y') is not supported: supported: Abs, Add,")):
        p = run_cli("quantize", *args, "--calib", tmp_path / "c.npy", "-o", tmp_path / "o_int8.tflite")
        lines = message_lines(p.stderr)   # one refusal, after any progress lines
        assert p.returncode == 1 and len(lines) == 1 and needle in lines[0], p.stderr
        if "2 inputs" in needle:                         # refused from the ONNX file alone, before TensorFlow
            assert "loading TensorFlow" not in p.stderr, p.stderr
    p = run_cli("inspect", digits["model"], "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["format"] == "onnx" and rep["convertible"] is True
    assert rep["macs"] == 8 * 8 * 8 * 9 + 128 * 10 and rep["params"] == 8 * 9 + 8 + 128 * 10 + 10
    p = run_cli("inspect", tmp_path / "erf.onnx", "--json")
    assert json.loads(p.stdout)["unsupported"] == [{"op": "Erf", "node": "erf_y"}]
    p = run_cli("bench", digits["model"], "--board", "host")
    assert p.returncode == 1 and "convert it first: edgebench quantize" in p.stderr


@pytest.mark.qemu
def test_onnx_to_int8_verified_on_qemu_m4_and_accuracy(quantized, digits, tmp_path_factory, monkeypatch):
    require_tool("qemu-system-arm")
    require_tool("arm-none-eabi-gcc")
    d = digits["dir"]
    v = run_cli("verify", quantized.int8.path, "--board", "qemu-m4", "--inputs", d / "verify_nchw.npy", "--count",
                "8", "--json", "--runs-dir", d / "runs")
    assert v.returncode == 0, v.stderr
    ver = json.loads(v.stdout)
    assert ver["bit_exact"] is True and ver["inputs"]["count"] == 8
    a = run_cli("accuracy", quantized.int8.path, "--baseline", quantized.fp32.path, "--data", d / "test_nchw.npz",
                "--board", "host", "--runs-dir", d / "runs", "--max-ece", "0.3", "--json")  # least squares: not calibrated
    assert a.returncode == 0, a.stderr
    run = json.loads(a.stdout)
    acc = run["extra"]["accuracy"]
    text = json.dumps(acc)
    assert run["status"] == "complete" and "mcnemar" in text.lower()
    # the FP32 baseline of a least-squares head is a real classifier; INT8 stays close to it
    top1 = {role: acc["accuracy"][role]["top1"] for role in ("baseline", "candidate")}
    assert all(t["n"] == len(digits["y_test"]) for t in top1.values())
    fp32, int8 = top1["baseline"]["accuracy"], top1["candidate"]["accuracy"]
    assert fp32 > 0.85 and int8 > 0.85 and abs(fp32 - int8) < 0.05, top1


def test_every_verb_takes_onnx_layout_inputs_alike(quantized, digits, tmp_path):
    """verify and layer-error read --inputs through one function (data.inputs.load_inputs with the model):
    NCHW arrays as the ONNX model takes them are transposed by both; the same for --data."""
    import numpy as np

    from edgebench.bench.layer_error import LayerErrorOptions, load_samples
    from edgebench.data.inputs import load_inputs
    from edgebench.modelfile import read_model

    d = digits["dir"]
    model = read_model(quantized.int8.path)
    nchw = np.load(d / "verify_nchw.npy")
    s = load_inputs(d / "verify_nchw.npy", model.inputs[0].to_dict(), model=model)
    assert s.x.shape == (8, 8, 8, 1) and np.array_equal(s.x, np.transpose(nchw, (0, 2, 3, 1)))
    x, _ = load_samples(LayerErrorOptions(inputs=str(d / "verify_nchw.npy"), count=8), model)
    assert np.array_equal(x, s.x)
    x, _ = load_samples(LayerErrorOptions(data=str(d / "test_nchw.npz"), count=8), model)
    assert x.shape[1:] == (8, 8, 1)
    p = run_cli("layer-error", quantized.int8.path, "--baseline", quantized.fp32.path, "--inputs",
                d / "verify_nchw.npy", "--count", "8", "--json", "--runs-dir", tmp_path / "runs")
    assert p.returncode in (0, 2), p.stderr


def test_an_nhwc_export_stays_nhwc_and_takes_a_per_channel_mean(onnx_mod, tmp_path):
    """A keras2onnx/tf2onnx graph (NHWC input, Transpose to NCHW): the INT8 model takes NHWC as the ONNX model
    does (no transposed data, perm recorded as identity, no TRANSPOSE), and --preprocess mean=a,b,c applies to
    its three channels."""
    from onnx_graphs import build

    from edgebench.modelfile import read_model
    from edgebench.provenance import read_sidecar
    from edgebench.quantize import QuantizeOptions, parse_preprocess, quantize_model

    onnx_mod.save(build("keras2onnx_nhwc_input"), str(tmp_path / "k2o.onnx"))
    np.save(tmp_path / "cal.npy", np.random.default_rng(0).uniform(0, 1, (16, 9, 10, 3)).astype(np.float32))
    r = quantize_model(tmp_path / "k2o.onnx", tmp_path / "cal.npy", out=tmp_path / "k2o_int8.tflite",
                       options=QuantizeOptions(calib_preprocess=parse_preprocess(["mean=0.1,0.2,0.3"])))
    int8 = read_model(r.int8.path)
    assert int8.inputs[0].shape == [1, 9, 10, 3] and "TRANSPOSE" not in int8.operators
    lay = read_sidecar(r.int8.path)["layout"]["inputs"][0]
    assert lay["perm"] == [0, 1, 2, 3] and lay["source_shape"] == [1, 9, 10, 3]
    assert r.calibration["preprocessing"]["mean"] == [0.1, 0.2, 0.3]
