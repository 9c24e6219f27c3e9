"""A fast reader and minimal-text editor for the block YAML that kyaml prints.

Most items a KRM function sees are in kyaml's canonical shape: block maps,
block sequences (compact or wide), one-line scalars, a few one-line flow
collections and literal block scalars.  For that subset this module

* parses the text line by line into plain data *exactly* equal to what
  :func:`krm_merge.krm.yamlio.load_data` returns (YAML 1.1 scalar types as
  PyYAML's safe loader resolves them, timestamps kept as strings), together
  with a position tree (line spans of every entry, column spans of scalars);
* rewrites the text to hold new data by splicing lines: changed scalars in
  place (quote style kept), deleted entries removed with the comment lines
  that follow them, new entries inserted after their predecessor, list
  elements moved as whole line blocks.

Both give up (return None) on anything outside the subset or any edit they
are not sure to print exactly as the ruamel.yaml path would (anchors, tags,
multi-line flow or plain scalars, folded scalars, changed block scalars,
containers that become empty, ...).  The caller then falls back to libyaml /
ruamel.yaml, so giving up is always safe.

Comment ownership follows ruamel.yaml: a comment line belongs to the entry
*before* it (it moves and disappears with that entry); comments between a
key and its first child belong to the key.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

from krm_merge.krm import yamlio
from krm_merge.krm.values import same

# --- position tree -----------------------------------------------------------------


class ScalarPos:
    """Where a scalar (or a one-line flow collection) is written.

    ``line`` holds the value between columns ``start`` and ``end``; ``style``
    is one of ``plain``, ``single``, ``double``, ``empty`` (nothing written,
    read as null), ``flow`` or ``literal`` (a block scalar whose content runs
    to the end of its entry).  ``comment`` is the column of an end-of-line
    comment, or -1.
    """

    __slots__ = ("line", "start", "end", "style", "comment")

    def __init__(self, line: int, start: int, end: int, style: str, comment: int) -> None:
        self.line = line
        self.start = start
        self.end = end
        self.style = style
        self.comment = comment


class Entry:
    """One map entry or sequence element: lines ``start`` up to ``stop``.

    ``stop`` is where the next sibling starts (or where the container ends),
    so the block includes the comment lines that follow the entry.
    ``inline`` says the value begins on the entry's first line.
    """

    __slots__ = ("start", "stop", "value", "inline")

    def __init__(self, start: int, value: Any, inline: bool) -> None:
        self.start = start
        self.stop = start
        self.value = value
        self.inline = inline


class MapPos:
    """A block mapping whose keys are at column ``indent``.

    ``dash_line`` is the line index when the first key shares its line with a
    sequence dash (``- name: x``), else -1.
    """

    __slots__ = ("indent", "entries", "dash_line")

    def __init__(self, indent: int, dash_line: int) -> None:
        self.indent = indent
        self.entries: dict[Any, Entry] = {}
        self.dash_line = dash_line


class SeqPos:
    """A block sequence whose dashes are at column ``indent``."""

    __slots__ = ("indent", "items")

    def __init__(self, indent: int) -> None:
        self.indent = indent
        self.items: list[Entry] = []


Node = ScalarPos | MapPos | SeqPos


class Parsed:
    """The result of :func:`parse`: plain data, its positions and the text they refer to."""

    __slots__ = ("data", "root", "text", "comment_after_flow")

    def __init__(self, data: Any, root: MapPos, text: str, comment_after_flow: bool = False) -> None:
        self.data = data
        self.root = root
        # The text, not its lines: items stay parsed until edited, and the lines
        # would cost more memory than the text; splitting again is cheap.
        self.text = text
        # ruamel ties a comment line after a flow collection or an empty value
        # to the *next* key, unlike every other comment; entries are then not
        # moved, added or removed here.
        self.comment_after_flow = comment_after_flow


class _Unsupported(Exception):
    """Raised inside the parser/editor when the input leaves the fast subset."""


class _Nothing:
    """A marker distinct from every YAML value (None included)."""


_NOTHING: Any = _Nothing()


# --- scalar resolution (YAML 1.1, as PyYAML's SafeLoader) ----------------------------

# YAML 1.1's implicit types for plain scalars, the patterns of PyYAML's
# resolver (and so of the libyaml-backed loader in yamlio) minus timestamps,
# which stay strings.  Kept here so the fast path needs no PyYAML at all;
# tests/krm/test_fastyaml.py checks them against the loader.
_BOOL_RX = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")
_FLOAT_RX = re.compile(
    r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_INT_RX = re.compile(
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
)
_NULL_RX = re.compile(r"~|null|Null|NULL|")
_BOOL_FIRST = frozenset("yYnNtTfFoO")
_NUMBER_FIRST = frozenset("-+0123456789.")
_BOOL = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


@functools.lru_cache(maxsize=8192)
def _plain_key(text: str) -> Any:
    """A plain key's value, or ``_NOTHING`` if the text is not a key the fast path reads."""
    if not _KEY_TEXT_RX.fullmatch(text):
        return _NOTHING
    return _resolve_plain(text)


