"""Cheap field paths for error messages.

A path is built on every recursion step but rendered only when an error is
raised, so it is a linked chain of ``(parent, part)`` tuples: extending it
is O(1) and nothing is formatted on the happy path.  Rendering is the
project's one path formatter, :func:`krm_merge.krm.values.format_path`.
"""

from __future__ import annotations

from krm_merge.krm.values import Label, PathPart, format_path

from .values import go_str

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple, TypeAlias

Path: TypeAlias = "Optional[Tuple[Path, PathPart]]"

ROOT: Path = None


def child(path: Path, key: str) -> Path:
    """The path of map field ``key`` below ``path``."""
    return (path, key)


def element(path: Path, merge_key: str | None, item: Any, index: int | None = None) -> Path:
    """The path of a list element: ``[name=x]`` when it has a merge key, else ``[i]``."""
    if merge_key and isinstance(item, dict) and merge_key in item:
        return (path, Label(f"{merge_key}={go_str(item[merge_key])}"))
    return (path, Label("") if index is None else index)


def render(path: Path) -> str:
    """``spec.template.spec.containers[name=nginx].image`` (empty for the root)."""
    parts: list[PathPart] = []
    while path is not None:
        path, part = path
        parts.append(part)
    return format_path(parts[::-1])
