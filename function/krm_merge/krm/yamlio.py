"""YAML reading and printing for items: the krm layer's face over :mod:`krm_merge.yaml`.

Every read goes through the bounded loader (:mod:`krm_merge.yaml.load`);
its errors become :class:`KrmError` here.  Two libraries, each where it is best:

* PyYAML with libyaml (``CSafeLoader``) reads plain data fast and safely; it
  keeps no comments, so it is only used for *reading* values.
* ruamel.yaml's round-trip mode keeps comments and formatting; it is the
  slow, general writer for items whose text must change and cannot be edited
  in place.

Plain data follows Kubernetes' YAML 1.1 reading (``yes`` is a bool, as
sigs.k8s.io/yaml reads it), except that timestamps stay strings: Kubernetes
objects hold no timestamps, only strings that look like them.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any, Callable, Iterator

from krm_merge.krm.results import KrmError
from krm_merge.yaml import load

MAX_DEPTH = load.MAX_DEPTH


@contextlib.contextmanager
def _as_krm_error() -> Iterator[None]:
    """The loader's errors as :class:`KrmError`, which every caller above handles."""
    try:
        yield
    except load.YamlError as err:
        raise KrmError(err.message) from None


def _load_all_fast(text: str) -> list[Any] | None:
    """The documents of ``text`` by the fast reader, or None if it declines any."""
    from krm_merge.krm import fastyaml

    if not text.strip():
        return None
    if not _DOCUMENT_MARKER.search(text):
        parsed = fastyaml.parse(text)
        return None if parsed is None else [parsed.data]
    pieces = _split_documents(text)
    if pieces is None:
        return None
    out: list[Any] = []
    for piece in pieces:
        if _only_comments(piece):
            out.append(None)  # an empty document between markers
            continue
        parsed = fastyaml.parse(piece)
        if parsed is None:
            return None
        out.append(parsed.data)
    return out


def _split_documents(text: str) -> list[str] | None:
    """The documents between bare ``---`` lines, as libyaml counts them.

    Many patches arrive as one ``---``-separated string; reading each piece
    with the fast reader keeps that linear and off PyYAML's Python
    constructor.  A marker that is not a bare ``---`` line (``--- |``,
    ``...``, directives) is left to libyaml: None.  Text before the first
    marker is a document only if it holds more than comments.
    """
    lines = text.split("\n")
    pieces: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.startswith(("---", "...", "%")):
            if line.rstrip() != "---":
                return None
            pieces.append("\n".join(current) + "\n")
            current = []
        else:
            current.append(line)
    pieces.append("\n".join(current) + "\n")
    if _only_comments(pieces[0]):
        pieces.pop(0)
    return pieces


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.split("\n"))


_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.M)


def load_data(text: str, what: str = "input") -> Any:
    """Load one YAML document as plain data through the bounded loader; errors become :class:`KrmError`."""
    with _as_krm_error():
        return load.load_data(text, what, _load_all_fast)


def load_all_data(text: str, what: str = "input") -> list[Any]:
    """Load every document of a YAML stream as plain data through the bounded loader.

    Documents in kyaml's block style are read by the fast reader (same data,
    no PyYAML import); anything else by libyaml.
    """
    with _as_krm_error():
        return load.load_all_data(text, what, _load_all_fast)


def load_strings(text: str, what: str = "input") -> Any:
    """Load one document with every scalar kept as its string (no type resolution)."""
    with _as_krm_error():
        return load.load_strings(text, what)


def dump_data(data: Any) -> str:
    """Print plain data as block YAML (for new objects and results; no comments)."""
    from krm_merge.yaml.libyaml import Dumper, yaml

    return yaml.dump(
        data,
        Dumper=Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
    )


# --- ruamel.yaml round trip -----------------------------------------------------


new_rt_yaml = load.new_rt_yaml


