"""Board profiles: schema validation, registry precedence, the `boards` verb, packaging."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from edgebench.boards import (
    ESTIMATED_LABEL,
    BoardProfile,
    builtin_boards_dir,
    get_profile,
    list_profiles,
    load_profile,
    with_transport_url,
)
from edgebench.errors import ProfileError

REPO = Path(__file__).resolve().parents[1]
SHIPPED = {"host", "raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2w", "coral-dev-board",
           "coral-usb", "posix-sim", "qemu-m4", "qemu-m7", "nucleo-l4r5zi", "nrf5340-dk", "esp32-s3", "pico",
           "nucleo-f446re", "nucleo-f411re", "qemu-f405", "unicorn-l4r5zi",
           "sim-pi5"}


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """Keep the developer's own ~/.config/edgebench/boards and env out of the tests."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    monkeypatch.delenv("EDGEBENCH_BOARDS_PATH", raising=False)


def _base() -> dict:
    return {
        "schema": 1,
        "name": "pi",
        "title": "Test Pi",
        "kind": "linux",
        "soc": "BCM2712",
        "transport": {"type": "ssh", "url": "ssh://pi@raspberrypi.local", "python": "python3"},
        "runtimes": ["ai_edge_litert"],
        "kernels": ["xnnpack", "reference"],
        "delegates": [],
        "default_threads": 4,
        "telemetry": ["thermal_zone", "cpufreq"],
        "datasheet": {"source": "test brief", "max_power_w": 12.5, "throttle_temp_c": 80},
        "flasher": None,
        "notes": "",
    }


def _write(directory: Path, name: str, data) -> Path:
    path = directory / f"{name}.yaml"
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- shipped profiles


def test_shipped_profiles_all_validate():
    files = sorted(builtin_boards_dir().glob("*.yaml"))
    assert {f.stem for f in files} == SHIPPED
    for f in files:
        profile = load_profile(f)
        assert profile.name == f.stem and profile.origin == str(f)
        # to_dict round-trips through the validator
        assert BoardProfile.from_dict(profile.to_dict()) == profile
        if profile.datasheet is not None:
            assert profile.datasheet.source.strip()
            assert profile.datasheet.to_dict()["basis"] == ESTIMATED_LABEL
            assert profile.datasheet.figures(), f"{f.name}: a datasheet with no figures"


def test_shipped_profiles_facts():
    by = {p.name: p for p in list_profiles()}
    assert by["host"].transport.type == "local" and by["host"].datasheet is None
    coral_usb = by["coral-usb"]
    assert coral_usb.transport.type == "local" and coral_usb.delegates == ("edgetpu",)
    assert coral_usb.datasheet.accel_tops == 4 and coral_usb.datasheet.accel_tops_per_w == 2
    assert by["raspberry-pi-5"].datasheet.cpu_max_freq_hz == 2.4e9
    assert by["raspberry-pi-5"].datasheet.supply_current_a == 5
    assert "apex" in by["coral-dev-board"].telemetry


# --------------------------------------------------------------------------- validation errors


def _case(change):
    data = _base()
    change(data)
    return data


