"""A package directory as a ResourceList, and back (``kpt fn source``/``sink``).

Used by ``krm-merge run DIR``.  Files are read as text and split into
documents; each document becomes an item carrying the annotations ``kpt fn
source`` gives it (``config.kubernetes.io/path``/``index``, their
``internal.`` twins and ``internal.config.kubernetes.io/seqindent``), the
only record of its file and position.  They are held beside the item's
text (:attr:`Item.reader_annotations`), so the text stays the file's
and the writer has nothing to strip.  Writing back rewrites only files whose items changed, moved, were
added or removed, splicing the new item texts between the file's original
document separators, so everything else in the file keeps its bytes.

Like ``kpt fn source`` (checked against kpt 1.0.0-beta.56):

* a document that is a top-level sequence (a kustomize JSON6902 patch) becomes
  an item wrapped under ``bareSeqNodeWrappingKey`` and is unwrapped when
  written back (``kpt fn eval``/``render`` refuse such a package instead);
* the files are those :func:`krm_merge.krm.pkgio.list_package` lists (YAML
  files and Kptfiles, ``.krmignore`` honoured, hidden names skipped), with
  its symbolic-link policy: links to files are read wherever they point,
  links to directories are not followed (reported as an info result), a
  broken link is an error; writes (:class:`krm_merge.krm.pkgio.ChangeSet`)
  go through a link only to a target inside the package.
"""

from __future__ import annotations

import os
import functools
import re
import sys

from krm_merge import files
from krm_merge.krm import fastyaml, pkgio, yamlio
from krm_merge.krm.itemviews import PendingReader
from krm_merge.krm.kubeobject import Item, scan_header
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.snapshot import Snapshot
from krm_merge.krm.results import File, KrmError

# Paths are strings here: pathlib (with urllib.parse and ipaddress behind it) is imported
# only to write, so a run's start-up does not pay for it.

YAML_SUFFIXES = pkgio.YAML_SUFFIXES
META_FILES = (pkgio.KPTFILE,)


# The patterns below are compiled on first use (functools.cache), not at import: a no-op update reads no
# package file (issue 45).
@functools.cache
def _doc_separator() -> re.Pattern[str]:
    return re.compile(r"^---[ \t]*(?:#[^\n]*)?$|^---[ \t]+(?=\S)", re.M)


@functools.cache
def _reader_annotations() -> re.Pattern[str]:
    """Annotations kpt's reader adds and its writer removes."""
    return re.compile(r"^(internal\.config\.kubernetes\.io/.*|config\.kubernetes\.io/(path|index)|config\.k8s\.io/id)$")


# The key kyaml's reader (kpt fn source) wraps a top-level sequence under.
WRAPPING_KEY = "bareSeqNodeWrappingKey"


# Plain classes with __slots__, not dataclasses: every command that reads a
# package loads this module, and creating dataclasses cost a small ``update``'s start-up
# several milliseconds (issue 24).


class SourceFile:
    """A file as read: its documents and the separators between them."""

    __slots__ = ("path", "text", "crlf", "separators", "docs", "items", "wrapped")

    def __init__(self, path: str, text: str, crlf: bool) -> None:
        self.path = path
        self.text = text
        self.crlf = crlf
        self.separators: list[str] = []  # separators[i] precedes docs[i]
        self.docs: list[str] = []
        self.items: list[Item | None] = []
        # Document position -> indentation added when a top-level sequence was wrapped.
        self.wrapped: dict[int, int] = {}


class Package:
    """The files of a package directory and the items read from them."""

    __slots__ = ("root", "files", "skipped")

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, SourceFile] = {}
        # Files left unread with the reason (only with read_package(skip_undecodable=True)).
        self.skipped: list[tuple[str, str]] = []


class NotUtf8Error(KrmError):
    """A file of the package is not UTF-8 text (a reader that skips such files catches this class, not a message)."""


