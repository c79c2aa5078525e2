"""Files written by the real exporters (torch.onnx.export of PyTorch 2.13, both exporters; tf2onnx 1.17 of
Keras 3 models), converted end to end (issue 32's table).

The .onnx files in benchmarks/data/exports were made by benchmarks/export_onnx.py in separate
environments (torch and tf2onnx are not edgebench dependencies); this test runs them through
benchmarks/onnx_exports.py's own row function, the one the table in docs/models.md comes from.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_script, missing, require_tool

pytestmark = [pytest.mark.tensorflow, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")]

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "benchmarks" / "data" / "exports"
#: file -> (producer_name, layout of the ONNX input: "NCHW" transposed for the INT8 model, "NHWC" kept)
FILES = {
    "pt_mnist_net_dynamo": ("pytorch", "NCHW"),
    "pt_mnist_net_torchscript": ("pytorch", "NCHW"),
    "pt_kws_dscnn_dynamo": ("pytorch", "NCHW"),
    "pt_kws_dscnn_torchscript": ("pytorch", "NCHW"),
    "keras_mnist_convnet": ("tf2onnx", "NHWC"),
    "keras_kws_dscnn": ("tf2onnx", "NHWC"),
}


def _bench():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        missing(f"{exc.name} is not importable (pip install 'edgebench[onnx]')")
    return load_script("benchmarks/onnx_exports.py")


def test_every_committed_export_is_listed_and_small():
    assert sorted(p.stem for p in EXPORTS.glob("*.onnx")) == sorted(FILES)
    assert all(p.stat().st_size < 200_000 for p in EXPORTS.glob("*.onnx"))


@pytest.mark.parametrize("name", sorted(FILES))
def test_real_export_converts_faithfully(name, tmp_path):
    import onnx

    bench = _bench()
    path = EXPORTS / f"{name}.onnx"
    producer, layout = FILES[name]
    assert onnx.load(str(path)).producer_name == producer
    stem, sample, batch = bench.public_file(path)
    row = bench.run_file(stem, path, sample, tmp_path, qemu=False, batch=batch)
    assert "error" not in row, row.get("error")
    assert row["fp32_max_abs_error"] < 1e-5 and row["fp32_samples"] >= 32          # FP32 against onnxruntime
    assert row["int8_top1_agreement"] >= 0.95 and row["int8_inputs"] == 256
    if layout == "NHWC":            # tf2onnx: the NHWC input is kept as is, no TRANSPOSE in the INT8 model
        assert row["input_layout"] == "as the source model" and row["input_perm"] == [0, 1, 2, 3]
    else:
        assert row["input_layout"] == "NHWC" and row["input_perm"] == [0, 2, 3, 1]
    assert "TRANSPOSE" not in row["int8_operators"]
    if "mnist_net" in name:         # pytorch/examples' Net ends in log_softmax: the engine has none
        assert row["fit"]["qemu-m4"].startswith("refused: the firmware (engine version 2) lacks LOG_SOFTMAX")
    else:
        assert row["fit"] == {"qemu-m4": "fits", "qemu-f405": "fits"}


@pytest.mark.qemu
@pytest.mark.parametrize("name", ["pt_kws_dscnn_dynamo", "keras_mnist_convnet"])
def test_real_export_is_bit_exact_on_qemu_m4(name, tmp_path):
    require_tool("qemu-system-arm")
    require_tool("arm-none-eabi-gcc")
    bench = _bench()
    path = EXPORTS / f"{name}.onnx"
    stem, sample, batch = bench.public_file(path)
    row = bench.run_file(stem, path, sample, tmp_path, qemu=True, batch=batch)
    assert row.get("qemu_m4_bit_exact") is True, row.get("qemu_m4_note")