BAD = [
    pytest.param(_case(lambda d: d["transport"].update(type="sshh")), "transport.type",
                 "expected one of local, ssh, serial, sim, got 'sshh'", id="bad-transport-type"),
    pytest.param(_case(lambda d: d.update(runtime=["tflite_runtime"])), "runtime",
                 "unknown key (did you mean 'runtimes'?)", id="unknown-key"),
    pytest.param(_case(lambda d: d.pop("kernels")), "kernels", "missing required key",
                 id="missing-key"),
    pytest.param(_case(lambda d: d.update(default_threads=0)), "default_threads",
                 "expected an integer >= 1, got 0", id="threads-zero"),
    pytest.param(_case(lambda d: d.update(default_threads="4")), "default_threads",
                 "expected an integer >= 1, got '4'", id="threads-wrong-type"),
    pytest.param(_case(lambda d: d.update(kind="desktop")), "kind",
                 "expected one of linux, mcu, got 'desktop'", id="bad-kind"),
    pytest.param(_case(lambda d: d["transport"].update(url="raspberrypi.local")), "transport.url",
                 "expected ssh://[user@]host[:port] or user@host, got 'raspberrypi.local'",
                 id="bad-ssh-url"),
    pytest.param(_case(lambda d: d.update(transport={"type": "serial", "url": ""})),
                 "transport.url", "expected a serial port or pyserial URL without spaces, got ''",
                 id="empty-serial-url"),
    pytest.param(_case(lambda d: d.update(transport={"type": "serial", "url": "/dev/ttyACM0",
                                                     "baud": -9600})),
                 "transport.baud", "expected an integer >= 1, got -9600", id="negative-baud"),
    pytest.param(_case(lambda d: d.update(transport={"type": "local", "url": "x"})),
                 "transport.url", "not allowed for transport type local", id="url-on-local"),
    pytest.param(_case(lambda d: d.update(telemetry=["thermal"])), "telemetry[0]",
                 "expected one of thermal_zone, cpufreq", id="bad-telemetry"),
    pytest.param(_case(lambda d: d["datasheet"].update(max_power_w="lots")),
                 "datasheet.max_power_w", "expected a positive number, got 'lots'",
                 id="datasheet-wrong-type"),
    pytest.param(_case(lambda d: d["datasheet"].pop("source")), "datasheet.source",
                 "missing required key", id="datasheet-no-source"),
    pytest.param(_case(lambda d: d.update(schema=2)), "schema", "expected 1", id="schema-version"),
    pytest.param(_case(lambda d: d.update(name="other")), "name", "expected 'pi'",
                 id="name-not-stem"),
    pytest.param(_case(lambda d: d.update(kind="mcu")), "transport.type",
                 "expected serial for kind mcu", id="mcu-needs-serial"),
    pytest.param(_case(lambda d: d.update(flasher={"tool": "pyocd", "argv": ["pyocd", "flash",
                                                                            "{imgae}"]})),
                 "flasher.argv[2]", "expected placeholders among {image}, {url}, {name}",
                 id="flasher-placeholder"),
    pytest.param("schema: 1\nname: pi\ntitle: [unclosed\nkind: linux\n", "line ",
                 "invalid YAML", id="yaml-syntax"),
    pytest.param("schema: 1\nname: pi\nname: pi\n", "line 3", "duplicate key 'name'",
                 id="yaml-duplicate-key"),
]


@pytest.mark.parametrize("data, key, expected", BAD)
def test_bad_profile_is_one_line_naming_file_key_and_expectation(tmp_path, data, key, expected):
    path = _write(tmp_path, "pi", data)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    message = info.value.one_line()
    assert "\n" not in str(info.value) and message == str(info.value).rstrip(".")
    assert message.startswith(f"{path}: ") or message.startswith("pi.yaml: ")
    assert f": {key}" in message, message
    assert expected in message, message


def test_error_names_file_relative_to_cwd(tmp_path, monkeypatch):
    (tmp_path / "boards").mkdir()
    _write(tmp_path / "boards", "pi", _case(lambda d: d["transport"].update(type="sshh")))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProfileError) as info:
        load_profile("boards/pi.yaml")
    assert str(info.value) == ("boards/pi.yaml: transport.type: expected one of local, ssh, "
                               "serial, sim, got 'sshh'")


def test_mcu_profile_with_flasher(tmp_path):
    data = _base()
    data.update(kind="mcu", runtimes=["edgebench_firmware"], kernels=["reference"],
                default_threads=1, telemetry=["mcu_temp"], datasheet=None,
                transport={"type": "serial", "url": "/dev/ttyACM0"},
                flasher={"tool": "pyocd", "argv": ["pyocd", "flash", "--target", "stm32l4r5zitxp",
                                                   "{image}"]})
    profile = load_profile(_write(tmp_path, "pi", data))
    assert profile.transport.baud == 115200  # the default, made explicit
    assert profile.flasher.command(image="fw.bin")[-1] == "fw.bin"
    assert BoardProfile.from_dict(profile.to_dict()) == profile


# --------------------------------------------------------------------------- registry


