"""Profile and layer-error runs in `report` (HTML with the layer bar chart and SQNR plot, Markdown)
and `check` (the layers-add-up rule), from stored results."""
from __future__ import annotations

import copy

import pytest
from conftest import DIGITS_INT8

from edgebench.bench.record import new_result
from edgebench.report import check as ck
from edgebench.report.html import RunData, render_html, render_markdown
from edgebench.report.layers import layer_error_claim, profile_claim, section_blocks
from edgebench.results.conditions import BoardSection, ModelSection, RuntimeSection
from edgebench.results.figures.layer_error import LayerErrorFigure
from edgebench.results.figures.profile import ProfileFigure


def _profile(method="device-counter", ratio=(1.0003, 0.9999, 1.0007), label="emulated"):
    r = new_result("profile", label)
    r.model = ModelSection(name="kws_ref_model", precision="int8")
    r.board = BoardSection(name="qemu-m4")
    r.runtime = RuntimeSection(name="edgebench-firmware", kernels="reference", threads=1)
    layers = [{"key": f"op:{k}", "index": k, "op": op, "output_shapes": [[1, 25, 5, 64]], "macs": macs,
               "median_s": t, "ci_low_s": t * 0.99, "ci_high_s": t * 1.01, "share": t / 4.8e-3, "in_sum": True,
               "per_mac": 1.6 if macs else None}
              for k, (op, macs, t) in enumerate([("CONV_2D", 320_000, 0.70e-3), ("DEPTHWISE_CONV_2D", 72_000, 0.21e-3),
                                                 ("CONV_2D", 512_000, 3.89e-3)])]
    r.extra.profile = ProfileFigure.model_validate({
        "method": method, "method_title": "the device's own counter", "statistic": "median", "repeats": 3,
        "sees": "every layer", "cannot_see": "the hook", "layers": layers,
        "by_op": [{"op": "CONV_2D", "count": 2, "time_s": 4.59e-3, "share": 0.956, "per_mac": 1.6},
                  {"op": "DEPTHWISE_CONV_2D", "count": 1, "time_s": 0.21e-3, "share": 0.044, "per_mac": 2.9}],
        "whole": {"median_s": 4.8e-3, "ci_low_s": 4.79e-3, "ci_high_s": 4.81e-3}, "sum_s": 4.8e-3,
        "sum_ratio": {"ratio": ratio[0], "ci_low": ratio[1], "ci_high": ratio[2], "runs": 3},
        "per_mac": {"unit": "instructions", "label": "emulated", "basis": "icount"}, "warnings": [], "notes": []})
    r.status = "complete"
    return r


def _layer_error():
    r = new_result("layer-error", "measured")
    r.model = ModelSection(name="digits_bad", precision="int8")
    r.board = BoardSection(name="host")
    r.runtime = RuntimeSection(name="ai-edge-litert", kernels="reference", threads=1)
    r.extra.baseline = {"name": "digits_fp32"}
    rows = [{"index": 0, "op": "CONV_2D", "sqnr_db": 45.5, "sqnr_ci": [45.4, 45.7], "cosine": 0.99999,
             "output_sqnr_db": 46.9, "local": {"local_sqnr_db": 45.9, "local_ci": [45.7, 46.0]},
             "saturated_share": 0.0, "explained_by": []},
            {"index": 1, "op": "CONV_2D", "sqnr_db": 3.3, "sqnr_ci": [3.2, 3.4], "cosine": 0.889,
             "output_sqnr_db": 3.3, "local": {"local_sqnr_db": 3.3, "local_ci": [3.2, 3.4]},
             "saturated_share": 0.485, "explained_by": ["48.5% of its FP32 values ... saturate"]},
            {"index": 2, "op": "MAX_POOL_2D", "sqnr_db": None, "sqnr_ci": None, "cosine": 1.0,
             "output_sqnr_db": 50.0, "local": {"local_sqnr_db": None, "local_ci": None}, "saturated_share": 0.0,
             "explained_by": []}]
    for row, best in zip(rows, (46.8, 48.2, 50.1)):
        row["best_sqnr_db"] = best
    jump = {"index": 1, "op": "CONV_2D", "name": "conv2", "local": rows[1]["local"], "best_sqnr_db": 48.2,
            "explained_by": rows[1]["explained_by"]}
    inp = {"index": None, "op": "input", "sqnr_db": 56.5, "sqnr_ci": [56.3, 56.8], "cosine": 1.0,
           "output_sqnr_db": 56.5, "best_sqnr_db": 56.5, "local": {"local_sqnr_db": 56.5, "local_ci": [56.3, 56.8]},
           "saturated_share": 0.0, "explained_by": []}
    r.extra.layer_error = LayerErrorFigure.model_validate({"layers": rows, "first_jump": jump, "jump_db": 6.0,
                                                           "n": 32, "method": "bootstrap", "notes": [], "input": inp})
    r.status = "complete"
    return r


