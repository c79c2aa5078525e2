"""The files edgebench reads and writes, described once as pydantic models (level 0).

Board profiles (:mod:`edgebench.boards.profile`), ``run.json`` (:mod:`edgebench.results.model`),
``farm.json`` (:mod:`edgebench.farm.fanout`) and the quantize sidecars
(:mod:`edgebench.quantize.sidecar`) are each declared as pydantic dataclasses and TypedDicts.
From that one description come their validation and defaults, the JSON Schema that
``edgebench schema`` prints, and the key tables of docs/boards.md and docs/results-schema.md
(``scripts/schema_docs.py``). This module holds what they share:

* the scalar types: strict, so YAML's ``"4"`` is not the integer 4 nor ``true`` a number
  (:data:`Int`, :data:`Num` finite, :data:`Float` any, :data:`Str`, :data:`Bool`);
* :func:`validate`: a mapping to a model, or the document's typed error with one line naming
  the file, the key path and what was expected, e.g.
  ``boards/pi.yaml: transport.type: expected one of local, ssh, serial, sim, got 'sshh'``;
* :func:`expected`: the phrase for what a key takes ("an integer >= 1"), read from the JSON
  Schema, so the messages and the docs tables say the same thing;
* :class:`FieldProblem`: what a model's own validator raises to name a key.

Importing this module imports pydantic (about 0.1-0.3 s): the CLI imports it only in the verbs
that read such a file, never on the ``edgebench --help`` path.
"""
from __future__ import annotations

import difflib
import functools
import re
from typing import Any, Mapping, Optional

from pydantic import AllowInfNan, ConfigDict, Strict, TypeAdapter, ValidationError
from typing_extensions import Annotated

from edgebench.errors import EdgebenchError

Int = Annotated[int, Strict()]
Num = Annotated[float, Strict(), AllowInfNan(False)]   # a finite number (an integer is one too)
Float = Annotated[float, Strict()]                     # any float, NaN included (json.dumps writes NaN)
Str = Annotated[str, Strict()]
Bool = Annotated[bool, Strict()]

MAX_TEXT = 20_000   # characters of a text in a file edgebench writes (a run's claim is about 1,000)

# A document's own sections: unknown keys refused (a typo is an error, with the closest key).
CLOSED = ConfigDict(extra="forbid", defer_build=True)
# Sections a later version or another verb may extend: unknown keys kept as they are; texts bounded.
OPEN = ConfigDict(extra="allow", str_max_length=MAX_TEXT, defer_build=True)


def expects(text: str) -> dict:
    """``json_schema_extra`` saying what a key takes in words (x-expected), where its JSON Schema cannot
    (a pattern): the error messages and the docs tables use it."""
    return {"x-expected": text}


class FieldProblem(ValueError):
    """Raised by a model's validator: ``key`` (relative to the model; "" for the model itself) and
    what is wrong with it, e.g. ``FieldProblem("transport.type", "expected serial for kind mcu")``."""

    def __init__(self, key: str, what: str):
        super().__init__(what)
        self.key = key
        self.what = what


@functools.lru_cache(maxsize=None)
def adapter(model) -> TypeAdapter:
    """The (cached) pydantic TypeAdapter of a model class."""
    return TypeAdapter(model)


@functools.lru_cache(maxsize=None)
def json_schema(model) -> dict:
    """The JSON Schema (draft 2020-12) of a model class, as ``edgebench schema`` prints it."""
    return adapter(model).json_schema()


def validate(model, data: Any, where: str, error: type = EdgebenchError, hint: Optional[str] = None,
             key: str = ""):
    """``data`` (a mapping as read from YAML or JSON) as an instance of ``model``; else ``error`` with
    one line: ``WHERE: KEY: what was expected, got what`` (the first problem in the file's order,
    and how many more there are). ``key``: where ``data`` sits in its file (``transport``)."""
    try:
        return adapter(model).validate_python(data)
    except ValidationError as exc:
        raise error(problem(model, exc, where, data, key), hint) from None


