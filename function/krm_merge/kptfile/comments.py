"""Comments of pipeline functions travel with the functions.

ruamel does not keep a sequence element's head comment with the element: a
comment line above ``- image: b`` is stored as the trailing comment of the
last scalar of the element *before* it (or of the list's key for the first
element, or on the element's first key after a flow collection), and the
comment lines after the last element (which belong to whatever follows) are
stored the same way or as the list's end comment.  Merged like that, an
upstream function's comment lands above local's first function, a comment
upstream added is lost, and the list's trailing comment is repeated.

So before the merge every function list of the three Kptfiles gives up its
head comments (kept per function) and its trailing comment; after the merge
each function of the result gets its head comment back — local's, or
upstream's when upstream changed it and local did not, upstream's for a
function upstream added — re-indented to the list's dash column, and the
list gets local's trailing comment after its last function.  Comment lines
indented deeper than the dash stay where they are (they belong to the
element above).

This module holds only that policy; where ruamel keeps a comment (the dash
column, the last scalar's slot, tokens and their lines) is the one
comment-surgery module's, :mod:`krm_merge.krm.yamlio`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from krm_merge.krm.yamlio import dash_column, join_token, last_slot, line_tokens, split_token, token_column, token_lines

KeyFn = Callable[[Any], "tuple[str, ...] | None"]
Lines = list[str]


@dataclass
class ListComments:
    """The head comment of each function (by object id) and the list's trailing comment."""

    column: int
    heads: dict[int, Lines] = field(default_factory=dict)
    keyed: dict[Any, Lines] = field(default_factory=dict)
    keys: dict[int, Any] = field(default_factory=dict)
    tail: Lines = field(default_factory=list)
    elements: list[Any] = field(default_factory=list)  # keeps the ids above meaningful


def detach(parent: Any, key: str, key_fn: KeyFn | None) -> ListComments | None:
    """Take the head and trailing comments out of ``parent[key]`` (a block list of maps)."""
    seq = parent.get(key) if isinstance(parent, CommentedMap) else None
    if not isinstance(seq, CommentedSeq) or not len(seq) or seq.fa.flow_style():
        return None
    column = dash_column(seq) or 0
    found = ListComments(column)
    heads: list[Lines] = [_take_key_region(parent, key, seq)]
    for element in seq:
        heads[-1] += _take_first_key_heads(element, column)
        heads.append(_take_trailing_region(element, column))
    found.tail = heads.pop() + _take_end(seq)
    found.elements = list(seq)
    for element, head in zip(seq, heads):
        found.heads[id(element)] = head
        k = key_fn(element) if key_fn is not None else None
        found.keys[id(element)] = k
        if k is not None:
            found.keyed.setdefault(k, head)
    return found


def attach(parent: Any, key: str, local: ListComments | None, origin: ListComments | None, upstream: ListComments | None) -> None:
    """Give every function of the merged ``parent[key]`` its head comment, and the list its tail."""
    seq = parent.get(key) if isinstance(parent, CommentedMap) else None
    if not isinstance(seq, CommentedSeq) or not len(seq):
        return
    column = local.column if local is not None else dash_column(seq) or 0
    for i, element in enumerate(seq):
        head = _head_for(element, local, origin, upstream)
        if head:
            entry = seq.ca.items.setdefault(i, [None, None, None, None])
            entry[1] = line_tokens([_indent(line, column) for line in head])
    tail = local.tail if local is not None else upstream.tail if upstream is not None else []
    if tail:
        seq.ca.end = line_tokens(tail)
        if seq.ca.comment is None:
            seq.ca.comment = [None, None]  # ruamel prints `end` only next to a comment slot


def _head_for(element: Any, local: ListComments | None, origin: ListComments | None, upstream: ListComments | None) -> Lines:
    """Local's head comment unless only upstream changed it; upstream's for its own functions."""
    if local is not None and id(element) in local.heads:
        mine = local.heads[id(element)]
        k = local.keys.get(id(element))
        theirs = upstream.keyed.get(k) if upstream is not None and k is not None else None
        base = origin.keyed.get(k) if origin is not None and k is not None else None
        if theirs is None:
            return mine
        if base is None:
            return mine if _text(mine) else theirs
        return theirs if _text(mine) == _text(base) and _text(base) != _text(theirs) else mine
    if upstream is not None and id(element) in upstream.heads:
        return upstream.heads[id(element)]
    return []


def _text(lines: Lines) -> list[str]:
    return [line.strip() for line in lines if line.strip()]


def _indent(line: str, column: int) -> str:
    return " " * column + line.lstrip() if line.strip() else ""


# --- where ruamel keeps the comments -------------------------------------------


def _take_key_region(parent: CommentedMap, key: str, seq: CommentedSeq) -> Lines:
    """Comment lines between ``key:`` and the first ``-`` (the first function's head)."""
    entry = parent.ca.items.get(key)
    lines: Lines = []
    if entry and len(entry) > 2 and entry[2] is not None:
        first, rest = split_token(entry[2].value)
        if rest:
            entry[2].value = join_token(first, [])  # the token is shared with seq.ca.comment[0]
        lines += rest
    listed = entry[3] if entry and len(entry) > 3 else None
    if not listed and seq.ca.comment and len(seq.ca.comment) > 1:
        listed = seq.ca.comment[1]  # the same tokens, when ruamel kept them here only
    lines += [line for tok in listed or () for line in token_lines(tok)]
    if entry and len(entry) > 3:
        entry[3] = None
    if seq.ca.comment and len(seq.ca.comment) > 1:
        seq.ca.comment[1] = None
    return lines


def _take_first_key_heads(element: Any, column: int) -> Lines:
    """Head comments ruamel put on an element's first key (after a flow collection)."""
    if not isinstance(element, CommentedMap) or not len(element):
        return []
    entry = element.ca.items.get(next(iter(element)))
    if not entry or len(entry) < 2 or not entry[1]:
        return []
    heads = [tok for tok in entry[1] if not tok.value.strip() or token_column(tok) <= column]
    keep = [tok for tok in entry[1] if all(tok is not h for h in heads)]
    entry[1] = keep or None
    return [line for tok in heads for line in token_lines(tok)]


def _take_trailing_region(element: Any, column: int) -> Lines:
    """Comment lines after an element at or left of the dash column (the next element's head)."""
    slot = last_slot(element)
    if slot is None:
        return []
    container, key, pos = slot
    entry = container.ca.items.get(key)
    token = entry[pos] if entry and len(entry) > pos else None
    if token is None:
        return []
    first, lines = split_token(token.value)
    cut = next((i for i, line in enumerate(lines) if line.strip() and len(line) - len(line.lstrip()) <= column), len(lines))
    while cut > 0 and not lines[cut - 1].strip():
        cut -= 1  # blank lines before the head comment go with it
    taken = lines[cut:]
    if taken:
        token.value = join_token(first, lines[:cut])
        if not first and not lines[:cut]:
            entry[pos] = None
    return taken


def _take_end(seq: CommentedSeq) -> Lines:
    end = getattr(seq.ca, "end", None)
    if not end:
        return []
    seq.ca.end = None
    return [line for tok in end for line in token_lines(tok)]
