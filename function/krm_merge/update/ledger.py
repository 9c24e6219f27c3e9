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
later update keeps the entries still undecided and adds its own; ``resolve``
drops what it decided, and the file goes when its last entry does.  An entry
is decided, and dies, when its marker is gone or its field no longer holds
the value the update left (by hand), or when a later update finds upstream's
value moved from the one recorded (upstream now agrees with local, or the
update decided the field otherwise); an entry decided before an update is
judged on the files as they were, so upstream text arriving with the update
(a marker-shaped comment on that field) never brings it back.

A ledger is honoured only where krm-merge could have written it
(:func:`read_ledger`): it is bound to its own package's ``upstreamLock``
commit, a real 40 or 64 hex digit one, and to the lock of every package
above it (:func:`binding`), as the update left them, and must still name
them.  A tool that copies a package whole (``kpt pkg get`` copies hidden
files) can bring an upstream's forged ledger along, and with it a
subpackage's Kptfile naming any commit, but everything it brings is part of
a package fetched at some commit recorded at or above it, and no file can
name the commit it is part of.  Content from origin and upstream never
brings a file of this name (:func:`krm_merge.krm.pkgio.list_package` leaves
it out, with a warning for a tree from elsewhere); a ledger that is not a
regular file of a sane size is named in a warning and not read.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.upstream import locked_commit
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.package import split_documents
from krm_merge.krm.results import File, KrmError, ResourceRef
from krm_merge.krm.values import Path as DataPath
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import (ABSENT_VALUE, MARKER, FieldMark, Locator, Lookups, find_marker, is_not_recorded,
                                        locate, recorded_value)
from krm_merge.merge3.diff3 import LABELS, MARKER_SIZE, MarkerRegion, labelled_regions, region_sides
from krm_merge.outcomes.kinds import MarkerShaped, message
from krm_merge.records import Record

from .plan import UpdatePlan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping, Sequence

LEDGER_NAME = pkgio.LEDGER_NAME
API_VERSION = "krm-merge.dev/v1"
KIND = "ConflictLedger"
NOTE = ("The conflicts krm-merge update left marked in this package. krm-merge conflicts and resolve act only on "
        "markers recorded here; commit it with the package; resolve deletes it when the last conflict is decided.")

FIELD = "field"
TEXT = "text"

MAX_LEDGER_BYTES = 64 * 1024 * 1024
"""A ledger larger than this is not read (named in a warning): 20,000 conflicts of short values take ~4 MB."""


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


class Binding(Record):
    """What a ledger is bound to: its own package's ``upstreamLock`` commit (``""``: none) and the commit of each
    package above it that has one, nearest first."""

    lock: str
    parents: tuple[str, ...] = ()


class Ledger(Record):
    """One ledger file: the package ``folder`` it is at (relative to the command's root), the :class:`Binding` it was
    written for, its entries (named from the command's root) and the bytes read; ``refused`` says what the path is
    when it is not a ledger krm-merge could read (a folder, a link, ...; ``""``: a file that was read)."""

    folder: str
    lock: str
    parents: tuple[str, ...]
    entries: tuple[Entry, ...]
    before: bytes | None
    refused: str = ""

    @property
    def path(self) -> str:
        """The ledger file, relative to the command's root."""
        return f"{self.folder}/{LEDGER_NAME}" if self.folder else LEDGER_NAME

    @property
    def binding(self) -> Binding:
        """What the ledger names as its binding."""
        return Binding(self.lock, self.parents)


# --- entries from what the update wrote ----------------------------------------------------


def field_entry(obj: Item, file: str, mark: FieldMark) -> Entry:
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


