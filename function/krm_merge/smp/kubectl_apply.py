"""Offline client-side ``kubectl apply``: last-applied annotation, 3-way patch, apply.

What kubectl (``k8s.io/kubectl/pkg/util/apply.go`` and ``cmd/apply/patcher.go``)
does, without a server:

1. *original* = the live object's ``kubectl.kubernetes.io/last-applied-configuration``
   annotation (JSON), or nothing when it is absent or empty;
2. *modified* = the desired object with that annotation set to the desired
   object serialised without it (``GetModifiedConfiguration(obj, true, ...)``):
   JSON with sorted keys, Go escaping, a trailing newline, and
   ``metadata.annotations`` present (``{}`` when the object has no other
   annotation, because kubectl sets an empty non-nil map);
3. *current* = the live object;
4. patch = ``CreateThreeWayMergePatch(original, modified, current, overwrite)``
   (``kubectl apply`` overwrites by default), applied to the live object.

The annotation is updated by the patch itself, exactly as on a server.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from ..schema.base import SchemaNode
from .apply import apply_patch
from .create import create_three_way_patch
from .errors import SmpError
from .values import BOOL, FLOAT, INT, LIST, MAP, NULL, STRING, deep_copy, kind_of

from .annotations import LAST_APPLIED_ANNOTATION

# Go's encoding/json escapes these in strings (HTML-safe output).
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def apply_desired(
    live: dict[str, Any] | None,
    desired: dict[str, Any],
    schema: SchemaNode,
    *,
    overwrite: bool = True,
) -> dict[str, Any]:
    """The live object after ``kubectl apply`` of ``desired`` (client-side apply).

    ``live`` is not modified; ``None`` (or ``{}``) means the object does not
    exist yet, in which case kubectl creates ``desired`` with the annotation.
    Raises :class:`~krm_merge.smp.errors.SmpError` (and its
    :class:`~krm_merge.smp.errors.ConflictError` when ``overwrite`` is false).
    """
    if not live:
        return with_last_applied(desired)
    patch = kubectl_apply_patch(live, desired, schema, overwrite=overwrite)
    return apply_patch(deep_copy(live), patch, schema)


def kubectl_apply_patch(
    live: dict[str, Any], desired: dict[str, Any], schema: SchemaNode, *, overwrite: bool = True
) -> dict[str, Any]:
    """The strategic merge patch ``kubectl apply`` sends for ``desired`` ({} = nothing to send)."""
    return create_three_way_patch(
        last_applied_of(live), with_last_applied(desired), live, schema, overwrite=overwrite
    )


def last_applied_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The decoded last-applied configuration of ``obj`` (``None`` when absent or empty)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED_ANNOTATION)
    if not text:
        return None
    try:
        decoded = json.loads(text)
    except ValueError:
        raise SmpError("invalid JSON document", f"metadata.annotations[{LAST_APPLIED_ANNOTATION}]") from None
    if not isinstance(decoded, dict):
        raise SmpError("invalid JSON document", f"metadata.annotations[{LAST_APPLIED_ANNOTATION}]")
    return decoded


def with_last_applied(desired: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``desired`` carrying the annotation kubectl would record for it."""
    obj: dict[str, Any] = deep_copy(desired)
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
    annotations.pop(LAST_APPLIED_ANNOTATION, None)
    metadata["annotations"] = annotations
    recorded = go_json(obj) + "\n"
    annotations[LAST_APPLIED_ANNOTATION] = recorded
    return obj


def go_json(value: Any) -> str:
    """Compact JSON as Go's ``encoding/json`` writes a decoded object (sorted keys)."""
    parts: list[str] = []
    _encode(value, parts)
    return "".join(parts)


def _encode(value: Any, out: list[str]) -> None:
    kind = kind_of(value)
    if kind == MAP:
        out.append("{")
        for index, key in enumerate(sorted(value)):
            if index:
                out.append(",")
            out.append(_go_string(str(key)))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif kind == LIST:
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif kind == STRING:
        out.append(_go_string(value))
    elif kind == BOOL:
        out.append("true" if value else "false")
    elif kind == INT:
        out.append(str(int(value)))
    elif kind == FLOAT:
        out.append(_go_float(float(value)))
    elif kind == NULL:
        out.append("null")
    else:
        raise SmpError(f"json: unsupported type: {type(value).__name__}")


def _go_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if any(ch in text for ch in _GO_ESCAPES):
        for raw, escaped in _GO_ESCAPES.items():
            encoded = encoded.replace(raw, escaped)
    return encoded


def _go_float(number: float) -> str:
    """``encoding/json`` float64: shortest form, exponent only outside [1e-6, 1e21)."""
    if math.isnan(number) or math.isinf(number):
        raise SmpError(f"json: unsupported value: {number}")
    if number == int(number) and abs(number) < 1e21:
        return str(int(number))
    magnitude = abs(number)
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = repr(number).partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    text = repr(number)
    if "e" in text:
        text = format(Decimal(text), "f")
    return text
