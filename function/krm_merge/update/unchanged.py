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
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.values import same
from krm_merge.yaml.scalars import closing_quote

from .identity import BOOKKEEPING, content_text

# A key (plain, up to ``: `` or a final ``:``) or a comment, whichever comes first on a line.
# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def _key_or_comment() -> re.Pattern[str]:
    return re.compile(r":(?=[ \t]|$)|(?<=[ \t])#")


@functools.cache
def _any_hash() -> re.Pattern[str]:
    """Every ``#`` at a line start or after a blank, to the line's end: the count when the scanner cannot tell."""
    return re.compile(r"(?:^|[ \t])(#[^\n]*?)[ \t]*$", re.M)


@functools.cache
def _special() -> re.Pattern[str]:
    return re.compile(r"[#'\"|>\[{]")


@functools.cache
def _block_header() -> re.Pattern[str]:
    """A block scalar's header (``|``, ``>-``, ``|2+``...), with or without a comment after it."""
    return re.compile(r"[|>][-+0-9]{0,3}(?=[ \t]|$)")


def same_as_fetched(local: Item, origin: Item) -> bool:
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
    """The comments of a document in order, without kpt's ``# kpt-merge`` comment and bookkeeping lines.

    Found by a line scanner that knows where a comment cannot be: inside a block scalar's body
    (``|``/``>``, by its indentation), inside a quoted scalar (on one line or several) or a flow
    collection's quoted strings.  kpt re-prints such scalars (a block scalar holding ``# text``
    as a double-quoted string, a long one wrapped again), so counting their ``#`` text would make
    an untouched resource look locally changed (issue 33).
    """
    text = content_text(text)
    if not _may_start_comment(text):
        return []  # no '#' where a comment could start: nothing to scan (most CRDs)
    return _CommentScanner(text).comments()


def _may_start_comment(text: str) -> bool:
    """Whether a ``#`` stands at a line start or after a blank (where :func:`_any_hash` matches).

    Found by ``str.find``: the pattern tried every blank of a CRD's text, ~0.15 ms a document.
    """
    at = text.find("#")
    while at >= 0:
        if at == 0 or text[at - 1] in " \t\n":
            return True
        at = text.find("#", at + 1)
    return False


class _CommentScanner:
    """One pass over a document's lines: the comments, in order (see :func:`comments_of`)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.found: list[str] = []
        self.quote = ""  # the quote of a quoted scalar still open at the end of the last line
        self.block = -1  # inside a block scalar's body: the indentation its lines must exceed
        self.content = -1  # the body's indentation, once its first non-blank line is seen

    def comments(self) -> list[str]:
        for line in self.lines:
            if self.block >= 0 and self.in_block(line):
                continue
            if self.quote:
                end = _after_quote(line, 0, self.quote)
                if end < 0:
                    continue
                self.quote = ""
                self.plain_tail(line, end)
                continue
            if _special().search(line):  # a line without these characters holds no comment and opens no scalar
                self.structure_line(line)
        if self.quote:  # a quote never closed: misread (a plain line starting with one); count every ' #' as before
            return _any_hash().findall("\n".join(self.lines))
        return self.found

    def in_block(self, line: str) -> bool:
        """Whether ``line`` belongs to the block scalar being read; ends it when it does not."""
        stripped = line.lstrip(" ")
        if not stripped:
            return True
        indent = len(line) - len(stripped)
        if (self.content < 0 and indent > self.block) or 0 <= self.content <= indent:
            self.content = indent if self.content < 0 else self.content
            return True
        self.block = self.content = -1
        return False

    def structure_line(self, line: str) -> None:
        """A line outside any scalar: indentation, dashes, a key, then its value."""
        col = len(line) - len(line.lstrip(" "))
        parent = col  # what a block scalar's body must be indented beyond: the key's or dash's column
        while line.startswith("-", col) and line[col + 1 : col + 2] in ("", " ", "\t"):
            parent = col
            col = _skip_blanks(line, col + 1)
        if line.startswith(("'", '"'), col):
            end = _after_quote(line, col + 1, line[col])
            if end > 0 and line.startswith(":", end) and line[end + 1 : end + 2] in ("", " ", "\t"):
                parent, col = col, _skip_blanks(line, end + 1)  # a quoted key
        elif col < len(line) and line[col] not in "#[{|>":
            m = _key_or_comment().search(line, col)
            if m is None:
                return  # a plain scalar (a continuation line included)
            if m.group() == "#":
                self.found.append(line[m.start() :].rstrip(" \t"))
                return
            parent, col = col, _skip_blanks(line, m.end())
        self.value(line, col, parent)

    def value(self, line: str, col: int, parent: int) -> None:
        if col >= len(line):
            return
        first = line[col]
        if first == "'" or first == '"':
            end = _after_quote(line, col + 1, first)
            if end < 0:
                self.quote = first
            else:
                self.plain_tail(line, end)
        elif first in "|>" and _block_header().match(line, col):
            self.block = parent
            self.plain_tail(line, col + 1)
        elif first in "[{":
            self.flow_tail(line, col)
        elif first == "#":
            self.found.append(line[col:].rstrip(" \t"))
        else:
            self.plain_tail(line, col)

    def plain_tail(self, line: str, col: int) -> None:
        """A comment at or after ``col`` in plain text: a ``#`` after a blank."""
        at = col
        while True:
            at = line.find("#", at)
            if at < 0:
                return
            if at == 0 or line[at - 1] in " \t":
                self.found.append(line[at:].rstrip(" \t"))
                return
            at += 1

    def flow_tail(self, line: str, col: int) -> None:
        """A comment after a flow collection's start (its quoted strings skipped)."""
        at = col
        while at < len(line):
            ch = line[at]
            if (ch == "'" or ch == '"') and line[at - 1] in " \t[{,:":
                end = _after_quote(line, at + 1, ch)
                if end < 0:
                    return  # a quoted string spread over lines: left as text (both versions alike)
                at = end
                continue
            if ch == "#" and line[at - 1] in " \t":
                self.found.append(line[at:].rstrip(" \t"))
                return
            at += 1


