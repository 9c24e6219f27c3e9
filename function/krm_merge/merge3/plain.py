"""Plain data as a node representation of the 3-way merge (issue 45).

The update merges a resource changed on both sides on the data the fast
reader already read from the three texts (dicts, lists, YAML 1.1 scalars),
then writes the answer into local's text through the editing layer
(``KubeObject.set_data``), instead of reading three ruamel.yaml round-trip
trees and printing one (about three quarters of such an update's time).
The walker and the visitor are the same; only the node operations differ:
plain nodes carry no comments, so the walker leaves the comment rules out
and a conflict marker is not written into the data: the merger hands each
back with its field's path (``Merger.pending``) for the caller to put on the
field's line (``update/conflict_lines.py``; the caller merges round-trip
trees where it cannot, and for what plain data cannot say: see
``update/context.py``).

Nothing here imports ruamel.yaml.
"""

from __future__ import annotations

from typing import Any

from krm_merge.krm.values import render_value
from krm_merge.krm.values import same as values_same

from .nodes import MISSING


def _no_comment(*_args: Any) -> None:
    """Plain nodes carry no comments: nothing to read, keep or drop."""
    return None


def _same(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return a is b
    return values_same(a, b)


def _render(node: Any) -> str:
    return "<absent>" if node is MISSING else render_value(node)


def _new_seq(items: list[Any] | None = None) -> list[Any]:
    return list(items or ())


def _replace_items(seq: list[Any], items: list[Any], origins: list[int | None]) -> None:
    seq[:] = items


def _unmarkable(container: Any, key: Any, text: str, replacing: str | None = None) -> None:
    raise TypeError("plain data carries no comments: its markers are handed back (Merger.pending)")


class PlainData:
    """Plain dicts, lists and scalars as a :class:`~.visit.Representation` (no comments)."""

    comments = False
    key_comment = staticmethod(_no_comment)
    save_key_comment = staticmethod(_no_comment)
    restore_key_comment = staticmethod(_no_comment)
    copy_key_comment = staticmethod(_no_comment)
    drop_key_comment = staticmethod(_no_comment)
    add_line_comment = staticmethod(_unmarkable)
    new_map: staticmethod[[], dict[Any, Any]] = staticmethod(dict)
    new_seq = staticmethod(_new_seq)
    same = staticmethod(_same)
    restyle = staticmethod(lambda new, old: new)
    render = staticmethod(_render)
    to_plain_data = staticmethod(lambda node: node)
    replace_items = staticmethod(_replace_items)


PLAIN_DATA = PlainData()
"""Plain data's representation (``Merger(options, representation=PLAIN_DATA)``)."""


__all__ = ["PLAIN_DATA", "PlainData"]
