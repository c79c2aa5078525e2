"""labgrid farms without a farm: board specs, the missing extra, an unreachable coordinator.

The tests with a real coordinator, exporters and ser2net are in tests/test_farm_labgrid.py.
"""
from __future__ import annotations

import socket
import sys

import pytest
from conftest import require_module

from edgebench.errors import UsageError
from edgebench.farm.spec import FarmSpec, coordinator_address, parse_spec, parse_tags, wait_limit_s


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_board_specs():
    assert parse_spec("labgrid:pi5-a") == FarmSpec({"name": "pi5-a"})
    assert parse_spec("labgrid:pi5-a").place == "pi5-a"
    spec = parse_spec("labgrid:board=raspberry-pi-5,lab=berlin")
    assert spec.tags == {"board": "raspberry-pi-5", "lab": "berlin"} and spec.place is None
    assert spec.spec() == "labgrid:board=raspberry-pi-5,lab=berlin"
    assert "board=raspberry-pi-5" in spec.describe()
    for bad in ("labgrid:", "labgrid:board=", "labgrid:Board=x", "labgrid:a b", "labgrid:=x"):
        with pytest.raises(UsageError) as info:
            parse_spec(bad)
        assert "\n" not in info.value.one_line()


def test_tags_and_settings(monkeypatch):
    assert parse_tags("edgebench-profile=nucleo-l4r5zi") == {"edgebench-profile": "nucleo-l4r5zi"}
    with pytest.raises(UsageError):
        parse_tags(",")
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    assert coordinator_address() == "127.0.0.1:20408"
    assert coordinator_address("lab-host") == "lab-host:20408"
    monkeypatch.setenv("LG_COORDINATOR", "10.0.0.2:1234")
    assert coordinator_address() == "10.0.0.2:1234"
    monkeypatch.setenv("EDGEBENCH_FARM_WAIT", "2.5")
    assert wait_limit_s() == 2.5 and wait_limit_s(7) == 7
    monkeypatch.setenv("EDGEBENCH_FARM_WAIT", "soon")
    with pytest.raises(UsageError, match="EDGEBENCH_FARM_WAIT"):
        wait_limit_s()