def _skip_blanks(line: str, col: int) -> int:
    while col < len(line) and line[col] in " \t":
        col += 1
    return col


def _after_quote(line: str, col: int, quote: str) -> int:
    """The column after the quote closing a scalar whose text goes on at ``line[col]``; -1 if it goes on past the line."""
    k = closing_quote(line, col, quote)
    return k + 1 if k >= 0 else -1


def disjoint_changes(local: Any, origin: Any, upstream: Any) -> bool:
    """Whether local's and upstream's changes of origin (as data) touch no common field and write no value
    whose merge has rules of its own: an explicit null or an empty mapping or list from local, a null
    upstream writes or replaces with a value (the 3-way merge and kpt drop such nulls).  Nulls nobody
    changed, or that upstream deleted, do not count.  A field local deleted counts as meeting (the data
    path, :func:`krm_merge.update.resources.upstream_change`, reads a key only upstream has as one
    upstream added).

    A changed field is a path of mapping keys; a list counts as one field (its elements are
    matched by the merge's rules, which this does not repeat).  Two changes meet when one's
    path is the other's or lies inside it.  Key order is layout, not a change.
    """
    mine: list[tuple[Any, ...]] = []
    theirs: list[tuple[Any, ...]] = []
    if _changed_paths(local, origin, (), mine, local=True) or _changed_paths(upstream, origin, (), theirs, local=False):
        return False
    inside_mine = {p[:n] for p in mine for n in range(len(p) + 1)}  # every path that holds a change of local's
    changed = set(mine)
    return not any(q in inside_mine or any(q[:n] in changed for n in range(len(q))) for q in theirs)


def _changed_paths(new: Any, old: Any, path: tuple[Any, ...], out: list[tuple[Any, ...]], *, local: bool) -> bool:
    """Append the paths where ``new`` differs from ``old``; True when the change is one the data path declines
    (see :func:`disjoint_changes`; ``local``: the change is local's)."""
    special = _holds_null_or_empty if local else _holds_null
    if isinstance(new, dict) and isinstance(old, dict):
        found = False
        for key, value in new.items():
            if key in old:
                found = _changed_paths(value, old[key], (*path, key), out, local=local) or found
            else:
                out.append((*path, key))
                found = found or special(value)
        deleted = [(*path, key) for key in old if key not in new]
        out.extend(deleted)
        return found or (local and bool(deleted))
    if not same(new, old):
        out.append(path)
        return special(new) or _holds_null(old)
    return False


def _holds_null(value: Any) -> bool:
    if value is None:
        return True
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds_null(v) for v in children)


def _holds_null_or_empty(value: Any) -> bool:
    if value is None or value == {} or value == []:
        return True
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_holds_null_or_empty(v) for v in children)


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


__all__ = ["comments_of", "disjoint_changes", "same_as_fetched", "same_key_order", "without_bookkeeping"]
