"""The command line: --json parity with the library result, one-line errors, exit codes."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DIGITS_INT8
from typer.testing import CliRunner

from edgebench.cli.app import app
from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--min-samples", "50", "--min-time", "0.3", "--max-time", "1.5"]


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_bench_json_equals_stored_result(tmp_path):
    res = CliRunner().invoke(app, ["bench", str(DIGITS_INT8), "--runs-dir", str(tmp_path), "--json", *FAST])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path)
    assert printed == store.read_result(run_dir).to_dict()


def test_runs_lists_and_shows(tmp_path):
    assert CliRunner().invoke(app, ["bench", str(DIGITS_INT8), "--runs-dir", str(tmp_path), *FAST]).exit_code == 0
    listing = CliRunner().invoke(app, ["runs", "--runs-dir", str(tmp_path), "--json"])
    rows = json.loads(listing.stdout)
    assert len(rows) == 1 and rows[0]["model"] == "digits_int8" and rows[0]["status"] == "complete"
    shown = CliRunner().invoke(app, ["runs", "latest", "--runs-dir", str(tmp_path)])
    assert shown.exit_code == 0 and "claim:" in shown.stdout


@pytest.mark.parametrize("args,needle", [
    (["bench", "nope.tflite"], "model file nope.tflite does not exist"),
    (["bench", str(DIGITS_INT8), "--board", "raspbery-pi-5"], "unknown board"),
    (["bench", str(DIGITS_INT8), "--scenario", "fixed-rate"], "positive --rate"),
    (["runs", "zzz"], "no run 'zzz'"),
    (["bench", str(DIGITS_INT8), "--bogus"], "No such option: --bogus"),
    (["bench", str(DIGITS_INT8), "--threads", "abc"], "Invalid value for '--threads'"),
])
def test_bad_input_gives_one_line_and_exit_1(tmp_path, args, needle, cli):
    p = cli(*args, "--runs-dir", tmp_path) if args[0] in ("bench", "runs") else cli(*args)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in p.stderr
    assert store.find_runs(tmp_path) == []


def test_usage_error_points_at_the_verbs_help(cli):
    p = cli("bench", str(DIGITS_INT8), "--bogus")
    assert p.returncode == 1 and p.stderr.strip().endswith("(see edgebench bench --help)")


def test_unknown_verb_is_one_line(cli):
    p = cli("nosuchverb")
    assert p.returncode == 1 and p.stderr.strip().count("\n") == 0
    assert "No such command" in p.stderr and "(see edgebench --help)" in p.stderr


def test_corrupt_model(tmp_path, cli):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(DIGITS_INT8.read_bytes()[:100])
    p = cli("bench", bad, "--runs-dir", tmp_path / "runs")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "TFLite model" in p.stderr
    assert not (tmp_path / "runs").exists() or store.find_runs(tmp_path / "runs") == []


def test_debug_shows_traceback(tmp_path):
    p = run_cli("--debug", "bench", "nope.tflite", "--runs-dir", tmp_path)
    assert p.returncode == 1 and "Traceback" in p.stderr


def test_debug_is_accepted_after_the_verb_too(tmp_path, cli):
    p = run_cli("runs", "zzz", "--runs-dir", tmp_path, "--debug")
    assert p.returncode == 1 and "Traceback" in p.stderr and "No such option" not in p.stderr
    plain = cli("runs", "zzz", "--runs-dir", tmp_path)
    assert plain.returncode == 1 and "Traceback" not in plain.stderr


def test_shell_completion_is_on():
    import os
    import shlex

    # typer detects the shell from the parent processes (shellingham): under `make` that is sh,
    # which it does not support, so ask from a bash parent as a user's terminal would (`; exit` keeps
    # bash from exec'ing the command in its own place)
    shown = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} -m edgebench --show-completion; exit $?"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "_EDGEBENCH_COMPLETE" in shown.stdout, shown.stdout + shown.stderr
    env = {**os.environ, "_EDGEBENCH_COMPLETE": "complete_bash", "_TYPER_COMPLETE_ARGS": "edgebench rep",
           "COMP_WORDS": "edgebench rep", "COMP_CWORD": "1"}
    p = subprocess.run([sys.executable, "-m", "edgebench"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout.split() == ["report"], p.stdout + p.stderr


def test_version_and_help_do_not_import_heavy_modules():
    code = ("import sys; from edgebench.cli.app import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('tensorflow', 'matplotlib', 'pandas', 'scipy', 'ai_edge_litert') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in p.stdout, p.stdout + p.stderr


def test_demo_json_has_both_runs_the_ratio_and_the_emulated_board(tmp_path):
    from conftest import require_tool

    for tool in ("arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    p = run_cli("demo", "--runs-dir", tmp_path, "--min-time", "0.3", "--max-time", "1", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["fp32"]["model"]["precision"] == "fp32" and out["int8"]["model"]["precision"] == "int8"
    speed = out["comparison"]["speedup"]
    assert speed["ci_low"] <= speed["ratio"] <= speed["ci_high"]
    # the two models ran interleaved in one invocation: compared without the between-invocation term
    assert out["comparison"]["case"].startswith("interleaved") and out["comparison"]["variation"]["session"] is None
    tp = out["emulated"]["bench"]["throughput"]      # the emulated device rate apart from the host-limited one
    assert tp["host_limited_per_s"] < tp["per_s"] and "emulated" in tp["definition"]
    assert out["emulated"]["verify"]["bit_exact"] is True
    assert out["emulated"]["bench"]["label"] == "emulated"
    assert out["emulated"]["bench"]["extra"]["claim"].startswith("EMULATED")
    assert len(store.find_runs(tmp_path)) == 3


def test_runs_shows_a_run_whose_process_is_gone_as_abandoned(tmp_path, cli):
    from edgebench.results.model import RunResult

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    d = store.new_run_dir(tmp_path, "m", "host")
    store.write_result(d, RunResult(run_id="r1", created_utc="2026-11-24T00:00:00+00:00", status="running"))
    data = json.loads((d / store.RUN_JSON).read_text())
    data["extra"]["writer"]["pid"] = dead.pid
    (d / store.RUN_JSON).write_text(json.dumps(data))
    listing = CliRunner().invoke(app, ["runs", "--runs-dir", str(tmp_path), "--json"])
    assert listing.exit_code == 0 and json.loads(listing.stdout)[0]["status"] == "abandoned"
    table = cli("runs", "--runs-dir", tmp_path)
    assert table.returncode == 0 and "abandoned" in table.stdout and "running" not in table.stdout
    shown = cli("runs", "latest", "--runs-dir", tmp_path, "--json")
    assert shown.returncode == 0 and f"pid {dead.pid}" in shown.stderr and "abandoned" in shown.stderr
    assert json.loads(shown.stdout)["status"] == "running"      # the folder itself is not changed


def test_runs_of_a_missing_folder_is_one_line_and_exit_1(tmp_path, cli):
    p = cli("runs", "--runs-dir", tmp_path / "nonexistent")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == f"error: runs folder {tmp_path / 'nonexistent'} does not exist: check --runs-dir"


@pytest.mark.slow
def test_wheel_ships_the_firmware_sources_and_the_licence(tmp_path):
    """A wheel install can build the firmware (demo's emulated step) without a source checkout."""
    import os
    import zipfile

    from conftest import require_tool

    require_tool("make")
    require_tool("cc")
    dist = tmp_path / "dist"
    code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(dist)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = dist / proc.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        zf.extractall(tmp_path / "site")
    assert {"edgebench/_data/firmware/Makefile", "edgebench/_data/firmware/core/eb_engine.c",
            "edgebench/_data/firmware/ports/posix/port.mk"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in meta
    for dropped in ("statsmodels", "scikit-learn"):   # extras, not requirements (arch is one: stats.dependence)
        assert not [ln for ln in meta.splitlines() if ln.startswith(f"Requires-Dist: {dropped}")
                    and "extra ==" not in ln], dropped
    # Built from the unpacked wheel in a folder that is no checkout: the sources come from the wheel.
    code = ("import sys; from edgebench.mcu.firmware import build_firmware, firmware_dir; "
            "print(firmware_dir()); print(build_firmware('posix', out=sys.argv[1]))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    env.pop("EDGEBENCH_FIRMWARE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "build")], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    src, image = proc.stdout.split()
    assert Path(src) == tmp_path / "site" / "edgebench" / "_data" / "firmware"
    assert Path(image).is_file() and os.access(image, os.X_OK)


@pytest.mark.parametrize("args,needle", [
    (["bench", str(DIGITS_INT8), "--image", "x.elf"], "board host is a linux board"),
    (["verify", str(DIGITS_INT8), "--board", "nucleo-l4r5zi", "--image", str(DIGITS_INT8)], "is a real board"),
    (["deploy", str(DIGITS_INT8), "--board", "qemu-m4", "--image", str(DIGITS_INT8), "--url", "/dev/null"], "give one of the two"),
    (["bench", str(DIGITS_INT8), "--board", "qemu-m4", "--image", "missing.elf"], "firmware image missing.elf does not"),
    (["demo", "--image", "missing.elf"], "firmware image missing.elf does not"),
])
def test_image_is_refused_where_it_cannot_start_the_board(tmp_path, args, needle, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = cli(*args)
    assert p.returncode == 1 and p.stderr.startswith("error: ") and needle in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "runs").exists()


@pytest.mark.qemu
def test_image_starts_the_emulated_board_with_that_firmware(tmp_path, posix_firmware_bin):
    """verify and bench on posix-sim run the image given (a copy here), not a build of their own."""
    import shutil

    image = tmp_path / "my-firmware"
    shutil.copy2(posix_firmware_bin, image)
    p = run_cli("verify", DIGITS_INT8, "--board", "posix-sim", "--image", image, "--count", "4", "--json",
                "--runs-dir", tmp_path / "runs")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["gate"]["passed"] is True
    p = run_cli("bench", DIGITS_INT8, "--board", "posix-sim", "--image", image, "--runs-dir", tmp_path / "runs",
                "--repeat", "2", "--min-time", "0.2", "--max-time", "1", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["latency"]["e2e"]["runs"] == 2
    broken = tmp_path / "broken"       # an image that is no firmware: the board does not come up
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    p = run_cli("verify", DIGITS_INT8, "--board", "posix-sim", "--image", broken, "--count", "4")
    assert p.returncode == 1 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True])
