"""ONNX containment before any library reads or works on the model, and one verdict for inspect and quantize.

Hostile models are built with onnx.helper in each test: external data through a symbolic
link, a hard link, '..' and an absolute path; a Loop of 10^12 iterations; a Resize x10^4;
a 10,000-node chain; nodes out of topological order; a Dropout whose mask is read.
No TensorFlow: every refusal here comes before the lowering.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import missing
from onnx_graphs import H, init, int_init, model


@pytest.fixture(scope="module")
def onnx_mod():
    try:
        import onnx
    except ImportError:
        missing("onnx is not importable (pip install 'edgebench[onnx]')")
    return onnx


def _external(onnx_mod, folder, location: str):
    """A Gemm model whose weights live in external data at ``location`` (written beside it first)."""
    from onnx import external_data_helper

    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    m = model([H("Gemm", ["x", "w"], ["y"])], {"x": [1, 4]}, {"y": [1, 3]}, [init("w", w)])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.bin").write_bytes(w.tobytes())
    t = m.graph.initializer[0]
    external_data_helper.set_external_data(t, "data.bin", offset=0, length=w.nbytes)
    t.ClearField("raw_data")
    t.data_location = onnx_mod.TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in (("location", location), ("offset", "0"), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    path = folder / "m.onnx"
    path.write_bytes(m.SerializeToString())
    return path


def test_external_data_inside_the_folder_is_read(onnx_mod, tmp_path):
    from onnx import numpy_helper

    from edgebench.quantize.onnx_lower import read_onnx

    g = read_onnx(_external(onnx_mod, tmp_path / "ok", "data.bin"))
    w = numpy_helper.to_array(g.model.graph.initializer[0])
    assert w.shape == (4, 3) and w[3, 2] == 11


@pytest.mark.parametrize("how", ["symlink", "hardlink", "dotdot", "absolute", "dir_symlink", "past_end"])
def test_external_data_outside_or_through_links_is_refused(onnx_mod, tmp_path, how, monkeypatch):
    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower import read_onnx
    from edgebench.quantize.onnx_lower.inspect import inspect_onnx

    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"S" * 48)
    folder = tmp_path / "m"
    location = {"symlink": "link.bin", "hardlink": "hard.bin", "dotdot": "../secret.bin",
                "absolute": str(secret), "dir_symlink": "sub/secret.bin", "past_end": "data.bin"}[how]
    path = _external(onnx_mod, folder, location)
    if how == "symlink":
        os.symlink(secret, folder / "link.bin")
    elif how == "hardlink":
        os.link(secret, folder / "hard.bin")
    elif how == "dir_symlink":
        os.symlink(tmp_path, folder / "sub")
    elif how == "past_end":
        (folder / "data.bin").write_bytes(b"\0" * 8)
    reads = []
    real_open = open

    def spy(file, *a, **k):              # nothing opens the secret, whichever library asks
        reads.append(os.path.realpath(str(file)) if isinstance(file, (str, os.PathLike)) else file)
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    for fn in (read_onnx, inspect_onnx):
        with pytest.raises(ModelError) as e:
            fn(path)
        line = e.value.one_line()
        assert "\n" not in line and "keeps its data in" in line, line
    assert str(secret) not in reads


def test_loop_resize_and_node_count_are_bounded(onnx_mod, tmp_path):
    from onnx import TensorProto, helper

    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower import read_onnx
    from edgebench.quantize.onnx_lower.guard import LIMITS
    from edgebench.quantize.onnx_lower.inspect import inspect_onnx

    body = helper.make_graph(
        [H("Identity", ["cond_in"], ["cond_out"]), H("Relu", ["v_in"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1, 4])])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    loop = model([H("Loop", ["trips", "cond", "x"], ["y"], body=body)], {"x": [1, 4]}, {"y": [1, 4]},
                 [int_init("trips", 10 ** 12), cond])
    onnx_mod.save(loop, str(tmp_path / "loop.onnx"))
    with pytest.raises(ModelError, match=r"Loop node .* runs 1,000,000,000,000 times \(limit"):
        read_onnx(tmp_path / "loop.onnx")

    resize = model([H("Resize", ["x", "", "scales"], ["y"], mode="nearest")], {"x": [1, 3, 8, 8]},
                   {"y": [1, 3, 80000, 80000]}, [init("scales", [1, 1, 1e4, 1e4])])
    onnx_mod.save(resize, str(tmp_path / "resize.onnx"))
    with pytest.raises(ModelError, match=r"shape 1x3x80000x80000 has 19,200,000,000 elements"):
        inspect_onnx(tmp_path / "resize.onnx")

    n = 10_000
    chain = [H("Relu", ["x" if i == 0 else f"r{i - 1}"], [f"r{i}" if i < n - 1 else "y"]) for i in range(n)]
    onnx_mod.save(model(chain, {"x": [1, 4]}, {"y": [1, 4]}), str(tmp_path / "deep.onnx"))
    with pytest.raises(ModelError, match=f"more than {LIMITS.max_nodes:,} nodes"):
        read_onnx(tmp_path / "deep.onnx")
    n = LIMITS.max_nodes                         # at the limit: read, and inspected without recursion
    chain = [H("Relu", ["x" if i == 0 else f"r{i - 1}"], [f"r{i}" if i < n - 1 else "y"]) for i in range(n)]
    onnx_mod.save(model(chain, {"x": [1, 4]}, {"y": [1, 4]}), str(tmp_path / "deep_ok.onnx"))
    assert len(inspect_onnx(tmp_path / "deep_ok.onnx").nodes) == n


def test_nodes_out_of_order_are_sorted_and_cycles_refused(onnx_mod, tmp_path):
    from onnx import helper

    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower import read_onnx

    nodes = [H("Sigmoid", ["r"], ["y"]), H("Relu", ["x"], ["r"])]          # keras2onnx order
    g = helper.make_graph(nodes, "g", model([H("Relu", ["x"], ["y"])], {"x": [1, 4]}, {"y": [1, 4]}).graph.input,
                          model([H("Relu", ["x"], ["y"])], {"x": [1, 4]}, {"y": [1, 4]}).graph.output)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx_mod.save(m, str(tmp_path / "unsorted.onnx"))
    r = read_onnx(tmp_path / "unsorted.onnx")
    assert [n.op_type for n in r.graph.node] == ["Relu", "Sigmoid"]
    assert any("not in topological order" in note for note in r.notes)
    cyc = helper.make_graph([H("Relu", ["x", "y"], ["r"]), H("Sigmoid", ["r"], ["y"])], "g", g.input, g.output)
    m = helper.make_model(cyc, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx_mod.save(m, str(tmp_path / "cycle.onnx"))
    with pytest.raises(ModelError, match="cycle"):
        read_onnx(tmp_path / "cycle.onnx")


def test_inspect_and_quantize_say_the_same(onnx_mod, tmp_path):
    """inspect's verdict and the check lower() runs first are one function: a Dropout whose mask is read
    is refused by both with the same reason; with the mask unused, both accept it."""
    from edgebench.errors import ModelError
    from edgebench.quantize.onnx_lower import read_onnx
    from edgebench.quantize.onnx_lower.inspect import inspect_onnx
    from edgebench.quantize.onnx_lower.verdict import require_convertible

    shape = [1, 3, 4, 4]
    used = model([H("Dropout", ["x"], ["d", "mask"]), H("Cast", ["mask"], ["mf"], to=1), H("Add", ["d", "mf"], ["y"])],
                 {"x": shape}, {"y": shape})
    unused = model([H("Dropout", ["x"], ["d", "mask"]), H("Relu", ["d"], ["y"])], {"x": shape}, {"y": shape})
    for m, name in ((used, "used.onnx"), (unused, "unused.onnx")):
        onnx_mod.save(m, str(tmp_path / name))
    r = inspect_onnx(tmp_path / "used.onnx")
    assert not r.to_dict()["convertible"] and "mask output" in r.reasons[0]
    with pytest.raises(ModelError) as e:
        require_convertible(read_onnx(tmp_path / "used.onnx"))
    assert r.reasons[0] in e.value.one_line()
    r = inspect_onnx(tmp_path / "unused.onnx")
    assert r.to_dict()["convertible"] and not r.reasons
    assert require_convertible(read_onnx(tmp_path / "unused.onnx")).convertible


# ---------------------------------------------------------------- the conversion child

def _segfault(progress=None):
    import signal

    progress("about to crash")
    import ctypes

    ctypes.string_at(0)          # a real invalid read: a library's SIGSEGV handler cannot turn it into a return
    os.kill(os.getpid(), signal.SIGSEGV)


def _hog_memory(progress=None):
    return np.ones(1 << 30, dtype=np.float64).sum()           # 8 GiB, over the 4 GiB limit


def _spin(progress=None):
    while True:
        pass


def _refuse(progress=None):
    from edgebench.errors import DataError

    raise DataError("calibration data has NaN", "clean it")


def test_child_crash_limits_and_errors_are_one_line():
    from edgebench.errors import DataError, ModelError
    from edgebench.quantize.child import ChildLimits, run_contained

    said = []
    with pytest.raises(ModelError) as e:
        run_contained(_segfault, (), {}, said.append, what="quantize m.onnx")
    assert "quantize m.onnx ended without a result: the child process was killed by SIGSEGV" in e.value.one_line()
    assert said == ["about to crash"]
    with pytest.raises(ModelError, match="out of memory"):
        run_contained(_hog_memory, (), {}, limits=ChildLimits(4 << 30, 60))
    with pytest.raises(ModelError, match="SIGXCPU"):
        run_contained(_spin, (), {}, limits=ChildLimits(4 << 30, 1))
    with pytest.raises(DataError, match="calibration data has NaN"):      # edgebench errors keep their type
        run_contained(_refuse, (), {})


@pytest.mark.slow
def test_cli_refuses_bombs_in_one_line(onnx_mod, tmp_path):
    """quantize and inspect on the Resize bomb: exit 1, one line, no traceback, before TensorFlow."""
    import subprocess
    import sys

    resize = model([H("Resize", ["x", "", "scales"], ["y"], mode="nearest")], {"x": [1, 3, 8, 8]},
                   {"y": [1, 3, 80000, 80000]}, [init("scales", [1, 1, 1e4, 1e4])])
    onnx_mod.save(resize, str(tmp_path / "resize.onnx"))
    np.save(tmp_path / "c.npy", np.zeros((4, 3, 8, 8), np.float32))
    for argv in (["quantize", str(tmp_path / "resize.onnx"), "--calib", str(tmp_path / "c.npy")],
                 ["inspect", str(tmp_path / "resize.onnx")]):
        p = subprocess.run([sys.executable, "-m", "edgebench", *argv], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_COLOR": "1"})
        lines = [ln for ln in p.stderr.splitlines() if ln.strip() and "loading" not in ln and ln.startswith("error")]
        assert p.returncode == 1 and len(lines) == 1 and "19,200,000,000 elements" in lines[0], p.stderr
        assert "Traceback" not in p.stderr and "loading TensorFlow" not in p.stderr
