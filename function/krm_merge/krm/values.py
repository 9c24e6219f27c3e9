"""Value helpers shared by every algorithm: type-aware equality and field paths."""

from __future__ import annotations

import re
from typing import Any, Sequence

PathPart = str | int
Path = tuple[PathPart, ...]


def same(a: Any, b: Any) -> bool:
    """Deep equality that, like Go, tells ``1``, ``1.0``, ``True`` and ``"1"`` apart."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b or not same(value, b[key]):
                return False
        return True
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(same(x, y) for x, y in zip(a, b))
    if ta is not tb and not (issubclass(ta, str) and issubclass(tb, str)):
        return False
    if ta is float and a != a:  # NaN: the same value when both are NaN
        return b != b
    return bool(a == b)


_PART = re.compile(r"""([^.\[\]]+)|\[(-?\d+)\]|\[([^\]=]+)=([^\]]*)\]""")


def parse_path(path: str | Sequence[PathPart]) -> Path:
    """``"spec.containers[0].image"`` → ``("spec", "containers", 0, "image")``.

    A tuple or list is taken as already split.  Keys holding dots can be given
    in a tuple.
    """
    if not isinstance(path, str):
        return tuple(path)
    parts: list[PathPart] = []
    pos = 0
    while pos < len(path):
        if path[pos] == ".":
            pos += 1
            continue
        m = _PART.match(path, pos)
        if not m:
            raise ValueError(f"bad field path {path!r} at {pos}")
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            raise ValueError(f"selector paths are not supported here: {path!r}")
        pos = m.end()
    return tuple(parts)


def format_path(parts: Sequence[PathPart]) -> str:
    """The dotted form used in results: ``spec.containers[0].image``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def get_path(data: Any, path: Sequence[PathPart], default: Any = None) -> Any:
    """Follow ``path`` through maps and lists; ``default`` where it leads nowhere."""
    node = data
    for part in path:
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                return default
            node = node[part]
        else:
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
    return node