# Scalars repeat across items (keys, images, labels): resolving is memoised.
@functools.lru_cache(maxsize=8192)
def _resolve_plain(text: str) -> Any:
    """The value of a plain scalar as the libyaml-backed loader builds it."""
    first = text[:1]
    if first in _BOOL_FIRST and _BOOL_RX.fullmatch(text):
        return _BOOL[text.lower()]
    if first in _NUMBER_FIRST and first:
        if _FLOAT_RX.fullmatch(text):
            return _construct_float(text)
        if _INT_RX.fullmatch(text):
            return _construct_int(text)
    if (first in "~nN" or not text) and _NULL_RX.fullmatch(text):
        return None
    if text in ("<<", "="):
        raise _Unsupported("merge key or value tag")
    return text


def _construct_int(text: str) -> int:
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        return sign * _sexagesimal(value)
    return sign * int(value)


def _construct_float(text: str) -> float:
    value = text.replace("_", "").lower()
    sign = -1.0 if value[0] == "-" else 1.0
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        raise _Unsupported("sexagesimal float")
    return sign * float(value)


def _sexagesimal(value: str) -> int:
    total = 0
    for part in value.split(":"):
        total = total * 60 + int(part)
    return total


_ESCAPES = {
    "0": "\0", "a": "\x07", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b",
    "f": "\x0c", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_ESCAPE_RX = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


def _unescape(inner: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in _HEX_ESCAPES and len(code) > 1:
            return chr(int(code[1:], 16))
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise _Unsupported("escape")

    return _ESCAPE_RX.sub(one, inner)


# --- the parser ------------------------------------------------------------------

# Plain keys the fast reader accepts: the characters Kubernetes keys use.
_KEY_TEXT_RX = re.compile(r"[A-Za-z0-9_$.\/+~()=](?:[A-Za-z0-9_$.\/+~()=@ :-]*[A-Za-z0-9_$.\/+~()=@-])?")
# Characters a plain value may not start with (flow, quotes, anchors, tags, block indicators ...).
_PLAIN_BAD_FIRST = frozenset("[]{},#&*!|>'\"%@`")
# Flow-context plain scalars: a safe alphabet only.
_FLOW_PLAIN_RX = re.compile(r"[A-Za-z0-9_$.\/+=~()-][A-Za-z0-9_$.\/+=~() -]*")
# Control characters (tabs and CR included) leave the subset.  A character
# class over all of Unicode would cost ~25 ms to compile at start-up, so
# non-ASCII characters are checked one by one (they are rare).
_ASCII_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f]")


def _outside_charset(text: str) -> bool:
    """True when ``text`` holds a character the fast path does not read.

    Besides control characters: YAML 1.1's extra line breaks (NEL, LS, PS),
    C1 controls, the BOM, surrogates and non-characters.
    """
    if _ASCII_CONTROL.search(text):
        return True
    if text.isascii():
        return False
    for ch in set(text):
        code = ord(ch)
        if code < 0x80:
            continue
        if code < 0xA0 or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF) or 0xD800 <= code < 0xE000:
            return True
    return False