def encode(entries: Iterable[Entry], bound: Binding | str) -> bytes:
    """The ledger file's bytes for ``bound`` (a :class:`Binding`, or a lock alone): JSON, one conflict a line (a
    version-control diff shows one line per conflict).

    A KrmError when a value cannot be written (nested deeper than JSON's encoder goes).
    """
    bound = Binding(bound) if isinstance(bound, str) else bound
    head = {"apiVersion": API_VERSION, "kind": KIND, "note": NOTE, "lockedCommit": bound.lock,
            "parentLocks": list(bound.parents)}
    try:
        encoder = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps' output, one encoder for all
        lines = [encoder.encode(_entry_json(e)) for e in entries]
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


def decode(data: bytes, where: str) -> tuple[Binding, list[Entry]]:
    """The binding and the entries of a ledger file's bytes; a KrmError naming the file and the field when malformed.

    ``parentLocks`` may be missing (a ledger written before it was recorded: bound to no package above).
    """
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise _malformed(where, "", f"not JSON ({type(err).__name__})") from None
    if not isinstance(doc, dict) or doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise _malformed(where, "apiVersion", f"expected apiVersion {API_VERSION} and kind {KIND}")
    lock, parents, found = doc.get("lockedCommit", ""), doc.get("parentLocks", []), doc.get("conflicts")
    if not isinstance(lock, str):
        raise _malformed(where, "lockedCommit", "expected a string")
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise _malformed(where, "parentLocks", "expected a list of strings")
    if not isinstance(found, list):
        raise _malformed(where, "conflicts", "expected a list")
    return Binding(lock, tuple(parents)), [_entry_of(item, where, f"conflicts[{i}]") for i, item in enumerate(found)]


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

def binding(root: Path, folder: str = "", written: Mapping[str, bytes | None] | None = None) -> Binding | None:
    """The binding of a ledger at ``root/folder``: the ``upstreamLock`` commit of that folder's own Kptfile and of
    every Kptfile above it (to the file system's root) that records one; None when a Kptfile on the way cannot be
    read.

    ``written``: the Kptfiles below ``root`` as an update's plan leaves them
    (by path relative to ``root``; None: deleted), else as they are.  A lock
    is a commit id or nothing (:func:`~krm_merge.kptfile.upstream.locked_commit`).
    """
    written = written or {}
    commits: list[str] = []
    try:
        rel = folder
        while True:  # the folder and each folder above it, up to root: as the plan leaves them
            kptfile = f"{rel}/{pkgio.KPTFILE}" if rel else pkgio.KPTFILE
            commits.append(_commit(written[kptfile] if kptfile in written else _kptfile_bytes(root / rel)))
            if not rel:
                break
            rel = rel.rpartition("/")[0]
        commits.extend(_commit(_kptfile_bytes(at)) for at in root.resolve().parents)
    except (KrmMergeError, OSError, UnicodeDecodeError):
        return None
    return Binding(commits[0], tuple(c for c in commits[1:] if c))


def _commit(kptfile: bytes | None) -> str:
    return locked_commit(yamlio.load_data(kptfile.decode("utf-8"), pkgio.KPTFILE)) if kptfile is not None else ""


def _kptfile_bytes(folder: Path) -> bytes | None:
    path = folder / pkgio.KPTFILE
    return files.read_bytes(path) if path.is_file() else None


