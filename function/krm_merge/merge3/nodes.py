"""Node helpers for the 3-way merge: absence, node kinds, comments, equality as data.

The engine's default trees are ruamel.yaml round-trip trees (``CommentedMap``
/ ``CommentedSeq`` / scalars): :data:`ROUND_TRIP` is their
:class:`~.visit.Representation`, the node operations the walker and the
visitor ask for (:mod:`.plain` is the other one, plain data).  ``None`` is an
explicit YAML null (``key:``, ``null``, ``~``); :data:`MISSING` means "the
field is not there at all".

ruamel.yaml is reached through its one door (:func:`krm_merge.yaml.load.ruamel`)
when a round-trip node is first met, never at import: the update's merge of
plain data (issue 45) imports this module for :data:`MISSING` and the node
kinds, and must not pay for ruamel.
"""

from __future__ import annotations

import copy
import functools
from enum import Enum
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

from krm_merge.krm.rtedit import literal_can_hold
from krm_merge.krm.values import render_value
from krm_merge.krm.values import same as values_same
from krm_merge.yaml import load


class _RuamelTypes:
    """ruamel.yaml's node classes this module tests nodes against."""

    def __init__(self, ry: Any) -> None:
        strings = ry.scalarstring
        self.CommentedBase, self.CommentedMap = ry.comments.CommentedBase, ry.comments.CommentedMap
        self.CommentedSeq, self.ScalarBoolean = ry.comments.CommentedSeq, ry.scalarbool.ScalarBoolean
        self.Literal, self.Folded = strings.LiteralScalarString, strings.FoldedScalarString
        self.SingleQuoted = strings.SingleQuotedScalarString
        self.styles = (strings.SingleQuotedScalarString, strings.DoubleQuotedScalarString,
                       strings.LiteralScalarString, strings.FoldedScalarString)


@functools.cache
def _rt() -> _RuamelTypes:
    """ruamel.yaml's node classes, looked up once (through the one door to ruamel)."""
    return _RuamelTypes(load.ruamel())


def _commented(node: Any) -> TypeGuard[Any]:
    """Whether ``node`` is a round-trip container (plain dicts and lists never load ruamel to say no)."""
    return type(node) not in (dict, list) and isinstance(node, _rt().CommentedBase)


class _Missing:
    """Marker for an absent field (distinct from an explicit null)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class NodeKind(Enum):
    """The three YAML node kinds the walker dispatches on."""

    MAP = "map"
    SEQ = "sequence"
    SCALAR = "scalar"


def kind_of(node: Any) -> NodeKind:
    """Kind of a present, non-null node."""
    if isinstance(node, dict):
        return NodeKind.MAP
    if isinstance(node, list):
        return NodeKind.SEQ
    return NodeKind.SCALAR


def is_absent(node: Any) -> bool:
    """True for a missing field or an explicit null."""
    return node is MISSING or node is None


def present(node: Any) -> bool:
    """True when the field exists (an explicit null counts as present)."""
    return node is not MISSING


def child(container: Any, key: Any) -> Any:
    """``container[key]`` or :data:`MISSING` (containers may themselves be absent)."""
    if isinstance(container, dict):
        return container.get(key, MISSING) if key in container else MISSING
    return MISSING


# --- comments -------------------------------------------------------------

def _token_text(tok: Any) -> Any:
    if tok is None:
        return None
    if isinstance(tok, list):
        return tuple(_token_text(t) for t in tok)
    return getattr(tok, "value", tok)


def key_comment(container: Any, key: Any) -> Any:
    """Comparable text of the comments attached to ``key`` (or list index).

    ruamel keeps a key's line comment (and following comment lines) in the
    parent's ``ca.items[key]``; a container value also carries it as its own
    ``ca.comment``.  Both are part of the signature so either place counts.
    """
    if not _commented(container):
        return None
    entry = container.ca.items.get(key)
    own = None
    value = _value(container, key) if _has(container, key) else None
    if _commented(value) and value.ca.comment:
        own = _token_text(value.ca.comment[0])
    return (_token_text(entry) if entry else None, own)


def _value(container: Any, key: Any) -> Any:
    """``container[key]`` (the caller checked it exists)."""
    return container[key]


def _has(container: Any, key: Any) -> bool:
    if isinstance(container, dict):
        return key in container
    return isinstance(key, int) and 0 <= key < len(container)


def copy_key_comment(dst: Any, dst_key: Any, src: Any, src_key: Any) -> None:
    """Make ``dst[dst_key]`` carry the comments ``src[src_key]`` has."""
    if not _commented(dst):
        return
    entry = src.ca.items.get(src_key) if _commented(src) else None
    if entry:
        dst.ca.items[dst_key] = copy.copy(entry)
    else:
        dst.ca.items.pop(dst_key, None)
    dval = _value(dst, dst_key) if _has(dst, dst_key) else None
    sval = src[src_key] if isinstance(src, (dict, list)) and _has(src, src_key) else None
    if _commented(dval):
        first = sval.ca.comment[0] if _commented(sval) and sval.ca.comment else None
        _set_own_comment(dval, first)


def save_key_comment(container: Any, key: Any) -> tuple[Any, Any]:
    """Snapshot of a key's comments (parent entry, value's own first comment)."""
    if not _commented(container) or not _has(container, key):
        return (None, None)
    entry = container.ca.items.get(key)
    value = _value(container, key)
    own = value.ca.comment[0] if _commented(value) and value.ca.comment else None
    return (copy.copy(entry) if entry else None, own)


def restore_key_comment(container: Any, key: Any, saved: tuple[Any, Any]) -> None:
    """Put a snapshot from :func:`save_key_comment` back on ``container[key]``."""
    if not _commented(container):
        return
    entry, own = saved
    if entry:
        container.ca.items[key] = entry
    else:
        container.ca.items.pop(key, None)
    value = _value(container, key)
    if _commented(value):
        _set_own_comment(value, own)


def _set_own_comment(value: Any, token: Any) -> None:
    """Set a container's own key comment; an all-empty comment slot must be None for ruamel."""
    if token is None:
        if value.ca.comment and not any(value.ca.comment[1:]):
            value.ca.comment = None
        elif value.ca.comment:
            value.ca.comment[0] = None
    elif value.ca.comment:
        value.ca.comment[0] = token
    else:
        value.ca.comment = [token, None]