def parse(text: str) -> Parsed | None:
    """Parse a kyaml-shaped block mapping; None when the text leaves the subset."""
    if not text or _outside_charset(text):
        return None
    final_newline = text.endswith("\n")
    lines = text.split("\n")
    if final_newline:
        lines.pop()
    try:
        parser = _Parser(lines)
        result = parser.parse_document()
    except (_Unsupported, RecursionError, ValueError, OverflowError):
        return None
    if result is None:
        return None
    data, root = result
    return Parsed(data, root, text, parser.comment_after_flow)




# Line kinds (the second field of a line's info) and value kinds.
_KEY, _DASH = 0, 1
_EMPTY, _SCALAR, _FLOW, _LITERAL, _INLINE_MAP = 0, 1, 2, 3, 4
_BLANK: tuple = ()


@functools.lru_cache(maxsize=8192)
def _line_info(line: str) -> tuple:
    """What one structure line says, independent of where it is (so it is memoised:
    lines repeat across items).  ``_BLANK`` for blank and comment lines;
    ``(indent, _KEY, key, value info)`` or ``(indent, _DASH, value info)``.
    Only immutable values are cached; flow collections are parsed at each use.
    """
    stripped = line.lstrip(" ")
    if not stripped or stripped[0] == "#":
        return _BLANK
    indent = len(line) - len(stripped)
    if stripped[0] == "-" and (len(stripped) == 1 or stripped[1] == " "):
        col = indent + 1
        while col < len(line) and line[col] == " ":
            col += 1
        if col < len(line) and line[col] != "#":
            if line[col] == "-" and (col + 1 == len(line) or line[col + 1] == " "):
                raise _Unsupported("nested compact sequence")
            found = _match_key(line, col)
            if found is not None:
                return (indent, _DASH, (_INLINE_MAP, col, found[0], _value_info(line, found[1])))
        return (indent, _DASH, _value_info(line, col))
    found = _match_key(line, indent)
    if found is None:
        raise _Unsupported("not a key")
    return (indent, _KEY, found[0], _value_info(line, found[1]))


def _match_key(line: str, col: int) -> tuple[Any, int] | None:
    """The key at ``line[col:]`` and the column its value starts at, or None."""
    first = line[col]
    if first == "'" or first == '"':
        try:
            key, end = _quoted(line, col)
        except _Unsupported:
            return None
        if line[end : end + 1] != ":" or line[end + 1 : end + 2] not in ("", " "):
            return None
        rest = line[end + 1 :]
        return key, len(line) - len(rest.lstrip(" "))
    colon = line.find(": ", col)
    if colon < 0:
        if line[-1] != ":":
            return None
        colon = len(line) - 1
    key = _plain_key(line[col:colon])
    if key is _NOTHING:
        return None
    rest = line[colon + 1 :]
    return key, len(line) - len(rest.lstrip(" "))


def _value_info(line: str, col: int) -> tuple:
    """The value written at ``line[col:]``: (kind, ...) with columns for its position."""
    rest = line[col:]
    if not rest or rest[0] == "#":
        return (_EMPTY, col if rest else -1)
    first = rest[0]
    if first == "'" or first == '"':
        value, end = _quoted(line, col)
        return (_SCALAR, value, col, end, "single" if first == "'" else "double", _comment_after(line, end))
    if first in "[{":
        return (_FLOW, col)
    if first == "|" or first == ">":
        return _literal_header(line, col)
    if first in _PLAIN_BAD_FIRST or (first in "-?:" and (len(rest) == 1 or rest[1] == " ")):
        raise _Unsupported("indicator")
    hash_at = rest.find(" #")
    text = rest if hash_at < 0 else rest[:hash_at]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Unsupported("colon in plain scalar")
    comment = -1 if hash_at < 0 else col + hash_at + 1
    return (_SCALAR, _resolve_plain(text), col, col + len(text), "plain", comment)


def _comment_after(line: str, end: int) -> int:
    """Check only a comment follows column ``end``; return its column or -1."""
    tail = line[end:]
    stripped = tail.lstrip(" ")
    if not stripped:
        return -1
    if stripped[0] == "#" and len(stripped) < len(tail):
        return end + len(tail) - len(stripped)
    raise _Unsupported("text after scalar")


