"""Marker comment grammar, as pipeline-controller / image-automation-controller accept it.

A marker is a YAML comment whose text, after stripping every leading ``#``, is exactly one
strict JSON object whose values are all strings, e.g. ``# {"$promotion": "ns:app:prod"}``.
Extra string keys are allowed; whitespace around JSON tokens is tolerated; anything else
(trailing text, single quotes, unquoted keys, a non-string value) makes it not a marker.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

PROMOTION_KEY: Final = "$promotion"
IMAGEPOLICY_KEY: Final = "$imagepolicy"


class _NotAMarker(Exception):
    """Raised inside the JSON hook when an object holds a non-string value."""


def _string_pairs_only(pairs: list[tuple[str, object]]) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in pairs:
        if not isinstance(value, str):
            raise _NotAMarker
        result[key] = value  # duplicate keys: the last one wins, as in Go's encoding/json
    return result


# The usual marker, one key and one value without escapes: read without the json module,
# exactly as json.loads reads it (JSON whitespace around tokens; no control characters,
# quotes or backslashes inside the strings).  Anything else goes to json.loads.
_WS = r"[ \t\r\n]*"
_STRING = r'"([^"\\\x00-\x1f]*)"'
_ONE_PAIR = re.compile(rf"{_WS}\{{{_WS}{_STRING}{_WS}:{_WS}{_STRING}{_WS}\}}{_WS}")


def parse_marker_object(comment: str) -> dict[str, str] | None:
    """Parse a comment (``#...``) into its JSON object of strings, or None if it is not one."""
    text = comment.lstrip("#")
    simple = _ONE_PAIR.fullmatch(text)
    if simple is not None:
        return {simple.group(1): simple.group(2)}

    try:
        # json.loads skips only JSON whitespace (space, tab, CR, LF) around the object and
        # rejects trailing text, exactly like Go's json.Unmarshal.
        parsed = json.loads(text, object_pairs_hook=_string_pairs_only)
    except (ValueError, _NotAMarker, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def marker_value(comment: str, key: str) -> str | None:
    """Return the value of ``key`` in a marker comment, or None if it is no marker for ``key``."""
    if key not in comment:
        return None
    parsed = parse_marker_object(comment)
    if parsed is None:
        return None
    return parsed.get(key)


def looks_like_marker(comment: str, key: str) -> bool:
    """True when a comment mentions ``key`` in a quoted JSON-ish way (for diagnostics)."""
    return f'"{key}"' in comment