def test_claims_say_what_was_timed_and_where_the_error_jumps():
    c = profile_claim(_profile())
    assert c.startswith("EMULATED") and "sum to 1.000 of it (95% CI 1.000–1.001, 3 repeats)" in c
    assert "heaviest layer 2 CONV_2D 3.89 ms" in c
    assert "isolated timings omit" in profile_claim(_profile("isolated", label="measured"))
    c = layer_error_claim(_layer_error())
    assert "first jumps at layer 1 CONV_2D" in c and "saturate" in c and "output SQNR exact" in c


def test_html_has_the_bar_chart_the_tables_and_the_sqnr_plot():
    runs = [RunData(_profile()), RunData(_layer_error())]
    page = render_html(runs, ck.check([d.result for d in runs]))
    assert page.count("data:image/png;base64,") == 2
    assert "layer profile" in page and "per-layer INT8 error" in page
    assert "instructions/MAC (emulated)" in page and "3.89 ms" in page
    assert "First jump: layer 1 CONV_2D" in page and "none added" in page


def test_markdown_has_the_tables_without_images():
    runs = [RunData(_profile()), RunData(_layer_error())]
    md = render_markdown(runs, ck.check([d.result for d in runs]))
    assert "### Layer by layer" in md and r"| 2 | CONV\_2D | 1x25x5x64 | 512\,000 | 3\.89 ms |" in md   # escaped for GFM
    assert "### Per-layer INT8 error against FP32" in md and "base64" not in md
    assert section_blocks(new_result("bench")) == []


@pytest.mark.parametrize("method, ratio, verdict", [
    ("device-counter", (1.0003, 0.9999, 1.0007), ck.PASS),
    ("device-counter", (0.90, 0.89, 0.91), ck.WARN),
    ("isolated", (1.0, 0.99, 1.01), ck.WARN),
])
def test_the_layers_add_up_rule(method, ratio, verdict):
    v = ck.layers_add_up([_profile(method, ratio)])
    assert v.verdict == verdict and v.rule == "layers-add-up"
    assert ck.layers_add_up([_layer_error()]).verdict == ck.NA
    assert ck.layers_add_up([copy.deepcopy(new_result("bench"))]).verdict == ck.NA


def test_an_edge_tpu_model_shows_the_delegate_node_against_the_cpu_operators(tmp_path):
    """A compiled model's edgetpu-custom-op row against the operators left on the CPU (a stored
    profile's figures; there is no Edge TPU here), with the compiler's table from the sidecar."""
    from types import SimpleNamespace

    import flatbuffers
    import numpy as np
    from ai_edge_litert import schema_py_generated as s

    from edgebench.bench.profile_methods import METHODS, Repeat
    from edgebench.bench.profile_table import profile_section
    from edgebench.boards.registry import get_profile
    from edgebench.runtime.inspect import inspect_model

    src = DIGITS_INT8
    m = s.ModelT.InitFromPackedBuf(bytearray(src.read_bytes()), 0)
    code = s.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode, code.customCode = 32, 32, b"edgetpu-custom-op"   # CUSTOM
    m.operatorCodes.append(code)
    m.subgraphs[0].operators[1].opcodeIndex = len(m.operatorCodes) - 1
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    path = tmp_path / "digits_edgetpu.tflite"
    path.write_bytes(bytes(b.Output()))
    rng = np.random.default_rng(0)

    def samples(t):
        return t * np.exp(rng.normal(0, 0.01, 50))

    times = {0: 10e-6, 1: 60e-6, 2: 5e-6, 3: 1e-6, 4: 3e-6, 5: 1e-6}
    repeats = [Repeat(whole=samples(85e-6), rows={f"op:{k}": samples(t) for k, t in times.items()}) for _ in range(3)]
    compiled = {"operators": [{"operator": "CONV_2D", "count": 1, "status": "Mapped to Edge TPU", "mapped": True},
                              {"operator": "CONV_2D", "count": 1, "status": "More than one subgraph", "mapped": False}]}
    run = SimpleNamespace(method=METHODS["isolated"], repeats=repeats, report=inspect_model(path), cuts=None,
                          kind="agent", profile=get_profile("host"), pool_note=None,
                          result=SimpleNamespace(label="measured",
                                                 model=ModelSection(sidecar={"edgetpu_compile": compiled})))
    p = profile_section(run).to_dict()
    tpu = p["edgetpu"]
    assert tpu["delegate_nodes"] == 1 and p["layers"][1]["where"] == "Edge TPU"
    assert tpu["delegate_share"] == pytest.approx(60 / 85, rel=0.03)
    assert tpu["cpu_share"] == pytest.approx(20 / 85, rel=0.03) and "CONV_2D" in tpu["cpu_operators"]
    assert [o["status"] for o in tpu["not_mapped"]] == ["More than one subgraph"] and len(tpu["mapped"]) == 1


def test_a_layer_comparison_of_a_run_that_is_not_a_profile_names_the_verb_for_it():
    from edgebench.bench.profile_compare import compare_layers
    from edgebench.errors import ResultError

    bench = new_result("bench", "emulated")
    with pytest.raises(ResultError, match="needs a profile run, this is a bench run"):
        compare_layers(bench, None, _profile(), None)
