"""The conflict ledger: every marker an update left in a package, recorded beside it as git keeps its merge state.

A marker in a file is text, and text can come from anywhere: an upstream can
write ``# krm-merge:conflict upstream="evil"`` or a diff3 region into its own
content.  So a marker is a conflict only when the update that wrote it
recorded it here, in ``.krm-merge.conflicts`` at the root of the package it
ran on (:data:`LEDGER_NAME`; JSON, no YAML suffix, so neither kpt's reader nor
krm-merge's lister takes it for content).  One :class:`Entry` per marker:
its kind (``field``: a comment on a field's line; ``text``: a diff3 region),
its file, and for a field the resource, where the field is (a
:data:`~krm_merge.merge3.conflicts.Locator`, which still finds it after
lines were added around it) and the three values as data; for a region the
three sides' texts.  ``conflicts`` and ``resolve`` act only on a marker an
entry binds (:func:`bind_fields`, :func:`bind_texts`), and ``resolve --take
upstream`` writes the entry's value, never what the marker's text says.

The ledger is written in the update's own transaction (:func:`record`); a
later update keeps the entries whose marker is still there and adds its own;
``resolve`` drops what it decided, and the file goes when its last entry
does.  An entry whose marker is gone was decided by hand.

A ledger is honoured only where krm-merge could have written it: it names
the nearest ``upstreamLock`` commit at or above its folder as the update
left it (``""``: none), and must still name it (:func:`read_ledger`).  A
tool that copies a package whole (``kpt pkg get`` copies hidden files) can
bring an upstream's forged ledger along, but that ledger is inside the
package fetched at some commit, and cannot name the commit it is part of.
Content from origin and upstream never brings a file of this name
(:func:`krm_merge.krm.pkgio.list_package` leaves it out, with a warning for
a tree from elsewhere).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.upstream import locked_commit
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.package import split_documents
from krm_merge.krm.results import File, KrmError, ResourceRef
from krm_merge.krm.values import Path as DataPath
from krm_merge.merge3.conflicts import ABSENT_VALUE, MARKER, FieldMark, Locator, Lookups, find_marker, locate
from krm_merge.merge3.diff3 import LABELS, MARKER_SIZE, MarkerRegion, labelled_regions, region_sides
from krm_merge.outcomes.kinds import MarkerShaped, message
from krm_merge.records import Record

from .plan import UpdatePlan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence

LEDGER_NAME = pkgio.LEDGER_NAME
API_VERSION = "krm-merge.dev/v1"
KIND = "ConflictLedger"
NOTE = ("The conflicts krm-merge update left marked in this package. krm-merge conflicts and resolve act only on "
        "markers recorded here; commit it with the package; resolve deletes it when the last conflict is decided.")

FIELD = "field"
TEXT = "text"


class Entry(Record):
    """One marker an update wrote.

    ``file`` is relative to the command's root (in the ledger file: to the
    ledger's package); a ``field`` entry names its ``resource`` (None for a
    plain YAML file), the ``field`` as the update printed it and its
    ``locator``; values are data, :data:`~krm_merge.merge3.conflicts.ABSENT_VALUE`
    for a side without the field.  A ``text`` entry's values are its region's
    three sides (:func:`~krm_merge.merge3.diff3.region_sides`).
    """

    kind: str
    file: str
    resource: ResourceRef | None
    field: str
    locator: Locator
    local: Any
    upstream: Any
    origin: Any

    def within(self, folder: str) -> Entry:
        """The entry named from a package ``folder`` levels up (``""``: unchanged)."""
        return self._replace(file=f"{folder}/{self.file}") if folder else self

    def below(self, folder: str) -> Entry:
        """The entry named from the package at ``folder`` (the inverse of :meth:`within`)."""
        return self._replace(file=self.file[len(folder) + 1:]) if folder else self

    @property
    def place(self) -> tuple[Any, ...]:
        """The field an entry's marker is on: a later update's marker there replaces an earlier one's."""
        return self.kind, self.file, self.resource, self.locator


