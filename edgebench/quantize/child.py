"""Run a conversion in a child process with resource limits (level 2).

An ONNX file can ask for more than its checks foresee (``onnx_lower.guard`` bounds what can
be known beforehand); the TensorFlow converter's own memory and time cannot be bounded from
the graph. :func:`run_contained` runs the job in a spawned child process with
``RLIMIT_AS`` (address space, default: the machine's physical memory) and ``RLIMIT_CPU``
(default one hour), on a thread with a 512 MiB stack and a raised recursion limit (Keras
builds a functional model recursively: a 4,000-node chain needs it). Progress messages come
back through a pipe. An edgebench error in the child is raised again as the same type in
the parent; anything else (a signal, a crash, the limits) becomes one ``ModelError`` line.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Optional

from edgebench import errors
from edgebench.errors import ModelError

STACK_BYTES = 512 << 20
RECURSION_LIMIT = 200_000


@dataclass(frozen=True)
class ChildLimits:
    address_space: int       # bytes
    cpu_seconds: int

    @classmethod
    def default(cls) -> "ChildLimits":
        try:
            phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not Linux
            phys = 16 << 30
        return cls(max(int(phys), 8 << 30), 3600)


def run_contained(fn: Callable, args: tuple, kwargs: dict, progress: Optional[Callable[[str], None]] = None,
                  limits: Optional[ChildLimits] = None, what: str = "the conversion"):
    """``fn(*args, **kwargs, progress=...)`` in a limited child; its result (picklable) or its error."""
    limits = limits or ChildLimits.default()
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child_main, args=(child, fn, args, kwargs, limits), daemon=True)
    p.start()
    child.close()
    result = None
    try:
        while True:
            try:
                kind, payload = parent.recv()
            except EOFError:
                break
            if kind == "progress":
                if progress is not None:
                    progress(payload)
            else:
                result = (kind, payload)
                break
        p.join(timeout=60)
    finally:                     # interrupted (Ctrl-C, SIGTERM) or a child that does not exit: end it
        if p.is_alive():
            p.terminate()
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()
        parent.close()
    if result is None:
        raise ModelError(f"{what} ended without a result: {_death(p.exitcode, limits)}",
                         "the model needs more memory or time than edgebench allows a conversion; "
                         "edgebench --debug shows more, docs/models.md states the limits")
    kind, payload = result
    if kind == "ok":
        return payload
    cls_name, message, hint = payload
    cls = getattr(errors, cls_name, ModelError)
    if not (isinstance(cls, type) and issubclass(cls, errors.EdgebenchError)):
        cls = ModelError
    raise cls(message, hint)


def _death(code, limits: ChildLimits) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        extra = (f" (CPU time limit {limits.cpu_seconds} s)" if name in ("SIGXCPU", "SIGKILL") else
                 " (a crash in the converter or a library it loads)" if name in ("SIGSEGV", "SIGBUS", "SIGABRT")
                 else "")
        return f"the child process was killed by {name}{extra}"
    return f"the child process exited with status {code} (memory limit {limits.address_space / 2**30:.0f} GiB?)"


def _child_main(conn, fn, args, kwargs, limits: ChildLimits) -> None:  # pragma: no cover - runs in the child

    for lim, value in ((resource.RLIMIT_AS, limits.address_space), (resource.RLIMIT_CPU, limits.cpu_seconds)):
        soft, hard = resource.getrlimit(lim)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(lim, (cap, hard))
    sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(STACK_BYTES)

    def send_progress(message: str) -> None:
        conn.send(("progress", message))

    def work() -> None:
        try:
            out = fn(*args, **kwargs, progress=send_progress)
            conn.send(("ok", out))
        except errors.EdgebenchError as exc:
            conn.send(("error", (type(exc).__name__, exc.message, exc.hint)))
        except MemoryError:
            conn.send(("error", ("ModelError", f"out of memory (limit {limits.address_space / 2**30:.0f} GiB)",
                                 "the model is too large for the conversion's memory limit")))
        except RecursionError:
            conn.send(("error", ("ModelError", "the graph is too deep for the Keras build (RecursionError)",
                                 "docs/models.md states the node limit")))
        except BaseException as exc:
            text = " ".join(str(exc).split())[:300] or type(exc).__name__
            conn.send(("error", ("ModelError", f"the conversion failed unexpectedly ({type(exc).__name__}: {text})",
                                 "run with --debug in-process, or open an issue with the model")))

    t = threading.Thread(target=work, name="edgebench-convert")
    t.start()
    t.join()
    conn.close()
