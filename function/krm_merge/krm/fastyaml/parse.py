"""The fast reader: kyaml-shaped block YAML, line by line, to plain data and positions."""

from __future__ import annotations

import functools
import re

from krm_merge.krm.fastyaml.nodes import NOTHING, Entry, MapPos, Node, Parsed, ScalarPos, SeqPos, Unsupported
from krm_merge.yaml import load, scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

# --- scalar resolution: the rules live in krm_merge.yaml.scalars ---------------------

_resolve_plain = scalars.resolve_plain
_unescape = scalars.unescape_double


@functools.lru_cache(maxsize=8192)
def _plain_key(text: str) -> Any:
    """A plain key's value, or ``NOTHING`` if the text is not a key the fast path reads."""
    if not _KEY_TEXT_RX.fullmatch(text):
        return NOTHING
    return _resolve_plain(text)


# --- the parser ------------------------------------------------------------------

# Plain keys the fast reader accepts: the characters Kubernetes keys use.
_KEY_TEXT_RX = re.compile(r"[A-Za-z0-9_$.\/+~()=](?:[A-Za-z0-9_$.\/+~()=@ :-]*[A-Za-z0-9_$.\/+~()=@-])?")
# Characters a plain value may not start with (flow, quotes, anchors, tags, block indicators ...).
_PLAIN_BAD_FIRST = scalars.PLAIN_BAD_FIRST


# Flow-context plain scalars: a safe alphabet only.
# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def _flow_plain_rx() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_$.\/+=~()-][A-Za-z0-9_$.\/+=~() -]*")


# Control characters (tabs and CR included) leave the subset.  A character
# class over all of Unicode would cost ~25 ms to compile at start-up, so
# non-ASCII characters are checked one by one (they are rare).
_ASCII_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f]")


def _outside_charset(text: str) -> bool:
    """True when ``text`` holds a character the fast path does not read.

    Besides control characters: YAML 1.1's extra line breaks (NEL, LS, PS),
    C1 controls, the BOM, surrogates and non-characters.
    """
    if text.isascii():
        # In ASCII the pattern's class is what is not printable but the line feed: the same test, without a
        # character class searched at every character (it cost more than the parse of a small document).
        return not text.replace("\n", "").isprintable()
    if _ASCII_CONTROL.search(text):
        return True
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
    except (Unsupported, RecursionError, ValueError, OverflowError):
        return None
    if result is None:
        return None
    data, root = result
    return Parsed(data, root, text, tuple(parser.anchor_lines), parser.alias_nodes > 0)


def reread_scalar_line(old_line: str, new_line: str) -> Any:
    """The value ``new_line`` holds if it reads exactly as ``old_line`` but for a one-line scalar.

    Returns ``NOTHING`` unless both lines are structure lines (a key, a dash, or a dash and a
    key) with the same indentation, kind and key whose value is a one-line scalar.  The reader
    interprets such a line from its text alone, and a one-line scalar value never changes how
    the lines after it are read; so a text this reader accepted, with ``old_line`` replaced by
    ``new_line``, reads as the same data but for this one value, which is returned.  (A
    checked edit then costs one line, not a second parse of the document.)
    """
    if "\n" in new_line or _outside_charset(new_line):
        return NOTHING
    try:
        old, new = _line_info(old_line), _line_info(new_line)
    except (Unsupported, RecursionError, ValueError, OverflowError):
        return NOTHING
    if old is _BLANK or new is _BLANK or old[:2] != new[:2] or old[1] == _FLOW_LINE:
        return NOTHING
    if old[1] == _KEY:
        same_key = type(old[2]) is type(new[2]) and old[2] == new[2]
        old_value, new_value = old[3], new[3]
    else:
        old_value, new_value = old[2], new[2]
        same_key = True
        if old_value[0] == _INLINE_MAP or new_value[0] == _INLINE_MAP:
            if old_value[0] != new_value[0] or old_value[1] != new_value[1]:
                return NOTHING
            same_key = type(old_value[2]) is type(new_value[2]) and old_value[2] == new_value[2]
            old_value, new_value = old_value[3], new_value[3]
    if not same_key or old_value[0] != _SCALAR or new_value[0] != _SCALAR:
        return NOTHING
    return new_value[1]