def read_ledger(root: Path, folder: str = "") -> tuple[Ledger | None, str | None]:
    """The ledger at ``root/folder`` if there is one, and why it is not honoured (None: it is).

    It is honoured when its package records an ``upstreamLock`` commit and
    the ledger names its :func:`binding` as it is now: a ledger that arrived
    inside a fetched package (``kpt pkg get`` copies hidden files) cannot
    name the commit it was fetched at, which is recorded at or above it.
    A path of that name that is not a regular file, or is larger than
    :data:`MAX_LEDGER_BYTES`, is not read (nor followed, nor opened if a FIFO):
    a ledger with ``refused`` set.
    """
    rel = f"{folder}/{LEDGER_NAME}" if folder else LEDGER_NAME
    try:
        info = os.lstat(root / rel)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as err:
        return _refused(folder, rel, f"cannot be read ({err.strerror or err})")
    if not stat.S_ISREG(info.st_mode):
        return _refused(folder, rel, _what(info.st_mode))
    if info.st_size > MAX_LEDGER_BYTES:
        return _refused(folder, rel, f"a file of {info.st_size / 1048576:.0f} MB (ledgers are read up to "
                                     f"{MAX_LEDGER_BYTES // 1048576} MB)")
    try:
        data = files.read_beneath(root, rel)  # no link followed, nothing but a regular file read (a swap refused)
    except (KrmMergeError, OSError) as err:
        return _refused(folder, rel, f"cannot be read ({err.one_line() if isinstance(err, KrmMergeError) else err})")
    bound, entries = decode(data, rel)
    ledger = Ledger(folder, bound.lock, bound.parents, tuple(e.within(folder) for e in entries), data)
    current = binding(root, folder)
    if current is None:
        return ledger, f"{rel}: a Kptfile at or above it cannot be read, so the ledger cannot be checked"
    if not current.lock:
        return ledger, (f"{rel}: its package records no upstreamLock commit, and a ledger is honoured only bound to "
                        "one (without it, it could have come from anywhere)")
    if bound != current:
        return ledger, (f"{rel}: written for upstreamLock {_shown(bound)}, but the package is at {_shown(current)}: "
                        "not written by krm-merge update for this package (or the package was updated by another "
                        "tool since)")
    return ledger, None


def _shown(bound: Binding) -> str:
    above = f" (in packages locked at {', '.join(bound.parents)})" if bound.parents else ""
    return f"{bound.lock or '(none)'}{above}"


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "not a regular file"


def _refused(folder: str, rel: str, what: str) -> tuple[Ledger, str]:
    return (Ledger(folder, "", (), (), None, what),
            f"{rel}: {what}, not a conflict ledger krm-merge writes: not read")


def read_ledgers(root: Path, subpackages: Iterable[str] = ()) -> tuple[list[Ledger], list[str]]:
    """The honoured ledgers at ``root`` and at each subpackage folder below it, deepest first (a subpackage's own
    update is the later one where two ledgers record one field), and a warning per ledger that is not honoured."""
    honoured, warnings = [], []
    for folder in sorted(("", *subpackages), reverse=True):  # "a/b" before "a" before ""
        ledger, why = read_ledger(root, folder)
        if ledger is None:
            continue
        if why is None:
            honoured.append(ledger)
        else:
            warnings.append(f"{why}; its markers are not honoured: decide them by hand (edit the value, delete the "
                            f"marker) and remove {ledger.path}")
    return honoured, warnings


def ledger_write(ledger: Ledger, entries: Sequence[Entry]) -> pkgio.Write | None:
    """The change that leaves ``ledger`` holding ``entries`` (deleted when there are none); None when none is needed."""
    data = encode((e.below(ledger.folder) for e in entries), ledger.binding) if entries else None
    if data == ledger.before:
        return None
    return pkgio.Write(ledger.path, ledger.before, data)


# --- binding markers to entries ------------------------------------------------------------


def bind_fields(tree: Any, lines: Sequence[str], entries: Iterable[Entry]) -> dict[int, tuple[Entry, DataPath]]:
    """The field entries of one document still undecided: 0-based line -> (entry, the field's data path now).

    ``tree`` is the document's round-trip tree (it knows each key's line),
    ``lines`` its text's lines.  An entry binds when its marker is on its
    field's line and the field still holds the value the update left; one
    whose field is gone, whose line has no marker any more, or whose value
    was edited binds nothing (it was decided by hand).  Each line binds the
    first such entry.
    """
    return {line: (entry, path) for line, (entry, path, holds) in _bind(tree, lines, entries).items() if holds}


