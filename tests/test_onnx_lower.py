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
from onnx_graphs import CASES, H, X, build, model, model_any_output

pytestmark = [pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:.*tf.lite.Interpreter is deprecated:UserWarning")]
TF = pytest.mark.tensorflow          # every test that lowers (builds Keras models)

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


@TF
@pytest.mark.parametrize("case", sorted(CASES))
def test_operator_matches_onnxruntime(stack, tmp_path, case):
    lowered, faith = lower_and_compare(stack, tmp_path, build(case))
    assert faith.ok, faith.to_dict()
    assert faith.max_abs_error <= 1e-5 + 1e-5 * max(o["max_abs_reference"] for o in faith.outputs)


@TF
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


@TF
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


@TF
def test_older_opsets(stack, tmp_path):
    """Opset 11: Squeeze/Unsqueeze/ReduceMean axes as attributes, Softmax over the flattened axes."""
    m = model_any_output([H("Unsqueeze", ["x"], ["u"], axes=[0]), H("Squeeze", ["u"], ["s"], axes=[0]),
                           H("Softmax", ["s"], ["y"], axis=1)], X, ["y"], [], 11)
    _, faith = lower_and_compare(stack, tmp_path, m)
    assert faith.ok, faith.to_dict()


@TF
def test_mobilenet_like_graph(stack, tmp_path):
    from onnx_graphs import mobilenet_like

    lowered, faith = lower_and_compare(stack, tmp_path, mobilenet_like(size=32, blocks=4, classes=10), n=2)
    assert faith.ok, faith.to_dict()
    assert lowered.bn_folded == 9


# ---------------------------------------------------------------- refusals, one line each

@TF
def test_unsupported_operator_names_node_and_list(stack, tmp_path):
    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower.table import OPS

    m = model_any_output([H("Relu", ["x"], ["r"]), H("Erf", ["r"], ["y"])], X, ["y"], [], 17)
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


def test_docs_list_exactly_the_table():
    """docs/models.md's operator table names every operator of OPS, and no other."""
    from pathlib import Path

    from edgebench.quantize.onnx_lower.table import OPS

    text = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text()
    table = text.split("## Supported operators", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    named = set()
    for row in table.splitlines()[2:]:
        named.update(op.strip() for op in row.split("|")[1].split(","))
    assert named == set(OPS)


def test_layout_adoption():
    """Data in the source layout is transposed, data in the model's layout kept, anything else refused."""
    from edgebench.data.layout import TensorLayout, input_layout
    from edgebench.errors import DataError

    lay = TensorLayout("image", (1, 3, 4, 5), (1, 4, 5, 3), (0, 2, 3, 1))
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    y, how = lay.adopt(x, "t")
    assert y.shape == (2, 4, 5, 3) and y[1, 2, 3, 0] == x[1, 0, 2, 3] and "transposed to NHWC" in how
    z, how = lay.adopt(y, "t")
    assert z is y and "already" in how
    with pytest.raises(DataError, match="fit neither"):
        lay.adopt(x[:, :2], "t")
    img, how = lay.adopt(np.zeros((1, 4, 5, 3), np.float32), "t", images=True)
    assert "decoded images" in how
    assert input_layout({"layout": {"inputs": [lay.to_dict()]}}) == lay
    assert input_layout({}) is None and input_layout(None) is None


@TF
def test_channel_shuffle_emits_no_rank5_transpose(stack, tmp_path):
    """ShuffleNet's Reshape -> Transpose(rank 5) -> Reshape stays channels-last: the only data movement
    is a transpose of rank <= 3, which the MCU engine runs."""
    lowered, faith = lower_and_compare(stack, tmp_path, build("channel_shuffle_shufflenet"))
    assert faith.ok, faith.to_dict()
    _, tf = stack
    interp = tf.lite.Interpreter(model_content=tf.lite.TFLiteConverter.from_keras_model(lowered.model).convert())
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    ranks = [len(tensors[op["inputs"][0]]["shape"]) for op in interp._get_ops_details() if op["op_name"] == "TRANSPOSE"]
    assert ranks == [3], ranks
    assert lowered.inputs[0].perm == (0, 2, 3, 1) and lowered.outputs[0].perm == (0, 2, 3, 1)


def _tflite_ops(tf, keras_model) -> list:
    interp = tf.lite.Interpreter(model_content=tf.lite.TFLiteConverter.from_keras_model(keras_model).convert())
    return [op["op_name"] for op in interp._get_ops_details()]


@TF
def test_nhwc_input_stays_nhwc_and_4d_outputs_are_nhwc(stack, tmp_path):
    """A keras2onnx/tf2onnx graph (NHWC input, Transpose to NCHW, Conv, Transpose back, Flatten) keeps its
    input as it is and runs no TRANSPOSE; a 4-D output of an NCHW model comes out NHWC (docs/models.md)."""
    _, tf = stack
    lowered, faith = lower_and_compare(stack, tmp_path, build("keras2onnx_nhwc_input"))
    assert faith.ok, faith.to_dict()
    assert lowered.inputs[0].perm == (0, 1, 2, 3) and lowered.inputs[0].model_shape == (1, 9, 10, 3)
    assert "TRANSPOSE" not in _tflite_ops(tf, lowered.model)
    lowered, faith = lower_and_compare(stack, tmp_path, build("reshape_to_4d_output"))
    assert faith.ok, faith.to_dict()
    assert lowered.outputs[0].perm == (0, 2, 3, 1) and lowered.outputs[0].model_shape == (1, 8, 7, 2)


def test_a_reshape_that_moves_only_unit_axes_is_a_transpose():
    from edgebench.quantize.onnx_lower.ops_tensor import reshape_target, unit_axis_perm

    assert unit_axis_perm((1, 49, 10, 1), (1, 1, 49, 10)) == (0, 3, 1, 2)      # NHWC -> NCHW, C = 1
    assert unit_axis_perm((4, 49, 10, 1), (4, 1, 49, 10)) == (0, 3, 1, 2)
    assert unit_axis_perm((1, 49, 10, 1), (1, 1, 10, 49)) is None             # the data moves
    assert unit_axis_perm((1, 49, 10, 1), (1, 490)) is None
    assert reshape_target((2, 49, 10, 1), [0, 1, -1, 10]) == [2, 1, 49, 10]
    assert reshape_target((2, 0, 3), [0, 0], allow_zero=1) == [0, 0]


@TF
@pytest.mark.parametrize("shape_of", ["initializer", "Constant"])
def test_tf2onnx_one_channel_reshape_input_stays_nhwc(stack, tmp_path, shape_of):
    """tf2onnx writes NHWC -> NCHW of a one-channel image (MNIST, MFCC) as Reshape [N,H,W,1] -> [N,1,H,W],
    not a Transpose: the input is still NHWC, kept as it is (not taken as C = H), and no TRANSPOSE runs."""
    from onnx import helper
    from onnx_graphs import H, init, int_init, model_any_output, weights

    _, tf = stack
    nodes = [H("Reshape", ["x", "s"], ["t"]), H("Conv", ["t", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             H("Relu", ["c"], ["r"]), H("GlobalAveragePool", ["r"], ["g"]), H("Flatten", ["g"], ["y"])]
    inits = [init("w", weights((4, 1, 3, 3))), init("b", weights(4, 2))]
    if shape_of == "initializer":
        inits.append(int_init("s", [-1, 1, 9, 10]))
    else:
        nodes.insert(0, H("Constant", [], ["s"], value=helper.make_tensor("sv", 7, [4], [0, 1, 9, 10])))
    lowered, faith = lower_and_compare(stack, tmp_path, model_any_output(nodes, {"x": [1, 9, 10, 1]}, ["y"], inits, 13))
    assert faith.ok, faith.to_dict()
    assert lowered.inputs[0].perm == (0, 1, 2, 3) and lowered.inputs[0].model_shape == (1, 9, 10, 1)
    assert "TRANSPOSE" not in _tflite_ops(tf, lowered.model)


@TF
def test_unit_axis_reshapes_inside_the_graph_match_onnxruntime(stack, tmp_path):
    """A one-channel NCHW tensor reshaped to [N,H,W,1] (held as it is, no data moved) and a [N,1,K] -> [N,K,1]
    (a layout the lowering does not hold: a plain RESHAPE) both give onnxruntime's values."""
    from onnx_graphs import H, init, int_init, model_any_output, weights

    nodes = [H("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), H("Reshape", ["c", "s"], ["h"]),
             H("Relu", ["h"], ["r"]), H("Reshape", ["r", "s2"], ["k"]), H("Reshape", ["k", "s3"], ["y"])]
    inits = [init("w", weights((1, 3, 3, 3))), int_init("s", [1, 9, 10, 1]), int_init("s2", [1, 1, 90]),
             int_init("s3", [1, 90, 1])]
    lowered, faith = lower_and_compare(stack, tmp_path, model_any_output(nodes, {"x": [1, 3, 9, 10]}, ["y"], inits, 13))
    assert faith.ok, faith.to_dict()


def test_constant_folding_runs_at_the_graph_opset():
    """onnx/models' opset-9 exports (light_densenet121) fold an Unsqueeze whose axes are an attribute;
    a bare node would run as Unsqueeze-13 (axes an input) and fail."""
    from onnx import helper

    from edgebench.quantize.onnx_lower import lower

    node = helper.make_node("Unsqueeze", ["c"], ["u"], axes=[0], name="n2")
    (out,) = lower._evaluate(node, [lower.V.const(np.ones(3, np.float32))], 9)
    assert out.const.shape == (1, 3)
    drop = helper.make_node("Dropout", ["c"], ["d", ""], name="drop")          # an unnamed second output
    outs = lower._evaluate(drop, [lower.V.const(np.ones(3, np.float32))], 9)
    assert len(outs) == 2 and outs[1] is None and outs[0].const.shape == (3,)
