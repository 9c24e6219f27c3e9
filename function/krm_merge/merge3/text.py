"""Printing merged trees in the sequence style of the file they replace.

kyaml remembers per resource whether sequences are "compact" (``- `` at the
parent key's column) or "wide" (indented by two, as ``kpt pkg get`` writes
Kptfiles) and restores it on write; so do we, so a merge does not re-indent
a whole file.
"""

from __future__ import annotations

import io
import re
from typing import Any

from krm_merge.krm import yamlio

_SEQ_UNDER_KEY = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n((?: *#[^\n]*\n)*)( *)- ", re.M)


def uses_wide_sequences(text: str) -> bool:
    """True when the first block sequence under a key is indented past the key."""
    m = _SEQ_UNDER_KEY.search(text)
    return m is not None and len(m.group(3)) > len(m.group(1))


def load(text: str, what: str = "input") -> Any:
    """Round-trip tree of one document (comments kept)."""
    return yamlio.load_rt(text, what)


def dump_like(node: Any, reference_text: str | None) -> str:
    """Print ``node`` with the sequence style ``reference_text`` uses."""
    if reference_text is None or not uses_wide_sequences(reference_text):
        return yamlio.dump_rt(node)
    rt = yamlio.new_rt_yaml()
    rt.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    rt.dump(node, buf)
    return buf.getvalue()
