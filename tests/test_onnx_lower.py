"""ONNX -> Keras lowering, operator by operator, against onnxruntime (no torch).

Each case is a graph built with onnx.helper and seeded weights (tests/onnx_graphs.py),
covering an operator of the table and the traps of the NCHW -> NHWC lowering: asymmetric
pads, stride 2, dilation, depthwise, Gemm transB, Flatten -> Gemm after an NCHW tensor,
Concat/Softmax on axis 1, two inputs. The lowered Keras model runs on the same seeded
inputs (transposed to its layout) as onnxruntime; the largest difference must be within
float32 rounding. Needs onnx, onnxruntime and TensorFlow (skips locally without them,
fails under CI=true).
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import missing
from onnx_graphs import init, int_init, model

pytestmark = [pytest.mark.tensorflow,
              pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")]

RNG_SEED = 0


@pytest.fixture(scope="module")
def stack():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        missing(f"{exc.name} is not importable (pip install 'edgebench[onnx]')")
    from edgebench.quantize._tf import TensorFlowMissing, import_tensorflow

    try:
        tf = import_tensorflow()
    except TensorFlowMissing as exc:
        missing(exc.one_line())
    import keras

    return keras, tf


def lower_and_compare(stack, tmp_path, m, n: int = 3, scale: float = 1.0):
    """(Lowered, Faithfulness) of ``m`` on ``n`` seeded inputs per graph input."""
    import onnx

    from edgebench.quantize.onnx_lower import read_onnx, reference
    from edgebench.quantize.onnx_lower.lower import lower, run_keras

    keras, tf = stack
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    g = read_onnx(path)
    lowered = lower(g, keras, tf)
    rng = np.random.default_rng(RNG_SEED)
    feeds = {i.name: (rng.standard_normal((n, *i.shape[1:])) * scale).astype(np.float32) for i in g.inputs}
    batch = 1 if all(isinstance(i.declared[0], int) for i in g.inputs) else None
    faith = reference.check(path, lambda xs: run_keras(lowered.model, xs, 1), lowered.inputs, lowered.outputs,
                            feeds, "keras", batch, rtol=1e-5, atol=1e-5)
    return lowered, faith


def H(op, ins, outs, **attrs):
    from onnx import helper

    return helper.make_node(op, ins, outs, name=f"{op.lower()}_{outs[0]}", **attrs)


def weights(shape, seed=1, scale=0.3):
    return np.random.default_rng(seed).standard_normal(shape) * scale


X = {"x": ["N", 3, 9, 10]}           # odd sizes: SAME and explicit pads differ


def conv(name, cout, cin, k, **attrs):
    return [H("Conv", ["x" if name == "c" else name[:-1], f"{name}.w", f"{name}.b"], [name], **attrs)], \
        [init(f"{name}.w", weights((cout, cin // attrs.get("group", 1), k, k))), init(f"{name}.b", weights(cout, 2))]


def _c(attrs, cout=4, k=3, cin=3):
    nodes, inits = conv("c", cout, cin, k, **attrs)
    return nodes, inits


CASES = {
    # --- Conv: the padding and stride traps
    "conv_asymmetric_pads_stride2": lambda: (*_c(dict(pads=[0, 1, 2, 1], strides=[2, 2])), {"c": None}),
    "conv_same_upper_stride2": lambda: (*_c(dict(auto_pad="SAME_UPPER", strides=[2, 2])), {"c": None}),
    "conv_same_lower": lambda: (*_c(dict(auto_pad="SAME_LOWER", kernel_shape=[4, 4]), k=4), {"c": None}),
    "conv_dilation2": lambda: (*_c(dict(dilations=[2, 2], pads=[2, 2, 2, 2])), {"c": None}),
    "conv_valid_1x1": lambda: (*_c(dict(), k=1), {"c": None}),
    "conv_depthwise": lambda: (*_c(dict(group=3, pads=[1, 1, 1, 1]), cout=3), {"c": None}),
    "conv_depthwise_multiplier2_stride2": lambda: (*_c(dict(group=3, pads=[1, 1, 1, 1], strides=[2, 2]), cout=6),
                                                    {"c": None}),
    "conv_grouped": lambda: ([H("Conv", ["x", "w", "b"], ["c"], group=2, pads=[1, 1, 1, 1])],
                             [init("w", weights((4, 2, 3, 3))), init("b", weights(4, 2))], {"c": None}, {"x": [1, 4, 6, 6]}),
    "conv_transpose_k4s2p1": lambda: ([H("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])],
                                      [init("w", weights((3, 5, 4, 4))), init("b", weights(5, 2))], {"y": None}),
    "conv_transpose_output_padding": lambda: ([H("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1],
                                                 output_padding=[1, 1])], [init("w", weights((3, 2, 3, 3)))], {"y": None}),
    # --- BatchNormalization: folded after Conv, a multiply-add elsewhere
    "batchnorm_folded_into_conv": lambda: ([H("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                            H("BatchNormalization", ["c", "g", "be", "m", "v"], ["y"], epsilon=1e-3)],
                                           [init("w", weights((4, 3, 3, 3))), *_bn(4)], {"y": None}),
    "batchnorm_alone": lambda: ([H("Relu", ["x"], ["r"]), H("BatchNormalization", ["r", "g", "be", "m", "v"], ["y"])],
                                list(_bn(3)), {"y": None}),
    # --- dense layers and the Flatten -> Gemm row permutation
    "flatten_gemm_after_nchw": lambda: ([H("Conv", ["x", "w"], ["c"], strides=[2, 2]), H("Flatten", ["c"], ["f"]),
                                         H("Gemm", ["f", "fw", "fb"], ["y"], transB=1, alpha=0.5, beta=2.0)],
                                        [init("w", weights((4, 3, 3, 3))), init("fw", weights((7, 4 * 4 * 4), 3, 0.1)),
                                         init("fb", weights(7, 4))], {"y": None}),
    "reshape_matmul_after_nchw": lambda: ([H("Conv", ["x", "w"], ["c"]), H("Reshape", ["c", "s"], ["f"]),
                                           H("MatMul", ["f", "mw"], ["y"])],
                                          [init("w", weights((2, 3, 3, 3))), int_init("s", [1, -1]),
                                           init("mw", weights((2 * 7 * 8, 5), 3, 0.1))], {"y": None}, {"x": [1, 3, 9, 10]}),
    "gemm_transA_no_bias": lambda: ([H("Gemm", ["x", "w"], ["y"], transA=1)], [init("w", weights((1, 4)))],
                                    {"y": None}, {"x": [1, 6]}),
    "matmul_3d": lambda: ([H("MatMul", ["x", "w"], ["y"])], [init("w", weights((10, 4)))], {"y": None},
                          {"x": [1, 5, 10]}),
    # --- activations
    "relu_clip6_leaky": lambda: ([H("Relu", ["x"], ["a"]), H("Clip", ["a", "lo", "hi"], ["b"]),
                                  H("LeakyRelu", ["x"], ["c"], alpha=0.2), H("Add", ["b", "c"], ["y"])],
                                 [init("lo", 0.0), init("hi", 6.0)], {"y": None}),
    "clip_minus1_1": lambda: ([H("Clip", ["x", "lo", "hi"], ["y"])], [init("lo", -1.0), init("hi", 1.0)], {"y": None}),
    "sigmoid_tanh": lambda: ([H("Sigmoid", ["x"], ["a"]), H("Tanh", ["x"], ["b"]), H("Mul", ["a", "b"], ["y"])], [],
                             {"y": None}),
    "hard_sigmoid_hard_swish": lambda: ([H("HardSigmoid", ["x"], ["a"], alpha=1 / 6, beta=0.5),
                                         H("HardSwish", ["x"], ["b"]), H("Sub", ["a", "b"], ["y"])], [], {"y": None}),
    # --- element-wise arithmetic with broadcasting
    "add_mul_channel_constants": lambda: ([H("Add", ["x", "k"], ["a"]), H("Mul", ["a", "s"], ["y"])],
                                          [init("k", weights((3, 1, 1))), init("s", weights((1, 3, 1, 1)))], {"y": None}),
    "div_sub_constants": lambda: ([H("Div", ["x", "d"], ["a"]), H("Sub", ["one", "a"], ["y"])],
                                  [init("d", [2.0, 4.0, 8.0, 1.0, 3.0, 5.0, 6.0, 7.0, 9.0, 0.5]), init("one", 1.0)],
                                  {"y": None}),
    "two_inputs_add_div": lambda: ([H("Add", ["x", "z"], ["a"]), H("Div", ["a", "q"], ["y"])], [], {"y": None},
                                   {"x": [1, 3, 4, 5], "z": [1, 3, 4, 5], "q": [1, 1, 4, 5]}),
    # --- pooling
    "maxpool_pads_resnet_stem": lambda: ([H("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                            pads=[1, 1, 1, 1])], [], {"y": None}),
    "maxpool_ceil_mode": lambda: ([H("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], [],
                                  {"y": None}),
    "relu_maxpool_wide_pads": lambda: ([H("Relu", ["x"], ["r"]),
                                        H("MaxPool", ["r"], ["y"], kernel_shape=[5, 5], pads=[2, 2, 2, 2])], [],
                                       {"y": None}),
    "avgpool_pads_exclude": lambda: ([H("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                        pads=[1, 1, 1, 1])], [], {"y": None}),
    "avgpool_pads_include": lambda: ([H("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 0, 1, 2],
                                        count_include_pad=1)], [], {"y": None}),
    "global_average_pool_flatten_gemm": lambda: ([H("GlobalAveragePool", ["x"], ["p"]), H("Flatten", ["p"], ["f"]),
                                                  H("Gemm", ["f", "w", "b"], ["y"], transB=1)],
                                                 [init("w", weights((5, 3))), init("b", weights(5))], {"y": None}),
    # --- axes and shapes
    "transpose_in_graph": lambda: ([H("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]), H("MatMul", ["t", "w"], ["y"])],
                                   [init("w", weights((3, 4)))], {"y": None}),
    "concat_softmax_axis1": lambda: ([H("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]), H("Relu", ["x"], ["b"]),
                                      H("Concat", ["a", "b"], ["c"], axis=1), H("Softmax", ["c"], ["y"], axis=1)],
                                     [init("w", weights((2, 3, 3, 3)))], {"y": None}),
    "concat_two_inputs_axis1": lambda: ([H("Concat", ["x", "z"], ["y"], axis=1)], [], {"y": None},
                                        {"x": [1, 3, 4, 5], "z": [1, 2, 4, 5]}),
    "squeeze_unsqueeze_reduce_mean": lambda: ([H("ReduceMean", ["x"], ["m"], axes=[2, 3], keepdims=0),
                                               H("Unsqueeze", ["m", "ax"], ["u"]), H("Squeeze", ["u", "ax"], ["y"])],
                                              [int_init("ax", [2])], {"y": None}),
    "pad_constant_and_reflect": lambda: ([H("Pad", ["x", "p", "v"], ["a"], mode="constant"),
                                          H("Pad", ["a", "p"], ["y"], mode="reflect")],
                                         [int_init("p", [0, 0, 1, 2, 0, 1, 2, 0]), init("v", 0.5)], {"y": None}),
    "shape_gather_concat_reshape": lambda: ([H("Shape", ["x"], ["s"]), H("Gather", ["s", "i0"], ["n"], axis=0),
                                             H("Unsqueeze", ["n", "ax0"], ["n1"]),
                                             H("Concat", ["n1", "m1"], ["target"], axis=0),
                                             H("Reshape", ["x", "target"], ["f"]), H("Identity", ["f"], ["g"]),
                                             H("Dropout", ["g"], ["y"])],
                                            [int_init("i0", 0), int_init("ax0", [0]), int_init("m1", [-1])], {"y": None}),
    # --- Resize: the exporters' three modes
    "resize_nearest_asymmetric_floor": lambda: ([H("Resize", ["x", "", "sc"], ["y"], mode="nearest",
                                                   coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
                                                [init("sc", [1, 1, 2, 2])], {"y": None}),
    "resize_bilinear_half_pixel_sizes": lambda: ([H("Resize", ["x", "", "", "sz"], ["y"], mode="linear",
                                                    coordinate_transformation_mode="half_pixel")],
                                                 [int_init("sz", [1, 3, 18, 15])], {"y": None},
                                                 {"x": [1, 3, 9, 10]}),
    "resize_bilinear_align_corners": lambda: ([H("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                                 coordinate_transformation_mode="align_corners")],
                                              [init("sc", [1, 1, 2, 2])], {"y": None}),
}


def _bn(c):
    rng = np.random.default_rng(7)
    return (init("g", rng.uniform(0.5, 1.5, c)), init("be", rng.normal(0, 0.5, c)), init("m", rng.normal(0, 0.5, c)),
            init("v", rng.uniform(0.5, 2.0, c)))


def build(case: str, opset: int = 17):
    spec = CASES[case]()
    nodes, inits, outs = spec[:3]
    inputs = spec[3] if len(spec) > 3 else X
    return _model_any_output(nodes, inputs, list(outs), inits, opset)


def _model_any_output(nodes, inputs, outs, inits, opset):
    """Output shapes from onnx shape inference (the checker wants a declared output type)."""
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = min(m.ir_version, 10)
    inferred = onnx.shape_inference.infer_shapes(m)
    shapes = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    del m.graph.output[:]
    for o in outs:
        vi = shapes[o]
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "N") for d in vi.type.tensor_type.shape.dim]
        m.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, dims))
    return model(list(m.graph.node), inputs, {o.name: [d.dim_value if d.HasField("dim_value") else d.dim_param
                                                      for d in o.type.tensor_type.shape.dim] for o in m.graph.output},
                 inits, opset)


@pytest.mark.parametrize("case", sorted(CASES))
def test_operator_matches_onnxruntime(stack, tmp_path, case):
    lowered, faith = lower_and_compare(stack, tmp_path, build(case))
    assert faith.ok, faith.to_dict()
    assert faith.max_abs_error <= 1e-5 + 1e-5 * max(o["max_abs_reference"] for o in faith.outputs)


def test_traps_are_lowered_the_cheap_way(stack, tmp_path):
    """The layout is transposed once, at the input: no TRANSPOSE for a Transpose node, a Flatten
    of a 4x4 map or a Gemm after it, and BatchNormalization disappears into the Conv."""
    keras, _ = stack
    lowered, _ = lower_and_compare(stack, tmp_path, build("flatten_gemm_after_nchw"))
    names = [type(layer).__name__ for layer in lowered.model.layers]
    assert "Transpose" not in " ".join(names) and lowered.inputs[0].perm == (0, 2, 3, 1)
    lowered, _ = lower_and_compare(stack, tmp_path, build("batchnorm_folded_into_conv"))
    assert lowered.bn_folded == 1
    assert [type(layer).__name__ for layer in lowered.model.layers].count("Conv2D") == 1
    lowered, _ = lower_and_compare(stack, tmp_path, build("transpose_in_graph"))
    assert not any("transpose" in layer.name.lower() for layer in lowered.model.layers)
    lowered, _ = lower_and_compare(stack, tmp_path, build("shape_gather_concat_reshape"))
    assert lowered.folded >= 3                       # Gather, Unsqueeze, Concat on constants


def test_row_permutation_is_needed(stack, tmp_path, monkeypatch):
    """Without the Flatten -> Gemm row permutation the lowered model is wrong: the test can fail."""
    from edgebench.quantize.onnx_lower import ops_nn, table, values

    def forgetful(cx, node, ins):            # takes the flattened NHWC features for NCHW ones
        a = ins[0]
        if a.order is not None:
            a = values.Value(t=a.t, perm=a.perm)
        return ops_nn.gemm(cx, node, [a, *ins[1:]])

    monkeypatch.setitem(table.OPS, "Gemm", table.Op(forgetful, ops_nn.gemm_macs))
    _, faith = lower_and_compare(stack, tmp_path, build("flatten_gemm_after_nchw"))
    assert not faith.ok


def test_older_opsets(stack, tmp_path):
    """Opset 11: Squeeze/Unsqueeze/ReduceMean axes as attributes, Softmax over the flattened axes."""
    m = _model_any_output([H("Unsqueeze", ["x"], ["u"], axes=[0]), H("Squeeze", ["u"], ["s"], axes=[0]),
                           H("Softmax", ["s"], ["y"], axis=1)], X, ["y"], [], 11)
    _, faith = lower_and_compare(stack, tmp_path, m)
    assert faith.ok, faith.to_dict()


def test_mobilenet_like_graph(stack, tmp_path):
    from onnx_graphs import mobilenet_like

    lowered, faith = lower_and_compare(stack, tmp_path, mobilenet_like(size=32, blocks=4, classes=10), n=2)
    assert faith.ok, faith.to_dict()
    assert lowered.bn_folded == 9


# ---------------------------------------------------------------- refusals, one line each

def test_unsupported_operator_names_node_and_list(stack, tmp_path):
    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower.table import OPS

    m = _model_any_output([H("Relu", ["x"], ["r"]), H("Erf", ["r"], ["y"])], X, ["y"], [], 17)
    with pytest.raises(ModelError) as e:
        lower_and_compare(stack, tmp_path, m)
    line = e.value.one_line()
    assert "ONNX operator Erf (node 'erf_y') is not supported" in line and "\n" not in line
    assert all(op in line for op in OPS)


def test_refusals_before_tensorflow(tmp_path):
    try:
        import onnx
    except ImportError:
        missing("onnx is not importable (pip install 'edgebench[onnx]')")
    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower import read_onnx

    m = model([H("Relu", ["x"], ["y"])], {"x": ["N", 3, "height", 8]}, {"y": ["N", 3, "height", 8]})
    onnx.save(m, str(tmp_path / "dyn.onnx"))
    with pytest.raises(ModelError) as e:
        read_onnx(tmp_path / "dyn.onnx")
    assert "dynamic dimension 'height' at axis 2" in e.value.one_line() and "static shapes" in e.value.one_line()
    (tmp_path / "junk.onnx").write_bytes(b"\x00\x01garbage" * 10)
    with pytest.raises(ModelError, match=r"cannot load .*junk\.onnx with onnx\.load"):
        read_onnx(tmp_path / "junk.onnx")
    m = model([H("Relu", ["x"], ["y"])], {"x": [2, 3, 4, 4]}, {"y": [2, 3, 4, 4]})
    onnx.save(m, str(tmp_path / "b2.onnx"))
    with pytest.raises(ModelError) as e:
        read_onnx(tmp_path / "b2.onnx")
    assert "fixed batch of 2, not 1" in e.value.one_line() and "--batch 2" in e.value.one_line()
    assert read_onnx(tmp_path / "b2.onnx", batch=2).inputs[0].shape == (2, 3, 4, 4)
