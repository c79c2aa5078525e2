"""File-level circles: groups of source files that depend on each other in a ring.

Two files that need each other are one design left unfinished (docs/architecture.md):
the shared piece belongs one level down. This finds every such group in

* Python packages (``--py edgebench/mcu``): an edge A -> B when module A imports module B,
  at module level or inside a function (``from pkg import name`` counts as importing
  ``pkg.name`` when that is a module, else ``pkg`` itself);
* C object files (``--objects DIR``, a firmware build's ``obj/`` tree): an edge A -> B when
  A.o uses a symbol that B.o defines (``nm``), so a static inline function of a header counts
  for the file that includes it, and a call through a table does not hide a dependency on
  the file that defines the table;
* C headers (``--headers DIR``): an edge A -> B when A includes B (``#include "B"``).

A circle is a strongly connected component of more than one file. Prints them and exits 1
when there is one (0 otherwise); ``--json`` prints ``{"python": [...], "c": [...], ...}``.

    python scripts/file_circles.py --py edgebench/mcu --objects BUILD/obj --headers firmware
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path


def strongly_connected(graph: dict) -> list:
    """Tarjan's algorithm: the components of ``graph`` (node -> set of nodes) with more than
    one node, each sorted, the list sorted."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list = []
    counter = [0]

    def visit(v) -> None:
        # iterative DFS: (node, iterator over its successors)
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


# ---- Python -------------------------------------------------------------------------------

def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_graph(package_dir: Path) -> dict:
    """module -> modules of the same package tree it imports (any nesting level)."""
    package_dir = package_dir.resolve()
    root = package_dir.parent                      # the directory that holds the top package
    while (root / "__init__.py").is_file():
        root = root.parent
    files = {_module_name(p, root): p for p in package_dir.rglob("*.py")}
    graph: dict = {m: set() for m in files}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            targets: list = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    pkg = pkg[:len(pkg) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in files else base)
            for t in targets:
                # the deepest module of this tree the name reaches
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return graph


# ---- C --------------------------------------------------------------------------------------

def _nm_tool(objects: list) -> str:
    """arm-none-eabi-nm for ARM objects when it exists, else nm."""
    head = objects[0].read_bytes()[:20] if objects else b""
    if len(head) >= 20 and head[18:20] == b"\x28\x00" and shutil.which("arm-none-eabi-nm"):
        return "arm-none-eabi-nm"
    return "nm"


def object_graph(obj_dir: Path, source_root: Path | None = None) -> dict:
    """source file -> source files whose objects define a symbol it uses. Node names are the
    source paths relative to ``source_root`` (the objects mirror them: ``obj/<abs path>.o``)."""
    objects = sorted(Path(obj_dir).rglob("*.o"))
    if not objects:
        raise SystemExit(f"no object files under {obj_dir}: build the firmware first")
    nm = _nm_tool(objects)
    defined: dict = {}
    used: dict = {}

    def name_of(o: Path) -> str:
        src = "/" + str(o.relative_to(obj_dir))[:-2]     # obj/<abs path>.c.o -> /<abs path>.c
        if source_root is not None:
            try:
                return str(Path(src).relative_to(source_root))
            except ValueError:
                pass
        return src

    for o in objects:
        n = name_of(o)
        out = subprocess.run([nm, "-P", str(o)], capture_output=True, text=True, check=True).stdout
        used[n] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind == "U":
                used[n].add(sym)
            elif kind.isupper():                       # a global definition (T, D, B, R, C ...)
                defined.setdefault(sym, n)
    return {n: {defined[s] for s in syms if s in defined and defined[s] != n} for n, syms in used.items()}


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(src_dir: Path) -> dict:
    """header or source -> the project files it includes (by file name, searched in the tree)."""
    src_dir = Path(src_dir)
    files = [p for p in src_dir.rglob("*") if p.suffix in (".c", ".h")]
    by_name: dict = {}
    for p in files:
        by_name.setdefault(p.name, p)
    graph: dict = {}
    for p in files:
        here = str(p.relative_to(src_dir))
        graph[here] = set()
        for inc in _INCLUDE.findall(p.read_text(encoding="utf-8", errors="replace")):
            target = p.parent / inc
            target = target if target.is_file() else by_name.get(Path(inc).name)
            if target is not None and target.resolve() != p.resolve():
                graph[here].add(str(target.resolve().relative_to(src_dir.resolve())))
    return graph


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--py", action="append", default=[], type=Path, help="a Python package directory")
    ap.add_argument("--objects", action="append", default=[], type=Path,
                    help="a firmware build's object directory (BUILD/obj)")
    ap.add_argument("--headers", action="append", default=[], type=Path, help="a C source tree (includes)")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="paths are shown relative to this")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    found = {"python": [], "c": [], "includes": []}
    for d in args.py:
        found["python"] += strongly_connected(python_graph(d))
    for d in args.objects:
        found["c"] += strongly_connected(object_graph(d, args.root.resolve()))
    for d in args.headers:
        found["includes"] += strongly_connected(include_graph(d))
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        for kind, circles in found.items():
            for c in circles:
                print(f"{kind}: {' <-> '.join(c)}")
        print(f"{sum(len(c) for c in found.values())} circle(s)")
    return 1 if any(found.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