def read_package(root: str | os.PathLike[str], *, validate: bool = True, skip_undecodable: bool = False,
                 untrusted: str | None = None, ignore: list[str] | None = None,
                 snapshot: Snapshot | None = None) -> tuple[Package, ResourceList]:
    """Read every YAML file (and the Kptfile) below ``root`` into a ResourceList.

    With ``validate`` every document is checked to be a mapping (by the cheap
    header scan, parsing only what the scan cannot read) or a top-level
    sequence, which is wrapped as ``kpt fn source`` does; without it nothing
    is parsed until a mode asks, for callers that compare texts first.
    What is not read (links to directories) and what is wrapped is reported
    as info results in the returned list. With ``skip_undecodable`` a file
    that is not UTF-8 is left out (and alone) and listed in
    ``Package.skipped`` instead of failing the read.  ``untrusted`` (a tree from
    elsewhere, ``"upstream"``): listed and read in place following no link (pkgio.list_package).
    ``ignore``: ``.krmignore`` patterns to apply instead of the root's own.
    ``snapshot``: the copy at ``root`` already listed (:class:`krm_merge.krm.snapshot.Snapshot`; its ``what`` is
    ``untrusted``): its files are filtered from that listing and read through it, no listing made here.
    """
    root = os.fspath(root)
    if snapshot is None and not os.path.isdir(root):
        raise KrmError(f"{os.path.normpath(root)} is not a directory")
    pkg = Package(root)
    rl = ResourceList()
    if snapshot is not None:
        listing = snapshot.resources(ignore if ignore is not None else _krmignore_of(snapshot))
    else:
        try:
            listing = pkgio.list_package(root, suffixes=pkgio.YAML_SUFFIXES, names=(pkgio.KPTFILE,),
                                         untrusted=untrusted, ignore=ignore)
        except OSError as err:  # a folder that cannot be listed: kpt fn source fails on it too
            raise KrmError(f"cannot read folder {err.filename}: {err.strerror or err}") from None
    for rel in listing.linked_dirs:
        rl.results.info("a symbolic link to a directory; not read (kpt fn source does not follow these either)",
                        file=File(rel))
    broken = set(listing.broken_links)
    unreadable: list[tuple[str, str, tuple[str, ...]]] = []
    for rel in sorted([*listing.rels(), *broken]):
        if rel in broken:  # refused in reading order, as kpt fn source meets it
            raise pkgio.broken_link_error(root, rel)
        try:
            source = _read_source(root, rel, validate, untrusted, snapshot)
        except NotUtf8Error:
            if not skip_undecodable:
                raise
            pkg.skipped.append((rel, "not UTF-8 text"))
            continue
        except yamlio.UnreadableYamlError as err:  # the others are read on, so one error names them all
            unreadable.append((rel, err.message, ()))
            continue
        pkg.files[rel] = source
        rl.items.extend(item for item in source.items if item is not None)
        for position in source.wrapped:
            item = source.items[position]
            assert item is not None
            rl.results.info(
                f"{item.what} is a top-level sequence (e.g. a kustomize JSON6902 patch), "
                f"not a KRM object; passed on wrapped under {WRAPPING_KEY} as kpt fn source does "
                "(kpt fn eval/render refuse such a package)",
                file=File(rel, item.index),
            )
    if unreadable:
        raise unreadable_yaml(unreadable)
    return pkg, rl


MAX_NAMED_FILES = 10
"""How many broken files one error names (then a count of the rest)."""


def unreadable_yaml(found: list[tuple[str, str, tuple[str, ...]]]) -> yamlio.UnreadableYamlError:
    """One error naming each file that is not valid YAML: (path, the loader's message, the copies holding it).

    The first :data:`MAX_NAMED_FILES` are named with their line and problem, the rest counted; the copies
    (``local``, ``upstream``...) follow a file when the read had several.
    """
    def said(rel: str, message: str, copies: tuple[str, ...], alone: bool) -> str:
        where = f" ({', '.join(copies)})" if copies else ""
        if alone:
            return f"{message}{where}"
        return f"{rel}{message.removeprefix(rel).removeprefix(' is not valid YAML')}{where}"

    found = sorted(found)
    if len(found) == 1:
        rel, message, copies = found[0]
        return yamlio.UnreadableYamlError(said(rel, message, copies, True), file=File(rel))
    named = "; ".join(said(rel, message, copies, False) for rel, message, copies in found[:MAX_NAMED_FILES])
    more = f"; and {len(found) - MAX_NAMED_FILES} more" if len(found) > MAX_NAMED_FILES else ""
    return yamlio.UnreadableYamlError(f"{len(found)} files are not valid YAML: {named}{more}", file=File(found[0][0]))