class Ledger(Record):
    """One ledger file: the package ``folder`` it is at (relative to the command's root), the ``upstreamLock``
    commit it was written for (``""``: none), its entries (named from the command's root) and the bytes read."""

    folder: str
    lock: str
    entries: tuple[Entry, ...]
    before: bytes | None

    @property
    def path(self) -> str:
        """The ledger file, relative to the command's root."""
        return f"{self.folder}/{LEDGER_NAME}" if self.folder else LEDGER_NAME


# --- entries from what the update wrote ----------------------------------------------------


def field_entry(obj: KubeObject, file: str, mark: FieldMark) -> Entry:
    """The entry of a marker the merge wrote on a field of ``obj`` (in ``file``)."""
    return Entry(FIELD, file, _ref_or_none(obj.ref()), mark.field, mark.locator, mark.local, mark.upstream,
                 mark.origin)


def text_entries(file: str, data: bytes, regions: Sequence[MarkerRegion]) -> list[Entry]:
    """The entries of the diff3 regions ``--files merge`` left in ``file`` (its merged bytes)."""
    if not regions:
        return []  # a file merged cleanly, or a binary one kept (not text)
    lines = data.decode("utf-8").splitlines()
    return [Entry(TEXT, file, None, "", (), *_text_values(region_sides(lines, region))) for region in regions]


def _text_values(sides: tuple[str, str, str]) -> tuple[str, str, str]:
    local, origin, upstream = sides
    return local, upstream, origin  # Entry's order


# --- the file ------------------------------------------------------------------------------


def encode(entries: Iterable[Entry], lock: str) -> bytes:
    """The ledger file's bytes: JSON, one conflict a line (a version-control diff shows one line per conflict).

    A KrmError when a value cannot be written (nested deeper than JSON's encoder goes).
    """
    head = {"apiVersion": API_VERSION, "kind": KIND, "note": NOTE, "lockedCommit": lock}
    try:
        lines = [json.dumps(_entry_json(e), ensure_ascii=False, default=str) for e in entries]
    except (RecursionError, ValueError) as err:
        raise KrmError(f"{LEDGER_NAME}: a conflicting value cannot be recorded ({type(err).__name__}: nested too "
                       "deeply or not data)", file=File(LEDGER_NAME)) from None
    fields = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in head.items())
    return ("{\n" + fields + ',\n "conflicts": [\n' + ",\n".join("  " + line for line in lines) + "\n ]\n}\n").encode()


