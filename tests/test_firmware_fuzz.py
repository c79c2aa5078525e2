"""Fuzzing the firmware's command parser (firmware/fuzz/fuzz_proto.c).

libFuzzer with AddressSanitizer and UBSan, bounded in time: any write past a
buffer, undefined behaviour or malformed reply (the target checks that every
reply byte is printable ASCII in CRLF lines) is a crash and fails the test.
Skipped locally without clang/libFuzzer; under CI=true their absence fails.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import missing, require_tool
from fw_util import FIRMWARE_DIR, build_fuzz, run_fresh
from test_firmware_engine import TinyModel, build, run_engine, run_reference  # noqa: F401  (build: a fixture)

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
    proc = run_fresh(   # not from this process: its peak RSS would count as the fuzzer's own (fw_util)
        [str(binary), f"-max_total_time={FUZZ_SECONDS}", "-rss_limit_mb=1024", "-timeout=10",
         f"-dict={FIRMWARE_DIR / 'fuzz' / 'proto.dict'}", f"-artifact_prefix={tmp_path}/",
         "-print_final_stats=1", str(work), str(SEEDS)], timeout=FUZZ_SECONDS + 120)
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


# ---- the model path: blob parser and engine (firmware/fuzz/fuzz_model.c) ------------

MODEL_SEEDS = FIRMWARE_DIR / "fuzz" / "corpus_model"


def _build_fuzz_model(tmp_path) -> Path:
    clang = _clang()
    _require_libfuzzer(clang, tmp_path)
    out = tmp_path / "build"
    r = subprocess.run(["make", "-s", "-C", str(FIRMWARE_DIR), f"BUILD={out}", f"FUZZ_CC={clang}",
                        "fuzz-model"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"make fuzz-model failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return out / "fuzz" / "fuzz_model"


def _artifacts(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("crash-", "leak-", "timeout-", "oom-")))


def test_model_path_survives_bounded_fuzzing(tmp_path):
    """Blobs with a valid CRC and mutated contents (seeds: the digits and KWS blobs) through
    eb_model_init and eb_model_invoke under ASan and UBSan."""
    binary = _build_fuzz_model(tmp_path)
    work = tmp_path / "corpus"
    work.mkdir()
    assert len(list(MODEL_SEEDS.iterdir())) >= 4
    proc = run_fresh(
        [str(binary), f"-max_total_time={FUZZ_SECONDS}", "-rss_limit_mb=1024", "-timeout=10",
         "-max_len=65536", f"-artifact_prefix={tmp_path}/", "-print_final_stats=1", str(work),
         str(MODEL_SEEDS)], timeout=FUZZ_SECONDS + 120)
    artifacts = _artifacts(tmp_path)
    assert proc.returncode == 0 and not artifacts, (
        f"fuzz_model failed ({proc.returncode}), artifacts {artifacts} in {tmp_path} "
        f"(reproduce: {binary} <artifact>):\n{proc.stderr[-6000:]}")
    runs = int(proc.stderr.split("stat::number_of_executed_units:")[1].split()[0])
    assert runs > 500, proc.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(p.name for p in (FIRMWARE_DIR / "fuzz" / "regressions_model").iterdir()))
def test_model_path_regressions_stay_fixed(tmp_path, name):
    """Inputs the model-path fuzzer found (firmware/fuzz/regressions_model/), each once through the
    sanitized target: an input offset of INT32_MIN negated, a convolution scratch overlapping its
    input (memcpy of overlapping ranges), a requantized value near INT32_MAX plus the output zero point."""
    binary = _build_fuzz_model(tmp_path)
    proc = run_fresh([str(binary), str(FIRMWARE_DIR / "fuzz" / "regressions_model" / name)], timeout=120)
    assert proc.returncode == 0 and "runtime error" not in proc.stderr, proc.stderr[-3000:]


def _blob_with_extreme_bias() -> bytes:
    """The digits blob with its first convolution's folded biases at the int32 limits
    (alternately INT32_MAX and INT32_MIN): any sum of either sign overflows, and the CRC is right."""
    from edgebench.mcu import convert, parse

    data = bytearray(convert(FIRMWARE_DIR.parent / "models" / "digits" / "digits_int8.tflite").data)
    conv = parse(bytes(data))["layers"][0]
    assert conv["op"] == "CONV_2D"
    for c in range(conv["channels"]):
        struct.pack_into("<i", data, conv["chan_offset"] + 4 * c, 2**31 - 1 if c % 2 == 0 else -2**31)
    struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


def test_bias_at_the_int32_limit_wraps_without_undefined_behaviour(tmp_path):
    """firmware/BLOB.md, integer overflow: the accumulators wrap modulo 2^32 (this input made
    UBSan report a signed overflow in the convolution kernels before)."""
    binary = _build_fuzz_model(tmp_path)
    seed = tmp_path / "extreme_bias.ebnn"
    seed.write_bytes(_blob_with_extreme_bias())
    proc = run_fresh([str(binary), str(seed)], timeout=120)
    assert proc.returncode == 0 and "runtime error" not in proc.stderr, proc.stderr[-3000:]


def test_overflowing_accumulator_matches_the_reference_kernels(build, tmp_path):  # noqa: F811
    """A FULLY_CONNECTED and a CONV_2D whose bias sits near INT32_MAX / INT32_MIN, with inputs that
    push the int32 sum past the limit: the engine (UBSan build) wraps, and its bytes equal LiteRT's
    BUILTIN_REF kernels, which compute the same two's-complement sum on this machine."""
    from edgebench.mcu import convert

    rng = np.random.default_rng(5)
    cases = []
    g = TinyModel()
    x = g.tensor((1, 8), scale=0.05, zp=-128)
    w = g.tensor((4, 8), scale=0.01, zp=0, data=np.full((4, 8), 127, np.int8))
    b = g.tensor((4,), "int32", scale=0.0005, zp=0,
                 data=np.array([2**31 - 1000, -2**31 + 1000, 2**31 - 1, 5], np.int32))
    y = g.tensor((1, 4), scale=1e6, zp=0)
    g.op("FULLY_CONNECTED", [x, w, b], [y], g.options("FullyConnectedOptions"))
    cases.append((g.build([x], [y]), np.stack([np.full(8, v, np.int8) for v in (127, -128, 0, 100)])))
    g = TinyModel()
    x = g.tensor((1, 2, 2, 8), scale=0.05, zp=-128)
    w = g.tensor((4, 1, 1, 8), scale=0.01, zp=0, data=rng.choice([-127, 127], size=(4, 1, 1, 8)).astype(np.int8))
    b = g.tensor((4,), "int32", scale=0.0005, zp=0,
                 data=np.array([2**31 - 2000, -2**31 + 2000, 2**31 - 1, -2**31], np.int32))
    y = g.tensor((1, 2, 2, 4), scale=1e6, zp=0)
    g.op("CONV_2D", [x, w, b], [y], g.options("Conv2DOptions", padding=1, strideH=1, strideW=1))
    cases.append((g.build([x], [y]), rng.integers(-128, 128, size=(6, 32)).astype(np.int8)))
    for k, (model, inputs) in enumerate(cases):
        path = tmp_path / f"m{k}.tflite"
        path.write_bytes(model)
        dev = run_engine(build, convert(path).data, inputs, tmp_path / f"dev{k}", sanitize=True)
        ref, _, _ = run_reference([(path, inputs)], tmp_path / f"ref{k}")[0]
        assert np.array_equal(dev.reshape(ref.shape), ref), (k, dev, ref)


