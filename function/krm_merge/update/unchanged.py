"""Whether a resource of a ``kpt pkg get`` copy is still origin's, decided as data.

``kpt pkg get`` rewrites every resource it fetches: it adds the
``# kpt-merge: NS/NAME`` comment on ``metadata``, the
``internal.kpt.dev/upstream-identifier`` annotation (dropping an empty
``annotations: {}`` on the way), and prints the document again with kyaml's
indentation and quoting.  None of that is a local change, but it makes
local's text differ from origin's, and a text comparison alone would send
every resource upstream changed through the round-trip 3-way merge (a ruamel
read of three versions and a print: about 0.1 s for a 400-line document).

:func:`same_as_fetched` compares the two versions the way kpt's output
allows: the data (read by the fast reader, else libyaml; key order counts,
bookkeeping annotations do not) and the comments, in order (kpt's own comment
aside).  A comment the user added, a key they moved or any value they changed
makes the resource changed.  Blank lines and comment positions are layout:
kyaml moves them too.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from krm_merge.errors import KrmMergeError
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.values import same

from .identity import BOOKKEEPING, content_text

# A comment begins at a '#' at the start of a line or after a blank.  On a line holding a
# quoted scalar with " #" inside, the match also takes the scalar's tail: the same bytes
# in both versions give the same match, different ones make the resource count as changed.
# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def _comment() -> re.Pattern[str]:
    return re.compile(r"(?:^|[ \t])(#[^\n]*?)[ \t]*$", re.M)


def same_as_fetched(local: KubeObject, origin: KubeObject) -> bool:
    """Whether ``local`` holds exactly ``origin``'s data and comments, apart from what ``kpt pkg get`` adds.

    False when either cannot be read as a mapping (the full merge then reports it).
    """
    if comments_of(local.text) != comments_of(origin.text):
        return False  # checked first: no parse at all when a comment differs
    try:
        mine, theirs = local.data, origin.data
    except KrmMergeError:
        return False
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return False
    mine, theirs = without_bookkeeping(mine), without_bookkeeping(theirs)
    return same(mine, theirs) and same_key_order(mine, theirs)


def comments_of(text: str) -> list[str]:
    """The comments of a document in order, without kpt's ``# kpt-merge`` comment and bookkeeping lines."""
    return _comment().findall(content_text(text))


def without_bookkeeping(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (shallow copies where changed) without bookkeeping annotations; ``annotations`` dropped when left empty."""
    meta = data.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("annotations", {}), dict):
        return data
    kept = {k: v for k, v in (meta.get("annotations") or {}).items() if not BOOKKEEPING.match(str(k))}
    new_meta = {k: v for k, v in meta.items() if k != "annotations"}
    if kept:
        new_meta = {k: (kept if k == "annotations" else v) for k, v in meta.items()}
    return {k: (new_meta if k == "metadata" else v) for k, v in data.items()}


def same_key_order(a: Any, b: Any) -> bool:
    """Whether every mapping of ``a`` lists its keys in the order of ``b``'s (the values are already equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_key_order(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return all(same_key_order(x, y) for x, y in zip(a, b))
    return True


__all__ = ["comments_of", "same_as_fetched", "same_key_order", "without_bookkeeping"]
