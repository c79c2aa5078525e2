"""ONNX graphs built with onnx.helper and seeded weights, for the lowering's tests and benchmarks.

No torch: every graph is written node by node, the way torch.onnx.export writes them
(NCHW, initializers for weights, opset 17 unless a case says otherwise).
"""
from __future__ import annotations

import numpy as np


def init(name: str, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def int_init(name: str, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array, dtype=np.int64), name)


def model(nodes, inputs: dict, outputs: dict, inits=(), opset: int = 17):
    """A checked ModelProto: ``inputs``/``outputs`` map names to shapes (str entries: dynamic)."""
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph(
        nodes, "edgebench_test",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
        list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="edgebench-tests")
    m.ir_version = min(m.ir_version, 10)
    onnx.checker.check_model(m)
    return m


def mobilenet_like(seed: int = 0, size: int = 96, width: int = 32, blocks: int = 13, classes: int = 1000):
    """A MobileNet v1-shaped graph (stem conv, 13 depthwise-separable blocks with BatchNormalization
    and Clip(0, 6), global average pool, Flatten, Gemm), seeded random weights: the conversion
    benchmark's subject. The defaults but ``size=224`` are MobileNet v1 1.0 (4.2 M parameters)."""
    from onnx import helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    chans = [width * m for m in (2, 4, 4, 8, 8, 16, 16, 16, 16, 16, 16, 32, 32)][:blocks]
    strides = [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1][:blocks]

    def conv_bn(x, cin, cout, k, stride, group, name):
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (k * k * cin // group))
        inits.append(init(f"{name}.w", w))
        inits.extend([init(f"{name}.g", rng.uniform(0.5, 1.5, cout)), init(f"{name}.b", rng.normal(0, 0.1, cout)),
                      init(f"{name}.m", rng.normal(0, 0.1, cout)), init(f"{name}.v", rng.uniform(0.5, 1.5, cout))])
        p = k // 2
        nodes.append(helper.make_node("Conv", [x, f"{name}.w"], [f"{name}.c"], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[p, p, p, p], group=group, name=f"{name}.conv"))
        nodes.append(helper.make_node("BatchNormalization", [f"{name}.c", f"{name}.g", f"{name}.b", f"{name}.m",
                                                             f"{name}.v"], [f"{name}.bn"], name=f"{name}.bn"))
        inits.extend([init(f"{name}.lo", 0.0), init(f"{name}.hi", 6.0)])
        nodes.append(helper.make_node("Clip", [f"{name}.bn", f"{name}.lo", f"{name}.hi"], [f"{name}.out"],
                                      name=f"{name}.relu6"))
        return f"{name}.out"

    x = conv_bn("input", 3, width, 3, 2, 1, "stem")
    cin = width
    for i, (cout, s) in enumerate(zip(chans, strides)):
        x = conv_bn(x, cin, cin, 3, s, cin, f"b{i}.dw")
        x = conv_bn(x, cin, cout, 1, 1, 1, f"b{i}.pw")
        cin = cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], axis=1, name="flatten"))
    inits.extend([init("fc.w", rng.standard_normal((classes, cin)) * 0.05), init("fc.b", np.zeros(classes))])
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1, name="fc"))
    return model(nodes, {"input": ["batch", 3, size, size]}, {"logits": ["batch", classes]}, inits)


# ---------------------------------------------------------------- one graph per operator and trap

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


