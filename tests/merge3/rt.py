"""Round-trip YAML helpers for the merge tests."""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML

from krm_merge.merge3.nodes import MISSING


def _yaml() -> YAML:
    y = YAML()
    y.indent(mapping=2, sequence=2, offset=0)
    y.width = 1 << 30
    y.preserve_quotes = True
    return y


def load(text: str | None) -> Any:
    """Parse one document; empty/None -> MISSING."""
    if text is None or not text.strip():
        return MISSING
    return _yaml().load(text)


def dump(node: Any) -> str:
    """Serialise a document ('' for MISSING)."""
    if node is MISSING:
        return ""
    buf = io.StringIO()
    _yaml().dump(node, buf)
    return buf.getvalue()


def ordered(node: Any) -> Any:
    """Order-sensitive plain structure for comparisons (maps as key/value lists)."""
    if isinstance(node, dict):
        return [(str(k), ordered(v)) for k, v in node.items()]
    if isinstance(node, list):
        return [ordered(v) for v in node]
    if isinstance(node, str):
        return str(node)
    return node
