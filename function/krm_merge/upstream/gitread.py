"""A package directory at a commit, read out of a git cache: listed, checked, then read or written.

:class:`ObjectReader` is one ``git cat-file --batch-command`` process over the
cache repository (trees, sizes and files; ``--batch`` before git 2.36).  :func:`list_directory` walks the commit's trees to the package
directory and lists everything below it (names checked, file and folder
counts bounded, no recursion) before any blob is fetched;
:func:`check_sizes` then refuses a file over the input limit
(``KRM_MERGE_MAX_INPUT_MB``) or files over their budgets (one tree's, the
whole update's: :class:`files.Budget`) from the blobs' sizes alone, before
one byte of them is read; :func:`read_entries` then reads the files into memory (an
update's versions), or :func:`write_entries` streams each blob into its file in bounded
chunks (a fleet's shared copies).  An upstream's five 500 MB files of zeros (a 2.5 MB ``.git``)
are refused at their sizes, whatever they inflate to (docs/security.md).

Reading the objects instead of ``git archive`` also reads the tree as it is
committed, as kpt's checkout does: ``export-ignore``/``export-subst``
attributes of the upstream's own ``.gitattributes`` do not apply.
"""

from __future__ import annotations

import os

from krm_merge import files, gitexec
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.records import Record
from krm_merge.yaml.load import check_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Iterator

TREE, LINK, GITLINK = "40000", "120000", "160000"
EXECUTABLE = "100755"
# A link's target is a path: longer than PATH_MAX it cannot be created anyway.
MAX_LINK_BYTES = 4096
CHUNK = 1 << 20  # bytes copied at a time from git to a file
# Sizes asked at a time: 500 questions (~22 KB) and their answers (~30 KB) each fit in a 64 KB pipe.
INFO_CHUNK = 500
# Trees, commits and links are read whole: bounded, whatever an upstream commits (a tree of
# 100,000 entries, files.MAX_TREE_FILES, is a few MB).
MAX_OBJECT_READ = 64 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Entry(Record):
    """One entry below the package directory: its path there (``/``-separated), git's mode, its object id."""

    rel: str
    mode: str
    oid: str


