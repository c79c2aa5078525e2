"""The agent's timed loops (edgebench.agent.loop) against a fake interpreter that records what it is given:
every inference gets exactly the input the pool's index says, quantized by the one rule, whether the inputs were
prepared before the loop or (a pool too large to keep prepared) per inference; the output table is the same
float32 arithmetic as agent.quant.dequantize for every code."""
import numpy as np
import pytest

from edgebench.agent import loop
from edgebench.agent.protocol import PREP_PER_INFERENCE, PREP_PRECOMPUTED
from edgebench.agent.quant import dequantize, make_quantizer


class FakeInterpreter:
    def __init__(self, out_detail):
        self.given = []
        self.out = np.arange(np.prod(out_detail["shape"])).reshape(out_detail["shape"]).astype(out_detail["dtype"])

    def set_tensor(self, index, x):
        assert index == 0
        self.given.append(np.array(x, copy=True))

    def invoke(self):
        pass

    def get_tensor(self, index):
        assert index == 1
        return self.out.copy()


class FakeModel:
    def __init__(self, batch, in_dtype="int8", out_dtype="int8"):
        quant = {"scale": 0.02, "zero_point": -3} if in_dtype != "float32" else None
        self.inputs = [{"index": 0, "shape": [batch, 3, 2], "dtype": in_dtype, "quant": quant}]
        self.outputs = [{"index": 1, "shape": [batch, 4], "dtype": out_dtype,
                         "quant": {"scale": 0.1, "zero_point": 5} if out_dtype != "float32" else None}]
        self.batch = batch
        self.interpreter = FakeInterpreter(self.outputs[0])

    def sample_shape(self):
        return [3, 2]


@pytest.mark.parametrize("batch,in_dtype", [(1, "int8"), (3, "int8"), (4, "uint8"), (2, "float32")])
@pytest.mark.parametrize("mode", ["single-stream", "offline", "fixed-rate"])
@pytest.mark.parametrize("prepared", [True, False])
def test_every_inference_gets_the_input_its_index_names(monkeypatch, batch, in_dtype, mode, prepared):
    if not prepared:
        monkeypatch.setattr(loop, "PREPARED_LIMIT_BYTES", 0)
    pool = np.random.default_rng(3).uniform(-2, 2, (10, 3, 2)).astype(np.float32)
    model = FakeModel(batch, in_dtype)
    runner = loop.Runner(model, pool)
    quantize = make_quantizer(model.inputs[0], [batch, 3, 2])
    rate = 20000.0 if mode == "fixed-rate" else None
    for start in (0, 7, 3):          # a run continues at another start index (the host's chunks do)
        model.interpreter.given.clear()
        out = runner.run(mode, 23, 5.0, rate_hz=rate, start_index=start)
        assert runner.last_prep == (PREP_PRECOMPUTED if prepared else PREP_PER_INFERENCE)
        idx = out["input_index"]
        assert len(idx) == len(model.interpreter.given) == 23
        for j, x in zip(idx, model.interpreter.given):
            rows = np.arange(j, j + batch) % len(pool)
            np.testing.assert_array_equal(x, quantize(pool[rows]))
        assert (out["e2e_ns"] >= out["invoke_ns"]).all()


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_the_output_table_is_dequantize_for_every_code(dtype):
    detail = {"dtype": dtype, "quant": {"scale": 0.0123, "zero_point": 7}}
    table = loop.dequantize_table(detail)
    info = np.iinfo(dtype)
    codes = np.arange(info.min, info.max + 1).astype(dtype)
    got = table.take(codes, mode="wrap")
    want = dequantize(detail, codes)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert loop.dequantize_table({"dtype": "int16", "quant": detail["quant"]}) is None
    assert loop.dequantize_table({"dtype": "int8", "quant": None}) is None


def test_the_getter_leaves_the_dequantized_output_in_its_buffer():
    model = FakeModel(1)
    model.interpreter.out = np.array([[-128, -1, 0, 127]], np.int8)
    get = loop.make_getter(model.interpreter, model.outputs)
    get()
    buf = next(c.cell_contents for c in get.__closure__ if isinstance(c.cell_contents, np.ndarray)
               and c.cell_contents.dtype == np.float32)
    np.testing.assert_array_equal(buf, dequantize(model.outputs[0], model.interpreter.out))