def _bind(tree: Any, lines: Sequence[str], entries: Iterable[Entry],
          key_line: Callable[[DataPath], int | None] | None = None) -> dict[int, tuple[Entry, DataPath, bool]]:
    """Each marked line holding an entry's field -> (the entry, the field's path, whether the field holds the value
    the update left): the first entry that holds it, else the first one there.

    ``tree``: a round-trip tree, or plain data with ``key_line`` saying where
    each key is (the fast reader's positions).
    """
    bound: dict[int, tuple[Entry, DataPath, bool]] = {}
    lookups: Lookups = {}
    for entry in entries:
        path = locate(tree, entry.locator, lookups)
        line = (key_line(path) if path else None) if key_line is not None else _key_line(tree, path)
        if not path or line is None or line >= len(lines) or (line in bound and bound[line][2]):
            continue
        if find_marker(lines[line]) >= 0:
            value = _at(tree, path)
            holds = _holds(value if key_line is not None else _plain(value), entry.local)
            if holds or line not in bound:
                bound[line] = (entry, path, holds)
    return bound


def _fast_key_line(root: Any, path: DataPath) -> int | None:
    """The line of the key at ``path`` in the fast reader's position tree (maps hold ``entries``, sequences
    ``items``); None when it is not a map key there."""
    node = root
    for part in path[:-1]:
        entries, items = getattr(node, "entries", None), getattr(node, "items", None)
        if entries is not None:
            entry = entries.get(part)
        elif items is not None and isinstance(part, int) and 0 <= part < len(items):
            entry = items[part]
        else:
            return None
        if entry is None:
            return None
        node = entry.value
    entries = getattr(node, "entries", None)
    last = entries.get(path[-1]) if entries is not None else None
    return last.start if last is not None else None


def _at(tree: Any, path: DataPath) -> Any:
    node = tree
    for part in path:
        node = node[part]
    return node


def _holds(value: Any, recorded: Any) -> bool:
    """Whether a field's value (plain data) is ``recorded``, the value an update left there, as the ledger records
    it (JSON); a value too large to record counts as held, one nested too deeply as edited."""
    if is_not_recorded(recorded):
        return True
    if type(value) is type(recorded) and type(value) in (str, int, bool):
        return bool(value == recorded)  # a scalar reads back from JSON as itself: no round trip to compare it
    try:
        return same(_as_recorded(value), _as_recorded(recorded))
    except (RecursionError, ValueError, TypeError):
        return False


def _plain(node: Any) -> Any:
    """A round-trip node as plain data (ruamel's scalar types dropped: its boolean is an int to JSON)."""
    from krm_merge.merge3.nodes import to_plain_data

    try:
        return to_plain_data(node)
    except RecursionError:
        return node  # compared as it is: nested too deeply, it reads as edited


