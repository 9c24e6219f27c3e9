"""The fast editor: new data spliced into the text line by line."""

from __future__ import annotations


from krm_merge.krm.fastyaml.nodes import Entry, MapPos, Node, Nothing, Parsed, ScalarPos, SeqPos, Unsupported
from krm_merge.krm.fastyaml.render import literal_block, render_block, render_entry, render_item, scalar_text
from krm_merge.krm.values import deep_equal
from krm_merge.yaml import scalars
from krm_merge.yaml.layout import layout_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeAlias

Matcher: TypeAlias = "Callable[[list[Any], list[Any]], list[int | None]]"
Edit = tuple[int, int, list[str]]


def edit(parsed: Parsed, old: Any, new: Any, match: Matcher, *, literal_blocks: bool = True) -> str | None:
    """The text of ``parsed`` changed to hold ``new`` (it holds ``old``), or None.

    ``match`` pairs new list elements with old ones (like
    :func:`krm_merge.krm.rtedit.match_elements`).  None means the edit is
    outside what this splicer prints exactly like the round-trip path.
    ``literal_blocks=False``: None when a literal block's value changes (a
    caller with the change as upstream's lines tries those first).
    """
    if not isinstance(new, dict) or not isinstance(old, dict):
        return None
    final_newline = parsed.text.endswith("\n")
    lines = parsed.text.split("\n")
    if final_newline:
        lines.pop()
    editor = _Editor(lines, match, parsed.anchor_lines, literal_blocks)
    try:
        edits = editor.edit_map(parsed.root, old, new)
        lines = _splice(lines, 0, len(lines), edits)
    except (Unsupported, scalars.UnsupportedScalar, RecursionError):
        return None
    text = "\n".join(lines)
    return text + "\n" if final_newline else text


def _flow_items(text: str) -> list[str] | None:
    """The elements of a one-line flow list of scalars (``[a, 'b', "c"]``) as written, or None for anything else."""
    if not text.startswith("[") or not text.endswith("]"):
        return None
    items: list[str] = []
    at, k, end = 1, 1, len(text) - 1
    while k < end:
        ch = text[k]
        if ch == "'" or ch == '"':
            close = scalars.closing_quote(text, k + 1, ch)
            if close < 0:
                return None
            k = close + 1
        elif ch in "[]{}":
            return None
        elif ch == ",":
            items.append(text[at:k].strip(" "))
            at = k = k + 1
        else:
            k += 1
    last = text[at:end].strip(" ")
    if last:
        items.append(last)
    return items if all(items) else None


def _style_of(text: str) -> str:
    """The quote style of a scalar as written."""
    return "single" if text.startswith("'") else "double" if text.startswith('"') else "plain"


def _FLOW_PLAIN(text: str) -> bool:
    """A plain string the round-trip printer also writes plain inside a flow collection (no flow indicator)."""
    return not any(ch in text for ch in ",?[]{}") and not text.endswith(":")


def _splice(lines: list[str], lo: int, hi: int, edits: list[Edit]) -> list[str]:
    """Lines ``lo``..``hi`` with the (non-overlapping) edits applied."""
    out: list[str] = []
    at = lo
    for start, stop, repl in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < at:
            raise Unsupported("overlapping edits")
        out.extend(lines[at:start])
        out.extend(repl)
        at = stop
    out.extend(lines[at:hi])
    return out


_START: Any = Nothing()


