"""`edgebench report`: one self-contained HTML file per set of runs (every kind's figures), rendered in
headless Chromium without console errors; the Markdown form; the command's errors."""
import base64
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DIGITS_FP32, DIGITS_INT8, exit_code, require_tool
from test_compare_cmd import make_run

from edgebench.report import html
from edgebench.report.check import check

ROOT = Path(__file__).resolve().parents[1]
DATASHEET_BOARD = """schema: 1
name: ds-host
title: host with datasheet power (test)
kind: linux
soc: ""
transport: {type: local}
runtimes: [ai_edge_litert, tflite_runtime]
kernels: [xnnpack, builtin, reference]
delegates: []
default_threads: 1
telemetry: [thermal_zone, cpufreq, hwmon]
datasheet: {source: "a test datasheet", idle_power_w: 1.0, typical_load_power_w: 3.0}
flasher: null
"""


def eb(*args):
    res = subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return res


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One run of every kind edgebench makes on this computer (real verbs), plus two synthetic bench runs."""
    root = tmp_path_factory.mktemp("runs")
    boards = tmp_path_factory.mktemp("boards")
    (boards / "ds-host.yaml").write_text(DATASHEET_BOARD)
    for model in (DIGITS_FP32, DIGITS_INT8):
        eb("bench", model, "--runs-dir", root, "--repeat", "2", "--max-repeats", "2", "--min-samples", "50",
           "--min-time", "0.3", "--max-time", "1.5")
    eb("soak", DIGITS_INT8, "--board", "sim-pi5", "--window", "20", "--runs-dir", root)
    eb("accuracy", DIGITS_INT8, "--baseline", DIGITS_FP32, "--data", "digits:test", "--edge-cases", "--families", "low_light,blur",
       "--max-edge-drop", "5", "--runs-dir", root)  # gates act on the upper bound: low_light/s5 reaches 4.1
    eb("energy", DIGITS_INT8, "--board", "ds-host", "--boards-dir", boards, "--rate", "20", "--idle-s", "0.5",
       "--min-time", "1", "--max-time", "2", "--runs-dir", root)
    eb("sweep", DIGITS_INT8, "--board", "sim-pi5", "--duty", "0.5,1", "--window", "10", "--runs-dir", root)
    # the simulated power meter records a trace (the datasheet board above has none)
    eb("energy", DIGITS_INT8, "--board", "sim-pi5", "--rate", "20", "--idle-s", "0.5", "--min-time", "1", "--max-time", "2",
       "--runs-dir", root)
    dirs = sorted(p for p in root.iterdir() if (p / "run.json").exists())
    kinds = {}
    from edgebench.results.store import read_result

    for d in dirs:
        r = read_result(d)
        key = "bench_fp32" if r.kind == "bench" and r.model.precision == "fp32" else r.kind
        kinds.setdefault("energy_sim" if r.kind == "energy" and r.label == "simulated" else key, d)
    assert set(kinds) == {"bench_fp32", "bench", "soak", "accuracy", "energy", "sweep", "energy_sim"}
    synth = tmp_path_factory.mktemp("synthetic")
    make_run(synth, "base", 1e-3, seed=1)
    make_run(synth, "slow", 1.5e-3, seed=3)
    return {"root": root, "kinds": kinds, "synthetic": synth}


def chromium_render(path: Path, shot: Path, size="1200,2000", min_bytes=10_000):
    """DOM as Chromium sees it, and the console messages it logged (the page has no script: any is an error)."""
    exe = require_tool("chromium")
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
              "--hide-scrollbars", f"--window-size={size}"]
    dom = subprocess.run(common + ["--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    grab = subprocess.run(common + [f"--screenshot={shot}", path.as_uri()], capture_output=True, text=True,
                          timeout=120)
    assert grab.returncode == 0 and shot.stat().st_size > min_bytes, grab.stderr[-2000:]
    console = [line for line in (dom.stderr + grab.stderr).splitlines()
               if ":CONSOLE" in line or "Uncaught" in line or "Failed to load" in line]
    return dom.stdout, console


def _text(dom: str) -> str:
    return " ".join(_html_unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<img[^>]*>", " ", dom))).split())


def _html_unescape(s):
    import html as h

    return h.unescape(s)


def assert_self_contained(text: str):
    assert "<script" not in text.lower() and "<link" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert "@import" not in text and "url(" not in text
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert images
    for data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    return len(images)


def test_every_kind_in_one_report_renders_without_console_errors(runs, tmp_path):
    k = runs["kinds"]
    out = tmp_path / "all.html"
    assert exit_code("report", *(k[x] for x in ("bench_fp32", "bench", "soak", "accuracy", "energy", "sweep",
                                          "energy_sim")), "-o", out) == 0
    text = out.read_text()
    assert assert_self_contained(text) >= 10
    dom, console = chromium_render(out, tmp_path / "all.png", size="1200,3400")
    assert console == [], console
    page = _text(dom)
    # the page starts with the claim, the conditions and the check verdicts
    assert page.index("Claim") < page.index("Conditions") < page.index("Check") < page.index("1. benchmark")
    for condition in ("precision", "runtime", "kernels", "threads", "delegate", "board", "CPU", "pinning",
                      "governor", "OS", "thermal state", "inputs", "label"):
        assert f" {condition} " in page
    assert "These runs mix measured, simulated figures" in page
    for rule in ("single-run", "burst-as-sustained", "mixed-labels", "test-set-too-small", "speedup-without-accuracy"):
        assert rule in page
    for alt in ("latency histogram and CDF", "stage breakdown", "soak time series", "reliability diagram",
                "edge-case slices", "energy trace", "battery life against duty cycle", "Pareto view"):
        assert f'alt="{alt}"' in text, alt
    assert "Burst against sustained" in page and "SIMULATED (a physics model" in page
    assert "ECE (bias-corrected)" in page and "ECE 95% CI" in page   # not the plug-in ECE, biased at small n
    assert "idle power" in page and "estimated (datasheet)" in page
    assert "timeseries.png (written by edgebench sweep)" in page


def test_two_bench_runs_are_compared_and_the_markdown_form(runs, tmp_path):
    synth = runs["synthetic"]
    out = tmp_path / "cmp.html"
    assert exit_code("report", "base", "slow", "--runs-dir", synth, "-o", out) == 0
    text = out.read_text()
    assert_self_contained(text)
    dom, console = chromium_render(out, tmp_path / "cmp.png")
    assert console == []
    page = _text(dom)
    assert "Comparisons" in page and "model_slow is 0.67x the speed of model_base" in page
    md = tmp_path / "cmp.md"
    assert exit_code("report", "base", "slow", "--runs-dir", synth, "--md", "-o", md) == 0
    m = md.read_text()
    assert m.startswith("## edgebench report") and "| condition | base | slow |" in m
    assert "### Check" in m and "`single-run`" in m and "### Latency" in m and "<img" not in m
    assert r"model\_slow is 0\.67x the speed of model\_base" in m      # run fields escaped for GitHub


def test_sparse_runs_still_render(tmp_path):
    """A run with almost nothing recorded (an old or partial run) still gives a readable page."""
    from edgebench.results.model import RunResult

    r = RunResult(run_id="bare", created_utc="2026-01-01T00:00:00+00:00", status="incomplete",
                  status_reason="stopped by SIGTERM")
    data = [html.RunData(result=r)]
    text = html.render_html(data, check([r]))
    assert "no figures in this run" in text and "stopped by SIGTERM" in text
    assert "| condition | bare |" in html.render_markdown(data, check([r]))


def test_report_errors_are_one_line(runs, tmp_path, capsys):
    assert exit_code("report", "nosuch", "--runs-dir", runs["synthetic"], "-o", tmp_path / "x.html") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no run 'nosuch'") and err.count("\n") == 1
    assert not (tmp_path / "x.html").exists()


def test_console_error_detection_works(tmp_path):
    """The harness itself: a page with a script error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><p>x</p><script>undefined_fn();</script></body></html>")
    _, console = chromium_render(bad, tmp_path / "bad.png", size="400,300", min_bytes=100)
    assert any("Uncaught ReferenceError" in line for line in console)


