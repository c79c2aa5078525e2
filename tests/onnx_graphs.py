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