def test_demo_prints_the_host_results_before_a_failing_emulated_step(tmp_path, as_json):
    """The emulated step fails (no firmware sources): the host runs and their comparison are already out
    (with --json: one document holding them and the emulated step's error)."""
    import os

    env = {**os.environ, "EDGEBENCH_FIRMWARE_DIR": str(tmp_path / "nofirmware")}
    p = subprocess.run([sys.executable, "-m", "edgebench", "demo", "--runs-dir", str(tmp_path / "runs"),
                        "--repeat", "2", "--min-time", "0.2", "--max-time", "1", *(["--json"] if as_json else [])],
                       capture_output=True, text=True, env=env, timeout=300)
    from conftest import require_tool

    if p.returncode == 0:   # the emulated board was skipped: its tools are missing here
        require_tool("arm-none-eabi-gcc")
    assert p.returncode == 1 and "firmware sources not found" in p.stderr.splitlines()[-1], p.stderr
    if as_json:
        out = json.loads(p.stdout)
        assert out["fp32"]["status"] == out["int8"]["status"] == "complete" and out["comparison"]["stages"]
        assert "firmware sources not found" in out["emulated"]["error"]
    else:
        assert p.stdout.count("claim:") == 2 and "INT8 vs FP32, end to end:" in p.stdout
    assert len(store.find_runs(tmp_path / "runs")) == 2


