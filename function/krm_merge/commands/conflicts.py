"""``krm-merge conflicts PKG``: what an update under ``--conflicts mark`` left for a person to decide.

Every conflict left in a package is a marker in one of its files; there is
no other record, so a value edited by hand and its marker deleted is a
decided conflict, and CI can tell a resolved package from an unresolved one
by this command's exit code (0: none left, 3: some left, 1: the package
could not be read).

Kinds of marker are found by *finders* and decided by *resolvers*,
registered by kind in :data:`FINDERS` and :data:`RESOLVERS`; ``conflicts``
lists what every finder returns, ``resolve`` hands each file's markers to
the resolver of their kind.  Two kinds are registered: ``field``, the line
comment ``# krm-merge:conflict upstream=<json> origin=<json>`` that
``update --conflicts mark`` puts on a field changed differently on both
sides (:func:`krm_merge.merge3.conflicts.marker_comment`); and ``text``,
the diff3 regions ``update --files merge`` leaves in a non-KRM file
(labelled local/origin/upstream, :mod:`krm_merge.merge3.textfile`).  A
further kind is added by registering a finder and a resolver under a new
name; nothing else changes.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from krm_merge import files, txn
from krm_merge.errors import KrmMergeError
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.package import read_package, split_documents
from krm_merge.krm.results import File, KrmError
from krm_merge.krm.values import Label, PathPart, render_value
from krm_merge.krm.values import Path as DataPath
from krm_merge.merge3 import textfile
from krm_merge.merge3.conflicts import ABSENT, ABSENT_VALUE, MARKER, find_marker, format_path, parse_marker
from krm_merge.merge3.nodes import to_plain_data
from krm_merge.merge3.rules import FALLBACK_KEYS
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import ConflictsLeft, MarkerOutcome, message
from krm_merge.outcomes.report import CONFLICTS_LEFT, Report
from krm_merge.yaml.load import collecting_duplicate_keys

PROG = "krm-merge conflicts"


@dataclass(frozen=True)
class Marker:
    """One conflict left in a package file.

    ``kind`` names the finder and resolver (``field``); ``file`` is
    package-relative and ``line`` 1-based; ``resource`` is ``Kind/[ns/]name``
    and ``field`` the field path (``spec.containers[name=app].image``), both
    empty when the marker is not on a resource's field.  ``path`` is the
    field's data path (keys and list indices) for the resolver; values are
    the marker's own renderings (compact JSON, ``<absent>``).
    """

    kind: str
    file: str
    line: int
    resource: str
    field: str
    local: str
    upstream: str
    origin: str
    path: DataPath = ()

    def outcome(self) -> MarkerOutcome:
        """The marker as a typed outcome, for the renderer (``path`` is internal)."""
        return MarkerOutcome(self.kind, self.file, self.line, self.resource, self.field, self.local, self.upstream,
                             self.origin)


Finder = Callable[[Path], "list[Marker]"]
"""Every marker of one kind below a package root."""
Resolver = Callable[[str, str, "list[Marker]", str], str]
"""``(file, text, markers of that file, take) -> new text``: the choice applied, the markers removed."""

FINDERS: dict[str, Finder] = {}
RESOLVERS: dict[str, Resolver] = {}


def register(kind: str, finder: Finder, resolver: Resolver) -> None:
    """Make ``conflicts`` list and ``resolve`` decide markers of ``kind`` (the hook for new kinds)."""
    FINDERS[kind] = finder
    RESOLVERS[kind] = resolver


def find_all(root: Path) -> list[Marker]:
    """Every marker of every registered kind, by file and line."""
    if not root.is_dir():
        raise KrmError(f"package {root} is not a directory")
    found = [marker for finder in FINDERS.values() for marker in finder(root)]
    return sorted(found, key=lambda m: (m.file, m.line, m.kind))


def find_reporting_duplicates(root: Path, report: Report) -> list[Marker]:
    """:func:`find_all`; a key written twice in a marked document is read last-wins and named in a warning of ``report``."""
    with collecting_duplicate_keys() as duplicates:
        try:
            return find_all(root)
        finally:
            report.extend(message(text) for text in dict.fromkeys(dup.message() for dup in duplicates))


def left(package: str, markers: list[Marker]) -> ConflictsLeft:
    """The conflicts left in a package (field markers and diff3 regions): exit code 3 while any is."""
    return ConflictsLeft(package, len(markers), sum(1 for m in markers if m.kind == "text"))


# --- field markers -------------------------------------------------------------------------

_LABEL_KEYS = ("name", *(k for k in FALLBACK_KEYS if k != "name"))  # how `update` labels most elements


def find_field_markers(root: Path) -> list[Marker]:
    """The ``# krm-merge:conflict`` comments in the package's YAML files (kpt's file set)."""
    pkg, _ = read_package(root, validate=False)
    found: list[Marker] = []
    for rel, source in sorted(pkg.files.items()):
        if MARKER not in source.text:
            continue
        line = 0
        for separator, doc in zip(source.separators, source.docs):
            line += separator.count("\n")
            if MARKER in doc:
                found.extend(_doc_markers(rel, doc, line))
            line += doc.count("\n")
    return found