def _literal_header(line: str, col: int) -> tuple:
    header = line[col + 1 :]
    chomp = ""
    if header[:1] in ("-", "+"):
        chomp, header = header[0], header[1:]
    if header[:1].isdigit():
        raise _Unsupported("indentation indicator")
    folded = line[col] == ">"
    if folded and chomp == "+":
        raise _Unsupported("folded block keeping trailing lines")
    comment = -1
    if header.strip(" "):
        stripped = header.lstrip(" ")
        if stripped[0] != "#" or len(stripped) == len(header):
            raise _Unsupported("block scalar header")
        comment = col + 1 + len(chomp) + len(header) - len(stripped)
    return (_LITERAL, col, chomp, comment, folded)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class _Parser:
    """Recursive descent over lines; raises :class:`_Unsupported` to give up."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.n = len(lines)
        self.comment_after_flow = False

    def next_content(self, i: int) -> tuple[int, tuple]:
        """The first line at or after ``i`` that is neither blank nor a comment, and its info."""
        lines, n = self.lines, self.n
        while i < n:
            info = _line_info(lines[i])
            if info is not _BLANK:
                return i, info
            i += 1
        return n, _BLANK

    def parse_document(self) -> tuple[Any, MapPos] | None:
        i, info = self.next_content(0)
        if i >= self.n or info[0] != 0 or info[1] != _KEY:
            return None
        if self.lines[i].startswith(("---", "...", "%")):
            return None
        data, node, end = self.parse_map(i, 0, -1, info)
        if end != self.n:
            return None
        return data, node

    def parse_block(self, i: int, info: tuple) -> tuple[Any, Node, int]:
        """A block collection whose first line ``i`` (with ``info``) sets its indentation."""
        if info[1] == _DASH:
            return self.parse_seq(i, info[0], info)
        return self.parse_map(i, info[0], -1, info)

    def parse_map(self, i: int, indent: int, dash_line: int, info: tuple) -> tuple[dict, MapPos, int]:
        """``info`` is line ``i``'s; for a map opened on a dash line it is the inline-map info."""
        data: dict[Any, Any] = {}
        node = MapPos(indent, dash_line)
        entries = node.entries
        previous: Entry | None = None
        key, value_info = info[2], info[3]
        while True:
            if key in data or isinstance(key, float):
                raise _Unsupported("duplicate key")
            value, pos, nxt, inline = self.parse_value(i, value_info, indent, True)
            entry = Entry(i, pos, inline)
            if previous is not None:
                previous.stop = i
            previous = entry
            data[key] = value
            entries[key] = entry
            j, info = self.next_content(nxt)
            if j >= self.n or info[0] < indent:
                entry.stop = j
                return data, node, j
            if info[0] > indent or info[1] != _KEY:
                raise _Unsupported("unexpected line in a mapping")
            i = j
            key, value_info = info[2], info[3]

    def parse_seq(self, i: int, indent: int, info: tuple) -> tuple[list, SeqPos, int]:
        data: list[Any] = []
        node = SeqPos(indent)
        previous: Entry | None = None
        while True:
            inner = info[2]
            pos: Node
            if inner[0] == _INLINE_MAP:
                value, pos, nxt = self.parse_map(i, inner[1], i, inner)
                inline = True
            else:
                value, pos, nxt, inline = self.parse_value(i, inner, indent, False)
                if isinstance(pos, MapPos) and pos.dash_line < 0:
                    pos.dash_line = i  # `- # comment` or a bare dash: ruamel ties the line to the first key
            entry = Entry(i, pos, inline)
            if previous is not None:
                previous.stop = i
            previous = entry
            data.append(value)
            node.items.append(entry)
            j, info = self.next_content(nxt)
            if j >= self.n or info[0] < indent:
                entry.stop = j
                return data, node, j
            if info[0] > indent:
                raise _Unsupported("unexpected indentation")
            if info[1] != _DASH:
                entry.stop = j
                return data, node, j
            i = j

    def parse_value(self, i: int, info: tuple, indent: int, in_map: bool) -> tuple[Any, Node, int, bool]:
        """The value of line ``i`` described by ``info``, in a container at ``indent``.

        Returns (value, position, first line after the value, inline).
        """
        kind = info[0]
        if kind == _SCALAR:
            return info[1], ScalarPos(i, info[2], info[3], info[4], info[5]), i + 1, True
        if kind == _EMPTY:
            j, nxt = self.next_content(i + 1)
            if j < self.n:
                ind = nxt[0]
                if ind > indent:
                    value, pos, end = self.parse_block(j, nxt)
                    return value, pos, end, False
                if in_map and ind == indent and nxt[1] == _DASH:
                    value, pos, end = self.parse_seq(j, ind, nxt)
                    return value, pos, end, False
            col = info[1] if info[1] >= 0 else len(self.lines[i])
            if j > i + 1:
                self.comment_after_flow = True  # no value token: ruamel ties the comments to the next key
            return None, ScalarPos(i, col, col, "empty", info[1]), i + 1, True
        if kind == _FLOW:
            line = self.lines[i]
            col = info[1]
            value, end = _FlowParser(line, _resolve_plain).parse(col)
            comment = _comment_after(line, end)
            if i + 1 < self.n and _line_info(self.lines[i + 1]) is _BLANK:
                self.comment_after_flow = True
            return value, ScalarPos(i, col, end, "flow", comment), i + 1, True
        if kind == _LITERAL:
            return self.literal(i, info, indent)
        raise _Unsupported("value")

    def literal(self, i: int, info: tuple, indent: int) -> tuple[Any, Node, int, bool]:
        _, col, chomp, comment, folded = info
        lines = self.lines
        n = self.n
        # The content indentation is the first non-blank line's.
        j = i + 1
        widest_blank = 0
        while j < n and not lines[j].strip(" "):
            widest_blank = max(widest_blank, len(lines[j]))
            j += 1
        if j >= n or _indent_of(lines[j]) <= indent:
            raise _Unsupported("empty block scalar")
        content = _indent_of(lines[j])
        if widest_blank > content:
            raise _Unsupported("blank line wider than content")
        end = j
        while end < n:
            text = lines[end]
            if text.strip(" ") and _indent_of(text) < content:
                break
            end += 1
        # Trailing blank lines: count them, then cut them off the content.
        last = end
        while last > i + 1 and not lines[last - 1].strip(" ") and len(lines[last - 1]) <= content:
            last -= 1
        body = [text[content:] if len(text) > content else "" for text in lines[i + 1 : last]]
        if folded:
            # Only the plain form: no blank or more-indented lines to keep.
            if any(not text or text[0] == " " for text in body):
                raise _Unsupported("folded block with blank or indented lines")
            value = " ".join(body)
        else:
            value = "\n".join(body)
        if chomp == "":
            value += "\n"
        elif chomp == "+":
            value += "\n" * (1 + end - last)
        style = "folded" if folded else "literal"
        return value, ScalarPos(i, col, len(lines[i]), style, comment), end, True


