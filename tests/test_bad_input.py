"""Bad input found by a mutation and option campaign: one clear line on stderr, exit 1, no
traceback, no run left ``running``."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import run_edgebench

from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits"
INT8 = DIGITS / "digits_int8.tflite"
FP32 = DIGITS / "digits_fp32.tflite"


def run_cli(*args, cwd=None):
    return run_edgebench(*args, cwd=cwd)


def one_error_line(p, needle: str) -> str:
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith(("connecting", "running"))]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    return lines[0]


def no_run_left_running(runs_dir: Path) -> None:
    for d in store.find_runs(runs_dir):
        assert json.loads((d / store.RUN_JSON).read_text())["status"] != "running"


def _repacked(mutate) -> bytes:
    """digits_int8 changed through the schema's object API and packed again (a well-formed
    flatbuffer with wrong content)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(INT8.read_bytes()), 0)
    mutate(m)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


@pytest.fixture
def bad_models(tmp_path):
    data = bytearray(INT8.read_bytes())
    out = {}
    root = int.from_bytes(data[:4], "little")
    p = tmp_path / "root_offset.tflite"                        # root table beyond the end
    p.write_bytes(b"\xff\xff\xff\x7f" + bytes(data[4:]))
    out["root"] = (p, "root table offset")
    p = tmp_path / "truncated.tflite"                          # a truncated download
    p.write_bytes(bytes(data[: len(data) // 3]))
    out["truncated"] = (p, "not a valid TFLite model")
    p = tmp_path / "vtable.tflite"                             # the root's vtable pointer smashed
    d = bytearray(data)
    d[root:root + 4] = (0x7FFFFFF0).to_bytes(4, "little")
    p.write_bytes(bytes(d))
    out["vtable"] = (p, "not a valid TFLite model")

    def negative_scale(m):                                     # made the runtime abort (SIGABRT)
        m.subgraphs[0].tensors[m.subgraphs[0].outputs[0]].quantization.scale = np.array([-5.0], np.float32)

    def bad_opcode(m):
        m.operatorCodes[0].builtinCode = 15597590

    def no_subgraphs(m):
        m.subgraphs = []

    for name, mutate, needle in (("scale", negative_scale, "invalid quantization scale"),
                                 ("opcode", bad_opcode, "builtin operator 15597590"),
                                 ("subgraphs", no_subgraphs, "no subgraphs")):
        p = tmp_path / f"{name}.tflite"
        p.write_bytes(_repacked(mutate))
        out[name] = (p, needle)
    return out


@pytest.mark.slow  # four verbs in subprocesses per case
@pytest.mark.parametrize("case", ["root", "truncated", "vtable", "scale", "opcode", "subgraphs"])
def test_malformed_models_are_refused_before_any_board_sees_them(tmp_path, bad_models, case):
    path, needle = bad_models[case]
    for verb in (["deploy", path, "--board", "qemu-m4"], ["verify", path, "--board", "host"],
                 ["inspect", path]):
        line = one_error_line(run_cli(*verb), needle)
        assert "TFLite model" in line
    p = run_cli("bench", path, "--runs-dir", tmp_path / "runs")
    one_error_line(p, needle)
    assert store.find_runs(tmp_path / "runs") == []


def test_valid_models_pass_the_structural_check():
    from edgebench.modelfile import read_model

    for name in ("digits_int8.tflite", "digits_fp32.tflite"):
        assert read_model(DIGITS / name).inputs


def test_inspect_of_a_device_is_refused_not_read_forever():
    one_error_line(run_cli("inspect", "/dev/zero"), "/dev/zero is a character device, not a model file")


def test_inspect_of_a_fifo_does_not_wait_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.tflite"
    os.mkfifo(fifo)
    one_error_line(run_cli("inspect", fifo), "is a named pipe, not a model file")


def test_deploy_of_a_directory_says_it_is_a_directory(tmp_path):
    one_error_line(run_cli("deploy", tmp_path, "--board", "qemu-m4"), f"{tmp_path} is a directory")


@pytest.mark.parametrize("name,content,needle", [
    ("empty.tflite", b"", "is not a TFLite model: it is an empty file"),
    ("notes.tflite", b"hello, world\n", "is not a TFLite model: it is a text file"),
    ("model.keras", b"", "not a Keras v3 archive (a .keras file is a zip archive; this one is an empty file"),
    ("model.h5", b"just text\n", "not an HDF5 file (it is a text file"),
    ("model.onnx", b"\x08\x07\x12\x00\x00binary", "model.onnx with onnx.load (onnx "),
])
def test_quantize_says_what_a_file_is_not(tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_bytes(content)
    line = one_error_line(run_cli("quantize", path, "--calib", "digits"), needle)
    assert "already a TFLite model" not in line


def test_quantize_still_recognises_a_real_tflite_model(tmp_path):
    one_error_line(run_cli("quantize", INT8, "--calib", "digits"), "is already a TFLite model")
    renamed = tmp_path / "model.keras"
    renamed.write_bytes(INT8.read_bytes())
    one_error_line(run_cli("quantize", renamed, "--calib", "digits"), "is already a TFLite model")


def test_runs_of_a_missing_folder_is_an_error(tmp_path):
    one_error_line(run_cli("runs", "--runs-dir", tmp_path / "nonexistent"), "does not exist")
    f = tmp_path / "file"
    f.write_text("x")
    one_error_line(run_cli("runs", "--runs-dir", f), "is not a folder")


@pytest.mark.parametrize("content,needle", [
    (b"garbage\n", "is not a readable .npz file (not a zip archive of arrays)"),
    (b"PK\x03\x04garbage-after-a-zip-signature", "is not a readable .npz file (BadZipFile"),
])
def test_accuracy_of_a_garbage_npz_is_a_data_error(tmp_path, content, needle):
    data = tmp_path / "garbage.npz"
    data.write_bytes(content)
    p = run_cli("accuracy", INT8, "--baseline", FP32, "--data", data, "--runs-dir", tmp_path / "runs")
    one_error_line(p, needle)
    no_run_left_running(tmp_path / "runs")


def _inputs(tmp_path, name, arr, **kw):
    path = tmp_path / name
    if name.endswith(".npz"):
        np.savez(path, x=arr)
    else:
        np.save(path, arr, **kw)
    return path


def test_verify_refuses_object_and_complex_inputs(tmp_path):
    obj = _inputs(tmp_path, "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    one_error_line(run_cli("verify", INT8, "--board", "host", "--inputs", obj), "holds an object array")
    objz = _inputs(tmp_path, "objz.npz", np.array([1, "a"], dtype=object))
    one_error_line(run_cli("verify", INT8, "--board", "host", "--inputs", objz), "holds an object array")
    cplx = _inputs(tmp_path, "cplx.npy", np.ones((2, 8, 8, 1), np.complex64) * (1 + 0.5j))
    one_error_line(run_cli("verify", INT8, "--board", "host", "--inputs", cplx), "inputs are complex (complex64)")


@pytest.mark.slow
def test_verify_warns_about_clamped_inputs(tmp_path):
    x = np.full((2, 8, 8, 1), 0.5, np.float32)
    x[0, 0, 0, 0], x[1, 0, 0, 0] = 50.0, -3.0                   # the int8 input spans [0, 1]
    path = _inputs(tmp_path, "big.npy", x)
    p = run_cli("verify", INT8, "--board", "host", "--inputs", path)
    assert p.returncode == 0, p.stderr
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "2 of 128 input values lie outside the range [0, 1]" in warnings[0]
    assert "will be clamped" in warnings[0] and "Traceback" not in p.stderr


def test_load_inputs_counts_clamped_values_and_leaves_float_inputs_alone(tmp_path):
    from edgebench.data.inputs import load_inputs
    from edgebench.errors import InputWarning

    x = np.array([[0.0], [1.0], [1.001], [2.0], [-0.5]], np.float32)
    path = _inputs(tmp_path, "x.npy", x)
    q = {"name": "in", "shape": [1, 1], "dtype": "int8", "quant": {"scale": 1 / 255, "zero_point": -128}}
    with pytest.warns(InputWarning, match="2 of 5 input values"):
        s = load_inputs(path, q)
    assert s.clamped == 2 and s.describe()["clamped"] == 2      # 1.001 is within half a step of 1
    f = {"name": "in", "shape": [1, 1], "dtype": "float32", "quant": None}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_inputs(path, f).clamped is None


@pytest.mark.parametrize("rate", ["inf", "nan", "0", "-5", "-inf"])
def test_fixed_rate_needs_a_positive_finite_rate(tmp_path, rate):
    p = run_cli("bench", INT8, "--scenario", "fixed-rate", f"--rate={rate}", "--runs-dir", tmp_path / "runs")
    one_error_line(p, "must be a finite number from 0.0001 to 1,000,000 inferences per second")
    assert store.find_runs(tmp_path / "runs") == []              # refused before a run folder exists


@pytest.mark.parametrize("extra,needle", [
    (["--scenario", "fixed-rate"], "the fixed-rate scenario needs a positive --rate"),
    (["--rate", "10"], "--rate applies to --scenario fixed-rate only (scenario is single-stream)"),
    (["--scenario", "offline", "--rate", "10"], "--rate applies to --scenario fixed-rate only (scenario is offline)"),
    (["--mlperf"], "--mlperf drives a microcontroller's MLPerf Tiny firmware; board host is a linux board"),
    (["--mlperf", "--board", "qemu-m4", "--rate", "5"], "--scenario and --rate do not apply"),
    (["--mlperf", "--board", "qemu-m4", "--scenario", "offline"], "--scenario and --rate do not apply"),
])
def test_bench_options_that_do_not_go_together_are_refused(tmp_path, extra, needle):
    p = run_cli("bench", INT8, *extra, "--runs-dir", tmp_path / "runs")
    one_error_line(p, needle)
    assert "AttributeError" not in p.stderr
    assert store.find_runs(tmp_path / "runs") == []


def test_mlperf_mode_refuses_a_linux_board_in_the_library():
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf
    from edgebench.boards.registry import get_profile
    from edgebench.errors import UsageError

    with pytest.raises(UsageError, match="board host is a linux board"):
        run_mlperf(INT8, get_profile("host"), MlperfOptions())


# ------------------------------------------------------------------ issue 22, item 9

def error_line(p, needle: str) -> str:
    """Exit 1, no traceback, one ``error:`` line holding ``needle`` (progress lines may come before it)."""
    assert p.returncode == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0] and "unexpected" not in errors[0], p.stderr
    return errors[0]


def _shape_changed(tmp_path, name, shape):
    def mutate(m):
        m.subgraphs[0].tensors[m.subgraphs[0].inputs[0]].shape = np.array(shape, np.int32)

    path = tmp_path / name
    path.write_bytes(_repacked(mutate))
    return path


@pytest.mark.slow  # two verbs in subprocesses, energy's idle window first
def test_a_model_claiming_huge_inputs_is_one_line_not_a_memory_error(tmp_path):
    path = _shape_changed(tmp_path, "huge.tflite", [1, 65536, 65536, 1])
    for verb in (["energy", path, "--board", "sim-pi5", "--rate", "1/s"], ["bench", path, "--board", "sim-pi5"]):
        line = error_line(run_cli(*verb, "--runs-dir", tmp_path / "runs"), "random inputs of the model's input")
        assert "MemoryError" not in line and "GiB" in line
    assert store.find_runs(tmp_path / "runs") == []


def test_a_zero_size_input_dimension_is_refused_on_every_board(tmp_path):
    path = _shape_changed(tmp_path, "empty.tflite", [1, 0, 8, 1])
    for board in ("sim-pi5", "host"):
        error_line(run_cli("bench", path, "--board", board, "--runs-dir", tmp_path / "runs"),
                       "input tensor 0 has a zero-size dimension in its shape [1, 0, 8, 1]")
    assert store.find_runs(tmp_path / "runs") == []


def test_an_unreadable_regular_file_as_a_model_is_one_line():
    error_line(run_cli("inspect", "/proc/self/mem"), "cannot read model file /proc/self/mem")


def test_a_run_reference_longer_than_a_file_name_is_one_line(tmp_path):
    line = error_line(run_cli("report", "x" * 5000, "--runs-dir", tmp_path), "no run 'xxx")
    assert len(line) < 300


@pytest.fixture
def one_run(tmp_path):
    from edgebench.results.model import RunResult

    d = tmp_path / "runs" / "20260101-000000-m-b"
    d.mkdir(parents=True)
    store.write_result(d, RunResult(run_id="abc123def456", created_utc="2026-01-01T00:00:00+00:00",
                                    status="complete"))
    return tmp_path / "runs"


@pytest.mark.slow  # six report commands in subprocesses
@pytest.mark.parametrize("target,needle", [("/dev/full", "is a character device, not a file"),
                                           ("DIR", "is a folder, not a file"),
                                           ("FIFO", "is a named pipe, not a file")])
def test_report_to_a_device_a_folder_or_a_fifo_is_one_line(tmp_path, one_run, target, needle):
    if target == "DIR":
        target = tmp_path
    elif target == "FIFO":
        target = tmp_path / "out.html"
        os.mkfifo(target)
    for extra in ([], ["--md"]):
        error_line(run_cli("report", "latest", "--runs-dir", one_run, "-o", target, *extra), needle)


@pytest.mark.slow  # waits out FIRST_BYTE_S (15 s)
def test_a_silent_serial_port_as_an_agent_fails_in_seconds_not_minutes(tmp_path):
    """bench --url on a serial port nobody answers: a clear line after FIRST_BYTE_S, not the 120 s hello."""
    import time

    master, slave = os.openpty()
    try:
        t0 = time.monotonic()
        p = run_cli("bench", INT8, "--url", os.ttyname(slave), "--runs-dir", tmp_path / "runs")
        took = time.monotonic() - t0
    finally:
        os.close(master)
        os.close(slave)
    error_line(p, "no byte at all in 15 s")
    assert "is the agent running on the board's console" in p.stderr and took < 60
