"""edgebench on a real labgrid farm on 127.0.0.1 (tests/labgrid_fixture.py).

A real ``labgrid-coordinator``, one ``labgrid-exporter`` per place exporting the posix firmware's
pseudo-terminal as a RawSerialPort (served over RFC 2217 by Debian's ``ser2net``), places tagged
``edgebench-profile=posix-sim``. The CLI runs as a real process (signals, exit codes, release).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DIGITS_INT8, require_module, require_tool

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--min-samples", "50", "--min-time", "0.3", "--max-time", "3", "--repeat", "1", "--max-repeats", "1"]
TAGS = {"edgebench-profile": "posix-sim", "board": "posix"}


@pytest.fixture(scope="module")
def farm(tmp_path_factory, posix_firmware_bin):
    require_module("labgrid")
    require_tool("ser2net")
    from labgrid_fixture import Farm

    farm = Farm(tmp_path_factory.mktemp("farm")).start()
    try:
        for name in ("pa", "pb"):
            farm.add_posix_place(name, posix_firmware_bin, TAGS)
        yield farm
    finally:
        farm.stop()


def edgebench(farm, *args, wait_s=5, timeout=180, env=None, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, LG_COORDINATOR=farm.address, EDGEBENCH_FARM_WAIT=str(wait_s), COLUMNS="160",
               **(env or {}))
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


def held_by(farm, place: str) -> str | None:
    for line in farm.client("-p", place, "show").stdout.splitlines():
        if line.strip().startswith("acquired:"):
            value = line.split(":", 1)[1].strip()
            return None if value == "None" else value
    raise AssertionError(f"no 'acquired:' line for place {place}")


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines()
             if ln.startswith("error:") or (ln.startswith("warning:") and "waiting up to" not in ln)]
    assert len(lines) == 1 and lines[0].startswith("error:"), stderr
    assert "Traceback" not in stderr, stderr
    return lines[0]


def test_everything_listens_on_loopback_only(farm):
    farm.client("-p", "pa", "acquire")          # the exporter starts ser2net on acquisition
    try:
        deadline = time.monotonic() + 10
        while len(farm.assert_loopback_only()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        found = farm.assert_loopback_only()
        assert len(found) >= 2, found          # the coordinator and ser2net, both on 127.0.0.1
    finally:
        farm.client("-p", "pa", "release")


def test_farm_lists_places_with_profiles(farm):
    r = edgebench(farm, "farm", "--json")
    assert r.returncode == 0, r.stderr
    listing = json.loads(r.stdout)
    assert listing["coordinator"] == farm.address
    places = {p["name"]: p for p in listing["places"]}
    assert {"pa", "pb"} <= set(places)
    assert places["pa"]["profile"] == "posix-sim" and places["pa"]["tags"]["board"] == "posix"
    assert [r["cls"] for r in places["pa"]["resources"]] == ["NetworkSerialPort"]
    assert places["pa"]["acquired"] is None
    r = edgebench(farm, "farm")
    assert r.returncode == 0 and "pa" in r.stdout and "posix-sim" in r.stdout and "free" in r.stdout


def enough_samples_or_said_so(result: dict, n: int, minimum: int = 50) -> None:
    """FAST asks for 50 samples within 3 s. A slow or loaded machine may spend the budget first
    over rfc2217: the run must then say so (per repeat and as a warning), not pass the short
    sample off as converged."""
    assert n > 0
    if n < minimum:
        stop = result["stopping"]
        assert not stop["target_reached"], stop
        said = (f"only {n:,} samples < minimum {minimum}", f"after {n:,} samples, too few for a")   # fewer than
        # the minimum, or too few (autocorrelated) for any interval of the median: either way said per repeat
        assert any(any(x in (r["reason"] or "") for x in said) for r in stop["per_repeat"]), stop
        assert "target-not-reached" in {w["code"] for w in result["warnings"]}


def test_bench_on_a_place_records_it_and_releases_it(farm, tmp_path):
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:pa", "--runs-dir", tmp_path, "--json", *FAST)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["status"] == "complete"
    board = result["board"]
    assert board["name"] == "posix-sim" and "labgrid place pa" in board["title"]
    assert board["transport"].startswith("serial rfc2217://127.0.0.1:")
    f = board["farm"]
    assert f["place"] == "pa" and f["exporters"] == ["exp-pa"] and f["exporter_hosts"] == ["127.0.0.1"]
    assert f["coordinator"] == farm.address and f["reservation"] and f["acquired_by"].count("/") == 1
    enough_samples_or_said_so(result, result["latency"]["e2e"]["n"])
    assert held_by(farm, "pa") is None          # released


def test_verify_and_deploy_by_tags(farm, tmp_path):
    r = edgebench(farm, "verify", DIGITS_INT8, "--board", "labgrid:board=posix", "--json")
    assert r.returncode == 0, r.stderr
    verdict = json.loads(r.stdout)
    assert "labgrid place" in json.dumps(verdict)
    r = edgebench(farm, "deploy", DIGITS_INT8, "--board", "labgrid:board=posix")
    assert r.returncode == 0, r.stderr
    assert held_by(farm, "pa") is None and held_by(farm, "pb") is None


def test_place_taken_by_someone_else(farm, tmp_path):
    farm.client("-p", "pb", "acquire", user="alice")
    try:
        start = time.monotonic()
        r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:pb", "--runs-dir", tmp_path, *FAST, wait_s=1)
        assert r.returncode == 75     # EX_TEMPFAIL: try again later
        line = one_error_line(r.stderr)
        assert "taken" in line and "alice" in line and "waited 1 s" in line, line
        assert time.monotonic() - start < 60
        assert held_by(farm, "pb").endswith("/alice")      # not ours to release
        assert not list(tmp_path.iterdir())                # nothing measured, no run folder
    finally:
        farm.client("-p", "pb", "release", user="alice")


def test_unknown_place_and_untagged_place(farm):
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:nosuch")
    line = one_error_line(r.stderr)
    assert r.returncode == 1 and "no labgrid place matches place nosuch" in line and "pa, pb" in line


def test_sigterm_releases_the_place(farm, tmp_path):
    with _reaped(_start_bench(farm, tmp_path, "--board", "labgrid:pa")) as proc:
        _wait_acquired(farm, "pa")
        time.sleep(1.0)
        err = _sigterm(proc, timeout_s=60)
    assert held_by(farm, "pa") is None, err


def test_coordinator_killed_mid_run(farm, tmp_path):
    try:
        # its exporter exits and stops ser2net: the serial link drops
        line, result = _broken_mid_run(farm, "pa", tmp_path, farm.kill_coordinator, timeout_s=90)
    finally:
        if not farm.coordinator_alive():
            farm.start_coordinator()
            farm.restore_places()
    assert "link to the board on labgrid place pa" in line and "not released" in line, line
    assert "coordinator is unreachable" in line and "list the serial ports" not in line, line
    assert "stopped by an error" in result["status_reason"]
    assert "[on labgrid place pa" in result["status_reason"], result["status_reason"]
    assert "list the serial ports" not in result["status_reason"]              # a local port's hint
    farm.wait_exporters()
    assert held_by(farm, "pa") is None      # a restarted coordinator holds nothing: the place is free


def test_ser2net_dropped_mid_run(farm, tmp_path):
    def drop_ser2net():
        served = farm.children("pb")
        assert served, "the exporter of pb runs no ser2net while pb is acquired"
        for pid in served:
            os.kill(pid, signal.SIGKILL)            # the board's serial connection drops

    line, _ = _broken_mid_run(farm, "pb", tmp_path, drop_ser2net, timeout_s=90)
    assert "labgrid place pb" in line and "rfc2217://127.0.0.1" in line and "not released" not in line, line
    assert "exporter exp-pb still serving" in line and "list the serial ports" not in line, line
    assert held_by(farm, "pb") is None       # released: the coordinator is still there


def test_exporter_gone_mid_run(farm, tmp_path):
    def kill_exporter():                      # the exporter dies (the supervisor restarts it)
        os.kill(farm.places["pa"].proc.pid, signal.SIGKILL)

    line, _ = _broken_mid_run(farm, "pa", tmp_path, kill_exporter, timeout_s=120)
    assert "labgrid place pa" in line and "exporter exp-pa still serving" in line and "released" in line, line
    assert held_by(farm, "pa") is None
    farm.wait_exporters()


def _broken_mid_run(farm, place, runs_dir, breaking, timeout_s):
    """A bench on ``place`` that ``breaking()`` interrupts once it has written samples: it exits 1 and
    keeps an incomplete run with its samples. Returns its error line and its run.json."""
    with _reaped(_start_bench(farm, runs_dir, "--board", f"labgrid:{place}")) as proc:
        _wait_acquired(farm, place)
        run_json = _wait_samples(runs_dir)
        breaking()
        _, err = proc.communicate(timeout=timeout_s)
    assert proc.returncode == 1, err
    result = json.loads(run_json.read_text())
    assert result["status"] == "incomplete" and (run_json.parent / "samples.parquet").is_file()
    return one_error_line(err), result


def _start_bench(farm, runs_dir, *boards, wait_s=10, **popen):
    """A long bench of INT8 (the farm's coordinator in its environment, waiting at most ``wait_s`` for a
    busy place) on ``boards`` (its --board or --farm arguments); its stdout and stderr piped as text
    unless ``popen`` says otherwise."""
    env = dict(os.environ, LG_COORDINATOR=farm.address, EDGEBENCH_FARM_WAIT=str(wait_s))
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **popen}
    return subprocess.Popen([sys.executable, "-m", "edgebench", "bench", str(DIGITS_INT8), *boards,
                             "--runs-dir", str(runs_dir), "--min-samples", "50", "--min-time", "0.5",
                             "--max-time", "60", "--repeat", "10", "--max-repeats", "10", "--target-ci", "0.0001"],
                            env=env, **popen)


@contextlib.contextmanager
def _reaped(proc: subprocess.Popen):
    """``proc`` for the block; killed if it still runs at the end (a wait or an assertion failed)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()


