"""Fuzzing the firmware's command parser (firmware/fuzz/fuzz_proto.c).

libFuzzer with AddressSanitizer and UBSan, bounded in time: any write past a
buffer, undefined behaviour or malformed reply (the target checks that every
reply byte is printable ASCII in CRLF lines) is a crash and fails the test.
Skipped locally without clang/libFuzzer; under CI=true their absence fails.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import missing, require_tool
from fw_util import FIRMWARE_DIR, build_fuzz, posix_firmware_bin  # noqa: F401

SEEDS = FIRMWARE_DIR / "fuzz" / "corpus"
FUZZ_SECONDS = 20


def _clang() -> str:
    return shutil.which("clang-14") or require_tool("clang")


def _require_libfuzzer(clang: str, tmp_path) -> None:
    src = tmp_path / "probe.c"
    src.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
                   "{ (void)d; (void)n; return 0; }\n")
    probe = subprocess.run([clang, "-fsanitize=fuzzer,address,undefined", str(src), "-o",
                            str(tmp_path / "probe")], capture_output=True, text=True)
    if probe.returncode != 0:
        missing(f"{clang} cannot link libFuzzer (install libclang-rt-14-dev): {probe.stderr[-300:]}")


def test_parser_survives_bounded_fuzzing(tmp_path):
    clang = _clang()
    _require_libfuzzer(clang, tmp_path)
    binary = build_fuzz(tmp_path / "build")
    work = tmp_path / "corpus"
    work.mkdir()
    proc = subprocess.run(
        [str(binary), f"-max_total_time={FUZZ_SECONDS}", "-rss_limit_mb=1024", "-timeout=10",
         f"-dict={FIRMWARE_DIR / 'fuzz' / 'proto.dict'}", f"-artifact_prefix={tmp_path}/",
         "-print_final_stats=1", str(work), str(SEEDS)],
        capture_output=True, text=True, timeout=FUZZ_SECONDS + 120)
    artifacts = sorted(p.name for p in tmp_path.iterdir()
                       if p.name.startswith(("crash-", "leak-", "timeout-", "oom-")))
    assert proc.returncode == 0 and not artifacts, (
        f"fuzz_proto failed ({proc.returncode}), artifacts {artifacts} in {tmp_path} "
        f"(reproduce: {binary} <artifact>, or eb-firmware --stdio < <artifact>):\n"
        f"{proc.stderr[-6000:]}")
    assert "Done" in proc.stderr and "stat::number_of_executed_units" in proc.stderr
    runs = int(proc.stderr.split("stat::number_of_executed_units:")[1].split()[0])
    assert runs > 1000, proc.stderr[-2000:]


@pytest.mark.parametrize("seed", sorted(p.name for p in SEEDS.iterdir()))
def test_seed_replays_on_the_posix_firmware(posix_firmware_bin, seed):
    """The seeds through the real build's --stdio (the crash-reproduction path):
    it reads to EOF, exits 0, and every reply byte is printable in CRLF lines."""
    data = (SEEDS / seed).read_bytes()
    proc = subprocess.run([str(posix_firmware_bin), "--stdio"], input=data,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.endswith(b"\r\n")
    for line in out.split(b"\r\n")[:-1]:
        assert all(0x20 <= b < 0x7F for b in line), line
    assert out.startswith(b"m-timestamp-mode-performance\r\n")
    assert out.count(b"m-ready\r\n") >= 2
