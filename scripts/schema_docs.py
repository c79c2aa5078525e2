"""Write the key tables of docs/boards.md, docs/results-schema.md and docs/warnings.md from the schemas themselves.

    .venv/bin/python scripts/schema_docs.py            # rewrite the tables
    .venv/bin/python scripts/schema_docs.py --check    # exit 1 if a table is stale

Each table sits between ``<!-- schema: NAME -->`` and ``<!-- /schema -->`` in its page; NAME is a
document of ``edgebench schema`` (:data:`edgebench.cli.schema_cmd.DOCUMENTS`) and a key path
in it (``board.transport``; ``*`` is every value of a map, and a list's path names its items'
keys: ``run.extra.points``). The rows come from the model's JSON Schema: the key, whether it is
required, what it takes (the phrase the error messages use), its default and its description.
tests/test_run_schema.py fails when a table differs from what this writes.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from edgebench.cli.schema_cmd import document_schema
from edgebench.schema import expected, resolve, union_tags

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "docs" / "boards.md", ROOT / "docs" / "results-schema.md", ROOT / "docs" / "warnings.md")
_BLOCK = re.compile(r"(<!-- schema: (?P<name>[a-z_.*]+) -->\n)(?P<body>.*?)(<!-- /schema -->)", re.S)


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(node: dict, required: bool) -> str:
    if required:
        return "required"
    if "default" not in node:
        return "–"
    value = node["default"]
    if value is None:
        return "null"
    if value in ([], {}, ""):
        return "empty"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and len(value) > 3:
        return f"{len(value)} values"
    return f"`{value}`"


def _object(schema: dict, path: list) -> dict:
    """The object node at ``path`` (keys of properties) in ``schema``, through Optional and $ref."""
    defs = schema.get("$defs", {})
    node = schema
    for key in path:
        node = _resolved(node, defs)
        # `*`: the values of a map (`run.latency.*`: every stage's figure)
        node = _resolved(node.get("additionalProperties") if key == "*" else (node.get("properties") or {})[key], defs)
        # a list of objects (`run.extra.points`): the table is of one item's keys
        members = [_item(_resolved(m, defs), defs) for m in node.get("anyOf") or (node,)]
        objects = [m for m in members if m and "properties" in m]
        if objects:
            node = objects[0]
    return _resolved(node, defs)


def _resolved(node, defs: dict) -> dict:
    """``node`` through its ``$ref`` (an empty node for none)."""
    return resolve(node, defs) or {}


def _item(node: dict, defs: dict) -> dict:
    """``node``, or the items of ``node`` when it is an array (a list's keys are its items')."""
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        return _resolved(node["items"], defs)
    return node


def table(name: str) -> str:
    """The Markdown table of ``name``: a document and a key path in it (``board.datasheet``)."""
    doc, *path = name.split(".")
    schema = document_schema(doc)
    defs = schema.get("$defs", {})
    node = _object(schema, path)
    if "oneOf" in node:   # a tagged union: one row per kind (its keys and what each kind is)
        key = node["discriminator"]["propertyName"]
        rows = [f"| `{key}` | keys | meaning |", "|---|---|---|"]
        for tag, member in zip(union_tags(node, defs), node["oneOf"]):
            m = _resolved(member, defs)
            keys = []
            for k, sub in (m.get("properties") or {}).items():
                if k == key:
                    continue
                req = k in (m.get("required") or ())
                keys.append(f"`{k}` ({'required' if req else 'default ' + _default(sub, False).strip('`')}): "
                            f"{expected(sub, defs)}")
            rows.append(f"| `{tag}` | {_cell('; '.join(keys) or 'none')} | {_cell(m.get('description', ''))} |")
        return "\n".join(rows) + "\n"
    required = set(node.get("required") or ())
    props = node.get("properties") or {}
    units = any("x-unit" in _resolved(p, defs) or "x-unit" in p for p in props.values())
    head = ["key", "unit" if units else "type", "default", "meaning"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, sub in props.items():
        sub_r = _resolved(sub, defs)
        what = sub.get("x-unit") or sub_r.get("x-unit") if units else expected(sub, defs)
        meaning = sub.get("description") or sub_r.get("description") or ""
        if units and expected(sub, defs):
            meaning = f"{meaning} ({expected(sub, defs)})" if meaning else expected(sub, defs)
        rows.append(f"| `{key}` | {_cell(what or '')} | {_cell(_default(sub, key in required))} | {_cell(meaning)} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + table(m.group("name")) + m.group(4), text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a table is stale, write nothing")
    args = ap.parse_args()
    stale = []
    for page in PAGES:
        text = page.read_text()
        new = render(text)
        if new != text:
            stale.append(page)
            if not args.check:
                page.write_text(new)
    if args.check and stale:
        print(f"stale: {', '.join(str(p.relative_to(ROOT)) for p in stale)} (run scripts/schema_docs.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