def problem(model, exc: ValidationError, where: str, data: Any = None, key: str = "") -> str:
    """One line for a ValidationError of ``model`` (``key``: the path of the model in its file)."""
    errors = exc.errors(include_url=False)
    if isinstance(data, Mapping):   # the first problem in the file is the one a reader finds first
        order = {k: i for i, k in enumerate(data)}
        errors.sort(key=lambda e: order.get(e["loc"][0], len(order)) if e["loc"] else -1)
    schema = json_schema(model)
    described = list(dict.fromkeys(describe(schema, dict(e)) for e in errors))   # a union's members say one thing
    path, what = described[0]
    path = join_key(key, path)
    text = f"{where}: {path}: {what}" if path else f"{where}: {what}"
    more = len({p for p, _ in described}) - 1
    return text + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def describe(schema: dict, err: dict) -> tuple:
    """``(key path, what is wrong)`` for one pydantic error, the expectation read from ``schema``."""
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    path, node, parent, via = walk(schema, err["loc"])
    defs = schema.get("$defs", {})
    if kind == "value_error" and isinstance(ctx.get("error"), FieldProblem):
        sub = ctx["error"]
        return join_key(path, sub.key), sub.what
    if kind in ("missing", "missing_keyword_argument", "missing_argument"):
        return path, "missing required key"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        allowed = list((resolve(parent, defs) or {}).get("properties") or ())
        last = str(err["loc"][-1]) if err["loc"] else ""
        if via:   # a key of another kind of the same section (a url on a local transport)
            owner = path.rsplit(".", 1)[0] if "." in path else ""
            return path, f"not allowed for {owner + ' ' if owner else ''}{via} (expected only: {', '.join(allowed)})"
        close = close_matches(last, allowed)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return path, f"unknown key{hint}" + (f"; expected one of {', '.join(allowed)}" if allowed else "")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = str(ctx.get("discriminator", "type")).strip("'")
        tags = union_tags(node, defs)
        key = join_key(path, tag)
        if kind == "union_tag_not_found" or value is None:
            return key, "missing required key" + (f" (one of {', '.join(tags)})" if tags else "")
        return key, f"expected one of {', '.join(tags)}, got {got(ctx.get('tag'))}"
    if kind in ("value_error", "assertion_error"):
        return path, str(ctx.get("error") or err["msg"])
    if kind == "string_too_long":
        return path, f"expected at most {ctx.get('max_length')} characters, got {len(value):,}" \
            if isinstance(value, str) else f"expected at most {ctx.get('max_length')} characters"
    phrase = expected(node, defs) if node is not None else None
    if phrase is None:
        return path, f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {got(value)}"
    extra = ""
    if "number" in phrase and isinstance(value, str) and re.match(r"^[0-9.]+[eE][0-9]+$", value.strip()):
        extra = " (YAML reads 2.4e9 as text: write 2.4e+9 or 2400000000)"
    return path, f"expected {phrase}, got {got(value)}{extra}"


def join_key(base: str, key: str) -> str:
    """``base`` and a key below it: ``transport`` + ``url`` = ``transport.url``; ``[0]`` appends."""
    if not key:
        return base
    if not base or key.startswith("["):
        return base + key
    return f"{base}.{key}"


def resolve(node: Optional[dict], defs: dict) -> Optional[dict]:
    """``node`` with its ``$ref`` followed."""
    while isinstance(node, dict) and "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1])
    return node


def _members(node: dict) -> list:
    return list(node.get("anyOf") or node.get("oneOf") or ())


# how pydantic names the member of a plain union an error came from ('bool', 'list[int]', 'function-after[...]')
_UNION_TAG = re.compile(r"^([a-z]+(-[a-z]+)*|[a-z-]+\[.*\])$")


def union_tags(node: Optional[dict], defs: dict) -> list:
    """The tags of a discriminated union, in the order it declares its members."""
    key = ((node or {}).get("discriminator") or {}).get("propertyName")
    tags = []
    for member in _members(node or {}):
        const = ((resolve(member, defs) or {}).get("properties") or {}).get(key, {}).get("const")
        if const is not None:
            tags.append(str(const))
    return tags


def walk(schema: dict, loc) -> tuple:
    """Follow a pydantic error location through a JSON Schema: ``(key path as the docs write it,
    the node of that key, the object node holding it, the last union member passed through as
    "type local")``. Union members named in ``loc`` (a discriminated union's tag, ``Optional``'s
    member) are followed but not shown in the path."""
    defs = schema.get("$defs", {})
    node: Optional[dict] = schema
    parent: Optional[dict] = None
    path, via = "", ""
    for i, item in enumerate(loc):
        node = resolve(node, defs)
        if node is not None and _members(node):
            disc = node.get("discriminator") or {}
            mapping = disc.get("mapping") or {}
            if isinstance(item, str) and item in mapping:       # a tagged union's member: not a key
                node = resolve({"$ref": mapping[item]}, defs)
                via = f"{disc.get('propertyName', 'type')} {item}"
                continue
            want = "array" if isinstance(item, int) else "object"
            picks = [m for m in (resolve(m, defs) for m in _members(node))
                     if m and (m.get("type") == want or (want == "object" and "properties" in m))]
            if isinstance(item, str) and _UNION_TAG.match(item) and (i < len(loc) - 1 or not picks) and not any(
                    item in (m.get("properties") or {}) or isinstance(m.get("additionalProperties"), dict)
                    for m in picks):
                continue   # a plain union's member ('bool', 'str', ...): the union is the key's node
            node = picks[0] if picks else None
            if node is None:
                path = join_key(path, f"[{item}]" if isinstance(item, int) else str(item))
                continue
        if isinstance(item, int):
            path = join_key(path, f"[{item}]")
            parent, node = None, _item(node, item, defs)
        else:
            path = join_key(path, str(item))
            parent = node
            props = (node or {}).get("properties") or {}
            if item in props:
                node = props[item]
            else:
                extra = (node or {}).get("additionalProperties")
                node = extra if isinstance(extra, dict) else None
            if i != len(loc) - 1:
                via = ""
    return path, resolve(node, defs), parent, via