def _rendered(fn, *args) -> list:
    from rich.console import Console

    console = Console(width=80, record=True, color_system=None, file=open("/dev/null", "w"))
    fn(console, *args)
    return console.export_text().splitlines()


def test_bench_and_sweep_tables_fit_80_columns_without_cutting_headers():
    from edgebench.cli.render import latency_table
    from edgebench.cli.render.thermal import print_sweep
    from edgebench.results.model import RunResult

    stage = {"n": 144131, "median_s": 1.2e-5, "ci_low_s": 1.19e-5, "ci_high_s": 1.21e-5, "p90_s": 1.29e-5,
             "p99_s": 2.54e-5, "p999_s": 3.43e-5, "mean_s": 1.18e-5, "mad_s": 5.52e-7, "min_s": 7.91e-6}
    r = RunResult(run_id="r", created_utc="2026-11-25T00:00:00+00:00", status="complete",
                  model={"name": "digits_fp32"}, board={"name": "host"},
                  latency={s: dict(stage) for s in ("e2e", "prep", "set", "invoke", "get")})
    lines = _rendered(lambda c: c.print(latency_table(r)))
    assert max(map(len, lines)) <= 80 and len(lines) == 2 + 5       # title, header, one line per stage
    assert lines[1].split() == ["stage", "median", "95%", "CI", "p90", "p99", "p99.9", "mean", "MAD", "min", "n"]
    point = {"id": "p01", "name": "duty 0.01", "status": "complete", "axis": "duty", "duty": 0.01,
             "realized_duty": 0.0101, "throughput_per_s": 1.01, "run_id": "x", "steady": True, "duration_s": 240.0,
             "latency": {"median_s": 0.0074, "ci_low_s": 0.00739, "ci_high_s": 0.00741},
             "steady_temp_c": 80.3, "sustained_freq_hz": 1.6e9, "throttled": True, "time_to_first_throttle_s": 4.0,
             "energy": {"per_inference_j": 0.0402, "label": "simulated"}}
    sweep = RunResult(run_id="s", created_utc="2026-11-25T00:00:00+00:00", status="complete", kind="sweep",
                      label="simulated", model={"name": "digits_int8"}, board={"name": "sim-pi5"},
                      power={"label": "simulated"},
                      extra={"points": [dict(point, id=f"p0{i}") for i in range(1, 5)]})
    lines = _rendered(print_sweep, sweep, "/tmp/x")
    assert max(map(len, lines)) <= 80
    rows = [ln for ln in lines if ln.startswith("p0")]
    assert len(rows) == 4 and all("7.40 ms [7.39–7.41]" in ln and "80.3" in ln for ln in rows)   # one line each