def _doc_markers(rel: str, doc: str, first_line: int) -> list[Marker]:
    """The markers of one document; ``first_line`` is its 0-based line in the file."""
    tree = yamlio.load_rt(doc, rel)
    fields = _field_lines(tree)
    resource = _resource_label(doc)
    out = []
    for number, text in enumerate(doc.split("\n")):
        if find_marker(text) < 0:
            continue
        values = parse_marker(text)
        upstream, origin = ("?", "?") if values is None else (_render(values[0]), _render(values[1]))
        path, label = fields.get(number, ((), ()))
        local = _render(to_plain_data(_at(tree, path))) if path else "?"
        out.append(Marker("field", rel, first_line + number + 1, resource if path else "", format_path(label),
                          local, upstream, origin, path))
    return out


def _field_lines(tree: Any) -> dict[int, tuple[DataPath, tuple[Any, ...]]]:
    """Line of each map key -> (data path, path as ``update`` prints it); the deepest key on a line wins."""
    out: dict[int, tuple[DataPath, tuple[Any, ...]]] = {}

    def walk(node: Any, path: DataPath, label: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here, shown = (*path, key), (*label, str(key))
                try:
                    out[node.lc.key(key)[0]] = (here, shown)
                except (AttributeError, KeyError, TypeError):
                    pass  # a key ruamel kept no position for: no marker can sit on it
                walk(value, here, shown)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, (*path, index), (*label, _element_label(value, index)))

    walk(tree, (), ())
    return out


def _element_label(element: Any, index: int) -> PathPart:
    if isinstance(element, dict):
        for key in _LABEL_KEYS:
            value = element.get(key)
            if value is not None and not isinstance(value, (dict, list)):
                return Label(f"{key}={value}")
    return index


def _resource_label(doc: str) -> str:
    try:
        return KubeObject(doc).ref().display()
    except KrmMergeError:
        return ""


def _at(tree: Any, path: DataPath) -> Any:
    node = tree
    for part in path:
        node = node[part]
    return node


def _render(value: Any) -> str:
    if value is ABSENT_VALUE:
        return ABSENT
    return render_value(value, as_json=True)  # bounded: a message, not the value


def resolve_field_markers(rel: str, text: str, markers: list[Marker], take: str) -> str:
    """Remove the markers; with ``take == "upstream"`` also set each field to the marker's upstream value."""
    if "\r\n" in text:  # the editors work on LF text; a CRLF file is written back CRLF
        return resolve_field_markers(rel, text.replace("\r\n", "\n"), markers, take).replace("\n", "\r\n")
    separators, docs = split_documents(text)
    line = 0
    out = []
    for separator, doc in zip(separators, docs):
        line += separator.count("\n")
        mine = [m for m in markers if line < m.line <= line + doc.count("\n") + (0 if doc.endswith("\n") else 1)]
        out.append(separator + (_resolve_doc(rel, doc, line, mine, take) if mine else doc))
        line += doc.count("\n")
    return "".join(out)


def _resolve_doc(rel: str, doc: str, first_line: int, markers: list[Marker], take: str) -> str:
    lines = doc.split("\n")
    choices: list[tuple[Marker, Any]] = []
    for marker in markers:
        number = marker.line - first_line - 1
        values = parse_marker(lines[number])
        if take == "upstream":
            if values is None or not marker.path:
                raise KrmError(f"{rel}:{marker.line}: the marker names no field or no readable upstream value; "
                               "edit the line by hand", file=File(rel))
            choices.append((marker, values[0]))
        start = find_marker(lines[number])
        lines[number] = lines[number][:start]  # the marker runs to the end of its line
    obj = KubeObject("\n".join(lines))
    for marker, value in choices:
        try:
            if value is ABSENT_VALUE:
                _delete(obj, marker.path)
            else:
                obj.set(marker.path, value)
        except (KrmMergeError, KeyError, IndexError, TypeError) as err:
            raise KrmError(f"{rel}:{marker.line}: cannot set {marker.field} to upstream's value: {err}",
                           obj, marker.field, file=File(rel)) from None
    return obj.text if choices else "\n".join(lines)


