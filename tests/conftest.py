"""Shared pytest fixtures: tool checks and a throwaway sshd on 127.0.0.1."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlperf_models import DIGITS_FP32, DIGITS_INT8, MLPERF_DIR  # noqa: F401 (the tests import them from here)

from edgebench.boards.registry import get_profile
from edgebench.modelfile import read_model
from edgebench.results import store

# The firmware fixtures (posix_firmware_bin, fw, client) for every test module, without importing them
pytest_plugins = ["fw_util"]

# The MLPerf Tiny reference models are found in MLPERF_DIR (tests/mlperf_models.py says where it looks; the
# tests import it from here). A test that names one is marked `mlperf`: out of `make test-fast`, so the
# everyday lane needs nothing outside the repository; `make test` runs them (and fails under CI=true when
# they are missing).
_MLPERF_NAMES = re.compile(r"(MLPERF|KWS|RESNET)\w*")   # how the test modules name them


# A test runner started in the background of a non-interactive shell (`make test &`) inherits SIGINT
# ignored, and so would every edgebench the tests start: their Ctrl-C tests would find a Ctrl-C that
# does nothing (edgebench keeps an ignored signal ignored, as nohup expects). The tests' own process
# takes Python's default handler, which its children get back as the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist gives its workers COLUMNS=80 (the controller's width); the tests read what the CLI prints
    # to a pipe, 120 columns where COLUMNS is unset (edgebench.cli.output), the same in a worker as without one
    os.environ.pop("COLUMNS", None)


def missing(message: str):
    """Something the test needs is absent: skip locally, but fail under CI=true (a skip proves nothing)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: .ci/run must provide it)", pytrace=False)
    pytest.skip(message)


def require_tool(name: str) -> str:
    """Path of an external program; skip the test without it, but fail under CI=true."""
    path = shutil.which(name, path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))
    if path is None:
        missing(f"{name} is not installed")
    return path


def require_module(name: str):
    """An importable module; skip the test without it, but fail under CI=true."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} is not importable ({exc})")


#: A progress line of a long verb in a log (edgebench.cli.progress): "label: what [12 s]" or "[12 s, 3 s left of ...]".
PROGRESS_LINE = re.compile(r" \[\d+ s(, [^\]]*)?\]$")


def message_lines(stderr: str) -> list:
    """The lines of ``stderr`` that are not progress lines (a log gets those before a late refusal)."""
    return [ln for ln in stderr.splitlines() if ln.strip() and not PROGRESS_LINE.search(ln)]


def require_file(path):
    """A file the test reads (e.g. the shared MLPerf Tiny models); skip without it, fail under CI=true."""
    if not os.path.isfile(path):
        missing(f"{path} is not present")
    return path


def load_script(relpath: str):
    """A script of the repository (benchmarks/, scripts/: folders that are not packages), imported
    from ``relpath`` as a module named after its file."""
    path = Path(__file__).resolve().parents[1] / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class CtrlCAt:
    """A progress callback that presses Ctrl-C (raises KeyboardInterrupt) at the ``n``-th event
    named ``event``; ``seen`` holds those events."""

    def __init__(self, event: str, n: int):
        self.event, self.n = event, n
        self.seen: list = []

    def __call__(self, ev: dict) -> None:
        if ev["event"] == self.event:
            self.seen.append(ev)
            if len(self.seen) == self.n:
                raise KeyboardInterrupt


def interrupted_run(runs_dir):
    """The one run in ``runs_dir``, which Ctrl-C left incomplete: its folder and result."""
    (run_dir,) = store.find_runs(runs_dir)
    result = store.read_result(run_dir)
    assert result.status == "incomplete" and "Ctrl-C" in result.status_reason, result.status_reason
    return run_dir, result


def stop_process(proc: subprocess.Popen) -> None:
    """A test's helper process: SIGTERM, then SIGKILL after 5 s."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def exit_code(*args) -> int:
    """``edgebench ARGS`` in this process, its output left where it goes (to ``capsys``): its exit code, as the
    console script would give it (error lines, not tracebacks)."""
    from edgebench.cli.app import main  # imported here: conftest loads for every test, the app's take a second

    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    return 0