class _Editor:
    """Computes line edits; comment lines go with the entry they belong to.

    In the gap between two siblings, the comment lines indented deeper than
    the siblings' column are the earlier sibling's foot (``- name: a`` /
    ``  # about a``); from the first comment at the siblings' column or left
    of it, the lines are the later sibling's head.  Blank lines leading a
    head stay where they are, as the spacing of that position.  Comments
    after a container's last entry, up to its column, are the container's
    foot and stay at its end.  An entry moves with its head and foot; a
    deleted entry takes its position's blank lines too.
    """

    def __init__(self, lines: list[str], match: Matcher, anchor_lines: tuple[int, ...] = (),
                 literal_blocks: bool = True) -> None:
        self.lines = lines
        self.match = match
        self.anchor_lines = anchor_lines
        self.literal_blocks = literal_blocks
        self._mapping_indent = -1  # the text's mapping indentation, read when a literal block changes

    def keep_anchors(self, lo: int, hi: int) -> None:
        """Lines ``lo``..``hi`` are about to move or go: not if an anchor is defined there (aliases need it first)."""
        if any(lo <= line < hi for line in self.anchor_lines):
            raise Unsupported("an anchor would move or go")

    def foot_end(self, lo: int, hi: int, column: int) -> int:
        """Where the comments indented deeper than ``column`` that start the gap ``lo``..``hi`` end."""
        lines = self.lines
        end = k = lo
        while k < hi:
            line = lines[k]
            stripped = line.lstrip(" ")
            if stripped:
                if len(line) - len(stripped) <= column:
                    break
                end = k + 1
            k += 1
        return end

    def blocks(self, pos: MapPos | SeqPos, entries: list[Entry]) -> tuple[list[int], list[int], list[int]]:
        """For each entry: where the gap before it starts, where its head starts, where its foot ends."""
        lines = self.lines
        dash_line = pos.dash_line if isinstance(pos, MapPos) else -1
        gaps: list[int] = []
        heads: list[int] = []
        feet: list[int] = []
        previous_end = pos.open
        for k, entry in enumerate(entries):
            if k == 0 and dash_line >= 0:
                gap = head = entry.start  # the first key shares the dash's line
            else:
                gap = previous_end if k == 0 else self.foot_end(previous_end, entry.start, pos.indent)
                gap = head = min(gap, entry.start)
                while head < entry.start and not lines[head].strip(" "):
                    head += 1
            if k:
                feet.append(gap)
            gaps.append(gap)
            heads.append(head)
            previous_end = entry.end
        feet.append(self.foot_end(previous_end, max(pos.after, previous_end), pos.indent))
        return gaps, heads, feet

    # values ----------------------------------------------------------------------

    def edit_value(self, pos: Node, old: Any, new: Any, entry: Entry, key_col: int) -> list[Edit]:
        """Edits turning the value at ``pos`` from ``old`` into ``new``."""
        if isinstance(pos, (MapPos, SeqPos)) and pos.anchor and not deep_equal(old, new):
            raise Unsupported("anchored collection changed")  # its aliases: the round-trip path decides
        if isinstance(pos, MapPos) and isinstance(new, dict) and new:
            # No deep comparison first: walking the map finds what changed in one pass.
            return self.edit_map(pos, old, new)
        if deep_equal(old, new):
            return []
        if isinstance(pos, MapPos) and isinstance(old, dict) and isinstance(new, dict):
            raise Unsupported("map emptied")
        if isinstance(pos, SeqPos) and isinstance(old, list) and isinstance(new, list):
            if not new:
                raise Unsupported("list emptied")
            return self.edit_seq(pos, old, new)
        if isinstance(pos, ScalarPos):
            if pos.line != entry.start:
                return [self.replace_scalar_below(pos, new, entry)]
            if pos.style == "literal" and self.literal_blocks:
                return [self.replace_literal(pos, old, new, entry, key_col)]
            if self.lines[pos.line][pos.start : pos.start + 1] == '"' and isinstance(new, str) and (
                    pos.style == "multiline" or self.literal_blocks and literal_block(new, "") is not None):
                return [self.rewrite_quoted_string(pos, new, entry, key_col)]
            if pos.style == "flow" and isinstance(old, list) and isinstance(new, list):
                return [self.replace_flow_list(pos, old, new)]
            if pos.style in ("flow", "literal", "folded", "alias", "multiline"):
                raise Unsupported("flow, block or multi-line scalar changed")
            if isinstance(new, (dict, list)):
                return self.scalar_to_block(pos, new, key_col)
            return [self.replace_scalar(pos, new)]
        raise Unsupported("container replaced")

    def replace_scalar(self, pos: ScalarPos, new: Any) -> Edit:
        line = self.lines[pos.line]
        style = pos.style
        text = scalar_text(new, style)
        if style == "empty":
            if pos.comment >= 0 or text == "":
                raise Unsupported("empty value with comment")
            prefix = line[: pos.start]
            if not prefix.endswith(" "):
                prefix += " "
            return pos.line, pos.line + 1, [prefix + text]
        prefix = line[: pos.start] + text
        if text == "":
            prefix = prefix.rstrip(" ")
            if pos.comment >= 0 or not prefix.endswith(":"):
                raise Unsupported("null outside a map value, or with a comment")
        if pos.comment >= 0:
            comment = line[pos.comment :]
            width = pos.comment - len(prefix)
            new_line = prefix + " " * max(width, 1) + comment
        else:
            new_line = prefix + line[pos.end :]
        return pos.line, pos.line + 1, [new_line]

    def replace_scalar_below(self, pos: ScalarPos, new: Any, entry: Entry) -> Edit:
        """A changed scalar written on the line after its key goes on the key's line, as the round-trip editor
        prints it (two lines become one)."""
        if pos.style not in ("plain", "single", "double") or isinstance(new, (dict, list)):
            raise Unsupported("scalar below its key changed otherwise")
        line = self.lines[entry.start]
        head = line.rstrip(" ")
        if not head.endswith(":"):
            raise Unsupported("key line")
        text = scalar_text(new, pos.style)
        return entry.start, pos.line + 1, [f"{head} {text}" if text else line]  # (a null: the key's line as it was)

    def replace_literal(self, pos: ScalarPos, old: Any, new: Any, entry: Entry, key_col: int) -> Edit:
        """A map value's literal block rewritten for ``new``, when the round-trip editor prints exactly that.

        That editor prints a changed literal block as a new one (``|`` or
        ``|-``, the lines at the key's column plus the text's mapping indent,
        empty lines empty) and keeps the header's comment.  Only a block
        already written that way is rewritten: then every line it keeps has
        that editor's bytes too (upstream's new configuration file in a
        ConfigMap that kpt printed, with another field changed, issue 33).
        """
        lines = self.lines
        line = lines[pos.line]
        if line[key_col] == "-":
            raise Unsupported("sequence element literal block changed")  # indented by the sequence layout
        pad = " " * (key_col + self.mapping_indent())
        was, now = literal_block(old, pad), literal_block(new, pad)
        if was is None or now is None:
            raise Unsupported("literal block the round-trip editor prints otherwise")
        header = line[pos.start :] if pos.comment < 0 else line[pos.start : pos.comment].rstrip(" ")
        if [header] + lines[pos.line + 1 : entry.end] != was:
            raise Unsupported("literal block not written as the round-trip editor prints it")
        if pos.comment < 0:
            head = line[: pos.start] + now[0]
        elif now[0] == was[0]:
            head = line  # the header and its comment stay as written
        else:
            raise Unsupported("chomping changed before a comment")
        return pos.line, entry.end, [head] + now[1:]

    def rewrite_quoted_string(self, pos: ScalarPos, new: str, entry: Entry, key_col: int) -> Edit:
        """A double-quoted string (on one line, or wrapped over several by a printer with a width) changed: printed
        as the round-trip editor prints it, a literal block at the key's column plus the text's mapping indent when
        one holds the new string (and ``literal_blocks``), else one double-quoted line (kpt prints a configuration
        file with blanks ending its lines so; upstream's new file, issue 45)."""
        lines = self.lines
        line = lines[pos.line]
        if line[key_col] == "-":
            raise Unsupported("sequence element")  # a literal block there is indented by the sequence layout
        last = lines[entry.end - 1].lstrip(" ") if pos.style == "multiline" else line[pos.start + 1 :]
        close = scalars.closing_quote(last, 0, '"')
        if pos.style not in ("double", "multiline") or close < 0 or last[close + 1 :].strip(" "):
            raise Unsupported("a comment after the string")
        block = literal_block(new, " " * (key_col + self.mapping_indent())) if self.literal_blocks else None
        if block is None:
            if literal_block(new, "") is not None:
                raise Unsupported("literal block")  # (a caller with upstream's lines tries those first)
            block = [scalar_text(new, "double")]
        return pos.line, entry.end, [line[: pos.start] + block[0]] + block[1:]

    def replace_flow_list(self, pos: ScalarPos, old: list, new: list) -> Edit:
        """A one-line flow list of scalars changed: printed as the round-trip editor prints it, each element kept
        as written where it is unchanged, a changed string in its old quote style, a new one plain where every
        printer writes it plain (a container's ``args: ["-c", "/etc/app.yaml"]``, issue 45)."""
        line = self.lines[pos.line]
        texts = _flow_items(line[pos.start : pos.end])
        if not texts or not new or pos.comment >= 0 or line[pos.end :].strip(" "):
            raise Unsupported("flow collection changed")  # (``[]`` filled: the round-trip editor prints a block)
        out = []
        for value, k in zip(new, self.match(old, new)):
            if isinstance(value, (dict, list, float)) or value is None:
                raise Unsupported("flow element")
            if k is not None and type(old[k]) is type(value) and deep_equal(old[k], value):
                out.append(texts[k])
                continue
            like = _style_of(texts[k]) if k is not None and isinstance(old[k], str) else "plain"
            text = scalar_text(value, like)
            if isinstance(value, str) and like == "plain" and not _FLOW_PLAIN(text):
                raise Unsupported("plain string a flow collection quotes")
            out.append(text)
        return pos.line, pos.line + 1, [line[: pos.start] + "[" + ", ".join(out) + "]" + line[pos.end :]]

    def mapping_indent(self) -> int:
        """The text's mapping indentation (what the round-trip editor prints with: :func:`layout_of`)."""
        if self._mapping_indent < 0:
            self._mapping_indent = layout_of("\n".join(self.lines)).mapping
        return self._mapping_indent

    def scalar_to_block(self, pos: ScalarPos, new: Any, key_col: int) -> list[Edit]:
        if pos.comment >= 0 or not new:
            raise Unsupported("scalar with comment becomes a container")
        line = self.lines[pos.line]
        if line[key_col] == "-":
            raise Unsupported("sequence element becomes a container")
        head = line[: pos.start].rstrip(" ")
        body = render_block(new, key_col)
        return [(pos.line, pos.line + 1, [head] + body)]

    # maps ------------------------------------------------------------------------

    def edit_map(self, pos: MapPos, old: dict, new: dict) -> list[Edit]:
        entries = pos.entries
        edits: list[Edit] = []
        blocks: tuple[list[int], list[int], list[int]] | None = None
        for k, (key, entry) in enumerate(entries.items()):
            if key not in new:
                if not isinstance(key, str):
                    raise Unsupported("non-string key")
                if pos.dash_line >= 0 and k == 0:
                    raise Unsupported("first key of a sequence element deleted")
                blocks = blocks or self.blocks(pos, list(entries.values()))
                self.keep_anchors(blocks[0][k], blocks[2][k])
                edits.append((blocks[0][k], blocks[2][k], []))  # with its spacing, head and foot comments
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
                    raise Unsupported("non-string key")
                inserts.setdefault(anchor, []).append((key, value))
        if not inserts:
            return edits
        blocks = blocks or self.blocks(pos, list(entries.values()))
        index = {key: k for k, key in enumerate(entries)}
        for anchor_key, new_entries in inserts.items():
            lines: list[str] = []
            for key, value in new_entries:
                lines.extend(render_entry(key, value, pos.indent))
            if anchor_key is _START:
                if pos.dash_line >= 0:
                    raise Unsupported("insert before the first key of a sequence element")
                # Above the first key's head comments; a document's leading comments stay on top.
                at = next(iter(entries.values())).start if pos.open == 0 else blocks[1][0]
            else:
                # After the previous entry and its foot: before comments that head the next one or close the map.
                at = blocks[2][index[anchor_key]]
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
        # Elements move with their head and foot comments; each position keeps its leading blank lines.
        lines = self.lines
        gaps, heads, feet = self.blocks(pos, items)
        self.keep_anchors(gaps[0], feet[-1])
        out: list[str] = []
        for at, (value, old_index, group) in enumerate(zip(new, pairs, inner)):
            if at < len(items):
                out.extend(lines[gaps[at] : heads[at]])
            if old_index is None:
                out.extend(render_item(value, pos.indent))
            else:
                entry = items[old_index]
                out.extend(lines[heads[old_index] : entry.start])
                out.extend(_splice(lines, entry.start, feet[old_index], group))
        return [(gaps[0], feet[-1], out)]