def check_unreadable(copies: list[tuple[str, Package]]) -> None:
    """Raise :func:`unreadable_yaml` naming every file of the packages that is not valid YAML, if any.

    For readers that parse lazily (``read_package(validate=False)``): when one document turns out
    broken, this names all of them, each at its line in its file, with the copies (``label``) holding it.
    """
    found: dict[tuple[str, str], list[str]] = {}
    for label, pkg in copies:
        for rel, source in pkg.files.items():
            err = _file_error(source.text.replace("\r\n", "\n"), rel)
            if err is not None:
                found.setdefault((rel, err.message), []).append(label)
    if found:
        raise unreadable_yaml([(rel, message, tuple(labels)) for (rel, message), labels in found.items()])


def _krmignore_of(snapshot: Snapshot) -> list[str]:
    """The ``.krmignore`` patterns of a snapshot's own root (as :func:`pkgio.list_package` reads them)."""
    return pkgio.read_krmignore(snapshot.root) if snapshot.what is None else pkgio.krmignore_beneath(snapshot.root)


def _read_source(root: str, rel: str, validate: bool, untrusted: str | None = None,
                 snapshot: Snapshot | None = None) -> SourceFile:
    path = os.path.join(root, rel)
    try:
        if snapshot is not None:
            text = snapshot.read_text(rel)
        elif untrusted is None:
            text = files.read_text(path)
        else:
            text = files.read_beneath(root, rel, untrusted).decode("utf-8")
    except UnicodeDecodeError:
        raise NotUtf8Error(f"{rel} is not UTF-8 text", file=File(rel)) from None
    except OSError as err:
        raise KrmError(f"cannot read {rel}: {err.strerror or err}", file=File(rel)) from None
    crlf = "\r\n" in text
    lf_text = text.replace("\r\n", "\n") if crlf else text
    source = SourceFile(rel, text, crlf)
    separators, docs = split_documents(lf_text)
    source.separators, source.docs = separators, docs
    contents = [_has_content(doc) for doc in docs]
    count = sum(contents)
    index = 0
    for position, doc in enumerate(docs):
        if not contents[position]:
            source.items.append(None)
            continue
        obj = Item(doc, what=document_name(rel, index, count))
        if validate and _is_sequence(obj, rel, index, lf_text):
            indent = 0 if _compact_sequence(doc) else 2
            obj = Item(_wrap(doc, indent), what=obj.what)
            source.wrapped[position] = indent
        obj.set_reader_annotations(PendingReader(rel, index, doc, reader_annotations))
        source.items.append(obj)
        index += 1
    if validate and index:
        # The header scan reads a few lines of each document: without this check a broken
        # value further down passed through unnoticed, where kpt fn source refuses the package.
        _check_syntax(source, lf_text)
    return source


# libyaml checks a file in C, but importing PyYAML costs more than the fast reader takes for
# a small file: small files are read by the fast reader while PyYAML is not loaded yet.
_FAST_CHECK_CHARS = 64 * 1024


def _check_syntax(source: SourceFile, lf_text: str) -> None:
    """Refuse the file unless it is valid YAML (file and line named), building no tree."""
    if len(lf_text) <= _FAST_CHECK_CHARS and "yaml" not in sys.modules and _fast_reader_accepts(source):
        return
    yamlio.check_syntax(lf_text, source.path)


def _fast_reader_accepts(source: SourceFile) -> bool:
    """Whether the fast reader reads every document (it accepts only what libyaml reads alike)."""
    if any(sep.strip() and not _separator_only().match(sep) for sep in source.separators):
        return False  # content after `---` on its line: not part of any document text here
    return all(fastyaml.parse(doc) is not None for doc, item in zip(source.docs, source.items) if item is not None)


# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def _separator_only() -> re.Pattern[str]:
    return re.compile(r"^---[ \t]*(#.*)?\n?$")


def _file_error(lf_text: str, rel: str) -> yamlio.UnreadableYamlError | None:
    """Why the whole file cannot be loaded (its line counted in the file, not in one document), or None.

    A full load, not the syntax check: an unhashable key (``{{ .Values.x }}: 1``) parses but cannot be read.
    """
    try:
        yamlio.load_all_data(lf_text, rel, note_duplicates=False)
    except yamlio.UnreadableYamlError as err:
        return err
    return None


def document_name(rel: str, index: int, count: int) -> str:
    """How messages name document ``index`` (0-based, as kpt's annotation) of the ``count`` in file ``rel``.

    Counted as people count lines, from 1, and out of how many: ``values.yaml (document 2 of 3)``;
    a file of one document is named by its path alone.
    """
    return rel if count <= 1 else f"{rel} (document {index + 1} of {count})"


