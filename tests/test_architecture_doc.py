"""docs/architecture.md checked against the tree, so the page cannot drift from what it describes.

* the layer drawing names the layers of pyproject.toml's import-linter contract, in its order, and
  the agent island and the host's two agent modules as the other two contracts say;
* every table: each file or folder it names exists, each ``module.attribute`` / ``path.py``
  reference imports and has that attribute, and each bare name resolves in a module the same row
  names (the board-client table against ``BoardClient``, the verb table against ``Verb``, the
  capability table against ``board_protocol.ALL``);
* the prose: each path and each dotted ``module.attribute`` it names resolves the same way;
* the rule "nothing below the CLI compares a run-kind string; only cli/ and the exceptions the page
  names compare a client kind with a string": the exceptions it names are exactly the files that do.

A name that resolves nowhere fails with its line. Not looked up: spans that are not names (option
spellings, command lines, expressions such as ``run.kind != "profile"``), names of run folders and
run.json (``RUNS/...``, ``extra.memory``), the value words of ``_NOT_CODE``, and bare names in the
prose (a bare name in a table is looked up in the modules its row names).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import re
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:                      # Python < 3.11
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "edgebench"

_CODE = re.compile(r"`([^`]+)`")
_IDENT = r"[A-Za-z_]\w*"
_FILE_EXT = r"(?:py|md|c|h|def|mk|toml|yaml|cfg|txt)"
# a path the page gives with a placeholder (`edgebench/<kind>/client.py`): some file must match it
_PLACEHOLDER = re.compile(r"<\w+>")
# names of run folders and run.json, not of the tree: `RUNS/acknowledged.json`, `rounds.json`,
# `extra.memory`, `board.transport`, `samples.journal.NNNN.arrows`
_DATA = re.compile(r"^(RUNS|SESSION)/|^(extra|board)\.|\.(json|arrows|parquet)$")
# Names a table row uses as values, not as code to look up (verbs' option spellings are checked by
# tests/test_verbs.py; these are words of run.json and of the CLI).
_NOT_CODE = {"running", "incomplete", "measured", "emulated", "simulated", "estimated", "real", "timing",
             "kind", "sim", "mcu", "agent", "run", "complete", "abandoned"}
# the page's own variable names: `run.profile()` is a verb's `run: RunArgs`
_ALIASES = {"run": "edgebench.cli.runargs.RunArgs"}


# ---- reading the page --------------------------------------------------------------------------

def doc_lines() -> list:
    return DOC.read_text(encoding="utf-8").splitlines()


def tables() -> list:
    """Every table of the page: ``(line number of its header, header cells, [(line number, cells)])``."""
    out, lines, i = [], doc_lines(), 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
            header = _cells(lines[i])
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, _cells(lines[j])))
                j += 1
            out.append((i + 1, header, rows))
            i = j
        else:
            i += 1
    return out


def _cells(line: str) -> list:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def paragraphs() -> list:
    """``(first line number, text)`` of each prose paragraph (outside tables and code blocks)."""
    out, buf, start, fenced = [], [], 0, False
    for n, line in enumerate(doc_lines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("|") or not line.strip():
            if buf:
                out.append((start, " ".join(buf)))
            buf = []
            continue
        if not buf:
            start = n
        buf.append(line.strip())
    if buf:
        out.append((start, " ".join(buf)))
    return out


def layer_block() -> list:
    """The rows of the drawing under "## Layers": ``(label, [package, ...])``, top first."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    rows = []
    for line in block.splitlines():
        m = re.match(r"^\s*(level \w+|island)?\s+([a-z_]+(?:\s*│\s*[a-z_]+)*)\s+─", line)
        if m:
            rows.append((m.group(1) or "", [p.strip() for p in m.group(2).split("│")]))
    return rows


# ---- resolving a reference ------------------------------------------------------------------------

def _module(dotted: str):
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError as exc:
        if exc.name and dotted.startswith(exc.name):     # the module itself is missing, not a dependency
            return None
        raise


def _has(obj, name: str) -> bool:
    if hasattr(obj, name):
        return True
    fields = getattr(obj, "__dataclass_fields__", None) or getattr(obj, "model_fields", None) or {}
    return name in fields or name in getattr(obj, "__annotations__", {})


def _getattr_chain(obj, names: list):
    for name in names:
        if not _has(obj, name):
            return None
        obj = getattr(obj, name, obj)         # a dataclass field without a default: stay on the class
    return obj


