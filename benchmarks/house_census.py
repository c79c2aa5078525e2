"""The shape of the house, counted: file-level import circles, run-kind switches, board-kind
tests, the largest files and the widest signatures of the Python package.

    .venv/bin/python benchmarks/house_census.py [PACKAGE_DIR] [--top 8] [--list]

* **file-level circles**: strongly connected groups of two or more modules in the import graph
  (``scripts/file_circles.py``, the project's one circle finder; imports inside functions count);
* **run-kind switches**: comparisons of a ``.kind`` attribute (not a NumPy ``dtype.kind``) with a
  string or a tuple of strings, and lookups in tables keyed by run-kind strings (``KIND_TITLE``,
  ``LATENCY_KINDS``);
* **board-kind tests**: comparisons with the strings ``"mcu"`` or ``"sim"`` or the constants
  naming a board or client kind (``SIM_TRANSPORT``, ``MCU_CLIENT``...) and
  ``getattr(profile, "kind", ...)``: each place that asks whether a board is a microcontroller or
  a simulation (the definition in ``boards/profile.py`` included);
* **largest files** (lines) and **widest signatures** (parameters of one function).

To compare with an older commit: ``git worktree add /tmp/old <commit>`` and run it there with
``PYTHONPATH=/tmp/old``, or ``git archive <commit> edgebench | tar -x -C /tmp/old`` and pass
``/tmp/old/edgebench``.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIND_TABLES = ("KIND_TITLE", "LATENCY_KINDS")
BOARD_WORDS = ("mcu", "sim")
BOARD_NAMES = ("SIM_TRANSPORT", "SIM_CLIENT", "MCU_CLIENT", "AGENT_CLIENT", "SIM", "MCU", "AGENT")


def _checker():
    """scripts/file_circles.py, the one circle finder (Python imports, C objects and headers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("file_circles", ROOT / "scripts" / "file_circles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def file_circles(package: str = "edgebench", root: Path | None = None) -> list:
    """Every file-level import circle of ``package`` (under ``root``, default this tree): sorted lists
    of module names, each a strongly connected component of two or more modules of the import graph
    (imports inside functions count)."""
    checker = _checker()
    return checker.strongly_connected(checker.python_graph(Path(root or ROOT) / package))


def strongly_connected(edges: dict) -> list:
    """The components of more than one node of ``edges`` (node -> nodes it points at)."""
    return _checker().strongly_connected(edges)


def _strings(node: ast.AST) -> list:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_run_kind(node: ast.AST) -> bool:
    """``x.kind`` where x is a name or attribute, not a dtype (``arr.dtype.kind``) nor a data source's kind."""
    if not (isinstance(node, ast.Attribute) and node.attr == "kind"):
        return False
    owner = node.value
    if not isinstance(owner, (ast.Name, ast.Attribute)):
        return False
    name = owner.attr if isinstance(owner, ast.Attribute) else owner.id
    return name not in ("dtype", "source", "out", "stored") and not name.endswith("dtype")


def census(path: Path) -> dict:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    kind_switches, board_tests, widest = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_run_kind(s) for s in sides):
                words = [w for s in sides for w in _strings(s)]
                if any(w in BOARD_WORDS + ("linux",) for w in words) or "profile" in ast.unparse(node):
                    board_tests.append(node.lineno)
                elif words or any(isinstance(s, ast.Name) and s.id in KIND_TABLES for s in sides):
                    kind_switches.append(node.lineno)
                continue
            words = [w for s in sides for w in _strings(s)]
            if any(w in BOARD_WORDS for w in words) or any(
                    isinstance(s, ast.Name) and s.id in BOARD_NAMES for s in sides):
                board_tests.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in KIND_TABLES:
            kind_switches.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in KIND_TABLES:
            kind_switches.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2 \
                and _strings(node.args[1]) == ["kind"] and "profile" in ast.unparse(node.args[0]):
            board_tests.append(node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            widest.append((n, node.name, node.lineno))
    return {"kind_switches": sorted(set(kind_switches)), "board_tests": sorted(set(board_tests)),
            "widest": widest, "lines": len(path.read_text(encoding="utf-8").splitlines())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package", nargs="?", default=str(ROOT / "edgebench"))
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--list", action="store_true", help="list every switch and test with its file and line")
    args = ap.parse_args()
    pkg = Path(args.package).resolve()
    files = {p: census(p) for p in sorted(pkg.rglob("*.py")) if "agent" not in p.relative_to(pkg).parts}
    rel = {p: str(p.relative_to(pkg.parent)) for p in files}
    switches = [(rel[p], ln) for p, c in files.items() for ln in c["kind_switches"]]
    tests = [(rel[p], ln) for p, c in files.items() for ln in c["board_tests"]]
    circles = file_circles(pkg.name, pkg.parent)
    print(f"{pkg} (agent/ left out: it is an island)")
    print(f"file-level import circles: {len(circles)}")
    for c in circles:
        print("  " + " <-> ".join(c))
    print(f"run-kind switches: {len(switches)} in {len({f for f, _ in switches})} files")
    print(f"board-kind tests: {len(tests)} in {len({f for f, _ in tests})} files")
    if args.list:
        for what, rows in (("switch", switches), ("board test", tests)):
            for f, ln in rows:
                print(f"  {what}: {f}:{ln}")
    print("largest files (lines): " + ", ".join(f"{rel[p]} {c['lines']}" for p, c in
                                                sorted(files.items(), key=lambda x: -x[1]["lines"])[:args.top]))
    wide = sorted(((n, f"{rel[p]}:{name}") for p, c in files.items() for n, name, _ in c["widest"]), reverse=True)
    print("widest signatures (parameters): " + ", ".join(f"{name} {n}" for n, name in wide[:args.top]))


if __name__ == "__main__":
    main()
