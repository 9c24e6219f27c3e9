"""A validator for the JSON Schema subset ``docs/report.schema.json`` uses (no new dependency).

Keywords: ``type`` (a name or a list of names), ``const``, ``enum``,
``properties``, ``required``, ``additionalProperties`` (false, or a schema),
``items``, ``oneOf``, ``minimum``, ``$ref`` to ``#/$defs/NAME``; annotations
(``description``, ``title``, ``$id``, ``$schema``) are ignored.  Any other
keyword is refused, so the schema cannot grow a rule this validator would
silently skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "report.schema.json"

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
}
_KNOWN = {"type", "const", "enum", "properties", "required", "additionalProperties", "items", "oneOf", "minimum",
          "$ref", "description", "title", "$id", "$schema", "$defs"}


def load_schema() -> dict[str, Any]:
    """The published report schema."""
    return json.loads(SCHEMA_PATH.read_text())


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name]) and not (name != "boolean" and isinstance(value, bool))


def errors(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, where: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty: valid), each naming where."""
    root = schema if root is None else root
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"{where}: schema keyword(s) this validator does not know: {sorted(unknown)}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, where)
    found: list[str] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            return [f"{where}: {value!r} is not of type {names}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        found.append(f"{where}: {value!r} is below {schema['minimum']}")
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not errors(value, s, root, where)]
        if len(matching) != 1:
            found.append(f"{where}: matches {len(matching)} of the oneOf schemas, not exactly one")
    if isinstance(value, dict):
        found += _object_errors(value, schema, root, where)
    if isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            found += errors(item, schema["items"], root, f"{where}[{n}]")
    return found


def _object_errors(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    found = [f"{where}: {key!r} is required" for key in schema.get("required", ()) if key not in value]
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            found += errors(item, properties[key], root, f"{where}.{key}")
        elif extra is False:
            found.append(f"{where}: {key!r} is not allowed")
        elif isinstance(extra, dict):
            found += errors(item, extra, root, f"{where}.{key}")
    return found


__all__ = ["SCHEMA_PATH", "errors", "load_schema"]