# --- the shape of the command line: shared options, one home for renderers, help of every verb ---

CLI = ROOT / "edgebench" / "cli"
SHARED = ("--json", "--boards-dir", "--board", "--url", "--runs-dir", "--image", "--cpus", "--seed", "--inputs",
          "--recover", "--debug", "--rate", "--farm", "--kernels", "--threads", "--delegate")


def _verbs():
    from edgebench.cli.app import commands

    return commands()


def _declared_options(path: Path) -> set:
    """Long names of the options a module declares with typer.Option (written out, or a parameter's name)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    param_of = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = fn.args.args + fn.args.kwonlyargs
            defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + fn.args.defaults + fn.args.kw_defaults
            param_of.update({id(d): a.arg for a, d in zip(args, defaults) if d is not None})
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("typer.Option", "Option"):
            spelled = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                       and a.value.startswith("--")]
            if spelled:
                names.update(s.split("/")[0] for s in spelled)
            elif id(node) in param_of:
                names.add("--" + param_of[id(node)].replace("_", "-"))
    return names


def test_each_shared_option_is_declared_once_in_cli_options():
    shared = _declared_options(CLI / "options.py")
    assert set(SHARED) <= shared
    for path in sorted(CLI.rglob("*.py")):
        if path.name != "options.py":
            again = shared & _declared_options(path)
            assert not again, f"{path.relative_to(ROOT)} declares {sorted(again)} again: use edgebench.cli.options"
    # and the verbs do take them: --board in every verb that reaches a board, --json in every verb that has data
    takes = {name: {o for p in cmd.params for o in p.opts} for name, cmd in _verbs().items()}
    assert {v for v, opts in takes.items() if "--board" in opts} >= {"bench", "soak", "sweep", "energy", "accuracy",
                                                                      "verify", "deploy", "flash", "demo"}
    assert {v for v, opts in takes.items() if "--json" not in opts} <= {"report"}


def test_no_verb_module_imports_another_verb_module():
    import ast

    verbs = {p.stem for p in CLI.glob("*_cmd.py")}
    assert len(verbs) >= 15
    for path in sorted(CLI.rglob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{a.name}" for a in node.names)
        others = {m.rsplit(".", 1)[1] for m in imported if m.startswith("edgebench.cli.")} & (verbs - {path.stem})
        assert not others, f"{path.relative_to(ROOT)} imports the verb module(s) {sorted(others)}: " \
                           "shared renderers live in edgebench.cli.render"


def test_every_verb_has_help_with_all_its_options():
    verbs = _verbs()
    assert len(verbs) >= 18
    for name, cmd in verbs.items():
        res = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, (name, res.output)
        text = res.stdout
        assert cmd.help and " ".join(cmd.help.split())[:40] in " ".join(text.split()), name
        for param in cmd.params:
            if getattr(param, "hidden", False) or not param.opts[0].startswith("--"):
                continue
            assert param.opts[0] in text, f"{name} --help does not show {param.opts[0]}"
            assert param.help, f"{name} {param.opts[0]} has no help text"


def test_long_verbs_group_their_options_in_panels():
    from edgebench.cli import options as opt

    verbs = _verbs()
    for name in ("bench", "soak", "sweep", "energy", "battery", "accuracy"):
        panels = {p.opts[0]: getattr(p, "rich_help_panel", None) for p in verbs[name].params}
        where = {"--board": opt.BOARD, "--boards-dir": opt.BOARD, "--url": opt.BOARD, "--runs-dir": opt.OUTPUT,
                 "--json": opt.OUTPUT, "--recover": opt.OUTPUT, "--kernels": opt.RUNTIME, "--seed": opt.RUNTIME}
        for option, panel in where.items():
            if option in panels:
                assert panels[option] == panel, (name, option, panels[option])
        grouped = sum(1 for p in panels.values() if p)
        assert grouped >= len(panels) / 2, f"{name}: only {grouped} of {len(panels)} options are in a panel"
        text = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"}).stdout
        for panel in {p for p in panels.values() if p}:
            assert f"─ {panel} ─" in text, (name, panel)