def _as_recorded(value: Any) -> Any:
    """``value`` as it reads back from the ledger file (:func:`encode` writes what JSON has not as text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


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
        return _ref_or_none(Item(doc).ref())
    except KrmMergeError:
        return None


def still_marked(text: str | None, entries: Sequence[Entry]) -> list[Entry]:
    """The entries (all of one file, whose ``text`` it is now; None: deleted) still undecided in it: their marker
    is there and, for a field, the field holds the value the update left."""
    found = _marked(text, entries)
    return [entry for entry in entries if found.get(id(entry), (0, False))[1]]


def _marked(text: str | None, entries: Sequence[Entry]) -> dict[int, tuple[int, bool]]:
    """``id`` of each entry (all of one file, whose ``text`` it is; None: deleted) whose marker is in it -> (the
    0-based line of its marker, or of its region's first line; whether it is undecided: for a field, whether the
    field holds the value the update left).

    Linear in the entries and the text: one parse per document holding a
    marker and an entry, each entry looked up by its resource.
    """
    if text is None:
        return {}
    texts = [e for e in entries if e.kind == TEXT]
    found = {id(entry): (start - 1, True) for start, entry in bind_texts(text, texts).items()} if texts else {}
    by_ref: dict[ResourceRef | None, list[Entry]] = {}
    for entry in entries:
        if entry.kind == FIELD:
            by_ref.setdefault(entry.resource, []).append(entry)
    if not by_ref or MARKER not in text:
        return found
    separators, docs = split_documents(text.replace("\r\n", "\n"))
    line = 0
    for separator, doc in zip(separators, docs):
        line += separator.count("\n")
        mine = by_ref.get(doc_ref(doc)) if MARKER in doc else None
        if mine:
            for number, (entry, _, holds) in _bind_document(doc, mine).items():
                found[id(entry)] = (line + number, holds)
        line += doc.count("\n")
    return found


def _bind_document(doc: str, entries: list[Entry]) -> dict[int, tuple[Entry, DataPath, bool]]:
    """:func:`_bind` on one document's text: read by the fast reader (plain data and each key's line; a
    round-trip read would cost an update marking 20,000 fields seconds), else by the round-trip reader."""
    from krm_merge.krm import fastyaml

    lines = doc.split("\n")
    parsed = fastyaml.parse(doc)
    if parsed is not None:
        root = parsed.root
        return _bind(parsed.data, lines, entries, lambda path: _fast_key_line(root, path))
    try:
        tree = yamlio.load_rt(doc, "ledger")
    except KrmMergeError:
        return {}  # a document that no longer reads holds no marker of ours
    return _bind(tree, lines, entries)


# --- upstream's values, for entries an earlier update left ---------------------------------

UNKNOWN = object()
""":func:`upstream_value` when the update did not merge a version of the field's package."""


class UpstreamFields:
    """Upstream's items in the version an update merged one package from, to look a recorded field up in
    (:func:`upstream_value`): a resource by its identity (it may be in another file upstream), a plain YAML
    file's by its path, each found once."""

    __slots__ = ("_items", "_found")

    def __init__(self, items: Sequence[Item]) -> None:
        self._items = items
        self._found: dict[Any, Item] | None = None

    def value(self, entry: Entry, file: str) -> Any:
        """Upstream's value of ``entry``'s field, its file named ``file`` in this package (plain data;
        :data:`~krm_merge.merge3.conflicts.ABSENT_VALUE` when upstream has not the field or its resource), or
        :data:`UNKNOWN` when upstream's item cannot be read."""
        if self._found is None:
            self._found = {}
            for item in self._items:
                try:
                    ref = _ref_or_none(item.ref())
                except KrmMergeError:
                    continue  # not a readable resource: no field of it was recorded
                self._found.setdefault(ref if ref is not None else item.path or "", item)
        obj = self._found.get(entry.resource if entry.resource is not None else file)
        if obj is None:
            return ABSENT_VALUE
        try:
            data = obj.data
        except KrmMergeError:
            return UNKNOWN
        path = locate(data, entry.locator)
        return ABSENT_VALUE if path is None else _at(data, path)


def upstream_value(levels: Sequence[tuple[str, UpstreamFields | None]], entry: Entry) -> Any:
    """Upstream's value of ``entry``'s field in the version the update merged its package from: ``levels`` holds,
    by folder (``""`` the root, ``"a/b/"`` a remote subpackage), each package's :class:`UpstreamFields` (None: no
    version merged, the package was at the commit asked); the deepest folder holding the file is asked.
    :data:`UNKNOWN` when none is."""
    folder, fields = max(((f, u) for f, u in levels if entry.file.startswith(f)), key=lambda level: len(level[0]),
                         default=("", None))
    return fields.value(entry, entry.file[len(folder):]) if fields is not None else UNKNOWN


# --- the update ----------------------------------------------------------------------------