class ObjectReader:
    """One ``git cat-file`` process: objects of a repository by id, one at a time, in order, and (git 2.36 and
    later) their sizes too (:attr:`sizes_too`, :meth:`sizes`)."""

    def __init__(self, git: gitexec.Git) -> None:
        """``git``: the cache repository's git (its ``--git-dir`` and profile set).

        ``cat-file --batch-command`` answers both ``info`` (a size) and ``contents``, so an update's one
        process reads trees, sizes and files (one ``git cat-file --batch-check`` fewer).  It is asked
        ``info HEAD`` first (one line back whatever the repository holds, and nothing fetched); a git
        without it (before 2.36) has exited by then, and ``cat-file --batch`` is run instead.
        """
        self.sizes_too = False
        self._start(git, ["cat-file", "--batch-command"])
        try:
            self._in.write(b"info HEAD\n")
            self._in.flush()
            self.sizes_too = bool(self._out.readline())
        except OSError:
            pass
        if not self.sizes_too:
            self.close()
            self._start(git, ["cat-file", "--batch"])

    def _start(self, git: gitexec.Git, args: list[str]) -> None:
        self._proc = git.start(args)
        self._in: IO[bytes] = self._proc.stdin  # type: ignore[assignment]
        self._out: IO[bytes] = self._proc.stdout  # type: ignore[assignment]

    def sizes(self, oids: list[str]) -> dict[str, int]:
        """The size of each object of ``oids`` the repository holds (from its header; no content read), asked
        :data:`INFO_CHUNK` at a time: that many questions and answers each fit in a pipe, so neither side waits
        on the other.  Only a reader with :attr:`sizes_too`."""
        assert self.sizes_too, "a cat-file --batch reader answers no sizes"
        found: dict[str, int] = {}
        for start in range(0, len(oids), INFO_CHUNK):
            chunk = oids[start:start + INFO_CHUNK]
            try:
                self._in.write("".join(f"info {oid}\n" for oid in chunk).encode("ascii"))
                self._in.flush()
            except OSError:
                raise KrmError("reading sizes from the git cache: git cat-file stopped") from None
            for oid in chunk:
                answer = self._out.readline().split()
                if len(answer) == 3 and answer[0].decode("ascii", "replace") == oid and answer[2].isdigit():
                    found[oid] = int(answer[2])
                elif not answer:
                    raise KrmError("reading sizes from the git cache: git cat-file ended early")
        return found

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the process (killed if it is still sending an object nobody will read)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()

    def _header(self, oid: str, kind: str) -> int:
        """Ask for ``oid``; the size of its content, which follows on stdout."""
        try:
            self._in.write((b"contents " if self.sizes_too else b"") + oid.encode("ascii") + b"\n")
            self._in.flush()
        except OSError:
            raise KrmError(f"reading object {oid} from the git cache: git cat-file stopped") from None
        header = self._out.readline().split()
        if len(header) != 3 or header[1].decode("ascii", "replace") != kind:
            found = header[1].decode("ascii", "replace") if len(header) > 1 else "nothing"
            raise KrmError(f"reading object {oid} from the git cache: expected a {kind}, found {found}")
        return int(header[2])

    def read(self, oid: str, kind: str) -> bytes:
        """The content of object ``oid`` of type ``kind`` (trees, commits, links: at most :data:`MAX_OBJECT_READ`
        bytes, else an error, nothing read)."""
        size = self._header(oid, kind)
        if size > MAX_OBJECT_READ:
            raise files.UntrustedTreeError(f"object {oid} ({kind}) of {size} bytes in the git cache; refused")
        data = self._read_exactly(size, None)
        self._read_exactly(1, None)  # the newline after each object
        return data

    def blob(self, oid: str, size: int) -> bytes:
        """The content of blob ``oid``, whose size was checked (:func:`check_sizes`): anything else is refused
        before its content is read."""
        if self._header(oid, "blob") != size:
            raise KrmError(f"reading object {oid} from the git cache: not the size git gave before")
        data = self._out.read(size)  # one buffer of the blob's size (chunks joined would hold it twice)
        if len(data) != size:
            raise KrmError("reading from the git cache: git cat-file ended early")
        self._read_exactly(1, None)
        return data

    def copy(self, oid: str, fd: int) -> int:
        """Write blob ``oid`` to the file ``fd`` a chunk at a time; the number of bytes written."""
        size = self._header(oid, "blob")
        self._read_exactly(size, fd)
        self._read_exactly(1, None)
        return size

    def _read_exactly(self, size: int, fd: int | None) -> bytes:
        parts, left = [], size
        while left:
            chunk = self._out.read(min(left, CHUNK))
            if not chunk:
                raise KrmError("reading from the git cache: git cat-file ended early")
            left -= len(chunk)
            if fd is None:
                parts.append(chunk)
            else:
                _write_all(fd, chunk)
        return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def commit_tree(reader: ObjectReader, commit: str) -> str:
    """The id of ``commit``'s root tree."""
    first = reader.read(commit, "commit").split(b"\n", 1)[0]
    if not first.startswith(b"tree "):
        raise KrmError(f"commit {commit} in the git cache has no tree")
    return first[5:].decode("ascii")


def tree_entries(data: bytes, oid_bytes: int) -> Iterator[tuple[str, bytes, str]]:
    """(mode, name, object id) of each entry of a tree object's content."""
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        stop = nul + 1 + oid_bytes
        if stop > end:
            raise ValueError("truncated tree")
        yield data[pos:space].decode("ascii"), data[space + 1:nul], data[nul + 1:stop].hex()
        pos = stop


def list_directory(reader: ObjectReader, commit: str, directory: str, what: str,
                   budget: files.Budget) -> tuple[str, list[Entry]] | None:
    """``directory``'s tree id at ``commit`` and every entry below it, each folder before what it holds; None
    when ``directory`` is not a folder at that commit.

    Names are checked as any tree from elsewhere (:func:`files.check_untrusted_name`),
    folders nested at most :data:`files.MAX_TREE_DEPTH` deep
    (:func:`files.check_untrusted_depth`) and at most :data:`files.MAX_TREE_FILES`
    of them, and each file counted in the tree's ``budget`` (no bytes yet:
    :func:`check_sizes` charges those), while walking: a hostile tree is refused
    before its blobs are fetched.
    """
    tree = commit_tree(reader, commit)
    oid_bytes = len(tree) // 2
    try:
        for part in (p for p in directory.split("/") if p):
            found = [(mode, oid) for mode, name, oid in tree_entries(reader.read(tree, "tree"), oid_bytes)
                     if name == os.fsencode(part)]
            if not found or found[0][0] != TREE:
                return None
            tree = found[0][1]
        return tree, _walk(reader, tree, oid_bytes, what, budget)
    except (ValueError, UnicodeDecodeError):
        raise KrmError(f"{what}: a tree object of commit {commit} is malformed; refused") from None