def _sigterm(proc: subprocess.Popen, timeout_s: float) -> str:
    """SIGTERM to ``proc``, which must end by it (exit 128 + SIGTERM); its stderr."""
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=timeout_s)
    assert proc.returncode == 128 + signal.SIGTERM, err
    return err


def _wait_acquired(farm, place, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if held_by(farm, place):
            return
        time.sleep(0.2)
    raise AssertionError(f"place {place} was not acquired within {timeout_s} s")


def _wait_samples(runs_dir: Path, timeout_s=60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for samples in runs_dir.glob("*/samples.parquet"):
            return samples.parent / "run.json"
        time.sleep(0.2)
    raise AssertionError("no samples were written")


def test_bench_fans_out_over_two_places(farm, tmp_path):
    r = edgebench(farm, "bench", DIGITS_INT8, "--farm", "board=posix", "--runs-dir", tmp_path, "--json", *FAST)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["format"] == "edgebench-farm-fanout" and summary["counts"] == {"ok": 2}, (summary, r.stderr)
    session = Path(summary["session_dir"])
    assert session.parent == tmp_path and (session / "farm.json").is_file()
    places = {p["place"]: p for p in summary["places"]}
    assert set(places) == {"pa", "pb"}
    for name, p in places.items():
        run = json.loads((Path(p["run_dir"]) / "run.json").read_text())
        assert Path(p["run_dir"]).parent == session / name
        assert run["board"]["farm"]["place"] == name and run["status"] == "complete", run["status_reason"]
        f = p["figure"]
        assert f["ci_low_s"] <= f["median_s"] <= f["ci_high_s"] and f["label"] == "measured", f
        enough_samples_or_said_so(run, f["n"])
    assert held_by(farm, "pa") is None and held_by(farm, "pb") is None, farm.client("places").stdout
    [comp] = summary["comparisons"]            # pb against pa: ratio of medians, its interval, Holm-adjusted
    assert (comp["baseline"], comp["candidate"]) == ("pa", "pb")
    assert comp["ci_low"] <= comp["ratio"] <= comp["ci_high"] and 0 < comp["p_holm"] <= 1
    assert comp["verdict"] in ("faster", "slower", "no difference shown")
    # the table: one row per place with its interval
    r = edgebench(farm, "bench", DIGITS_INT8, "--farm", "board=posix", "--runs-dir", tmp_path, *FAST)
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith(("pa ", "pb ")) and "posix-sim" in ln]
    assert len(rows) == 2 and all(" ok " in row for row in rows), (r.stdout, r.stderr)
    assert "pb vs pa: " in r.stdout and "x the speed (e2e median ratio, 95% CI" in r.stdout, r.stdout


def test_fan_out_skips_a_busy_place_with_a_line(farm, tmp_path):
    farm.client("-p", "pb", "acquire", user="bob")
    try:
        r = edgebench(farm, "bench", DIGITS_INT8, "--farm", "board=posix", "--runs-dir", tmp_path, "--json", *FAST,
                      wait_s=1)
    finally:
        farm.client("-p", "pb", "release", user="bob")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["counts"] == {"ok": 1, "busy": 1}
    assert "place pb: skipped, place pb is taken by" in r.stderr and "/bob" in r.stderr, r.stderr


def test_verify_fans_out_too(farm, tmp_path):
    r = edgebench(farm, "verify", DIGITS_INT8, "--farm", "board=posix", "--count", "8", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert Path(json.loads(r.stdout)["session_dir"]).parent == Path("runs")    # ./runs/farm-verify-...
    summary = json.loads(r.stdout)
    assert summary["verb"] == "verify" and summary["counts"] == {"ok": 2}
    assert {p["verdict"] for p in summary["places"]} == {"bit-exact"}
    assert all(p["result"]["board"]["name"] == "posix-sim" for p in summary["places"])
    r = edgebench(farm, "verify", DIGITS_INT8)
    assert r.returncode == 1 and "missing option --board" in r.stderr


SSH_WRAPPER = """#!{python}
# test wrapper: the real {tool} with the test's client config (host keys checked against the test
# sshd's known_hosts); the board's agent cache goes to a temp folder, not the real home
import os, sys
args = [a.replace(".cache/edgebench", {board!r}) for a in sys.argv[1:]]
os.execv({real!r}, [{real!r}, "-F", {config!r}, *args])
"""


@pytest.fixture(scope="module")
def ssh_place(farm, sshd_server, tmp_path_factory):
    """A place whose board is reached over the local sshd (a NetworkService), profile farm-linux."""
    import shutil

    root = tmp_path_factory.mktemp("ssh-place")
    boards = root / "boards"
    boards.mkdir()
    (boards / "farm-linux.yaml").write_text(
        "schema: 1\nname: farm-linux\ntitle: a Linux board behind sshd (test)\nkind: linux\n"
        f"transport: {{type: ssh, url: 'ssh://nobody@192.0.2.1', python: {sys.executable}}}\n"
        "runtimes: [ai_edge_litert]\nkernels: [xnnpack, builtin, reference]\ndelegates: []\n"
        "default_threads: 1\ntelemetry: []\ndatasheet: null\nflasher: null\n")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    config = sshd_server.client_config()
    for tool in ("ssh", "scp"):
        wrapper = bin_dir / tool
        wrapper.write_text(SSH_WRAPPER.format(python=sys.executable, tool=tool, real=shutil.which(tool),
                                              config=str(config), board=str(root / "board")))
        wrapper.chmod(0o755)
    farm.add_place("linux1", {"net": {"NetworkService": {"address": "127.0.0.1", "username": sshd_server.user,
                                                          "port": sshd_server.port}}},
                   {"edgebench-profile": "farm-linux", "board": "linux"})
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return boards, env


def test_linux_board_over_its_network_service(farm, ssh_place, tmp_path):
    boards, env = ssh_place
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:board=linux", "--boards-dir", boards,
                  "--runs-dir", tmp_path, "--json", *FAST, env=env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["board"]["name"] == "farm-linux" and result["board"]["farm"]["place"] == "linux1"
    assert result["board"]["farm"]["resources"][0]["cls"] == "NetworkService"
    assert "ssh" in result["board"]["transport"] and "127.0.0.1" in result["board"]["transport"]
    assert held_by(farm, "linux1") is None


@pytest.fixture(scope="module")
def power_switch():
    """A network power switch on 127.0.0.1 speaking labgrid's ``simplerest`` model: GET
    /relay/INDEX/VALUE switches (VALUE 0 or 1), GET /relay/INDEX reads; every switch is recorded."""
    import http.server
    import threading

    switched: list = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            parts = self.path.strip("/").split("/")
            if len(parts) == 3:
                switched.append((int(parts[1]), int(parts[2]), time.monotonic()))
            state = next((v for i, v, _ in reversed(switched) if i == int(parts[1])), 1)
            body = str(state).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], switched
    finally:
        server.shutdown()
        server.server_close()


def test_a_place_with_a_power_port_is_power_cycled_first(farm, power_switch, posix_firmware_bin, tmp_path):  # noqa: F811
    port, switched = power_switch
    place = farm.add_posix_place("pc", posix_firmware_bin, {"edgebench-profile": "posix-sim", "board": "powered",
                                                             "edgebench-power-off-s": "0.3",
                                                             "edgebench-boot-s": "0.2"})
    groups = {"power": {"NetworkPowerPort": {"model": "simplerest", "index": 7,
                                             "host": f"http://127.0.0.1:{port}/relay/{{index}}/{{value}}"}}}
    power = farm.add_place("pc-power", groups, {}, firmware=None)   # its exporter; matched into place pc
    farm.client("-p", "pc", "add-match", f"{power.exporter}/power/NetworkPowerPort")
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:board=powered", "--runs-dir", tmp_path, "--json", *FAST)
    assert r.returncode == 0, r.stderr
    assert [(i, v) for i, v, _ in switched] == [(7, 0), (7, 1)]          # off, then on
    assert switched[1][2] - switched[0][2] >= 0.3
    cycle = json.loads(r.stdout)["board"]["farm"]["power_cycle"]
    assert cycle["resource"] == "NetworkPowerPort" and cycle["off_s"] == 0.3 and cycle["boot_wait_s"] == 0.2
    assert held_by(farm, "pc") is None
    assert place.name == "pc"


def test_sigterm_while_waiting_for_a_busy_place_cancels_the_reservation(farm, tmp_path):
    farm.client("-p", "pb", "acquire", user="carol")
    try:
        with _reaped(_start_bench(farm, tmp_path, "--board", "labgrid:pb", wait_s=60)) as proc:
            deadline = time.monotonic() + 30
            while "Reservation" not in farm.client("reservations").stdout and time.monotonic() < deadline:
                time.sleep(0.2)
            assert "Reservation" in farm.client("reservations").stdout
            _sigterm(proc, timeout_s=30)
        assert "Reservation" not in farm.client("reservations").stdout      # cancelled, not left queued
        assert held_by(farm, "pb").endswith("/carol")
    finally:
        farm.client("-p", "pb", "release", user="carol")


def test_sigterm_to_a_fan_out_reaches_every_place(farm, tmp_path):
    with _reaped(_start_bench(farm, tmp_path, "--farm", "board=posix")) as proc:
        _wait_acquired(farm, "pa")
        _wait_acquired(farm, "pb")
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("farm-bench-*/p?/*/samples.parquet"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        _sigterm(proc, timeout_s=90)
    assert held_by(farm, "pa") is None and held_by(farm, "pb") is None
    summary = json.loads(next(tmp_path.glob("farm-bench-*/farm.json")).read_text())
    assert {p["status"] for p in summary["places"]} == {"interrupted"}, summary
    for p in summary["places"]:
        run = json.loads((Path(p["run_dir"]) / "run.json").read_text())
        assert run["status"] == "incomplete" and "SIGTERM" in run["status_reason"]      # samples kept


def test_places_of_a_killed_fan_out_are_named_at_once_and_taken_over(farm, tmp_path, monkeypatch):
    """SIGKILL of a --farm fan-out leaves both places acquired by this host and user (issue 22,
    item 3). The next command does not wait the 60 s for them: it says at once that their holder
    is gone and how to release them; `edgebench farm --take-over` does, and the places work again."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))     # where holders are recorded
    with _reaped(_start_bench(farm, tmp_path / "runs", "--farm", "board=posix", stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)) as proc:
        _wait_acquired(farm, "pa")
        _wait_acquired(farm, "pb")
        records = sorted((tmp_path / "state").rglob("p?.json"))
        deadline = time.monotonic() + 30
        while len(records) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            records = sorted((tmp_path / "state").rglob("p?.json"))
        assert [p.name for p in records] == ["pa.json", "pb.json"]
        children = [json.loads(p.read_text())["pid"] for p in records]
        os.killpg(proc.pid, signal.SIGKILL)              # the fan-out and its children, at once
        proc.wait(timeout=30)
        for pid in children:
            deadline = time.monotonic() + 30
            while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
    assert held_by(farm, "pa") and held_by(farm, "pb")  # nobody released them
    start = time.monotonic()
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:pa", "--runs-dir", tmp_path / "runs2", *FAST, wait_s=60)
    assert r.returncode == 1 and time.monotonic() - start < 30       # not the 60 s wait
    line = one_error_line(r.stderr)
    assert "place pa is held by" in line and "which ended without releasing it" in line, line
    assert "edgebench farm --take-over pa" in line and "labgrid-client -p pa release" in line, line
    r = edgebench(farm, "farm", "--take-over", "pa", "--take-over", "pb")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("released place") == 2, r.stdout
    assert held_by(farm, "pa") is None and held_by(farm, "pb") is None
    assert not list((tmp_path / "state").rglob("p?.json"))
    r = edgebench(farm, "bench", DIGITS_INT8, "--board", "labgrid:pa", "--runs-dir", tmp_path / "runs2", "--json", *FAST)
    assert r.returncode == 0, r.stderr
    assert held_by(farm, "pa") is None


def test_take_over_refuses_a_place_whose_holder_still_runs(farm, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with _reaped(_start_bench(farm, tmp_path, "--board", "labgrid:pa")) as proc:
        _wait_acquired(farm, "pa")
        deadline = time.monotonic() + 30
        while not list((tmp_path / "state").rglob("pa.json")) and time.monotonic() < deadline:
            time.sleep(0.2)
        r = edgebench(farm, "farm", "--take-over", "pa")
        line = one_error_line(r.stderr)
        assert r.returncode == 1 and "which is still running" in line and str(proc.pid) in line, line
        assert held_by(farm, "pa")
        _sigterm(proc, timeout_s=60)
    assert held_by(farm, "pa") is None