def _entry_json(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": entry.kind, "file": entry.file}
    if entry.kind == FIELD:
        out["resource"] = entry.resource.to_dict() if entry.resource is not None else {}
        out["field"] = entry.field
        out["path"] = [dict([part]) if isinstance(part, tuple) else part for part in entry.locator]
    for name in ("local", "upstream", "origin"):  # a side without the field has no key
        value = getattr(entry, name)
        if value is not ABSENT_VALUE:
            out[name] = value
    return out


def decode(data: bytes, where: str) -> tuple[str, list[Entry]]:
    """The lock and the entries of a ledger file's bytes; a KrmError naming the file and the field when malformed."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise _malformed(where, "", f"not JSON ({type(err).__name__})") from None
    if not isinstance(doc, dict) or doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise _malformed(where, "apiVersion", f"expected apiVersion {API_VERSION} and kind {KIND}")
    lock, found = doc.get("lockedCommit", ""), doc.get("conflicts")
    if not isinstance(lock, str):
        raise _malformed(where, "lockedCommit", "expected a string")
    if not isinstance(found, list):
        raise _malformed(where, "conflicts", "expected a list")
    return lock, [_entry_of(item, where, f"conflicts[{i}]") for i, item in enumerate(found)]


def _entry_of(item: Any, where: str, field: str) -> Entry:
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str) or not isinstance(item.get("file"), str):
        raise _malformed(where, field, "expected a map with kind and file")
    try:
        files.check_relative(item["file"])
    except KrmMergeError:
        raise _malformed(where, f"{field}.file", "not a path inside the package") from None
    values = [item[name] if name in item else ABSENT_VALUE for name in ("local", "upstream", "origin")]
    if item["kind"] != FIELD:
        return Entry(item["kind"], item["file"], None, "", (), *values)
    resource, path = item.get("resource"), item.get("path")
    if not isinstance(resource, dict) or not all(isinstance(v, str) for v in resource.values()):
        raise _malformed(where, f"{field}.resource", "expected a map of strings")
    if not isinstance(path, list) or not path or not all(_locator_part(p) for p in path):
        raise _malformed(where, f"{field}.path", "expected a list of keys, indices and {field: value} elements")
    ref = ResourceRef(resource.get("apiVersion", ""), resource.get("kind", ""), resource.get("name", ""),
                      resource.get("namespace", ""))
    locator = tuple(next(iter(p.items())) if isinstance(p, dict) else p for p in path)
    return Entry(FIELD, item["file"], _ref_or_none(ref), str(item.get("field", "")), locator, *values)


def _locator_part(part: Any) -> bool:
    if isinstance(part, dict):
        return len(part) == 1 and not isinstance(next(iter(part.values())), (dict, list))
    return isinstance(part, str) or (isinstance(part, int) and not isinstance(part, bool) and part >= 0)


def _malformed(where: str, field: str, why: str) -> KrmError:
    at = f" {field}:" if field else ""
    return KrmError(f"{where}:{at} {why}; the conflict ledger is krm-merge's own file: restore it, or delete it and "
                    "decide its markers by hand", field=field or None, file=File(where))


def _ref_or_none(ref: ResourceRef) -> ResourceRef | None:
    return ref if any(ref) else None


# --- which ledgers count -------------------------------------------------------------------

def package_lock(folder: Path, kptfile: bytes | None = None) -> str | None:
    """The commit of the nearest ``upstreamLock`` at or above ``folder`` (``kptfile``: ``folder``'s Kptfile as it
    will be, else as it is): the fetched package the folder is part of; ``""`` when none is, None when a Kptfile
    on the way cannot be read."""
    here = folder.resolve()
    for at in (here, *here.parents):
        try:
            data = kptfile if at == here and kptfile is not None else _kptfile_bytes(at)
            commit = locked_commit(yamlio.load_data(data.decode("utf-8"), pkgio.KPTFILE)) if data is not None else ""
        except (KrmMergeError, OSError, UnicodeDecodeError):
            return None
        if commit:
            return commit
    return ""


def _kptfile_bytes(folder: Path) -> bytes | None:
    path = folder / pkgio.KPTFILE
    return files.read_bytes(path) if path.is_file() else None


def read_ledger(root: Path, folder: str = "") -> tuple[Ledger | None, str | None]:
    """The ledger at ``root/folder`` if there is one, and why it is not honoured (None: it is).

    It must name the lock :func:`package_lock` finds for its folder: a ledger
    that arrived inside a fetched package (``kpt pkg get`` copies hidden files)
    cannot name the commit it was fetched at.
    """
    rel = f"{folder}/{LEDGER_NAME}" if folder else LEDGER_NAME
    path = root / rel
    if not os.path.lexists(path):
        return None, None
    if os.path.islink(path) or not os.path.isfile(path):
        raise KrmError(f"{rel}: the conflict ledger is not a regular file; refused", file=File(rel))
    data = files.read_bytes(path)
    lock, entries = decode(data, rel)
    ledger = Ledger(folder, lock, tuple(e.within(folder) for e in entries), data)
    current = package_lock(root / folder)
    if current is None:
        return ledger, f"{rel}: a Kptfile at or above it cannot be read, so the ledger cannot be checked"
    if lock != current:
        return ledger, (f"{rel}: written for upstreamLock {lock or '(none)'}, but the package is at "
                        f"{current or '(no upstreamLock)'}: not written by krm-merge update for this package "
                        "(or the package was updated by another tool since)")
    return ledger, None


def read_ledgers(root: Path, subpackages: Iterable[str] = ()) -> tuple[list[Ledger], list[str]]:
    """The honoured ledgers at ``root`` and at each subpackage folder below it, and a warning per ledger that is not."""
    honoured, warnings = [], []
    for folder in ("", *subpackages):
        ledger, why = read_ledger(root, folder)
        if ledger is None:
            continue
        if why is None:
            honoured.append(ledger)
        else:
            warnings.append(f"{why}; its markers are not honoured: decide them by hand (edit the value, delete the "
                            f"marker) and delete {ledger.path}")
    return honoured, warnings


def ledger_write(ledger: Ledger, entries: Sequence[Entry]) -> pkgio.Write | None:
    """The change that leaves ``ledger`` holding ``entries`` (deleted when there are none); None when none is needed."""
    data = encode((e.below(ledger.folder) for e in entries), ledger.lock) if entries else None
    if data == ledger.before:
        return None
    return pkgio.Write(ledger.path, ledger.before, data)


# --- binding markers to entries ------------------------------------------------------------


def bind_fields(tree: Any, lines: Sequence[str], entries: Iterable[Entry]) -> dict[int, tuple[Entry, DataPath]]:
    """The field entries of one document whose marker is on their field's line: 0-based line -> (entry, the
    field's data path now).

    ``tree`` is the document's round-trip tree (it knows each key's line),
    ``lines`` its text's lines.  An entry whose field is gone, or whose line
    has no marker any more, binds nothing (it was decided by hand).
    """
    bound: dict[int, tuple[Entry, DataPath]] = {}
    lookups: Lookups = {}
    for entry in entries:
        path = locate(tree, entry.locator, lookups)
        line = _key_line(tree, path)
        if path and line is not None and line < len(lines) and line not in bound and find_marker(lines[line]) >= 0:
            bound[line] = (entry, path)
    return bound


def _key_line(tree: Any, path: tuple[Any, ...] | None) -> int | None:
    if not path:
        return None
    parent = tree
    for part in path[:-1]:
        parent = parent[part]
    try:
        return int(parent.lc.key(path[-1])[0])
    except (AttributeError, KeyError, TypeError, IndexError):
        return None  # not a map key ruamel kept a position for: no marker can sit on it


def bind_texts(text: str, entries: Iterable[Entry]) -> dict[int, Entry]:
    """The text entries of one file bound to its regions with the same three sides: region's first line -> entry.

    Each entry binds one region (the first not yet bound, in file order).
    """
    waiting: dict[tuple[str, str, str], list[Entry]] = {}
    for entry in entries:
        waiting.setdefault((entry.local, entry.upstream, entry.origin), []).append(entry)
    lines = text.splitlines()
    bound: dict[int, Entry] = {}
    for region in labelled_regions(text):
        same = waiting.get(_text_values(region_sides(lines, region)))
        if same:
            bound[region.start] = same.pop(0)
    return bound


def doc_ref(doc: str) -> ResourceRef | None:
    """The resource a document is (None for a plain YAML document, or one whose header cannot be read)."""
    try:
        return _ref_or_none(KubeObject(doc).ref())
    except KrmMergeError:
        return None


def still_marked(text: str | None, entries: Sequence[Entry]) -> list[Entry]:
    """The entries (all of one file, whose ``text`` it is now; None: deleted) whose marker is still in it."""
    if text is None:
        return []
    texts = [e for e in entries if e.kind == TEXT]
    kept = list(bind_texts(text, texts).values()) if texts else []
    fields = [e for e in entries if e.kind == FIELD]
    if not fields or MARKER not in text:
        return kept
    text = text.replace("\r\n", "\n")
    for doc in split_documents(text)[1]:
        if MARKER not in doc:
            continue
        mine = [e for e in fields if e.resource == doc_ref(doc)]
        if mine:
            try:
                tree = yamlio.load_rt(doc, "ledger")
            except KrmMergeError:
                continue  # a document that no longer reads holds no marker of ours
            kept.extend(entry for entry, _ in bind_fields(tree, doc.split("\n"), mine).values())
    return kept


# --- the update ----------------------------------------------------------------------------


def record(root: Path, plan: UpdatePlan) -> int:
    """Add the ledger's change to an update's plan: its markers, and the earlier update's still in the files;
    returns how many conflicts the ledger then holds.

    Every entry is checked against the files as the plan leaves them: one
    whose marker is not there is dropped (an earlier entry whose marker the
    update removed or the user deleted; a later update's marker on the same
    field replaces an earlier one), and ``plan.marks`` keeps only this
    update's that are.  No entry left: the ledger is deleted.  The lock
    recorded is the root Kptfile's as the plan leaves it.
    """
    old, why = read_ledger(root)
    if old is None and not plan.marks:
        return 0
    if why is not None:
        plan.outcomes.append(message(f"{why}; its entries are dropped", "warning", LEDGER_NAME))
    new = plan.marks
    replaced = {e.place for e in new if e.kind == FIELD}  # a field marked again: its new marker replaced the old
    earlier = [e for e in (old.entries if old is not None and why is None else ())
               if e.kind != FIELD or e.place not in replaced]
    written = {w.path: w.data for w in plan.writes}
    by_file: dict[str, list[Entry]] = {}
    for entry in new + earlier:  # the new first: a region recorded twice binds the new entry
        by_file.setdefault(entry.file, []).append(entry)
    kept: list[Entry] = []
    for rel, entries in sorted(by_file.items()):
        data = written[rel] if rel in written else _current(root, rel)
        kept.extend(still_marked(data.decode("utf-8", "replace") if data is not None else None, entries))
    ours = {id(e) for e in new}
    plan.marks = [e for e in kept if id(e) in ours]
    lock = package_lock(root, written.get(pkgio.KPTFILE)) or ""
    before = old.before if old is not None else None
    data = encode(kept, lock) if kept else None
    if data != before:
        plan.writes.append(pkgio.Write(LEDGER_NAME, before, data))
    return len(kept)


def _current(root: Path, rel: str) -> bytes | None:
    path = root / rel
    if os.path.islink(path) or not path.is_file():
        return None
    try:
        return files.read_bytes(path)
    except (KrmMergeError, OSError):
        return None


# --- marker-shaped text from elsewhere -----------------------------------------------------


def forged_markers(what: str, rel: str, data: bytes) -> list[MarkerShaped]:
    """An outcome per line of ``data`` (a file of ``what``'s, ``"upstream"``) shaped like one of krm-merge's markers.

    Such text is content: ``conflicts`` lists it apart and ``resolve`` never
    acts on it, since no update recorded it.
    """
    if MARKER.encode() not in data and f"{'<' * MARKER_SIZE} {LABELS[0]}".encode() not in data:
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []  # a binary file: nobody reads a marker in it
    found = [n for n, line in enumerate(text.splitlines(), start=1) if find_marker(line) >= 0]
    found += [r.start for r in labelled_regions(text)]
    return [MarkerShaped(what, rel, n) for n in sorted(found)]


__all__ = [
    "API_VERSION", "FIELD", "KIND", "LEDGER_NAME", "TEXT", "Entry", "Ledger", "bind_fields", "bind_texts", "decode",
    "doc_ref", "encode", "field_entry", "forged_markers", "ledger_write", "package_lock",
    "read_ledger", "read_ledgers", "record", "still_marked", "text_entries",
]