def _item(node: Optional[dict], index: int, defs: dict) -> Optional[dict]:
    if node is None:
        return None
    prefix = node.get("prefixItems")
    if prefix and index < len(prefix):
        return prefix[index]
    items = node.get("items")
    return items if isinstance(items, dict) else None


# ---------------------------------------------------------------- what a key expects, in words

def expected(node: Optional[dict], defs: Optional[dict] = None) -> Optional[str]:
    """What a JSON Schema node accepts, as the error messages and the docs tables say it:
    ``one of linux, mcu``, ``an integer >= 1``, ``a positive number``, ``a list of ...``."""
    defs = defs or {}
    node = resolve(node, defs)
    if not node:
        return None
    if "x-expected" in node:
        return node["x-expected"]
    if "const" in node:
        return _text(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(_text(v) for v in node["enum"])
    members = _members(node)
    if members:
        phrases = []
        for m in members:
            m = resolve(m, defs)
            if m is not None and m != {"type": "null"}:
                phrases.append(expected(m, defs) or "a value")
        if (node.get("discriminator") or {}).get("propertyName"):
            key = node["discriminator"]["propertyName"]
            text = f"a mapping whose {key} is one of " + ", ".join(union_tags(node, defs))
        else:
            text = " or ".join(dict.fromkeys(phrases))
        return text   # null (where allowed) is the default: the docs tables say so
    kind = node.get("type")
    if kind == "integer":
        lo, hi = node.get("minimum"), node.get("maximum")
        if lo is not None and hi is not None:
            return f"an integer in {lo}..{hi}"
        if lo is not None:
            return f"an integer >= {lo}"
        return "an integer"
    if kind == "number":
        if node.get("exclusiveMinimum") == 0:
            return "a positive number"
        if node.get("minimum") is not None:
            return f"a number >= {_text(node['minimum'])}"
        return "a number"
    if kind == "string":
        if node.get("minLength"):
            return "a non-empty string"
        return "a string"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        size = "a non-empty list" if node.get("minItems") else "a list"
        return f"{size} of {_plural(expected(node.get('items'), defs))}" + (
            " (each once)" if node.get("uniqueItems") else "")
    if kind == "object" or "properties" in node:
        return "a mapping of keys"
    return None


def _plural(phrase: Optional[str]) -> str:
    """``an integer`` -> ``integers``, ``one of a, b`` -> ``a, b``: a list's items in words."""
    if not phrase:
        return "values"
    if phrase.startswith("one of "):
        return phrase[len("one of "):]
    words = phrase.split(" ")
    if words[0] in ("a", "an") and len(words) > 1:
        words = words[1:]
        i = next((k for k, w in enumerate(words) if w in ("of", "or", "in", ">=", "without", "whose")), len(words))
        words[i - 1] += "s"
    return " ".join(words)


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def got(value: Any) -> str:
    """A short rendering of an offending value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean (%s)" % ("true" if value else "false")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "...'"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return "a " + type(value).__name__


def close_matches(word: str, possibilities, n: int = 1, cutoff: float = 0.6) -> list:
    """The ``n`` names of ``possibilities`` closest to ``word`` (difflib), for "did you mean" hints."""
    return difflib.get_close_matches(word, list(possibilities), n=n, cutoff=cutoff)


__all__ = ["Bool", "CLOSED", "FieldProblem", "Float", "Int", "MAX_TEXT", "Num", "OPEN", "Str", "adapter", "close_matches",
           "describe", "expected", "expects", "got", "json_schema", "join_key", "problem", "resolve", "union_tags", "validate",
           "walk"]
