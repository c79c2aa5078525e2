"""`edgebench compile --target edgetpu`: the compiler log parser and the whole path with a fake compiler.

The sample logs in tests/data/edgetpu_compiler_*.log are written for these tests from the
format Coral documents and its compiler prints (summary lines, then with ``-s`` the
"Operator / Count / Status" table); they describe no real model run.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MLPERF_DIR

from edgebench.errors import ModelError, UsageError
from edgebench.runtime.edgetpu import (
    CompileFailed,
    CompilerNotFound,
    compile_edgetpu,
    parse_compiler_log,
)

DATA = Path(__file__).resolve().parent / "data"
MLPERF = MLPERF_DIR
DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"
KIB, MIB = 1024, 1024 * 1024


def _log(name: str) -> str:
    return (DATA / f"edgetpu_compiler_{name}.log").read_text()


# --------------------------------------------------------------------------- parser


def test_parse_fully_mapped():
    r = parse_compiler_log(_log("mapped"))
    assert r.succeeded and r.fully_mapped and r.error is None
    assert r.compiler_version == "16.0.384591198"
    assert (r.input_model, r.output_model) == ("kws_ref_model.tflite", "kws_ref_model_edgetpu.tflite")
    assert r.on_chip_memory_used_bytes == round(38.50 * KIB)
    assert r.on_chip_memory_remaining_bytes == round(7.95 * MIB)
    assert r.off_chip_memory_used_bytes == 0
    assert r.edgetpu_subgraphs == 1
    assert (r.total_operations, r.operations_on_edgetpu, r.operations_on_cpu) == (13, 13, 0)
    assert r.compile_time_s == pytest.approx(0.412)
    assert r.operation_log == "kws_ref_model_edgetpu.log"
    assert [(o.operator, o.count) for o in r.operators][:2] == [("CONV_2D", 5), ("DEPTHWISE_CONV_2D", 4)]
    assert all(o.mapped for o in r.operators)
    assert r.sizes_as_logged["on_chip_memory_remaining_bytes"] == "7.95MiB"


def test_parse_partially_mapped():
    r = parse_compiler_log(_log("partial"))
    assert r.succeeded and not r.fully_mapped
    assert (r.total_operations, r.operations_on_edgetpu, r.operations_on_cpu) == (58, 49, 9)
    assert r.off_chip_memory_used_bytes == 128 * KIB
    assert r.on_chip_memory_used_bytes == round(2.85 * MIB)
    # the table agrees with the summary lines
    assert sum(o.count for o in r.operators if o.mapped) == 49
    assert sum(o.count for o in r.operators if not o.mapped) == 9
    statuses = {o.status for o in r.operators}
    assert "More than one subgraph is not supported" in statuses
    assert ("Operation is otherwise supported, but not mapped due to some unspecified limitation"
            in statuses)
    quantize = [o for o in r.operators if o.operator == "QUANTIZE"]
    assert [(o.count, o.mapped) for o in quantize] == [(1, True), (1, False)]
    d = r.to_dict()
    assert d["operators"][1] == {"operator": "CONV_2D", "count": 2,
                                 "status": "More than one subgraph is not supported", "mapped": False}


def test_parse_not_quantized():
    r = parse_compiler_log(_log("not_quantized"))
    assert not r.succeeded
    assert r.error == "Model not quantized"
    assert r.compiler_version == "15.0.340273435"
    assert r.input_model == "sensor_net_fp32.tflite"
    assert r.operators == () and r.total_operations is None


def test_parse_interpreter_failure_and_older_and_tableless_formats():
    failed = ("Edge TPU Compiler version 16.0.384591198\n"
              "Started a compilation timeout timer of 180 seconds.\n"
              "ERROR: something in the model is dynamic.\n"
              "Compilation failed: Model failed in Tflite interpreter.\n"
              "Compilation child process completed within timeout period.\n"
              "Compilation failed! \n")
    r = parse_compiler_log(failed)
    assert not r.succeeded
    assert r.error == "ERROR: something in the model is dynamic.; Compilation failed: Model failed in Tflite interpreter."
    # an older compiler names the files "Input:" / "Output:" and may print the table only
    older = ("Edge TPU Compiler version 14.1.317412892\n"
             "Input: net.tflite\nOutput: net_edgetpu.tflite\n\n"
             "Operator                       Count      Status\n\n"
             "CONV_2D                        3          Mapped to Edge TPU\n"
             "MEAN                           1          Operation not supported\n")
    r = parse_compiler_log(older)
    assert (r.input_model, r.output_model) == ("net.tflite", "net_edgetpu.tflite")
    assert (r.total_operations, r.operations_on_edgetpu, r.operations_on_cpu) == (4, 3, 1)
    assert not r.succeeded and r.error  # no "compiled successfully" line: not claimed as a success
    # without -s: no table; the summary without CPU counts means everything mapped
    tableless = "\n".join(_log("mapped").split("Operator ")[0].splitlines()) + "\nCompilation succeeded!\n"
    r = parse_compiler_log(tableless)
    assert r.succeeded and r.operators == ()
    assert (r.total_operations, r.operations_on_edgetpu, r.operations_on_cpu) == (13, 13, 0)


# --------------------------------------------------------------------------- with a fake compiler

FAKE = """#!{python}
import json, os, shutil, sys
from pathlib import Path