def load_rt(text: str, what: str = "input") -> Any:
    """Load one document as a ruamel round-trip tree (comments kept) through the bounded loader."""
    with _as_krm_error():
        node = load.load_rt(text, what)
    try:
        _move_seq_item_comments(node)
    except KrmError as err:
        raise KrmError(f"{what}: {err.message}") from None
    return node


def _move_seq_item_comments(node: Any) -> None:
    """Attach a ``- # comment`` to the item's first key, not to the sequence.

    ruamel keeps such a comment as a pre-comment of the sequence item and
    prints it *before* the dash, where kpt reads it as the previous item's
    foot comment (see notes/krm-conventions.md §3.3).  Moved onto the first
    key it prints as ``-`` / ``  # c``, which :func:`dump_rt` joins back.
    """
    _each_sequence(node, _comments_to_first_key)


def restore_seq_item_comments(node: Any) -> None:
    """Undo :func:`_move_seq_item_comments`: put the comments back in ruamel's slot."""
    _each_sequence(node, _comments_to_sequence_slot)


def _each_sequence(node: Any, visit: Callable[[Any], None], depth: int = 0) -> None:
    """Call ``visit`` on every sequence of a round-trip tree, refusing what cannot round-trip."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if depth > MAX_DEPTH:
        raise KrmError(f"input is nested deeper than {MAX_DEPTH} levels")
    anchor = getattr(getattr(node, "anchor", None), "value", None)
    if anchor and ":" in anchor:
        # ruamel reads `&a: b` as anchor `a:`, libyaml as anchor `a` on `{null: b}`;
        # re-printing such a node would change it or break the YAML.
        raise KrmError(f"the anchor &{anchor} holds ':', which YAML parsers read differently; rename it")
    if isinstance(node, CommentedSeq):
        visit(node)
        for value in node:
            _each_sequence(value, visit, depth + 1)
    elif isinstance(node, CommentedMap):
        for value in node.values():
            _each_sequence(value, visit, depth + 1)


def _comments_to_first_key(seq: Any) -> None:
    from ruamel.yaml.comments import CommentedMap

    for idx, entry in list(seq.ca.items.items()):
        if not (isinstance(entry, list) and len(entry) > 1 and entry[1]):
            continue
        if not isinstance(idx, int) or idx >= len(seq):
            continue
        item = seq[idx]
        if isinstance(item, CommentedMap) and len(item):
            slot = item.ca.items.setdefault(next(iter(item)), [None, None, None, None])
            slot[1] = list(entry[1]) + list(slot[1] or [])
            entry[1] = None


def _comments_to_sequence_slot(seq: Any) -> None:
    from ruamel.yaml.comments import CommentedMap

    for idx, item in enumerate(seq):
        if isinstance(item, CommentedMap) and len(item):
            slot = item.ca.items.get(next(iter(item)))
            if slot and len(slot) > 1 and slot[1]:
                entry = seq.ca.items.setdefault(idx, [None, None, None, None])
                entry[1] = list(slot[1]) + list(entry[1] or [])
                slot[1] = None


_BARE_DASH_COMMENT = re.compile(r"^( *)-\n\1  (#[^\n]*)$", re.M)


def dump_rt(node: Any, wide: bool = False) -> str:
    """Print a round-trip tree the way kyaml would (``- # comment`` form)."""
    buf = io.StringIO()
    new_rt_yaml(wide).dump(node, buf)
    return _BARE_DASH_COMMENT.sub(r"\1- \2", buf.getvalue())


# A block sequence under a key: the dash indented deeper than the key means
# kpt's "wide" style (its seqindent annotation), level with it "compact".
_FIRST_BLOCK_SEQUENCE = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", re.M)


def uses_wide_sequences(text: str) -> bool:
    """True when the first block sequence of ``text`` is indented under its key."""
    m = _FIRST_BLOCK_SEQUENCE.search(text)
    return m is not None and len(m.group(2)) > len(m.group(1))