# Line kinds (the second field of a line's info) and value kinds.  A _FLOW_LINE holds only a flow
# collection (``{}`` under its ``key:``), the value of the entry above it.
_KEY, _DASH, _FLOW_LINE = 0, 1, 2
_EMPTY, _SCALAR, _FLOW, _LITERAL, _INLINE_MAP, _ANCHOR, _ALIAS, _QUOTED_LINES = 0, 1, 2, 3, 4, 5, 6, 7
# Anchor names libyaml accepts (its scanner allows only these characters).
@functools.cache
def _anchor_name() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_-]+")


# Nodes (keys counted) that aliases may add to the data in total: a tenth of the
# bounded loader's MAX_ALIAS_EXPANSION, so the fast reader never accepts what the
# loader refuses; larger expansions are left to the loader, which decides.
_MAX_ALIAS_NODES = 100_000
_BLANK: tuple = ()


@functools.lru_cache(maxsize=8192)
def _line_info(line: str) -> tuple:
    """What one structure line says, independent of where it is (so it is memoised:
    lines repeat across items).  ``_BLANK`` for blank and comment lines;
    ``(indent, _KEY, key, value info)``, ``(indent, _DASH, value info)`` or ``(indent, _FLOW_LINE)``.
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
                raise Unsupported("nested compact sequence")
            found = _match_key(line, col)
            if found is not None:
                return (indent, _DASH, (_INLINE_MAP, col, found[0], _value_info(line, found[1])))
        return (indent, _DASH, _value_info(line, col))
    if stripped[0] in "[{":
        return (indent, _FLOW_LINE)
    found = _match_key(line, indent)
    if found is None:
        raise Unsupported("not a key")
    return (indent, _KEY, found[0], _value_info(line, found[1]))


def _match_key(line: str, col: int) -> tuple[Any, int] | None:
    """The key at ``line[col:]`` and the column its value starts at, or None."""
    first = line[col]
    if first == "'" or first == '"':
        try:
            key, end = _quoted(line, col)
        except (Unsupported, scalars.UnsupportedScalar):
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
    if key is NOTHING:
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
        if scalars.closing_quote(line, col + 1, first) < 0:
            return (_QUOTED_LINES, col)  # it goes on over the next lines, which the parser reads (_Parser.quoted_lines)
        value, end = _quoted(line, col)
        return (_SCALAR, value, col, end, "single" if first == "'" else "double", _comment_after(line, end))
    if first in "[{":
        return (_FLOW, col)
    if first == "&" or first == "*":
        return _anchor_info(line, col)
    if first == "|" or first == ">":
        return _literal_header(line, col)
    if first in _PLAIN_BAD_FIRST or (first in "-?:" and (len(rest) == 1 or rest[1] == " ")):
        raise Unsupported("indicator")
    hash_at = rest.find(" #")
    text = rest if hash_at < 0 else rest[:hash_at]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise Unsupported("colon in plain scalar")
    comment = -1 if hash_at < 0 else col + hash_at + 1
    return (_SCALAR, _resolve_plain(text), col, col + len(text), "plain", comment)


def _anchor_info(line: str, col: int) -> tuple:
    """``&name`` opening a block collection on the next lines, or an alias ``*name``; nothing else after it."""
    m = _anchor_name().match(line, col + 1)
    if m is None:
        raise Unsupported("anchor name")
    end = m.end()
    comment = _comment_after(line, end)
    return (_ANCHOR if line[col] == "&" else _ALIAS, m.group(0), col, end, comment)


def _comment_after(line: str, end: int) -> int:
    """Check only a comment follows column ``end``; return its column or -1."""
    tail = line[end:]
    stripped = tail.lstrip(" ")
    if not stripped:
        return -1
    if stripped[0] == "#" and len(stripped) < len(tail):
        return end + len(tail) - len(stripped)
    raise Unsupported("text after scalar")


def _literal_header(line: str, col: int) -> tuple:
    header = line[col + 1 :]
    chomp = ""
    if header[:1] in ("-", "+"):
        chomp, header = header[0], header[1:]
    if header[:1].isdigit():
        raise Unsupported("indentation indicator")
    folded = line[col] == ">"
    if folded and chomp == "+":
        raise Unsupported("folded block keeping trailing lines")
    comment = -1
    if header.strip(" "):
        stripped = header.lstrip(" ")
        if stripped[0] != "#" or len(stripped) == len(header):
            raise Unsupported("block scalar header")
        comment = col + 1 + len(chomp) + len(header) - len(stripped)
    return (_LITERAL, col, chomp, comment, folded)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class _Parser:
    """Recursive descent over lines; raises :class:`Unsupported` to give up."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.n = len(lines)
        # Anchored collections: name → (value, its node count); aliases share the value, as libyaml's do.
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.alias_nodes = 0
        self.anchor_lines: list[int] = []

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
        node.open = 0
        return data, node

    def parse_block(self, i: int, info: tuple) -> tuple[Any, MapPos | SeqPos, int]:
        """A block collection whose first line ``i`` (with ``info``) sets its indentation."""
        if info[1] == _DASH:
            return self.parse_seq(i, info[0], info)
        return self.parse_map(i, info[0], -1, info)

    def parse_map(self, i: int, indent: int, dash_line: int, info: tuple) -> tuple[dict, MapPos, int]:
        """``info`` is line ``i``'s; for a map opened on a dash line it is the inline-map info."""
        data: dict[Any, Any] = {}
        node = MapPos(indent, dash_line)
        entries = node.entries
        key, value_info = info[2], info[3]
        lines, n = self.lines, self.n
        while True:
            if key in data or isinstance(key, float):
                raise Unsupported("duplicate key")
            if value_info[0] == _SCALAR:  # most entries: parse_value's first case, without the call
                value = value_info[1]
                nxt = i + 1
                entry = Entry(i, ScalarPos(i, value_info[2], value_info[3], value_info[4], value_info[5]), True, nxt)
            else:
                value, pos, nxt, inline = self.parse_value(i, value_info, indent, True)
                entry = Entry(i, pos, inline, nxt if isinstance(pos, ScalarPos) else pos.end)
            try:
                # next_content, inlined for the common case of a content line next
                info = _line_info(lines[nxt]) if nxt < n else _BLANK
            except Unsupported:
                if value_info[0] != _SCALAR or value_info[4] != "plain":
                    raise
                value, nxt = self.plain_lines(i, value_info, indent)  # the line goes on a plain scalar
                entry = Entry(i, ScalarPos(i, value_info[2], len(lines[i]), "multiline", -1), True, nxt)
                info = _line_info(lines[nxt]) if nxt < n else _BLANK
            data[key] = value
            entries[key] = entry
            j = nxt
            if info is _BLANK:
                j, info = self.next_content(nxt)
            if j >= n or info[0] < indent:
                node.end, node.after = entry.end, j
                return data, node, j
            if info[0] > indent or info[1] != _KEY:
                raise Unsupported("unexpected line in a mapping")
            i = j
            key, value_info = info[2], info[3]

    def parse_seq(self, i: int, indent: int, info: tuple) -> tuple[list, SeqPos, int]:
        data: list[Any] = []
        node = SeqPos(indent)
        lines, n = self.lines, self.n
        while True:
            inner = info[2]
            pos: Node
            if inner[0] == _SCALAR:  # parse_value's first case, without the call
                value, nxt, inline = inner[1], i + 1, True
                pos = ScalarPos(i, inner[2], inner[3], inner[4], inner[5])
            elif inner[0] == _INLINE_MAP:
                value, pos, nxt = self.parse_map(i, inner[1], i, inner)
                inline = True
            else:
                value, pos, nxt, inline = self.parse_value(i, inner, indent, False)
                if isinstance(pos, MapPos) and pos.dash_line < 0:
                    pos.dash_line = i  # `- # comment` or a bare dash: ruamel ties the line to the first key
            try:
                info = _line_info(lines[nxt]) if nxt < n else _BLANK
            except Unsupported:
                if inner[0] != _SCALAR or inner[4] != "plain":
                    raise
                value, nxt = self.plain_lines(i, inner, indent)  # the line goes on a plain scalar (a printer's wrapping)
                pos = ScalarPos(i, inner[2], len(lines[i]), "multiline", -1)
                info = _line_info(lines[nxt]) if nxt < n else _BLANK
            entry = Entry(i, pos, inline, nxt if isinstance(pos, ScalarPos) else pos.end)
            data.append(value)
            node.items.append(entry)
            j = nxt
            if info is _BLANK:
                j, info = self.next_content(nxt)
            if j >= n or info[0] < indent:
                node.end, node.after = entry.end, j
                return data, node, j
            if info[0] > indent:
                raise Unsupported("unexpected indentation")
            if info[1] != _DASH:
                node.end, node.after = entry.end, j
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
            if in_map and info[1] < 0:
                below = self.scalar_below(i, indent)
                if below is not None:
                    return below
            j, nxt = self.next_content(i + 1)
            if j < self.n:
                ind = nxt[0]
                block: MapPos | SeqPos | None = None
                if nxt[1] == _FLOW_LINE:
                    if ind <= indent:
                        raise Unsupported("flow collection not indented under its key")
                    value, pos, end, _ = self.parse_value(j, (_FLOW, ind), indent, in_map)
                    return value, pos, end, False
                if ind > indent:
                    value, block, end = self.parse_block(j, nxt)
                elif in_map and ind == indent and nxt[1] == _DASH:
                    value, block, end = self.parse_seq(j, ind, nxt)
                if block is not None:
                    block.open = i + 1
                    return value, block, end, False
            col = info[1] if info[1] >= 0 else len(self.lines[i])
            return None, ScalarPos(i, col, col, "empty", info[1]), i + 1, True
        if kind == _FLOW:
            line = self.lines[i]
            col = info[1]
            try:
                value, end = _FlowParser(line, _resolve_plain).parse(col)
            except Unsupported:
                return self.multi_line_flow(i, col)
            comment = _comment_after(line, end)
            return value, ScalarPos(i, col, end, "flow", comment), i + 1, True
        if kind == _LITERAL:
            return self.literal(i, info, indent)
        if kind == _QUOTED_LINES:
            return self.quoted_lines(i, info[1], indent)
        if kind == _ANCHOR:
            return self.anchored(i, info, indent, in_map)
        if kind == _ALIAS:
            return self.alias(i, info)
        raise Unsupported("value")

    def scalar_below(self, i: int, indent: int) -> tuple[Any, Node, int, bool] | None:
        """A one-line scalar written on the line right after its key (``key:`` then ``    value``: how ruamel.yaml
        and other printers write a value too long for their width), or None when line ``i + 1`` is not one.

        A plain or quoted scalar, indented beyond the key, with no comment on either line; a plain one may go on
        over the next, more indented lines (:meth:`plain_lines`: style ``multiline``, never edited in place).
        """
        lines, n = self.lines, self.n
        if i + 1 >= n:
            return None
        line = lines[i + 1]
        try:
            _line_info(line)
            return None  # a blank, comment, key, dash or flow line: the other value shapes
        except Unsupported:
            pass
        col = _indent_of(line)
        if col <= indent:
            return None
        info = _value_info(line, col)
        if info[0] != _SCALAR or info[5] >= 0 or info[4] not in ("plain", "single", "double"):
            raise Unsupported("not a scalar below its key")
        if info[4] == "plain" and i + 2 < n and lines[i + 2].strip(" ") and _indent_of(lines[i + 2]) > indent:
            value, nxt = self.plain_lines(i + 1, info, indent)
            return value, ScalarPos(i + 1, col, len(line), "multiline", -1), nxt, False
        return info[1], ScalarPos(i + 1, col, info[3], info[4], -1), i + 2, False

    def anchored(self, i: int, info: tuple, indent: int, in_map: bool) -> tuple[Any, Node, int, bool]:
        """``key: &name`` and its block collection: read like any block, remembered for aliases."""
        _, name, col, end, comment = info
        value, pos, nxt, inline = self.parse_value(i, (_EMPTY, comment if comment >= 0 else end), indent, in_map)
        if not isinstance(pos, (MapPos, SeqPos)):
            raise Unsupported("anchored scalar")
        if _has_shared(value, {id(v) for v, _ in self.anchors.values()}):
            raise Unsupported("alias inside an anchored collection")  # keeps the expansion bound linear
        pos.anchor = name
        self.anchors[name] = (value, _node_count(value))
        self.anchor_lines.append(i)
        return value, pos, nxt, inline

    def alias(self, i: int, info: tuple) -> tuple[Any, Node, int, bool]:
        _, name, col, end, comment = info
        if name not in self.anchors:
            raise Unsupported("alias of an unknown anchor")
        value, count = self.anchors[name]
        self.alias_nodes += count
        if self.alias_nodes > _MAX_ALIAS_NODES:
            raise Unsupported("aliases expand too far")  # the bounded loader refuses it with a message
        return value, ScalarPos(i, col, end, "alias", comment), i + 1, True

    def multi_line_flow(self, i: int, col: int) -> tuple[Any, Node, int, bool]:
        """A flow collection spread over lines (inner comments allowed): kept as written, never edited.

        Its value is read by the bounded loader from exactly its text, so it
        is what libyaml reads in place.
        """
        last, close = _flow_extent(self.lines, i, col)
        comment = _comment_after(self.lines[last], close)
        body = [self.lines[i][col:]] + self.lines[i + 1 : last] + [self.lines[last][:close]]
        if any(line.startswith(("---", "...")) for line in body[1:]):
            raise Unsupported("document marker inside a flow collection")
        try:
            with load.collecting_duplicate_keys() as duplicates:
                value = load.load_data("\n".join(body) + "\n", "flow collection")
        except load.YamlError:
            raise Unsupported("flow collection libyaml refuses") from None
        if duplicates:
            raise Unsupported("duplicate keys")  # the full reader reports them for the document
        if not isinstance(value, (dict, list)):
            raise Unsupported("not a flow collection")
        return value, ScalarPos(i, col, len(self.lines[i]), "flow", comment), last + 1, True

    def plain_lines(self, i: int, info: tuple, indent: int) -> tuple[Any, int]:
        """A plain scalar whose text (``info``, on line ``i``) goes on over the next, more indented lines
        (CRD descriptions): its value and the line after it.  Folded as YAML folds it: one space
        between lines.  Anything a plain scalar's line could end or mean otherwise (``: ``, `` #``,
        ``#`` first, a blank line inside) leaves the subset; an indicator first is text there
        (``"delete" or``, a printer's wrapping of a CRD description).
        """
        if info[5] >= 0:
            raise Unsupported("a comment, then more lines")
        lines, n = self.lines, self.n
        parts = [lines[i][info[2] : info[3]]]
        j = i + 1
        while j < n:
            text = lines[j]
            stripped = text.strip(" ")
            if not stripped or len(text) - len(text.lstrip(" ")) <= indent:
                break
            first = stripped[0]
            if ": " in stripped or stripped.endswith(":") or " #" in stripped or first == "#":
                raise Unsupported("a plain scalar's line that could mean more")  # (indented: "---" is no document marker)
            parts.append(stripped)
            j += 1
        if j == i + 1:
            raise Unsupported("not a plain scalar's next line")
        k = j
        while k < n and not lines[k].strip(" "):
            k += 1
        if k > j and k < n and _indent_of(lines[k]) > indent:
            raise Unsupported("blank line inside a plain scalar")
        return _resolve_plain(" ".join(parts)), j

    def quoted_lines(self, i: int, col: int, indent: int) -> tuple[Any, Node, int, bool]:
        """A quoted scalar opened at ``lines[i][col]`` and closed on a later line (kubebuilder's CRD
        descriptions): kept as written, never edited (style ``multiline``).

        Its lines fold as YAML folds a flow scalar: each line's edge blanks dropped, one space
        between lines; in double quotes a backslash ending a line joins it to the next without
        one.  Blank or not-more-indented lines inside it leave the subset.
        """
        lines, n = self.lines, self.n
        quote = lines[i][col]
        raw = ""
        text = lines[i][col + 1 :]
        j = i
        while True:
            raw += _folded_line_end(text, quote)
            j += 1
            if j >= n:
                raise Unsupported("unclosed quoted scalar")
            line = lines[j]
            text = line.lstrip(" ")
            if not text or len(line) - len(text) <= indent:
                raise Unsupported("blank or outdented line in a quoted scalar")
            close = scalars.closing_quote(text, 0, quote)
            if close >= 0:
                raw += text[:close]
                break
        if quote == "'":
            value = raw.replace("''", "'")
        else:
            try:
                value = _unescape(raw)
            except scalars.UnsupportedScalar:
                raise Unsupported("escape") from None
        _comment_after(line, len(line) - len(text) + close + 1)
        return value, ScalarPos(i, col, len(lines[i]), "multiline", -1), j + 1, True

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
            raise Unsupported("empty block scalar")
        content = _indent_of(lines[j])
        if widest_blank > content:
            raise Unsupported("blank line wider than content")
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
                raise Unsupported("folded block with blank or indented lines")
            value = " ".join(body)
        else:
            value = "\n".join(body)
        if chomp == "":
            value += "\n"
        elif chomp == "+":
            value += "\n" * (1 + end - last)
        style = "folded" if folded else "literal"
        # Blank lines after the content are not part of the entry (unless kept by `+`).
        stop = end if chomp == "+" else last
        return value, ScalarPos(i, col, len(lines[i]), style, comment), stop, True