def _quoted(line: str, col: int) -> tuple[str, int]:
    """The one-line quoted scalar starting at ``line[col]`` and the column after it."""
    if line[col] == "'":
        j = col + 1
        while True:
            k = line.find("'", j)
            if k < 0:
                raise _Unsupported("multi-line single-quoted scalar")
            if k + 1 < len(line) and line[k + 1] == "'":
                j = k + 2
                continue
            return line[col + 1 : k].replace("''", "'"), k + 1
    j = col + 1
    while True:
        k = line.find('"', j)
        if k < 0:
            raise _Unsupported("multi-line double-quoted scalar")
        backslashes = 0
        b = k - 1
        while b > col and line[b] == "\\":
            backslashes += 1
            b -= 1
        if backslashes % 2:
            j = k + 1
            continue
        inner = line[col + 1 : k]
        return (_unescape(inner) if "\\" in inner else inner), k + 1


class _FlowParser:
    """One-line flow collections: ``[a, 'b']``, ``{k: v}``, ``{}``, ``[]``."""

    def __init__(self, line: str, plain: Callable[[str], Any]) -> None:
        self.line = line
        self.plain = plain

    def parse(self, pos: int) -> tuple[Any, int]:
        return self.collection(pos, 0)

    def skip(self, pos: int) -> int:
        line = self.line
        while pos < len(line) and line[pos] == " ":
            pos += 1
        if pos >= len(line):
            raise _Unsupported("multi-line flow collection")
        return pos

    def collection(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > 50:
            raise _Unsupported("deep flow")
        line = self.line
        is_map = line[pos] == "{"
        close = "}" if is_map else "]"
        out_map: dict[Any, Any] = {}
        out_seq: list[Any] = []
        pos = self.skip(pos + 1)
        if line[pos] == close:
            return (out_map if is_map else out_seq), pos + 1
        while True:
            if is_map:
                key, pos = self.scalar(pos, depth, True)
                if isinstance(key, (dict, list)) or key in out_map or isinstance(key, float):
                    raise _Unsupported("flow key")
                pos = self.skip(pos)
                if line[pos] != ":" or line[pos + 1 : pos + 2] != " ":
                    raise _Unsupported("flow key without value")
                pos = self.skip(pos + 1)
                value, pos = self.scalar(pos, depth, False)
                out_map[key] = value
            else:
                value, pos = self.scalar(pos, depth, False)
                out_seq.append(value)
            pos = self.skip(pos)
            if line[pos] == close:
                return (out_map if is_map else out_seq), pos + 1
            if line[pos] != ",":
                raise _Unsupported("flow separator")
            pos = self.skip(pos + 1)
            if line[pos] == close:
                raise _Unsupported("trailing comma")

    def scalar(self, pos: int, depth: int, is_key: bool) -> tuple[Any, int]:
        line = self.line
        ch = line[pos]
        if ch in "[{":
            if is_key:
                raise _Unsupported("collection key")
            return self.collection(pos, depth + 1)
        if ch == "'":
            j = pos + 1
            while True:
                k = line.find("'", j)
                if k < 0:
                    raise _Unsupported("open quote")
                if k + 1 < len(line) and line[k + 1] == "'":
                    j = k + 2
                    continue
                return line[pos + 1 : k].replace("''", "'"), k + 1
        if ch == '"':
            k = line.find('"', pos + 1)
            if k < 0 or "\\" in line[pos + 1 : k]:
                raise _Unsupported("double-quoted flow scalar")
            return line[pos + 1 : k], k + 1
        m = _FLOW_PLAIN_RX.match(line, pos)
        if m is None:
            raise _Unsupported("flow plain scalar")
        end = m.end()
        text = m.group(0).rstrip(" ")
        if text[0] == "-" and (len(text) == 1 or text[1] == " "):
            raise _Unsupported("dash in flow")
        if end < len(line) and line[end] not in ",]}:":
            raise _Unsupported("flow plain scalar")
        if end < len(line) and line[end] == ":" and not is_key:
            raise _Unsupported("colon in flow value")
        return self.plain(text), pos + len(text)


# --- the editor ------------------------------------------------------------------

Matcher = Callable[[list[Any], list[Any]], list[int | None]]
Edit = tuple[int, int, list[str]]

# New plain keys the editor writes itself; anything else goes to the fallback.
_SAFE_NEW_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\/-]*")
_SAFE_NEW_PLAIN = re.compile(r"[A-Za-z0-9_/.$][A-Za-z0-9_./:=+@$,-]*")