def add_line_comment(container: Any, key: Any, text: str, replacing: str | None = None) -> None:
    """Put ``text`` (``# ...``) at the end of the line of ``container[key]``.

    A comment already on that line is kept and ``text`` follows it: ruamel's
    own ``yaml_add_eol_comment`` would replace it; only the part from
    ``replacing`` on (an older comment of the same kind) is dropped.  A key
    whose value is a block map or list gets it on the key's line, where
    ruamel keeps it.
    """
    if not _commented(container):
        return
    entry = container.ca.items.get(key)
    value = _value(container, key) if _has(container, key) else None
    if isinstance(value, (_rt().Literal, _rt().Folded)):
        # After the value the comment would be read as part of the text: it goes after `|` / `>`.
        own = _cut(getattr(value, "comment", None) or "", replacing).rstrip()
        value.comment = f"{own} {text}"
        if entry and len(entry) > 3 and entry[3]:
            entry[3] = [value.comment]  # ruamel keeps a loaded header comment here too
        return
    token = entry[2] if entry and len(entry) > 2 else None
    if token is None:
        # Column 0: one space after the value, as kpt's printer (go-yaml) writes a line comment.  ruamel
        # would align it with a neighbour's comment or put two spaces, and `kpt fn render` rewrites both.
        container.yaml_add_eol_comment(text, key, column=0)
        return
    # the token may carry the comment lines that follow: the marker goes before the first newline
    first, newline, rest = token.value.partition("\n")
    kept = _cut(first, replacing).rstrip()
    token.value = f"{kept} {text}{newline}{rest}" if kept else f"{text}{newline}{rest}"


def _cut(comment: str, replacing: str | None) -> str:
    """``comment`` up to ``replacing`` (all of it when absent)."""
    at = comment.find(replacing) if replacing else -1
    return comment if at < 0 else comment[:at]


def drop_key_comment(container: Any, key: Any) -> None:
    """Forget the comments of a key that is being removed."""
    if _commented(container):
        container.ca.items.pop(key, None)


# --- values ---------------------------------------------------------------

def plain(node: Any) -> Any:
    """Hashable identity of a scalar (a scalar set's element key): type and value."""
    node = to_plain_data(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, str):
        return ("s", node)
    if isinstance(node, float):
        return ("n", node)
    if isinstance(node, int):
        return ("i", node)
    return ("o", str(node))


