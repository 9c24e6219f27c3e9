"""The common case without the YAML library: line markers on one-line scalars of block YAML.

Most marked fields in GitOps repositories look like ``image: app:1.0 # {"$promotion": "ns:p:prod"}``
in kyaml-shaped block YAML.  For a document whose every marker is such a line comment, this
module finds the fields, splices the new values with the same renderer as the full path, and
checks each edited line with the fast reader (:mod:`krm_merge.krm.fastyaml`, whose data equals
libyaml's by contract and is tested against it): the line must read exactly as before but for
the new string (:func:`~krm_merge.krm.fastyaml.reread_scalar_line` says why that is the whole
document's check).  A run over a repository of such files never loads the YAML library.

It is an optimisation, never a second set of rules.  A document it is not sure about returns
None and takes the full path (libyaml index, the placement rules of
:mod:`krm_merge.promote.locate`, libyaml verification), which decides and reports: head-comment
markers, markers that are malformed or mention the key outside the comment, flow collections,
block scalars, empty values, anchors and aliases, non-string keys, plain values that look like
timestamps, setters that cannot be served, and any verification that does not come out exactly.
On the one shape it takes, the placement rule gives the same field: a line comment marks the
node that ends last before it on its line, which is the one-line scalar value there.
"""

from __future__ import annotations

from collections.abc import Mapping

from krm_merge.errors import KrmMergeError
from krm_merge.krm import fastyaml
from krm_merge.krm.fastyaml import MapPos, ScalarPos, SeqPos
from krm_merge.krm.values import PathPart, format_path, resource_label
from krm_merge.promote.changes import Change, lines_holding
from krm_merge.promote.markers import marker_value
from krm_merge.promote.scalars import render_inline
from krm_merge.promote.units import Setter
from krm_merge.records import Record
from krm_merge.yaml import load

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The fast reader's one-line scalar styles, as libyaml's node styles (what the renderer keeps).
_STYLES = {"plain": "", "single": "'", "double": '"'}


class FastChunk(Record):
    """A document promoted on the fast path."""

    text: str  # the new text (the input object when nothing changed)
    changes: list[Change]  # lines relative to the document, document index 0
    matches: list[tuple[int, ...]]  # per marked field with a setter: the promotions it counts for


class _Scalar(Record):
    """A one-line scalar of the document: where it is and the data holding it."""

    path: tuple[PathPart, ...]
    pos: ScalarPos
    container: Any  # the dict or list holding the value (of the old data)
    key: Any


class _GiveUp(Exception):
    """The document leaves the fast path's shape; the full path decides."""


def promote_chunk(text: str, keys: list[str], setters: Mapping[str, Mapping[str, Setter]]) -> FastChunk | None:
    """Promote one document (no ``---`` inside) on the fast path, or None to take the full path."""
    try:
        load.check_bounds(text, "the file")
    except KrmMergeError:
        return None  # the full path reports it
    parsed = fastyaml.parse(text)
    if parsed is None or parsed.aliases or parsed.anchor_lines:
        return None
    try:
        return _promote(parsed, text, keys, setters)
    except _GiveUp:
        return None


def _promote(parsed: fastyaml.Parsed, text: str, keys: list[str],
             setters: Mapping[str, Mapping[str, Setter]]) -> FastChunk:
    lines = text.split("\n")
    marked = lines_holding(text, keys)
    scalars = _one_line_scalars(parsed, marked)
    on_line: dict[int, _Scalar] = {}  # each marked line's scalar, checked
    for number in marked:
        found = scalars.get(number)
        if found is None or found.pos.style not in _STYLES or found.pos.comment < 0:
            raise _GiveUp  # a head comment, a flow or block value, a key in the text ...
        if any(k in lines[number][: found.pos.comment] for k in keys):
            raise _GiveUp
        on_line[number] = found
    # Key by key, line by line: the order the full path reports changes in.
    targets: list[tuple[_Scalar, str, str, Setter]] = []  # scalar, marker key, marker, setter
    for key in keys:
        for number in marked:
            found = on_line[number]
            comment = lines[number][found.pos.comment :]
            if key not in comment:
                continue
            marker = marker_value(comment, key)
            if marker is None:
                raise _GiveUp  # malformed, or not a marker: the full path says which
            setter = setters.get(key, {}).get(marker)
            if setter is None:
                continue  # another pipeline's marker
            if setter[0] is None:
                raise _GiveUp  # cannot be served: the full path raises the error
            if any(t[0] is found for t in targets):
                raise _GiveUp  # one comment naming the field for two keys: the full path checks the values
            targets.append((found, key, marker, setter))
    if not targets:
        return FastChunk(text, [], [])
    return _apply(parsed, text, lines, targets)