argv = sys.argv[1:]
Path(os.environ["FAKE_EDGETPU_ARGV"]).write_text(json.dumps(argv))
log = Path(os.environ["FAKE_EDGETPU_LOG"]).read_text()
sys.stdout.write(log)
if "Invalid model" in log:
    sys.exit(1)
out, model = Path(argv[argv.index("-o") + 1]), Path(argv[-1])
if os.environ.get("FAKE_EDGETPU_WRITE", "1") == "1":
    shutil.copyfile(model, out / (model.stem + "_edgetpu.tflite"))
    (out / (model.stem + "_edgetpu.log")).write_text(log)
"""


@pytest.fixture()
def fake_compiler(tmp_path, monkeypatch):
    """A fake edgetpu_compiler first on PATH; returns a function choosing its log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "edgetpu_compiler"
    exe.write_text(FAKE.format(python=sys.executable))
    exe.chmod(0o755)
    argv_file = tmp_path / "argv.json"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_EDGETPU_ARGV", str(argv_file))

    def use(log_name: str):
        monkeypatch.setenv("FAKE_EDGETPU_LOG", str(DATA / f"edgetpu_compiler_{log_name}.log"))
        return argv_file

    use("mapped")
    return use


@pytest.fixture()
def int8_model(tmp_path):
    """The digits INT8 model and its sidecar, copied where the test may write."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DIGITS / "digits_int8.tflite", src)
    shutil.copy(DIGITS / "digits_int8.tflite.json", src)
    return src / "digits_int8.tflite"


def test_compile_writes_sidecar_and_carries_the_input_one(fake_compiler, int8_model, tmp_path):
    argv_file = fake_compiler("mapped")
    out = tmp_path / "out"
    run = compile_edgetpu(int8_model, out)
    assert json.loads(argv_file.read_text()) == ["-s", "-o", str(out), str(int8_model)]
    assert run.command[0] == shutil.which("edgetpu_compiler")
    assert Path(run.output_model) == out / "digits_int8_edgetpu.tflite"
    sidecar = json.loads((out / "digits_int8_edgetpu.tflite.json").read_text())
    original = json.loads((DIGITS / "digits_int8.tflite.json").read_text())
    assert sidecar["preprocessing"] == original["preprocessing"]          # carried over
    assert sidecar["derived_from"]["sha256"] == original["model_sha256"]
    assert sidecar["model_sha256"] == run.output_sha256
    ec = sidecar["edgetpu_compile"]
    assert ec["succeeded"] and ec["fully_mapped"]
    assert ec["operations_on_edgetpu"] == 13 and ec["operations_on_cpu"] == 0
    assert ec["on_chip_memory_used_bytes"] == round(38.5 * 1024)
    assert ec["carried_sidecar"] == str(int8_model) + ".json"
    assert ec == json.loads(json.dumps(run.to_dict()))


def test_compile_default_out_dir_is_beside_the_model(fake_compiler, int8_model):
    run = compile_edgetpu(int8_model)
    assert Path(run.output_model).parent == int8_model.parent
    assert Path(run.sidecar).is_file()


def test_compile_refuses_float_model_before_running(fake_compiler, tmp_path):
    argv_file = fake_compiler("mapped")
    with pytest.raises(ModelError, match="not a full-integer model") as info:
        compile_edgetpu(DIGITS / "digits_fp32.tflite", tmp_path)
    assert "run `edgebench quantize`" in info.value.one_line()
    with pytest.raises(ModelError, match="dynamic-range"):
        compile_edgetpu(MLPERF / "kws_ref_model_float32.tflite", tmp_path)
    assert not argv_file.exists()          # the compiler never ran
    assert list(tmp_path.glob("*.tflite")) == []


def test_compile_failure_is_one_typed_error(fake_compiler, int8_model, tmp_path):
    fake_compiler("not_quantized")
    with pytest.raises(CompileFailed) as info:
        compile_edgetpu(int8_model, tmp_path / "out")
    assert "Model not quantized" in info.value.one_line()
    assert "edgebench quantize" in info.value.one_line()
    assert info.value.log is not None and not info.value.log.succeeded
    assert not list((tmp_path / "out").glob("*.json"))


def test_compile_success_without_output_file(fake_compiler, int8_model, tmp_path, monkeypatch):
    fake_compiler("mapped")
    monkeypatch.setenv("FAKE_EDGETPU_WRITE", "0")
    with pytest.raises(CompileFailed, match="wrote no model"):
        compile_edgetpu(int8_model, tmp_path / "out")


def test_no_compiler(monkeypatch, int8_model, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))          # nothing there
    with pytest.raises(CompilerNotFound) as info:
        compile_edgetpu(int8_model, tmp_path)
    line = info.value.one_line()
    assert "edgetpu_compiler not found" in line and "x86-64" in line and "edgetpu-compiler" in line
    assert "Colab" in line


# --------------------------------------------------------------------------- CLI


def test_cli_partial_mapping_table_and_warnings(typer_invoke, fake_compiler, int8_model, tmp_path):
    fake_compiler("partial")
    res = typer_invoke(["compile", str(int8_model), "--target", "edgetpu", "-o", str(tmp_path / "o")],
                       env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    assert "49 of 58 on the Edge TPU, 9 on the CPU" in res.stdout
    assert "More than one subgraph is not supported" in res.stdout
    assert "128.00 KiB" in res.stdout
    assert "warning: 9 of 58 operations stay on the CPU" in res.stderr


def test_cli_json(typer_invoke, fake_compiler, int8_model, tmp_path):
    fake_compiler("mapped")
    res = typer_invoke(["compile", str(int8_model), "--target", "edgetpu", "-o", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    sidecar = json.loads((tmp_path / "digits_int8_edgetpu.tflite.json").read_text())
    assert data == sidecar["edgetpu_compile"]
    assert data["target"] == "edgetpu" and data["compiler_version"] == "16.0.384591198"


def test_cli_unknown_target(typer_invoke, int8_model):
    res = typer_invoke(["compile", str(int8_model), "--target", "vela"])
    assert res.exit_code != 0
    assert isinstance(res.exception, UsageError)


def _main(args, path_env):
    code = "import sys; from edgebench.cli.app import main; main(sys.argv[1:])"
    env = {**os.environ, "PATH": path_env, "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=60, env=env)


def test_cli_without_compiler_one_line_exit_1(int8_model, tmp_path):
    proc = _main(["compile", str(int8_model), "--target", "edgetpu"], str(tmp_path))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("error: edgetpu_compiler not found")
    assert "apt" in proc.stderr and "Colab" in proc.stderr


def test_cli_float_model_one_line_exit_1(fake_compiler, tmp_path):
    proc = _main(["compile", str(DIGITS / "digits_fp32.tflite"), "--target", "edgetpu", "-o", str(tmp_path)],
                 os.environ["PATH"])
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "edgebench quantize" in proc.stderr


def test_cli_compiler_failure_one_line_exit_1(fake_compiler, int8_model, tmp_path):
    fake_compiler("not_quantized")
    proc = _main(["compile", str(int8_model), "--target", "edgetpu", "-o", str(tmp_path)], os.environ["PATH"])
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert "edgetpu_compiler failed on digits_int8.tflite (exit 1): Model not quantized" in proc.stderr