def _delete(obj: KubeObject, path: DataPath) -> None:
    """Delete the field and the maps that leaves empty, as the merge drops a map upstream deleted."""
    obj.delete(path)
    parent = path[:-1]
    while parent and not isinstance(parent[-1], int) and obj.get(parent) == {}:
        obj.delete(parent)
        parent = parent[:-1]


register("field", find_field_markers, resolve_field_markers)


# --- text markers (update --files merge) ------------------------------------------------


def find_text_markers(root: Path) -> list[Marker]:
    """The diff3 regions ``update --files merge`` left in non-KRM files (labelled local/origin/upstream).

    Only regions with :data:`~krm_merge.merge3.textfile.LABELS` count: a file
    that quotes other conflict markers (a README about git) is not a conflict.
    """
    opening = f"{'<' * textfile.MARKER_SIZE} {textfile.LABELS[0]}".encode()
    found: list[Marker] = []
    # Every file, hidden ones too, as update's --files merge writes them; links follow the lister's policy.
    for listed in pkgio.list_package(root, hidden=True, krmignore=False).files:
        try:
            data = files.read_bytes(listed.path)
            text = data.decode("utf-8") if opening in data else ""
        except (KrmMergeError, OSError, UnicodeDecodeError):
            continue  # update merges no such file (too large, unreadable, binary): no marker of ours
        found.extend(_text_marker(listed.rel, text.splitlines(), region) for region in _our_regions(text))
    return found


def _our_regions(text: str) -> list[textfile.MarkerRegion]:
    lines = text.splitlines()
    local, _, upstream = textfile.LABELS
    size = textfile.MARKER_SIZE
    return [r for r in textfile.find_markers(text)
            if lines[r.start - 1] == f"{'<' * size} {local}" and lines[r.end - 1] == f"{'>' * size} {upstream}"]


def _text_marker(rel: str, lines: list[str], region: textfile.MarkerRegion) -> Marker:
    local_end = region.base or region.separator
    sides = (lines[region.start:local_end - 1], lines[region.separator:region.end - 1],
             lines[region.base:region.separator - 1] if region.base else [])
    local, upstream, origin = (render_value("\n".join(side), as_json=True) for side in sides)
    return Marker("text", rel, region.start, "", "", local, upstream, origin)


def resolve_text_markers(rel: str, text: str, markers: list[Marker], take: str) -> str:
    """Each region of ``markers`` replaced by local's or upstream's lines (line ends kept)."""
    wanted = {m.line for m in markers}
    lines = text.splitlines(keepends=True)
    for region in reversed(_our_regions(text)):
        if region.start not in wanted:
            continue
        if take == "local":
            kept = lines[region.start:(region.base or region.separator) - 1]
        else:
            kept = lines[region.separator:region.end - 1]
        lines[region.start - 1:region.end] = kept
    return "".join(lines)


register("text", find_text_markers, resolve_text_markers)


# --- the command ----------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"krm-merge conflicts: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog="krm-merge conflicts",
                description="List the conflicts an update left marked in a package; exit 3 while any is left.")
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--output", choices=("text", "json"), default="text", help="one line per conflict, or a JSON list")
    p.add_argument("--results", metavar="FILE", help=render.RESULTS_HELP)
    return p


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code (0 none left, 3 some left, 1 error)."""
    args = parser().parse_args(argv)
    report = Report("conflicts", args.package)
    markers = [m.outcome() for m in report.guard(lambda: _main(args, report)) or []]
    listing = render.marker_list(markers) if args.output == "json" else render.marker_lines(markers)
    # The list is the command's document (stdout); a package that could not be read lists nothing.
    return render.finish(report, results_file=args.results, document=[listing] if report.exit_code != 1 else [])


def _main(args: argparse.Namespace, report: Report) -> list[Marker]:
    # read-only: locks (and recovers) only when a write was interrupted, so a half-written file is never listed
    with txn.PackageLock(args.package, PROG, read_only=True) as lock:
        report.extend(message(text) for text in lock.messages)
        found = find_reporting_duplicates(Path(args.package), report)
    report.extend(m.outcome() for m in found)
    if found:
        report.add(left(args.package, found))
    return found


__all__ = ["CONFLICTS_LEFT", "FINDERS", "RESOLVERS", "Marker", "find_all", "find_reporting_duplicates", "main", "parser",
           "register"]