def _is_sequence(obj: Item, rel: str, index: int, lf_text: str) -> bool:
    """Check the document is a mapping or a sequence; True for a sequence."""
    header = scan_header(obj.text)
    if header is not None:
        obj.cache_header(header)
        return False
    try:
        data = obj.data
    except yamlio.UnreadableYamlError as err:
        # The document's lines are counted from its own start: the whole file's load names the file's line.
        raise _file_error(lf_text, rel) or err from None
    if isinstance(data, list):
        return True
    if not isinstance(data, dict):
        raise KrmError(f"{obj.what} is not a KRM object (not a mapping)", file=File(rel, index))
    return False


def reader_annotations(rel: str, index: int, doc: str) -> dict[str, str]:
    """The annotations ``kpt fn source`` puts on document ``index`` (text ``doc``) of file ``rel``, in its order."""
    position = str(index)
    return {
        "config.kubernetes.io/index": position,
        "config.kubernetes.io/path": rel,
        "internal.config.kubernetes.io/index": position,
        "internal.config.kubernetes.io/path": rel,
        "internal.config.kubernetes.io/seqindent": seq_indent(doc),
    }


# From the newline before the line: the first line never counts (no key line above it), and a
# literal first character lets the regex engine skip ahead fast.
@functools.cache
def _seq_element() -> re.Pattern[str]:
    return re.compile(r"\n( *)- ")


def seq_indent(doc: str) -> str:
    """kyaml's ``DeriveSeqIndentStyle``: "wide" or "compact", from the document's first block sequence.

    The first line that is spaces then ``- `` decides, against the nearest
    line above it that is not a comment (that key line must hold one ``:``,
    at its end, its trailing comment aside): at the key's column "compact",
    two further in "wide"; any other line is passed over.  No such line:
    "compact".
    """
    for m in _seq_element().finditer(doc):
        key = _key_line_above(doc, m.start() + 1)
        if key is None:
            continue
        trimmed = key.strip(" ")
        if trimmed.count(":") != 1 or not trimmed.endswith(":"):
            continue
        seq_col, key_col = len(m.group(1)), len(key) - len(key.lstrip(" "))
        if seq_col == key_col:
            return "compact"
        if seq_col - key_col == 2:
            return "wide"
    return "compact"


def _key_line_above(doc: str, line_start: int) -> str | None:
    """The nearest line above the one at ``line_start`` that is not a comment, its comment cut off."""
    # Walked backwards in place: splitting every document into lines cost more than the rest of the read's new work.
    end = line_start - 1  # the newline ending the line above
    while end >= 0:
        begin = doc.rfind("\n", 0, end) + 1
        line = doc[begin:end]
        if not line.strip(" ").startswith("#"):
            return line.split("#", 1)[0]
        end = begin - 1
    return None


