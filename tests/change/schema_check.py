"""A validator and an answer builder for the JSON-Schema subset of the forges' API descriptions.

No new dependency: the descriptions (OpenAPI 3.0 and Swagger 2.0) use ``$ref``, ``type``
(one or a list), ``nullable``/``x-nullable``, ``enum``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``allOf``/``anyOf``/``oneOf``, the ``min``/``max``
bounds, ``pattern`` and ``format`` (of which only the integer widths are checked); the rest
(``discriminator``, ``readOnly``, descriptions) does not constrain a value.
:func:`errors` lists every violation; :func:`build` makes the smallest valid value of a
schema, with given values placed where the schema has them (the fake forges' answers).
"""

from __future__ import annotations

import re
from typing import Any

_INT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_MAX_DEPTH = 40


class Description:
    """One API description and ``$ref`` resolution inside it."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def resolve(self, schema: Any) -> Any:
        """``schema`` with ``$ref``s followed (a chain of them)."""
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema:
            node: Any = self.doc
            for part in schema["$ref"][2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            schema = node
            seen += 1
            if seen > 50:
                raise ValueError(f"$ref loop at {schema}")
        return schema

    # --- validation ---------------------------------------------------------------------

    def errors(self, value: Any, schema: Any, where: str = "$", depth: int = 0) -> list[str]:
        """Every way ``value`` breaks ``schema`` (empty when valid)."""
        schema = self.resolve(schema)
        if not isinstance(schema, dict) or depth > _MAX_DEPTH:
            return []
        if value is None and (schema.get("nullable") or schema.get("x-nullable")):
            return []
        found: list[str] = []
        for part in schema.get("allOf", []):
            found += self.errors(value, part, where, depth + 1)
        if "anyOf" in schema and not any(not self.errors(value, s, where, depth + 1) for s in schema["anyOf"]):
            found.append(f"{where}: matches none of anyOf")
        if "oneOf" in schema:
            matching = sum(1 for s in schema["oneOf"] if not self.errors(value, s, where, depth + 1))
            if matching != 1:
                found.append(f"{where}: matches {matching} of oneOf (exactly one needed)")
        types = schema.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if types and not any(_is_type(value, t) for t in types):
            return found + [f"{where}: {type(value).__name__} {_short(value)} is not {'/'.join(types)}"]
        if "enum" in schema and value not in schema["enum"]:
            found.append(f"{where}: {_short(value)} is not one of {schema['enum']}")
        if isinstance(value, bool):
            return found
        if isinstance(value, (int, float)):
            found += _number_errors(value, schema, where)
        elif isinstance(value, str):
            found += _string_errors(value, schema, where)
        elif isinstance(value, list):
            found += self._array_errors(value, schema, where, depth)
        elif isinstance(value, dict):
            found += self._object_errors(value, schema, where, depth)
        return found

    def _array_errors(self, value: list[Any], schema: dict[str, Any], where: str, depth: int) -> list[str]:
        found = []
        if len(value) < schema.get("minItems", 0):
            found.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{where}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems") and len({repr(v) for v in value}) != len(value):
            found.append(f"{where}: items are not unique")
        if "items" in schema:
            for i, item in enumerate(value):
                found += self.errors(item, schema["items"], f"{where}[{i}]", depth + 1)
        return found

    def _object_errors(self, value: dict[str, Any], schema: dict[str, Any], where: str, depth: int) -> list[str]:
        found = [f"{where}: missing required {key!r}" for key in schema.get("required", []) if key not in value]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                found += self.errors(item, properties[key], f"{where}.{key}", depth + 1)
            elif extra is False:
                found.append(f"{where}: property {key!r} is not allowed")
            elif isinstance(extra, dict):
                found += self.errors(item, extra, f"{where}.{key}", depth + 1)
        return found

    def property_names(self, schema: Any) -> set[str] | None:
        """The properties an object schema declares (through ``allOf``); None when it declares none."""
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return None
        names = set(schema.get("properties", {}))
        for part in schema.get("allOf", []):
            names |= self.property_names(part) or set()
        return names or None

    # --- answers -----------------------------------------------------------------------

    def build(self, schema: Any, given: Any = None, depth: int = 0) -> Any:
        """The smallest valid value of ``schema``, with ``given``'s values where the schema has them.

        Required properties are filled (strings empty, numbers at their minimum, ``date-time``
        and ``uri`` formats with a valid sample); ``given`` (a value, or for an object a dict
        of property -> value) wins where it is given, recursively.
        """
        schema = self.resolve(schema)
        if depth > _MAX_DEPTH:
            raise ValueError("schema too deep to build")
        if not isinstance(schema, dict):
            return given
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                part_value = self.build(part, given, depth + 1)
                if isinstance(part_value, dict):
                    merged.update(part_value)
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            if rest.get("properties") or rest.get("required"):
                merged.update(self.build({**rest, "type": "object"}, given, depth + 1))
            return merged
        for key in ("oneOf", "anyOf"):
            if schema.get(key):
                options = schema[key]
                fitting = [o for o in options if given is None or not self.errors(given, o)]
                return self.build((fitting or options)[0], given, depth + 1)
        types = schema.get("type")
        kind = types if isinstance(types, str) else next((t for t in types or [] if t != "null"), None)
        if kind is None:
            kind = "object" if "properties" in schema else None
        if given is not None and kind != "object":
            if kind == "array" and isinstance(given, list) and "items" in schema:
                return [self.build(schema["items"], item, depth + 1) for item in given]
            return given
        if kind == "object" or isinstance(given, dict):
            out: dict[str, Any] = {}
            properties = schema.get("properties", {})
            wanted = dict(given or {})
            for key in schema.get("required", []):
                out[key] = self.build(properties.get(key, {}), wanted.pop(key, None), depth + 1)
            for key, item in wanted.items():
                out[key] = self.build(properties[key], item, depth + 1) if key in properties else item
            return out
        if "enum" in schema:
            return schema["enum"][0]
        if kind == "string":
            return {"date-time": "2024-06-01T12:00:00Z", "uri": "https://forge.example/x",
                    "email": "user@forge.example"}.get(schema.get("format", ""), "x" * schema.get("minLength", 0))
        if kind in ("integer", "number"):
            return schema.get("minimum", 0)
        if kind == "boolean":
            return False
        if kind == "array":
            return [self.build(schema.get("items", {}), None, depth + 1) for _ in range(schema.get("minItems", 0))]
        if schema.get("nullable") or schema.get("x-nullable") or "null" in (types or []):
            return None
        return None


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return {"string": str, "boolean": bool, "array": list, "object": dict}.get(kind, type(None)) is type(value) \
        if kind != "null" else value is None


def _number_errors(value: float, schema: dict[str, Any], where: str) -> list[str]:
    found = []
    if "minimum" in schema and value < schema["minimum"]:
        found.append(f"{where}: {value} < minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        found.append(f"{where}: {value} > maximum {schema['maximum']}")
    bounds = _INT_BOUNDS.get(schema.get("format", ""))
    if bounds and isinstance(value, int) and not bounds[0] <= value <= bounds[1]:
        found.append(f"{where}: {value} outside {schema['format']}")
    return found


def _string_errors(value: str, schema: dict[str, Any], where: str) -> list[str]:
    found = []
    if len(value) < schema.get("minLength", 0):
        found.append(f"{where}: shorter than {schema['minLength']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{where}: longer than {schema['maxLength']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{where}: {_short(value)} does not match {schema['pattern']}")
    return found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."