#: one graph per operator of the lowering's table and per NCHW trap: name -> () -> (nodes, initializers,
#: outputs, [inputs]); inputs default to :data:`X`
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
    # --- exports refused before (issue #32): each as torch/keras2onnx/tf2onnx write it
    "sum_two_inputs_and_three": lambda: ([H("Sum", ["x", "z"], ["a"]), H("Sum", ["a", "x", "k"], ["y"])],
                                         [init("k", weights((3, 1, 1)))], {"y": None},
                                         {"x": [1, 3, 4, 5], "z": [1, 3, 4, 5]}),
    "split_axis1_then_concat": lambda: ([H("Split", ["x", "sp"], ["a", "b"], axis=1), H("Relu", ["a"], ["r"]),
                                        H("Concat", ["b", "r"], ["y"], axis=1)], [int_init("sp", [1, 2])],
                                       {"y": None}),
    "split_equal_parts_opset18": lambda: ([H("Split", ["x"], ["a", "b"], axis=3, num_outputs=2),
                                           H("Sub", ["a", "b"], ["y"])], [], {"y": None}, {"x": [1, 3, 4, 6]}),
    "elementwise_activations_opset18": lambda: ([H("Selu", ["x"], ["a"]), H("Elu", ["x"], ["b"], alpha=0.7),
                                         H("Softplus", ["x"], ["c"]), H("Softsign", ["x"], ["d"]),
                                         H("Mish", ["x"], ["e"]), H("Celu", ["x"], ["f"], alpha=1.5),
                                         H("ThresholdedRelu", ["x"], ["g"], alpha=0.3), H("Abs", ["x"], ["h"]),
                                         H("Neg", ["h"], ["i"]), H("Exp", ["i"], ["j"]), H("Sqrt", ["h"], ["k"]),
                                         H("Max", ["a", "b", "c"], ["m1"]), H("Min", ["d", "e"], ["m2"]),
                                         H("Sum", ["m1", "m2", "f", "g", "j", "k"], ["y"])], [], {"y": None}),
    "gelu_exact_and_tanh_opset20": lambda: ([H("Gelu", ["x"], ["a"]), H("Gelu", ["x"], ["b"], approximate="tanh"),
                                             H("Add", ["a", "b"], ["y"])], [], {"y": None}),
    "gemm_log_softmax": lambda: ([H("Gemm", ["x", "w"], ["g"], transB=1), H("LogSoftmax", ["g"], ["y"], axis=1)],
                                 [init("w", weights((5, 6)))], {"y": None}, {"x": [1, 6]}),
    "prelu_channel_slope": lambda: ([H("PRelu", ["x", "s"], ["y"])], [init("s", [[[0.1]], [[0.2]], [[-0.3]]])],
                                    {"y": None}),
    "dropout_mask_unused": lambda: ([H("Conv", ["x", "w"], ["c"]), H("Dropout", ["c"], ["d", "mask"]),
                                     H("Relu", ["d"], ["y"])], [init("w", weights((4, 3, 3, 3)))], {"y": None}),
    "channel_shuffle_shufflenet": lambda: ([H("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                            H("Reshape", ["c", "s5"], ["r5"]),
                                            H("Transpose", ["r5"], ["t5"], perm=[0, 2, 1, 3, 4]),
                                            H("Reshape", ["t5", "s4"], ["r4"]), H("Conv", ["r4", "w2"], ["y"])],
                                           [init("w", weights((6, 3, 3, 3))), int_init("s5", [1, 2, 3, 9, 10]),
                                            int_init("s4", [1, 6, 9, 10]), init("w2", weights((4, 6, 1, 1)))],
                                           {"y": None}, {"x": [1, 3, 9, 10]}),
    # --- tf2onnx / keras2onnx: NHWC input, Transpose to NCHW for the Conv, back to NHWC before Flatten
    "keras2onnx_nhwc_input": lambda: ([H("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
                                       H("Conv", ["t", "w", "b"], ["c"], pads=[1, 1, 1, 1]), H("Relu", ["c"], ["r"]),
                                       H("Transpose", ["r"], ["u"], perm=[0, 2, 3, 1]),
                                       H("Reshape", ["u", "s"], ["f"]), H("MatMul", ["f", "mw"], ["y"])],
                                      [init("w", weights((4, 3, 3, 3))), init("b", weights(4, 2)), int_init("s", [1, -1]),
                                       init("mw", weights((9 * 10 * 4, 5), 3, 0.1))], {"y": None}, {"x": [1, 9, 10, 3]}),
    "reshape_to_4d_output": lambda: ([H("Conv", ["x", "w"], ["c"]), H("Flatten", ["c"], ["f"]),
                                      H("Reshape", ["f", "s"], ["y"])],
                                     [init("w", weights((2, 3, 3, 3))), int_init("s", [1, 2, 8, 7])], {"y": None},
                                     {"x": [1, 3, 9, 10]}),
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
    """The ModelProto of one case of :data:`CASES`."""
    spec = CASES[case]()
    if "_opset" in case:                       # a case written for a newer opset says so in its name
        opset = int(case.rsplit("_opset", 1)[1])
    nodes, inits, outs = spec[:3]
    inputs = spec[3] if len(spec) > 3 else X
    return model_any_output(nodes, inputs, list(outs), inits, opset)


def model_any_output(nodes, inputs, outs, inits, opset):
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
