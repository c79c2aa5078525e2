"""Compile a full-integer .tflite model for the Coral Edge TPU (level 2).

:func:`compile_edgetpu` runs Coral's ``edgetpu_compiler -s -o DIR MODEL`` and
:func:`parse_compiler_log` turns what it prints into :class:`EdgeTpuCompile`:
compiler version, input/output models, on-chip memory used and remaining for
caching parameters, off-chip memory for streaming the uncached ones, the number
of Edge TPU subgraphs, operations mapped to the Edge TPU vs left on the CPU,
and the per-operator table (``-s``). The result is merged into the sidecar
JSON beside the compiled model (key ``edgetpu_compile``), carrying over the
sidecar of the input model (calibration, converter versions...).

The compiler exists for x86-64 Debian/Ubuntu Linux only (Coral's apt
repository, package ``edgetpu-compiler``); elsewhere Coral's web/Colab compiler
does the same job and its log parses the same way.
"""
from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from edgebench.errors import EdgebenchError, ModelError
from edgebench.modelfile import read_model
from edgebench.provenance import SIDECAR_FORMAT, SIDECAR_VERSION, sidecar_path

COMPILER = "edgetpu_compiler"
MAPPED = "Mapped to Edge TPU"
_INSTALL_HINT = ("it exists for x86-64 Debian/Ubuntu Linux only, from Coral's apt repository "
                 "(package edgetpu-compiler, see https://coral.ai/docs/edgetpu/compiler/); "
                 "on other hosts use Coral's web/Colab compiler")


class CompilerNotFound(EdgebenchError):
    """``edgetpu_compiler`` is not on PATH."""


class CompileFailed(EdgebenchError):
    """The compiler ran and refused the model, crashed, or timed out."""

    def __init__(self, message: str, hint: Optional[str] = None, log: Optional["EdgeTpuCompile"] = None):
        super().__init__(message, hint)
        self.log = log


@dataclass(frozen=True)
class OperatorMapping:
    operator: str
    count: int
    status: str            # e.g. "Mapped to Edge TPU", "More than one subgraph is not supported"

    @property
    def mapped(self) -> bool:
        return self.status == MAPPED

    def to_dict(self) -> dict:
        return {"operator": self.operator, "count": self.count, "status": self.status, "mapped": self.mapped}


@dataclass(frozen=True)
class EdgeTpuCompile:
    """What one run of edgetpu_compiler printed. Sizes are the compiler's rounded figures."""

    succeeded: bool
    compiler_version: Optional[str] = None
    input_model: Optional[str] = None
    output_model: Optional[str] = None
    input_size_bytes: Optional[int] = None
    output_size_bytes: Optional[int] = None
    on_chip_memory_used_bytes: Optional[int] = None       # parameters cached in Edge TPU SRAM
    on_chip_memory_remaining_bytes: Optional[int] = None
    off_chip_memory_used_bytes: Optional[int] = None      # parameters streamed from host memory
    edgetpu_subgraphs: Optional[int] = None
    total_operations: Optional[int] = None
    operations_on_edgetpu: Optional[int] = None
    operations_on_cpu: Optional[int] = None
    operators: tuple = ()                                 # OperatorMapping
    compile_time_s: Optional[float] = None
    operation_log: Optional[str] = None
    error: Optional[str] = None
    sizes_as_logged: dict = field(default_factory=dict)

    @property
    def fully_mapped(self) -> bool:
        return self.succeeded and self.operations_on_cpu == 0

    def to_dict(self) -> dict:
        return {
            "succeeded": self.succeeded, "compiler_version": self.compiler_version,
            "input_model": self.input_model, "output_model": self.output_model,
            "input_size_bytes": self.input_size_bytes, "output_size_bytes": self.output_size_bytes,
            "on_chip_memory_used_bytes": self.on_chip_memory_used_bytes,
            "on_chip_memory_remaining_bytes": self.on_chip_memory_remaining_bytes,
            "off_chip_memory_used_bytes": self.off_chip_memory_used_bytes,
            "edgetpu_subgraphs": self.edgetpu_subgraphs, "total_operations": self.total_operations,
            "operations_on_edgetpu": self.operations_on_edgetpu, "operations_on_cpu": self.operations_on_cpu,
            "fully_mapped": self.fully_mapped,
            "operators": [o.to_dict() for o in self.operators],
            "compile_time_s": self.compile_time_s, "operation_log": self.operation_log,
            "error": self.error, "sizes_as_logged": dict(self.sizes_as_logged),
        }


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}
_SIZE_KEYS = {
    "Input size": "input_size_bytes",
    "Output size": "output_size_bytes",
    "On-chip memory used for caching model parameters": "on_chip_memory_used_bytes",
    "On-chip memory remaining for caching model parameters": "on_chip_memory_remaining_bytes",
    "Off-chip memory used for streaming uncached model parameters": "off_chip_memory_used_bytes",
}
_INT_KEYS = {
    "Number of Edge TPU subgraphs": "edgetpu_subgraphs",
    "Total number of operations": "total_operations",
    "Number of operations that will run on Edge TPU": "operations_on_edgetpu",
    "Number of operations that will run on CPU": "operations_on_cpu",
}
_TEXT_KEYS = {"Input model": "input_model", "Input": "input_model", "Output model": "output_model",
              "Output": "output_model", "Operation log": "operation_log"}