def _one_line_scalars(parsed: fastyaml.Parsed, lines: list[int]) -> dict[int, _Scalar | None]:
    """The scalar values on the given lines (a line holds at most one in block YAML).

    Only entries spanning one of the lines are walked.  A value under a key that is not a
    string maps to None: the full path names keys by their text, so paths would differ.
    """
    found: dict[int, _Scalar | None] = {}
    wanted = set(lines)
    first, last = lines[0], lines[-1]
    stack: list[tuple[Any, Any, tuple[PathPart, ...]]] = [(parsed.data, parsed.root, ())]
    while stack:
        data, node, path = stack.pop()
        children = node.entries.items() if isinstance(node, MapPos) else enumerate(node.items)
        for key, entry in children:
            if entry.end <= first or entry.start > last:
                continue
            child = entry.value
            named = isinstance(key, str) or isinstance(node, SeqPos)
            if isinstance(child, ScalarPos):
                if child.line in wanted:
                    found[child.line] = _Scalar(path + (key,), child, data, key) if named else None
            elif named:
                stack.append((data[key], child, path + (key,)))
    return found


def _apply(parsed: fastyaml.Parsed, text: str, lines: list[str],
           targets: list[tuple[_Scalar, str, str, Setter]]) -> FastChunk:
    changes: list[Change] = []
    new_lines: dict[int, str] = {}
    resource = _resource_name(parsed.data)
    api_version = parsed.data.get("apiVersion") if isinstance(parsed.data, dict) else None
    api_version = api_version if isinstance(api_version, str) else ""
    for scalar, key, marker, (value, _, _) in targets:
        assert value is not None
        pos = scalar.pos
        line = lines[pos.line]
        old_data = scalar.container[scalar.key]
        raw = line[pos.start : pos.end] if pos.style == "plain" else old_data
        if pos.style == "plain" and raw[:4].isdigit() and raw[4:5] == "-":
            raise _GiveUp  # libyaml may type it a timestamp: the full path's check decides
        if isinstance(old_data, str) and old_data == value:
            continue  # already the promoted value
        try:
            rendered = render_inline(value, _STYLES[pos.style], in_flow=False)
        except ValueError:
            raise _GiveUp from None  # the full path reports it with the field
        new_line = line[: pos.start] + rendered + line[pos.end :]
        # The check that the edit reads back as intended (the fast reader's, line by line).
        reread = fastyaml.reread_scalar_line(line, new_line)
        if type(reread) is not str or reread != value:
            raise _GiveUp
        new_lines[pos.line] = new_line
        changes.append(Change(0, format_path(scalar.path), pos.line + 1, raw, value, marker,
                              f'{{"{key}": "{marker}"}}', resource, api_version))
    matches = [setter[1] for _, _, _, setter in targets]
    if not new_lines:
        return FastChunk(text, [], matches)
    edited = lines.copy()
    for number, new_line in new_lines.items():
        edited[number] = new_line
    return FastChunk("\n".join(edited), changes, matches)


def _resource_name(data: Any) -> str:
    """``Kind/name`` (with ``namespace/`` before the name when set), as the full path names it."""
    metadata = data.get("metadata") if isinstance(data, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    parts = [(data, "kind"), (metadata, "name"), (metadata, "namespace")]
    if any(key in mapping and not isinstance(mapping[key], str) for mapping, key in parts):
        raise _GiveUp  # the full path names it by the value's text (`kind: null` is "null")
    return resource_label(*(mapping.get(key, "") for mapping, key in parts))
