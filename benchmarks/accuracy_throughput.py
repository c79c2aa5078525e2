"""Accuracy evaluation throughput on the host board against a bare invoke() loop.

Goal (issue 3): the harness overhead of ``edgebench accuracy`` stays under 10%: the
samples/s at which the model under test is evaluated through the agent (chunked
``infer`` requests: transfer, agent-side quantization, invoke, dequantization) is
compared with a bare Python loop in this process over ``interpreter.invoke()`` on
the same samples, same model, kernels and threads (all inputs quantized with one
vectorized numpy expression, one ``set_tensor`` / ``invoke`` / ``get_tensor`` per
sample, one vectorized dequantization: the least work that still turns float
inputs into every float output).

Two measurements per model, each interleaved so that drift of the machine hits
both sides alike (medians of the per-repetition ratios are reported):

1. steady state: one infer chunk (the size ``edgebench accuracy`` sends) through the
   agent, the same chunk through the agent's own ``Runner.infer`` in this process
   (the agent's work without the transport), and the bare loop;
2. whole runs: ``run_accuracy`` (fresh agent: start-up, upload, load and first
   invokes included) against a bare-loop pass over the same samples; also the
   end-to-end rate of the whole run (both models, statistics, files).

    .venv/bin/python benchmarks/accuracy_throughput.py [--rounds 5] [--chunks 30] [--repeat 20] [--kernels xnnpack]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MLPERF = ROOT.parent / "shared" / "models" / "mlperf-tiny"


def bare_loop(interp, x: np.ndarray) -> float:
    """Seconds for a vectorized quantization of all inputs, then set_tensor + invoke + get_tensor per
    sample, then a vectorized dequantization of all outputs."""
    inp, out = interp.get_input_details()[0], interp.get_output_details()[0]
    dtype = inp["dtype"]
    index, out_index = inp["index"], out["index"]
    set_tensor, invoke, get_tensor = interp.set_tensor, interp.invoke, interp.get_tensor
    ys = np.empty((len(x),) + tuple(out["shape"][1:]), out["dtype"])
    t0 = time.perf_counter()
    if np.dtype(dtype).kind in "iu":
        scale, zp = inp["quantization"]
        info = np.iinfo(dtype)
        xq = np.clip(np.round(x / np.float32(scale)) + zp, info.min, info.max).astype(dtype)
    else:
        xq = x.astype(dtype)
    xq = xq[:, None]
    for i in range(len(xq)):
        set_tensor(index, xq[i])
        invoke()
        ys[i] = get_tensor(out_index)[0]
    if np.dtype(out["dtype"]).kind in "iu":
        scale, zp = out["quantization"]
        (ys.astype(np.float32) - zp) * np.float32(scale)
    return time.perf_counter() - t0


def runner_in_process(model_path: str, kernels: str, threads: int):
    """The agent's own Runner.infer in this process (the agent's work without the transport)."""
    from edgebench.agent.loop import Runner
    from edgebench.agent.runtime import LoadedModel

    model = LoadedModel(model_path, kernels=kernels, threads=threads)

    def infer(x: np.ndarray) -> float:
        runner = Runner(model, x[:1])  # as the agent's infer op does without a pool
        t0 = time.perf_counter()
        runner.infer(x)
        return time.perf_counter() - t0

    return infer


def timed(fn, x) -> float:
    t0 = time.perf_counter()
    fn(x)
    return time.perf_counter() - t0


def configs(repeat: int, tmp: Path) -> list:
    from edgebench.data.datasets import load_digits

    digits = load_digits("test")
    x = np.concatenate([digits.x] * repeat)
    y = np.concatenate([digits.y] * repeat)
    np.savez(tmp / "digits_rep.npz", x=x, y=y)
    out = [("digits", ROOT / "models/digits/digits_int8.tflite", ROOT / "models/digits/digits_fp32.tflite",
            tmp / "digits_rep.npz", x)]
    if (MLPERF / "pretrainedResnet_quant.tflite").exists():
        from scipy.ndimage import gaussian_filter

        rng = np.random.default_rng(0)
        img = gaussian_filter(rng.uniform(0, 1, (2000, 32, 32, 3)), (0, 2, 2, 0))
        low, span = img.min(axis=(1, 2, 3), keepdims=True), np.ptp(img, axis=(1, 2, 3), keepdims=True)
        xr = ((img - low) / span * 255).astype(np.float32)
        np.savez(tmp / "resnet.npz", x=xr, y=rng.integers(0, 10, len(xr)))
        out.append(("resnet8", MLPERF / "pretrainedResnet_quant.tflite", MLPERF / "pretrainedResnet.tflite",
                    tmp / "resnet.npz", xr))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="whole accuracy runs")
    ap.add_argument("--chunks", type=int, default=30, help="interleaved steady-state repetitions")
    ap.add_argument("--repeat", type=int, default=20, help="digits test set repetitions (540 each)")
    ap.add_argument("--kernels", default="xnnpack", choices=["xnnpack", "builtin", "reference"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from edgebench.bench.accuracy import AccuracyOptions, _chunk, run_accuracy
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile
    from edgebench.modelfile import read_model

    resolver = {"xnnpack": OpResolverType.AUTO, "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                "reference": OpResolverType.BUILTIN_REF}[args.kernels]
    host = get_profile("host")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for name, model, baseline, data, x in configs(args.repeat, tmp):
            interp = Interpreter(model_path=str(model), num_threads=args.threads,
                                 experimental_op_resolver_type=resolver)
            interp.allocate_tensors()
            opts = AccuracyOptions(kernels=args.kernels, threads=args.threads, baseline_kernels="xnnpack")
            # 1. steady state: the same chunk through the agent, the agent's Runner in process, and the
            #    bare loop, interleaved chunk by chunk
            client = open_client(host)
            client.hello()
            client.load(client.ensure_model(read_model(model)), kernels=args.kernels, threads=args.threads)
            chunk = x[:_chunk(opts, int(np.prod(x.shape[1:])) * 4)]
            runner = runner_in_process(str(model), args.kernels, args.threads)
            for fn in (client.infer, runner, lambda c, interp=interp: bare_loop(interp, c)):
                timed(fn, chunk)  # warm-up
            agent_r, runner_r, bare_r = [], [], []
            for _ in range(args.chunks):
                agent_r.append(len(chunk) / timed(client.infer, chunk))
                runner_r.append(len(chunk) / runner(chunk))
                bare_r.append(len(chunk) / bare_loop(interp, chunk))
            client.close()
            # 2. whole accuracy runs (fresh agent each: start-up, upload, load, first invokes included)
            bare, harness, whole = [], [], []
            for _ in range(args.rounds):
                bare.append(len(x) / bare_loop(interp, x))
                t0 = time.perf_counter()
                result, _ = run_accuracy(model, baseline, data, host, opts, runs_root=tmp / "runs")
                whole.append(2 * len(x) / (time.perf_counter() - t0))
                harness.append(result.extra.accuracy.evaluation["candidate"]["samples_per_s"])
            med = lambda v: float(np.median(v))  # noqa: E731
            ratio = lambda a, b: float(np.median(np.asarray(a) / np.asarray(b)))  # noqa: E731
            print(f"{name} ({model.name}), {args.kernels}, {args.threads} thread(s)")
            print(f"  steady state, {len(chunk):,}-sample chunk, median of {args.chunks} interleaved repetitions:")
            print(f"    bare loop over invoke()          : {med(bare_r):10,.0f} samples/s")
            print(f"    agent Runner.infer, in process   : {med(runner_r):10,.0f} samples/s  "
                  f"overhead {100 * (1 - ratio(runner_r, bare_r)):5.1f}%")
            print(f"    edgebench infer via the agent    : {med(agent_r):10,.0f} samples/s  "
                  f"overhead {100 * (1 - ratio(agent_r, bare_r)):5.1f}%  goal < 10%: "
                  f"{'met' if ratio(agent_r, bare_r) >= 0.9 else 'NOT met'}")
            print(f"  whole runs, {len(x):,} samples, median of {args.rounds}:")
            print(f"    bare loop over invoke()          : {med(bare):10,.0f} samples/s")
            print(f"    accuracy run, model under test   : {med(harness):10,.0f} samples/s  "
                  f"overhead {100 * (1 - ratio(harness, bare)):5.1f}%")
            print(f"    accuracy run end to end (2 models, statistics, files): {med(whole):,.0f} samples/s")


if __name__ == "__main__":
    main()
