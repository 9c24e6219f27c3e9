"""Where each line and comment of a block-style YAML file sits, by field path.

A small line scanner for the corpus's own files (block style, any indentation,
compact or indented sequences, flow collections spread over lines): every line
gets the path of the field it belongs to, list elements named by an identity
key (``containers[name=app]``) so a reordered element keeps its path.  A
comment line belongs to the next content line (a head comment), or to its
document when nothing follows in the document (a foot comment).  Used to
check that untouched lines come back byte-identical and that every comment
stays attached to the same element or key.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

IDENTITY_KEYS = ("name", "containerPort", "port", "mountPath", "op", "host", "image")
_KEY = re.compile(r"""^(?P<key>[^\s#'"\[\]{}:,][^#:]*?|"[^"]*"|'[^']*'):(?:\s+(?P<value>.*))?$""")
_COMMENT = re.compile(r"""(?:^|\s)(#.*)$""")


@dataclass(frozen=True)
class Line:
    """One line of the file and the field path it belongs to."""

    number: int
    text: str
    path: str
    comment: str | None  # the comment text on this line, if any


def _strip_comment(value: str) -> tuple[str, str | None]:
    """Value and trailing comment (quotes respected well enough for the corpus)."""
    quote: str | None = None
    for i, ch in enumerate(value):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or value[i - 1] in " \t"):
            return value[:i].rstrip(), value[i:].rstrip()
    return value, None


def _depth(text: str) -> int:
    return text.count("[") + text.count("{") - text.count("]") - text.count("}")


@dataclass
class _Frame:
    indent: int
    segment: str
    element: bool


def locate(text: str) -> list[Line]:
    """Every line of ``text`` with its path (see the module docstring)."""
    lines = text.split("\n")
    paths: list[str | None] = [None] * len(lines)
    doc = 0
    stack: list[_Frame] = []
    counters: Counter[str] = Counter()
    flow_depth = 0
    block_indent: int | None = None

    def current() -> str:
        out = f"doc{doc}"
        for frame in stack:
            out += frame.segment if frame.element else "." + frame.segment
        return out

    for n, raw in enumerate(lines):
        stripped = raw.strip()
        if raw.startswith("---"):
            doc, stack, counters, flow_depth, block_indent = doc + 1, [], Counter(), 0, None
            paths[n] = f"doc{doc}"
            continue
        if not stripped or stripped.startswith("#"):
            continue  # attached below
        indent = len(raw) - len(raw.lstrip(" "))
        if block_indent is not None and indent > block_indent:
            paths[n] = current()
            continue
        block_indent = None
        if flow_depth > 0:
            paths[n] = current()
            flow_depth += _depth(_strip_comment(stripped)[0])
            continue
        body = stripped
        column = indent
        if body == "-" or body.startswith("- "):
            while stack and (stack[-1].indent > column or (stack[-1].indent == column and stack[-1].element)):
                stack.pop()
            rest = body[1:].lstrip(" ")
            parent = current()
            match = _KEY.match(_strip_comment(rest)[0]) if rest else None
            ident = None
            if match and match.group("key") in IDENTITY_KEYS and match.group("value"):
                ident = f"[{match.group('key')}={match.group('value').strip()}]"
            index = counters[parent]
            counters[parent] += 1
            stack.append(_Frame(column, ident or f"[{index}]", True))
            column += len(body) - len(rest)
            body = rest
            if not body:
                paths[n] = current()
                continue
        value, _ = _strip_comment(body)
        match = _KEY.match(value)
        if match is None:
            paths[n] = current()
            flow_depth = max(_depth(value), 0)
            continue
        while stack and stack[-1].indent >= column and not (stack[-1].element and stack[-1].indent < column):
            stack.pop()
        stack.append(_Frame(column, match.group("key").strip("\"'"), False))
        paths[n] = current()
        rhs = (match.group("value") or "").strip()
        if rhs[:1] in "|>" and rhs:
            block_indent = column
        elif rhs[:1] in "[{":
            flow_depth = max(_depth(rhs), 0)
    # Comment-only lines: the next content line of the same document, else the previous one.
    out: list[Line] = []
    for n, raw in enumerate(lines):
        path = paths[n]
        if path is None and raw.strip():
            after = next((paths[m] for m in range(n + 1, len(lines)) if paths[m] is not None), None)
            before = next((paths[m] for m in range(n - 1, -1, -1) if paths[m] is not None), None)
            same_doc = after is not None and not lines[_next_content(lines, paths, n)].startswith("---")
            # Nothing follows in its document: a foot comment of the document itself.
            path = after if same_doc else re.split(r"[.\[]", before or "doc0")[0]
        comment = None
        stripped = raw.strip()
        if stripped.startswith("#"):
            comment = stripped
        elif stripped:
            comment = _strip_comment(stripped)[1]
        out.append(Line(n + 1, raw, path or "", comment))
    return out


def _next_content(lines: list[str], paths: list[str | None], n: int) -> int:
    for m in range(n + 1, len(lines)):
        if paths[m] is not None:
            return m
    return n


def comments(text: str) -> Counter[tuple[str, str]]:
    """(path, comment text) of every comment: its count and where it is attached."""
    return Counter((line.path, line.comment) for line in locate(text) if line.comment)


def under(path: str, prefixes: tuple[str, ...]) -> bool:
    """True if ``path`` is one of ``prefixes`` or below one."""
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in prefixes)


def untouched_lines(text: str, touched: tuple[str, ...]) -> Counter[tuple[str, str]]:
    """(path, exact line text) of every non-blank line outside the touched paths."""
    return Counter((line.path, line.text) for line in locate(text)
                   if line.text.strip() and not under(line.path, touched))
