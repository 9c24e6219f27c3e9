"""Directory walking, cheap screening and transactional file writes for ``krm-merge promote``.

Only files whose bytes contain a token (the marker key, or the Pipeline API group) are ever
decoded or parsed; the walk is the package lister (:mod:`krm_merge.krm.pkgio`, plain
``os.scandir`` with dirent types) and the screen a byte search on top of it, so a run
over a large repository costs little more than ``grep -rl``.
"""

from __future__ import annotations

import os

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.krm import pkgio
from krm_merge.krm.snapshot import Snapshot, is_hidden
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.pipeline import PIPELINE_GROUP, PipelineRef, find_pipeline
from krm_merge.records import Record
from krm_merge.yaml.load import load_all_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, TypeVar

    T = TypeVar("T")

YAML_SUFFIXES = pkgio.YAML_SUFFIXES
EXTRA_NAMES = ("Kustomization",)  # kustomize's extension-less file name, as Flux reads it


class ScreenedFile(Record):
    """A file whose bytes contain at least one of the screening tokens."""

    rel: str  # path relative to the root, with "/" separators
    path: str  # as reached from the root (plain strings: pathlib is not worth its import here)
    data: bytes
    is_symlink: bool
    mtime_ns: int
    size: int


class BrokenLink(Record):
    """A symbolic link under the root whose target does not exist: nothing to read, so no marked file."""

    rel: str
    target: str


class Screen(Record):
    """What :func:`screen` found: the files holding a token, and the broken links it passed by."""

    files: list[ScreenedFile]
    broken_links: list[BrokenLink]


def _read(path: str) -> bytes:
    """The bytes of a file (raw syscalls)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def _read_fd(fd: int) -> bytes:
    data = os.read(fd, _CHUNK)
    if len(data) < _CHUNK:
        return data
    chunks = [data]
    while len(chunks[-1]) == _CHUNK:
        chunks.append(os.read(fd, _CHUNK))
    return b"".join(chunks)


# Below malloc's mmap threshold: a 1 MiB buffer per file costs an mmap/munmap pair each
# time and doubled the run time of the whole walk.
_CHUNK = 1 << 16
# O_NONBLOCK: a FIFO named like a YAML file fails its read instead of hanging the walk.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def list_tree(root: str) -> pkgio.Listing:
    """The YAML files under ``root`` as promote reads them: one :func:`krm_merge.krm.pkgio.list_package` call.

    Hidden files included, ``.krmignore`` not read (as promote always
    walked), and the lister's link policy: links to files are listed, links
    to directories are not followed, broken links are set apart.
    """
    try:
        return pkgio.list_package(root, suffixes=YAML_SUFFIXES, names=EXTRA_NAMES, hidden=True, krmignore=False)
    except KrmMergeError as err:
        raise PromoteError(err.message) from None
    except OSError as err:
        raise PromoteError(f"cannot read directory {err.filename}: {err.strerror}") from None


def screen(listing: pkgio.Listing, tokens: tuple[bytes, ...]) -> Screen:
    """The listed files containing any of ``tokens``, in sorted path order, and the broken links.

    A broken link is returned, not refused: it holds no marker, and Flux's
    setters skip it too, so the caller warns and goes on (issue 34).
    """
    try:
        broken = [BrokenLink(rel, pkgio.link_target(listing.root, rel)) for rel in listing.broken_links]
    except OSError as err:
        raise PromoteError(f"cannot read directory {err.filename}: {err.strerror}") from None
    found: list[ScreenedFile] = []
    open_, read, close = os.open, _read_fd, os.close
    # This loop runs once per listed file and is most of a large run's time: it is kept flat.
    for listed in listing.files:
        try:
            fd = open_(listed.path, _READ_FLAGS)
        except OSError as err:
            raise PromoteError(f"cannot read {listed.rel}: {err.strerror}") from None
        try:
            data = read(fd)
        except OSError as err:
            raise PromoteError(f"cannot read {listed.rel}: {err.strerror}") from None
        finally:
            close(fd)
        for token in tokens:
            if data.find(token) != -1:  # not ``token in data``: see holds()
                found.append(_screened(listed, data))
                break
    return Screen(found, broken)


def holds(data: bytes, tokens: tuple[bytes, ...]) -> bool:
    """Whether ``data`` contains any of ``tokens``: the screen's one test, a ``bytes.find`` per token.

    Not ``token in data``: CPython (3.11, 3.12) reads the operand of ``bytes.__contains__`` as an integer first
    and formats and clears a TypeError before it searches, which cost more than the search itself on each of
    the thousands of files a large run passes by.
    """
    return any(data.find(token) != -1 for token in tokens)


def read_one(root: str, rel: str) -> ScreenedFile:
    """A file named by its path relative to ``root`` (kustomizations found by template)."""
    path = os.path.join(root, rel)
    try:
        data = _read(path)
        info = os.stat(path)
    except OSError as err:
        raise PromoteError(f"cannot read {rel}: {err.strerror}") from None
    return ScreenedFile(rel, path, data, os.path.islink(path), info.st_mtime_ns, info.st_size)


def _screened(listed: pkgio.PackageFile, data: bytes) -> ScreenedFile:
    info = os.stat(listed.path)
    return ScreenedFile(listed.rel, listed.path, data, listed.is_link, info.st_mtime_ns, info.st_size)


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 text of a file and whether it started with a byte order mark."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8"), True
    return data.decode("utf-8"), False


def encode(text: str, bom: bool) -> bytes:
    """The bytes to write back (surrogates cannot be written and are refused)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise PromoteError("the new value cannot be encoded as UTF-8") from None
    return b"\xef\xbb\xbf" + data if bom else data