def _node_count(value: Any) -> int:
    """Nodes in ``value`` as the loader counts them (keys included)."""
    if isinstance(value, dict):
        return 1 + sum(1 + _node_count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_node_count(v) for v in value)
    return 1


def _has_shared(value: Any, anchored: set[int]) -> bool:
    """True when ``value`` holds one of the anchored collections (an alias)."""
    if isinstance(value, (dict, list)):
        if id(value) in anchored:
            return True
        children = value.values() if isinstance(value, dict) else value
        return any(_has_shared(v, anchored) for v in children)
    return False


def _flow_extent(lines: list[str], i: int, col: int) -> tuple[int, int]:
    """The line and column after the bracket closing the flow collection opened at ``lines[i][col]``.

    A quoted scalar may go on over lines (a printer's wrapping); ``#`` after
    a space (or at a line's start) outside quotes starts a comment that runs
    to the end of the line.  (The caller reads the text up to there with the
    bounded loader: a wrong extent is refused there, never read otherwise.)
    """
    depth = 0
    n, k = i, col
    while n < len(lines):
        line = lines[n]
        while k < len(line):
            ch = line[k]
            if ch == "#" and (k == 0 or line[k - 1] == " "):
                break
            if ch == "'" or ch == '"':
                close = scalars.closing_quote(line, k + 1, ch)
                while close < 0:  # closed on a later line
                    n += 1
                    if n >= len(lines):
                        raise Unsupported("unclosed quoted scalar")
                    line = lines[n]
                    close = scalars.closing_quote(line, 0, ch)
                k = close + 1
                continue
            if ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return n, k + 1
            k += 1
        n, k = n + 1, 0
    raise Unsupported("unclosed flow collection")


