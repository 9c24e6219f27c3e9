"""A package directory as a ResourceList, and back (``kpt fn source``/``sink``).

Used by ``krm-merge run DIR``.  Files are read as text and split into
documents; each document becomes an item that remembers its file and
index.  Writing back rewrites only files whose items changed, moved, were
added or removed, splicing the new item texts between the file's original
document separators, so everything else in the file keeps its bytes.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from krm_merge import files
from krm_merge.krm.kubeobject import KubeObject, scan_header
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import File, KrmError

YAML_SUFFIXES = (".yaml", ".yml")
META_FILES = ("Kptfile",)
_DOC_SEPARATOR = re.compile(r"^---[ \t]*(?:#[^\n]*)?$|^---[ \t]+(?=\S)", re.M)
# Annotations kpt's reader adds and its writer removes.
_READER_ANNOTATIONS = re.compile(
    r"^(internal\.config\.kubernetes\.io/.*|config\.kubernetes\.io/(path|index)|config\.k8s\.io/id)$"
)


@dataclass
class SourceFile:
    """A file as read: its documents and the separators between them."""

    path: str
    text: str
    crlf: bool
    separators: list[str] = field(default_factory=list)  # separators[i] precedes docs[i]
    docs: list[str] = field(default_factory=list)
    items: list[KubeObject | None] = field(default_factory=list)


@dataclass
class Package:
    """The files of a package directory and the items read from them."""

    root: Path
    files: dict[str, SourceFile] = field(default_factory=dict)


def read_package(root: Path, *, validate: bool = True) -> tuple[Package, ResourceList]:
    """Read every YAML file (and the Kptfile) below ``root`` into a ResourceList.

    With ``validate`` every document is checked to be a mapping (by the cheap
    header scan, parsing only what the scan cannot read); without it nothing
    is parsed until a mode asks, for callers that compare texts first.
    """
    root = Path(root)
    if not root.is_dir():
        raise KrmError(f"{root} is not a directory")
    pkg = Package(root)
    rl = ResourceList()
    ignore = _read_krmignore(root)
    for rel in _package_files(root, ignore):
        source = _read_source(root, rel, validate)
        pkg.files[rel] = source
        rl.items.extend(item for item in source.items if item is not None)
    return pkg, rl


def _read_krmignore(root: Path) -> list[str]:
    path = root / ".krmignore"
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _ignored(rel: str, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        pat = pattern.rstrip("/").lstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(name, pat) or rel.startswith(pat + "/"):
            return True
    return False


def _package_files(root: Path, ignore: list[str]) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and not _ignored(rel_dir + d, ignore)
            and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in filenames:
            rel = rel_dir + name
            if name.startswith(".") or _ignored(rel, ignore):
                continue
            if name.endswith(YAML_SUFFIXES) or name in META_FILES:
                if os.path.islink(os.path.join(dirpath, name)):
                    continue
                found.append(rel)
    return sorted(found)


def _read_source(root: Path, rel: str, validate: bool) -> SourceFile:
    try:
        text = files.read_text(root / rel)
    except UnicodeDecodeError:
        raise KrmError(f"{rel} is not UTF-8 text", file=File(rel)) from None
    crlf = "\r\n" in text
    lf_text = text.replace("\r\n", "\n") if crlf else text
    source = SourceFile(rel, text, crlf)
    separators, docs = split_documents(lf_text)
    source.separators, source.docs = separators, docs
    index = 0
    for doc in docs:
        if not _has_content(doc):
            source.items.append(None)
            continue
        obj = KubeObject(doc, what=f"{rel} (document {index})")
        obj.file_path, obj.file_index = rel, index
        if validate:
            _check_document(obj, rel, index)
        source.items.append(obj)
        index += 1
    return source


def _check_document(obj: KubeObject, rel: str, index: int) -> None:
    header = scan_header(obj.text)
    if header is not None:
        obj.cache_header(header)
        return
    try:
        data = obj.data
    except KrmError as err:
        raise KrmError(err.message.replace(obj.what, rel), file=File(rel, index)) from None
    if not isinstance(data, dict):
        raise KrmError(f"{rel}: document {index} is not a KRM object (not a mapping)", file=File(rel, index))


def split_documents(text: str) -> tuple[list[str], list[str]]:
    """Split a YAML stream at ``---`` lines, keeping every separator's exact text.

    A ``---`` at column 0 ends a document even inside a block scalar (whose
    lines must be indented), so a line scan is exact.
    """
    separators: list[str] = []
    docs: list[str] = []
    pos = 0
    pending_sep = ""
    for m in _DOC_SEPARATOR.finditer(text):
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


@dataclass
class FileChange:
    """A file to write (``text``) or delete (``text is None``)."""

    path: str
    before: str | None
    text: str | None


def plan_writes(pkg: Package, rl: ResourceList) -> list[FileChange]:
    """Work out which files change, without touching the disk."""
    by_path: dict[str, list[KubeObject]] = {}
    for obj in rl.items:
        path = obj.path
        if not path:
            path = _default_path(obj)
        files.check_relative(path)
        by_path.setdefault(path, []).append(obj)
    changes: list[FileChange] = []
    for path, source in pkg.files.items():
        wanted = by_path.pop(path, [])
        old = [item for item in source.items if item is not None]
        if len(wanted) == len(old) and all(a is b and not a.changed for a, b in zip(wanted, old)):
            continue
        text = _render_file(source, wanted)
        if text != source.text:
            changes.append(FileChange(path, source.text, text if wanted else None))
    for path, objs in sorted(by_path.items()):
        changes.append(FileChange(path, None, "---\n".join(_item_text(o) for o in objs)))
    return changes


def _render_file(source: SourceFile, wanted: list[KubeObject]) -> str:
    old = [item for item in source.items if item is not None]
    if len(wanted) == len(old) and all(a is b for a, b in zip(wanted, old)):
        # Same documents in the same order: splice the changed texts in place.
        docs = []
        it = iter(wanted)
        for doc, item in zip(source.docs, source.items):
            docs.append(doc if item is None else _item_text(next(it), doc))
        out = "".join(sep + doc for sep, doc in zip(source.separators, docs))
    else:
        first_sep = source.separators[0] if source.separators else ""
        out = first_sep + "---\n".join(_item_text(o) for o in wanted)
    return out.replace("\n", "\r\n") if source.crlf else out


def _item_text(obj: KubeObject, original: str | None = None) -> str:
    if not obj.changed and original is not None:
        return original
    if any(_READER_ANNOTATIONS.match(k) for k in obj.annotations):
        data = obj.copy_data()
        ann = data.get("metadata", {}).get("annotations", {})
        for key in [k for k in ann if _READER_ANNOTATIONS.match(k)]:
            del ann[key]
        if not ann:
            del data["metadata"]["annotations"]
        obj.set_data(data)
    return obj.text


def _default_path(obj: KubeObject) -> str:
    # kyaml's default for items created without a path.
    name = f"{obj.kind.lower()}_{obj.name}.yaml"
    return f"{obj.namespace}/{name}" if obj.namespace else name


def apply_writes(root: Path, changes: list[FileChange]) -> None:
    """Write the planned changes (each file atomically); refuse to follow symlinks."""
    root = Path(root).resolve()
    for change in changes:
        files.check_target(root, change.path)
    writes = [(root / c.path, c.text) for c in changes if c.text is not None]
    try:
        for target, _ in writes:
            target.parent.mkdir(parents=True, exist_ok=True)
        # All files or none: staged next to their targets, then renamed.
        files.write_files_atomic(writes)
    except OSError as err:
        raise KrmError(f"cannot write {err.filename or root}: {err.strerror or err}; no file was changed") from None
    for change in changes:
        if change.text is None:
            try:
                (root / change.path).unlink(missing_ok=True)
            except OSError as err:
                raise KrmError(f"cannot delete {change.path}: {err.strerror or err}") from None


def unified_diff(changes: list[FileChange]) -> str:
    """The planned changes as a unified diff (``--dry-run``)."""
    return files.unified_diff((c.path, c.before, c.text) for c in changes)