def _walk(reader: ObjectReader, tree: str, oid_bytes: int, what: str, budget: files.Budget) -> list[Entry]:
    entries: list[Entry] = []
    pending = [("", tree)]
    folders = 0
    while pending:
        prefix, oid = pending.pop()
        for mode, raw, child in tree_entries(reader.read(oid, "tree"), oid_bytes):
            name = os.fsdecode(raw)
            rel = prefix + name
            files.check_untrusted_name(name, rel, what)
            if mode == TREE:
                files.check_untrusted_depth(rel, what)
                folders += 1
                if folders > files.MAX_TREE_FILES:  # as many folders as files a tree may hold
                    raise files.UntrustedTreeError(f"{what}: more than {files.MAX_TREE_FILES} folders; refused")
                pending.append((rel + "/", child))
            else:
                budget.charge(0, what)  # counted now, its bytes once the headers are read
            entries.append(Entry(rel, mode, child))
    return entries


def blobs_of(entries: list[Entry]) -> list[str]:
    """The blob ids the entries need (files and links)."""
    return [e.oid for e in entries if e.mode not in (TREE, GITLINK)]


def check_sizes(entries: list[Entry], sizes: dict[str, int], what: str, budget: files.Budget) -> None:
    """Refuse a file over the input limit, a link over :data:`MAX_LINK_BYTES`, or files over the bytes of the
    tree's ``budget`` (their count charged by :func:`list_directory`), from the blobs' sizes (nothing read yet)."""
    for entry in entries:
        if entry.mode in (TREE, GITLINK):
            continue
        size = sizes[entry.oid]
        if entry.mode == LINK:
            if size > MAX_LINK_BYTES:
                raise files.UntrustedTreeError(f"{what}: {entry.rel}: a symbolic link of {size} bytes; refused")
            continue
        check_size(size, f"{what}: {entry.rel}")
        budget.charge(size, what, count=0)


def read_entries(reader: ObjectReader, entries: list[Entry], sizes: dict[str, int]) -> dict[str, bytes]:
    """The bytes of each file among ``entries`` (by ``rel``; folders and links are not read), once
    :func:`check_sizes` accepted ``sizes``: each blob is read only if its header gives the size checked."""
    contents: dict[str, bytes] = {}
    read: dict[str, bytes] = {}  # the same blob at two paths is read once
    for entry in entries:
        if entry.mode in (TREE, GITLINK, LINK):
            continue
        data = read.get(entry.oid)
        if data is None:
            data = read[entry.oid] = reader.blob(entry.oid, sizes[entry.oid])
        contents[entry.rel] = data
    return contents


def entry_kinds(entries: list[Entry]) -> Iterator[tuple[str, str]]:
    """``(rel, kind)`` of each entry for :func:`krm_merge.krm.pkgio.listing_of_entries` (a submodule is the
    empty folder git archive and kpt's checkout leave)."""
    for entry in entries:
        kind = (pkgio.ENTRY_DIR if entry.mode in (TREE, GITLINK) else pkgio.ENTRY_LINK if entry.mode == LINK
                else pkgio.ENTRY_FILE)
        yield entry.rel, kind


def write_entries(reader: ObjectReader, entries: list[Entry], dest: str) -> None:
    """Write the entries into the empty folder ``dest``: folders, files (created ``O_EXCL | O_NOFOLLOW``,
    streamed), then the links, so no file is written through a link (the caller prunes links)."""
    links: list[tuple[str, str]] = []
    for entry in entries:
        path = os.path.join(dest, *entry.rel.split("/"))
        if entry.mode in (TREE, GITLINK):  # a submodule: an empty folder, as git archive and kpt's checkout leave it
            os.mkdir(path)
        elif entry.mode == LINK:
            links.append((os.fsdecode(reader.read(entry.oid, "blob")), path))
        else:
            _write_blob(reader, entry, path)
    for target, path in links:
        os.symlink(target, path)


def _write_blob(reader: ObjectReader, entry: Entry, path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o755 if entry.mode == EXECUTABLE else 0o644)
    try:
        reader.copy(entry.oid, fd)
    finally:
        os.close(fd)


__all__ = ["Entry", "ObjectReader", "blobs_of", "check_sizes", "commit_tree", "entry_kinds", "list_directory",
           "read_entries", "tree_entries", "write_entries"]
