"""The conflicts an update left for a person to decide: finding markers and deciding them (the marker engine).

``krm-merge conflicts`` lists them (:mod:`krm_merge.commands.conflicts`), ``krm-merge resolve`` decides them
(:mod:`krm_merge.update.resolution`); both only parse their options and call down here.

A conflict left in a package is a marker in one of its files that the
update which wrote it recorded in the package's conflict ledger
(:mod:`krm_merge.update.ledger`) and whose field still holds the value the
update left; a marker deleted or a value edited by hand is a decided
conflict, and CI can tell a resolved package from an
unresolved one by this command's exit code (0: none left, 3: some left, 1:
the package could not be read).  Marker-shaped text no update recorded (an
upstream can write any comment or diff3 region into its content) is listed
apart, as a warning, and never counts: it is not a conflict.

Kinds of marker are found by *finders* and decided by *resolvers*,
registered by kind in :data:`FINDERS` and :data:`RESOLVERS`; ``conflicts``
lists what every finder returns, ``resolve`` hands each file's markers to
the resolver of their kind.  A finder gets the ledger's entries of its kind
and binds each marker it finds to the entry recording it (or to none).  Two
kinds are registered: ``field``, the line comment ``# krm-merge:conflict
upstream=<json> origin=<json>`` that ``update --conflicts mark`` puts on a
field changed differently on both sides
(:func:`krm_merge.merge3.conflicts.marker_comment`); and ``text``, the diff3
regions ``update --files merge`` leaves in a non-KRM file (labelled
local/origin/upstream, :mod:`krm_merge.merge3.diff3`).  A further kind is
added by registering a finder and a resolver under a new name (and an update
recording its entries); nothing else changes.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from krm_merge import files, txn
from krm_merge.errors import KrmMergeError
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.package import read_package, split_documents
from krm_merge.krm.results import File, KrmError
from krm_merge.krm.snapshot import Snapshot
from krm_merge.krm.values import Label, PathPart
from krm_merge.krm.values import Path as DataPath
from krm_merge.merge3.conflicts import ABSENT_VALUE, MARKER, element_key, find_marker, format_path, is_not_recorded
from krm_merge.merge3.diff3 import LABELS, MARKER_SIZE, labelled_regions, region_sides
from krm_merge.merge3.nodes import to_plain_data
from krm_merge.outcomes.kinds import ConflictsLeft, MarkerOutcome, UnrecordedMarker, message
from krm_merge.outcomes.report import CONFLICTS_LEFT, Report
from krm_merge.outcomes.words import SIDES, UNRECORDED
from krm_merge.records import Record
from krm_merge.update.ledger import FIELD, TEXT, Entry, Ledger, bind_fields, bind_texts, doc_ref, read_ledgers
from krm_merge.yaml.load import collecting_duplicate_keys



@dataclass(frozen=True)
class Marker:
    """One marker in a package file, and the ledger entry recording it (``entry is None``: no update did).

    ``kind`` names the finder and resolver (``field``, ``text``); ``file`` is
    package-relative and ``line`` 1-based; ``resource`` is ``Kind/[ns/]name``
    and ``field`` the field path (``spec.containers[name=app].image``), both
    empty when the marker is not on a resource's field.  ``path`` is the
    field's data path (keys and list indices) for the resolver.  Values are
    data (:data:`~krm_merge.merge3.conflicts.ABSENT_VALUE` for a side without
    the field): local's as the file holds it, upstream's and origin's as the
    entry recorded them (never as the marker's text claims).
    """

    kind: str
    file: str
    line: int
    resource: str
    field: str
    local: Any = ABSENT_VALUE
    upstream: Any = ABSENT_VALUE
    origin: Any = ABSENT_VALUE
    path: DataPath = ()
    entry: Entry | None = None

    @property
    def recorded(self) -> bool:
        """Whether an update recorded this marker (only then is it a conflict)."""
        return self.entry is not None

    def outcome(self) -> MarkerOutcome:
        """The marker as a typed outcome, for the renderer (values as data, a side without the field left out)."""
        values = {side: getattr(self, side) for side in SIDES if getattr(self, side) is not ABSENT_VALUE}
        return MarkerOutcome(self.kind, self.file, self.line, self.resource, self.field, values)


Finder = Callable[[Snapshot, "list[Entry]"], "list[Marker]"]
"""Every marker of one kind in a package (its one listing, a ``Snapshot``: filter it, list nothing), each bound to
the entry (of those given) recording it."""
Resolver = Callable[[str, str, "list[Marker]", str], str]
"""``(file, text, recorded markers of that file, take) -> new text``: the choice applied, the markers removed."""

FINDERS: dict[str, Finder] = {}
RESOLVERS: dict[str, Resolver] = {}


def register(kind: str, finder: Finder, resolver: Resolver) -> None:
    """Make ``conflicts`` list and ``resolve`` decide markers of ``kind`` (the hook for new kinds)."""
    FINDERS[kind] = finder
    RESOLVERS[kind] = resolver


class Found(Record):
    """What a package holds: every marker (recorded or not), the ledgers honoured, warnings about the others."""

    markers: list[Marker]
    ledgers: list[Ledger]
    warnings: list[str]

    @property
    def recorded(self) -> list[Marker]:
        """The conflicts: markers an update recorded."""
        return [m for m in self.markers if m.entry is not None]

    @property
    def unrecorded(self) -> list[Marker]:
        """Marker-shaped text no update recorded: not conflicts."""
        return [m for m in self.markers if m.entry is None]


def scan(root: Path) -> Found:
    """Every marker of every registered kind, by file and line, bound to the ledgers' entries."""
    if not root.is_dir():
        raise KrmError(f"package {root} is not a directory")
    snapshot = Snapshot.local(root)  # the package's one listing: the ledgers' folders and every finder filter it
    ledgers, warnings = read_ledgers(root, snapshot.listing.subpackages)
    entries = [entry for ledger in ledgers for entry in ledger.entries]
    found = [marker for kind, finder in FINDERS.items()
             for marker in finder(snapshot, [e for e in entries if e.kind == kind])]
    return Found(sorted(found, key=lambda m: (m.file, m.line, m.kind)), ledgers, warnings)


def find_all(root: Path) -> list[Marker]:
    """Every marker of every registered kind, recorded or not (:attr:`Marker.entry`), by file and line."""
    return scan(root).markers


def scan_reporting(root: Path, report: Report) -> Found:
    """:func:`scan`, its warnings in ``report``: a key written twice in a marked document (read last-wins), a
    ledger not honoured, each marker no update recorded (an :class:`~krm_merge.outcomes.kinds.UnrecordedMarker`)."""
    with collecting_duplicate_keys() as duplicates:
        try:
            found = scan(root)
        finally:
            report.extend(message(text) for text in dict.fromkeys(dup.message() for dup in duplicates))
    report.extend(message(text) for text in found.warnings)
    report.extend(UnrecordedMarker(marker.outcome()) for marker in found.unrecorded)
    return found


def left(package: str, markers: list[Marker]) -> ConflictsLeft:
    """The conflicts left in a package (field markers and diff3 regions): exit code 3 while any is."""
    return ConflictsLeft(package, len(markers), sum(1 for m in markers if m.kind == TEXT))


# --- field markers -------------------------------------------------------------------------


def find_field_markers(snapshot: Snapshot, entries: list[Entry]) -> list[Marker]:
    """The ``# krm-merge:conflict`` comments in the package's YAML files (kpt's file set, filtered from ``snapshot``)."""
    pkg, _ = read_package(snapshot.root, validate=False, snapshot=snapshot)
    by_file: dict[str, list[Entry]] = {}
    for entry in entries:
        by_file.setdefault(entry.file, []).append(entry)
    found: list[Marker] = []
    for rel, source in sorted(pkg.files.items()):
        if MARKER not in source.text:
            continue
        line = 0
        for separator, doc in zip(source.separators, source.docs):
            line += separator.count("\n")
            if MARKER in doc:
                markers = _doc_markers(rel, doc, line, by_file.get(rel, []))
                taken = {id(m.entry) for m in markers if m.entry is not None}  # an entry binds one marker
                by_file[rel] = [e for e in by_file.get(rel, []) if id(e) not in taken]
                found.extend(markers)
            line += doc.count("\n")
    return found


def _doc_markers(rel: str, doc: str, first_line: int, entries: list[Entry]) -> list[Marker]:
    """The markers of one document; ``first_line`` is its 0-based line in the file."""
    lines = doc.split("\n")
    numbers = [n for n, text in enumerate(lines) if find_marker(text) >= 0]
    if not numbers:
        return []
    ref = doc_ref(doc)
    resource = ref.display() if ref is not None else ""
    tree = yamlio.load_rt(doc, rel)  # a document that does not read (a bomb) is an error naming the file, as before
    mine = [e for e in entries if e.resource == ref]
    bound = bind_fields(tree, lines, mine) if mine else {}
    fields = _field_lines(tree) if len(bound) < len(numbers) else {}
    out = []
    for number in numbers:
        if number in bound:
            entry, path = bound[number]
            out.append(Marker(FIELD, rel, first_line + number + 1, resource, entry.field, _plain(_at(tree, path)),
                              entry.upstream, entry.origin, path, entry))
            continue
        path, label = fields.get(number, ((), ()))
        out.append(Marker(FIELD, rel, first_line + number + 1, resource if path else "", format_path(label),
                          _plain(_at(tree, path)) if path else ABSENT_VALUE, path=path))
    return out


def _field_lines(tree: Any) -> dict[int, tuple[DataPath, tuple[Any, ...]]]:
    """Line of each map key -> (data path, path as ``conflicts`` prints it); the deepest key on a line wins."""
    out: dict[int, tuple[DataPath, tuple[Any, ...]]] = {}
    # A stack, not recursion: a document may nest as deep as the loader allows (yaml/load.MAX_DEPTH).
    stack: list[tuple[Any, DataPath, tuple[Any, ...]]] = [(tree, (), ())]
    while stack:
        node, path, label = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                here, shown = (*path, key), (*label, str(key))
                try:
                    # a round-trip map (ruamel's CommentedMap) has .lc; a plain dict's AttributeError is caught
                    line = node.lc.key(key)[0]  # type: ignore[attr-defined]
                    if len(out.get(line, ((),))[0]) <= len(here):
                        out[line] = (here, shown)
                except (AttributeError, KeyError, TypeError):
                    pass  # a key ruamel kept no position for: no marker can sit on it
                stack.append((value, here, shown))
        elif isinstance(node, list):
            stack.extend((value, (*path, index), (*label, _element_label(value, index))) for index, value in enumerate(node))
    return out


def _element_label(element: Any, index: int) -> PathPart:
    named = element_key(element)
    return Label(f"{named[0]}={named[1]}") if named is not None else index


def _at(tree: Any, path: DataPath) -> Any:
    node = tree
    for part in path:
        node = node[part]
    return node


def _plain(node: Any) -> Any:
    try:
        return to_plain_data(node)
    except RecursionError:
        return "<nested too deeply to show>"


def resolve_field_markers(rel: str, text: str, markers: list[Marker], take: str) -> str:
    """Remove the markers; with ``take == "upstream"`` also set each field to upstream's value as recorded.

    All choices of one document are one edit (its text parsed once, printed
    once), so the work grows with the number of markers, not with its square.
    """
    if "\r\n" in text:  # the editors work on LF text; a CRLF file is written back CRLF
        return resolve_field_markers(rel, text.replace("\r\n", "\n"), markers, take).replace("\n", "\r\n")
    separators, docs = split_documents(text)
    starts, line = [], 0  # the 0-based line each document starts at
    for separator, doc in zip(separators, docs):
        line += separator.count("\n")
        starts.append(line)
        line += doc.count("\n")
    mine: dict[int, list[Marker]] = {}
    for marker in markers:
        mine.setdefault(bisect.bisect_right(starts, marker.line - 1) - 1, []).append(marker)
    out = [separator + (_resolve_doc(rel, doc, starts[i], mine[i], take) if i in mine else doc)
           for i, (separator, doc) in enumerate(zip(separators, docs))]
    return "".join(out)


def _resolve_doc(rel: str, doc: str, first_line: int, markers: list[Marker], take: str) -> str:
    lines = doc.split("\n")
    for marker in markers:
        number = marker.line - first_line - 1
        start = find_marker(lines[number]) if 0 <= number < len(lines) else -1
        if start < 0:
            raise KrmError(f"{rel}:{marker.line}: the marker is no longer on this line (the file changed); run "
                           "krm-merge resolve again", file=File(rel))
        lines[number] = lines[number][:start]  # the marker runs to the end of its line
    unmarked = "\n".join(lines)
    if take != "upstream":
        return unmarked
    obj = Item(unmarked, what=rel)
    try:
        data = obj.copy_data()
        for marker in markers:
            assert marker.entry is not None  # only recorded markers are resolved
            if is_not_recorded(marker.entry.upstream):
                raise KrmError(f"{rel}:{marker.line}: {marker.field}: no readable upstream value: the update did not "
                               f"record a value that large ({marker.entry.upstream[1:-1]}); edit the field yourself "
                               "or --take local", file=File(rel))
            _take(data, marker.path, marker.entry.upstream)
        obj.set_data(data)
        return obj.text
    except (KrmMergeError, KeyError, IndexError, TypeError) as err:
        raise KrmError(f"{rel}: cannot write upstream's values: {_message(err)}", file=File(rel)) from None


def _take(data: Any, path: DataPath, value: Any) -> None:
    """Set the field at ``path`` to ``value``; an absent value deletes it and the maps that leaves empty,
    as the merge drops a map upstream deleted."""
    parents = [data]
    for part in path[:-1]:
        parents.append(parents[-1][part])
    if value is not ABSENT_VALUE:
        parents[-1][path[-1]] = value
        return
    del parents[-1][path[-1]]
    for depth in range(len(path) - 1, 0, -1):
        if isinstance(path[depth - 1], int) or parents[depth] != {}:
            break
        del parents[depth - 1][path[depth - 1]]


def _message(err: Exception) -> str:
    return err.one_line() if isinstance(err, KrmMergeError) else f"{type(err).__name__}: {err}"


register(FIELD, find_field_markers, resolve_field_markers)


# --- text markers (update --files merge) ------------------------------------------------


def find_text_markers(snapshot: Snapshot, entries: list[Entry]) -> list[Marker]:
    """The diff3 regions ``update --files merge`` left in non-KRM files (labelled local/origin/upstream).

    Only regions with :data:`~krm_merge.merge3.diff3.LABELS` count: a file
    that quotes other conflict markers (a README about git) holds none.
    """
    opening = f"{'<' * MARKER_SIZE} {LABELS[0]}".encode()
    by_file: dict[str, list[Entry]] = {}
    for entry in entries:
        by_file.setdefault(entry.file, []).append(entry)
    found: list[Marker] = []
    # Every file, hidden ones too, as update's --files merge writes them; a link to a file read through.
    for rel in _files_followed(snapshot):
        try:
            data = files.read_bytes(os.path.join(snapshot.root, rel))
            text = data.decode("utf-8") if opening in data else ""
        except (KrmMergeError, OSError, UnicodeDecodeError):
            continue  # update merges no such file (too large, unreadable, binary): no marker of ours
        if not text:
            continue
        lines = text.splitlines()
        bound = bind_texts(text, by_file.get(rel, []))
        for region in labelled_regions(text):
            local, origin, upstream = region_sides(lines, region)
            found.append(Marker(TEXT, rel, region.start, "", "", local, upstream, origin,
                                entry=bound.get(region.start)))
    return found


def _files_followed(snapshot: Snapshot) -> list[str]:
    """Every file of the one listing, and its links to a file (one ``stat`` each), as a listing that follows
    links names them."""
    linked = [rel for rel in snapshot.listing.links if os.path.isfile(os.path.join(snapshot.root, rel))]
    return sorted([f.rel for f in snapshot.regular_files()] + linked)


def resolve_text_markers(rel: str, text: str, markers: list[Marker], take: str) -> str:
    """Each region of ``markers`` replaced by local's or upstream's lines (line ends kept).

    A region is bound to its entry only when its three sides are the ones the
    update recorded, so upstream's lines here are the entry's.
    """
    wanted = {m.line for m in markers}
    lines = text.splitlines(keepends=True)
    for region in reversed(labelled_regions(text)):
        if region.start not in wanted:
            continue
        if take == "local":
            kept = lines[region.start:(region.base or region.separator) - 1]
        else:
            kept = lines[region.separator:region.end - 1]
        lines[region.start - 1:region.end] = kept
    return "".join(lines)


register(TEXT, find_text_markers, resolve_text_markers)


def conflicts_left(package: str, report: Report) -> list[Marker]:
    """``krm-merge conflicts``: the package's conflicts (read under the package lock: a half-written file is never
    listed), each in ``report`` with what is left."""
    # read-only: locks (and recovers) only when a write was interrupted
    with txn.PackageLock(package, "krm-merge conflicts", read_only=True) as lock:
        report.extend(message(text) for text in lock.messages)
        found = scan_reporting(Path(package), report).recorded
    report.extend(m.outcome() for m in found)
    if found:
        report.add(left(package, found))
    return found


__all__ = ["CONFLICTS_LEFT", "FINDERS", "RESOLVERS", "UNRECORDED", "Found", "Marker", "conflicts_left", "find_all",
           "left", "register", "scan", "scan_reporting"]
