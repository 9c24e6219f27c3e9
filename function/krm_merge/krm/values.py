"""The one home of four concepts every algorithm shares: deep equality, field paths, resource labels,
and how large a value krm-merge shows or records may be.

Each has exactly one implementation here; ``tests/architecture/test_one_home.py``
fails when a second one appears elsewhere.  The module imports nothing but ``re``
and ``json`` so the fast paths (and promote's text-only path) can use it
without loading a YAML library.
"""

from __future__ import annotations

import functools
import json
import re

from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Sequence


class Label(Record):
    """A list element named by what identifies it (``name=app``), written ``[name=app]`` in a path.

    Labels come from merge keys (merge3, SMP) and are for people to read: the
    text is written as is, so only labels without ``]`` read back.
    """

    text: str


PathPart = str | int | Label
Path = tuple[PathPart, ...]

# --- deep equality ------------------------------------------------------------------------

# The JSON kinds of YAML data; a loader's subclass (ruamel's ScalarFloat, a str
# subclass) counts as its base, because only the data, not the reader, is compared.
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (dict, "map"), (list, "list"),
)


def _kind(value: Any) -> str:
    exact = type(value)
    for base, name in _KINDS:
        if exact is base:
            return name
    if value is None:
        return "null"
    for base, name in _KINDS:  # bool before int: True is an int to Python, not to YAML
        if isinstance(value, base):
            return name
    return exact.__name__


def deep_equal(a: Any, b: Any) -> bool:
    """Equality of YAML/JSON data, the project's only one.

    Type-aware like Go's ``reflect.DeepEqual`` on decoded JSON: ``1``, ``1.0``,
    ``True`` and ``"1"`` all differ, and list order matters.  One deliberate
    difference: ``.nan`` equals ``.nan``.  This compares documents as data (is
    the edited text the data we meant?  did a field change?), and a document
    holding ``.nan`` is the same document when read twice; Go's NaN != NaN is an
    arithmetic rule, and Kubernetes never compares a NaN anyway (its JSON cannot
    hold one).
    """
    if a is b:
        return True
    kind = _kind(a)
    if kind != _kind(b):
        return False
    if kind == "map":
        return len(a) == len(b) and all(key in b and deep_equal(value, b[key]) for key, value in a.items())
    if kind == "list":
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if kind == "float" and a != a:
        return bool(b != b)
    return bool(a == b)


same = deep_equal
"""The name most of the code base calls :func:`deep_equal` by."""

# --- field paths --------------------------------------------------------------------------

# Keys written bare: letters and digits of any script (re's \w), "_", "-", "$", "/".  Any
# other key is written ["..."] with \\ and \" escaped (docs/promote.md's fieldPath grammar).
# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs them does not pay for compiling them at start-up (issue 24).
@functools.cache
def _bare_key() -> re.Pattern[str]:
    return re.compile(r"[\w$/-]+")


@functools.cache
def _part() -> re.Pattern[str]:
    return re.compile(r"""([^.\[\]]+)|\[(-?\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\[(?!")([^\]]*)\]""")


def format_key(key: str) -> str:
    """One map key as a path segment: bare when safe, else ``["..."]`` with escapes."""
    if _bare_key().fullmatch(key):
        return key
    return '["' + key.replace("\\", "\\\\").replace('"', '\\"') + '"]'


