"""The benchmark-model method of `edgebench profile`: LiteRT's benchmark_model run by the agent with
operator profiling in proto mode, its output parsed with edgebench's copy of profiling_info.proto
(in a descriptor pool of its own; checked field by field against ai_edge_litert.profiling_info_pb2).

benchmark_model ships in no wheel here: the parser is tested against protocol buffers built in the
test (the message the real tool's ProfileSummaryProtoFormatter writes), and the run path against
tests/fakes/fake_benchmark_model.py, a faithful fake of the binary (its flags, its proto file written
with ai_edge_litert.profiling_info_pb2, its log line), run by a real local agent.

LiteRT's and TensorFlow's generated modules both define tflite.profiling.* in protobuf's default
pool, under two file names, and the second one imported fails ("duplicate symbol"): this process
imports neither (tf.lite elsewhere in the suite loads TensorFlow's); the tests that need them run a
child Python.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import DIGITS_INT8, missing

from edgebench.errors import AgentError
from edgebench.runtime.benchmark_model import PROFILING_MESSAGES, parse_log, parse_profile, profiling_message

ROOT = Path(__file__).resolve().parents[1]
FAKE = Path(__file__).parent / "fakes" / "fake_benchmark_model.py"
LOG = """INFO: STARTING!
INFO: Log parameter values verbosely: [0]
INFO: Graph: [model.tflite]
INFO: Loaded model model.tflite
INFO: The input model file size (MB): 0.054
INFO: Initialized session in 3.1ms.
INFO: Running benchmark for at least 1 iterations and at least 0.5 seconds but terminate if exceeding 150 seconds.
INFO: count=2410 first=443 curr=198 min=196 max=443 avg=206.6 std=13
INFO: Running benchmark for at least 50 iterations and at least 1 seconds but terminate if exceeding 150 seconds.
INFO: count=4887 first=205 curr=201 min=196 max=322 avg=204.2 std=7 p5=198 median=202 p95=215
INFO: Inference timings in us: Init: 3100, First inference: 443, Warmup (avg): 206.6, Inference (avg): 204.2
"""


def _proto(rows, delegate_rows=()) -> bytes:
    msg = profiling_message()()
    sub = msg.runtime_profile.subgraph_profiles.add()
    sub.subgraph_index = 0
    for order, (name, node_type, avg) in enumerate(rows):
        p = sub.per_op_profiles.add()
        p.name, p.node_type, p.run_order, p.times_called = name, node_type, order, 1
        p.inference_microseconds.avg = avg
        p.inference_microseconds.stddev = 1.5
        p.inference_microseconds.count = 100
    if delegate_rows:
        d = msg.runtime_profile.delegate_profiles.add()
        for order, (name, avg) in enumerate(delegate_rows):
            p = d.per_op_profiles.add()
            p.name, p.node_type, p.run_order = name, "DelegateOpInvoke", order
            p.inference_microseconds.avg = avg
            p.inference_microseconds.count = 100
    return msg.SerializeToString()


def test_the_parser_reads_nodes_in_run_order_with_their_operator_index():
    data = _proto([("[b]:1", "DEPTHWISE_CONV_2D", 30), ("[a;x]:0", "CONV_2D/some kernel", 120)])
    prof = parse_profile(data, LOG)
    assert [(r.node_index, r.op, r.avg_us) for r in prof.rows] == [(1, "DEPTHWISE_CONV_2D", 30.0),
                                                                   (0, "CONV_2D", 120.0)]
    assert prof.rows[0].stddev_us == 1.5 and prof.rows[0].count == 100
    assert prof.whole["inference_avg_us"] == 204.2 and prof.whole["median_us"] == 202.0
    assert prof.whole["count"] == 4887 and prof.whole["std_us"] == 7.0


def test_delegate_internal_operators_are_kept_apart():
    data = _proto([("[out]:13", "TfLiteXNNPackDelegate", 200)],
                  [("Delegate/Convolution (NHWC, QC8) IGEMM:0", 120), ("Delegate/Softmax:1", 3)])
    prof = parse_profile(data)
    assert len(prof.rows) == 1 and prof.rows[0].node_index == 13
    assert [r.delegate_internal for r in prof.delegate_rows] == [True, True]
    assert prof.delegate_rows[0].node_index is None          # the delegate's names, not the model's


def test_what_is_not_a_profile_is_one_clear_error():
    with pytest.raises(AgentError, match="not a BenchmarkProfilingData"):
        parse_profile(b"\xff\xff\xff\xff garbage")
    with pytest.raises(AgentError, match="no runtime profile"):
        parse_profile(b"")
    assert parse_log("no timings here") == {}


def _child(*code: str) -> subprocess.CompletedProcess:
    """The ``code`` blocks in a fresh Python (its own protobuf default pool), edgebench importable."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", "\n".join(textwrap.dedent(c) for c in code)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_the_schema_is_litert_s_profiling_info_proto():
    got = _child("""
        import json
        from ai_edge_litert import profiling_info_pb2 as pb
        from google.protobuf import descriptor_pb2
        proto = descriptor_pb2.FileDescriptorProto()
        pb.DESCRIPTOR.CopyToProto(proto)
        print(json.dumps({m.name: [[f.name, f.number, f.type, f.label == f.LABEL_REPEATED,
                                    f.type_name.rsplit(".", 1)[-1] or None] for f in m.field]
                          for m in proto.message_type}))
    """)
    assert got.returncode == 0, got.stderr
    from google.protobuf.descriptor_pb2 import FieldDescriptorProto as F

    types = {"string": F.TYPE_STRING, "int32": F.TYPE_INT32, "int64": F.TYPE_INT64, "float": F.TYPE_FLOAT,
             "message": F.TYPE_MESSAGE}
    ours = {name: [[f[0], f[1], types[f[2]], f[4], f[3]] for f in fields] for name, fields in PROFILING_MESSAGES.items()}
    assert json.loads(got.stdout) == ours


