"""What the agent does besides timing: intermediate tensors, and LiteRT's benchmark_model.

* :func:`capture_tensors` runs each input sample once and returns the tensors the host asked
  for, every one of them as it was after the invoke. The model must have been loaded with
  ``preserve_all_tensors`` (``experimental_preserve_all_tensors=True``): without it the
  interpreter reuses an intermediate tensor's memory for later ones, and what it holds after
  the invoke is not that tensor's value.
* :func:`run_benchmark_model` runs a ``benchmark_model`` binary (LiteRT's C++ benchmark tool)
  on a cached model with operator profiling written as a protocol buffer, and returns that
  file's bytes and the tool's log. The command is an argument list (no shell); the binary is
  the one the host named, or the first ``benchmark_model`` on this computer's PATH.

Standard library + numpy, Python 3.9 or newer, like the rest of the agent.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

import numpy as np

from .protocol import DataFailure, RuntimeMissing, UsageFailure
from .quant import make_quantizer
from .runtime import EDGETPU_LIBRARY

BENCHMARK_MODEL = "benchmark_model"
MAX_TENSOR_BYTES = 256 * 1024 * 1024          # one answer's tensors at most
LOG_TAIL_BYTES = 64 * 1024
BENCHMARK_HINT = ("build or download LiteRT's benchmark_model for this board "
                  "(https://ai.google.dev/edge/litert/models/measurement) and pass its path on the board "
                  "with --benchmark-model, or put it on the board's PATH")


def capture_tensors(model, x: np.ndarray, indices: List[int]) -> Dict[str, np.ndarray]:
    """``t<index>``: the tensor ``index`` after each sample's invoke, stacked (N, *shape)."""
    if not getattr(model, "preserve_all_tensors", False):
        raise UsageFailure("the model was loaded without preserve_all_tensors: its intermediate tensors are "
                           "overwritten during an invoke", hint="load it with preserve_all_tensors true")
    if model.batch != 1:
        raise UsageFailure(f"tensors drives batch 1 models, this one has batch {model.batch}")
    if not isinstance(indices, list) or not indices or not all(isinstance(i, int) for i in indices):
        raise UsageFailure(f"indices must be a non-empty list of tensor indices, got {indices!r}")
    interp = model.interpreter
    known = {int(d["index"]): d for d in interp.get_tensor_details()}
    missing = [i for i in indices if i not in known]
    if missing:
        raise UsageFailure(f"the model has no tensor(s) {missing[:5]} (it has {len(known)})")
    n = len(x)
    need = sum(int(np.prod(known[i]["shape"])) * np.dtype(known[i]["dtype"]).itemsize for i in indices) * n
    if need > MAX_TENSOR_BYTES:
        raise DataFailure(f"the tensors of {n} samples take {need:,} bytes, more than one answer may carry "
                          f"({MAX_TENSOR_BYTES:,})", hint="ask for fewer samples per request")
    detail = model.inputs[0]
    quantize = make_quantizer(detail, [1] + model.sample_shape())
    out = {i: np.empty((n,) + tuple(int(s) for s in known[i]["shape"]), known[i]["dtype"]) for i in indices}
    for k in range(n):
        interp.set_tensor(detail["index"], quantize(x[k:k + 1]))
        interp.invoke()
        for i in indices:
            out[i][k] = interp.get_tensor(i)
    return {f"t{i}": a for i, a in out.items()}


def find_benchmark_model(binary: Optional[str]) -> str:
    """The binary to run: ``binary`` (a path on this computer) or ``benchmark_model`` on PATH."""
    if binary:
        path = os.path.expanduser(binary)
        if not os.path.isfile(path):
            raise RuntimeMissing(f"{binary} does not exist on this computer", hint=BENCHMARK_HINT)
        if not os.access(path, os.X_OK):
            raise RuntimeMissing(f"{binary} is not executable", hint=f"chmod +x {binary}")
        return path
    found = shutil.which(BENCHMARK_MODEL)
    if found is None:
        raise RuntimeMissing(f"no {BENCHMARK_MODEL} on this computer's PATH", hint=BENCHMARK_HINT)
    return found


def benchmark_argv(binary: str, model_path: str, proto_path: str, threads: int, kernels: str,
                   runs: int, warmup_runs: int, delegate: Optional[str] = None) -> List[str]:
    """The command line (an argument list): operator profiling written as a protocol buffer; the Edge
    TPU delegate through the tool's external-delegate option."""
    if kernels not in ("xnnpack", "builtin"):
        raise UsageFailure(f"benchmark_model runs the xnnpack or builtin kernels, not {kernels!r}",
                           hint="use --kernels xnnpack or builtin with --method benchmark-model")
    return [binary, f"--graph={model_path}", f"--num_threads={int(threads)}", f"--num_runs={int(runs)}",
            f"--warmup_runs={int(warmup_runs)}", f"--use_xnnpack={'true' if kernels == 'xnnpack' else 'false'}",
            "--enable_op_profiling=true", "--op_profiling_output_mode=proto",
            f"--op_profiling_output_file={proto_path}"] + \
        ([f"--external_delegate_path={EDGETPU_LIBRARY.get(platform.system(), 'libedgetpu.so.1')}"]
         if delegate == "edgetpu" else [])


def run_benchmark_model(model_path: str, binary: Optional[str], threads: int = 1, kernels: str = "xnnpack",
                        runs: int = 50, warmup_runs: int = 5, delegate: Optional[str] = None,
                        timeout_s: float = 600.0):
    """Run the tool once; ``(header, proto bytes)``: the argv, exit status, elapsed time, log tail."""
    for name, value, low in (("threads", threads, 1), ("runs", runs, 1), ("warmup_runs", warmup_runs, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise UsageFailure(f"{name} must be an integer >= {low}, got {value!r}")
    exe = find_benchmark_model(binary)
    with tempfile.TemporaryDirectory(prefix="edgebench-bm-") as tmp:
        proto = os.path.join(tmp, "profile.pb")
        argv = benchmark_argv(exe, model_path, proto, threads, kernels, runs, warmup_runs, delegate)
        t0 = time.perf_counter()
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise UsageFailure(f"{exe} did not finish in {timeout_s:g} s", hint="use fewer runs") from None
        except OSError as exc:
            raise RuntimeMissing(f"cannot run {exe}: {exc}", hint=BENCHMARK_HINT) from None
        elapsed = time.perf_counter() - t0
        log = done.stdout[-LOG_TAIL_BYTES:].decode("utf-8", "replace")
        if done.returncode != 0:
            last = [line for line in log.splitlines() if line.strip()][-3:]
            raise UsageFailure(f"{os.path.basename(exe)} exited with status {done.returncode}: "
                               + " | ".join(last), hint="check the model and the binary's version")
        if not os.path.isfile(proto):
            raise UsageFailure(f"{os.path.basename(exe)} wrote no profile to --op_profiling_output_file",
                               hint="this benchmark_model may predate --op_profiling_output_mode=proto: "
                                    "use a current LiteRT build")
        with open(proto, "rb") as f:
            data = f.read()
    header = {"argv": [os.path.basename(argv[0])] + argv[1:], "binary": exe, "returncode": done.returncode,
              "elapsed_s": elapsed, "log": log}
    return header, data