def test_without_the_farm_extra_one_line_says_how_to_install(cli, monkeypatch):
    for name in [m for m in sys.modules if m == "labgrid" or m.startswith("labgrid.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "labgrid", None)     # import labgrid -> ImportError
    r = cli("farm")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'edgebench[farm]'" in lines[0], r.stderr
    r = cli("bench", "model.tflite", "--board", "labgrid:pi5-a")
    assert r.returncode == 1 and "edgebench[farm]" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_board_spec_is_one_line(cli):
    r = cli("bench", "model.tflite", "--board", "labgrid:")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "names no place" in r.stderr


def test_flash_and_a_local_meter_refuse_a_farm_board_before_reserving(cli, monkeypatch):
    # no coordinator at all: the refusal comes before any place is reserved
    monkeypatch.setenv("LG_COORDINATOR", f"127.0.0.1:{_closed_port()}")
    r = cli("flash", "--board", "labgrid:nucleo-3")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "flashscript" in r.stderr, r.stderr
    r = cli("energy", "model.tflite", "--board", "labgrid:pi5-a", "--meter", "ina219", "--rate", "1/s")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "exports no power meters" in r.stderr, r.stderr


def test_coordinator_unreachable_is_one_line(cli, monkeypatch):
    require_module("labgrid")
    monkeypatch.setenv("LG_COORDINATOR", f"127.0.0.1:{_closed_port()}")
    for args in (("farm",), ("bench", "model.tflite", "--board", "labgrid:pi5-a")):
        r = cli(*args)
        assert r.returncode == 1
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "unreachable" in lines[0] and "LG_COORDINATOR" in lines[0], r.stderr
        assert "Traceback" not in r.stderr


def _lease(resources, tags=None):
    from types import SimpleNamespace

    from edgebench.farm.coordinator import PlaceInfo, ResourceInfo
    from edgebench.farm.lease import Lease

    place = PlaceInfo("nucleo-3", dict(tags or {"edgebench-profile": "nucleo-l4r5zi"}), "host/me", "TOKEN",
                      resources=[ResourceInfo(*r) for r in resources])
    coordinator = SimpleNamespace(address="lab:20408", user="host/me")
    return Lease(coordinator, place, "TOKEN", parse_spec("labgrid:nucleo-3"), "2026-11-25T06:00:00+00:00", 1.25)


def test_a_places_resources_become_urls_and_conditions():
    rfc = ("bench-1", "nucleo", "NetworkSerialPort", "USBSerialPort",
           {"host": "bench-1.lab", "port": 40123, "speed": 9600, "extra": {"path": "/dev/ttyACM0"}})
    raw = ("bench-1", "nucleo", "NetworkSerialPort", "console", {"host": "10.0.0.5", "port": 4001, "protocol": "raw"})
    ssh = ("bench-2", "pi", "NetworkService", "NetworkService", {"address": "10.0.4.21", "username": "bench", "port": 22})
    v6 = ("bench-2", "pi", "NetworkService", "NetworkService", {"address": "fd00::21", "username": "pi"})
    held = _lease([rfc])
    assert held.serial_url() == "rfc2217://bench-1.lab:40123?ign_set_control" and held.serial_baud() == 9600
    assert held.ssh_url() is None and held.profile == "nucleo-l4r5zi"
    assert _lease([raw]).serial_url() == "socket://10.0.0.5:4001"
    assert _lease([ssh]).ssh_url() == "ssh://bench@10.0.4.21:22"
    assert _lease([v6]).ssh_url() == "ssh://pi@[fd00::21]:22"
    c = _lease([rfc, ssh]).conditions()
    assert c["place"] == "nucleo-3" and c["reservation"] == "TOKEN" and c["coordinator"] == "lab:20408"
    assert c["exporters"] == ["bench-1", "bench-2"] and c["exporter_hosts"] == ["10.0.4.21", "bench-1.lab"]
    assert c["acquired_by"] == "host/me" and c["waited_s"] == 1.25 and c["power_port"] is False
    assert "labgrid place nucleo-3 (exporter bench-1 on bench-1.lab" in _lease([rfc]).describe()


def test_a_board_name_resolves_to_a_profile_and_holding_a_place_is_the_farms():
    """get_profile looks names up, never reserves a place; the profile of a held place is taken from
    the lease (its tag, its resources) by place_profile, which leaves holding and releasing to the farm."""
    import edgebench.boards.registry as registry
    from edgebench.errors import ProfileError
    from edgebench.farm.spec import PREFIX

    assert registry.FARM_PREFIX == PREFIX
    with pytest.raises(ProfileError) as err:
        registry.get_profile("labgrid:nucleo-3")
    assert "labgrid place" in err.value.one_line() and "hold" in err.value.one_line()
    rfc = ("bench-1", "nucleo", "NetworkSerialPort", "USBSerialPort", {"host": "bench-1.lab", "port": 40123,
                                                                       "speed": 9600})
    held = _lease([rfc])
    profile = registry.place_profile(held)
    assert profile.name == "nucleo-l4r5zi" and profile.transport.type == "serial"
    assert profile.transport.baud == 9600 and profile.transport.url.startswith("rfc2217://bench-1.lab:40123")
    assert profile.title.endswith(f"[{held.describe()}]") and not held.released
    ssh_only = _lease([("bench-2", "pi", "NetworkService", "NetworkService", {"address": "10.0.4.21"})])
    with pytest.raises(ProfileError) as err:
        registry.place_profile(ssh_only)        # a microcontroller needs a serial port
    assert "has no NetworkSerialPort" in err.value.one_line() and not ssh_only.released


def test_fan_out_command_lines_and_exit_codes(tmp_path):
    from edgebench.farm.fanout import FanoutSummary, PlaceOutcome, child_args

    argv = ["bench", "m.tflite", "--farm", "board=pi5", "--board=host", "--runs-dir", "r", "--json", "--repeat", "2"]
    assert child_args(argv, "pi5-a", tmp_path / "pi5-a") == [
        "bench", "m.tflite", "--repeat", "2", "--board", "labgrid:pi5-a", "--runs-dir", str(tmp_path / "pi5-a"),
        "--json"]
    assert child_args(["verify", "m.tflite", "--farm=board=x", "--url", "u"], "p", None) == [
        "verify", "m.tflite", "--board", "labgrid:p", "--json"]

    def summary(*statuses):
        return FanoutSummary("bench", {"board": "pi5"}, "lab", "s", "t",
                             [PlaceOutcome(f"p{i}", "x", status=s) for i, s in enumerate(statuses)])

    assert summary("ok", "ok").exit_code() == 0
    assert summary("ok", "busy").exit_code() == 0           # a busy place is skipped with a line
    assert summary("busy", "busy").exit_code() == 1         # nothing ran
    assert summary("ok", "failed").exit_code() == 1
    assert summary("ok", "gate-failed").exit_code() == 2
    assert summary("ok", "busy").to_dict()["counts"] == {"ok": 1, "busy": 1}
