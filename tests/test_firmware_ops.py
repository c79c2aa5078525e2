"""Operators of engine version 2, bit-exact with LiteRT's reference kernels.

Keras models built here with seeded random weights (a CNN with
GlobalAveragePooling2D -> MEAN, a MobileNetV2-style inverted residual block
-> PAD/RELU6/ADD, a squeeze-excite block -> MEAN keep_dims/MUL broadcast, a
two-branch model -> CONCATENATION (with the QUANTIZE ops the converter inserts),
SUB, MAXIMUM, MINIMUM, LEAKY_RELU, RELU, PADV2, SQUEEZE/EXPAND_DIMS), quantized to
full INT8 with a random calibration set, run on the engine (eb_run, posix build)
and compared byte for byte, layer by layer, with BUILTIN_REF in a child
process. Plus synthetic single-operator models with random quantization (no
TensorFlow) for the arithmetic edge cases, and the refusal of a model that still
uses an unsupported operator (named with its layer and tensor).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import missing
from test_firmware_engine import (  # noqa: F401
    TF_PRELUDE,
    TinyModel,
    _act,
    assert_bit_exact,
    build,
    check_models,
    run_engine,
    run_reference,
)

from edgebench.errors import ModelError
from edgebench.mcu import convert
from edgebench.mcu.ops import ENGINE_OPS

TF_SCRIPT = TF_PRELUDE + textwrap.dedent("""
    # a small CNN with a global average pooling head (MEAN, keep_dims false)
    # and a zero padding before an average pool (PAD), the input concatenated
    # with a convolution of it (the converter requantizes with QUANTIZE)
    i = L.Input((12, 12, 3), batch_size=1)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(i)
    x = L.Concatenate()([i, x])
    x = L.ZeroPadding2D(1)(x)
    x = L.AveragePooling2D(2)(x)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(5)(x)
    save("gap", tf.keras.Model(i, x), (12, 12, 3))

    # MobileNetV2-style inverted residual blocks: expand, ZeroPadding + strided
    # depthwise (PAD), ReLU6, project, residual ADD
    i = L.Input((16, 16, 8), batch_size=1)
    x = L.Conv2D(24, 1, activation="relu6")(i)
    x = L.ZeroPadding2D(((0, 1), (0, 1)))(x)
    x = L.DepthwiseConv2D(3, strides=2, padding="valid")(x)
    x = L.ReLU(6.0)(x)
    x = L.Conv2D(8, 1)(x)
    y = L.Conv2D(32, 1)(x)
    y = L.ReLU(6.0)(y)
    y = L.DepthwiseConv2D(3, padding="same", activation="relu6")(y)
    y = L.Conv2D(8, 1)(y)
    x = L.Add()([x, y])
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(4)(x)
    save("mbv2", tf.keras.Model(i, x), (16, 16, 8))

    # squeeze-excite: MEAN keep_dims over H, W, a gate through ReLU / ReLU6,
    # channel-wise MUL broadcast over H and W
    i = L.Input((10, 10, 12), batch_size=1)
    x = L.Conv2D(12, 3, padding="same", activation="relu")(i)
    g = L.GlobalAveragePooling2D(keepdims=True)(x)
    g = L.Conv2D(4, 1, activation="relu")(g)
    g = L.Conv2D(12, 1, activation="relu6")(g)
    x = L.Multiply()([x, g])
    x = L.Conv2D(6, 3, strides=2)(x)
    x = L.Flatten()(x)
    x = L.Dense(5)(x)
    save("se", tf.keras.Model(i, x), (10, 10, 12))

    # two branches: concatenation (with requantizing QUANTIZE ops), subtract,
    # maximum, minimum, leaky relu, a standalone relu, a constant pad, reshapes
    i = L.Input((8, 8, 4), batch_size=1)
    a = L.Conv2D(6, 3, padding="same")(i)
    b = L.Conv2D(6, 1)(i)
    b = L.LeakyReLU(0.2)(b)
    d = L.Subtract()([a, b])
    m = L.Maximum()([a, b])
    n = L.Minimum()([a, d])
    x = L.Concatenate()([d, m, n, a])     # four inputs: the record's slots, then p[]
    x = L.ReLU()(x)
    x = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 2], [2, 1], [0, 0]], constant_values=0.5))(x)
    x = L.Conv2D(8, 3, strides=2)(x)
    x = L.Lambda(lambda t: tf.expand_dims(tf.reduce_mean(t, axis=[1, 2]), 1))(x)
    x = L.Lambda(lambda t: tf.squeeze(t, axis=1))(x)
    x = L.Dense(6)(x)
    save("branches", tf.keras.Model(i, x), (8, 8, 4))

    # EfficientNet / MobileNetV3 style: swish (LOGISTIC, MUL), hard swish, a sigmoid
    # squeeze-excite gate, tanh
    i = L.Input((12, 12, 8), batch_size=1)
    x = L.Conv2D(16, 1)(i)
    x = L.Activation("swish")(x)
    x = L.DepthwiseConv2D(3, padding="same")(x)
    x = L.Activation("hard_swish")(x)
    g = L.GlobalAveragePooling2D(keepdims=True)(x)
    g = L.Conv2D(4, 1, activation="relu")(g)
    g = L.Conv2D(16, 1, activation="sigmoid")(g)
    x = L.Multiply()([x, g])
    x = L.Conv2D(8, 1)(x)
    x = L.Activation("tanh")(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(5)(x)
    save("effnet", tf.keras.Model(i, x), (12, 12, 8))

    # a small U-Net: encoder, transposed-convolution and resize decoders, skip concatenation
    i = L.Input((16, 16, 3), batch_size=1)
    e1 = L.Conv2D(8, 3, padding="same", activation="relu")(i)
    p1 = L.MaxPooling2D(2)(e1)
    e2 = L.Conv2D(16, 3, padding="same", activation="relu")(p1)
    p2 = L.MaxPooling2D(2)(e2)
    b = L.Conv2D(16, 3, padding="same", activation="relu")(p2)
    u2 = L.Conv2DTranspose(16, 3, strides=2, padding="same")(b)
    d2 = L.Conv2D(16, 3, padding="same", activation="relu")(L.Concatenate()([u2, e2]))
    u1 = L.Resizing(16, 16, interpolation="bilinear")(d2)
    n1 = L.Resizing(16, 16, interpolation="nearest")(d2)
    d1 = L.Conv2D(8, 3, padding="same", activation="relu")(L.Concatenate()([u1, n1, e1]))
    save("unet", tf.keras.Model(i, L.Conv2D(2, 1)(d1)), (16, 16, 3))

    # transposed convolutions with batch normalisation and ReLU after them: the converter folds
    # the normalisation and fuses the ReLU into TRANSPOSE_CONV (issue 24: refused before)
    i = L.Input((12, 12, 3), batch_size=1)
    x = L.Conv2D(8, 3, padding="same")(i)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    x = L.Conv2DTranspose(8, 3, strides=2, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    x = L.Conv2DTranspose(6, 2, strides=2, padding="valid")(x)
    x = L.BatchNormalization()(x)
    x = L.ReLU(6.0)(x)
    save("tconv_bn_relu", tf.keras.Model(i, L.Conv2D(4, 1)(x)), (12, 12, 3))

    # Keras applications with random weights, batch 1 (so Reshape needs no SHAPE/PACK)
    A = tf.keras.applications
    app = dict(weights=None, classes=10, classifier_activation=None)
    inp = lambda n: tf.keras.Input((n, n, 3), batch_size=1)
    save("mobilenet_v1", A.MobileNet(input_tensor=inp(96), alpha=0.25, **app), (96, 96, 3))
    save("mobilenet_v2", A.MobileNetV2(input_tensor=inp(96), alpha=0.35, **app), (96, 96, 3))
    save("mobilenet_v3s", A.MobileNetV3Small(input_tensor=inp(96), alpha=0.75, **app), (96, 96, 3))
    save("efficientnet_b0", A.EfficientNetB0(input_tensor=inp(64), **app), (64, 64, 3))

    # still unsupported: a channel gather (GATHER)
    i = L.Input((4, 6), batch_size=1)
    x = L.Dense(6)(i)
    x = L.Lambda(lambda t: tf.gather(t, [2, 0, 1, 5], axis=-1), name="gate")(x)
    save("gather", tf.keras.Model(i, L.Dense(3)(L.Flatten()(x))), (4, 6))
""")

KERAS = ["gap", "mbv2", "se", "branches", "effnet", "unet", "tconv_bn_relu"]
pytestmark = pytest.mark.slow      # builds the engine with make; the Keras tests also need TensorFlow


@pytest.fixture(scope="module")
def keras_models(tmp_path_factory):
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:
        missing("tensorflow is not installed (pip install edgebench[quantize])")
    out = tmp_path_factory.mktemp("keras-ops")
    r = subprocess.run([sys.executable, "-c", TF_SCRIPT, str(out)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, f"building the Keras models failed: {r.stderr[-3000:]}"
    return out


@pytest.mark.tensorflow
def test_keras_models_with_new_operators_bit_exact(build, keras_models, tmp_path):  # noqa: F811
    covered = check_models(build, tmp_path, {name: keras_models / f"{name}.tflite" for name in KERAS})
    # the models exercise these operators of engine version 2 (as the reference names them)
    need = {"MEAN", "PAD", "MUL", "SUB", "MAXIMUM", "MINIMUM", "CONCATENATION", "LEAKY_RELU",
            "RELU", "LOGISTIC", "HARD_SWISH", "TANH", "TRANSPOSE_CONV", "RESIZE_BILINEAR",
            "RESIZE_NEAREST_NEIGHBOR"}   # QUANTIZE: the synthetic models below
    assert need <= covered, f"not exercised: {sorted(need - covered)}"


APPS = ["mobilenet_v1", "mobilenet_v2", "mobilenet_v3s", "efficientnet_b0"]


@pytest.mark.tensorflow
def test_keras_applications_bit_exact(build, keras_models, tmp_path):  # noqa: F811
    """MobileNetV1 (alpha 0.25), V2 (0.35), V3-Small (0.75, with its preprocessing and hard
    swish) at 96x96 and EfficientNet-B0 at 64x64, every layer's bytes. Random weights without
    trained batch-norm statistics make the last layers of the MobileNets nearly constant, so
    the per-layer comparison is what carries the weight here."""
    ops = check_models(build, tmp_path, {name: keras_models / f"{name}.tflite" for name in APPS},
                       seed=100, n=6, distinct=False)
    assert {"HARD_SWISH", "LOGISTIC", "MEAN", "MUL", "ADD"} <= ops
    # the fit check before upload (deploy puts the blob in RAM): the two larger blobs exceed the
    # emulated boards' 1 MiB model buffer. A board with a firmware port also offers the flash
    # placement (the blob linked into the image, read in place from MPS2's 4 MiB code memory), so
    # MobileNetV3-Small fits - `ok` is "fits in one placement" - and deploy says to link it in.
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import FLASH_PLACEMENT, RAM_PLACEMENT, check_fit

    m7 = get_profile("qemu-m7")
    fits = {name: check_fit(keras_models / f"{name}.tflite", m7) for name in APPS}
    assert fits["mobilenet_v2"].fits_in(RAM_PLACEMENT) and fits["mobilenet_v1"].fits_in(RAM_PLACEMENT)
    fit = fits["mobilenet_v3s"]
    assert not fit.fits_in(RAM_PLACEMENT) and not fit.missing
    assert [(c.what, c.placement) for c in fit.checks if not c.fits] == [("model buffer", RAM_PLACEMENT)]
    assert fit.fits_in(FLASH_PLACEMENT) and fit.ok
    assert "edgebench flash --board qemu-m7" in fit.hint(RAM_PLACEMENT)
    # EfficientNet-B0's blob (4.2 MiB) is larger than the AN500's 4 MiB code memory the image is linked
    # into (boards/qemu-m7.yaml): it fits no placement, and the refusal says so before building
    fit = fits["efficientnet_b0"]
    assert fit.blob_bytes > 4 << 20 and not fit.ok and not fit.missing
    assert ("flash", FLASH_PLACEMENT) in [(c.what, c.placement) for c in fit.checks if not c.fits]


def fused_activations(path) -> list:
    """(operator, fused activation) of every operator of a .tflite model that has options."""
    from ai_edge_litert import schema_py_generated as s

    from edgebench.modelfile import op_names, operator_name

    m = s.ModelT.InitFromPackedBuf(bytearray(path.read_bytes()), 0)
    return [(operator_name(m.operatorCodes[op.opcodeIndex], op_names()),
             int(getattr(op.builtinOptions, "fusedActivationFunction", 0) or 0))
            for op in m.subgraphs[0].operators]


@pytest.mark.tensorflow
def test_transpose_conv_with_a_fused_relu_bit_exact(build, keras_models, tmp_path):  # noqa: F811
    """A Keras Conv2DTranspose, batch normalisation and ReLU: the converter fuses the ReLU (and
    the ReLU6) into TRANSPOSE_CONV. The engine clamps after requantisation, as LiteRT's
    reference does: every layer's bytes equal BUILTIN_REF's."""
    model = keras_models / "tconv_bn_relu.tflite"
    fused = [a for op, a in fused_activations(model) if op == "TRANSPOSE_CONV"]
    assert fused and all(fused) and len(set(fused)) == 2, f"the converter did not fuse both: {fused}"
    blob = convert(model)
    assert [x["op"] for x in blob.layers].count("TRANSPOSE_CONV") == 2
    check_models(build, tmp_path, {"tconv_bn_relu": model}, n=20)


@pytest.mark.qemu
@pytest.mark.tensorflow
def test_transpose_conv_with_a_fused_relu_bit_exact_on_qemu_m4(keras_models):
    """The same model on the Cortex-M4 build (DSP kernel set) under QEMU, through `verify`."""
    from conftest import require_tool

    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile

    for tool in ("make", "arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    r = run_verify(keras_models / "tconv_bn_relu.tflite", get_profile("qemu-m4"), VerifyOptions(count=8, seed=5))
    assert r.bit_exact, f"not bit-exact on qemu-m4: {r.to_dict()['outputs'][:2]}"


@pytest.mark.tensorflow
def test_unsupported_operator_named_with_its_layer(keras_models):
    with pytest.raises(ModelError) as err:
        convert(keras_models / "gather.tflite")
    text = err.value.one_line()
    assert "GATHER (layer " in text and "gate" in text, text
    assert "MEAN" in text     # the supported set is listed


@pytest.mark.qemu
@pytest.mark.tensorflow
def test_keras_models_bit_exact_on_qemu_m7(keras_models):
    """The same models on the Cortex-M7 build under QEMU, through `verify`'s path (upload,
    load, infer, compare with BUILTIN_REF on the host)."""
    from conftest import require_tool

    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile

    for tool in ("make", "arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    profile = get_profile("qemu-m7")
    with open_client(profile) as client:
        for name in KERAS + ["mobilenet_v2"]:
            r = run_verify(keras_models / f"{name}.tflite", profile, VerifyOptions(count=6, seed=11),
                           client=client)
            assert r.bit_exact, f"{name} on qemu-m7 is not bit-exact: {r.to_dict()['outputs'][:2]}"


def test_engine_versions_list_their_operators():
    assert set(ENGINE_OPS[1]) < set(ENGINE_OPS[2])
    assert "MEAN" not in ENGINE_OPS[1] and "MEAN" in ENGINE_OPS[2] and "CONV_2D" in ENGINE_OPS[1]


# ---- synthetic single-operator models (random quantization, no TensorFlow) ----

def _q(rng):
    return float(10 ** rng.uniform(-2, 0)), int(rng.integers(-128, 128))


def synth_binary(rng, op: str):
    g = TinyModel()
    h, w, c = (int(v) for v in rng.integers(1, 6, 3))
    out_shape = (1, h, w, c)
    other = [out_shape, (1, 1, 1, c), (c,), (1, h, 1, 1), (1, h, w, 1)][int(rng.integers(0, 5))]
    (s1, z1), (s2, z2) = _q(rng), _q(rng)
    act = int(rng.choice([0, 1, 3])) if op in ("SUB", "MUL") else 0
    so = {"MUL": s1 * s2 * 128 * float(rng.uniform(0.3, 2)), "SUB": (s1 + s2) * float(rng.uniform(0.7, 1.5))
          }.get(op, s1)
    x = g.tensor(out_shape, scale=s1, zp=z1)
    b = g.tensor(other, scale=s2, zp=z2, data=rng.integers(-128, 128, size=other).astype(np.int8))
    y = g.tensor(out_shape, scale=so, zp=int(rng.integers(-20, 20)))
    opts = {"SUB": ("SubOptions", dict(fusedActivationFunction=act)),
            "MUL": ("MulOptions", dict(fusedActivationFunction=act))}.get(op)
    g.op(op, [x, b], [y], g.options(opts[0], **opts[1]) if opts else None)
    return g.build([x], [y]), h * w * c


def synth_unary(rng, op: str):
    g = TinyModel()
    shape = tuple(int(v) for v in rng.integers(1, 7, int(rng.integers(1, 5))))
    (s1, z1), (so, zo) = _q(rng), _q(rng)
    x = g.tensor(shape, scale=s1, zp=z1)
    y = g.tensor(shape, scale=so, zp=zo)
    opts = g.options("LeakyReluOptions", alpha=float(rng.uniform(0.01, 0.9))) if op == "LEAKY_RELU" else None
    g.op(op, [x], [y], opts)
    return g.build([x], [y]), int(np.prod(shape))


def synth_table(rng, op: str):
    """LOGISTIC / TANH / HARD_SWISH on a random quantization (LOGISTIC's output: 1/256, -128)."""
    g = TinyModel()
    shape = (int(rng.integers(1, 3)), 4, 32)       # 8 inputs of >= 128 bytes: every table entry is read
    # HARD_SWISH also at the tiny scales of random-weight MobileNetV3 layers, where the
    # reference's int16 RoundingDivideByPOT by 2^16 and more is not a rounding division
    s1 = float(10 ** rng.uniform(-9 if op == "HARD_SWISH" else -2.5, -0.5))
    z1 = int(rng.integers(-128, 128))
    so, zo = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}.get(
        op, (s1 * float(10 ** rng.uniform(-1.5, 1)), int(rng.integers(-128, 128))))
    x = g.tensor(shape, scale=s1, zp=z1)
    y = g.tensor(shape, scale=so, zp=zo)
    g.op(op, [x], [y])
    return g.build([x], [y]), int(np.prod(shape))


def synth_resize(rng, op: str):
    """Up- and down-sampling with align_corners / half_pixel_centers."""
    g = TinyModel()
    ih, iw, c = (int(v) for v in rng.integers(1, 7, 3))
    oh, ow = (int(v) for v in rng.integers(1, 13, 2))
    align, half = [(False, False), (True, False), (False, True)][int(rng.integers(0, 3))]
    s_, z_ = _q(rng)
    x = g.tensor((1, ih, iw, c), scale=s_, zp=z_)
    size = g.tensor((2,), "int32", data=np.array([oh, ow], np.int32))
    y = g.tensor((1, oh, ow, c), scale=s_, zp=z_)
    kind = "ResizeBilinearOptions" if op == "RESIZE_BILINEAR" else "ResizeNearestNeighborOptions"
    g.op(op, [x, size], [y], g.options(kind, alignCorners=align, halfPixelCenters=half))
    return g.build([x], [y]), ih * iw * c


def synth_tconv(rng):
    """TRANSPOSE_CONV with random stride, kernel, SAME/VALID, per-tensor or per-channel weights and
    a random fused activation (NONE, RELU, RELU_N1_TO_1, RELU6: the clamp after requantisation)."""
    g = TinyModel()
    ih, iw, ic = (int(v) for v in rng.integers(1, 6, 3))
    kh, kw = (int(v) for v in rng.integers(1, 5, 2))
    sh, sw = (int(v) for v in rng.integers(1, 4, 2))
    same = bool(rng.integers(0, 2))
    oh, ow = (ih * sh, iw * sw) if same else ((ih - 1) * sh + kh, (iw - 1) * sw + kw)
    oc = int(rng.integers(1, 7))
    in_s, in_z = _q(rng)
    ws = 10 ** rng.uniform(-3, -1, size=oc if rng.integers(0, 2) else 1)
    out_s = float(np.sqrt(kh * kw * ic) * 73 * 60 * in_s * np.median(ws) * 2 / 127)
    shape = g.tensor((4,), "int32", data=np.array([1, oh, ow, oc], np.int32))
    w = g.tensor((oc, kh, kw, ic), scale=ws, zp=np.zeros(len(ws), int),
                 data=rng.integers(-127, 128, size=(oc, kh, kw, ic)).astype(np.int8))
    x = g.tensor((1, ih, iw, ic), scale=in_s, zp=in_z)
    ins = [shape, w, x]
    if rng.integers(0, 3):
        ins.append(g.tensor((oc,), "int32", scale=in_s * ws, zp=np.zeros(len(ws), int),
                            data=rng.integers(-3000, 3000, size=oc).astype(np.int32)))
    y = g.tensor((1, oh, ow, oc), scale=out_s, zp=int(rng.integers(-20, 20)))
    g.op("TRANSPOSE_CONV", ins, [y], g.options("TransposeConvOptions", padding=0 if same else 1,
                                               strideH=sh, strideW=sw, fusedActivationFunction=_act(rng)))
    return g.build([x], [y]), ih * iw * ic


def synth_gather(rng, op: str):
    """TRANSPOSE (random permutation), SLICE (random begin/size, -1 sizes), STRIDED_SLICE
    (random begin/end/strides including negative ones, begin/end/shrink masks)."""
    g = TinyModel()
    r = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(1, 7, r))
    s_, z_ = _q(rng)
    x = g.tensor(shape, scale=s_, zp=z_)
    dummy = np.arange(int(np.prod(shape))).reshape(shape)
    if op == "TRANSPOSE":
        perm = rng.permutation(r).astype(np.int32)
        out = dummy.transpose(perm)
        consts = [g.tensor((r,), "int32", data=perm)]
        opts = None
    elif op == "SLICE":
        begin = np.array([rng.integers(0, d) for d in shape], np.int32)
        size = np.array([-1 if rng.integers(0, 4) == 0 else rng.integers(1, d - b + 1)
                         for d, b in zip(shape, begin)], np.int32)
        out = dummy[tuple(slice(b, None if n == -1 else b + n) for b, n in zip(begin, size))]
        consts = [g.tensor((r,), "int32", data=begin), g.tensor((r,), "int32", data=size)]
        opts = g.options("SliceOptions")
    else:
        while True:
            begin = np.array([rng.integers(-d - 1, d + 2) for d in shape], np.int32)
            end = np.array([rng.integers(-d - 1, d + 2) for d in shape], np.int32)
            step = np.array([rng.choice([-2, -1, 1, 1, 2, 3]) for _ in shape], np.int32)
            bm, em = int(rng.integers(0, 1 << r)), int(rng.integers(0, 1 << r))
            sm = int(rng.integers(0, 1 << r)) if rng.integers(0, 2) else 0
            index = []
            for k, d in enumerate(shape):
                if sm >> k & 1:     # a shrunk axis: one index (begin_mask: index 0), a positive stride
                    begin[k], step[k] = int(rng.integers(-d, d)), 1
                    index.append(0 if bm >> k & 1 else int(begin[k]))
                else:
                    index.append(slice(None if bm >> k & 1 else int(begin[k]),
                                       None if em >> k & 1 else int(end[k]), int(step[k])))
            out = dummy[tuple(index)]
            if out.size:
                break
        consts = [g.tensor((r,), "int32", data=v) for v in (begin, end, step)]
        opts = g.options("StridedSliceOptions", beginMask=bm, endMask=em, shrinkAxisMask=sm)
    y = g.tensor(out.shape or (1,), scale=s_, zp=z_)
    g.op(op, [x, *consts], [y], opts)
    return g.build([x], [y]), int(np.prod(shape))