def planned_write(file: ScreenedFile, data: bytes) -> pkgio.Write:
    """The change of a screened file to ``data`` (checked against the bytes the screen read)."""
    return pkgio.Write(file.rel, file.data, data)


def write_all(root: str, writes: pkgio.ChangeSet) -> None:
    """Write every planned file or none, as one transaction (:meth:`krm_merge.krm.pkgio.ChangeSet.apply`).

    Links are written through only to a file inside the package; a file whose
    bytes changed since the screen read them stops the transaction, naming it.
    """
    _refusing(root, lambda: writes.apply(root, command="krm-merge promote"))


def check_all(root: str, writes: pkgio.ChangeSet) -> None:
    """Refuse now what :func:`write_all` would refuse (:meth:`krm_merge.krm.pkgio.ChangeSet.validate`)."""
    _refusing(root, lambda: writes.validate(root))


def diff_all(root: str, writes: pkgio.ChangeSet) -> Iterator[str]:
    """The planned writes as a unified diff (``--dry-run``), made file by file as it is printed, once refused
    as :func:`write_all` refuses them."""
    return _refusing(root, lambda: writes.diff(root))


def _refusing(root: str, action: Callable[[], T]) -> T:
    """``action``, with the writer's refusals and I/O errors as promote's errors (one wording for both)."""
    try:
        return action()
    except files.UnsafePathError as err:
        raise PromoteError(err.message) from None
    except OSError as err:
        raise PromoteError(f"cannot write {err.filename or root}: {err.strerror or err}; nothing written") from None


def unread_marker_files(snapshot: Snapshot) -> list[str]:
    """Files that Flux reads but ``kpt fn source`` does not (``Kustomization``) holding a marker.

    Filtered from the package's one listing (``snapshot``, which ``krm-merge run`` read the package
    through): hidden names are skipped, as ``krm-merge run`` skips them; links are not read.
    """
    tokens = (b'"$promotion"', b'"$imagepolicy"')
    found: list[str] = []
    for listed in snapshot.regular_files():  # links are not regular files: not read
        if listed.rel.rpartition("/")[2] not in EXTRA_NAMES or is_hidden(listed.rel):
            continue
        try:
            data = snapshot.read_bytes(listed.rel)
        except (OSError, KrmMergeError):  # unreadable, or swapped for a link since the listing: not read
            continue
        if holds(data, tokens):
            found.append(listed.rel)
    return found


def pipeline_finder(root: str) -> Callable[[PipelineRef], dict[str, Any] | None]:
    """Look Pipelines up in the tree under ``root`` before any promotion is known (``promote --event``).

    One more listing of the tree than :func:`krm_merge.promote.filemode.plan` makes: the event's promotion needs the Pipeline first.
    """
    return pipeline_lookup(screen(list_tree(root), (PIPELINE_GROUP.encode(),)).files)


def pipeline_lookup(files: list[ScreenedFile]) -> Callable[[PipelineRef], dict[str, Any] | None]:
    """Look Pipelines up among the files that may hold one; each such file is read once."""
    group = (PIPELINE_GROUP.encode(),)
    candidates = [screened for screened in files if holds(screened.data, group)]
    documents: list[list[Any]] = []

    def find(ref: PipelineRef) -> dict[str, Any] | None:
        if candidates and not documents:
            documents.extend(_documents(screened) for screened in candidates)
        for docs in documents:
            found = find_pipeline(docs, ref)
            if found is not None:
                return found
        return None

    return find


def _documents(screened: ScreenedFile) -> list[Any]:
    try:
        return load_all_data(decode(screened.data)[0], screened.rel)
    except (KrmMergeError, UnicodeDecodeError, RecursionError):
        return []  # reported when it also holds markers; otherwise not ours