def _compact_sequence(doc: str) -> bool:
    """Every content line at column 0 starts a `- ` element: the sequence can sit under a key as is."""
    lines = [line for line in doc.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    return bool(lines) and lines[0].startswith("-") and not any(line[0] not in "- " for line in lines)


def _wrap(doc: str, indent: int) -> str:
    pad = " " * indent
    body = doc if not indent else "".join(pad + line if line.strip() else line for line in doc.splitlines(True))
    return f"{WRAPPING_KEY}:\n{body}"


def _unwrap(obj: Item, indent: int) -> str:
    """The sequence text of a wrapped item, as it goes back to its file."""
    text = obj.text
    data = obj.text_data  # the reader's annotations are not part of the sequence
    if not isinstance(data, dict) or set(data) != {WRAPPING_KEY}:
        raise KrmError(f"{obj.path}: the wrapped top-level sequence gained other fields; cannot write it back")
    head = f"{WRAPPING_KEY}:\n"
    if text.startswith(head):
        body = text[len(head):]
        lines = body.splitlines(True)
        pad = " " * indent
        if all(line.startswith(pad) or not line.strip() for line in lines):
            return "".join(line[indent:] if line.strip() else line for line in lines)
    return yamlio.dump_data(data[WRAPPING_KEY])


def split_documents(text: str) -> tuple[list[str], list[str]]:
    """Split a YAML stream at ``---`` lines, keeping every separator's exact text.

    A ``---`` at column 0 ends a document even inside a block scalar (whose
    lines must be indented), so a line scan is exact.
    """
    if not text.startswith("---") and "\n---" not in text:
        return [""], [text]  # one document (most files): no separator to look for line by line
    separators: list[str] = []
    docs: list[str] = []
    pos = 0
    pending_sep = ""
    for m in _doc_separator().finditer(text):
        docs.append(text[pos : m.start()])
        separators.append(pending_sep)
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end + 1
        pending_sep = text[m.start() : end]
        pos = end
    docs.append(text[pos:])
    separators.append(pending_sep)
    # A leading `---` leaves an empty first document: fold it into the separator.
    if len(docs) > 1 and docs[0] == "":
        docs.pop(0)
        separators.pop(0)
    return separators, docs


def _has_content(doc: str) -> bool:
    for line in doc.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "...":
            return True
    return False


# --- writing back -----------------------------------------------------------------


def plan_changes(pkg: Package, rl: ResourceList) -> pkgio.ChangeSet:
    """Work out which files change, without touching the disk."""
    by_path: dict[str, list[Item]] = {}
    for obj in rl.items:
        path = obj.path
        if not path:
            path = _default_path(obj)
        files.check_relative(path)
        by_path.setdefault(path, []).append(obj)
    changes = pkgio.ChangeSet()
    for path, source in pkg.files.items():
        wanted = by_path.pop(path, [])
        old = [item for item in source.items if item is not None]
        if len(wanted) == len(old) and all(a is b and not a.changed for a, b in zip(wanted, old)):
            continue
        text = _render_file(source, wanted)
        if text != source.text:
            changes.writes.append(pkgio.Write(path, _encoded(source.text), _encoded(text) if wanted else None))
    for path, objs in sorted(by_path.items()):
        changes.writes.append(pkgio.Write(path, None, _encoded("---\n".join(_item_text(o) for o in objs))))
    return changes


def _render_file(source: SourceFile, wanted: list[Item]) -> str:
    old = [item for item in source.items if item is not None]
    if len(wanted) == len(old) and all(a is b for a, b in zip(wanted, old)):
        # Same documents in the same order: splice the changed texts in place.
        docs = []
        it = iter(wanted)
        for position, (doc, item) in enumerate(zip(source.docs, source.items)):
            if item is None:
                docs.append(doc)
            elif position in source.wrapped:
                obj = next(it)
                docs.append(doc if not obj.changed else _unwrap(obj, source.wrapped[position]))
            else:
                docs.append(_item_text(next(it), doc))
        out = "".join(sep + doc for sep, doc in zip(source.separators, docs))
    else:
        first_sep = source.separators[0] if source.separators else ""
        wrapped = {id(source.items[p]): indent for p, indent in source.wrapped.items()}
        out = first_sep + "---\n".join(
            _unwrap(o, wrapped[id(o)]) if id(o) in wrapped else _item_text(o) for o in wanted
        )
    return out.replace("\n", "\r\n") if source.crlf else out


def _item_text(obj: Item, original: str | None = None) -> str:
    if not obj.changed and original is not None:
        return original
    # The reader's own annotations are held beside the text and never written; these are
    # ones the text itself holds (an item kpt passed in, or one a mode created with a path).
    reader_annotations = _reader_annotations()
    if any(reader_annotations.match(k) for k in obj.text_annotations):
        data = obj.copy_data()
        ann = data.get("metadata", {}).get("annotations", {})
        for key in [k for k in ann if reader_annotations.match(k)]:
            del ann[key]
        if not ann:
            del data["metadata"]["annotations"]
        obj.set_data(data)
    return obj.text


def _default_path(obj: Item) -> str:
    # kyaml's default for items created without a path.
    name = f"{obj.kind.lower()}_{obj.name}.yaml"
    return f"{obj.namespace}/{name}" if obj.namespace else name


def apply_writes(root: str | os.PathLike[str], changes: pkgio.ChangeSet | list[pkgio.Write]) -> None:
    """Write the planned changes as one transaction (:meth:`pkgio.ChangeSet.apply`, its link policy).

    Each file must still hold the bytes it was read with: an edit made
    underneath stops the write, naming the file, and nothing is written.
    """
    change_set = changes if isinstance(changes, pkgio.ChangeSet) else pkgio.ChangeSet(list(changes))
    try:
        change_set.apply(root, command="krm-merge run")
    except OSError as err:
        raise KrmError(f"cannot write {err.filename or root}: {err.strerror or err}; no file was changed") from None


def _encoded(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")