def record(root: Path, plan: UpdatePlan) -> int:
    """Add the ledgers' changes to an update's plan: this update's markers, and the earlier updates' entries still
    undecided; returns how many conflicts the ledgers then hold.

    The root's ledger gets this update's markers that the files as the plan
    leaves them hold (``plan.marks`` keeps only those).  Each earlier entry,
    of the root's ledger and of each honoured ledger of a subpackage
    (``plan.subpackages``), is kept only while undecided: its marker and
    value were there before the update (an entry decided by hand before it
    is not brought back by upstream text arriving with it), are still there
    as the plan leaves the files, and upstream's value is still the one
    recorded (``plan.upstream``, :func:`upstream_value`); a later update's marker on the same field
    replaces it.  An entry this update decided (upstream now agrees, the
    merge took another value) has its marker removed from its file.  Each
    ledger is bound to the locks as the plan leaves them (:func:`binding`)
    and deleted when it has no entry left.  A root whose Kptfile records no
    lock cannot bind a ledger: an update that would leave markers there is
    refused (a KrmError), as is one that would write the ledger where a path
    of its name is not a file krm-merge can replace.
    """
    written = {w.path: w.data for w in plan.writes}
    ledgers: dict[str, Ledger | None] = {}
    earlier: list[Entry] = []
    owner: dict[int, str] = {}  # an earlier entry -> the folder of the ledger it stays in (new ones: the root's)
    for folder in ("", *plan.subpackages):
        if folder and not os.path.lexists(root / folder / LEDGER_NAME):
            continue
        ledger, why = read_ledger(root, folder)
        if not folder:
            ledgers[""] = ledger  # the root's: rewritten (replaced when not honoured)
            if why is not None:
                dropped = "left as it is" if ledger is not None and ledger.refused else "its entries are dropped"
                plan.outcomes.append(message(f"{why}; {dropped}", "warning", LEDGER_NAME))
        if ledger is not None and why is None:  # a subpackage's ledger not honoured is left as it is
            ledgers[folder] = ledger
            earlier.extend(ledger.entries)
            owner.update((id(entry), folder) for entry in ledger.entries)
    if ledgers.get("") is None and not earlier and not plan.marks:
        return 0
    new = plan.marks
    replaced = {e.place for e in new if e.kind == FIELD}  # a field marked again: its new marker replaced the old
    earlier = [e for e in earlier if e.kind != FIELD or e.place not in replaced]
    kept, unmark = _undecided(root, plan, written, new, earlier)
    ours = {id(e) for e in new}
    plan.marks = [e for e in kept if id(e) in ours]
    for rel, lines in sorted(unmark.items()):
        _remove_markers(root, plan, written, rel, lines)
    total = 0
    for folder, ledger in ledgers.items():
        entries = [e for e in kept if owner.get(id(e), "") == folder]
        total += _rewrite(root, plan, written, folder, ledger, entries)
    return total


def _undecided(root: Path, plan: UpdatePlan, written: dict[str, bytes | None], new: list[Entry],
               earlier: list[Entry]) -> tuple[list[Entry], dict[str, set[int]]]:
    """The entries kept (see :func:`record`), and the lines of each file whose marker this update decided."""
    before: set[int] = set()
    for rel, entries in _by_file(earlier).items():
        found = _marked(_text(_current(root, rel)), entries)
        before.update(key for key, (_, undecided) in found.items() if undecided)
    earlier = [e for e in earlier if id(e) in before]
    kept: list[Entry] = []
    unmark: dict[str, set[int]] = {}
    fresh = {id(e) for e in new}
    for rel, entries in sorted(_by_file(new + earlier).items()):  # the new first: a region recorded twice binds it
        found = _marked(_text(written[rel] if rel in written else _current(root, rel)), entries)
        for entry in entries:
            line, undecided = found.get(id(entry), (-1, False))
            if id(entry) in fresh:
                undecided = line >= 0  # the merge just left this value: only the marker is looked for
            elif undecided and entry.kind == FIELD:
                now = upstream_value(plan.upstream, entry)
                undecided = now is UNKNOWN or _same_recorded(now, entry.upstream)
            if undecided:
                kept.append(entry)
            elif line >= 0 and entry.kind == FIELD:
                unmark.setdefault(rel, set()).add(line)
    return kept, unmark


