"""The one home of three concepts every algorithm shares: deep equality, field paths, resource labels.

Each has exactly one implementation here; ``tests/architecture/test_one_home.py``
fails when a second one appears elsewhere.  The module imports nothing but ``re``
so the fast paths (and promote's text-only path) can use it without loading a
YAML library.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple, Sequence


class Label(NamedTuple):
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


# --- resource labels ----------------------------------------------------------------------


def resource_label(kind: str, name: str, namespace: str = "") -> str:
    """``Kind/[namespace/]name``, how every message names a resource; ``?`` for a missing part, "" with neither."""
    if not kind and not name:
        return ""
    return f"{kind or '?'}/{namespace + '/' if namespace else ''}{name or '?'}"