def edit(parsed: Parsed, old: Any, new: Any, match: Matcher) -> str | None:
    """The text of ``parsed`` changed to hold ``new`` (it holds ``old``), or None.

    ``match`` pairs new list elements with old ones (like
    :func:`krm_merge.krm.rtedit.match_elements`).  None means the edit is
    outside what this splicer prints exactly like the round-trip path.
    """
    if not isinstance(new, dict) or not isinstance(old, dict):
        return None
    final_newline = parsed.text.endswith("\n")
    lines = parsed.text.split("\n")
    if final_newline:
        lines.pop()
    editor = _Editor(lines, match, parsed.comment_after_flow)
    try:
        edits = editor.edit_map(parsed.root, old, new)
        lines = _splice(lines, 0, len(lines), edits)
    except (_Unsupported, RecursionError):
        return None
    text = "\n".join(lines)
    return text + "\n" if final_newline else text


def _splice(lines: list[str], lo: int, hi: int, edits: list[Edit]) -> list[str]:
    """Lines ``lo``..``hi`` with the (non-overlapping) edits applied."""
    out: list[str] = []
    at = lo
    for start, stop, repl in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < at:
            raise _Unsupported("overlapping edits")
        out.extend(lines[at:start])
        out.extend(repl)
        at = stop
    out.extend(lines[at:hi])
    return out