_TF_PROTO = """
    import importlib.util
    from pathlib import Path

    def tensorflow_profiling_info():
        # what `import tensorflow.lite` does (tensorflow/lite/python/lite.py imports it), without the rest
        # of TensorFlow: tflite.profiling.* registered under tensorflow/lite/profiling/proto/profiling_info.proto
        path = Path(importlib.util.find_spec("tensorflow").origin).parent / "lite/profiling/proto/profiling_info_pb2.py"
        spec = importlib.util.spec_from_file_location("tensorflow.lite.profiling.proto.profiling_info_pb2", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
"""


@pytest.mark.tensorflow
def test_the_profile_parses_after_tensorflow_registered_its_own_profiling_proto():
    """Regression: with TensorFlow's profiling_info_pb2 loaded first (any test that touched tf.lite),
    parsing imported ai_edge_litert.profiling_info_pb2 and failed with "duplicate symbol
    'tflite.profiling.BenchmarkProfilingData'". And parsing first must not break a later tf.lite."""
    import importlib.util

    if importlib.util.find_spec("tensorflow") is None:   # found, not imported: this process imports neither
        missing("tensorflow is not installed (pip install edgebench[quantize])")
    first = _child(_TF_PROTO, """
        tf = tensorflow_profiling_info()
        msg = tf.BenchmarkProfilingData()
        p = msg.runtime_profile.subgraph_profiles.add().per_op_profiles.add()
        p.name, p.node_type, p.inference_microseconds.avg = "[a]:0", "CONV_2D", 120
        from edgebench.runtime.benchmark_model import parse_profile
        print([(r.node_index, r.op, r.avg_us) for r in parse_profile(msg.SerializeToString()).rows])
    """)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "[(0, 'CONV_2D', 120.0)]"
    then = _child(_TF_PROTO, """
        from edgebench.runtime.benchmark_model import parse_profile, profiling_message
        msg = profiling_message()()
        msg.runtime_profile.subgraph_profiles.add().per_op_profiles.add(name="[a]:0", node_type="CONV_2D")
        assert parse_profile(msg.SerializeToString()).rows[0].op == "CONV_2D"
        print(tensorflow_profiling_info().BenchmarkProfilingData.FromString(msg.SerializeToString())
              .runtime_profile.subgraph_profiles[0].per_op_profiles[0].name)
    """)
    assert then.returncode == 0, then.stderr
    assert then.stdout.strip() == "[a]:0"


