"""Directory walking, cheap screening and transactional file writes for ``krm-merge promote``.

Only files whose bytes contain a token (the marker key, or the Pipeline API group) are ever
decoded or parsed; the walk itself is a plain ``os.scandir`` loop, so a run over a large
repository costs little more than ``grep -rl``.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from krm_merge import files
from krm_merge.promote.errors import PromoteError

YAML_SUFFIXES = (".yaml", ".yml")
EXTRA_NAMES = ("Kustomization",)  # kustomize's extension-less file name, as Flux reads it
SKIP_DIRS = (".git",)


class ScreenedFile(NamedTuple):
    """A file whose bytes contain at least one of the screening tokens."""

    rel: str  # path relative to the root, with "/" separators
    path: str  # as reached from the root (plain strings: pathlib is not worth its import here)
    data: bytes
    is_symlink: bool
    mtime_ns: int
    size: int


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


def screen(root: str, tokens: tuple[bytes, ...]) -> list[ScreenedFile]:
    """The YAML files under ``root`` containing any of ``tokens``, in sorted path order.

    Symbolic links to directories are not followed (no loops, no escaping the root);
    symbolic links to files are read (their edits are refused later); dangling ones are skipped.
    """
    stack = [(root, "")]
    found: list[ScreenedFile] = []
    suffixes, extra_names, skip_dirs = YAML_SUFFIXES, EXTRA_NAMES, SKIP_DIRS
    open_, read, close, scandir = os.open, _read_fd, os.close, os.scandir
    # This loop runs once per file of the tree and is most of a large run's time: it is kept
    # flat, and a YAML name is opened without asking first whether it is a directory (rare,
    # and the read then says so).
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = scandir(directory)
        except OSError as err:
            raise PromoteError(f"cannot read directory {directory}: {err.strerror}") from None
        try:
            for entry in entries:
                name = entry.name
                if name.endswith(suffixes) or name in extra_names:
                    try:
                        fd = open_(entry.path, _READ_FLAGS)
                    except FileNotFoundError:
                        continue  # a dangling symlink
                    except OSError as err:
                        raise PromoteError(f"cannot read {prefix + name}: {err.strerror}") from None
                    try:
                        data = read(fd)
                    except IsADirectoryError:
                        if entry.is_dir(follow_symlinks=False):  # a folder named x.yaml; links are not followed
                            stack.append((entry.path, prefix + name + "/"))
                        continue
                    except OSError as err:
                        raise PromoteError(f"cannot read {prefix + name}: {err.strerror}") from None
                    finally:
                        close(fd)
                    for token in tokens:
                        if token in data:
                            found.append(_screened(entry, prefix + name, data))
                            break
                elif name not in skip_dirs and entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, prefix + name + "/"))
        finally:
            entries.close()
    found.sort(key=lambda f: f.rel)
    return found


def read_one(root: str, rel: str) -> ScreenedFile:
    """A file named by its path relative to ``root`` (kustomizations found by template)."""
    path = os.path.join(root, rel)
    try:
        data = _read(path)
        info = os.stat(path)
    except OSError as err:
        raise PromoteError(f"cannot read {rel}: {err.strerror}") from None
    return ScreenedFile(rel, path, data, os.path.islink(path), info.st_mtime_ns, info.st_size)


def _screened(entry: os.DirEntry[str], rel: str, data: bytes) -> ScreenedFile:
    info = os.stat(entry.path)
    return ScreenedFile(rel, entry.path, data, entry.is_symlink(), info.st_mtime_ns, info.st_size)


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


class PlannedWrite(NamedTuple):
    """New bytes for a screened file."""

    file: ScreenedFile
    data: bytes


def write_all(root: str, writes: list[PlannedWrite]) -> None:
    """Write every planned file or none, as one transaction (:mod:`krm_merge.txn`).

    Symbolic links are refused; a file whose bytes changed since the screen read them
    stops the transaction, naming it.
    """
    from krm_merge import txn

    for write in writes:
        if write.file.is_symlink:
            raise PromoteError(f"refusing to write {write.file.rel}: it is a symbolic link")
    try:
        txn.commit(root, [txn.Change(w.file.rel, w.data, w.file.data) for w in writes], command="krm-merge promote")
    except files.UnsafePathError as err:
        raise PromoteError(err.message) from None
    except OSError as err:
        raise PromoteError(f"cannot write {err.filename or root}: {err.strerror or err}; nothing written") from None


def unread_marker_files(root: str) -> list[str]:
    """Files that Flux reads but ``kpt fn source`` does not (``Kustomization``) holding a marker.

    Hidden directories are skipped, as ``krm-merge run`` skips them.
    """
    tokens = (b'"$promotion"', b'"$imagepolicy"')
    found: list[str] = []
    stack = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, prefix + entry.name + "/"))
                    elif entry.name in EXTRA_NAMES and entry.is_file(follow_symlinks=False):
                        data = _read(entry.path)
                        if any(token in data for token in tokens):
                            found.append(prefix + entry.name)
        except OSError:
            continue
    return sorted(found)