_START: Any = _Nothing()


class _Editor:
    def __init__(self, lines: list[str], match: Matcher, fixed_blocks: bool) -> None:
        self.lines = lines
        self.match = match
        self.fixed_blocks = fixed_blocks

    def structural(self) -> None:
        """Entries are about to be removed, added or moved: allowed unless blocks are unclear."""
        if self.fixed_blocks:
            raise _Unsupported("comment after a flow collection")

    # values ----------------------------------------------------------------------

    def edit_value(self, pos: Node, old: Any, new: Any, entry: Entry, key_col: int) -> list[Edit]:
        """Edits turning the value at ``pos`` from ``old`` into ``new``."""
        if isinstance(pos, MapPos) and isinstance(new, dict) and new:
            # No deep comparison first: walking the map finds what changed in one pass.
            return self.edit_map(pos, old, new)
        if same(old, new):
            return []
        if isinstance(pos, MapPos) and isinstance(old, dict) and isinstance(new, dict):
            raise _Unsupported("map emptied")
        if isinstance(pos, SeqPos) and isinstance(old, list) and isinstance(new, list):
            if not new:
                raise _Unsupported("list emptied")
            return self.edit_seq(pos, old, new)
        if isinstance(pos, ScalarPos):
            if pos.style in ("flow", "literal", "folded"):
                raise _Unsupported("flow or block scalar changed")
            if isinstance(new, (dict, list)):
                return self.scalar_to_block(pos, new, key_col)
            return [self.replace_scalar(pos, new)]
        raise _Unsupported("container replaced")

    def replace_scalar(self, pos: ScalarPos, new: Any) -> Edit:
        line = self.lines[pos.line]
        style = pos.style
        text = _scalar_text(new, style)
        if style == "empty":
            if pos.comment >= 0 or text == "":
                raise _Unsupported("empty value with comment")
            prefix = line[: pos.start]
            if not prefix.endswith(" "):
                prefix += " "
            return pos.line, pos.line + 1, [prefix + text]
        prefix = line[: pos.start] + text
        if text == "":
            prefix = prefix.rstrip(" ")
            if pos.comment >= 0 or not prefix.endswith(":"):
                raise _Unsupported("null outside a map value, or with a comment")
        if pos.comment >= 0:
            comment = line[pos.comment :]
            width = pos.comment - len(prefix)
            new_line = prefix + " " * max(width, 1) + comment
        else:
            new_line = prefix + line[pos.end :]
        return pos.line, pos.line + 1, [new_line]

    def scalar_to_block(self, pos: ScalarPos, new: Any, key_col: int) -> list[Edit]:
        if pos.comment >= 0 or not new:
            raise _Unsupported("scalar with comment becomes a container")
        line = self.lines[pos.line]
        if line[key_col] == "-":
            raise _Unsupported("sequence element becomes a container")
        head = line[: pos.start].rstrip(" ")
        body = _render_block(new, key_col)
        return [(pos.line, pos.line + 1, [head] + body)]

    # maps ------------------------------------------------------------------------

    def edit_map(self, pos: MapPos, old: dict, new: dict) -> list[Edit]:
        entries = pos.entries
        edits: list[Edit] = []
        for key, entry in entries.items():
            if key not in new:
                if not isinstance(key, str):
                    raise _Unsupported("non-string key")
                self.structural()
                if pos.dash_line >= 0 and entry is next(iter(entries.values())):
                    raise _Unsupported("first key of a sequence element deleted")
                edits.append((entry.start, entry.stop, []))
        # New keys follow the old key they come after in ``new`` (like
        # ruamel's insert after the previous key); _START means "at the start".
        inserts: dict[Any, list[tuple[Any, Any]]] = {}
        anchor: Any = _START
        for key, value in new.items():
            if key in entries:
                entry = entries[key]
                edits.extend(self.edit_value(entry.value, old[key], value, entry, pos.indent))
                anchor = key
            else:
                if not isinstance(key, str):
                    raise _Unsupported("non-string key")
                inserts.setdefault(anchor, []).append((key, value))
        for anchor_key, new_entries in inserts.items():
            self.structural()
            lines: list[str] = []
            for key, value in new_entries:
                lines.extend(_render_entry(key, value, pos.indent))
            if anchor_key is _START:
                first = next(iter(entries.values()))
                if pos.dash_line >= 0:
                    raise _Unsupported("insert before the first key of a sequence element")
                edits.append((first.start, first.start, lines))
            else:
                at = entries[anchor_key].stop
                edits.append((at, at, lines))
        return edits

    # sequences ---------------------------------------------------------------------

    def edit_seq(self, pos: SeqPos, old: list, new: list) -> list[Edit]:
        pairs = self.match(old, new)
        items = pos.items
        inner: list[list[Edit]] = []
        for value, old_index in zip(new, pairs):
            if old_index is None:
                inner.append([])
                continue
            entry = items[old_index]
            inner.append(self.edit_value(entry.value, old[old_index], value, entry, pos.indent))
        if len(new) == len(old) and all(p == k for k, p in enumerate(pairs)):
            return [e for group in inner for e in group]
        self.structural()
        lo, hi = items[0].start, items[-1].stop
        out: list[str] = []
        for value, old_index, group in zip(new, pairs, inner):
            if old_index is None:
                out.extend(_render_item(value, pos.indent))
            else:
                entry = items[old_index]
                out.extend(_splice(self.lines, entry.start, entry.stop, group))
        return [(lo, hi, out)]