def test_fuzzing_does_not_inherit_the_test_process_peak_rss(tmp_path):
    """The fuzzers run with -rss_limit_mb=1024 whatever ran before them in this process: after
    1.5 GB touched here (TensorFlow and onnxruntime loaded in-process reach 1.3 GB), a fuzzer
    started directly would report that peak as its own and stop at its first input (fw_util.run_fresh)."""
    import resource

    clang = _clang()
    _require_libfuzzer(clang, tmp_path)
    binary = build_fuzz(tmp_path / "build")
    big = bytearray(1536 << 20)
    big[::4096] = b"\x01" * len(range(0, len(big), 4096))      # touch every page
    del big
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >= 1536 << 10   # KiB: the peak is ours now
    work = tmp_path / "corpus"
    work.mkdir()
    proc = run_fresh([str(binary), "-max_total_time=3", "-rss_limit_mb=1024", "-timeout=10",
                      f"-artifact_prefix={tmp_path}/", "-print_final_stats=1", str(work), str(SEEDS)],
                     timeout=120)
    assert proc.returncode == 0 and not _artifacts(tmp_path), proc.stderr[-3000:]
    peak = int(proc.stderr.split("stat::peak_rss_mb:")[1].split()[0])
    assert peak < 1024, proc.stderr[-2000:]
