"""ONNX exports shaped like the public exporters' output, converted end to end (issue #32's table).

No model can be downloaded here, so each graph is built with onnx.helper node by node the way
a named exporter writes it (op types, order, attribute spelling, initializers), with seeded
random weights, sized for a microcontroller:

=====================  ==============================================================  =====================
name                   what it mimics                                                  source of the shape
=====================  ==============================================================  =====================
pt_mnist_cnn           pytorch/examples mnist/main.py Net, torch.onnx.export opset 17   PyTorch 2.x
                       (Conv, Relu, MaxPool, Dropout, Flatten, Gemm, LogSoftmax)
pt_kws_dscnn           ARM-software/ML-KWS-for-MCU DS-CNN as a PyTorch port exports it  PyTorch 2.x
                       (Conv+BatchNormalization+Relu, depthwise, AveragePool, Gemm)
pt_mobilenetv3_block   torchvision mobilenet_v3 blocks: HardSwish, SE (GlobalAveragePool,  PyTorch 2.x
                       Conv, Relu, Conv, HardSigmoid, Mul), residual Add
k2o_mnist_cnn          keras2onnx 1.7 of a Keras MNIST CNN: NHWC input, Transpose,       keras2onnx
                       nodes NOT topologically sorted, MatMul+Add, Softmax
tf2onnx_mnist_selu     tf2onnx 1.16 of a Keras CNN: NHWC input + Transpose, Elu/Selu,   tf2onnx
                       Dropout with an unused mask output, Reshape, MatMul
zoo_squeezenet_tiny    onnx/models SqueezeNet 1.1 (Fire modules: squeeze Conv, two       ONNX model zoo
                       expand Convs, Concat; Dropout; final Conv; GlobalAveragePool)
zoo_shufflenet_tiny    onnx/models ShuffleNet v2 (Split, channel shuffle                 ONNX model zoo
                       Reshape->Transpose(rank 5)->Reshape, Concat, depthwise)
caffe2_resnet_sum      onnx/models ResNet (Caffe2 export): residual by a 2-input Sum,   ONNX model zoo (Caffe2)
                       GlobalAveragePool, Flatten, Gemm
=====================  ==============================================================  =====================

For each: ``quantize_model`` (FP32 + INT8, 64 seeded calibration samples), the FP32 error
against onnxruntime that quantize itself measured (computed), INT8 top-1 agreement with
onnxruntime on 256 further seeded inputs (host LiteRT/TFLite interpreter: measured on this
machine), and ``edgebench verify INT8 --board qemu-m4 --count 8`` bit-exactness (emulated)
when the model fits and ``--qemu`` is given.

    .venv/bin/python benchmarks/onnx_exports.py [--qemu] [--only NAME] [--json]
    .venv/bin/python benchmarks/onnx_exports.py --onnx-light [--file M.onnx ...] [--qemu]
    .venv/bin/python benchmarks/onnx_exports.py --exports [--qemu]

``--onnx-light`` takes the real public files the onnx wheel ships (onnx/models exports by
onnx-caffe2, ``onnx/backend/test/data/light``; their weights are ConstantOfShape fills, so the
agreement figures say little about a trained model), ``--exports`` the files the real exporters
(torch.onnx.export, tf2onnx) wrote with benchmarks/export_onnx.py, ``--file`` any ONNX file.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from edgebench.quantize import QuantizeOptions

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "benchmarks" / "data" / "exports"     # written by benchmarks/export_onnx.py


def _init(name, a):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def _iinit(name, a):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(a, dtype=np.int64), name)


class G:
    """A graph under construction: nodes, initializers, seeded weights."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.k = 0

    def w(self, name, shape, fan_in=None):
        fan = fan_in or int(np.prod(shape[1:])) or 1
        self.inits.append(_init(name, self.rng.standard_normal(shape) * np.sqrt(2.0 / fan)))
        return name

    def n(self, op, ins, outs=None, **attrs):
        from onnx import helper

        self.k += 1
        outs = outs or [f"{op.lower()}_{self.k}"]
        self.nodes.append(helper.make_node(op, ins, outs, name=f"/{op}_{self.k}", **attrs))
        return outs[0] if len(outs) == 1 else outs

    def conv(self, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True):
        p = k // 2 if pad is None else pad
        w = self.w(f"conv{self.k}.weight", (cout, cin // group, k, k))
        ins = [x, w]
        if bias:
            ins.append(self.w(f"conv{self.k}.bias", (cout,), fan_in=50))
        return self.n("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[p] * 4, group=group,
                      dilations=[1, 1])

    def bn(self, x, c):
        r = self.rng
        names = [f"bn{self.k}.{s}" for s in ("weight", "bias", "running_mean", "running_var")]
        for nm, v in zip(names, (r.uniform(0.5, 1.5, c), r.normal(0, 0.1, c), r.normal(0, 0.1, c),
                                 r.uniform(0.5, 1.5, c))):
            self.inits.append(_init(nm, v))
        return self.n("BatchNormalization", [x, *names], epsilon=1e-5, momentum=0.9)

    def gemm(self, x, cin, cout):
        return self.n("Gemm", [x, self.w(f"fc{self.k}.weight", (cout, cin)), self.w(f"fc{self.k}.bias", (cout,), 50)],
                      alpha=1.0, beta=1.0, transB=1)

    def model(self, inp, shape, out, producer, opset=17, shuffle=False):
        import onnx
        from onnx import TensorProto, helper

        def make(nodes, out_vi):
            g = helper.make_graph(nodes, "main_graph", [helper.make_tensor_value_info(inp, TensorProto.FLOAT, shape)],
                                  [out_vi], self.inits)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name=producer[0],
                                  producer_version=producer[1])
            m.ir_version = 8
            return m

        first = onnx.shape_inference.infer_shapes(make(self.nodes, helper.make_tensor_value_info(out, TensorProto.FLOAT,
                                                                                               None)))
        out_vi = next(v for v in list(first.graph.value_info) + list(first.graph.output) if v.name == out)
        nodes = list(self.nodes)
        if shuffle:                          # keras2onnx writes nodes out of topological order
            nodes = nodes[::2] + nodes[1::2]
        m = make(nodes, out_vi)
        if not shuffle:
            onnx.checker.check_model(m)
        return m


def pt_mnist_cnn():
    g = G(1)
    x = g.n("Relu", [g.conv("input", 1, 8, pad=0)])
    x = g.n("Relu", [g.conv(x, 8, 16, pad=0)])
    x = g.n("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=0, dilations=[1, 1])
    x = g.n("Dropout", [x, g.n("Constant", [], value=_init("r", 0.25)), g.n("Constant", [], value=_bool(False))])
    x = g.n("Flatten", [x], axis=1)
    x = g.n("Relu", [g.gemm(x, 16 * 12 * 12, 32)])
    x = g.gemm(x, 32, 10)
    g.n("LogSoftmax", [x], ["output"], axis=1)
    return g.model("input", ["batch_size", 1, 28, 28], "output", ("pytorch", "2.5.1")), (1, 28, 28)


def _bool(v):
    from onnx import TensorProto, helper

    return helper.make_tensor("b", TensorProto.BOOL, [], [v])


def pt_kws_dscnn():
    g = G(2)
    x = g.n("Relu", [g.bn(g.conv("input", 1, 16, k=3, stride=2, bias=False), 16)])
    for _ in range(2):
        x = g.n("Relu", [g.bn(g.conv(x, 16, 16, k=3, group=16, bias=False), 16)])
        x = g.n("Relu", [g.bn(g.conv(x, 16, 16, k=1, bias=False), 16)])
    x = g.n("AveragePool", [x], kernel_shape=[25, 5], strides=[25, 5], pads=[0, 0, 0, 0])
    x = g.n("Flatten", [x], axis=1)
    g.n("Softmax", [g.gemm(x, 16, 12)], ["output"], axis=1)
    return g.model("input", ["batch_size", 1, 49, 10], "output", ("pytorch", "2.5.1")), (1, 49, 10)


def pt_mobilenetv3_block():
    g = G(3)
    x = g.n("HardSwish", [g.bn(g.conv("input", 3, 16, stride=2, bias=False), 16)])
    y = g.n("Relu", [g.bn(g.conv(x, 16, 16, group=16, bias=False), 16)])
    s = g.n("GlobalAveragePool", [y])
    s = g.n("Relu", [g.conv(s, 16, 8, k=1)])
    s = g.n("HardSigmoid", [g.conv(s, 8, 16, k=1)], alpha=1 / 6, beta=0.5)
    y = g.n("Mul", [y, s])
    y = g.bn(g.conv(y, 16, 16, k=1, bias=False), 16)
    x = g.n("Add", [x, y])
    x = g.n("Flatten", [g.n("GlobalAveragePool", [x])], axis=1)
    g.n("Identity", [g.gemm(x, 16, 10)], ["output"])
    return g.model("input", ["batch_size", 3, 32, 32], "output", ("pytorch", "2.5.1")), (3, 32, 32)


def k2o_mnist_cnn():
    g = G(4)
    x = g.n("Transpose", ["input_1"], perm=[0, 3, 1, 2])
    x = g.n("Relu", [g.conv(x, 1, 8, pad=0)])
    x = g.n("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.n("Transpose", [x], perm=[0, 2, 3, 1])
    x = g.n("Reshape", [x, _shape(g, [-1, 13 * 13 * 8])])
    x = g.n("MatMul", [x, g.w("dense/kernel", (13 * 13 * 8, 10))])
    x = g.n("Add", [x, g.w("dense/bias", (10,), 50)])
    g.n("Softmax", [x], ["dense"], axis=-1)
    return g.model("input_1", ["N", 28, 28, 1], "dense", ("keras2onnx", "1.7.0"), opset=13, shuffle=True), (28, 28, 1)


def _shape(g, dims):
    name = f"shape_{g.k}"
    g.inits.append(_iinit(name, dims))
    return name


def tf2onnx_mnist_selu():
    g = G(5)
    x = g.n("Transpose", ["input"], perm=[0, 3, 1, 2])
    x = g.n("Elu", [g.conv(x, 1, 8, stride=2)], alpha=1.0)
    x = g.n("Selu", [g.conv(x, 8, 8, stride=2)])
    x = g.n("Transpose", [x], perm=[0, 2, 3, 1])
    x, _mask = g.n("Dropout", [x], [f"drop_{g.k}", f"mask_{g.k}"])
    x = g.n("Reshape", [x, _shape(g, [1, 7 * 7 * 8])])
    x = g.n("Add", [g.n("MatMul", [x, g.w("dense/MatMul/ReadVariableOp:0", (392, 10))]),
                    g.w("dense/BiasAdd/ReadVariableOp:0", (10,), 50)])
    g.n("Softmax", [x], ["probs"])
    return g.model("input", ["unk__6", 28, 28, 1], "probs", ("tf2onnx", "1.16.1"), opset=15), (28, 28, 1)


def zoo_squeezenet_tiny():
    g = G(6)
    x = g.n("Relu", [g.conv("data", 3, 16, stride=2, pad=0)])
    x = g.n("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2])
    for sq, ex in ((4, 16), (4, 16)):
        cin = 16 if sq == 4 and x.startswith("maxpool") else 32
        s = g.n("Relu", [g.conv(x, cin, sq, k=1)])
        a = g.n("Relu", [g.conv(s, sq, ex, k=1)])
        b = g.n("Relu", [g.conv(s, sq, ex, k=3)])
        x = g.n("Concat", [a, b], axis=1)
    x = g.n("Dropout", [x], ratio=0.5)
    x = g.n("Relu", [g.conv(x, 32, 10, k=1)])
    x = g.n("GlobalAveragePool", [x])
    g.n("Flatten", [x], ["squeezenet0_flatten0_reshape0"], axis=1)
    return g.model("data", [1, 3, 32, 32], "squeezenet0_flatten0_reshape0", ("onnx-zoo", "1.1"), opset=9), (3, 32, 32)


def zoo_shufflenet_tiny():
    g = G(7)
    x = g.n("Relu", [g.bn(g.conv("input", 3, 16, stride=2, bias=False), 16)])
    a, b = g.n("Split", [x, _shape(g, [8, 8])], [f"split_a{g.k}", f"split_b{g.k}"], axis=1)
    b = g.n("Relu", [g.bn(g.conv(b, 8, 8, k=1, bias=False), 8)])
    b = g.bn(g.conv(b, 8, 8, group=8, bias=False), 8)
    b = g.n("Relu", [g.bn(g.conv(b, 8, 8, k=1, bias=False), 8)])
    x = g.n("Concat", [a, b], axis=1)
    x = g.n("Reshape", [x, _shape(g, [1, 2, 8, 16, 16])])
    x = g.n("Transpose", [x], perm=[0, 2, 1, 3, 4])
    x = g.n("Reshape", [x, _shape(g, [1, 16, 16, 16])])
    x = g.n("Flatten", [g.n("GlobalAveragePool", [x])], axis=1)
    g.n("Identity", [g.gemm(x, 16, 10)], ["output"])
    return g.model("input", [1, 3, 32, 32], "output", ("pytorch", "1.13"), opset=13), (3, 32, 32)


def caffe2_resnet_sum():
    g = G(8)
    x = g.n("Relu", [g.bn(g.conv("gpu_0/data_0", 3, 16, bias=False), 16)])
    for _ in range(2):
        y = g.n("Relu", [g.bn(g.conv(x, 16, 16, bias=False), 16)])
        y = g.bn(g.conv(y, 16, 16, bias=False), 16)
        x = g.n("Relu", [g.n("Sum", [x, y])])
    x = g.n("Flatten", [g.n("GlobalAveragePool", [x])], axis=1)
    g.n("Softmax", [g.gemm(x, 16, 10)], ["gpu_0/softmax_1"], axis=1)
    return g.model("gpu_0/data_0", [1, 3, 16, 16], "gpu_0/softmax_1", ("onnx-caffe2", ""), opset=9), (3, 16, 16)


BUILDERS = {f.__name__: f for f in (pt_mnist_cnn, pt_kws_dscnn, pt_mobilenetv3_block, k2o_mnist_cnn,
                                    tf2onnx_mnist_selu, zoo_squeezenet_tiny, zoo_shufflenet_tiny, caffe2_resnet_sum)}


def run_one(name: str, tmp: Path, qemu: bool) -> dict:
    m, sample = BUILDERS[name]()
    path = tmp / f"{name}.onnx"
    path.write_bytes(m.SerializeToString())
    return run_file(name, path, tuple(sample), tmp, qemu)


MIN_OPSET = 7       # edgebench lowers opset 7 and newer


def _upgraded(path: Path, tmp: Path) -> tuple:
    """(path, note): a file older than opset 7 (PyTorch 0.3's opset 6) upgraded to opset 9 with
    onnx.version_converter, written to ``tmp``; others as they are."""
    import onnx
    from onnx import version_converter

    m = onnx.load(str(path), load_external_data=False)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), MIN_OPSET)
    if opset >= MIN_OPSET:
        return path, None
    out = tmp / f"{path.parent.name}_{path.stem}_opset9.onnx"
    out.write_bytes(version_converter.convert_version(m, 9).SerializeToString())
    return out, f"opset {opset} upgraded to 9 by onnx.version_converter"


def public_file(path: Path) -> tuple:
    """(name, sample shape without the batch, batch) of a real ONNX file: its first input that is not an initializer."""
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inp = next(i for i in m.graph.input if i.name not in inits)
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    name = path.parent.name if path.stem == "model" else path.stem     # pytorch-converted/<test>/model.onnx
    return name, tuple(dims[1:]), max(dims[0], 1)


def run_file(name: str, path: Path, sample: tuple, tmp: Path, qemu: bool, batch: int = 1) -> dict:
    import onnx
    import onnxruntime as ort

    from edgebench.quantize import quantize_model
    from edgebench.quantize.checks import run_tflite

    source = str(path)
    path, note = _upgraded(path, tmp)
    m = onnx.load(str(path), load_external_data=False)
    rng = np.random.default_rng(0)
    calib = rng.uniform(0, 1, (64, *sample)).astype(np.float32)
    np.save(tmp / f"{name}_calib.npy", calib)
    row: dict = {"name": name, "producer": f"{m.producer_name} {m.producer_version}".strip(), "nodes": len(m.graph.node),
                 "source": source, "batch": batch, **({"note": note} if note else {})}
    try:
        r = quantize_model(path, tmp / f"{name}_calib.npy", out=tmp / f"{name}_int8.tflite",
                           options=QuantizeOptions(batch=batch, min_agreement=0.0, min_sqnr_db=-1e9))   # the table shows it
    except Exception as exc:
        row["error"] = exc.one_line() if hasattr(exc, "one_line") else f"{type(exc).__name__}: {exc}"
        return row
    from edgebench.modelfile import read_model

    f = r.lowering["faithfulness"]
    row.update(fp32_max_abs_error=f["max_abs_error"], fp32_samples=f["samples"],
               input_layout=r.lowering["inputs"][0]["layout"], input_perm=r.lowering["inputs"][0]["perm"],
               int8_bytes=r.int8.bytes, int8_operators=dict(read_model(r.int8.path).operators),
               quantize_agreement=r.agreement)
    x = rng.uniform(0, 1, ((256 // batch) * batch, *sample)).astype(np.float32)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    iname = sess.get_inputs()[0].name
    ref = np.concatenate([sess.run(None, {iname: x[i:i + batch]})[0] for i in range(0, len(x), batch)])
    lay = r.lowering["inputs"][0]
    xm = np.transpose(x, lay["perm"]) if lay["perm"] != list(range(len(lay["perm"]))) else x
    got = run_tflite(Path(r.int8.path).read_bytes(), xm, batch)[0]
    row["int8_top1_agreement"] = float(np.mean(got.reshape(len(x), -1).argmax(1) == ref.reshape(len(x), -1).argmax(1)))
    row["int8_inputs"] = len(x)
    row["fit"] = {board: _fit(r.int8.path, board) for board in FIT_BOARDS}
    if qemu and row["fit"]["qemu-m4"] == "fits":
        np.save(tmp / f"{name}_verify.npy", x[:8])
        p = subprocess.run([sys.executable, "-m", "edgebench", "verify", str(r.int8.path), "--board", "qemu-m4",
                            "--inputs", str(tmp / f"{name}_verify.npy"), "--count", "8", "--json",
                            "--runs-dir", str(tmp / "runs")], capture_output=True, text=True, timeout=900,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
        if p.returncode in (0, 2) and p.stdout.strip():
            v = json.loads(p.stdout)
            row["qemu_m4_bit_exact"] = v.get("bit_exact")
        else:
            row["qemu_m4_bit_exact"] = None
            row["qemu_m4_note"] = (p.stderr.strip().splitlines() or ["?"])[-1][:200]
    return row


FIT_BOARDS = ("qemu-m4", "qemu-f405")


def _fit(path, board: str) -> str:
    """"fits", or the fit check's refusal (edgebench.mcu.fit: the one verify/bench/flash would give)."""
    from edgebench.boards.registry import get_profile
    from edgebench.errors import EdgebenchError
    from edgebench.mcu.fit import check_fit

    try:
        check_fit(path, get_profile(board)).raise_if_unfit()
    except EdgebenchError as exc:
        return "refused: " + exc.message.split(": ", 1)[-1]
    return "fits"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu", action="store_true", help="also verify each INT8 model on qemu-m4 (emulated)")
    ap.add_argument("--only", action="append", help="run only this model (repeatable)")
    ap.add_argument("--file", action="extend", nargs="+", type=Path, default=[],
                    help="real ONNX files to run instead of the built graphs (repeatable)")
    ap.add_argument("--exports", action="store_true",
                    help=f"the real exporters' files in {EXPORTS.relative_to(ROOT)} (benchmarks/export_onnx.py)")
    ap.add_argument("--onnx-light", action="store_true",
                    help="the onnx wheel's onnx/models exports (onnx/backend/test/data/light/*.onnx)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    files = list(args.file)
    if args.exports:
        files += sorted(EXPORTS.glob("*.onnx"))
    if args.onnx_light:
        import onnx

        files += sorted((Path(onnx.__file__).parent / "backend" / "test" / "data" / "light").glob("*.onnx"))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        jobs = [(p,) for p in files] if files else [(n,) for n in (args.only or list(BUILDERS))]
        for (job,) in jobs:
            if isinstance(job, Path):
                name, sample, batch = public_file(job)
                rows.append(run_file(name, job, sample, Path(d), args.qemu, batch))
            else:
                rows.append(run_one(job, Path(d), args.qemu))
            if not args.json:
                print(json.dumps(rows[-1]), flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print()
    print(f"{'model':22} {'producer':18} {'layout':8} {'FP32 max|err| (computed)':>25} "
          f"{'INT8 top-1 agree (measured)':>28} {'qemu-m4 bit-exact (emulated)':>29}")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:22} REFUSED: {r['error']}")
            continue
        q = r.get("qemu_m4_bit_exact", "not run" if r["fit"]["qemu-m4"] == "fits" else r["fit"]["qemu-m4"])
        if q is None:
            q = "n/a: " + r.get("qemu_m4_note", "")[:60]
        print(f"{r['name']:22} {r['producer'][:18]:18} {r['input_layout']:8} {r['fp32_max_abs_error']:25.3g} "
              f"{r['int8_top1_agreement']:22.3f} ({r['int8_inputs']}) {str(q):>29}")
        print(f"{'':22} qemu-f405: {r['fit']['qemu-f405']}")


if __name__ == "__main__":
    main()