def _folded_line_end(text: str, quote: str) -> str:
    """A quoted scalar's text on one line that goes on to the next, as it reads folded: without its trailing
    blanks, then one space; in double quotes a line ending in an unescaped backslash joins without one."""
    if quote == '"':
        body = text.rstrip("\\")
        if (len(text) - len(body)) % 2:
            return text[:-1]
        if text.rstrip(" ").endswith("\\") and text.endswith(" "):
            raise Unsupported("escaped blank before a line break")
    return text.rstrip(" ") + " "


def _quoted(line: str, col: int) -> tuple[str, int]:
    """The one-line quoted scalar starting at ``line[col]`` and the column after it."""
    quote = line[col]
    k = scalars.closing_quote(line, col + 1, quote)
    if k < 0:
        raise Unsupported("quoted scalar over several lines")
    inner = line[col + 1 : k]
    if quote == "'":
        return inner.replace("''", "'"), k + 1
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
            raise Unsupported("multi-line flow collection")
        return pos

    def collection(self, pos: int, depth: int) -> tuple[Any, int]:
        if depth > 50:
            raise Unsupported("deep flow")
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
                    raise Unsupported("flow key")
                pos = self.skip(pos)
                if line[pos] != ":" or line[pos + 1 : pos + 2] != " ":
                    raise Unsupported("flow key without value")
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
                raise Unsupported("flow separator")
            pos = self.skip(pos + 1)
            if line[pos] == close:
                raise Unsupported("trailing comma")

    def scalar(self, pos: int, depth: int, is_key: bool) -> tuple[Any, int]:
        line = self.line
        ch = line[pos]
        if ch in "[{":
            if is_key:
                raise Unsupported("collection key")
            return self.collection(pos, depth + 1)
        if ch == "'":
            return _quoted(line, pos)
        if ch == '"':
            k = line.find('"', pos + 1)
            if k < 0 or "\\" in line[pos + 1 : k]:
                raise Unsupported("double-quoted flow scalar")
            return line[pos + 1 : k], k + 1
        m = _flow_plain_rx().match(line, pos)
        if m is None:
            raise Unsupported("flow plain scalar")
        end = m.end()
        text = m.group(0).rstrip(" ")
        if text[0] == "-" and (len(text) == 1 or text[1] == " "):
            raise Unsupported("dash in flow")
        if end < len(line) and line[end] not in ",]}:":
            raise Unsupported("flow plain scalar")
        if end < len(line) and line[end] == ":" and not is_key:
            raise Unsupported("colon in flow value")
        return self.plain(text), pos + len(text)