def test_user_dir_overrides_builtin(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    user_dir = tmp_path / "edgebench" / "boards"
    user_dir.mkdir(parents=True)
    mine = _base()
    mine.update(name="host", title="My workstation", transport={"type": "local"})
    _write(user_dir, "host", mine)
    profiles = {p.name: p for p in list_profiles()}
    assert profiles["host"].title == "My workstation"
    assert profiles["host"].origin == str(user_dir / "host.yaml")
    assert get_profile("host").title == "My workstation"
    assert SHIPPED <= set(profiles)


def test_precedence_env_then_user_then_extra(tmp_path, monkeypatch):
    dirs = {}
    for label in ("env", "user", "extra1", "extra2"):
        d = tmp_path / label
        d.mkdir()
        data = _base()
        data.update(name="pi", title=f"from {label}")
        _write(d, "pi", data)
        dirs[label] = d
    (tmp_path / "user-config" / "edgebench").mkdir(parents=True)
    os.symlink(dirs["user"], tmp_path / "user-config" / "edgebench" / "boards")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-config"))
    monkeypatch.setenv("EDGEBENCH_BOARDS_PATH", os.pathsep.join([str(tmp_path / "missing"),
                                                                 str(dirs["env"])]))
    assert get_profile("pi").title == "from user"
    assert get_profile("pi", extra_dirs=[dirs["extra1"], dirs["extra2"]]).title == "from extra2"
    assert get_profile("pi", extra_dirs=[dirs["extra2"], dirs["extra1"]]).title == "from extra1"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nowhere"))
    assert {p.name: p for p in list_profiles()}["pi"].title == "from env"


def test_unknown_board_suggests_close_match():
    with pytest.raises(ProfileError) as info:
        get_profile("raspbery-pi-5")
    message = info.value.one_line()
    assert message.startswith("unknown board 'raspbery-pi-5' (did you mean 'raspberry-pi-5'?")
    assert "known: coral-dev-board, coral-usb, esp32-s3, host," in message
    assert message.endswith("add a profile with --boards-dir)")
    with pytest.raises(ProfileError) as info:
        get_profile("zzz")
    assert "did you mean" not in str(info.value)


def test_missing_extra_dir_is_an_error(tmp_path):
    with pytest.raises(ProfileError, match="does not exist"):
        list_profiles(extra_dirs=[tmp_path / "nope"])


def test_broken_profile_breaks_listing_but_not_other_lookups(tmp_path):
    _write(tmp_path, "broken", "schema: 1\nname: broken\nkind: toaster\n")
    with pytest.raises(ProfileError, match="broken.yaml: "):
        list_profiles(extra_dirs=[tmp_path])
    assert get_profile("host", extra_dirs=[tmp_path]).name == "host"


def test_with_transport_url():
    pi5 = get_profile("raspberry-pi-5")
    moved = with_transport_url(pi5, "admin@10.0.0.7")
    assert moved.transport.type == "ssh" and moved.transport.url == "admin@10.0.0.7"
    assert moved.transport.python == "python3"
    assert pi5.transport.url == "ssh://pi@raspberrypi.local"  # the original is untouched
    assert with_transport_url(pi5, "ssh://pi@pi5:2222").transport.url == "ssh://pi@pi5:2222"
    usb = get_profile("coral-usb")
    assert usb.transport.type == "local"
    assert with_transport_url(usb, "ssh://pi@raspberrypi.local").transport.type == "ssh"
    assert with_transport_url(pi5, "local").transport.type == "local"
    serial = with_transport_url(pi5, "/dev/ttyUSB1").transport
    assert (serial.type, serial.url, serial.baud) == ("serial", "/dev/ttyUSB1", 115200)
    assert (serial.address, serial.options()) == ("/dev/ttyUSB1", {"baud": 115200})
    assert with_transport_url(pi5, "serial:///dev/ttyACM0").transport.type == "serial"
    local = with_transport_url(pi5, "local://").transport
    assert (local.type, local.address, local.options()) == ("local", "local", {})
    with pytest.raises(ProfileError, match="expected ssh://"):
        with_transport_url(pi5, "not a url")
    with pytest.raises(ProfileError, match="port between 1 and 65535"):
        with_transport_url(pi5, "ssh://pi@host:99999")


# --------------------------------------------------------------------------- CLI


@pytest.fixture()
def runner(monkeypatch):
    from typer.testing import CliRunner

    import edgebench.cli.output as output

    monkeypatch.setattr(output, "_consoles", {})  # fresh consoles on the redirected streams
    return CliRunner()


def _invoke(runner, args, **kwargs):
    from edgebench.cli.app import app

    return runner.invoke(app, args, **kwargs)


@pytest.mark.parametrize("columns", ["80", "200"])
def test_cli_table_lists_every_board(runner, columns):
    result = _invoke(runner, ["boards"], env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    for name in SHIPPED:
        assert name in result.stdout
    assert ESTIMATED_LABEL in result.stdout
    assert "PSU 25 W" in result.stdout  # Pi 5: 5 V x 5 A, from the datasheet


def test_cli_json_matches_library(runner):
    result = _invoke(runner, ["boards", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [p.to_dict() for p in list_profiles()]


def test_cli_one_board(runner, tmp_path):
    result = _invoke(runner, ["boards", "raspberry-pi-5", "--json"])
    assert json.loads(result.stdout) == get_profile("raspberry-pi-5").to_dict()
    result = _invoke(runner, ["boards", "raspberry-pi-5"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    assert "2.4 GHz  [estimated (datasheet)]" in result.stdout
    assert "Raspberry Pi 5 product brief" in result.stdout


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_cli_shows_every_shipped_board_in_full(runner, name):
    """Every figure a profile may publish has its unit in the schema: an MCU's RAM and flash too."""
    result = _invoke(runner, ["boards", name], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    ds = get_profile(name).datasheet
    if ds is not None and ds.ram_bytes:
        # KiB, or MiB for a whole number of MiB (qemu-m4/m7: 4 MiB of each)
        assert "RAM " in result.stdout and "iB  [estimated (datasheet)]" in result.stdout


def test_cli_boards_dir_repeatable(runner, tmp_path):
    for label in ("a", "b"):
        (tmp_path / label).mkdir()
        data = _base()
        data.update(name="lab-pi", title=f"lab {label}")
        _write(tmp_path / label, "lab-pi", data)
    result = _invoke(runner, ["boards", "--json", "--boards-dir", str(tmp_path / "a"),
                              "--boards-dir", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    by = {p["name"]: p for p in json.loads(result.stdout)}
    assert by["lab-pi"]["title"] == "lab b"
    assert by["lab-pi"]["origin"] == str(tmp_path / "b" / "lab-pi.yaml")


def _run_main(args, cwd):
    code = "import sys; from edgebench.cli.app import main; main(sys.argv[1:])"
    env = {k: v for k, v in os.environ.items() if k != "EDGEBENCH_BOARDS_PATH"}
    env["XDG_CONFIG_HOME"] = str(cwd)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)


def test_cli_unknown_board_one_line_exit_1(tmp_path):
    proc = _run_main(["boards", "nosuch"], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: unknown board 'nosuch' (known: ")
    assert "Traceback" not in proc.stderr


def test_cli_broken_profile_one_line_exit_1(tmp_path):
    (tmp_path / "mine").mkdir()
    _write(tmp_path / "mine", "pi", _case(lambda d: d["transport"].update(type="sshh")))
    proc = _run_main(["boards", "--boards-dir", "mine"], tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == ("error: mine/pi.yaml: transport.type: expected one of local, ssh, "
                           "serial, sim, got 'sshh'\n")


def test_boards_verb_imports_no_heavy_modules(tmp_path):
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "edgebench", "boards"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    heavy = {m for m in imported if m.split(".")[0] in {"numpy", "pandas", "scipy", "pyarrow",
                                                          "tensorflow", "matplotlib"}}
    assert not heavy, sorted(heavy)[:10]


# --------------------------------------------------------------------------- packaging


@pytest.mark.slow
def test_profiles_ship_in_the_wheel(tmp_path):
    dist = tmp_path / "dist"
    code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(dist)], capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = dist / proc.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert "edgebench/_data/boards/host.yaml" in names
        assert {f"edgebench/_data/boards/{n}.yaml" for n in SHIPPED} <= names
        zf.extractall(tmp_path / "site")
    # Loaded from the unpacked wheel (not the checkout), the built-in profiles are found there.
    code = ("import json; from edgebench.boards import builtin_boards_dir, list_profiles; "
            "print(json.dumps([str(builtin_boards_dir())] + [p.origin for p in list_profiles()]))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "XDG_CONFIG_HOME": str(tmp_path)}
    env.pop("EDGEBENCH_BOARDS_PATH", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    builtin, *origins = json.loads(proc.stdout)
    site_boards = tmp_path / "site" / "edgebench" / "_data" / "boards"
    assert Path(builtin) == site_boards
    assert len(origins) == len(SHIPPED)
    assert all(Path(o).parent == site_boards for o in origins)
