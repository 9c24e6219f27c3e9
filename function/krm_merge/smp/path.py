"""Cheap field paths for error messages.

A path is built on every recursion step but rendered only when an error is
raised, so it is a linked chain of ``(parent, segment)`` tuples: extending it
is O(1) and nothing is formatted on the happy path.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .values import go_str

Path = Optional[Tuple["Path", str]]

ROOT: Path = None


def child(path: Path, key: str) -> Path:
    """The path of map field ``key`` below ``path``."""
    return (path, "." + key)


def element(path: Path, merge_key: str | None, item: Any, index: int | None = None) -> Path:
    """The path of a list element: ``[name=x]`` when it has a merge key, else ``[i]``."""
    if merge_key and isinstance(item, dict) and merge_key in item:
        return (path, f"[{merge_key}={go_str(item[merge_key])}]")
    return (path, f"[{'' if index is None else index}]")


def render(path: Path) -> str:
    """``spec.template.spec.containers[name=nginx].image`` (empty for the root)."""
    parts: list[str] = []
    while path is not None:
        path, segment = path
        parts.append(segment)
    return "".join(reversed(parts)).lstrip(".")