def _modules_named(suffix: str) -> list:
    """Modules of edgebench whose dotted name ends with ``suffix`` (``connect`` -> edgebench.boards.connect)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(x for x in rel.parts if x != "__init__")
        if name == suffix or name.endswith("." + suffix):
            out.append(name)
    return out


def resolve_dotted(ref: str, context=()):
    """``a.b.c``: ``edgebench.a.b.c`` (the longest importable module prefix, then attributes), a
    module of another package (``typing.Protocol``), a module named by its last part
    (``store.write_result``, ``connect.open_client``), a name of the page (``run.show``), or an
    attribute of something in ``context`` (``Verb.farm``). None when nothing resolves."""
    parts = ref.split(".")
    if parts[0] in _ALIASES:
        parts = _ALIASES[parts[0]].split(".") + parts[1:]
    candidates = [parts] if parts[0] == "edgebench" else [["edgebench", *parts], parts]
    for head in range(1, len(parts)):
        candidates += [m.split(".") + parts[head:] for m in _modules_named(".".join(parts[:head]))]
    for cand in candidates:
        for cut in range(len(cand), 0, -1):
            mod = _module(".".join(cand[:cut]))
            if mod is not None:
                found = _getattr_chain(mod, cand[cut:])
                if found is not None:
                    return found
                break
    for c in context:
        found = _getattr_chain(c, parts)
        if found is not None:
            return found
    return None


def resolve_path(ref: str, bases=()):
    """``cli/verbs.py``, ``edgebench/farm/``, ``report/html.SECTIONS``, ``firmware/core/eb_ops.def``,
    ``cli/render.show_run`` (a package), ``edgebench/<kind>/client.py`` (some file matches): the file,
    the files, or the object; None when nothing is there. Paths are tried from the repository root,
    from edgebench/, then from ``bases`` (the folders the same row names)."""
    ref = ref.rstrip("/")
    m = re.match(rf"^([\w./<>-]+?\.{_FILE_EXT})(?:\.({_IDENT}(?:\.{_IDENT})*))?$", ref)
    path, attrs = (m.group(1), m.group(2)) if m else (ref, None)
    m2 = None if m else re.match(rf"^([\w/-]+/{_IDENT})\.({_IDENT}(?:\.{_IDENT})*)$", ref)   # report/html.SECTIONS
    for base in (ROOT, PACKAGE, *bases):
        if m2:
            package = base / m2.group(1) / "__init__.py"
            path, attrs = (f"{m2.group(1)}/__init__.py" if package.is_file() else m2.group(1) + ".py"), m2.group(2)
        if _PLACEHOLDER.search(path):
            found = sorted(base.glob(_PLACEHOLDER.sub("*", path)))
            if found:
                return found
            continue
        p = base / path
        if p.exists():
            if attrs is None:
                return p
            if p.suffix != ".py":
                return None
            return _getattr_chain(importlib.import_module(_module_name(p)), attrs.split("."))
    return None


def _module_name(path: Path) -> str:
    rel = path.resolve().relative_to(ROOT).with_suffix("")
    return ".".join(x for x in rel.parts if x != "__init__")


def code_spans(text: str) -> list:
    """The code references of a piece of the page: each backtick span, a call's arguments dropped
    (``open_client(profile, url)`` -> ``open_client``), ``A / B`` split."""
    out = []
    for span in _CODE.findall(text):
        for part in span.split(" / "):
            part = part.strip()
            part = re.sub(r"\(.*\)$", "", part) if re.match(r"^[\w./<>]+\(", part) else part
            part = re.sub(r"\[\w+\]$", "", part)           # kinds[0]
            out.append(part)
    return out


def is_pathlike(ref: str) -> bool:
    return bool(re.match(r"^[\w.<>-]*/[\w./<>-]*$", ref) or re.match(rf"^[\w<>-]+\.{_FILE_EXT}$", ref)) \
        and "//" not in ref


def is_dotted(ref: str) -> bool:
    return bool(re.match(rf"^{_IDENT}(\.{_IDENT})+$", ref)) and not re.match(rf"^[\w-]+\.{_FILE_EXT}$", ref)


def bases_of(text: str) -> list:
    """The folders a row or paragraph names, and the folders of the files it names: where a bare
    ``spec.py`` or ``summary.py`` of the same row is."""
    out = []
    for ref in code_spans(text):
        if is_pathlike(ref) and "/" in ref and not _PLACEHOLDER.search(ref) and not _DATA.search(ref):
            found = resolve_path(ref)
            if isinstance(found, Path):
                out.append(found if found.is_dir() else found.parent)
    return out


def context_of(text: str) -> list:
    """The modules and classes a row or paragraph names, which its bare names are looked up in."""
    out = []
    bases = bases_of(text)
    for ref in code_spans(text):
        if _DATA.search(ref):
            continue
        if is_pathlike(ref):
            found = resolve_path(ref, bases)
            for f in found if isinstance(found, list) else [found]:
                if isinstance(f, Path) and f.suffix == ".py":
                    out.append(importlib.import_module(_module_name(f)))
                elif isinstance(f, Path) and f.is_dir() and (f / "__init__.py").is_file():
                    out.append(importlib.import_module(_module_name(f / "__init__.py")))
                elif f is not None and not isinstance(f, Path):
                    out.append(f)
        elif is_dotted(ref):
            found = resolve_dotted(ref)
            if found is not None:
                out.append(found)
    return out


def _defines(obj, name: str) -> bool:
    """``name`` is an attribute of ``obj``, or (a module) defined anywhere in its source: a class or
    function inside a function (``VerbGroup`` in ``cli/app._build_app``)."""
    if _has(obj, name):
        return True
    source = getattr(obj, "__file__", None)
    if not source or not str(source).endswith(".py"):
        return False
    for node in ast.walk(ast.parse(Path(source).read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


@functools.lru_cache(maxsize=None)
def page_context() -> list:
    """Every module and class the page names (its prose and its tables): where a dotted
    ``Class.attribute`` is looked up."""
    pieces = [text for _, text in paragraphs()] + [" | ".join(cells) for _, _, rows in tables() for _, cells in rows]
    return [c for text in pieces for c in context_of(text)]


def unresolved(text: str, extra_context=(), bare=True, page=()) -> list:
    """The code references of ``text`` that resolve nowhere."""
    context = [*extra_context, *context_of(text)]
    bases = bases_of(text)
    bad = []
    for ref in code_spans(text):
        if not ref or re.search(r"\s", ref) or _DATA.search(ref):
            continue
        if is_pathlike(ref):
            if resolve_path(ref, bases) is None:
                bad.append(ref)
        elif is_dotted(ref):
            if resolve_dotted(ref, [*context, *page]) is None:
                bad.append(ref)
        elif bare and re.match(rf"^{_IDENT}$", ref) and ref not in _NOT_CODE:
            if not any(_defines(c, ref) for c in context):
                bad.append(ref)
    return bad


# ---- the layers -------------------------------------------------------------------------------------

def _contracts() -> list:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def test_the_layer_drawing_is_the_import_contract():
    layered = next(c for c in _contracts() if c["type"] == "layers")
    contract = [sorted(p.strip().removeprefix("edgebench.") for p in layer.split("|")) for layer in layered["layers"]]
    drawn = [sorted(pkgs) for label, pkgs in layer_block() if label != "island"]
    assert drawn == contract, "docs/architecture.md's layer drawing differs from pyproject.toml's layers"
    for pkgs in drawn:
        for pkg in pkgs:
            assert (PACKAGE / pkg).is_dir() or (PACKAGE / f"{pkg}.py").is_file(), pkg


def test_the_agent_island_and_the_hosts_three_agent_modules():
    island = [pkgs for label, pkgs in layer_block() if label == "island"]
    assert island == [["agent"]]
    forbidden = [c for c in _contracts() if c["type"] == "forbidden"]
    assert any(c["source_modules"] == ["edgebench.agent"] for c in forbidden)
    text = DOC.read_text(encoding="utf-8")
    allowed = set(re.findall(r"\bagent\.(\w+)", text.split("## Layers", 1)[1].split("```", 2)[1]))
    assert allowed == {"protocol", "quant", "channels"}
    modules = {p.stem for p in (PACKAGE / "agent").glob("*.py")} - {"__init__"}
    host = next(c for c in forbidden if "edgebench.agent.loop" in c["forbidden_modules"])
    assert {m.removeprefix("edgebench.agent.") for m in host["forbidden_modules"]} == modules - allowed, \
        "the host may import exactly the agent modules the page names"


# ---- the tables -------------------------------------------------------------------------------------

def _table(header_start: str):
    found = [t for t in tables() if t[1][0].lower().startswith(header_start)]
    assert len(found) == 1, f"one table whose first column is {header_start!r}"
    return found[0]


def test_the_page_has_the_tables_it_is_checked_by():
    assert [t[1][0] for t in tables()] == ["method", "capability", "new …", "responsibility", "what"]


def test_the_board_client_table_is_the_protocol():
    from edgebench.board_protocol import BoardClient

    _, _, rows = _table("method")
    names = {ref for _, cells in rows for ref in code_spans(cells[0])}
    assert {n for n in names if not _has(BoardClient, n)} == set()
    assert {"run", "load", "close", "ensure_model", "capabilities"} <= names


def test_the_capability_table_is_board_protocol_all():
    from edgebench.board_protocol import ALL

    _, _, rows = _table("capability")
    listed = [code_spans(cells[0])[0] for _, cells in rows]
    assert len(listed) == len(set(listed)) and set(listed) == set(ALL), \
        f"the capability table lists {sorted(listed)}; board_protocol.ALL is {sorted(ALL)}"


@pytest.mark.parametrize("header", ["method", "new …", "responsibility", "what"])
def test_every_reference_in_a_table_resolves(header):
    """Files and folders exist; modules import; attributes are there; a bare name is an attribute of
    (or defined in) a module the row names, of BoardClient for the method table (its first column:
    the second names the keys the methods return) or of Verb for the verb table."""
    from edgebench.board_protocol import BoardClient
    from edgebench.cli.verbs import Verb

    extra = {"method": (BoardClient,), "what": (Verb,)}.get(header, ())
    _, _, rows = _table(header)
    page = page_context()
    bad = [(line, ref) for line, cells in rows
           for ref in unresolved(cells[0] if header == "method" else " | ".join(cells), extra, page=page)]
    assert bad == [], f"docs/architecture.md names what the tree does not have (line, reference): {bad}"


def test_every_path_and_dotted_reference_in_the_prose_resolves():
    page = page_context()
    bad = [(line, ref) for line, text in paragraphs() for ref in unresolved(text, bare=False, page=page)]
    assert bad == [], f"docs/architecture.md names what the tree does not have (line, reference): {bad}"


# ---- the rules the page states about kind strings -----------------------------------------------------

def _string_comparisons(attr_names: set, values: set) -> dict:
    """file (relative to edgebench/, outside cli/) -> lines comparing ``x.ATTR`` / ``x["ATTR"]`` with
    one of ``values`` as a string literal."""
    out: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("cli/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            named = any((isinstance(s, ast.Attribute) and s.attr in attr_names)
                        or (isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Constant)
                            and s.slice.value in attr_names) for s in sides)
            literal = any(isinstance(s, ast.Constant) and s.value in values for s in sides) or any(
                isinstance(s, (ast.Tuple, ast.List, ast.Set)) and any(
                    isinstance(e, ast.Constant) and e.value in values for e in s.elts) for s in sides)
            if named and literal:
                out.setdefault(rel, []).append(node.lineno)
    return out


def _named_exceptions(marker: str) -> set:
    """The files the page names as exceptions to the rule ``marker`` states: the ``path.py`` references
    after ``marker`` in its paragraph (relative to edgebench/)."""
    text = next(t for _, t in paragraphs() if marker in t).split(marker, 1)[1]
    return {r.removeprefix("edgebench/") for r in code_spans(text)
            if r.endswith(".py") and not r.startswith(("tests/", "scripts/", "benchmarks/"))}


@pytest.mark.slow
def test_run_kind_strings_are_compared_only_where_the_page_says():
    from edgebench.results.kinds import NAMES

    found = set(_string_comparisons({"kind"}, set(NAMES)))
    named = _named_exceptions("Nothing below the CLI compares a kind string")
    assert found == named, (f"files below the CLI comparing a run kind with a string: {sorted(found)}; "
                            f"docs/architecture.md names {sorted(named)}")


@pytest.mark.slow
def test_client_kind_strings_are_compared_only_where_the_page_says():
    from edgebench.boards.profile import AGENT_CLIENT, MCU_CLIENT, SIM_CLIENT

    found = set(_string_comparisons({"client_kind"}, {AGENT_CLIENT, MCU_CLIENT, SIM_CLIENT}))
    named = _named_exceptions("Nothing else decides from a `client_kind` string")
    assert found == named, (f"files comparing client_kind with a string: {sorted(found)}; "
                            f"docs/architecture.md names {sorted(named)}")


def test_the_resolver_fails_on_what_is_not_there():
    @dataclasses.dataclass
    class Box:
        size: int

    assert _has(Box, "size") and not _has(Box, "colour")
    assert resolve_dotted("cli.verbs.Verb.shared") is not None
    assert resolve_dotted("cli.verbs.Verb.no_such_field") is None
    assert resolve_dotted("connect.open_client") is not None and resolve_dotted("connect.no_such") is None
    assert resolve_path("cli/verbs.py") == PACKAGE / "cli" / "verbs.py"
    assert resolve_path("report/no_such_module.SECTIONS") is None
    assert resolve_path("edgebench/<kind>/client.py")                   # some board kind has one
    assert resolve_path("edgebench/<kind>/no_such_client.py") is None
    assert unresolved("`cli/app.py` (`root_help`, `VerbGroup`)") == []
    assert unresolved("`cli/app.py` (`no_such_help`)") == ["no_such_help"]
    assert unresolved("`edgebench/farm/` (`lease.py`, `no_such.py`)") == ["no_such.py"]