def run_edgebench(*args, cwd=None) -> subprocess.CompletedProcess:
    """``edgebench ARGS`` in this process: the same entry point (main: error lines, exit codes)
    without a Python start-up per call (about a second of imports each), as a CompletedProcess;
    a test that needs a real process (signals, a killed writer) runs ``python -m edgebench`` itself."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = exit_code(*args)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def _fresh_consoles():
    """Each test gets consoles made for its own environment: edgebench.cli.output keeps the rich consoles it
    made, with the width of that moment (COLUMNS), which would otherwise depend on the tests run before."""
    yield
    output = sys.modules.get("edgebench.cli.output")
    if output is not None:
        output._consoles.clear()


@pytest.fixture(scope="module")
def host():
    """The built-in ``host`` board profile (this machine, a local agent)."""
    return get_profile("host")


@pytest.fixture
def cli():
    """:func:`run_edgebench` as a fixture."""
    return run_edgebench


def agent_session(client, model_path, n_inputs: int, seed: int):
    """What a transport's end-to-end test does first over its channel (tests/test_transport_*.py): the
    agent's hello, the model uploaded (its sha256 checked) and loaded with the reference kernels, and
    ``n_inputs`` seeded inputs of its shape set. Returns (model, sha, inputs)."""
    assert client.hello()["protocol"] == 1
    model = read_model(model_path)
    sha = client.ensure_model(model)
    assert sha == hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
    info = client.load(sha, kernels="reference", threads=1)
    shape = list(info["inputs"][0]["shape"])
    x = np.random.default_rng(seed).standard_normal((n_inputs, *shape[1:])).astype(np.float32)
    client.set_inputs(x)
    return model, sha, x


@pytest.fixture
def typer_invoke(monkeypatch):
    """``typer_invoke(args, **kw)``: edgebench's typer app under typer's CliRunner (a click Result), on
    consoles made for the streams the runner redirects (edgebench.cli.output keeps the ones it made)."""
    # imported here, as in run_edgebench: conftest loads for every test, the app's imports take a second
    from typer.testing import CliRunner

    import edgebench.cli.output as output
    from edgebench.cli.app import app

    monkeypatch.setattr(output, "_consoles", {})
    runner = CliRunner()
    return lambda args, **kw: runner.invoke(app, args, **kw)


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory):
    """A real OpenSSH server on 127.0.0.1 (see tests/sshd_fixture.py)."""
    sshd = require_tool("sshd")
    for tool in ("ssh", "scp", "ssh-keygen"):
        require_tool(tool)
    from sshd_fixture import SshServer

    server = SshServer(tmp_path_factory.mktemp("sshd"), sshd=sshd).start()
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------------- lanes
# `make test-fast` runs `-m "not slow and not qemu and not fuzz and not tensorflow and not hardware and
# not mlperf"` in two processes in under a minute; `make test` and CI run everything. Markers are given here by module (what a module
# needs) and, for single heavy tests elsewhere, by name, so a new test file lands in the fast
# lane unless it says otherwise (pytestmark = pytest.mark.slow, or an entry here).
_MODULE_MARKS = {
    "test_firmware_qemu": ("qemu", "slow"),
    "test_mcu_host": ("qemu", "slow"),
    "test_firmware_fuzz": ("fuzz", "slow"),
    "test_blob_fuzz": ("fuzz", "slow"),
    "test_fault_injection": ("fuzz", "slow"),
    "test_quantize": ("tensorflow", "slow"),
    "test_digits_e2e": ("tensorflow", "slow"),
    "test_firmware_engine": ("tensorflow", "slow"),
    "test_energy": ("slow",),
    "test_sweep": ("slow",),
    "test_transport_ssh": ("slow",),
    "test_report": ("slow",),
    "test_farm_labgrid": ("qemu", "slow"),   # a real labgrid coordinator, exporters, ser2net, posix firmware
}
_SLOW_TESTS = ("test_demo_json", "test_killed_bench", "test_runs_lists_and_shows", "test_bench_json_equals",
               "test_agent_pinned", "test_offline_scenario", "test_user_inputs_are_used",
               "test_fixed_rate_below_one", "test_accuracy_through", "test_mlperf_tiny_pairs",
               "test_recover_from_the_command_line", "test_reference_kernels_and_fixed_rate",
               "test_digits_figures_match", "test_edge_cases_are_deterministic", "test_coarse_clock_is_widened",
               "test_silent_agent_times_out", "test_host_board_without_sensors", "test_stream_stopping_mid_run",
               "test_bench_on_the_simulated_board", "test_nothing_answering_names_the_baud_rate",
               # over ~1 s each in the lane (pytest --durations, 2-core VM under load, 2026-11-25); each
               # feature keeps a quicker test in the lane (a soak to steady state, a bench interrupted, ...)
               "test_still_heating_board_is_not_called_steady", "test_fixed_duration_soak_runs_to_the_maximum",
               "test_cool_down_to_a_stable_baseline", "test_claim_quotes_the_clock_and_temperature",
               "test_simulated_soak_states_the_energy", "test_snapshot_fallback_between_chunks",
               "test_fixed_rate_soak", "test_cool_down_timeout_is_a_warning",
               "test_killed_single_repeat_keeps_its_journalled_chunks", "test_cli_fit_too_small_arena_exit_2",
               "test_preprocessing_has_one_spelling", "test_cli_interval_gate_and_point_gate_labelled",
               "test_killed_run_is_recovered_from_its_journal", "test_structurally_mutated_models",
               "test_byte_flipped_models", "test_export_refuses_bad_file_names",
               "test_acquires_energy_and_marker_windows", "test_closing_a_process_channel_ends",
               "test_login_shell_instead_of_agent", "test_rapl_live_polling_integrates")


def _names(code) -> set:
    """The global names a function's code (and the code nested in it) refers to."""
    out = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            out |= _names(const)
    return out


def _names_mlperf(item) -> bool:
    """The test, a fixture of its module it uses, or one of its parameters names an MLPerf Tiny model."""
    funcs = [getattr(item, "function", None)] + [d.func for defs in item._fixtureinfo.name2fixturedefs.values()
                                                  for d in defs if d.func.__module__ == item.module.__name__]
    for func in funcs:
        code = getattr(func, "__code__", None)
        if code is not None and any(_MLPERF_NAMES.fullmatch(n) for n in _names(code)):
            return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(isinstance(v, Path) and str(v).startswith(str(MLPERF_DIR)) for v in params.values())


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        for name in _MODULE_MARKS.get(module, ()):
            item.add_marker(getattr(pytest.mark, name))
        if any(item.name.startswith(prefix) for prefix in _SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
        if _names_mlperf(item):
            item.add_marker(pytest.mark.mlperf)


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server on 127.0.0.1 and a Unix socket, run by an unprivileged user when the
    tests run as root (see tests/pg_fixture.py); stopped (``pg_ctl stop -m immediate``) at the end."""
    require_module("psycopg")
    from pg_fixture import PgServer, find_pg_bin

    if find_pg_bin() is None:
        missing("PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)")
    try:
        server = PgServer().start()
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        missing(f"PostgreSQL could not start: {exc}")
    try:
        yield server
    finally:
        server.stop()
