"""What LiteRT's ``benchmark_model`` says about a model's operators (level 2).

Run with ``--enable_op_profiling=true --op_profiling_output_mode=proto
--op_profiling_output_file=F`` (the agent does that: ``benchmark_model`` op), the tool writes a
``tflite.profiling.BenchmarkProfilingData`` protocol buffer to F, parsed here, and logs its
whole-model timing on stdout, parsed from the line
``Inference timings in us: Init: I, First inference: F, Warmup (avg): W, Inference (avg): A``.

The message is built from its schema (``tflite/profiling/proto/profiling_info.proto``, the same
as ``ai_edge_litert.profiling_info_pb2``'s; a test compares the two) in a descriptor pool of its
own. Two generated modules define ``tflite.profiling.*`` in two differently named files,
``ai_edge_litert.profiling_info_pb2`` and TensorFlow's
``tensorflow.lite.profiling.proto.profiling_info_pb2`` (imported by ``tf.lite``), and protobuf's
default pool refuses the second one loaded ("duplicate symbol"): importing LiteRT's module here
would break a later ``tf.lite`` in the same process, or fail after it. A private pool does neither.

What the tool records, from its source (tensorflow/lite/profiling): one
``OpProfileData`` per node of each subgraph, in run order, with ``node_type`` (the
operator's registration name, ``CONV_2D``; or a delegate kernel such as
``TfLiteXNNPackDelegate`` that runs several operators), ``name`` (``[output tensor
names]:<node index>``) and ``inference_microseconds`` (first, last, avg, stddev, min, max,
sum, count over the profiled runs, integer microseconds but for stddev); and, when a
delegate profiles its own work (XNNPACK does), the delegate's internal operators under
``delegate_profiles``, whose names are the delegate's, not the model's. A node index below
the model's operator count is that operator (the interpreter numbers the flatbuffer's
operators first); delegate kernels get indices past them.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Optional

from edgebench.errors import AgentError

#: the log line with the whole-model figures (tools/benchmark/benchmark_model.cc)
_TIMINGS = re.compile(r"Inference timings in us:\s*Init:\s*([0-9.eE+-]+),\s*First inference:\s*([0-9.eE+-]+),"
                      r"\s*Warmup \(avg\):\s*([0-9.eE+-]+),\s*Inference \(avg\):\s*([0-9.eE+-]+)")
_COUNT = re.compile(r"count=(\d+)\s+first=(\d+)\s+curr=(\d+)\s+min=(\d+)\s+max=(\d+)\s+avg=([0-9.eE+-]+)"
                    r"\s+std=(\d+)(?:.*?median=(\d+))?")
_NODE = re.compile(r":(\d+)$")


@dataclass(frozen=True)
class OpRow:
    """One profiled node: times in microseconds as the tool reports them."""

    name: str
    node_type: str
    node_index: Optional[int]        # from the name's ':<index>' suffix
    run_order: int
    avg_us: float
    stddev_us: float
    min_us: float
    max_us: float
    first_us: float
    count: int
    times_called: int
    delegate_internal: bool = False  # an operator inside a delegate (its own name, not the model's)

    @property
    def op(self) -> str:
        """The operator name without the description some kernels append (``CONV_2D/...``)."""
        return self.node_type.split("/", 1)[0]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Profile:
    rows: tuple                      # OpRow of the primary subgraph, run order
    delegate_rows: tuple = ()        # OpRow inside delegates, run order
    other_subgraphs: int = 0
    whole: dict = field(default_factory=dict)   # from the log: init/first/warmup/inference (µs), count, std

    def to_dict(self) -> dict:
        return {"rows": [r.to_dict() for r in self.rows], "delegate_rows": [r.to_dict() for r in self.delegate_rows],
                "other_subgraphs": self.other_subgraphs, "whole": dict(self.whole)}


#: tflite/profiling/proto/profiling_info.proto (proto2, every field optional or repeated): per message,
#: its fields as (name, number, type, message type or None, repeated)
PROFILING_PROTO = "tflite/profiling/proto/profiling_info.proto"
PROFILING_PACKAGE = "tflite.profiling"
PROFILING_MESSAGES: dict[str, list[tuple[str, int, str, Optional[str], bool]]] = {
    "BenchmarkProfilingData": [("model_name", 1, "string", None, False),
                               ("init_profile", 2, "message", "ModelProfilingData", False),
                               ("runtime_profile", 3, "message", "ModelProfilingData", False)],
    "ModelProfilingData": [("subgraph_profiles", 1, "message", "SubGraphProfilingData", True),
                           ("delegate_profiles", 2, "message", "DelegateProfilingData", True)],
    "SubGraphProfilingData": [("subgraph_name", 1, "string", None, False), ("subgraph_index", 2, "int32", None, False),
                              ("per_op_profiles", 3, "message", "OpProfileData", True)],
    "DelegateProfilingData": [("delegate_name", 1, "string", None, False),
                              ("per_op_profiles", 2, "message", "OpProfileData", True)],
    "OpProfilingStat": [("first", 1, "int64", None, False), ("last", 2, "int64", None, False),
                        ("avg", 3, "int64", None, False), ("stddev", 4, "float", None, False),
                        ("variance", 5, "float", None, False), ("min", 6, "int64", None, False),
                        ("max", 7, "int64", None, False), ("sum", 8, "int64", None, False),
                        ("count", 9, "int64", None, False)],
    "OpProfileData": [("node_type", 1, "string", None, False),
                      ("inference_microseconds", 2, "message", "OpProfilingStat", False),
                      ("mem_kb", 3, "message", "OpProfilingStat", False), ("times_called", 4, "int64", None, False),
                      ("name", 5, "string", None, False), ("run_order", 6, "int64", None, False)],
}


@lru_cache(maxsize=1)
def _profiling_pool():
    # lazy: protobuf (optional, it comes with onnx), loaded only where used
    from google.protobuf import descriptor_pb2, descriptor_pool

    F = descriptor_pb2.FieldDescriptorProto
    types = {"string": F.TYPE_STRING, "int32": F.TYPE_INT32, "int64": F.TYPE_INT64, "float": F.TYPE_FLOAT,
             "message": F.TYPE_MESSAGE}
    proto = descriptor_pb2.FileDescriptorProto(name=PROFILING_PROTO, package=PROFILING_PACKAGE)
    for message, fields in PROFILING_MESSAGES.items():
        m = proto.message_type.add(name=message)
        for field_name, number, kind, of, repeated in fields:
            m.field.add(name=field_name, number=number, type=types[kind],
                        label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL,
                        **({"type_name": f".{PROFILING_PACKAGE}.{of}"} if of else {}))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return pool


@lru_cache(maxsize=None)
def profiling_message(name: str = "BenchmarkProfilingData"):
    """The message class ``tflite.profiling.<name>`` of :data:`PROFILING_MESSAGES`, in a descriptor
    pool of its own (never protobuf's default pool, where TensorFlow and LiteRT each register it
    under another file name: see the module docstring)."""
    # lazy: protobuf (optional, it comes with onnx), loaded only where used
    from google.protobuf import message_factory

    pool = _profiling_pool()
    descriptor = pool.FindMessageTypeByName(f"{PROFILING_PACKAGE}.{name}")
    if hasattr(message_factory, "GetMessageClass"):        # protobuf >= 4.21
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def _row(p, internal: bool) -> OpRow:
    st = p.inference_microseconds
    m = _NODE.search(p.name)
    return OpRow(name=p.name, node_type=p.node_type, node_index=int(m.group(1)) if m and not internal else None,
                 run_order=int(p.run_order), avg_us=float(st.avg), stddev_us=float(st.stddev),
                 min_us=float(st.min), max_us=float(st.max), first_us=float(st.first), count=int(st.count),
                 times_called=int(p.times_called), delegate_internal=internal)


def parse_profile(data: bytes, log: str = "") -> Profile:
    """The runtime profile of a ``BenchmarkProfilingData`` message (and the log's whole-model
    figures); AgentError for bytes that are not one, or one without a runtime profile."""
    # lazy: protobuf (optional, it comes with onnx), loaded only where used
    from google.protobuf.message import DecodeError

    msg = profiling_message()()
    try:
        msg.ParseFromString(bytes(data))
    except DecodeError as exc:
        raise AgentError(f"benchmark_model's profile is not a BenchmarkProfilingData protocol buffer ({exc})",
                         "check that the binary was run with --op_profiling_output_mode=proto") from None
    if not msg.HasField("runtime_profile") or not msg.runtime_profile.subgraph_profiles:
        raise AgentError("benchmark_model's profile has no runtime profile (no operator was profiled)",
                         "run it with --enable_op_profiling=true and at least one benchmark run")
    subgraphs = list(msg.runtime_profile.subgraph_profiles)
    primary = next((sg for sg in subgraphs if sg.subgraph_index == 0), subgraphs[0])
    rows = tuple(sorted((_row(p, False) for p in primary.per_op_profiles), key=lambda r: r.run_order))
    inner = tuple(sorted((_row(p, True) for d in msg.runtime_profile.delegate_profiles for p in d.per_op_profiles),
                         key=lambda r: r.run_order))
    return Profile(rows=rows, delegate_rows=inner, other_subgraphs=len(subgraphs) - 1, whole=parse_log(log))


def parse_log(text: str) -> dict:
    """The whole-model figures of a benchmark_model log (µs): ``init_us``, ``first_us``,
    ``warmup_avg_us``, ``inference_avg_us``, and from the last ``count=`` line ``count``,
    ``std_us``, ``min_us``, ``max_us``, ``median_us`` (newer tools print it). Empty when absent."""
    out: dict = {}
    found = _TIMINGS.findall(text or "")
    if found:
        init, first, warm, avg = (float(v) for v in found[-1])
        out.update(init_us=init, first_us=first, warmup_avg_us=warm, inference_avg_us=avg)
    counts = _COUNT.findall(text or "")
    if counts:
        c = counts[-1]
        out.update(count=int(c[0]), min_us=float(c[3]), max_us=float(c[4]), avg_us=float(c[5]),
                   std_us=float(c[6]), median_us=float(c[7]) if c[7] else None)
    return out


__all__ = ["OpRow", "Profile", "parse_profile", "parse_log", "profiling_message", "PROFILING_MESSAGES"]