@pytest.fixture
def fake_binary(tmp_path):
    """The fake, executable, with this interpreter (which has ai-edge-litert) in its #! line."""
    exe = tmp_path / "benchmark_model"
    exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def _profile(cli, tmp_path, *more):
    return cli("profile", DIGITS_INT8, "--board", "host", "--method", "benchmark-model", "--repeat", "2", "--runs", "20",
               "--runs-dir", tmp_path / "runs", "--json", *more)


def test_builtin_kernels_give_one_row_per_operator(cli, tmp_path, fake_binary):
    got = _profile(cli, tmp_path, "--benchmark-model", fake_binary, "--kernels", "builtin")
    assert got.returncode == 0, got.stderr
    run = json.loads(got.stdout)
    p = run["extra"]["profile"]
    assert run["kind"] == "profile" and p["method"] == "benchmark-model" and p["statistic"] == "mean"
    ops = [r for r in p["layers"] if r["key"].startswith("op:")]
    assert [round(r["median_s"] * 1e6) for r in ops] == [10, 20, 30, 40, 50, 60]
    assert all(r["ci_low_s"] < r["median_s"] < r["ci_high_s"] for r in ops)
    assert p["whole"]["median_s"] == pytest.approx(215e-6)
    assert p["sum_ratio"]["ratio"] == pytest.approx(210 / 215) and p["sum_ratio"]["runs"] == 2
    argv = p["methods_info"][0]["argv"]
    assert "--enable_op_profiling=true" in argv and "--op_profiling_output_mode=proto" in argv
    assert "--use_xnnpack=false" in argv and "--num_runs=20" in argv


@pytest.mark.slow
def test_xnnpack_shows_the_delegate_node_and_its_own_operators_outside_the_sum(cli, tmp_path, fake_binary):
    got = _profile(cli, tmp_path, "--benchmark-model", fake_binary)
    assert got.returncode == 0, got.stderr
    p = json.loads(got.stdout)["extra"]["profile"]
    node = [r for r in p["layers"] if r["key"].startswith("node:")]
    inner = [r for r in p["layers"] if r["key"].startswith("inner:")]
    assert len(node) == 1 and node[0]["op"] == "TfLiteXNNPackDelegate" and node[0]["in_sum"]
    assert len(inner) == 6 and not any(r["in_sum"] for r in inner)
    assert all(r["median_s"] is None and "not timed" in r["note"] for r in p["layers"] if r["key"].startswith("op:"))
    assert p["sum_ratio"]["ratio"] == pytest.approx(210 / 215)


@pytest.mark.slow
def test_a_missing_or_failing_binary_is_one_line(cli, tmp_path, fake_binary, monkeypatch):
    got = _profile(cli, tmp_path, "--benchmark-model", tmp_path / "nope")
    errors = [line for line in got.stderr.splitlines() if line.startswith("error:")]
    assert got.returncode == 1 and len(errors) == 1 and "Traceback" not in got.stderr
    assert "does not exist on this computer" in errors[0] and "--benchmark-model" in errors[0]
    assert not list((tmp_path / "runs").glob("*"))           # nothing measured: no run folder left
    monkeypatch.setenv("FAKE_BM_EXIT", "3")
    got = _profile(cli, tmp_path, "--benchmark-model", fake_binary)
    assert got.returncode == 1 and "exited with status 3" in got.stderr and "Failed to apply" in got.stderr
    assert not list((tmp_path / "runs").glob("*/run.json")) or all(
        json.loads(p.read_text())["status"] != "running" for p in (tmp_path / "runs").glob("*/run.json"))


@pytest.mark.slow
def test_reference_kernels_are_refused_for_benchmark_model(cli, tmp_path, fake_binary):
    got = _profile(cli, tmp_path, "--benchmark-model", fake_binary, "--kernels", "reference")
    assert got.returncode == 1 and "xnnpack or builtin" in got.stderr


@pytest.mark.slow
def test_the_binary_is_found_on_the_boards_path(cli, tmp_path, fake_binary, monkeypatch):
    monkeypatch.setenv("PATH", f"{fake_binary.parent}{os.pathsep}{os.environ['PATH']}")
    got = _profile(cli, tmp_path, "--kernels", "builtin")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["extra"]["profile"]["methods_info"][0]["binary"] == str(fake_binary)
