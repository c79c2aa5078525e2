"""The firmware's INT8 engine on the host: C unit tests and bit-exactness.

Builds firmware/tests (test_kernels, eb_run, and ASan/UBSan variants) with gcc
into a temporary directory, runs the kernel unit tests, and compares the
engine's bytes with LiteRT's reference kernels (OpResolverType.BUILTIN_REF)
run in a child process (a malformed model may abort the runtime). The
comparison is per layer: eb_run --dump-layers writes every layer's output
and the reference keeps every intermediate tensor, so a difference is pinned
to the first layer that has it.

Models: the bundled digits model over its whole test set, the MLPerf Tiny
KWS, ResNet-8, VWW and AD INT8 models on 50 seeded random inputs each, synthetic
single-operator models written here with random geometry and quantization
(no TensorFlow needed), and small Keras models converted to full INT8 (needs
TensorFlow; skipped without it, except under CI=true where it fails).
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_DIR, missing

from edgebench.errors import ModelError
from edgebench.mcu import SUPPORTED_OPS, convert
from edgebench.mcu.ops import ENGINE_OPS

ROOT = Path(__file__).resolve().parents[1]
FW_TESTS = ROOT / "firmware" / "tests"
DIGITS = ROOT / "models" / "digits" / "digits_int8.tflite"
DIGITS_TEST = ROOT / "models" / "digits" / "digits_test.npz"
MLPERF = MLPERF_DIR


# ---- build ------------------------------------------------------------------

@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    for tool in ("make", "gcc"):
        if shutil.which(tool) is None:
            missing(f"{tool} is not installed")
    out = tmp_path_factory.mktemp("fw-engine")
    r = subprocess.run(["make", "-s", "-j2", "-C", str(FW_TESTS), f"BUILD={out}", "all", "sanitize"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"firmware/tests build failed:\n{r.stdout}\n{r.stderr}"
    return out


def run_engine(build: Path, blob: bytes, inputs: np.ndarray, tmp: Path, *, layers=False,
               sanitize=False, extra=()) -> np.ndarray:
    """Run inputs (N x input bytes, int8) through eb_run; the raw int8 bytes out."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "m.ebm").write_bytes(blob)
    np.ascontiguousarray(inputs, dtype=np.int8).tofile(tmp / "in.bin")
    exe = build / ("eb_run_san" if sanitize else "eb_run")
    cmd = [str(exe), *extra, *(["--dump-layers"] if layers else []), str(tmp / "m.ebm"),
           str(tmp / "in.bin"), str(len(inputs)), str(tmp / "out.bin")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"eb_run failed ({r.returncode}): {r.stderr}"
    return np.fromfile(tmp / "out.bin", dtype=np.int8)


# ---- the reference, in a child process ----------------------------------------

REF_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    for job in json.load(open(sys.argv[1])):
        it = Interpreter(model_path=job["model"], num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         experimental_preserve_all_tensors=True)
        it.allocate_tensors()
        inp = it.get_input_details()[0]
        details = it._get_ops_details()      # every output of every operator (SPLIT has several)
        outs = [int(t) for op in details for t in op["outputs"]]
        x = np.load(job["inputs"])
        got = []
        for k in range(len(x)):
            it.set_tensor(inp["index"], x[k:k + 1].reshape(inp["shape"]))
            it.invoke()
            got.append(np.concatenate([it.get_tensor(t).reshape(-1) for t in outs]))
        np.save(job["out"], np.stack(got))
        json.dump({"sizes": [int(np.prod(it.get_tensor(t).shape)) for t in outs],
                   "ops": [op["op_name"] for op in details for _ in op["outputs"]]},
                  open(job["out"] + ".json", "w"))
""")


def run_reference(jobs: list, tmp: Path) -> list:
    """jobs: (model path, inputs array); per job (per-layer outputs N x total, sizes, op names)."""
    tmp.mkdir(parents=True, exist_ok=True)
    spec = []
    for k, (model, x) in enumerate(jobs):
        np.save(tmp / f"ref_in{k}.npy", np.ascontiguousarray(x, dtype=np.int8))
        spec.append({"model": str(model), "inputs": str(tmp / f"ref_in{k}.npy"),
                     "out": str(tmp / f"ref_out{k}.npy")})
    (tmp / "jobs.json").write_text(json.dumps(spec))
    r = subprocess.run([sys.executable, "-c", REF_SCRIPT, str(tmp / "jobs.json")],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"reference interpreter failed ({r.returncode}): {r.stderr[-2000:]}"
    results = []
    for s in spec:
        meta = json.loads(Path(s["out"] + ".json").read_text())
        results.append((np.load(s["out"]), meta["sizes"], meta["ops"]))
    return results


def assert_bit_exact(label: str, ref, dev: np.ndarray, n: int) -> None:
    """Per-layer comparison of the reference's and the engine's bytes."""
    outs, sizes, ops = ref
    dev = dev.reshape(n, -1)
    assert dev.shape == outs.shape, f"{label}: engine wrote {dev.shape}, reference {outs.shape}"
    start = 0
    for k, (size, op) in enumerate(zip(sizes, ops)):
        r, d = outs[:, start:start + size], dev[:, start:start + size]
        diff = np.argwhere(r != d)
        if len(diff):
            i, j = diff[0]
            lsb = int(np.abs(r.astype(int) - d.astype(int)).max())
            pytest.fail(f"{label}: layer {k} ({op}) differs in {len(diff)} of {r.size} bytes "
                        f"(max {lsb} LSB); first at input {i} element {j}: reference {r[i, j]}, "
                        f"engine {d[i, j]}", pytrace=False)
        start += size


def normal_inputs(blob, seed: int, n: int = 40) -> np.ndarray:
    """n seeded standard-normal inputs quantized with the model's input parameters."""
    x = np.random.default_rng(seed).normal(size=(n, blob.input["bytes"]))
    return np.clip(np.round(x / blob.input["scale"]) + blob.input["zero_point"], -128, 127).astype(np.int8)


def check_models(build: Path, tmp: Path, models: dict, *, seed: int = 0, n: int = 40,
                 distinct: bool = True) -> set:
    """Each {name: .tflite} on the engine and BUILTIN_REF (one child process), compared layer by
    layer; ``distinct``: the reference's outputs must not have collapsed to a few values
    (random-weight INT8 models can). Returns the operators the reference ran."""
    jobs = []
    for k, path in enumerate(models.values()):
        b = convert(path)
        jobs.append((path, normal_inputs(b, seed + k, n), b))
    refs = run_reference([(p, x) for p, x, _ in jobs], tmp / "ref")
    ops = set()
    for name, (_path, x, b), ref in zip(models, jobs, refs):
        outs, sizes, names = ref
        if distinct:
            final = outs[:, -sizes[-1]:]
            assert len({row.tobytes() for row in final}) > 5, f"{name}: reference outputs collapsed"
        dev = run_engine(build, b.data, x, tmp / f"dev-{name}", layers=True)
        assert_bit_exact(name, ref, dev, len(x))
        ops |= set(names)
    return ops


def check_model(build: Path, tmp: Path, model: Path, x: np.ndarray, label: str, ref=None) -> None:
    blob = convert(model)
    dev = run_engine(build, blob.data, x, tmp / "dev", layers=True)
    ref = ref or run_reference([(model, x)], tmp / "ref")[0]
    assert_bit_exact(label, ref, dev, len(x))


# ---- C unit tests -------------------------------------------------------------

@pytest.mark.parametrize("exe", ["test_kernels", "test_kernels_san"])
def test_kernel_unit_tests(build, exe):
    r = subprocess.run([str(build / exe)], capture_output=True, text=True, timeout=120)
    last = r.stdout.strip().splitlines()[-1]
    assert r.returncode == 0 and last.endswith(" passed, 0 failed"), r.stdout[-3000:] + r.stderr
    assert int(last.split()[0]) > 1000


@pytest.mark.parametrize("port,machine", [("mps2-an386", "mps2-an386"), ("mps2-an500", "mps2-an500")])
def test_kernel_unit_tests_on_emulated_cortex_m(tmp_path, port, machine):
    """The same unit tests built for the Cortex-M4F/M7 ports: the DSP (SMLAD)
    inner loops and the soft-float double comparisons run on the target ISA."""
    for tool in ("make", "arm-none-eabi-gcc", "qemu-system-arm"):
        if shutil.which(tool) is None:
            missing(f"{tool} is not installed")
    r = subprocess.run(["make", "-s", "-C", str(FW_TESTS), "qemu", f"PORT={port}", f"BUILD={tmp_path}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{port} build failed:\n{r.stdout}\n{r.stderr}"
    elf = tmp_path / port / "test_kernels.elf"
    proc = subprocess.Popen(["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none",
                             "-kernel", str(elf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)
    lines = []
    try:
        import selectors
        import time

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if not sel.select(timeout=1.0):
                continue
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if " passed, " in line and line.rstrip().endswith(" failed"):
                break
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert lines and lines[-1].endswith(" passed, 0 failed"), "\n".join(lines[-40:])
    assert lines[0] == f"test_kernels on {port}"


# ---- real models -----------------------------------------------------------------

def _mlperf(name: str) -> Path:
    p = MLPERF / name
    if not p.is_file():
        missing(f"MLPerf Tiny model {p} not found")
    return p


def test_digits_bit_exact_on_test_set(build, tmp_path):
    d = np.load(DIGITS_TEST)
    x = np.clip(np.round(d["x"] / 0.003921568859368563) - 128, -128, 127).astype(np.int8)
    x = x.reshape(len(x), -1)
    assert len(x) == 540
    check_model(build, tmp_path, DIGITS, x, "digits")
    # and the plain output path (no layer hook), as the firmware runs it
    out = run_engine(build, convert(DIGITS).data, x, tmp_path / "plain").reshape(len(x), -1)
    assert (out.argmax(axis=1) == d["y"]).mean() > 0.97


@pytest.mark.parametrize("name,shape", [("kws_ref_model.tflite", (49, 10, 1)),
                                        ("pretrainedResnet_quant.tflite", (32, 32, 3)),
                                        ("vww_96_int8.tflite", (96, 96, 3)),
                                        ("ad01_int8.tflite", (640,))])
def test_mlperf_tiny_bit_exact(build, tmp_path, name, shape):
    model = _mlperf(name)
    rng = np.random.default_rng(20240)
    x = rng.integers(-128, 128, size=(50, int(np.prod(shape))), dtype=np.int16).astype(np.int8)
    check_model(build, tmp_path, model, x, name)


def test_sanitized_engine_and_misaligned_blob(build, tmp_path):
    model = _mlperf("kws_ref_model.tflite")
    x = np.random.default_rng(7).integers(-128, 128, size=(4, 490)).astype(np.int8)
    blob = convert(model).data
    plain = run_engine(build, blob, x, tmp_path / "a")
    san = run_engine(build, blob, x, tmp_path / "b", sanitize=True, extra=["--misalign"])
    assert np.array_equal(plain, san)


# ---- synthetic single-operator models (no TensorFlow) --------------------------

class TinyModel:
    """Writes small INT8 .tflite flatbuffers with the schema's object API."""

    def __init__(self):
        from ai_edge_litert import schema_py_generated as s

        self.s = s
        self.tensors, self.buffers, self.ops, self.codes = [], [s.BufferT()], [], []

    def tensor(self, shape, dtype="int8", scale=None, zp=0, data=None, axis=0):
        s = self.s
        t = s.TensorT()
        t.shape = [int(v) for v in shape]
        t.type = {"int8": 9, "int32": 2, "float32": 0, "uint8": 3}[dtype]
        t.name = f"t{len(self.tensors)}".encode()
        if scale is not None:
            qp = s.QuantizationParametersT()
            qp.scale = [float(v) for v in np.atleast_1d(np.asarray(scale, np.float32))]
            qp.zeroPoint = [int(v) for v in np.broadcast_to(np.atleast_1d(zp), (len(qp.scale),))]
            qp.quantizedDimension = axis
            t.quantization = qp
        t.buffer = 0
        if data is not None:
            b = s.BufferT()
            b.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8).copy()
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, name, ins, outs, options=None):
        s = self.s
        code = getattr(s.BuiltinOperator, name)
        if code not in self.codes:
            self.codes.append(code)
        o = s.OperatorT()
        o.opcodeIndex = self.codes.index(code)
        o.inputs, o.outputs = list(ins), list(outs)
        if options is not None:
            kind = type(options).__name__[:-1]          # e.g. Conv2DOptionsT -> Conv2DOptions
            o.builtinOptionsType = getattr(s.BuiltinOptions, kind)
            o.builtinOptions = options
        self.ops.append(o)

    def options(self, kind, **fields):
        o = getattr(self.s, kind + "T")()
        for k, v in fields.items():
            setattr(o, k, v)
        return o

    def build(self, inputs, outputs) -> bytes:
        import flatbuffers

        s = self.s
        m = s.ModelT()
        m.version = 3
        m.description = b"edgebench engine test"
        m.operatorCodes = []
        for c in self.codes:
            oc = s.OperatorCodeT()
            oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = c, min(c, 127), 1
            m.operatorCodes.append(oc)
        sg = s.SubGraphT()
        sg.tensors, sg.operators, sg.name = self.tensors, self.ops, b"main"
        sg.inputs, sg.outputs = list(inputs), list(outputs)
        m.subgraphs, m.buffers = [sg], self.buffers
        b = flatbuffers.Builder(4096)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def _out_size(n, k, s, d, same):
    eff = (k - 1) * d + 1
    return (n + s - 1) // s if same else (n + s - eff) // s


def _act(rng):
    return int(rng.choice([0, 1, 2, 3]))


def synth_conv(rng, depthwise: bool):
    while True:
        h, w, c = int(rng.integers(1, 11)), int(rng.integers(1, 11)), int(rng.integers(1, 7))
        kh, kw = (int(v) for v in rng.integers(1, 5, 2))
        sh, sw = (int(v) for v in rng.integers(1, 4, 2))
        dh, dw = (int(rng.choice([1, 1, 2])) for _ in range(2))
        same = bool(rng.integers(0, 2))
        oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
        if oh >= 1 and ow >= 1:
            break
    mult = int(rng.integers(1, 3)) if depthwise else 1
    oc = c * mult if depthwise else int(rng.integers(1, 13))
    n = int(rng.choice([1, 1, 2]))
    in_s, in_z = float(10 ** rng.uniform(-2.5, 0)), int(rng.integers(-128, 128))
    per_channel = bool(rng.integers(0, 2))
    ws = 10 ** rng.uniform(-3, -1, size=oc if per_channel else 1)
    return conv_model(rng, n=n, h=h, w=w, c=c, kh=kh, kw=kw, oc=oc, sh=sh, sw=sw, dh=dh, dw=dw, same=same,
                      in_s=in_s, in_z=in_z, ws=ws, act=_act(rng), depthwise=depthwise, mult=mult)


def conv_model(rng, *, n, h, w, c, kh, kw, oc, sh, sw, dh, dw, same, in_s, in_z, ws, act, depthwise, mult,
               spread=60, relu_at_min=False):
    """One CONV_2D or DEPTHWISE_CONV_2D with random int8 weights and bias: (tflite bytes, input
    elements). ``ws``: the weight scales (one, or one per output channel); the output scale follows
    the accumulator's spread (``spread``: the typical |input - zero point|); ``relu_at_min`` puts the
    output zero point at -128 under ReLU (the saturating path)."""
    g = TinyModel()
    oh, ow = _out_size(h, kh, sh, dh, same), _out_size(w, kw, sw, dw, same)
    wshape = (1, kh, kw, oc) if depthwise else (oc, kh, kw, c)
    wq = rng.integers(-127, 128, size=wshape).astype(np.int8)
    k_taps = kh * kw * (1 if depthwise else c)
    bias = rng.integers(-3000, 3000, size=oc).astype(np.int32)
    acc_std = np.sqrt(k_taps) * 73 * spread * in_s * float(np.median(ws))
    out_s = 1 / 100 if act == 2 else float(acc_std * 3 / 127)
    out_z = -128 if (relu_at_min and act == 1) else int(rng.integers(-30, 30))
    x = g.tensor((n, h, w, c), scale=in_s, zp=in_z)
    wt = g.tensor(wshape, scale=ws, zp=np.zeros(len(ws), int), data=wq, axis=3 if depthwise else 0)
    bt = g.tensor((oc,), "int32", scale=in_s * ws, zp=np.zeros(len(ws), int), data=bias)
    y = g.tensor((n, oh, ow, oc), scale=out_s, zp=out_z)
    fields = dict(padding=0 if same else 1, strideH=sh, strideW=sw, dilationHFactor=dh,
                  dilationWFactor=dw, fusedActivationFunction=act)
    if depthwise:
        g.op("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
             g.options("DepthwiseConv2DOptions", depthMultiplier=mult, **fields))
    else:
        g.op("CONV_2D", [x, wt, bt], [y], g.options("Conv2DOptions", **fields))
    return g.build([x], [y]), n * h * w * c


def synth_fc(rng, *, batch=None, depth=None, units=None, per_channel=None, act=None):
    """A random FULLY_CONNECTED model; the keywords fix its shape, scales and activation."""
    g = TinyModel()
    batch = int(rng.integers(1, 4)) if batch is None else batch
    depth = int(rng.integers(1, 50)) if depth is None else depth
    units = int(rng.integers(1, 13)) if units is None else units
    in_s, in_z = float(10 ** rng.uniform(-2.5, 0)), int(rng.integers(-128, 128))
    per_channel = bool(rng.integers(0, 2)) if per_channel is None else per_channel
    ws = 10 ** rng.uniform(-3, -1, size=units if per_channel else 1)
    act = _act(rng) if act is None else act
    out_s = 1 / 100 if act == 2 else float(np.sqrt(depth) * 73 * 60 * in_s * np.median(ws) * 3 / 127)
    x = g.tensor((batch, depth), scale=in_s, zp=in_z)
    wt = g.tensor((units, depth), scale=ws, zp=np.zeros(len(ws), int),
                  data=rng.integers(-127, 128, size=(units, depth)).astype(np.int8))
    has_bias = bool(rng.integers(0, 4))
    bt = g.tensor((units,), "int32", scale=in_s * ws, zp=np.zeros(len(ws), int),
                  data=rng.integers(-3000, 3000, size=units).astype(np.int32)) if has_bias else -1
    y = g.tensor((batch, units), scale=out_s, zp=int(rng.integers(-30, 30)))
    g.op("FULLY_CONNECTED", [x, wt, bt], [y],
         g.options("FullyConnectedOptions", fusedActivationFunction=act))
    return g.build([x], [y]), batch * depth


def synth_pool(rng, kind: str):
    g = TinyModel()
    while True:
        h, w, c = int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 6))
        kh, kw, sh, sw = (int(v) for v in rng.integers(1, 4, 4))
        same = bool(rng.integers(0, 2))
        oh, ow = _out_size(h, kh, sh, 1, same), _out_size(w, kw, sw, 1, same)
        if oh >= 1 and ow >= 1:
            break
    s_, z_ = float(10 ** rng.uniform(-2, 0)), int(rng.integers(-128, 128))
    act = _act(rng)
    x = g.tensor((1, h, w, c), scale=s_, zp=z_)
    y = g.tensor((1, oh, ow, c), scale=s_, zp=z_)
    g.op(kind, [x], [y], g.options("Pool2DOptions", padding=0 if same else 1, strideH=sh, strideW=sw,
                                   filterHeight=kh, filterWidth=kw, fusedActivationFunction=act))
    return g.build([x], [y]), h * w * c


def synth_add(rng):
    g = TinyModel()
    h, w, c = int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    out_shape = (1, h, w, c)
    other = [out_shape, (1, 1, 1, c), (c,), (1, h, 1, 1), (1, h, w, 1)][int(rng.integers(0, 5))]
    s1, s2 = float(10 ** rng.uniform(-2, 0)), float(10 ** rng.uniform(-2, 0))
    act = _act(rng)
    so = 1 / 100 if act == 2 else (s1 + s2) * float(rng.uniform(0.7, 1.5))
    x = g.tensor(out_shape, scale=s1, zp=int(rng.integers(-128, 128)))
    const = bool(rng.integers(0, 2))
    data = rng.integers(-128, 128, size=other).astype(np.int8) if const else None
    b = g.tensor(other, scale=s2, zp=int(rng.integers(-128, 128)), data=data)
    y = g.tensor(out_shape, scale=so, zp=int(rng.integers(-20, 20)))
    g.op("ADD", [x, b], [y], g.options("AddOptions", fusedActivationFunction=act))
    if const:
        return g.build([x], [y]), h * w * c
    return _add_two_branches(rng, out_shape, s1, s2, so, act)


def _add_two_branches(rng, out_shape, s1, s2, so, act):
    """ADD of two activations: x and an average pool of x (a second branch)."""
    g = TinyModel()
    h, w, c = out_shape[1:]
    z1 = int(rng.integers(-128, 128))
    x = g.tensor(out_shape, scale=s1, zp=z1)
    p = g.tensor(out_shape, scale=s1, zp=z1)
    g.op("AVERAGE_POOL_2D", [x], [p], g.options("Pool2DOptions", padding=0, strideH=1, strideW=1,
                                                filterHeight=3, filterWidth=2))
    # rescale the branch through a 1x1 depthwise conv so the two inputs differ in scale
    wt = g.tensor((1, 1, 1, c), scale=np.full(c, 0.01), zp=np.zeros(c, int), axis=3,
                  data=rng.integers(50, 127, size=(1, 1, 1, c)).astype(np.int8))
    bt = g.tensor((c,), "int32", scale=np.full(c, s1 * 0.01), zp=np.zeros(c, int),
                  data=rng.integers(-500, 500, size=c).astype(np.int32))
    q = g.tensor(out_shape, scale=s2, zp=int(rng.integers(-30, 30)))
    g.op("DEPTHWISE_CONV_2D", [p, wt, bt], [q],
         g.options("DepthwiseConv2DOptions", padding=1, strideH=1, strideW=1, depthMultiplier=1))
    y = g.tensor(out_shape, scale=so, zp=int(rng.integers(-20, 20)))
    g.op("ADD", [q, x], [y], g.options("AddOptions", fusedActivationFunction=act))
    return g.build([x], [y]), h * w * c


def synth_softmax(rng):
    g = TinyModel()
    shape = [(1, int(rng.integers(2, 40))), (1, 3, 2, int(rng.integers(2, 12)))][int(rng.integers(0, 2))]
    in_s = float(10 ** rng.uniform(-3, 0.5))
    x = g.tensor(shape, scale=in_s, zp=int(rng.integers(-128, 128)))
    y = g.tensor(shape, scale=1 / 256, zp=-128)
    g.op("SOFTMAX", [x], [y], g.options("SoftmaxOptions", beta=float(rng.choice([1.0, 0.5, 2.0, 1.7]))))
    return g.build([x], [y]), int(np.prod(shape))


def synth_chain(rng):
    """conv -> reshape -> fully connected -> softmax, coherent scales."""
    g = TinyModel()
    x = g.tensor((1, 6, 5, 2), scale=0.02, zp=-5)
    wq = rng.integers(-127, 128, size=(4, 3, 3, 2)).astype(np.int8)
    wt = g.tensor(wq.shape, scale=np.full(4, 0.01), zp=np.zeros(4, int), data=wq)
    bt = g.tensor((4,), "int32", scale=np.full(4, 0.0002), zp=np.zeros(4, int),
                  data=rng.integers(-500, 500, size=4).astype(np.int32))
    c = g.tensor((1, 3, 3, 4), scale=0.05, zp=-128)
    g.op("CONV_2D", [x, wt, bt], [c], g.options("Conv2DOptions", padding=0, strideH=2, strideW=2,
                                                 fusedActivationFunction=1))
    shp = g.tensor((2,), "int32", data=np.array([1, 36], np.int32))
    r = g.tensor((1, 36), scale=0.05, zp=-128)
    g.op("RESHAPE", [c, shp], [r], g.options("ReshapeOptions", newShape=[1, 36]))
    fw = rng.integers(-127, 128, size=(8, 36)).astype(np.int8)
    ft = g.tensor(fw.shape, scale=0.01, zp=0, data=fw)
    f = g.tensor((1, 8), scale=0.2, zp=3)
    g.op("FULLY_CONNECTED", [r, ft, -1], [f], g.options("FullyConnectedOptions"))
    y = g.tensor((1, 8), scale=1 / 256, zp=-128)
    g.op("SOFTMAX", [f], [y], g.options("SoftmaxOptions", beta=1.0))
    return g.build([x], [y]), 60


SYNTH = {"conv": lambda r: synth_conv(r, False), "depthwise": lambda r: synth_conv(r, True),
         "fully_connected": synth_fc, "max_pool": lambda r: synth_pool(r, "MAX_POOL_2D"),
         "average_pool": lambda r: synth_pool(r, "AVERAGE_POOL_2D"), "add": synth_add,
         "softmax": synth_softmax, "chain": synth_chain}
SYNTH_MODELS_PER_KIND = 12


@pytest.mark.parametrize("kind", sorted(SYNTH))
def test_synthetic_models_bit_exact(build, tmp_path, kind):
    rng = np.random.default_rng(sorted(SYNTH).index(kind) + 100)
    jobs, blobs = [], []
    for k in range(SYNTH_MODELS_PER_KIND):
        model, n_in = SYNTH[kind](rng)
        path = tmp_path / f"{kind}{k}.tflite"
        path.write_bytes(model)
        x = rng.integers(-128, 128, size=(8, n_in)).astype(np.int8)
        jobs.append((path, x))
        blobs.append(convert(path))
    refs = run_reference(jobs, tmp_path / "ref")
    for k, ((_path, x), blob, ref) in enumerate(zip(jobs, blobs, refs)):
        dev = run_engine(build, blob.data, x, tmp_path / f"dev{k}", layers=True)
        assert_bit_exact(f"{kind} model {k}", ref, dev, len(x))


# ---- Keras models converted to full INT8 (needs TensorFlow) ----------------------

#: the child script's start: imports, seeds and save(name, model, input shape) writing
#: <out>/<name>.tflite as full INT8 with a random calibration set (also used by test_firmware_ops)
TF_PRELUDE = textwrap.dedent("""
    import json, os, sys
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import numpy as np
    import tensorflow as tf
    out = sys.argv[1]
    tf.keras.utils.set_random_seed(1234)
    L = tf.keras.layers
    rng = np.random.default_rng(1234)

    def save(name, model, shape, per_tensor_dense=False):
        rep = rng.normal(size=(100,) + shape).astype(np.float32)
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([r[None]] for r in rep)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
        if per_tensor_dense:
            conv._experimental_disable_per_channel_quantization_for_dense_layers = True
        with open(os.path.join(out, name + ".tflite"), "wb") as f:
            f.write(conv.convert())

""")

TF_SCRIPT = TF_PRELUDE + textwrap.dedent("""
    # geometry: SAME/VALID, stride 2, dilation 2, depth multiplier 2, RELU6,
    # non-square kernels and pools, pooling with padding, 1x1 conv, dense
    i = L.Input((15, 12, 3), batch_size=1)
    x = L.Conv2D(8, (3, 1), strides=2, padding="same", activation="relu6")(i)
    x = L.DepthwiseConv2D((3, 3), depth_multiplier=2, dilation_rate=2, padding="same")(x)
    x = L.Conv2D(6, (2, 3), dilation_rate=(2, 1), padding="valid", activation="relu")(x)
    x = L.MaxPooling2D((2, 3), strides=(1, 2), padding="same")(x)
    x = L.AveragePooling2D((3, 3), strides=1, padding="same")(x)
    x = L.Conv2D(4, 1)(x)
    x = L.AveragePooling2D((2, 2), strides=2, padding="valid")(x)
    x = L.Flatten()(x)
    x = L.Dense(7)(x)
    save("geometry", tf.keras.Model(i, x), (15, 12, 3))

    # two branches added (different scales), fused ReLU, softmax head
    i = L.Input((10, 10, 4), batch_size=1)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(i)
    b1 = L.Conv2D(8, 3, strides=1, padding="same")(x)
    b2 = L.DepthwiseConv2D(3, padding="same")(x)
    x = L.ReLU()(L.Add()([b1, b2]))
    x = L.Conv2D(12, 3, strides=2, padding="valid", activation="relu6")(x)
    x = L.AveragePooling2D(4)(x)
    x = L.Flatten()(x)
    x = L.Dense(5)(x)
    x = L.Softmax()(x)
    save("residual", tf.keras.Model(i, x), (10, 10, 4))

    # a small MLP with per-tensor dense weights
    i = L.Input((20,), batch_size=1)
    x = L.Dense(32, activation="relu")(i)
    x = L.Dense(16, activation="relu6")(x)
    x = L.Dense(6)(x)
    save("mlp", tf.keras.Model(i, x), (20,), per_tensor_dense=True)
""")


def test_keras_models_bit_exact(build, tmp_path):
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:
        missing("tensorflow is not installed (pip install edgebench[quantize])")
    r = subprocess.run([sys.executable, "-c", TF_SCRIPT, str(tmp_path)], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, f"building the Keras models failed: {r.stderr[-3000:]}"
    names = ["geometry", "residual", "mlp"]
    covered = check_models(build, tmp_path, {name: tmp_path / f"{name}.tflite" for name in names})
    assert covered == set(ENGINE_OPS[1])     # engine version 2's operators: test_firmware_ops.py


# ---- errors ----------------------------------------------------------------------

def _with_opcode(model: Path, old: str, new: str) -> bytes:
    """The model with every `old` operator turned into `new` (schema object API)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(model.read_bytes()), 0)
    for code in m.operatorCodes:
        if max(code.builtinCode, code.deprecatedBuiltinCode) == getattr(s.BuiltinOperator, old):
            code.builtinCode = code.deprecatedBuiltinCode = getattr(s.BuiltinOperator, new)
    b = flatbuffers.Builder(1 << 16)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_unsupported_operator_is_named_at_conversion(tmp_path):
    path = tmp_path / "gather.tflite"
    path.write_bytes(_with_opcode(DIGITS, "SOFTMAX", "GATHER"))
    with pytest.raises(ModelError) as err:
        convert(path)
    text = err.value.one_line()
    assert "GATHER" in text and "not supported" in text
    for op in SUPPORTED_OPS:
        assert op in text


def _eb_run_status(build: Path, blob: bytes, tmp: Path, *extra) -> tuple:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "m.ebm").write_bytes(blob)
    (tmp / "in.bin").write_bytes(bytes(64))
    r = subprocess.run([str(build / "eb_run"), *extra, str(tmp / "m.ebm"), str(tmp / "in.bin"), "1",
                        str(tmp / "out.bin")], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stderr.strip()


def _recrc(blob: bytearray) -> bytes:
    struct.pack_into("<I", blob, 12, zlib.crc32(bytes(blob[16:])))
    return bytes(blob)


def test_engine_runs_exactly_the_operators_of_the_table(build, tmp_path):
    """The firmware's dispatch and the host's converter read one table (firmware/core/eb_ops.def):
    the built engine refuses as unsupported every operator code the host table lacks, and no
    other (a code it has fails the operator's own checks on these bytes, or passes)."""
    from edgebench.mcu.ops import OPS

    good = convert(DIGITS).data
    layers_off = struct.unpack_from("<I", good, 24)[0]
    refused = set()
    for code in range(256):
        b = bytearray(good)
        b[layers_off] = code
        status, err = _eb_run_status(build, _recrc(b), tmp_path / "op")
        if "unsupported operator code" in err:
            assert status == 3 and f"code {code} (layer 0)" in err, err
            refused.add(code)
    assert refused == set(range(256)) - set(OPS.values())


def test_engine_refuses_bad_blobs(build, tmp_path):
    good = convert(DIGITS).data
    assert _eb_run_status(build, good, tmp_path / "ok") == (0, "")

    cases = {}
    b = bytearray(good)
    b[0:4] = b"TFL3"
    cases["bad-magic"] = bytes(b)
    b = bytearray(good)
    struct.pack_into("<H", b, 4, 2)                 # format 2: 1x1 CONV_2D weights not biased
    cases["bad-version"] = bytes(b)
    b = bytearray(good)
    b[-5] ^= 0x40                                   # a weight or parameter byte
    cases["bad-crc"] = bytes(b)
    cases["truncated"] = good[:-100]
    b = bytearray(good)
    layers_off = struct.unpack_from("<I", b, 24)[0]
    b[layers_off] = 36                              # GATHER in the first layer record
    cases["unsupported-op"] = _recrc(b)
    b = bytearray(good)
    tensors_off = struct.unpack_from("<I", b, 20)[0]
    struct.pack_into("<I", b, tensors_off + 20, 1 << 30)   # input tensor far outside the arena
    cases["invalid"] = _recrc(b)
    for status, blob in cases.items():
        code, err = _eb_run_status(build, blob, tmp_path / status)
        assert code == 3 and f"eb_model_init: {status}:" in err, (status, code, err)
    assert "version 3" in _eb_run_status(build, cases["bad-version"], tmp_path / "v")[1]
    assert "CRC" in _eb_run_status(build, cases["bad-crc"], tmp_path / "c")[1]


def test_engine_refuses_a_too_small_arena(build, tmp_path):
    blob = convert(DIGITS)
    need = blob.peak_arena_bytes
    code, err = _eb_run_status(build, blob.data, tmp_path / "small", "--arena", str(need - 4))
    assert code == 3 and "arena-too-small" in err
    assert f"needs {need} bytes, have {need - 4}" in err
    code, out = _eb_run_status(build, blob.data, tmp_path / "exact", "--arena", str(need))
    assert code == 0