_ROW = re.compile(r"^(\S+)\s+(\d+)\s+(\S.*?)\s*$")


def _size(text: str) -> Optional[int]:
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG]i?B|B)\s*", text)
    return round(float(m.group(1)) * _UNITS[m.group(2)]) if m else None


def parse_compiler_log(text: str) -> EdgeTpuCompile:
    """Parse what ``edgetpu_compiler -s`` prints (its stdout, or the web compiler's log)."""
    values: dict = {}
    raw_sizes: dict = {}
    operators: list = []
    reasons: list = []
    in_table = False
    lines = text.splitlines()
    for k, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if m := re.match(r"Edge TPU Compiler version\s+(\S+)", s):
            values["compiler_version"] = m.group(1)
        elif m := re.match(r"Model compiled successfully in\s+([0-9.]+)\s*ms", s):
            values["compile_time_s"] = float(m.group(1)) / 1000.0
        elif re.fullmatch(r"Operator\s+Count\s+Status", s):
            in_table = True
        elif in_table and (m := _ROW.match(s)):
            operators.append(OperatorMapping(m.group(1), int(m.group(2)), m.group(3)))
        elif s.startswith("Invalid model"):
            in_table = False
            values.setdefault("input_model", s.partition(":")[2].strip() or None)
            reasons.extend(x.strip() for x in lines[k + 1:k + 2] if x.strip())
        elif s.startswith("ERROR:") or s.startswith("Compilation failed:"):
            reasons.append(s)
        elif ":" in s:
            key, _, value = s.partition(":")
            key, value = key.strip(), value.strip()
            if key in _SIZE_KEYS:
                raw_sizes[_SIZE_KEYS[key]] = value
                values[_SIZE_KEYS[key]] = _size(value)
            elif key in _INT_KEYS and value.isdigit():
                values[_INT_KEYS[key]] = int(value)
            elif key in _TEXT_KEYS and value:
                values.setdefault(_TEXT_KEYS[key], value)
    failed = bool(reasons) or "Compilation failed" in text or "Invalid model" in text
    compiled = "Model compiled successfully" in text or "Compilation succeeded" in text
    if operators:  # the table is the detail; the summary lines are absent when everything maps
        on_tpu = sum(o.count for o in operators if o.mapped)
        values.setdefault("operations_on_edgetpu", on_tpu)
        values.setdefault("operations_on_cpu", sum(o.count for o in operators) - on_tpu)
        values.setdefault("total_operations", sum(o.count for o in operators))
    elif compiled and values.get("total_operations") is not None and "operations_on_cpu" not in values:
        values.setdefault("operations_on_edgetpu", values["total_operations"])  # no table: all mapped
        values["operations_on_cpu"] = 0
    error = None
    if failed or not compiled:
        error = "; ".join(dict.fromkeys(reasons)) or next(
            (ln.strip() for ln in reversed(lines) if ln.strip()), "the compiler printed nothing")
    return EdgeTpuCompile(succeeded=compiled and not failed, operators=tuple(operators), error=error,
                          sizes_as_logged=raw_sizes, **values)