def same(a: Any, b: Any) -> bool:
    """Equal as data (either may be MISSING).

    Comments, key order, layout and quoting style are not differences;
    types are (``1``, ``1.0``, ``true`` and ``"1"`` differ) — the project's
    one equality, :func:`krm_merge.krm.values.same`, on plain data.
    """
    if a is MISSING or b is MISSING:
        return a is b
    return values_same(to_plain_data(a), to_plain_data(b))


def restyle(new: Any, old: Any) -> Any:
    """Give an incoming string the quoting style of the local value it replaces."""
    if not isinstance(new, str) or not isinstance(old, str) or type(old) is str:
        return new
    rt = _rt()
    for style in rt.styles:
        if isinstance(old, style):
            if style in (rt.Literal, rt.Folded):
                if "\n" not in new or not literal_can_hold(new):
                    return new
            elif style is rt.SingleQuoted and not new.isprintable():
                return new  # control characters need double quotes' escapes
            return style(str(new))
    return new


def new_map() -> Any:
    """An empty round-trip map (keys added later are appended)."""
    return _rt().CommentedMap()


def new_seq(items: list[Any] | None = None) -> Any:
    """A round-trip sequence holding ``items``."""
    seq = _rt().CommentedSeq()
    if items:
        seq.extend(items)
    return seq


def render(node: Any) -> str:
    """Short human-readable rendering of a node for messages and results (bounded: :func:`krm_merge.krm.values.render_value`)."""
    if node is MISSING:
        return "<absent>"
    return render_value(node, scalar=to_plain_data)


def to_plain_data(node: Any) -> Any:
    """Convert a round-trip tree to plain dicts/lists/scalars (ruamel's scalar types dropped).

    What the tree shares (a YAML alias is the anchored node itself) stays
    shared, as libyaml's plain data shares it: a list of a thousand aliases
    of one 100 KB string is one string, not 100 MB of copies.  Iterative, so
    any depth the loader accepts converts.
    """
    if not isinstance(node, (dict, list)):
        return _plain_scalar(node)
    done: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []

    def plain_of(item: Any) -> Any:
        found = done.get(id(item))
        if found is not None:
            return found
        if isinstance(item, dict):
            made: Any = {}
        elif isinstance(item, list):
            made = []
        else:
            made = _plain_scalar(item)
            if made is item:
                return made
        done[id(item)] = made
        if isinstance(made, (dict, list)):
            pending.append((item, made))
        return made

    root = plain_of(node)
    while pending:
        source, target = pending.pop()
        if isinstance(source, dict):
            for key, value in source.items():
                target[str(plain_of(key))] = plain_of(value)
        else:
            target.extend(plain_of(value) for value in source)
    return root


def _plain_scalar(node: Any) -> Any:
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, str):
        return str(node)
    if isinstance(node, int):
        if type(node) is int:
            return node
        # a subclass only ruamel makes: an anchored boolean is one (ScalarBoolean), else a styled int
        return bool(node) if isinstance(node, _rt().ScalarBoolean) else int(node)
    if isinstance(node, float):
        return float(node)
    return node


def replace_items(seq: Any, items: list[Any], origins: list[int | None]) -> None:
    """Replace the elements of ``seq``, keeping each surviving element's own comments (``origins``: its old index)."""
    old_comments = dict(seq.ca.items) if hasattr(seq, "ca") else {}
    seq[:] = items
    if hasattr(seq, "ca"):
        seq.ca.items.clear()
        for new_i, old_i in enumerate(origins):
            if old_i is not None and old_i in old_comments:
                seq.ca.items[new_i] = old_comments[old_i]


class RoundTrip:
    """ruamel.yaml's round-trip trees as a :class:`~.visit.Representation`: comments kept and merged."""

    comments = True
    key_comment = staticmethod(key_comment)
    save_key_comment = staticmethod(save_key_comment)
    restore_key_comment = staticmethod(restore_key_comment)
    copy_key_comment = staticmethod(copy_key_comment)
    drop_key_comment = staticmethod(drop_key_comment)
    add_line_comment = staticmethod(add_line_comment)
    new_map = staticmethod(new_map)
    new_seq = staticmethod(new_seq)
    same = staticmethod(same)
    restyle = staticmethod(restyle)
    render = staticmethod(render)
    to_plain_data = staticmethod(to_plain_data)
    replace_items = staticmethod(replace_items)


ROUND_TRIP = RoundTrip()
"""The engine's default representation (every merge but the update's merge of plain data)."""