# --- printing new values (what the ruamel path prints for them) ------------------


def _scalar_text(value: Any, like: str) -> str:
    """A new scalar's text; strings keep the old quote style when it can hold them."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise _Unsupported("new float")
    if "\n" in value or not value.isascii() or not value.isprintable():
        raise _Unsupported("string needs care")
    if like == "single":
        return "'" + value.replace("'", "''") + "'"
    if like == "double" or yamlio._needs_double_quotes(value):
        return yamlio.double_quote(value)
    if not _SAFE_NEW_PLAIN.fullmatch(value):
        raise _Unsupported("plain string the emitter may quote")
    return value


def _key_text(key: Any) -> str:
    if not isinstance(key, str) or not _SAFE_NEW_KEY.fullmatch(key) or yamlio._needs_double_quotes(key):
        raise _Unsupported("key needs quoting")
    return key


def _render_entry(key: Any, value: Any, indent: int) -> list[str]:
    pad = " " * indent
    head = pad + _key_text(key) + ":"
    if isinstance(value, (dict, list)):
        if not value:
            return [head + (" {}" if isinstance(value, dict) else " []")]
        return [head] + _render_block(value, indent)
    if isinstance(value, str) and _plain_literal(value):
        # kubectl's last-applied-configuration: one JSON line and a newline.
        # The ruamel path writes such strings as a `|` block at indent + 2.
        return [head + " |"] + [pad + "  " + line for line in value[:-1].split("\n")]
    text = _scalar_text(value, "plain")
    return [head + " " + text if text else head]


def _plain_literal(value: str) -> bool:
    """A string a `|` block (clip chomping, no indicator) holds line for line."""
    if not value.endswith("\n") or not value.isascii():
        return False
    lines = value[:-1].split("\n")
    return all(line and line.isprintable() and line == line.strip() for line in lines)


def _render_block(value: Any, key_col: int) -> list[str]:
    """A non-empty container as the value of a key at column ``key_col``."""
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            out.extend(_render_entry(k, v, key_col + 2))
        return out
    out = []
    for item in value:
        out.extend(_render_item(item, key_col))
    return out


def _render_item(value: Any, dash_col: int) -> list[str]:
    pad = " " * dash_col
    if isinstance(value, dict):
        if not value:
            return [pad + "- {}"]
        lines: list[str] = []
        for k, v in value.items():
            lines.extend(_render_entry(k, v, dash_col + 2))
        lines[0] = pad + "- " + lines[0][dash_col + 2 :]
        return lines
    if isinstance(value, list):
        raise _Unsupported("list in list")
    if value is None:
        raise _Unsupported("null element")
    return [pad + "- " + _scalar_text(value, "plain")]
