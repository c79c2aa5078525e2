"""The firmware core's sources as written, without a compiler (scripts/file_circles.py,
``source_graph``): no two files that need each other, in either kernel set, and the kernel layer
(the headers every kernel includes, kernels/<set>/) names no function an operator file (ops/)
defines.

The object graph of tests/test_engine_layout.py sees only what a build links: a header's inline
function that calls an operator's function is invisible there while only that operator inlines
it. That was the one C circle of issue 30: eb_dot.h (included by every kernel) called
eb_mul_round_f64, defined in ops/eb_op_fully_connected.c, which includes eb_dot.h; the helper
now lives in the shared requantization source (eb_kernels.h inline, eb_rescale.c exact)."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "firmware" / "core"
KERNEL_SETS = sorted(p.name for p in (CORE / "kernels").iterdir() if p.is_dir())

circles = load_script("scripts/file_circles.py")


def kernel_layer_into_ops(graph: dict) -> dict:
    """file of the kernel layer (a header, kernels/...) -> the ops/ files whose functions it names."""
    return {f: sorted(t for t in needs if t.startswith("ops/")) for f, needs in graph.items()
            if (f.endswith(".h") or f.startswith("kernels/")) and any(t.startswith("ops/") for t in needs)}


def _plant(core: Path, helper_home: str) -> None:
    """A small core shaped like the firmware's: an operator including the dot-product header,
    a requantization helper defined in ``helper_home``."""
    (core / "ops").mkdir(parents=True)
    (core / "kernels" / "portable").mkdir(parents=True)
    (core / "eb_kernels.h").write_text(
        "#include <stdint.h>\n/* the helper */\nint32_t eb_round(int32_t acc, uint32_t s);\n"
        "static inline int32_t eb_fast(int32_t a) { return a > 0 ? a : eb_round(a, 1u); }\n")
    (core / "eb_dot.h").write_text(
        '#include "eb_kernels.h"\nstatic inline int32_t eb_requant(int32_t acc)\n{\n'
        '    const char *s = "eb_nothing(";  /* eb_nothing() in a comment */\n'
        "    (void)s;\n    return eb_round(acc, 3u);\n}\n")
    helper = "int32_t eb_round(int32_t acc, uint32_t s)\n{\n    return acc * (int32_t)s;\n}\n"
    (core / "ops" / "eb_op_fc.c").write_text(
        '#include "eb_dot.h"\nint32_t eb_fc(int32_t x);\nint32_t eb_fc(int32_t x) { return eb_requant(x); }\n'
        + (helper if helper_home == "ops" else ""))
    (core / "eb_rescale.c").write_text('#include "eb_kernels.h"\n' + (helper if helper_home == "rescale" else ""))
    (core / "kernels" / "portable" / "eb_k.c").write_text(
        '#include "eb_dot.h"\nint32_t eb_k(int32_t x);\nint32_t eb_k(int32_t x) { return eb_requant(x) + eb_fast(x); }\n')


def test_the_checker_finds_a_header_calling_an_operators_function(tmp_path):
    core = tmp_path / "core"
    _plant(core, "ops")
    graph = circles.source_graph(core, "portable")
    assert circles.strongly_connected(graph) == [["eb_dot.h", "ops/eb_op_fc.c"]]
    assert kernel_layer_into_ops(graph) == {"eb_dot.h": ["ops/eb_op_fc.c"]}
    assert "eb_rescale.c" not in graph["eb_kernels.h"]        # a prototype is not a use


def test_the_checker_accepts_the_helper_in_the_shared_source(tmp_path):
    core = tmp_path / "core"
    _plant(core, "rescale")
    graph = circles.source_graph(core, "portable")
    assert circles.strongly_connected(graph) == []
    assert kernel_layer_into_ops(graph) == {}
    assert graph["eb_dot.h"] == {"eb_kernels.h", "eb_rescale.c"}
    # eb_kernels.h's inline calls a function it declares itself: its interface, not a circle
    assert graph["eb_kernels.h"] == set()
    assert graph["ops/eb_op_fc.c"] == {"eb_dot.h"}


@pytest.mark.parametrize("kernel_set", KERNEL_SETS)
def test_no_source_circles_in_the_firmware_core(kernel_set):
    graph = circles.source_graph(CORE, kernel_set)
    assert "eb_dot.h" in graph and f"kernels/{kernel_set}/" in "".join(graph)
    assert any(f.startswith("ops/") for f in graph), "the operators are in the graph"
    found = circles.strongly_connected(graph)
    assert found == [], f"firmware sources that need each other (kernels/{kernel_set}): {found}"


@pytest.mark.parametrize("kernel_set", KERNEL_SETS)
def test_the_kernel_layer_names_no_operator_function(kernel_set):
    graph = circles.source_graph(CORE, kernel_set)
    assert kernel_layer_into_ops(graph) == {}, "move the shared helper to eb_rescale.c / eb_conv_util.c"


def test_the_requantization_helper_lives_in_the_shared_source():
    """eb_mul_round_f64: its fast path inline in eb_kernels.h, its exact product in eb_rescale.c;
    the fully connected operator only uses it (through eb_dot.h)."""
    def symbols(rel):
        return circles._c_symbols((CORE / rel).read_text())

    _, inline, declared, _ = symbols("eb_kernels.h")
    assert "eb_mul_round_f64" in inline and "eb_mul_round_f64_exact" in declared
    assert "eb_mul_round_f64_exact" in symbols("eb_rescale.c")[0]
    defined, static, _, used = symbols("ops/eb_op_fully_connected.c")
    assert not {"eb_mul_round_f64", "eb_mul_round_f64_exact"} & (defined | static)
    assert "eb_mul_round_f64" in symbols("eb_dot.h")[3]
