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
* C headers (``--headers DIR``): an edge A -> B when A includes B (``#include "B"``);
* C sources as written (``--sources firmware/core``, no compiler needed): an edge A -> B when A
  includes B, or when a function body, initializer or macro of A names a function B defines
  (an inline function of a header counts for the header, so a header that calls an operator's
  function is seen even when only that operator's object uses it); one graph per kernel set
  (``kernels/<set>/``), as each build compiles one.

A circle is a strongly connected component of more than one file. Prints them and exits 1
when there is one (0 otherwise); ``--json`` prints ``{"python": [...], "c": [...], ...}``.

    python scripts/file_circles.py --py edgebench/mcu --objects BUILD/obj --headers firmware \
        --sources firmware/core
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


_COMMENT_OR_LITERAL = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _c_symbols(text: str) -> tuple:
    """``(defined, static, declared, used)`` of one C file: the functions it defines (``static``
    ones apart), the ones it declares (prototypes), and the identifiers its function bodies,
    initializers and macro bodies name (prototypes name nothing). Conditional compilation is not
    evaluated: every branch counts, so the graph is the widest any configuration has."""
    text = _COMMENT_OR_LITERAL.sub(lambda m: "\n" * m.group(0).count("\n") if m.group(0)[0] == "/" else '""', text)
    text = text.replace("\\\n", " ")
    used: set = set()
    code = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            macro = re.match(r"#\s*define\s+\w+(\([^)]*\))?(.*)", stripped)
            if macro:
                used.update(_IDENT.findall(macro.group(2)))
            code.append("")
        else:
            code.append(line)
    text = "\n".join(code)
    defined: set = set()
    static: set = set()
    declared: set = set()
    depth, start = 0, 0                     # start: where the current depth-0 declaration began
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[start:i]
                m = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", head)
                if m and m.group(1) not in ("if", "while", "for", "switch", "sizeof"):
                    (static if re.search(r"\bstatic\b", head[:m.start()]) else defined).add(m.group(1))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            m = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", text[start:i])
            if m:
                declared.add(m.group(1))
            start = i + 1
        elif depth > 0 and (c.isalpha() or c == "_"):
            m = _IDENT.match(text, i)
            used.add(m.group(0))
            i = m.end()
            continue
        i += 1
    return defined, static, declared, used


def source_graph(core_dir: Path, kernel_set: str | None = None) -> dict:
    """file -> files it needs, from the C sources as written under ``core_dir`` (paths relative to
    it): its includes, and the files defining a function it names (a non-static function of a
    ``.c`` file, or a static inline one of a header). A header naming a function it declares
    itself is that function's interface, not a user of its definition (``eb_kernels.h``'s inline
    fast path and ``eb_rescale.c``'s exact product): that name makes no edge. ``kernel_set``:
    only ``kernels/<set>/`` of the kernel sets (None: every file)."""
    core_dir = Path(core_dir)
    files = sorted(p for p in core_dir.rglob("*") if p.suffix in (".c", ".h"))
    if kernel_set is not None:
        files = [p for p in files if p.relative_to(core_dir).parts[0] != "kernels"
                 or p.relative_to(core_dir).parts[1] == kernel_set]
    names = {p: str(p.relative_to(core_dir)) for p in files}
    includes = include_graph(core_dir)
    owner: dict = {}
    uses: dict = {}
    for p in files:
        defined, static, declared, used = _c_symbols(p.read_text(encoding="utf-8", errors="replace"))
        for sym in defined | (static if p.suffix == ".h" else set()):
            owner.setdefault(sym, names[p])
        uses[names[p]] = used - defined - static - (declared if p.suffix == ".h" else set())
    graph: dict = {}
    for p in files:
        here = names[p]
        graph[here] = {f for f in includes.get(here, ()) if f in uses}
        graph[here] |= {owner[s] for s in uses[here] if s in owner and owner[s] != here}
    return graph


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--py", action="append", default=[], type=Path, help="a Python package directory")
    ap.add_argument("--objects", action="append", default=[], type=Path,
                    help="a firmware build's object directory (BUILD/obj)")
    ap.add_argument("--headers", action="append", default=[], type=Path, help="a C source tree (includes)")
    ap.add_argument("--sources", action="append", default=[], type=Path,
                    help="a C source tree as written (firmware/core): includes and named functions, per kernel set")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="paths are shown relative to this")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    found = {"python": [], "c": [], "includes": [], "sources": []}
    for d in args.py:
        found["python"] += strongly_connected(python_graph(d))
    for d in args.objects:
        found["c"] += strongly_connected(object_graph(d, args.root.resolve()))
    for d in args.headers:
        found["includes"] += strongly_connected(include_graph(d))
    for d in args.sources:
        sets = sorted(p.name for p in (d / "kernels").iterdir() if p.is_dir()) if (d / "kernels").is_dir() else [None]
        for kernel_set in sets:
            for c in strongly_connected(source_graph(d, kernel_set)):
                if c not in found["sources"]:
                    found["sources"].append(c)
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
