"""What every section of run.json is made of (level 0): the scalar types and :class:`Figure`.

A run.json section is a :class:`Figure`: a pydantic model whose declared keys are typed
attributes (each with its unit and meaning in the declaration, :func:`field`), and whose
unknown keys (a later version's, a verb's own) are kept as they are. Readers use attributes,
never ``.get(...) or {}``: a sub-section that a run lacks is an *empty* instance of its type
(falsy; every key ``None``), so ``run.extra.accuracy.validation.failed`` reads ``None`` on a
bench run instead of raising, and ``if run.extra.accuracy:`` asks whether the run has one.

Writing keeps the file's shape: :meth:`Figure.to_dict` (and pydantic's own serialization)
writes the keys that were set (read from the file, given to the constructor or assigned) and
the sub-sections that hold something, so a run read and written again is the same document,
and an absent section stays absent. Assigning to an attribute validates the value against its
declared type (a dict becomes the sub-section's type; a numpy scalar a Python number).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, field_validator, model_serializer
from pydantic.json_schema import JsonDict

from edgebench.schema import MAX_TEXT, Bool, Float, Int, Str

Num = Optional[Float]          # a figure: a number, or null where it could not be computed
Count = Optional[Int]
Text = Optional[Str]
Flag = Optional[Bool]
Pair = Optional[List[Num]]     # an interval [low, high]
Mapping_ = Dict[str, Any]

# the unit a key's name ends in (the house naming rule: docs/results-schema.md, "Units")
SUFFIX_UNITS = (("_per_s", "1/s"), ("_s", "s"), ("_j", "J"), ("_w", "W"), ("_hz", "Hz"), ("_c", "°C"),
                ("_bytes", "bytes"), ("_points", "percentage points"), ("_pct", "%"), ("_ns", "ns"))


def unit_of(name: str) -> Optional[str]:
    """The unit a key's name says by its suffix (``median_s``: s; ``per_s`` alone too: 1/s), or None."""
    name = "_per_s" if name == "per_s" else name
    return next((unit for suffix, unit in SUFFIX_UNITS if name.endswith(suffix)), None)


def field(description: str, unit: Optional[str] = None, default: Any = None) -> Any:
    """A declared key: its meaning and unit (``x-unit`` in the JSON Schema, a column of the docs' table)."""
    extra: Optional[JsonDict] = {"x-unit": unit} if unit else None
    return Field(default, description=description, json_schema_extra=extra)


def sub(kind: type, description: str = "") -> Any:
    """A sub-section: absent reads as an empty ``kind`` (falsy), never None."""
    return Field(default_factory=kind, description=description or (kind.__doc__ or "").strip().split("\n")[0])


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as Python numbers and lists (figures are computed with
    numpy; a section holds what JSON can)."""
    if type(value).__module__ == "numpy":
        return value.tolist() if hasattr(value, "tolist") else value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _schema(schema: Dict[str, Any]) -> None:
    """The JSON Schema of a section as its files are read: a key whose name ends in a unit's suffix
    (``_s``, ``_j``, ...) and declares no unit gets that unit (``x-unit``), so every figure's table
    in the docs has its unit; a sub-section (a ``$ref``) may be null, which reads as absent."""
    for name, node in (schema.get("properties") or {}).items():
        unit = unit_of(name)
        if unit and "x-unit" not in node:
            node["x-unit"] = unit
        if "$ref" in node:
            node["anyOf"] = [{"$ref": node.pop("$ref")}, {"type": "null"}]


class Figure(BaseModel):
    """A section of run.json: declared keys typed, others kept; see the module docstring."""

    model_config = ConfigDict(extra="allow", str_max_length=MAX_TEXT, defer_build=True, validate_assignment=True,
                              populate_by_name=True, json_schema_extra=_schema)

    @field_validator("*", mode="before")
    @classmethod
    def _plain(cls, value: Any, info: Any) -> Any:
        value = plain(value)
        if value is None:
            factory = cls.model_fields[info.field_name].default_factory
            if factory is not None:     # a sub-section written as null: absent
                return factory()        # type: ignore[call-arg]
        return value

    @model_serializer(mode="wrap")
    def _written(self, handler: Any, info: SerializationInfo) -> Dict[str, Any]:
        out = handler(self)
        keep = self.model_fields_set | set(self.__pydantic_extra__ or ())
        return {k: v for k, v in out.items()
                if k in keep or (isinstance(getattr(self, k, None), Figure) and getattr(self, k))}

    def __bool__(self) -> bool:
        """Whether the section holds anything (a key set, or a sub-section that does)."""
        if self.model_fields_set or self.__pydantic_extra__:
            return True
        return any(isinstance(v, Figure) and v for v in self.__dict__.values())

    def to_dict(self) -> Dict[str, Any]:
        """The section as run.json holds it (see the module docstring)."""
        return self.model_dump(mode="python")

    def other(self, key: str, default: Any = None) -> Any:
        """A key this version does not declare (a later version's, a verb's own), as stored."""
        return (self.__pydantic_extra__ or {}).get(key, default)


__all__ = ["Num", "Count", "Text", "Flag", "Pair", "Mapping_", "Figure", "field", "sub", "plain", "unit_of",
           "Int", "Float", "Str", "Bool"]
