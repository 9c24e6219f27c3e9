"""Resource identity for package merges, and the bookkeeping that is not content.

Identity = API group (not version) + kind + namespace + name, namespace and
name taken from a ``metadata: # kpt-merge: ns/name`` comment when present (so
a local rename keeps matching its upstream resource).  Bookkeeping
annotations (kpt's path/index/id annotations, kpt's upstream identifier) and
the kpt-merge comment are ignored when deciding whether two versions differ.
"""

from __future__ import annotations

import re
from typing import Any

from krm_merge.krm import splice
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.values import resource_label
from krm_merge.records import Record

_KPT_MERGE = re.compile(r"^metadata:[ \t]*#[ \t]*kpt-merge:[ \t]*(\S*)[ \t]*$", re.M)
BOOKKEEPING = re.compile(
    r"^(internal\.config\.kubernetes\.io/.*|config\.kubernetes\.io/(path|index)|config\.k8s\.io/id"
    r"|internal\.kpt\.dev/upstream-identifier)$"
)
_BOOKKEEPING_LINE = re.compile(
    r"^[ \t]+['\"]?(?:internal\.config\.kubernetes\.io/[^'\":]*|config\.kubernetes\.io/(?:path|index)"
    r"|config\.k8s\.io/id|internal\.kpt\.dev/upstream-identifier)['\"]?[ \t]*:[^\n]*\n",
    re.M,
)
_EMPTY_ANNOTATIONS = re.compile(r"^([ \t]+)annotations:[ \t]*\n(?!\1[ \t])", re.M)
_KPT_MERGE_COMMENT = re.compile(r"^(metadata:)[ \t]*#[ \t]*kpt-merge:[^\n]*$", re.M)


# A NamedTuple, not a dataclass: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class Identity(Record):
    """Who a resource is, across the three versions of a package."""

    group: str
    kind: str
    namespace: str
    name: str

    def display(self) -> str:
        """``Kind/[ns/]name`` for messages, the one resource label."""
        return resource_label(self.kind, self.name, self.namespace)


def kpt_merge_comment(text: str) -> tuple[str, str] | None:
    """(namespace, name) from a ``metadata: # kpt-merge: ns/name`` comment."""
    m = _KPT_MERGE.search(text) if "kpt-merge:" in text else None  # no line-by-line search of a text without it
    if not m:
        return None
    namespace, _, name = m.group(1).partition("/")
    return namespace, name


def identity_of(obj: Item) -> Identity:
    """The identity of one resource (see module docstring)."""
    commented = kpt_merge_comment(obj.text)
    namespace, name = commented if commented is not None else (obj.namespace, obj.name)
    return Identity(obj.group, obj.kind, namespace, name)


def content_text(text: str) -> str:
    """The text without bookkeeping annotations and the kpt-merge comment (for equality)."""
    out = _sub_lines(_BOOKKEEPING_LINE, text, _BOOKKEEPING_MARKS, "")
    out = _sub_lines(_EMPTY_ANNOTATIONS, out, ("annotations:",), "")
    return without_kpt_merge_comment(out)


# Every match of the patterns above holds one of these strings: the line-anchored
# patterns are tried only on the lines holding one (a scan of every line start costs
# ~10 ms on a package with CRDs, and content_text reads each version of each resource).
_BOOKKEEPING_MARKS = ("config.kubernetes.io/", "config.k8s.io/id", "internal.kpt.dev/upstream-identifier")


def _sub_lines(pattern: re.Pattern[str], text: str, marks: tuple[str, ...], repl: str) -> str:
    """``pattern.sub(repl, text)`` for a pattern that matches from a line start and holds one of ``marks``."""
    starts = set()
    for mark in marks:
        at = text.find(mark)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(mark, at + len(mark))
    if not starts:
        return text
    out, done = [], 0
    for start in sorted(starts):
        if start < done:
            continue  # inside the previous match
        m = pattern.match(text, start)
        if m is None:
            continue
        out.append(text[done:start])
        out.append(m.expand(repl))
        done = m.end()
    out.append(text[done:])
    return "".join(out)


def strip_bookkeeping(tree: Any) -> Any:
    """Remove bookkeeping annotations from a tree (origin/upstream before merging)."""
    meta = tree.get("metadata") if isinstance(tree, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(meta, dict) and isinstance(ann, dict):
        for key in [k for k in ann if BOOKKEEPING.match(str(k))]:
            del ann[key]
        if not ann:
            del meta["annotations"]
    return tree


def bookkeeping_of(obj: Item) -> dict[str, str]:
    """The bookkeeping annotations an item's text carries (the reader's, held beside it, are not copied)."""
    return {k: v for k, v in obj.text_annotations.items() if BOOKKEEPING.match(k)}


def without_kpt_merge_comment(text: str) -> str:
    """``text`` without kpt's ``# kpt-merge: ns/name`` comment on its ``metadata:`` line (for a renamed resource)."""
    return _sub_lines(_KPT_MERGE_COMMENT, text, ("kpt-merge:",), r"\1")


def with_kpt_merge_comment(text: str, identity: Identity) -> str:
    """Add ``# kpt-merge: ns/name`` to a bare top-level ``metadata:`` line, as kpt does.

    A ``metadata:`` line that already carries a comment is left alone (kpt
    would replace it; we do not destroy a user's comment).
    """
    if not identity.name or _KPT_MERGE.search(text):
        return text
    return splice.with_key_comment(text, "metadata", f"kpt-merge: {identity.namespace}/{identity.name}")
