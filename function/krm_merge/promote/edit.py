"""Splicing new values into the exact byte span of scalars, and verifying the result.

Only the marked scalar's characters change: the anchor before it and the comment after it
stay; a stale tag (``!!float 1.9``) is dropped because the new value is always a string.
After splicing, the text is parsed again and compared with the expected data, so a
rendering mistake can never silently corrupt a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml
from yaml import MappingNode, ScalarNode

from krm_merge.krm.values import format_path, resource_label
from krm_merge.promote import scalars
from krm_merge.promote.changes import Change
from krm_merge.promote.document import Document, Entry
from krm_merge.promote.errors import PromoteError
from krm_merge.records import Record
from krm_merge.yaml import load

STR_TAG = "tag:yaml.org,2002:str"


class Splice(Record):
    """Replace ``text[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str


def _properties_end(text: str, start: int, end: int) -> tuple[str, int]:
    """Skip ``&anchor`` / ``!tag`` before a scalar: (anchors to keep + space, scalar start)."""
    kept: list[str] = []
    i = start
    while i < end and text[i] in "&!":
        j = i
        while j < end and text[j] not in " \t\r\n":
            j += 1
        if text[i] == "&":
            kept.append(text[i:j])
        while j < end and text[j] in " \t\r\n":
            j += 1
        i = j
    return (" ".join(kept) + " " if kept else ""), i


def _block_splice(text: str, start: int, end: int, value: str, prefix: str) -> str:
    """Replacement for a block scalar spanning text[start:end] (header .. last content line)."""
    newline = text.find("\n", start, end)
    if newline == -1:
        header_line_end, line_break, content = end, "\n", ""
    else:
        crlf = text[newline - 1] == "\r"
        header_line_end = newline - 1 if crlf else newline
        line_break = "\r\n" if crlf else "\n"
        content = text[newline + 1 : end]
    i = start + 1
    while i < header_line_end and text[i] in "+-0123456789":
        i += 1
    indicators, rest = text[start + 1 : i], text[i:header_line_end]
    indent = ""
    for line in content.split("\n"):
        if line.strip(" \t\r"):
            indent = line[: len(line) - len(line.lstrip(" "))]
            break
    body = None
    if indent and not any(c.isdigit() for c in indicators):
        body = scalars.literal_block_body(value, indent)
    if body is None:
        # The header's comment stays on the line; the content lines go away.
        return prefix + scalars.double_quoted(value) + rest
    chomp, lines = body
    return prefix + "|" + chomp + rest + line_break + line_break.join(lines)


def _block_end(text: str, start: int, end: int) -> int:
    """End of a block scalar's last non-blank line (libyaml's end includes trailing blank lines)."""
    lines = text[start:end].split("\n")
    while len(lines) > 1 and not lines[-1].strip(" \t\r"):
        lines.pop()
    kept = "\n".join(lines)
    if kept.endswith("\r"):
        kept = kept[:-1]
    return start + len(kept)


def plan_scalar_edit(doc: Document, entry: Entry, value: str) -> Splice | None:
    """The splice that makes ``entry`` the string ``value``; None when it already is."""
    node = entry.node
    if not isinstance(node, yaml.ScalarNode) or entry.alias:
        raise PromoteError(f"only scalar values can be set, this is a {entry.kind()}",
                           field=format_path(entry.path), line=doc.line_of(entry.start) + 1)
    if node.tag == STR_TAG and node.value == value:
        return None
    text = doc.text
    if entry.start == entry.end:  # `key:` with an empty (null) value
        return Splice(entry.start, entry.start, " " + scalars.render_inline(value, "", in_flow=entry.in_flow))
    prefix, scalar_start = _properties_end(text, entry.start, entry.end)
    style = node.style or ""
    try:
        if style in ("|", ">"):
            end = _block_end(text, scalar_start, entry.end)
            return Splice(entry.start, end, _block_splice(text, scalar_start, end, value, prefix))
        return Splice(entry.start, entry.end,
                       prefix + scalars.render_inline(value, style, in_flow=entry.in_flow))
    except ValueError as err:
        raise PromoteError(str(err), field=format_path(entry.path)) from None


def splice(text: str, splices: list[Splice]) -> str:
    """Apply non-overlapping splices to ``text``."""
    out: list[str] = []
    pos = 0
    for s in sorted(splices, key=lambda s: s.start):
        if s.start < pos:
            raise PromoteError("two edits overlap (the same scalar marked twice?)")
        out.append(text[pos : s.start])
        out.append(s.replacement)
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def _same(old: yaml.Node, new: yaml.Node, expected: dict[int, str], seen: set[tuple[int, int]]) -> bool:
    """True when ``new`` is ``old`` with the scalars in ``expected`` set to those strings."""
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        pair = (id(a), id(b))
        if pair in seen:
            continue  # aliases: each node pair is compared once
        seen.add(pair)
        if type(a) is not type(b):
            return False
        if isinstance(a, yaml.ScalarNode):
            want = expected.get(id(a))
            if want is None:
                if a.tag != b.tag or a.value != b.value:
                    return False
            elif b.tag != STR_TAG or b.value != want:
                return False
        else:
            if a.tag != b.tag or len(a.value) != len(b.value):
                return False
            if isinstance(a, yaml.MappingNode):
                for (ka, va), (kb, vb) in zip(a.value, b.value):
                    stack.append((ka, kb))
                    stack.append((va, vb))
            else:
                stack.extend(zip(a.value, b.value))
    return True


def verify(old: Document, new_text: str, expected: dict[int, str]) -> None:
    """Parse ``new_text`` and check it equals ``old`` with the given scalar nodes set to strings.

    ``expected`` maps id(old scalar node) -> new string value.  Raises PromoteError on any
    difference, so a rendering bug can never write a wrong file.
    """
    try:
        new_roots = [r for r in load.compose_marked(new_text) if r is not None]
    except yaml.YAMLError as err:
        raise PromoteError(f"internal error: the edited text does not parse ({err}); nothing written") from None
    except RecursionError:
        raise PromoteError("YAML nesting too deep to process") from None
    seen: set[tuple[int, int]] = set()
    if len(new_roots) != len(old.roots) or not all(
        _same(a, b, expected, seen) for a, b in zip(old.roots, new_roots)
    ):
        raise PromoteError("internal error: the edited text does not read back as intended; nothing written")


def set_scalars(doc: Document, targets: Sequence[tuple[Entry, str, str | None]]) -> tuple[str, list[Change]]:
    """Set each (entry, value, marker) target; return the new text and the changes made.

    The text is unchanged (same object) when every target already holds its value.
    """
    splices: list[Splice] = []
    changes: list[Change] = []
    expected: dict[int, str] = {}
    done: set[int] = set()
    for entry, value, marker in targets:
        if id(entry.node) in done:
            if expected.get(id(entry.node), value) != value:
                raise PromoteError("the same field is marked for two different values",
                                   field=format_path(entry.path))
            continue
        done.add(id(entry.node))
        planned = plan_scalar_edit(doc, entry, value)
        if planned is None:
            continue
        splices.append(planned)
        expected[id(entry.node)] = value
        changes.append(Change(entry.doc, format_path(entry.path), doc.line_of(entry.start) + 1,
                              entry.node.value, value, marker))
    if not splices:
        return doc.text, []
    new_text = splice(doc.text, splices)
    verify(doc, new_text, expected)
    return new_text, changes


def with_sources(doc: Document, targets: Sequence[Any], changes: list[Change]) -> list[Change]:
    """Fill in what set each change and the resource it is in (for reports)."""
    sources = {(t.entry.doc, format_path(t.entry.path)): t.source for t in targets}
    return [c._replace(source=sources.get((c.doc, c.path), ""), resource=resource_name(doc, c.doc),
                       api_version=api_version(doc, c.doc))
            for c in changes]


def _child(node: Any, key: str) -> Any:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                return v
    return None


def api_version(doc: Document, index: int) -> str:
    """The ``apiVersion`` of a document (empty when it has none, or not as text), for reports."""
    root = doc.roots[index] if index < len(doc.roots) else None
    node = _child(root, "apiVersion")
    return node.value if isinstance(node, ScalarNode) and isinstance(node.value, str) else ""


def resource_name(doc: Document, index: int) -> str:
    """``Kind/name`` (with ``namespace/`` before the name when set) of a document, for reports."""
    root = doc.roots[index] if index < len(doc.roots) else None
    metadata = _child(root, "metadata")
    kind, name, namespace = (_child(root, "kind"), _child(metadata, "name"), _child(metadata, "namespace"))
    return resource_label(*(n.value if isinstance(n, ScalarNode) else "" for n in (kind, name, namespace)))