def format_path(parts: Sequence[PathPart]) -> str:
    """The one written form of a field path: ``spec.containers[0].image``, ``[name=app]`` labels, odd keys quoted."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, Label):
            out.append(f"[{part.text}]")
        elif isinstance(part, int):
            out.append(f"[{part}]")
        else:
            key = format_key(str(part))
            out.append(("." if out and key[0] != "[" else "") + key)
    return "".join(out)


def parse_path(path: str | Sequence[PathPart], *, labels: bool = False, strict: bool = False) -> Path:
    """``'spec.containers[0].image'`` → ``("spec", "containers", 0, "image")``; the inverse of :func:`format_path`.

    A tuple or list is taken as already split.  ``labels``: ``[name=app]`` reads
    as a :class:`Label` (else it is an error: most callers need a path into the
    data).  ``strict``: separators exactly as :func:`format_path` writes them
    (one dot before a bare key, none before a bracket); otherwise stray dots are
    skipped.  ValueError names the path when it is not one.
    """
    if not isinstance(path, str):
        return tuple(path)
    parts: list[PathPart] = []
    pos = 0
    part = _part()
    while pos < len(path):
        dotted = path[pos] == "."
        if dotted:
            pos += 1
            if not strict:
                continue
        m = part.match(path, pos)
        if not m or (strict and dotted != (bool(parts) and m.group(1) is not None)):
            raise ValueError(f"bad field path {path!r} at {pos}")
        parts.append(_part_of(m, path, labels))
        pos = m.end()
    return tuple(parts)


def _part_of(m: re.Match[str], path: str, labels: bool) -> PathPart:
    bare, index, quoted, label = m.groups()
    if bare is not None:
        return bare
    if index is not None:
        return int(index)
    if quoted is not None:
        return re.sub(r"\\(.)", r"\1", quoted)
    if not labels:
        what = "selector paths are" if "=" in label else "this list element label is"
        raise ValueError(f"{what} not supported here: {path!r}")
    return Label(label)


def get_path(data: Any, path: Sequence[PathPart], default: Any = None) -> Any:
    """Follow ``path`` through maps and lists; ``default`` where it leads nowhere."""
    node = data
    for part in path:
        if isinstance(part, Label):
            return default
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                return default
            node = node[part]
        else:
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
    return node


# --- values in messages and records ------------------------------------------------------

# A value comes from the package or its upstream, and YAML aliases let a few bytes stand for
# gigabytes once expanded; everything krm-merge prints or records of a value is bounded.
MESSAGE_VALUE_CHARS = 1_000
"""A value in a message (a result line, a report, ``conflicts``' listing): longer ones are cut."""
RECORDED_VALUE_CHARS = 64 * 1024
"""A value krm-merge records to write back later (a conflict marker): a longer one is not recorded."""


class _Piece(str):
    """Punctuation of a rendering (``[``, ``, ``...), told apart from a string value."""


class _Style(Record):
    scalars_as_json: bool  # strings quoted (JSON) or written as they are
    ensure_ascii: bool
    item_separator: str
    key_separator: str


_MESSAGE = _Style(False, True, ", ", ": ")  # as json.dumps writes a collection by default
_RECORD = _Style(True, False, ",", ":")  # compact JSON, as a marker carries it


def render_value(value: Any, limit: int = MESSAGE_VALUE_CHARS, *, as_json: bool = False,
                 scalar: Callable[[Any], Any] | None = None) -> str:
    """A value for a message, cut past ``limit`` characters: a scalar as it is (``str``), a collection as JSON
    (``as_json``: compact JSON, scalars too, as a marker writes them).

    A cut value ends with a visible elision and its size
    (``… (cut: 1000 of about 102400512 characters)``).  Never builds more than
    ``limit`` characters (plus one scalar's ``limit``): a list of a thousand
    aliases to a 100 KB string costs what its first ``limit`` characters cost,
    not 100 MB.  Iterative, so any depth the loader accepts is rendered.
    ``scalar`` converts a reader's scalar type (ruamel's) to plain data first.
    """
    style = _RECORD if as_json else _MESSAGE
    if isinstance(value, (dict, list)):
        text = "".join(_take(_pieces(value, limit + 1, style, scalar), limit + 1))
    else:
        text = _scalar_text(value, limit + 1, style, scalar)
    return text if len(text) <= limit else _cut(text[:limit], value)


def value_json(value: Any, limit: int = RECORDED_VALUE_CHARS, *, scalar: Callable[[Any], Any] | None = None,
               ) -> str | None:
    """``value`` as compact JSON (non-ASCII kept) when that takes at most ``limit`` characters, else None.

    For a value krm-merge writes into a file to read back (a conflict
    marker): it is written whole or not at all, and finding out costs at
    most ``limit`` characters of work.
    """
    if isinstance(value, (dict, list, tuple)):
        text = "".join(_take(_pieces(value, limit + 1, _RECORD, scalar), limit + 1))
    else:  # a scalar is one piece: _pieces' answer without its machinery (a marker costs two of these)
        text = _scalar_text(value, limit + 1, _RECORD, scalar)
    return text if len(text) <= limit else None


def value_size(value: Any) -> int:
    """About how many characters ``value`` takes written out (escapes not counted): each shared part once per use,
    but walked once (a list of aliases costs its length, not the size it expands to)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if id(node) in sizes:
            continue
        children = [part for pair in node.items() for part in pair] if isinstance(node, dict) else node
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if isinstance(child, (dict, list)))
            continue
        sizes[id(node)] = 2 + max(0, len(children) - 1) * 2 + sum(
            sizes.get(id(child), 0) if isinstance(child, (dict, list)) else _scalar_size(child) for child in children)
    return sizes[id(value)] if isinstance(value, (dict, list)) else _scalar_size(value)


def _scalar_size(value: Any) -> int:
    return len(value) + 2 if isinstance(value, str) else len(str(value))


def _cut(shown: str, value: Any) -> str:
    return f"{shown}… (cut: {len(shown)} of about {value_size(value)} characters)"


def _take(pieces: Iterator[str], limit: int) -> Iterator[str]:
    """The pieces until ``limit`` characters are reached (the last one may pass it)."""
    size = 0
    for piece in pieces:
        yield piece
        size += len(piece)
        if size >= limit:
            return


def _pieces(value: Any, cap: int, style: _Style, scalar: Callable[[Any], Any] | None) -> Iterator[str]:
    """The rendering of ``value`` piece by piece, depth-first without recursion; each string cut at ``cap``."""
    stack: list[Iterator[Any]] = [iter((value,))]
    quoted = style if style.scalars_as_json else style._replace(scalars_as_json=True)  # scalars inside JSON
    while stack:
        item = next(stack[-1], stack)
        if item is stack:  # that iterator is done
            stack.pop()
        elif type(item) is _Piece:
            yield item
        elif isinstance(item, dict):
            stack.append(_map_parts(item, cap, style, scalar))
        elif isinstance(item, (list, tuple)):
            stack.append(_list_parts(item, style))
        else:
            yield _scalar_text(item, cap, quoted, scalar)


def _map_parts(node: dict[Any, Any], cap: int, style: _Style, scalar: Callable[[Any], Any] | None) -> Iterator[Any]:
    yield _Piece("{")
    for index, (key, item) in enumerate(node.items()):
        key_text = _json(str(key)[:cap], style.ensure_ascii)
        yield _Piece((style.item_separator if index else "") + key_text + style.key_separator)
        yield item
    yield _Piece("}")


def _list_parts(node: Sequence[Any], style: _Style) -> Iterator[Any]:
    yield _Piece("[")
    for index, item in enumerate(node):
        if index:
            yield _Piece(style.item_separator)
        yield item
    yield _Piece("]")


def _scalar_text(value: Any, cap: int, style: _Style, scalar: Callable[[Any], Any] | None) -> str:
    """One scalar: at most ``cap`` characters of a string are ever copied or encoded."""
    if isinstance(value, str):
        value = value[:cap]  # a plain str, whatever subclass the reader made
    elif scalar is not None:
        value = scalar(value)
    if not style.scalars_as_json:
        return "null" if value is None else str(value)[:cap]
    if value is None or isinstance(value, (str, bool, int, float)):
        return _json(value, style.ensure_ascii)
    return _json(str(value)[:cap], style.ensure_ascii)  # as json.dumps(default=str) writes it


def _json(value: Any, ensure_ascii: bool) -> str:
    return _encoder(ensure_ascii).encode(value)  # json.dumps(value, ensure_ascii=...) without a new encoder each time


@functools.cache
def _encoder(ensure_ascii: bool) -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=ensure_ascii)


# --- resource labels ----------------------------------------------------------------------


LABEL_PART_CHARS = 253
"""A kind, name or namespace in a message: Kubernetes' longest name (a DNS subdomain); a longer one is cut."""


def resource_label(kind: str, name: str, namespace: str = "") -> str:
    """``Kind/[namespace/]name``, how every message names a resource; ``?`` for a missing part, "" with neither.

    Each part is cut past :data:`LABEL_PART_CHARS` (:func:`render_value`): a name an upstream made a
    megabyte long is printed in every message about its resource.
    """
    if not kind and not name:
        return ""
    kind, name, namespace = (render_value(part, LABEL_PART_CHARS)
                             if isinstance(part, str) and len(part) > LABEL_PART_CHARS else part
                             for part in (kind, name, namespace))
    return f"{kind or '?'}/{namespace + '/' if namespace else ''}{name or '?'}"
