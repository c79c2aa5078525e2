"""The import contract of pyproject.toml [tool.importlinter] holds, and it can fail.

The contract (README.md "Development", docs/architecture.md) is the layers
cli > bench > boards > mcu | sim | quantize > transport | runtime | data | power | telemetry
> stats | report | board_protocol > results | modelfile > errors, the agent island (edgebench.agent imports
nothing else from edgebench) and the host importing only the agent's protocol and
quantization helpers. It is checked with import-linter on the real tree, and on a copy of
the tree with one forbidden import added, to show each kind of contract is live.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parents[1]
RUN = ("from importlinter.cli import lint_imports; "
       "raise SystemExit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def _lint(tree: Path) -> subprocess.CompletedProcess:
    try:
        import importlinter  # noqa: F401
    except ImportError:
        missing("import-linter is not installed (pip install -e '.[test]')")
    env = dict(os.environ, PYTHONPATH=str(tree), COLUMNS="400")  # one line per contract
    return subprocess.run([sys.executable, "-c", RUN], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "edgebench", tmp_path / "edgebench",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    return tmp_path


def test_the_tree_keeps_its_import_contracts():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module, line, contract", [
    ("stats/_layer_probe.py", "import edgebench.bench.latency\n", "Layers"),
    ("transport/_layer_probe.py", "from edgebench.runtime import inspect\n", "Layers"),
    ("agent/_layer_probe.py", "from edgebench.errors import EdgebenchError\n", "island"),
    ("bench/_layer_probe.py", "def f():\n    from edgebench.agent import loop\n", "agent's wire protocol"),
])
def test_a_forbidden_import_breaks_the_contract(tmp_path, module, line, contract):
    tree = _copy(tmp_path)
    (tree / "edgebench" / module).write_text(line)
    result = _lint(tree)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [ln for ln in result.stdout.splitlines() if "BROKEN" in ln]
    assert len(broken) == 1 and contract in broken[0], result.stdout
    assert "_layer_probe" in result.stdout


# --- no two files import each other (module-level and function-level imports alike) ---

#: Circles that exist today, each with the engineer fixing it; remove an entry when it is fixed.
KNOWN_CIRCLES: dict = {}   # none left: a new circle fails the test below


def _census():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import house_census
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return house_census


@pytest.mark.slow
def test_no_new_file_level_import_circle():
    try:
        import grimp  # noqa: F401
    except ImportError:
        missing("grimp is not installed (it comes with import-linter: pip install -e '.[test]')")
    circles = {tuple(c) for c in _census().file_circles("edgebench", ROOT)}
    new = circles - set(KNOWN_CIRCLES)
    assert not new, "files that import each other (move the shared piece one level down): " + "; ".join(
        " <-> ".join(c) for c in sorted(new))
    fixed = set(KNOWN_CIRCLES) - circles
    assert not fixed, f"fixed, remove from KNOWN_CIRCLES: {sorted(fixed)}"


@pytest.mark.slow
def test_the_circle_finder_finds_a_planted_circle(tmp_path):
    try:
        import grimp  # noqa: F401
    except ImportError:
        missing("grimp is not installed (it comes with import-linter: pip install -e '.[test]')")
    tree = _copy(tmp_path)
    results = tree / "edgebench" / "results"
    (results / "_circle_a.py").write_text("def f():\n    from edgebench.results import _circle_b\n")
    (results / "_circle_b.py").write_text("from edgebench.results import _circle_a\n")
    # a fresh process: this one has the real tree's edgebench imported, which grimp would find
    code = ("import json, sys; sys.path.insert(0, %r); import house_census; "
            "print(json.dumps(house_census.file_circles('edgebench', %r)))" % (str(ROOT / "benchmarks"), str(tree)))
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(tree)))
    assert out.returncode == 0, out.stderr
    import json

    assert ["edgebench.results._circle_a", "edgebench.results._circle_b"] in json.loads(out.stdout)
    assert _census().strongly_connected({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_no_verb_module_imports_the_app():
    """Verb modules are registered by the app from the verb table; importing the app back would be a
    circle grimp cannot see (the app imports them by name)."""
    import ast

    for path in sorted((ROOT / "edgebench" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "edgebench.cli.app":
                raise AssertionError(f"{path.name} imports edgebench.cli.app")


def _classes_defined_twice(package: Path) -> dict:
    """Class names the package's modules define more than once (module level), with where."""
    where: dict = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return {name: places for name, places in where.items() if len(places) > 1}


def test_no_class_name_is_defined_twice_in_the_package(tmp_path):
    """Issue 30: one name, one class (a reader importing `Record` gets the one it means)."""
    assert _classes_defined_twice(ROOT / "edgebench") == {}
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("class Record:\n    pass\n")
    (pkg / "b.py").write_text("x = 1\n\n\nclass Record:\n    pass\n")
    assert _classes_defined_twice(pkg) == {"Record": ["pkg/a.py:1", "pkg/b.py:4"]}