def synth_split(rng, op: str):
    """SPLIT into equal parts / SPLIT_V into given sizes (one -1) along a random axis; the
    parts are added back pairwise so the model has one output and every part is used."""
    g = TinyModel()
    r = int(rng.integers(1, 5))
    shape = [int(v) for v in rng.integers(1, 5, r)]
    a = int(rng.integers(0, r))
    n = int(rng.integers(1, 4))
    if op == "SPLIT":
        shape[a] *= n
        sizes = [shape[a] // n] * n
    else:
        shape[a] = int(rng.integers(n, n + 5))
        cuts = sorted(rng.choice(np.arange(1, shape[a]), size=n - 1, replace=False).tolist()) if n > 1 else []
        sizes = [b - c for b, c in zip(cuts + [shape[a]], [0] + cuts)]
    s_, z_ = _q(rng)
    x = g.tensor(shape, scale=s_, zp=z_)
    parts = []
    for k in range(n):
        ps = list(shape)
        ps[a] = sizes[k]
        parts.append(g.tensor(ps, scale=s_, zp=z_))
    axis = g.tensor((1,), "int32", data=np.array([a - r if rng.integers(0, 2) else a], np.int32))
    if op == "SPLIT":
        g.op("SPLIT", [axis, x], parts, g.options("SplitOptions", numSplits=n))
    else:
        given = list(sizes)
        given[int(rng.integers(0, n))] = -1
        sz = g.tensor((n,), "int32", data=np.array(given, np.int32))
        g.op("SPLIT_V", [x, sz, axis], parts, g.options("SplitVOptions", numSplits=n))
    out = parts[0]
    for k in range(1, n):       # a MAXIMUM of the first part with each broadcastable one
        ps = g.tensors[parts[k]].shape
        if list(ps) != list(g.tensors[out].shape):
            continue
        nxt = g.tensor(ps, scale=s_, zp=z_)
        g.op("MAXIMUM", [out, parts[k]], [nxt])
        out = nxt
    return g.build([x], [out]), int(np.prod(shape))


def synth_mean(rng):
    g = TinyModel()
    shape = tuple(int(v) for v in rng.integers(1, 7, 4))
    kind = int(rng.integers(0, 3))       # 0: keep_dims H,W; 1: equal quantization; 2: float path
    axes = [1, 2] if kind == 0 else sorted(rng.choice(4, size=int(rng.integers(1, 4)), replace=False).tolist())
    keep = kind == 0 or bool(rng.integers(0, 2))
    (s1, z1) = _q(rng)
    so, zo = (s1, z1) if kind == 1 else _q(rng)
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in axes)
    x = g.tensor(shape, scale=s1, zp=z1)
    a = g.tensor((len(axes),), "int32", data=np.array(axes, np.int32))
    y = g.tensor(out_shape or (1,), scale=so, zp=zo)
    g.op("MEAN", [x, a], [y], g.options("ReducerOptions", keepDims=keep))
    return g.build([x], [y]), int(np.prod(shape))


