"""The microcontroller engine's layout: no file-level circles (Python imports in edgebench/mcu,
C objects and includes in firmware/), and one operator table (firmware/core/eb_ops.def) whose
families have their firmware source and host module (scripts/file_circles.py is the checker).

The firmware side of the table (the built engine refuses exactly the codes the table lacks)
is in tests/test_firmware_engine.py, which builds eb_run."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import load_script, require_tool
from fw_util import build_firmware

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"

circles = load_script("scripts/file_circles.py")


# ---- the checker itself finds circles ------------------------------------------------------

def test_checker_finds_a_python_circle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub.c import g\n")    # function-level import
    (pkg / "sub" / "c.py").write_text("from ..a import x\n")               # relative import
    (pkg / "d.py").write_text("import pkg.a\n")                            # outside the ring
    assert circles.strongly_connected(circles.python_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.sub.c"]]


def test_checker_finds_a_c_circle_through_objects_and_includes(tmp_path):
    cc = require_tool("cc")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.h").write_text('#include "b.h"\nint a(int);\n')
    (src / "b.h").write_text('#include "a.h"\nint b(int);\n')
    (src / "a.c").write_text("int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n")
    (src / "b.c").write_text("int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n")
    (src / "c.c").write_text("int a(int);\nint c(void) { return a(3); }\n")
    obj = tmp_path / "obj"
    for name in ("a", "b", "c"):
        o = obj / (str(src / name) + ".c.o").lstrip("/")
        o.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([cc, "-c", str(src / f"{name}.c"), "-o", str(o)], check=True)
    assert circles.strongly_connected(circles.object_graph(obj, tmp_path)) == [["src/a.c", "src/b.c"]]
    assert circles.strongly_connected(circles.include_graph(src)) == [["a.h", "b.h"]]


# ---- the engine has none ------------------------------------------------------------------

def test_no_file_circles_in_the_mcu_python_package():
    found = circles.strongly_connected(circles.python_graph(ROOT / "edgebench" / "mcu"))
    assert found == [], f"modules of edgebench/mcu that import each other: {found}"


def test_no_include_circles_in_the_firmware():
    found = circles.strongly_connected(circles.include_graph(FIRMWARE))
    assert found == [], f"firmware headers that include each other: {found}"


@pytest.mark.parametrize("port", ["posix", pytest.param("mps2-an386", marks=pytest.mark.slow)])
def test_no_file_circles_in_the_firmware_build(request, tmp_path_factory, port):
    """Every object of the firmware image (core, kernel set, port): no two source files that need
    each other's symbols. mps2-an386 builds the DSP kernel set, posix the portable one."""
    require_tool("make")
    if port == "posix":
        build = request.getfixturevalue("posix_firmware_bin").parent
    else:
        require_tool("arm-none-eabi-gcc")
        build = tmp_path_factory.mktemp(f"fw-{port}")
        build_firmware(port, build)
    graph = circles.object_graph(build / "obj", ROOT)
    sources = set(graph)
    assert any(s.startswith("firmware/core/ops/") for s in sources)
    kernels = "dsp" if port != "posix" else "portable"
    assert any(s.startswith(f"firmware/core/kernels/{kernels}/") for s in sources), sorted(sources)
    found = circles.strongly_connected(graph)
    assert found == [], f"firmware sources that need each other ({port}): {found}"


# ---- one operator table --------------------------------------------------------------------

def test_every_table_family_has_its_firmware_source_and_host_module():
    from edgebench.mcu import ops
    from edgebench.mcu.ops.table import operators, table_path

    table = operators()
    assert table_path() == FIRMWARE / "core" / "eb_ops.def"
    families = {e.family for e in table.values()}
    sources = {p.stem.removeprefix("eb_op_") for p in (FIRMWARE / "core" / "ops").glob("eb_op_*.c")}
    modules = {p.stem for p in (ROOT / "edgebench" / "mcu" / "ops").glob("*.py")} - {"__init__", "common", "table"}
    assert families == sources == modules == set(ops.FAMILIES)
    for e in table.values():
        src = (FIRMWARE / "core" / "ops" / f"eb_op_{e.family}.c").read_text()
        assert f"eb_{e.family}_check(" in src and f"eb_{e.family}_run(" in src, e
    for family, module in ops.FAMILIES.items():
        own = {n for n, e in table.items() if e.family == family}
        assert set(module.OPTIONS) <= own | set(module.ALIASES), family
        assert {ops.ALIASES[a] for a in module.ALIASES} <= own, family
    assert ops.OPS == {n: e.code for n, e in table.items()}
    assert set(ops.SUPPORTED_OPS) == set(table) | set(ops.ALIASES)


def test_engine_version_of_the_table_is_the_firmware_one():
    from edgebench.mcu.ops import ENGINE_OPS, ENGINE_VERSION

    header = (FIRMWARE / "core" / "eb_engine.h").read_text()
    assert int(re.search(r"#define EB_ENGINE_VERSION (\d+)u", header).group(1)) == ENGINE_VERSION
    assert ENGINE_OPS[ENGINE_VERSION] == tuple(sorted(ENGINE_OPS[ENGINE_VERSION]))
    assert all(set(ENGINE_OPS[v]) <= set(ENGINE_OPS[v + 1]) for v in range(1, ENGINE_VERSION))


def test_a_broken_table_line_is_one_clear_error():
    from edgebench.errors import UsageError
    from edgebench.mcu.ops.table import parse_table

    good = "EB_OP(ADD, 0, 1, elementwise)\nEB_OP(CONV_2D, 3, 1, conv)\n"
    assert list(parse_table(good)) == ["ADD", "CONV_2D"]
    for bad in ("EB_OP(ADD, zero, 1, elementwise)", "EB_OP(ADD, 0, 1, elementwise)\nEB_OP(SUB, 0, 2, elementwise)",
                "EB_OP(ADD, 300, 1, elementwise)"):
        with pytest.raises(UsageError) as err:
            parse_table(bad, "eb_ops.def")
        assert "eb_ops.def:" in err.value.one_line()


def test_kernels_are_compiled_sources_not_headers():
    """The DSP kernels are a kernel set of .c files the build selects; no header holds a
    function that is not inline (it would be compiled into every file that includes it)."""
    dsp = FIRMWARE / "core" / "kernels" / "dsp"
    assert sorted(p.name for p in dsp.glob("*.c")) == ["eb_conv_dsp.c", "eb_conv_mm_dsp.c", "eb_conv_requant_dsp.c",
                                                       "eb_conv_small_dsp.c", "eb_conv_stem_dsp.c",
                                                       "eb_depthwise_conv_dsp.c", "eb_depthwise_rq_dsp.c",
                                                       "eb_depthwise_small_dsp.c", "eb_dsp.c",
                                                       "eb_fc_dsp.c", "eb_pointwise_dsp.c", "eb_pointwise_rq_dsp.c",
                                                       "eb_pool_dsp.c"]
    outlined = re.compile(r"^static (?!inline\b|EB_ALWAYS_INLINE\b)[^=;(]*\b\w+\(", re.M)
    for p in (FIRMWARE / "core").rglob("*.h"):
        found = outlined.findall(p.read_text())
        assert not found, f"{p.relative_to(ROOT)} defines non-inline functions: {found}"
