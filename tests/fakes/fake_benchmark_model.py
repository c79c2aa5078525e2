"""A faithful fake of LiteRT's benchmark_model for the profile tests (the binary is in no wheel here).

It takes the real tool's flags, reads the model's operators from the .tflite (the flatbuffer schema
of ai-edge-litert), writes what the real tool writes with ``--op_profiling_output_mode=proto``: a
``tflite.profiling.BenchmarkProfilingData`` (profiling_info_pb2, the message the tool's
ProfileSummaryProtoFormatter serialises), one ``OpProfileData`` per interpreter node in run order
named ``[<output tensor names>]:<node index>``, times in integer microseconds; with
``--use_xnnpack=true`` the whole graph as one ``TfLiteXNNPackDelegate`` node (index past the
operators) and XNNPACK's own operators under ``delegate_profiles``; and it logs the whole-model
line the tool logs (``Inference timings in us: ...``).

Operator k takes (k + 1) * 10 µs on average (stddev 1), the whole model the sum plus 5 µs.
FAKE_BM_EXIT=N makes it exit with status N after printing an error line.
"""
import os
import sys

from ai_edge_litert import profiling_info_pb2 as pb
from ai_edge_litert import schema_py_generated as s


def flags(argv):
    out = {}
    for a in argv:
        if a.startswith("--") and "=" in a:
            k, _, v = a[2:].partition("=")
            out[k] = v
    return out


def stat(msg, avg, count):
    msg.first = avg
    msg.last = avg
    msg.avg = avg
    msg.stddev = 1.0
    msg.variance = 1.0
    msg.min = avg - 1
    msg.max = avg + 1
    msg.sum = avg * count
    msg.count = count


def main():
    f = flags(sys.argv[1:])
    if os.environ.get("FAKE_BM_EXIT"):
        print("ERROR: Failed to apply the delegate (fake)")
        return int(os.environ["FAKE_BM_EXIT"])
    runs = int(f.get("num_runs", "50"))
    m = s.ModelT.InitFromPackedBuf(bytearray(open(f["graph"], "rb").read()), 0)
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if isinstance(v, int)}
    data = pb.BenchmarkProfilingData()
    init = data.init_profile.subgraph_profiles.add()
    init.subgraph_index = 0
    ev = init.per_op_profiles.add()
    ev.node_type = "AllocateTensors"
    ev.name = "AllocateTensors/0"
    stat(ev.inference_microseconds, 12, 1)
    sub = data.runtime_profile.subgraph_profiles.add()
    sub.subgraph_index = 0
    sub.subgraph_name = "main"
    total = 0
    n_ops = len(sg.operators)
    if f.get("use_xnnpack") == "true":
        node = sub.per_op_profiles.add()
        node.node_type = "TfLiteXNNPackDelegate"
        node.name = "[" + ", ".join(sg.tensors[i].name.decode() for i in sg.outputs) + f"]:{n_ops}"
        node.run_order = 0
        node.times_called = 1
        total = sum((k + 1) * 10 for k in range(n_ops))
        stat(node.inference_microseconds, total, runs)
        inner = data.runtime_profile.delegate_profiles.add()
        for k in range(n_ops):
            p = inner.per_op_profiles.add()
            p.node_type = "DelegateOpInvoke"
            p.name = f"Delegate/Fake XNNPACK op {k} (NHWC, QS8):{k}"
            p.run_order = k
            p.times_called = 1
            stat(p.inference_microseconds, (k + 1) * 10, runs)
    else:
        for k, op in enumerate(sg.operators):
            code = m.operatorCodes[op.opcodeIndex]
            p = sub.per_op_profiles.add()
            p.node_type = names[max(code.builtinCode, code.deprecatedBuiltinCode)]
            p.name = "[" + ", ".join(sg.tensors[i].name.decode() for i in op.outputs) + f"]:{k}"
            p.run_order = k
            p.times_called = 1
            stat(p.inference_microseconds, (k + 1) * 10, runs)
            total += (k + 1) * 10
    with open(f["op_profiling_output_file"], "wb") as out:
        out.write(data.SerializeToString())
    whole = total + 5
    print(f"INFO: Loaded model {f['graph']}")
    print(f"INFO: count={runs} first={whole} curr={whole} min={whole - 1} max={whole + 1} avg={whole} std=1 "
          f"p5={whole - 1} median={whole} p95={whole + 1}")
    print(f"INFO: Inference timings in us: Init: 1234, First inference: {whole + 50}, Warmup (avg): {whole + 2}, "
          f"Inference (avg): {whole}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