@dataclass(frozen=True)
class CompileRun:
    """One compilation: the command, the files and what the compiler reported."""

    command: tuple
    returncode: int
    source_model: str
    source_sha256: str
    output_model: str
    output_sha256: str
    sidecar: str
    log: EdgeTpuCompile
    carried_sidecar: Optional[str] = None
    notes: tuple = ()

    def to_dict(self) -> dict:
        return {"target": "edgetpu", "command": list(self.command), "returncode": self.returncode,
                "source_model": self.source_model, "source_sha256": self.source_sha256,
                "output_model": self.output_model, "output_sha256": self.output_sha256,
                "sidecar": self.sidecar, "carried_sidecar": self.carried_sidecar,
                **self.log.to_dict(), "notes": list(self.notes)}


def find_compiler() -> Optional[str]:
    return shutil.which(COMPILER)


def compile_edgetpu(model, out_dir=None, compiler: Optional[str] = None, timeout_s: float = 600.0) -> CompileRun:
    """Compile ``model`` into ``out_dir`` (default: beside it); raise a typed error with one line on failure."""
    model = Path(model)
    info = read_model(model)
    if info.precision not in ("int8", "uint8"):
        raise ModelError(
            f"{model.name} is not a full-integer model (precision {info.precision}: weights "
            f"{info.weights_dtype}, activations {info.activations_dtype})",
            "the Edge TPU needs a full-integer INT8 model: run `edgebench quantize` first")
    compiler = compiler or find_compiler()
    if compiler is None:
        host = f"{platform.system()} {platform.machine()}"
        where = "" if host.lower() in ("linux x86_64", "linux amd64") else f" (this host: {host})"
        raise CompilerNotFound(f"{COMPILER} not found on PATH{where}", _INSTALL_HINT)
    out = Path(out_dir) if out_dir is not None else model.parent
    out.mkdir(parents=True, exist_ok=True)
    argv = [compiler, "-s", "-o", str(out), str(model)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise CompileFailed(f"{COMPILER} did not finish within {timeout_s:g} s on {model.name}",
                            "pass a longer --timeout, or compile on Coral's web/Colab compiler") from None
    except OSError as exc:
        raise CompileFailed(f"cannot run {compiler}: {exc.strerror or exc}") from None
    log = parse_compiler_log(proc.stdout + "\n" + proc.stderr)
    if proc.returncode != 0 or not log.succeeded:
        hint = ("the Edge TPU needs a full-integer INT8 model: run `edgebench quantize`"
                if "not quantized" in (log.error or "").lower() else None)
        raise CompileFailed(f"{COMPILER} failed on {model.name} (exit {proc.returncode}): {log.error}",
                            hint, log)
    compiled = _compiled_path(model, out, log)
    return _write_sidecar(model, info.sha256, compiled, tuple(argv), proc.returncode, log)


def _compiled_path(model: Path, out: Path, log: EdgeTpuCompile) -> Path:
    candidates = [out / f"{model.stem}_edgetpu.tflite"]
    if log.output_model:
        p = Path(log.output_model)
        candidates += [p, out / p.name] if p.is_absolute() else [out / p.name, p]
    for p in candidates:
        if p.is_file():
            return p
    raise CompileFailed(f"{COMPILER} reported success but wrote no model (looked for "
                        f"{', '.join(str(c) for c in candidates)})")


def _write_sidecar(model: Path, source_sha: str, compiled: Path, argv: tuple, rc: int,
                   log: EdgeTpuCompile) -> CompileRun:
    notes = []
    source_sidecar = sidecar_path(model)
    target = sidecar_path(compiled)
    carried = None
    data: dict = {}
    for p, label in ((target, "existing sidecar of the compiled model"), (source_sidecar, "input model's sidecar")):
        if p.is_file():
            try:
                loaded = json.loads(p.read_text())
            except ValueError:
                notes.append(f"{label} {p.name} is not valid JSON: not carried over")
                continue
            if isinstance(loaded, dict):
                data.update(loaded)
                carried = str(p) if p == source_sidecar else carried
    out_sha = hashlib.sha256(compiled.read_bytes()).hexdigest()
    run = CompileRun(command=argv, returncode=rc, source_model=str(model), source_sha256=source_sha,
                     output_model=str(compiled), output_sha256=out_sha, sidecar=str(target), log=log,
                     carried_sidecar=carried, notes=tuple(notes))
    data.setdefault("format", SIDECAR_FORMAT)
    data.setdefault("version", SIDECAR_VERSION)
    data["model_sha256"] = out_sha                     # the sidecar describes the compiled file
    data["derived_from"] = {"path": str(model), "sha256": source_sha, "sidecar": carried}
    data["edgetpu_compile"] = run.to_dict()
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(target)
    return run