def synth_pad(rng):
    g = TinyModel()
    shape = tuple(int(v) for v in rng.integers(1, 6, 4))
    pads = rng.integers(0, 3, size=(4, 2)).astype(np.int32)
    s_, z_ = _q(rng)
    x = g.tensor(shape, scale=s_, zp=z_)
    p = g.tensor((4, 2), "int32", data=pads)
    y = g.tensor(tuple(int(d + pp.sum()) for d, pp in zip(shape, pads)), scale=s_, zp=z_)
    if rng.integers(0, 2):
        v = g.tensor((1,), scale=s_, zp=z_, data=np.array([rng.integers(-128, 128)], np.int8))
        g.op("PADV2", [x, p, v], [y], g.options("PadV2Options"))
    else:
        g.op("PAD", [x, p], [y], g.options("PadOptions"))
    return g.build([x], [y]), int(np.prod(shape))


def synth_concat(rng):
    """x concatenated with constants and with itself, 1 to 7 inputs, along a random axis
    (more than 3 inputs: the record's three slots, then p[])."""
    g = TinyModel()
    shape = tuple(int(v) for v in rng.integers(1, 5, 4))
    axis = int(rng.integers(-4, 4))
    s_, z_ = _q(rng)
    x = g.tensor(shape, scale=s_, zp=z_)
    ins, total = [x], shape[axis]
    for _ in range(int(rng.integers(0, 7))):
        if rng.integers(0, 2):
            ins.append(x)
            total += shape[axis]
        else:
            cshape = list(shape)
            cshape[axis] = int(rng.integers(1, 4))
            ins.append(g.tensor(cshape, scale=s_, zp=z_,
                                data=rng.integers(-128, 128, size=cshape).astype(np.int8)))
            total += cshape[axis]
    oshape = list(shape)
    oshape[axis] = total
    y = g.tensor(oshape, scale=s_, zp=z_)
    g.op("CONCATENATION", ins, [y], g.options("ConcatenationOptions", axis=axis))
    return g.build([x], [y]), int(np.prod(shape))