def _same_recorded(value: Any, recorded: Any) -> bool:
    """Whether upstream's ``value`` now is the one an entry recorded for it (as :func:`recorded_value` records it)."""
    if value is ABSENT_VALUE or recorded is ABSENT_VALUE:
        return value is recorded
    try:
        return same(_as_recorded(recorded_value(value)), _as_recorded(recorded))
    except (RecursionError, ValueError, TypeError):
        return True  # cannot be compared: the entry stays for a person to decide


def _by_file(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    by_file: dict[str, list[Entry]] = {}
    for entry in entries:
        by_file.setdefault(entry.file, []).append(entry)
    return by_file


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


def _remove_markers(root: Path, plan: UpdatePlan, written: dict[str, bytes | None], rel: str, lines: set[int]) -> None:
    """Remove the marker comment from ``lines`` (0-based) of ``rel`` as the plan leaves it (a change of the plan)."""
    planned = next((w for w in plan.writes if w.path == rel), None)
    data = planned.data if planned is not None else _current(root, rel)
    if data is None:
        return
    text = data.decode("utf-8")
    split = text.split("\n")
    for number in lines:
        line = split[number]
        end = len(line) - 1 if line.endswith("\r") else len(line)  # a CRLF line keeps its CR
        start = find_marker(line[:end])
        if start >= 0:
            split[number] = line[:start] + line[end:]
    unmarked = "\n".join(split).encode("utf-8")
    written[rel] = unmarked
    if planned is not None:
        planned.data = unmarked
    else:
        plan.writes.append(pkgio.Write(rel, data, unmarked))


def _rewrite(root: Path, plan: UpdatePlan, written: dict[str, bytes | None], folder: str, old: Ledger | None,
             entries: list[Entry]) -> int:
    """Leave the ledger at ``folder`` holding ``entries``, bound as the plan leaves the Kptfiles; how many it holds."""
    path = f"{folder}/{LEDGER_NAME}" if folder else LEDGER_NAME
    bound = binding(root, folder, written) if entries else None
    if entries and any(o.severity == "error" for o in plan.outcomes):
        return len(entries)  # a conflict failed the update: nothing is written, the ledger neither
    if entries and (bound is None or not bound.lock):
        if folder:  # the update removed the subpackage's lock: its ledger can no longer be bound
            plan.outcomes.append(message(f"{path}: its package records no upstreamLock commit after the update; its "
                                         f"{len(entries)} conflict(s) are no longer recorded: decide them by hand",
                                         "warning", path))
            entries = []
        else:
            raise KrmError(f"{root}: this update would leave {len(entries)} conflict(s) marked, but the package's "
                           "Kptfile records no upstreamLock commit to bind its conflict ledger to (a ledger without "
                           "one could have come from anywhere, so none is honoured): nothing written; decide them "
                           "with --conflicts upstream-wins, local-wins or fail (and --files keep-local), or update "
                           "a package fetched with kpt pkg get", file=File(pkgio.KPTFILE))
    data = encode((e.below(folder) for e in entries), bound) if entries and bound is not None else None
    if old is not None and old.refused:
        if data is None:
            return 0  # nothing to record: left as it is (named in a warning)
        raise KrmError(f"{path}: {old.refused}, not a conflict ledger krm-merge writes, and this update has "
                       f"{len(entries)} conflict(s) to record there: remove it and run the update again",
                       file=File(path))
    before = old.before if old is not None else None
    if data != before:
        plan.writes.append(pkgio.Write(path, before, data))
    return len(entries)


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
    "API_VERSION", "FIELD", "KIND", "LEDGER_NAME", "MAX_LEDGER_BYTES", "TEXT", "UNKNOWN", "Binding", "Entry", "Ledger",
    "UpstreamFields", "bind_fields", "bind_texts", "binding", "decode", "doc_ref", "encode", "field_entry",
    "forged_markers", "ledger_write", "read_ledger", "read_ledgers", "record", "still_marked", "text_entries",
    "upstream_value",
]
