"""Where edgebench's internal imports sit: at module level or inside functions.

Counts import statements that name an edgebench module (``import edgebench.x``,
``from edgebench.x import y``, relative imports inside the package) in every .py file
under a package folder, and how many of them sit inside a function body (at any depth).
Class bodies, ``if``/``try`` blocks at module level count as module level.

    .venv/bin/python benchmarks/import_census.py [PACKAGE_DIR] [--list]

To compare with an older commit: ``git archive <commit> edgebench | tar -x -C /tmp/old``
then ``benchmarks/import_census.py /tmp/old/edgebench``.
"""
from __future__ import annotations

import argparse
import ast
from pathlib import Path


def _internal(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == "edgebench" or a.name.startswith("edgebench.") for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "edgebench"
    return False


def census(path: Path):
    """(module-level, in-function) lists of (line, target) for one file's internal imports."""
    top, inner = [], []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _internal(child):
                target = child.module if isinstance(child, ast.ImportFrom) else child.names[0].name
                (inner if in_function else top).append((child.lineno, "." * getattr(child, "level", 0)
                                                        + (target or "")))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return top, inner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package", nargs="?", default=str(Path(__file__).resolve().parents[1] / "edgebench"))
    ap.add_argument("--list", action="store_true", help="list every in-function internal import")
    args = ap.parse_args()
    root = Path(args.package)
    n_top = n_inner = 0
    for path in sorted(root.rglob("*.py")):
        top, inner = census(path)
        n_top += len(top)
        n_inner += len(inner)
        if args.list:
            for line, target in inner:
                print(f"{path.relative_to(root.parent)}:{line}: {target}")
    total = n_top + n_inner
    share = n_inner / total if total else 0.0
    print(f"{root}: {total} internal import statements, {n_top} at module level, "
          f"{n_inner} inside functions ({share:.0%})")


if __name__ == "__main__":
    main()