SYNTH = {
    **{op: (lambda rng, op=op: synth_binary(rng, op)) for op in ("SUB", "MUL", "MAXIMUM", "MINIMUM")},
    **{op: (lambda rng, op=op: synth_unary(rng, op))
       for op in ("QUANTIZE", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU")},
    **{op: (lambda rng, op=op: synth_table(rng, op)) for op in ("LOGISTIC", "TANH", "HARD_SWISH")},
    **{op: (lambda rng, op=op: synth_resize(rng, op)) for op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")},
    **{op: (lambda rng, op=op: synth_gather(rng, op)) for op in ("TRANSPOSE", "SLICE", "STRIDED_SLICE")},
    **{op: (lambda rng, op=op: synth_split(rng, op)) for op in ("SPLIT", "SPLIT_V")},
    "MEAN": synth_mean, "PAD": synth_pad, "CONCATENATION": synth_concat, "TRANSPOSE_CONV": synth_tconv,
}


@pytest.mark.parametrize("op", sorted(SYNTH))
def test_synthetic_operator_bit_exact(build, tmp_path, op):  # noqa: F811
    rng = np.random.default_rng(sum(map(ord, op)))
    jobs = []
    for k in range(12):
        data, n_in = SYNTH[op](rng)
        path = tmp_path / f"{op}{k}.tflite"
        path.write_bytes(data)
        x = rng.integers(-128, 128, size=(8, n_in)).astype(np.int8)
        jobs.append((path, x))
    refs = run_reference(jobs, tmp_path / "ref")
    for k, ((path, x), ref) in enumerate(zip(jobs, refs)):
        blob = convert(path).data
        dev = run_engine(build, blob, x, tmp_path / f"dev{k}", layers=True)
        assert_bit_exact(f"{op} model {k}", ref, dev, len(x))
        if k < 3:   # ASan + UBSan build, blob at an odd address: the same bytes
            san = run_engine(build, blob, x, tmp_path / f"san{k}", layers=True, sanitize=True,
                             extra=["--misalign"])
            assert np.array_equal(san, dev), f"{op} model {k}: sanitized build differs"
