"""`edgebench accuracy`: digits end to end on the host board, edge cases, the CI gate, --json parity,
bad input, and the MLPerf Tiny FP32/INT8 pairs on synthetic inputs (real agent, real LiteRT)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import MLPERF_DIR, require_file

from edgebench.bench.accuracy import DIAGRAMS, PREDICTIONS, AccuracyOptions, run_accuracy
from edgebench.cli.app import main
from edgebench.data.datasets import load_digits
from edgebench.report.claim import accuracy_claim
from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits"
INT8, FP32 = DIGITS / "digits_int8.tflite", DIGITS / "digits_fp32.tflite"
MLPERF = MLPERF_DIR
KWS_INT8, KWS_FP32 = MLPERF / "kws_ref_model.tflite", MLPERF / "kws_ref_model_float32.tflite"
RESNET_INT8, RESNET_FP32 = MLPERF / "pretrainedResnet_quant.tflite", MLPERF / "pretrainedResnet.tflite"
CARD_TOP1 = 529 / 540  # models/digits/model_card.md, both models


@pytest.fixture(scope="module")
def edge_run(tmp_path_factory, host):
    root = tmp_path_factory.mktemp("runs")
    return run_accuracy(INT8, FP32, "digits", host, AccuracyOptions(edge_cases=True, severities=(1, 5)),
                        runs_root=root)


def cli(args, capsys):
    """Run the CLI in this process; (exit code, stdout, stderr)."""
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- digits end to end

def test_digits_figures_match_the_model_card(edge_run):
    result, run_dir = edge_run
    a = result.extra.accuracy.to_dict()
    assert result.kind == "accuracy" and result.status == "complete" and result.label == "measured"
    for role in ("baseline", "candidate"):
        top1 = a["accuracy"][role]["top1"]
        assert top1["n"] == 540 and top1["accuracy"] == pytest.approx(CARD_TOP1)
        assert (round(top1["ci_low"], 4), round(top1["ci_high"], 4)) == (0.9639, 0.9886)
        assert a["accuracy"][role]["top5"]["accuracy"] >= top1["accuracy"]
        assert len(a["accuracy"][role]["per_class"]) == 10
        assert sum(c["n"] for c in a["accuracy"][role]["per_class"]) == 540
    # both models' conditions are recorded
    assert a["candidate"]["runtime"]["kernels"] == "xnnpack" and a["candidate"]["runtime"]["threads"] == 1
    assert a["baseline"]["runtime"]["kernels"] == "reference" and a["baseline"]["board"] == "host"
    assert a["baseline"]["runtime"]["op_resolver"] == "BUILTIN_REF"
    assert a["baseline"]["model"]["precision"] == "fp32" and result.model.precision == "int8"
    assert (result.model.calibration or {})["count"] == 200  # from the sidecar
    assert result.scenario.inputs.count == 540


@pytest.mark.slow
def test_paired_comparison_and_resolution_warning(edge_run):
    result, _ = edge_run
    a = result.extra.accuracy.to_dict()
    pr = a["paired"]
    assert pr["agreement_rate"] >= 0.99
    assert pr["flips_right_to_wrong"] == pr["flips_wrong_to_right"] == 0 and pr["mcnemar_p"] == 1.0
    assert a["relative"]["candidate_pct_of_baseline_correct"] == pytest.approx(100.0)
    assert a["relative"]["diff_points"] == 0.0 and a["relative"]["error_increase_pct"] == 0.0
    res = a["resolution"]
    assert 1.0 < res["mdd_points"] < 6.0 and res["resolvable"] is False
    assert res["verdict"] == "no-difference-resolved" and res["significant"] is False
    assert res["statement"].startswith("no difference resolved (95% CI -0.77 to +0.77 points, McNemar exact p=1.00)")
    assert [w.code for w in result.warnings].count("difference-not-resolvable") == 1


def test_calibration_fidelity_and_files(edge_run):
    result, run_dir = edge_run
    a = result.extra.accuracy.to_dict()
    cal = a["calibration"]
    assert cal["n_bins"] == 15 and len(cal["candidate"]["bins"]) == 15
    assert 0.0 <= cal["candidate"]["ece"] < 0.05 and 0.0 <= cal["baseline"]["ece"] < 0.05
    for role in ("baseline", "candidate"):  # bias-corrected below the plug-in, inside its bootstrap interval
        c = cal[role]
        assert 0.0 <= c["ece_ci_low"] <= c["ece_debiased"] <= c["ece_ci_high"] < 0.05
        assert c["ece_debiased"] < c["ece"] and c["ece_null_expected"] > 0
    ts = cal["temperature_scaling"]
    assert ts["n_fit"] + ts["n_eval"] == 540 and ts["candidate"]["temperature"] > 0
    assert a["fidelity"]["cosine_similarity"] > 0.999 and a["fidelity"]["max_abs_error"] < 0.1
    for name in DIAGRAMS.values():
        assert (run_dir / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not store.journal_paths(run_dir, "outputs")
    assert result.settings.other("invocation")["data"] == "digits" and result.settings.other("invocation")["chunk"] == 2048
    frame = pd.read_parquet(run_dir / PREDICTIONS)
    assert list(frame.columns) == ["sample_index", "slice", "label", "pred_base", "pred_cand", "conf_base",
                                   "conf_cand"]
    assert len(frame) == 540 * 13  # clean + 6 image families x 2 severities
    clean = frame[frame["slice"] == "clean"]
    assert (clean["pred_base"] == clean["label"]).mean() == pytest.approx(CARD_TOP1)
    assert np.array_equal(clean["label"].to_numpy(), load_digits("test").y)


def test_edge_slices_and_validation(edge_run):
    result, _ = edge_run
    edge = result.extra.accuracy.edge_cases.to_dict()
    assert edge["families"] == ["low_light", "contrast", "gaussian_noise", "blur", "occlusion", "rotation"]
    assert [r["slice"] for r in edge["slices"]][:2] == ["low_light/s1", "low_light/s5"]
    for r in edge["slices"]:
        assert r["n"] == 540
        assert r["drop_ci_low_points"] <= r["drop_points"] <= r["drop_ci_high_points"]
        assert 0.0 <= r["mcnemar_p"] <= r["mcnemar_p_holm"] <= 1.0  # Holm over the 12 slices
        drop = 100 * (r["baseline"]["accuracy"] - r["candidate"]["accuracy"])
        assert r["drop_points"] == pytest.approx(drop)
    # severity 5 hurts more than severity 1 for every family
    by = {(r["family"], r["severity"]): r["baseline"]["accuracy"] for r in edge["slices"]}
    assert all(by[(f, 5)] < by[(f, 1)] for f in edge["families"])
    worst = max(edge["slices"], key=lambda r: r["drop_points"])
    assert edge["worst"] == worst["slice"]
    rows = {r["metric"].split(" (")[0]: r for r in result.extra.accuracy.validation.to_dict()["rows"]}
    top1, edge_row = rows["top-1 accuracy"], rows["worst edge-case slice"]
    assert top1["acceptable"] is True and top1["gate_on"] == "interval"
    assert top1["value"] == pytest.approx(top1["ci_high"]) and top1["point"] == 0.0  # gated on the upper bound
    assert edge_row["point"] == pytest.approx(worst["drop_points"])
    assert edge_row["value"] == pytest.approx(worst["drop_ci_high_points"])
    # low_light/s5: drop 2.2 points, interval 0.3 to 4.1 against the limit 3: unresolved, so not passed
    assert edge_row["outcome"] == "unresolved" and edge_row["acceptable"] is False
    assert "gate-unresolved" in {w.code for w in result.warnings}


def test_claim_sentence(edge_run):
    result, _ = edge_run
    text = result.extra.claim
    assert text == accuracy_claim(result)
    assert text.startswith("97.96% top-1 (95% CI 96.4–98.9%, n=540")
    for part in ("digits_int8 INT8 (XNNPACK, 1 thread) on host", "vs FP32 97.96% (reference kernels, host)",
                 "agreement 100.0%", "difference +0.00 points (95% CI -0.77 to +0.77, McNemar p=1.00): "
                 "no difference resolved (this test set detects 3.1 points with 80% power)",
                 "bias-corrected (95% CI 0.000–", "worst edge-case slice: ", "Holm-adjusted over 12 slices",
                 "measured.", "(unresolved: interval straddles the limit)"):
        assert part in text, part
    from edgebench.bench import accuracy as bench_accuracy
    assert bench_accuracy.accuracy_claim is accuracy_claim  # the old import path still works


def test_edge_cases_are_deterministic(edge_run, tmp_path, host):
    first, first_dir = edge_run
    again, again_dir = run_accuracy(INT8, FP32, "digits", host,
                                    AccuracyOptions(edge_cases=True, severities=(1, 5)), runs_root=tmp_path)
    assert again.extra.accuracy.edge_cases.slices == first.extra.accuracy.edge_cases.slices
    pd.testing.assert_frame_equal(pd.read_parquet(first_dir / PREDICTIONS), pd.read_parquet(again_dir / PREDICTIONS))
    assert store.read_result(again_dir) == again  # the stored run is the returned one


@pytest.mark.slow
def test_user_edge_set(tmp_path, host):
    ds = load_digits("test")
    x = np.concatenate([ds.x[:60] * 0.15, ds.x[60:120]])
    names = np.array(["dark"] * 60 + ["plain"] * 60)
    path = tmp_path / "edge.npz"
    np.savez(path, x=x, y=ds.y[:120], slice=names)
    result, run_dir = run_accuracy(INT8, FP32, "digits", host, AccuracyOptions(edge_set=str(path)),
                                   runs_root=tmp_path / "runs")
    edge = result.extra.accuracy.edge_cases.to_dict()
    assert edge["source"] == "file" and [r["slice"] for r in edge["slices"]] == ["dark", "plain"]
    assert [r["n"] for r in edge["slices"]] == [60, 60]
    frame = pd.read_parquet(run_dir / PREDICTIONS)
    assert frame.loc[frame["slice"] == "dark", "sample_index"].tolist() == list(range(60))


# ---------------------------------------------------------------- stopped runs (the run skeleton)

class _StopAfter:
    """A progress callback that raises KeyboardInterrupt (what Ctrl-C and SIGTERM become) once ``role``
    has evaluated ``after`` samples."""

    def __init__(self, role: str, after: int):
        self.role, self.after = role, after

    def __call__(self, ev: dict) -> None:
        if ev["event"] == "infer" and ev["role"] == self.role and ev["done"] >= self.after:
            raise KeyboardInterrupt


@pytest.mark.slow
def test_interrupted_run_keeps_the_paired_samples_and_says_incomplete(tmp_path, host):
    # the host board gives the baseline an agent of its own: chunks alternate, the baseline is stopped
    # after 200 clean samples, so 200 samples were evaluated by both and the figures cover exactly those
    with pytest.raises(KeyboardInterrupt):
        run_accuracy(INT8, FP32, "digits", host, AccuracyOptions(chunk_size=100), runs_root=tmp_path,
                     progress=_StopAfter("baseline", 200))
    (run_dir,) = store.find_runs(tmp_path)
    r = store.read_result(run_dir)
    a = r.extra.accuracy.to_dict()
    assert r.status == "incomplete" and r.status_reason == "interrupted by the user (Ctrl-C)"
    assert a["evaluated"] == {"samples": 200, "planned": 540, "slices": ["clean"],
                              "note": "the run stopped: figures cover the samples both models evaluated"}
    assert a["paired"]["n"] == 200 and a["accuracy"]["candidate"]["top1"]["n"] == 200
    assert len(pd.read_parquet(run_dir / PREDICTIONS)) == 200
    assert "run-incomplete" in {w.code for w in r.warnings}
    assert "INCOMPLETE run (interrupted by the user (Ctrl-C))" in r.extra.claim
    assert not store.journal_paths(run_dir, "outputs")  # the figures are written: the journal is gone


@pytest.mark.slow
def test_interleaved_passes_keep_a_paired_prefix_and_nothing_evaluated_leaves_no_folder(tmp_path, host):
    from edgebench.boards.connect import open_client

    cand, base = open_client(host), open_client(host)
    try:
        with pytest.raises(KeyboardInterrupt):  # two agents: chunks alternate, the stop is mid-slice
            run_accuracy(INT8, FP32, "digits", host, AccuracyOptions(chunk_size=64), runs_root=tmp_path / "a",
                         progress=_StopAfter("baseline", 128), client=cand, baseline_client=base)
        (run_dir,) = store.find_runs(tmp_path / "a")
        r = store.read_result(run_dir)
        assert r.status == "incomplete" and r.extra.accuracy.paired.n == 128
        with pytest.raises(KeyboardInterrupt):  # stopped before the baseline ran: nothing paired, no folder
            run_accuracy(INT8, FP32, "digits", host, AccuracyOptions(chunk_size=64), runs_root=tmp_path / "b",
                         progress=_StopAfter("candidate", 64), client=cand, baseline_client=base)
        assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())
    finally:
        cand.close()
        base.close()


KILL_AFTER = """
import os, signal, sys
from edgebench.bench.accuracy import AccuracyOptions, run_accuracy
from edgebench.boards.registry import get_profile
int8, fp32, root, after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def progress(ev):  # SIGKILL: no handler, no guard, no figures: only the journal survives
    if ev["event"] == "infer" and ev["role"] == "baseline" and ev["done"] >= after:
        os.kill(os.getpid(), signal.SIGKILL)