def test_pareto_never_puts_two_labels_on_one_axis():
    """Issue 18: the Pareto plot put an emulated qemu-m4 latency beside a measured host latency. Each
    (model, latency label) is its own point, and the report draws one Pareto view per label."""
    from edgebench.results.model import RunResult

    def run(run_id, kind, label, sha, median=None, top1=None):
        r = RunResult(run_id=run_id, created_utc="2026-01-01T00:00:00+00:00", kind=kind, status="complete",
                      label=label)
        r.model = {"name": f"m{sha}", "sha256": sha * 64, "precision": "int8"}
        if median:
            r.latency = {"e2e": {"median_s": median, "ci_low_s": median * 0.9, "ci_high_s": median * 1.1}}
        if top1:
            r.extra = {"accuracy": {"accuracy": {"candidate": {"top1": {"accuracy": top1}}}}}
        return r

    runs = [html.RunData(result=r) for r in (
        run("h1", "bench", "measured", "a", 1e-5), run("q1", "bench", "emulated", "a", 3e-4),
        run("h2", "bench", "measured", "b", 2e-5), run("acc", "accuracy", "measured", "a", top1=0.9),
        run("acc2", "accuracy", "measured", "b", top1=0.95))]
    pts = html.pareto_points(runs)
    a = [p for p in pts if p["name"] == "ma int8"]
    assert sorted(p["latency_label"] for p in a) == ["emulated", "measured"]
    assert {p["latency_s"] for p in a} == {1e-5, 3e-4} and all(p["accuracy"] == 0.9 for p in a)
    page = html.render_html(runs, check([r.result for r in runs]), [], title="t", version="x")
    assert "Pareto view (measured latency)" in page and "Pareto view (emulated latency)" not in page  # one point
