"""Printing merged trees in the layout of the file they replace.

kyaml remembers per resource whether sequences are "compact" (``- `` at the
parent key's column) or "wide" (indented, as ``kpt pkg get`` writes
Kptfiles) and restores it on write.  We keep more of local's layout: the
mapping indentation (2 or 4 spaces…), the sequence indentation and the final
newline; and when the merge changed nothing, local's text itself.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from krm_merge.krm import yamlio

# A key alone on its line, then (after comments/blank lines) a deeper key / a dash.
_MAP_UNDER_KEY = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)[^\s#-]", re.M)
_SEQ_UNDER_KEY = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)-( +)\S", re.M)


@dataclass(frozen=True)
class Layout:
    """ruamel's indentation settings and the trailing newlines of a text."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0
    ending: str = "\n"


def layout_of(text: str) -> Layout:
    """The indentation a YAML text uses (ruamel's defaults for what it does not show)."""
    mapping = 2
    m = _MAP_UNDER_KEY.search(text)
    if m and len(m.group(2)) > len(m.group(1)):
        mapping = len(m.group(2)) - len(m.group(1))
    offset, sequence = 0, 2
    s = _SEQ_UNDER_KEY.search(text)
    if s:
        offset = max(0, len(s.group(2)) - len(s.group(1)))
        sequence = offset + 1 + len(s.group(3))
    stripped = text.rstrip("\n")
    return Layout(mapping, sequence, offset, text[len(stripped):] if stripped else "\n")


def load(text: str, what: str = "input") -> Any:
    """Round-trip tree of one document (comments kept)."""
    return yamlio.load_rt(text, what)


def dump_in(node: Any, layout: Layout) -> str:
    """Print ``node`` with ``layout``'s indentation and final newlines."""
    rt = yamlio.new_rt_yaml()
    rt.indent(mapping=layout.mapping, sequence=layout.sequence, offset=layout.offset)
    buf = io.StringIO()
    rt.dump(node, buf)
    text = _join_dash_comments(buf.getvalue(), layout.sequence - layout.offset)
    return text.rstrip("\n") + layout.ending


def _join_dash_comments(text: str, width: int) -> str:
    """``-`` / ``  # c`` (how ruamel prints a ``- # c`` element comment) back on one line."""
    return re.sub(r"^( *)-\n\1" + " " * width + r"(#[^\n]*)$", r"\1- \2", text, flags=re.M)


def dump_like(node: Any, reference_text: str | None, reference_tree: Any = None) -> str:
    """Print ``node`` in ``reference_text``'s layout; ``reference_text`` itself if that changes nothing.

    ``reference_tree``: an unedited tree of ``reference_text`` the caller
    already has; it spares reading the text again, and printing it at all
    when its data differ from ``node``'s (then the prints differ too).
    """
    if reference_text is None:
        return yamlio.dump_rt(node)
    layout = layout_of(reference_text)
    text = dump_in(node, layout)
    if text == reference_text:
        return text
    if reference_tree is not None and reference_tree != node:
        return text
    if dump_in(load(reference_text) if reference_tree is None else reference_tree, layout) != text:
        return text
    return reference_text  # the merge changed nothing ruamel can see: keep local's bytes