run_accuracy(int8, fp32, "digits", get_profile("host"),
             AccuracyOptions(chunk_size=100, edge_cases=True, families=("blur",), severities=(1,)),
             runs_root=root, progress=progress)
"""


def test_killed_run_is_recovered_from_its_journal(tmp_path, capsys):
    import signal
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", KILL_AFTER, INT8, FP32, tmp_path, "700"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    (run_dir,) = store.find_runs(tmp_path)
    assert store.read_result(run_dir).status == "running"
    assert store.journal_paths(run_dir, "outputs") and not (run_dir / PREDICTIONS).exists()
    code, out, err = cli(["accuracy", "--recover", run_dir, "--json"], capsys)
    assert code == 0, err
    r = json.loads(out)
    a = r["extra"]["accuracy"]
    assert r["status"] == "incomplete" and "recovered the outputs it had journalled" in r["status_reason"]
    # chunks of 100: the clean set (540) and two chunks of blur/s1 were evaluated by both models
    assert a["evaluated"]["samples"] == 740 and a["evaluated"]["slices"] == ["clean", "blur/s1"]
    assert a["paired"]["n"] == 540 and [s["n"] for s in a["edge_cases"]["slices"]] == [200]
    assert a["accuracy"]["candidate"]["top1"]["accuracy"] == pytest.approx(CARD_TOP1)
    assert len(pd.read_parquet(run_dir / PREDICTIONS)) == 740
    assert not store.journal_paths(run_dir, "outputs")
    assert r["runtime"]["kernels"] == "xnnpack" and r["extra"]["accuracy"]["baseline"]["runtime"]["kernels"] == \
        "reference"
    code, out, err = cli(["accuracy", "--recover", run_dir], capsys)  # only a running run can be recovered
    assert code == 1 and "is not an unfinished accuracy run" in err
    code, out, err = cli(["accuracy", INT8, "--recover", run_dir], capsys)
    assert code == 1 and "not both" in err
    code, out, err = cli(["accuracy", INT8], capsys)
    assert code == 1 and "missing --baseline, --data" in err


# ---------------------------------------------------------------- command line

def test_cli_json_is_the_stored_run(tmp_path, capsys):
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", "digits:test",
                          "--runs-dir", tmp_path, "--json"], capsys)
    assert code == 0, err
    (run_dir,) = store.find_runs(tmp_path)
    assert json.loads(out) == store.read_result(run_dir).to_dict()
    assert json.loads(out)["kind"] == "accuracy"


def test_cli_gate_fails_with_exit_2_after_storing(tmp_path, capsys):
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", "digits",
                          "--runs-dir", tmp_path, "--max-drop", "-1"], capsys)
    assert code == 2
    (run_dir,) = store.find_runs(tmp_path)
    stored = store.read_result(run_dir)
    assert stored.status == "complete"
    v = stored.extra.accuracy.validation.to_dict()
    assert v["passed"] is False and v["failed"] == ["top-1 accuracy"]
    assert "compression validation" in out and "claim:" in out and "FAILED" in out
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "compression check failed: top-1 accuracy" in lines[0]


def test_cli_interval_gate_and_point_gate_labelled(tmp_path, capsys):
    # drop 0.00 points, its interval reaching 0.77: --max-drop 0.5 cannot be shown to hold
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", "digits", "--runs-dir", tmp_path / "i",
                          "--max-drop", "0.5"], capsys)
    assert code == 2
    line = [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert "its 95% interval reaches +0.77 points" in line and "cannot show the gate holds" in line
    assert "gates on the upper 95% bound" in out
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", "digits", "--runs-dir", tmp_path / "p",
                          "--max-drop", "0.5", "--gate-on", "point", "--json"], capsys)
    assert code == 0, err
    stored = json.loads(out)
    v = stored["extra"]["accuracy"]["validation"]
    assert v["gate_on"] == "point" and v["passed"] is True and stored["settings"]["gate_on"] == "point"
    assert "POINT ESTIMATE" in v["rows"][0]["note"] and "POINT ESTIMATES" in stored["extra"]["claim"]
    assert "gate-unresolved" in {w["code"] for w in stored["warnings"]}  # the straddle is still said
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", "digits", "--runs-dir", tmp_path / "x",
                          "--gate-on", "median"], capsys)
    assert code == 1 and "--gate-on must be one of interval, point" in err


def test_preprocessing_has_one_spelling_and_the_old_ones_warn(tmp_path, capsys):
    ds = load_digits("test")
    data = _npz(tmp_path / "d.npz", (ds.x * 2).astype(np.float32), ds.y)
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", data, "--runs-dir", tmp_path / "new",
                          "--preprocess", "scale=1/2", "--json"], capsys)
    assert code == 0, err
    new = json.loads(out)
    assert new["settings"]["data_options"] == {"scale": 0.5} and "deprecated" not in err
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", data, "--runs-dir", tmp_path / "old",
                          "--scale", "1/2", "--json"], capsys)
    assert code == 0, err
    assert "warning: --scale is deprecated; use --preprocess scale=VALUE" in err
    old = json.loads(out)
    assert old["settings"]["data_options"] == new["settings"]["data_options"]
    assert old["extra"]["accuracy"]["paired"] == new["extra"]["accuracy"]["paired"]
    code, out, err = cli(["accuracy", INT8, "--baseline", FP32, "--data", data, "--runs-dir", tmp_path / "both",
                          "--scale", "1/2", "--preprocess", "scale=1/2"], capsys)
    assert code == 1 and "preprocessing 'scale' given twice" in err
    code, out, err = cli(["quantize", tmp_path / "missing.keras", "--calib", "digits",
                          "--calib-preprocess", "scale=1/255"], capsys)
    assert code == 1 and "warning: --calib-preprocess is deprecated; use --preprocess" in err


def test_help_groups_the_options_and_hides_the_old_spellings(capsys):
    import re

    for verb in ("accuracy", "quantize"):
        code, out, err = cli([verb, "--help"], capsys)
        assert code == 0 and "--preprocess" in out
        assert "--calib-preprocess" not in out and not re.search(r"--scale\b", out)
    code, out, _ = cli(["accuracy", "--help"], capsys)
    for panel in ("Preprocessing", "Gates", "Edge cases", "How the models run"):
        assert panel in out, panel
    assert out.index("Gates") < out.index("--max-drop") < out.index("Edge cases") < out.index("--edge-cases")


def _npz(path, x, y):
    np.savez(path, x=x, y=y)
    return path


@pytest.mark.parametrize("case,needle", [
    ("labels-out-of-range", "label(s) are >= the model's 10 outputs"),
    ("labels-missing", "has no labels"),
    ("fewer-than-classes", "fewer than the model's 10 classes"),
    ("baseline-mismatch", "baseline kws_ref_model_float32 does not match digits_int8: inputs 1x49x10x1 vs 1x8x8x1"),
    ("data-shape", "data samples have shape 8x8x1, the model expects 1x32x32x3"),
    ("both-edge-options", "--edge-cases and --edge-set exclude each other"),
])
def test_bad_input_one_line_exit_1_nothing_stored(tmp_path, capsys, case, needle):
    x, y = load_digits("test").x, load_digits("test").y
    model, baseline, data, extra = INT8, FP32, "digits", []
    if case == "labels-out-of-range":
        bad = y.copy()
        bad[:3] = 10
        data = _npz(tmp_path / "d.npz", x, bad)
    elif case == "labels-missing":
        data = tmp_path / "d.npz"
        np.savez(data, x=x)
    elif case == "fewer-than-classes":
        data = _npz(tmp_path / "d.npz", x[:5], np.arange(5))
    elif case == "baseline-mismatch":
        baseline = KWS_FP32
    elif case == "data-shape":
        model, baseline = RESNET_INT8, RESNET_FP32
    elif case == "both-edge-options":
        extra = ["--edge-cases", "--edge-set", _npz(tmp_path / "e.npz", x, y)]
    runs = tmp_path / "runs"
    code, out, err = cli(["accuracy", model, "--baseline", baseline, "--data", data, "--runs-dir", runs,
                          *extra], capsys)
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert "Traceback" not in err
    assert not runs.exists() or not any(runs.iterdir())


# ---------------------------------------------------------------- MLPerf Tiny pairs, synthetic inputs

def _mfcc(audio: np.ndarray) -> np.ndarray:
    """MLPerf Tiny KWS features of 1 s, 16 kHz audio: 30 ms Hann frames every 20 ms (49), |STFT| 512,
    40 HTK mel bins 20-4000 Hz, log(mel + 1e-6), DCT-II scaled as tf.signal.mfccs_from_log_mel_spectrograms,
    first 10 coefficients -> (N, 49, 10, 1)."""
    mel = lambda f: 1127.0 * np.log1p(np.asarray(f) / 700.0)  # noqa: E731
    freqs = mel(np.linspace(0, 8000, 257))[1:, None]
    edges = np.linspace(mel(20.0), mel(4000.0), 42)
    lo, mid, hi = edges[:-2], edges[1:-1], edges[2:]
    weights = np.vstack([np.zeros((1, 40)), np.maximum(0, np.minimum((freqs - lo) / (mid - lo),
                                                                       (hi - freqs) / (hi - mid)))])
    frames = np.lib.stride_tricks.sliding_window_view(audio, 480, axis=1)[:, ::320]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(480) / 480)
    log_mel = np.log(np.abs(np.fft.rfft(frames * window, 512)) @ weights + 1e-6)
    dct = 2 * np.cos(np.pi * np.arange(10)[:, None] * (2 * np.arange(40) + 1) / 80) / np.sqrt(80)
    return (log_mel @ dct.T)[..., None].astype(np.float32)


def _voiced_audio(rng, n: int) -> np.ndarray:
    """Seeded speech-like audio: 1-3 harmonic bursts (f0 100-400 Hz, 7 harmonics) over faint noise."""
    t = np.arange(16000) / 16000
    out = np.zeros((n, 16000))
    for i in range(n):
        for _ in range(rng.integers(1, 4)):
            f0, start, dur = rng.uniform(100, 400), rng.uniform(0, 0.6), rng.uniform(0.1, 0.4)
            env = np.exp(-0.5 * ((t - start - dur / 2) / (dur / 4)) ** 2)
            tone = sum(rng.uniform(0.2, 1) / h * np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6.3))
                       for h in range(1, 8))
            out[i] += rng.uniform(0.05, 0.5) * env * tone
        out[i] += rng.normal(0, rng.uniform(0.001, 0.02), 16000)
    return np.clip(out, -1, 1)


def _smooth_images(rng, n: int) -> np.ndarray:
    """Seeded smooth colour images stretched to the 0..255 range the ResNet-8 INT8 input spans."""
    from scipy.ndimage import gaussian_filter

    img = gaussian_filter(rng.uniform(0, 1, (n, 32, 32, 3)), (0, 2, 2, 0))
    low, span = img.min(axis=(1, 2, 3), keepdims=True), np.ptp(img, axis=(1, 2, 3), keepdims=True)
    return ((img - low) / span * 255).astype(np.float32)


@pytest.mark.parametrize("name,int8,fp32,classes,make,min_agree,min_cos", [
    # measured (seed 0, 200 samples, XNNPACK vs reference): KWS agreement 0.945, cosine 0.991;
    # ResNet-8 agreement 0.90, cosine 0.980. A broken pipeline (misordered outputs, wrong
    # quantization) lands near chance agreement (~0.5 here, the classes are unbalanced).
    ("kws", KWS_INT8, KWS_FP32, 12, lambda rng: _mfcc(_voiced_audio(rng, 200)), 0.85, 0.97),
    ("resnet8", RESNET_INT8, RESNET_FP32, 10, lambda rng: _smooth_images(rng, 200), 0.80, 0.95),
])
def test_mlperf_tiny_pairs_on_synthetic_inputs(tmp_path, host, name, int8, fp32, classes, make, min_agree,
                                               min_cos):
    require_file(int8)
    rng = np.random.default_rng(0)
    x = make(rng)
    data = _npz(tmp_path / f"{name}.npz", x, rng.integers(0, classes, len(x)))  # random labels
    result, run_dir = run_accuracy(int8, fp32, data, host, AccuracyOptions(), runs_root=tmp_path / "runs")
    a = result.extra.accuracy.to_dict()
    assert a["num_classes"] == classes and a["paired"]["n"] == 200
    assert a["paired"]["agreement_rate"] > min_agree
    assert a["fidelity"]["cosine_similarity"] > min_cos
    assert a["fidelity"]["relative_l2_error"] < 0.3
    codes = {w.code for w in result.warnings}
    assert not codes & {"inputs-clipped", "input-range-underused"}, codes
    frame = pd.read_parquet(run_dir / PREDICTIONS)
    assert frame["pred_base"].nunique() >= 3  # the inputs are not all one class


def test_input_range_warnings_catch_wrong_preprocessing():
    from edgebench.bench.accuracy_record import input_range_warnings
    from edgebench.modelfile import read_model

    require_file(RESNET_INT8)
    resnet = read_model(RESNET_INT8)  # int8 input, scale 1, zero point -128: expects 0..255
    rng = np.random.default_rng(0)
    assert input_range_warnings(resnet, rng.uniform(0, 255, (8, 32, 32, 3))) == []
    assert [w.code for w in input_range_warnings(resnet, rng.uniform(0, 1, (8, 32, 32, 3)))] == \
        ["input-range-underused"]
    assert [w.code for w in input_range_warnings(resnet, rng.uniform(-255, 255, (8, 32, 32, 3)))] == \
        ["inputs-clipped"]
    assert input_range_warnings(read_model(FP32), rng.uniform(0, 1, (8, 8, 8, 1))) == []  # float input


@pytest.mark.slow
def test_gates_mean_one_thing_default_thresholds_warn(tmp_path, capsys):
    """Issue 18: `accuracy --edge-cases` used to exit 2 on a default threshold nobody set, while `runs`
    listed the run as ok and `check --strict` passed it. One rule now: a threshold the user set is a
    gate (exit 2, `runs` says gate failed, `check --strict` fails); a default one is a warning."""
    args = ["accuracy", INT8, "--baseline", FP32, "--data", "digits", "--edge-cases", "--severities", "1,5"]
    code, out, err = cli(args + ["--runs-dir", tmp_path / "d"], capsys)
    assert code == 0, err
    (run_dir,) = store.find_runs(tmp_path / "d")
    stored = store.read_result(run_dir)
    v = stored.extra.accuracy.validation.to_dict()
    assert v["failed"] == [] and v["default_exceeded"] and v["passed"] is True
    assert "default-threshold-exceeded" in {w.code for w in stored.warnings}
    assert "default thresholds exceeded" in out
    assert cli(["runs", "--runs-dir", tmp_path / "d"], capsys)[1].count(" ok ") == 1
    code, out, _ = cli(["check", str(run_dir), "--strict"], capsys)
    assert code == 0 and "default thresholds exceeded" in " ".join(out.split())
    # the same threshold given on the command line is a gate
    code, out, err = cli(args + ["--max-edge-drop", "3", "--runs-dir", tmp_path / "u"], capsys)
    assert code == 2 and "compression check failed" in err
    (run_dir,) = store.find_runs(tmp_path / "u")
    assert "gate failed" in cli(["runs", "--runs-dir", tmp_path / "u"], capsys)[1]
    code, _, err = cli(["check", str(run_dir), "--strict"], capsys)
    assert code == 2 and "gates" in err
