"""Small kpt-shaped text splices of the editing layer, each proven by the one read-back check.

Where kpt adds a line to a resource it adds exactly that line (an annotation
after the last one, a ``# kpt-merge`` comment on the ``metadata:`` line), so
a package updated by kpt and by krm-merge is byte-identical.  A general edit
(``KubeObject.set_data``) would re-print more than that line, so these
splices write only what kpt writes; each returns None (or the text unchanged)
when the layout is not the simple one it knows, and the caller falls back to
``set_data``.
"""

from __future__ import annotations

import functools
import re

from krm_merge.krm import yamlio
from krm_merge.krm.results import KrmError
from krm_merge.yaml import scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Compiled on first use (functools.cache), not at import: most runs add no annotation (issue 45).
@functools.cache
def _top_metadata() -> re.Pattern[str]:
    return re.compile(r"^metadata:[ \t]*(#[^\n]*)?\n", re.M)


def block_end(text: str, start: int, parent_indent: int) -> int:
    """Offset after the last non-blank line of the block starting at ``start`` (lines indented deeper than the parent)."""
    end = pos = start
    for line in text[start:].splitlines(keepends=True):
        stripped = line.lstrip(" ")
        if stripped.strip():
            if len(line) - len(stripped) <= parent_indent:
                break
            end = pos + len(line)
        pos += len(line)
    return end


def with_annotations(text: str, annotations: dict[str, str], data: Any = None) -> str | None:
    """``text`` with ``annotations`` added under a block ``metadata:`` (None when the layout is not simple).

    Placed as kpt places them: after the last entry of ``annotations``, or a
    new ``annotations:`` after the last entry of ``metadata``; keys quoted by
    kyaml's rule, values single-quoted as kpt writes them.  ``data``: what
    ``text`` reads as, when the caller already read it (left unchanged; the
    result is still read back against it and the annotations).
    """
    lines = _annotation_lines(annotations)
    m = _top_metadata().search(text)
    if lines is None or m is None:
        return None
    start = m.end()
    block = text[start:block_end(text, start, 0)]
    first = re.match(r"\s*?^( +)\S", block, re.M)
    if first is None:
        return None
    indent = first.group(1)
    empty = re.search(rf"^{indent}annotations:[ \t]*\{{\}}[ \t]*\n", block, re.M)
    if empty is not None:  # kpt drops an empty flow `annotations: {}` and writes the block where it adds one
        return with_annotations(text[:start + empty.start()] + text[start + empty.end():], annotations, data)
    ann = re.search(rf"^{indent}annotations:[ \t]*(#[^\n]*)?\n", block, re.M)
    if ann is not None:
        child = re.match(r"( +)\S", block[ann.end():])
        child_indent = child.group(1) if child and len(child.group(1)) > len(indent) else indent + "  "
        insert_at = block_end(text, start + ann.end(), len(indent))
        added = "".join(f"{child_indent}{line}\n" for line in lines)
    else:
        insert_at = block_end(text, start, 0)
        added = f"{indent}annotations:\n" + "".join(f"{indent}  {line}\n" for line in lines)
    if not text[:insert_at].endswith("\n"):
        added = "\n" + added  # the block ends the text without a newline
    out = text[:insert_at] + added + text[insert_at:]
    expected = _with_annotations_data(text, annotations, data)
    return out if expected is not None and yamlio.read_back_error(out, expected) is None else None


def _annotation_lines(annotations: dict[str, str]) -> list[str] | None:
    lines = []
    for key, value in annotations.items():
        k = scalars.double_quoted(key) if scalars.needs_double_quotes(key) else key
        v = scalars.single_quoted(value)  # kpt single-quotes the value
        if v is None or "\n" in k:
            return None
        lines.append(f"{k}: {v}")
    return lines


def _with_annotations_data(text: str, annotations: dict[str, str], data: Any = None) -> Any:
    """What ``text`` (read as ``data`` when given) should read as once ``annotations`` are added; None when it is
    not a resource."""
    if data is None:
        try:
            data = yamlio.load_data(text)
        except KrmError:
            return None
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return None
    merged = dict(data["metadata"].get("annotations") or {})
    merged.update(annotations)
    return {**data, "metadata": {**data["metadata"], "annotations": merged}}  # copies: the caller's data stays


def with_key_comment(text: str, key: str, comment: str) -> str:
    """``# comment`` added to a bare top-level ``key:`` line (``metadata: # kpt-merge: ns/name``).

    The text is returned unchanged when there is no such line, when the line
    already carries a comment (a user's comment is never destroyed), or when
    the comment cannot be written on one line.
    """
    if not comment.isprintable():
        return text
    bare = re.compile(rf"^{re.escape(key)}:([ \t]*)$", re.M)
    return bare.sub(lambda _m: f"{key}: # {comment}", text, count=1)
