"""File I/O of the package commands: bounded reads, safe paths, atomic writes, diffs.

The one place that knows how krm-merge touches files:

* a file the user names is read strictly (:func:`read_bytes`): a regular
  file only (a FIFO, a device, a folder refused by name, checked on a
  descriptor opened without blocking), and never past the input size limit;
* a path written must stay inside the package (no absolute path, no ``..``,
  no folder that resolves outside the root, no symbolic link);
* several files are written all-or-nothing: each is staged as a temporary
  file in its own folder (a full disk or a read-only folder fails before
  anything is replaced), then all are renamed into place, and if a rename
  fails the files already replaced get their previous bytes back; modes are
  kept and a reader never sees half a file;
* ``--dry-run`` output is one unified diff format;
* a tree written by someone else (an upstream or origin version of a
  package) is listed by :func:`krm_merge.krm.pkgio.list_package` with
  ``untrusted`` (names, depth, file count and total size checked with
  :func:`check_untrusted_name`, :func:`check_untrusted_depth` and a
  :class:`Budget`, no link followed) and read in place by :func:`read_beneath`: every name on the
  way opened with ``O_NOFOLLOW`` below its folder's descriptor, so a link
  swapped in after the listing is never read through (docs/security.md).
"""

from __future__ import annotations

import bisect
import errno
import functools
import os
import re
import stat
from types import ModuleType

from krm_merge import numbers
from krm_merge.errors import KrmMergeError
from krm_merge.yaml.load import check_size, max_input_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, Iterable, Iterator, Mapping, Sequence

# No pathlib here (it pulls in urllib.parse and ipaddress: milliseconds every command would
# pay at start-up, dry runs included): paths are strings.


class UnsafePathError(KrmMergeError):
    """A write that would leave the package or follow a symbolic link."""


class UntrustedTreeError(KrmMergeError):
    """A tree from elsewhere (upstream, origin) that is refused before any of it is read."""


# --- reading ----------------------------------------------------------------------------


class NotAFileError(KrmMergeError):
    """A file to read that is no regular file: a FIFO, a device, a socket, a folder (or a link to one)."""


# A file the user names is opened following links (the user chose it) and without blocking:
# a FIFO's open would wait for a writer; its kind is then checked on the descriptor (fstat).
_USER_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a file the user named, read strictly: the one reader of such files.

    A regular file only (a link to one is followed): a FIFO, a device (a link
    to ``/dev/zero``), a socket or a folder is refused with
    :class:`NotAFileError` naming it, checked on the descriptor opened with
    ``O_NONBLOCK`` (a FIFO never blocks the open, nothing is read from it).
    At most the input size limit is read, plus one byte to see it is passed:
    a file above it (by its size, or by what it yields: a file that grows, a
    ``/proc`` file whose size says 0) is refused with the loader's size error,
    never read to its end.  Raises ``OSError`` when it cannot be opened.
    """
    name = os.fspath(path)
    fd = os.open(name, _USER_FILE_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((word for test, word in _KINDS if test(info.st_mode)), "not a regular file")
            raise NotAFileError(f"{name}: {kind}, not a regular file; not read", file=name)
        return _read_bounded(fd, info.st_size, max_input_bytes(), name)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str]) -> str:
    """A file the user named as UTF-8 text, CRLF line ends kept, read strictly (:func:`read_bytes`).

    Raises ``OSError``, :class:`NotAFileError`, ``UnicodeDecodeError`` or the loader's size error.
    """
    return read_bytes(path).decode("utf-8")


def read_stream(stream: BinaryIO, what: str) -> bytes:
    """What ``stream`` (standard input) yields to its end, refused past the input size limit (the loader's size
    error naming ``what``) once at most one byte more was read: ``krm-merge < /dev/zero`` ends, bounded."""
    limit = max_input_bytes()
    chunks: list[bytes] = []
    got = 0
    while True:
        # a chunk at a time: read(limit + 1) would allocate the whole limit before the first byte came
        chunk = stream.read(min(_STREAM_CHUNK, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if got > limit:
            check_size(got, what)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_STREAM_CHUNK = 1 << 20


def _read_bounded(fd: int, size: int, limit: int | None, what: str) -> bytes:
    """What descriptor ``fd`` (a regular file of ``size`` bytes when opened) yields, refused past ``limit`` bytes
    (the loader's size error naming ``what``) after reading at most one byte more; None: no limit."""
    if limit is not None and size > limit:
        check_size(size, what)
    # os.read on the descriptor: a buffered file object would add a stat, an ioctl and a seek per file
    chunks: list[bytes] = []
    got = 0
    while True:
        want = max(size - got + 1, 65536)
        chunk = os.read(fd, want if limit is None else min(want, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if limit is not None and got > limit:  # a file growing after the check is still bounded
            check_size(got, what)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# --- paths ------------------------------------------------------------------------------


def check_relative(rel: str) -> None:
    """Refuse a package-relative path that is empty, absolute or climbs out with ``..``."""
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        raise UnsafePathError(f"refusing to write {rel!r}: the path leaves the package", file=rel)


def check_target(root: str | os.PathLike[str], rel: str, *, through_links: bool = False) -> str:
    """The file to write for ``rel`` under ``root``, after checking it stays inside.

    ``root`` must already be resolved; folders that do not exist yet are
    taken as written. A symbolic link is refused, or with ``through_links``
    (what ``kpt fn sink`` does) resolved to its target, which must itself be
    inside ``root``.  Plain ``os.path``: a command that writes does not pay
    for pathlib's imports.
    """
    check_relative(rel)
    root = os.fspath(root)
    target = os.path.join(root, rel)
    parent = real_beneath(root, os.path.dirname(rel))
    if not _inside(parent, root, or_equal=True):
        raise UnsafePathError(f"refusing to write {rel!r}: the path leaves the package", file=rel)
    if not os.path.islink(target):
        return target
    if not through_links:
        raise UnsafePathError(f"refusing to write {rel!r}: it is a symbolic link", file=rel)
    real = os.path.realpath(target)
    if not _inside(real, root):
        # kpt fn sink/eval write through such a link, changing a file outside the package.
        raise UnsafePathError(
            f"refusing to write {rel!r}: it is a symbolic link to {os.readlink(target)}, "
            "outside the package (kpt would write through it); edit the target's own package instead",
            file=rel,
        )
    return real


def real_beneath(root: str, folder: str) -> str:
    """``os.path.realpath`` of ``root``/``folder`` (one that does not exist: as written), for a resolved root.

    ``folder`` is package-relative and holds no ``..`` (:func:`check_relative` refused it).
    Only ``folder``'s own parts are looked at (one ``lstat`` each, up to the first that does not
    exist), not every part of the absolute path again as ``os.path.realpath`` does: a dry run checks
    each file it would write, and two realpaths a file were most of a large promote's check (issue 45).
    A link on the way is resolved by ``os.path.realpath`` itself.
    """
    path = root
    for part in folder.split("/"):
        if part in ("", "."):
            continue
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return os.path.join(root, folder)  # as written: nothing below a missing folder exists
        if stat.S_ISLNK(mode):
            return os.path.realpath(os.path.join(root, folder))
    return path


def _inside(path: str, root: str, *, or_equal: bool = False) -> bool:
    """Whether ``path`` lies below ``root`` (both normalised; ``or_equal``: or is it)."""
    path, root = os.path.normpath(path), os.path.normpath(root)
    return (or_equal and path == root) or path.startswith(root.rstrip(os.sep) + os.sep)


# --- names git and krm-merge keep their own state under ---------------------------------

GIT_FOLDER = ".git"
"""A git repository's own folder: never part of a package (its ``config`` and hooks run commands)."""
LEDGER_NAME = ".krm-merge.conflicts"
"""krm-merge's record of the conflicts an update left marked (:mod:`krm_merge.update.ledger`)."""
LOCK_NAME = ".krm-merge.lock"
"""The package lock (:mod:`krm_merge.txn`)."""
TXN_NAME = ".krm-merge.txn"
"""The transaction's journal and staged files (:mod:`krm_merge.txn`)."""
OWN_STATE_NAMES = frozenset({LEDGER_NAME, LOCK_NAME, TXN_NAME})
"""krm-merge's own state in a package: content from elsewhere never brings a file of these names."""
OWN_STATE_SHORT = ".krm-merge.*"
"""What :func:`protected_name` answers for an 8.3 short name without extension (``KRM-ME~1``): the
three names above share its stem."""
PROTECTED_NAMES = (GIT_FOLDER, LEDGER_NAME, LOCK_NAME, TXN_NAME)

# The code points HFS+ ignores in a name (git's utf8.c, next_hfs_char): ``.g\u200cit`` is ``.git`` there.
_HFS_IGNORED = str.maketrans(dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                            *range(0x206A, 0x2070), 0xFEFF]))
_AFTER_DOT = frozenset("gGkK")  # what follows the dot of .git and of krm-merge's names, before folding


def _short_name_hash(name: str) -> str:
    """The 4 hex digits NTFS puts in a fall-back 8.3 short name (``GI7EBA~1`` for ``.gitmodules``) once
    ``~1``..``~4`` are taken: the reverse-engineered checksum git's path.c quotes (commit e7cb0b4455)."""
    checksum = 0
    for char in name:
        checksum = (checksum * 0x25 + ord(char)) & 0xFFFF
    checksum = (checksum * 314159269) & 0xFFFFFFFF
    if checksum & 0x80000000:
        checksum = 1 + (~checksum & 0x7FFFFFFF)
    checksum -= ((checksum * 1152921497) >> 60) * 1000000007
    return f"{checksum & 0xFFFF:04x}"[::-1]


def _short_name_parts(name: str) -> tuple[str, str]:
    """The stem (six characters at most) and extension (three) NTFS builds a long name's 8.3 short name from:
    leading dots dropped, the extension after the last dot (``.krm-merge.conflicts``: ``krm-me``, ``con``)."""
    base, dot, ext = name.lstrip(".").rpartition(".")
    if not dot:
        base, ext = ext, ""
    return base.replace(".", "")[:6], ext[:3]


def _spellings() -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Every folded spelling of a protected name that a table can hold (the name, its ``~1``..``~4`` short
    names with and without extension), and each name's fall-back short-name prefix with its extension."""
    exact: dict[str, str] = {}
    fallback: list[tuple[str, str, str]] = []
    for protected in PROTECTED_NAMES:
        exact[protected] = protected
        stem, ext = _short_name_parts(protected)
        bare = protected if not ext else OWN_STATE_SHORT
        for number in "1234":
            exact[f"{stem}~{number}"] = bare
            if ext:
                exact[f"{stem}~{number}.{ext}"] = protected
        fallback.append((stem[:2] + _short_name_hash(protected), ext, protected))
    return exact, fallback


_EXACT, _FALLBACK = _spellings()
_DIGITS = frozenset("0123456789")


def _fold_name(name: str) -> str:
    """What the file systems that fold names keep of ``name``, all at once: the code points HFS+ ignores
    dropped, case folded and Unicode-decomposed (macOS, Windows), an NTFS stream (``:...``) and the trailing
    dots and spaces Windows drops cut off."""
    if name.isascii():
        folded = name.lower()
    else:
        import unicodedata  # here, not at import: every path loads files, few names are not ASCII

        plain = name.translate(_HFS_IGNORED)
        folded = unicodedata.normalize("NFD", unicodedata.normalize("NFD", plain).casefold())
    return folded.partition(":")[0].rstrip(". ")


def _fallback_short_name(folded: str) -> str | None:
    """The protected name whose fall-back 8.3 short name ``folded`` is (git's is_ntfs_dot_generic: eight
    characters, a prefix of the name's own, ``~``, a digit 1-9, digits), with its extension or none."""
    stem, _, ext = folded.partition(".")
    tilde = stem.find("~")
    if len(stem) != 8 or not 0 <= tilde <= 6 or stem[tilde + 1] == "0" or not _DIGITS.issuperset(stem[tilde + 1:]):
        return None
    for prefix, own_ext, protected in _FALLBACK:
        if prefix.startswith(stem[:tilde]):
            if ext == own_ext:
                return protected
            if not ext:
                return OWN_STATE_SHORT
    return None


def protected_name(name: str) -> str | None:
    """The name git or krm-merge keeps its own state under that ``name`` is on some file system; None for
    every other name.

    :data:`GIT_FOLDER` or one of :data:`OWN_STATE_NAMES` as spelled, or as
    macOS or Windows would take ``name`` for it: git's ``protectHFS`` and
    ``protectNTFS`` rules (path.c's ``is_hfs_dotgit``, ``is_ntfs_dotgit``,
    ``is_ntfs_dot_generic``) applied to all four names, on every platform,
    since a package is checked out anywhere: case (``.GIT``,
    ``.Krm-Merge.Lock``), trailing dots and spaces (``.git.``, ``.git . .``),
    an NTFS stream (``.git::$INDEX_ALLOCATION``), an 8.3 short name
    (``GIT~1``, ``KRM-ME~1.TXN``, the fall-back ``GI2837~1``) and the code
    points HFS+ ignores (``.g\\u200cit``).  A short name without extension
    of krm-merge's names answers :data:`OWN_STATE_SHORT`.  Most names are
    answered at once (:func:`may_be_protected`).
    """
    return _protected_name(name) if may_be_protected(name) else None


def may_be_protected(name: str) -> bool:
    """:func:`protected_name`'s fast path, for a test that runs on every name of every listing: False for a
    name that cannot be one of its spellings.  Past its first character, which folds only if it is not ASCII,
    a spelling is a dot and ``g`` or ``k`` (the long names) or holds a ``~`` (the short names): ``~`` comes
    from no other code point, and a non-ASCII second character may be one HFS+ ignores."""
    lead = name[:1]
    if lead == ".":
        second = name[1:2]
        return second in _AFTER_DOT or second > "\x7f"
    return lead > "\x7f" or "~" in name


def _protected_name(name: str) -> str | None:
    """:func:`protected_name` without its fast path (what the fast path must agree with)."""
    folded = _fold_name(name)
    found = _EXACT.get(folded)
    if found is None and "~" in folded:
        found = _fallback_short_name(folded)
    return found


def how_protected(name: str) -> str:
    """How ``name``, another spelling of a :func:`protected_name`, becomes it: the folds that make it so,
    for a message (``"an 8.3 short name on Windows"``)."""
    ways = []
    plain = name.translate(_HFS_IGNORED)
    if plain != name:
        ways.append("invisible code points ignored by HFS+ on macOS")
    head, colon, _ = plain.partition(":")
    if colon:
        ways.append("an NTFS stream of it on Windows")
    stripped = head.rstrip(". ")
    if stripped != head:
        ways.append("trailing dots and spaces dropped on Windows")
    if "~" in stripped and not stripped.startswith("."):
        ways.append("an 8.3 short name on Windows")
    elif stripped not in PROTECTED_NAMES:
        ways.append("case and Unicode form folded on macOS and Windows")
    return "; ".join(ways)


# --- trees written by someone else ------------------------------------------------------

# An upstream author decides how many files and bytes an update reads, and how deep its
# folders nest; these bound it (each file is also bounded by the input size limit,
# yaml.load.max_input_bytes).  A tree is one origin or upstream version; an update takes
# several when it recurses into remote subpackages, and all of them together are held to
# the same file and byte bounds (the update's budget, :func:`update_budget`).
MAX_TREE_FILES = 100_000
MAX_TREE_BYTES = 2 * 1024 * 1024 * 1024
MAX_TREE_DEPTH = 64
"""Folders of a tree from elsewhere nested deeper than this are refused (the standard library's
tree removal and copy recurse once per level; paths grow past PATH_MAX)."""


def check_untrusted_name(name: str, rel: str, what: str) -> None:
    """Refuse a name from elsewhere holding a control character, a slash, a backslash, or ``.``/``..``."""
    # an ASCII name is printable exactly when it holds no control character (0-31, 127): checked in C
    controls = not name.isprintable() if name.isascii() else any(ord(c) < 32 or ord(c) == 127 for c in name)
    if controls or name in ("", ".", "..") or "/" in name or "\\" in name:
        raise UntrustedTreeError(f"{what}: {rel!r}: a file name with a control character, a slash or '..'; refused")


def check_untrusted_depth(rel_dir: str, what: str) -> None:
    """Refuse a folder from elsewhere nested deeper than :data:`MAX_TREE_DEPTH` (before it is entered)."""
    depth = rel_dir.count("/") + 1
    if depth > MAX_TREE_DEPTH:
        shown = "/".join(rel_dir.split("/", 3)[:3])
        raise UntrustedTreeError(f"{what}: {shown}/...: folders nested more than {MAX_TREE_DEPTH} deep; refused")


class Budget:
    """How many files and bytes content from elsewhere may bring: one tree's, or one whole update's.

    :meth:`charge` counts one regular file as the listing meets it, so a tree
    past the budget is refused before any of its files is read.  A tree read
    out of git is charged in two steps: each file's count from the trees,
    before any blob is fetched, then its bytes from the objects' headers
    (``count=0``), before any is written (:mod:`krm_merge.upstream.gitread`);
    the update's budget is charged each whole tree's count and bytes once
    the tree is within its own.
    """

    __slots__ = ("files", "size", "max_files", "max_bytes", "scope")

    def __init__(self, max_files: int, max_bytes: int, scope: str = "") -> None:
        self.files = 0
        self.size = 0
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.scope = scope  # how a refusal names what the budget covers ("": one tree)

    def charge(self, size: int, what: str, count: int = 1) -> None:
        """``count`` more files (one by default) of ``size`` bytes; ``UntrustedTreeError`` past the budget."""
        self.files += count
        self.size += size
        if self.files > self.max_files:
            raise UntrustedTreeError(f"{what}: more than {self.max_files} files{self.scope}; refused")
        if self.size > self.max_bytes:
            raise UntrustedTreeError(f"{what}: more than {self.max_bytes} bytes in all{self.scope}; refused")


def tree_budget() -> Budget:
    """The budget of one tree from elsewhere: :data:`MAX_TREE_FILES` files, :data:`MAX_TREE_BYTES` bytes."""
    # Read from the module at each call: tests lower the bounds with monkeypatch.
    return Budget(MAX_TREE_FILES, MAX_TREE_BYTES)


def update_budget() -> Budget:
    """The budget of one whole update: every origin and upstream version it takes, subpackages included,
    together within one tree's bounds (a fan-out of remote subpackages cannot multiply them)."""
    return Budget(MAX_TREE_FILES, MAX_TREE_BYTES, " in one update (every version of every subpackage counted)")


MAX_WRITE_ENV = "KRM_MERGE_MAX_WRITE_MB"
DEFAULT_MAX_WRITE_MB = 256
"""The bytes one update may plan to write (subpackages included), in megabytes: the largest package the
project measures is ~10 MB (bench/'s 16,000 Deployments; real catalog packages a few MB), so 256 is far above
any real update, and far below what a fan-out of remote subpackages can multiply one upstream's bytes into
(each copy planned in memory before the one write)."""


def max_write_bytes() -> int:
    """The bytes one update may write, from ``KRM_MERGE_MAX_WRITE_MB`` (default :data:`DEFAULT_MAX_WRITE_MB`).

    A value that is not a number is a :class:`krm_merge.numbers.NumberError` naming the variable.
    """
    return numbers.megabytes(MAX_WRITE_ENV, DEFAULT_MAX_WRITE_MB)


# Descriptor flags of the in-place reader.  O_NOFOLLOW on every name, folders included, is
# what keeps a read below the root: a folder or file swapped for a link after the listing
# fails to open (ELOOP/ENOTDIR) instead of being followed.  O_NONBLOCK: a FIFO swapped in
# for a file must not block the open (a regular file ignores the flag).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)


def open_dir_beneath(root: str | os.PathLike[str], rel_dir: str) -> int:
    """A descriptor of folder ``rel_dir`` ("" for ``root``), opened one name at a time, following no link.

    ``root`` itself is opened as given (the user named it; it may be reached
    through a link).  Raises ``UntrustedTreeError`` when a folder on the way
    is a link or no folder (swapped after it was listed), ``OSError`` otherwise.
    """
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in rel_dir.split("/") if rel_dir else ():
            try:
                inner = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UntrustedTreeError(f"{os.fspath(root)}: {rel_dir}: a folder on the way is no longer a "
                                             "folder (a symbolic link?); not read", file=rel_dir) from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_beneath(root: str | os.PathLike[str], rel: str, what: str | None = None) -> bytes:
    """The bytes of the regular file ``rel`` below ``root``, read in place without following any link.

    Every folder on the way and the file itself are opened with
    ``O_NOFOLLOW`` relative to their parent's descriptor, and the file is
    checked to be a regular file after it is opened (``fstat``): a file or
    folder swapped for a link, a FIFO or a device after it was listed is
    refused with ``UntrustedTreeError``, never read through.  With ``what``
    (content from elsewhere, named so in messages) the file is refused above
    the input size limit, by its size when opened and by what it yields.
    """
    folder, _, name = rel.rpartition("/")
    dir_fd = open_dir_beneath(root, folder)
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        raise UntrustedTreeError(f"{what or os.fspath(root)}: {rel}: became a symbolic link after it was listed; "
                                 "not read", file=rel) from None
    finally:
        os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedTreeError(f"{what or os.fspath(root)}: {rel}: no longer a regular file; not read",
                                     file=rel)
        return _read_bounded(fd, info.st_size, max_input_bytes() if what is not None else None, f"{what}: {rel}")
    finally:
        os.close(fd)


def unlink_beneath(root: str | os.PathLike[str], rel: str) -> None:
    """Delete the entry ``rel`` (a link or special file, never followed) of a tree krm-merge unpacked itself.

    Its folder is reached as :func:`read_beneath` reaches it, so the deletion stays below ``root``.
    """
    folder, _, name = rel.rpartition("/")
    dir_fd = open_dir_beneath(root, folder)
    try:
        os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


# --- removing a scratch tree -------------------------------------------------------------


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Delete ``path`` and everything below it, however deep; best effort, never raises.

    For krm-merge's own scratch folders (an unpacked upstream may nest
    thousands of folders): iterative, one folder descriptor open at a time
    (``shutil.rmtree`` recurses once per level and holds a descriptor per
    level, a ``RecursionError`` at ~1,000), no link followed, and a folder
    is left when its parent changed underneath (checked by device and inode).
    """
    path = os.fspath(path)
    try:
        fd = os.open(path, _DIR_FLAGS | _NOFOLLOW)
    except OSError:
        _unlink_quietly(path)  # a file or a link (never followed), or nothing
        return
    names: list[str] = []  # the folders entered below ``path``, outermost first
    parents: list[tuple[int, int]] = []  # (device, inode) of the folder above each of them
    pending = [_empty_folder(fd)]  # for each level: its folders still to remove
    try:
        while pending:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue
                info = os.fstat(fd)
                os.close(fd)
                fd = child
                names.append(name)
                parents.append((info.st_dev, info.st_ino))
                pending.append(_empty_folder(fd))
                continue
            pending.pop()
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) != parents.pop():
                return  # moved underneath: stop rather than delete elsewhere
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                pass
    except OSError:
        return
    finally:
        os.close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _empty_folder(fd: int) -> list[str]:
    """Delete every entry of the open folder ``fd`` that is not a folder; return the names of its folders."""
    try:
        os.fchmod(fd, 0o700)  # a read-only folder from an archive could not be emptied
    except OSError:
        pass
    folders: list[str] = []
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except OSError:
        return folders
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
        except OSError:
            pass
    return folders


class removed_after:
    """``with removed_after(folder) as folder:``: :func:`remove_tree` of the folder when the block ends, however it ends.

    For a scratch folder (``tempfile.mkdtemp``): unlike ``tempfile.TemporaryDirectory``, whose cleanup
    recurses, a deep tree in it is removed and no folder is left in the temporary directory.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __enter__(self) -> str:
        return self.folder

    def __exit__(self, *exc: object) -> None:
        remove_tree(self.folder)


# --- krm-merge's own folders and locks ----------------------------------------------------


def cache_folder(name: str, environ: Mapping[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/krm-merge/NAME`` (``~/.cache`` when unset): where krm-merge keeps what it may rebuild
    (the git cache ``git``, the forges' pacing state ``forge``).  ``environ``: the process's environment."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "krm-merge", name)


class locked:
    """An exclusive ``flock`` on ``path`` for a ``with`` block (released by the kernel if the process dies);
    the lock file is removed when the block ends.

    Removing a lock file is safe only with this protocol: the holder unlinks
    it before releasing the lock, and whoever acquires a lock checks that the
    file it locked is still the one at ``path`` (else it was removed
    meanwhile: it opens the new one and waits again).  So two processes never
    both hold "the" lock on two different files, and a lock another process
    holds is never removed (only its holder removes it).  The file is opened
    without following a link.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def __enter__(self) -> None:
        import fcntl  # here, not at import: every path loads files, few take a lock

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if _same_file(fd, self.path):
                    self._fd = fd
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # removed by its holder while this process waited: lock the file there now

    def __exit__(self, *exc: object) -> None:
        try:
            os.unlink(self.path)  # still holding the lock: nobody else can be using this file
        except OSError:
            pass
        os.close(self._fd)


def _same_file(fd: int, path: str) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


# --- writing ----------------------------------------------------------------------------


def write_files_atomic(writes: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several files all-or-nothing (see the module docstring).

    Each file replaced is read first, strictly (:func:`read_bytes`): a FIFO,
    a device or a folder where a file goes (``--results`` naming one) is
    refused before anything is staged, never opened for a blocking read or
    read to its end.  Raises ``OSError``, :class:`NotAFileError` or the loader's size error.
    """
    befores = [_replaced(os.fspath(path)) for path, _ in writes]
    staged: list[tuple[str, str]] = []
    try:
        for path, data in writes:
            staged.append((_stage(os.fspath(path), data), os.fspath(path)))
    except BaseException:
        for tmp, _ in staged:
            _unlink_quietly(tmp)
        raise
    originals: list[tuple[str, bytes | None]] = []
    try:
        for (tmp, target), before in zip(staged, befores):
            os.replace(tmp, target)
            originals.append((target, before))
    except BaseException:
        for tmp, _ in staged[len(originals):]:
            _unlink_quietly(tmp)
        for target, before in reversed(originals):  # put the previous bytes back
            if before is None:
                _unlink_quietly(target)
            else:
                os.replace(_stage(target, before), target)
        raise


def _replaced(path: str) -> bytes | None:
    """The bytes a write replaces (None: no file there yet), to put back if a later rename fails."""
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return None


def write_file_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write one file through a temporary file in the same folder and a rename (mode kept)."""
    write_files_atomic([(path, data)])


def _stage(path: str, data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    folder, name = os.path.split(path)
    fd, tmp = _tempfile().mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, mode)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _tempfile() -> ModuleType:
    """:mod:`tempfile`, imported when first needed."""
    # Only when staging a file here: tempfile (random, shutil) stays off the start-up of a read-only run
    # and of an update (its versions are read into memory, its writes staged by the transaction).
    import tempfile

    return tempfile


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# --- diffs ------------------------------------------------------------------------------


def unified_diff(changes: Iterable[tuple[str, str | None, str | None]]) -> str:
    """``(path, before, after)`` changes as one unified diff, git's way.

    None on either side is a file that does not exist there (``/dev/null``);
    a last line without a newline is marked ``\\ No newline at end of file``.
    Three lines of context, hunks as :func:`difflib.unified_diff` makes them.
    """
    return "".join(iter_unified_diff(changes))


def iter_unified_diff(changes: Iterable[tuple[str, str | None, str | None]]) -> Iterator[str]:
    """:func:`unified_diff` one file at a time, for writing as it is made (a dry run's output).

    A large file is diffed on the lines between its common leading and trailing
    lines (plus the context), as git does, so a dry run holds the lines of the
    changed region rather than two line lists of the whole file.
    """
    for path, before, after in changes:
        fromfile = f"a/{path}" if before is not None else "/dev/null"
        tofile = f"b/{path}" if after is not None else "/dev/null"
        yield "".join(_file_diff(before or "", after or "", fromfile, tofile))


def _file_diff(before: str, after: str, fromfile: str, tofile: str) -> list[str]:
    first_line, before, after = _changed_window(before, after)
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines = _same_length_diff(old, new, fromfile, tofile)
    if lines is None:
        import difflib  # only for diffs the fast path cannot make

        if len(old) * len(new) <= MAX_DIFF_WORK:
            lines = list(difflib.unified_diff(old, new, fromfile=fromfile, tofile=tofile))
        else:  # difflib's matching could take minutes: matched on the lines unique to both instead
            matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
            # difflib's own cache (not in its stubs): it is not matched again
            matcher.matching_blocks = _anchored_blocks(old, new)  # type: ignore[attr-defined]
            lines = _grouped_diff(matcher.get_grouped_opcodes(_CONTEXT), old, new, fromfile, tofile)
    if first_line:
        lines = [_shift_hunk(line, first_line) if line.startswith("@@ ") else line for line in lines]
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


# Below this size both texts are diffed whole (and the diff is exactly difflib's).
_WINDOW_ABOVE = 1 << 20
MAX_DIFF_WORK = 100_000_000
"""Lines of one side times lines of the other, in a changed region, above which a dry run does not let difflib
match them: its matching grows with that product and more (a 20,000-line file whose every other line an upstream
author changed took it two minutes).  Such a region is matched on the lines that occur once in each side, in
order (patience diff), and each stretch between those is shown replaced: O(n log n), and difflib's own diff
wherever the two agree (a few changes in a large file)."""
_CHUNK_CHARS = 1 << 16


# Line breaks other than \n that str.splitlines honours: with one of them the window's
# line numbers (counted by \n) could be off, so such a text is diffed whole.
# Compiled on first use (functools.cache), as _hunk below: only a diff of a large file needs
# them, and compiling them at import was start-up time of every command (issue 24).
@functools.cache
def _other_breaks() -> re.Pattern[str]:
    return re.compile("\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _changed_window(before: str, after: str) -> tuple[int, str, str]:
    """(lines skipped, before, after): the texts cut to their differing lines plus the context.

    Large texts only; the cut is at line starts, keeping ``_CONTEXT`` common lines on
    each side, and hunk line numbers are shifted back by the lines skipped.  This is
    difflib's diff of the whole texts whenever difflib keeps the common ends matched
    (every case in ``tests/krm/test_diff_window.py``); where repeated lines would let
    it pair differently, the window's diff is still a correct one, as git's is.
    """
    if max(len(before), len(after)) <= _WINDOW_ABOVE or before == after:
        return 0, before, after
    if _other_breaks().search(before) or _other_breaks().search(after):
        return 0, before, after
    common = _common_prefix_length(before, after)
    start = before.rfind("\n", 0, common) + 1
    tail = _common_suffix_length(before, after, min(len(before), len(after)) - start)
    newline = before.find("\n", len(before) - tail) if tail else -1
    tail = len(before) - (newline + 1) if newline >= 0 else 0
    for _ in range(_CONTEXT):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    keep = 0
    for _ in range(_CONTEXT):
        if keep >= tail:
            break
        newline = before.find("\n", len(before) - tail + keep)
        keep = (newline + 1 - (len(before) - tail)) if newline >= 0 else tail
    cut = tail - keep
    return before.count("\n", 0, start), before[start:len(before) - cut], after[start:len(after) - cut]


def _common_prefix_length(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (compared a chunk at a time, in C)."""
    n = min(len(a), len(b))
    at = 0
    while at < n and a[at:at + _CHUNK_CHARS] == b[at:at + _CHUNK_CHARS]:
        at += _CHUNK_CHARS
    end = min(n, at + _CHUNK_CHARS)
    while at < end and a[at] == b[at]:
        at += 1
    return min(at, n)


def _common_suffix_length(a: str, b: str, limit: int) -> int:
    """How many trailing characters ``a`` and ``b`` share, at most ``limit``."""
    la, lb = len(a), len(b)
    done = 0
    while done + _CHUNK_CHARS <= limit and a[la - done - _CHUNK_CHARS:la - done] == b[lb - done - _CHUNK_CHARS:lb - done]:
        done += _CHUNK_CHARS
    while done < limit and a[la - done - 1] == b[lb - done - 1]:
        done += 1
    return done


@functools.cache
def _hunk() -> re.Pattern[str]:
    return re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _shift_hunk(header: str, by: int) -> str:
    """A hunk header of the window as one of the whole file (its starts moved down ``by`` lines)."""
    m = _hunk().match(header)
    assert m is not None
    old_start, old_len, new_start, new_len = m.groups()
    return (f"@@ -{int(old_start) + by}{old_len or ''} +{int(new_start) + by}{new_len or ''} @@"
            + header[m.end():])


_CONTEXT = 3  # difflib.unified_diff's default, and git's


def _same_length_diff(old: list[str], new: list[str], fromfile: str, tofile: str) -> list[str] | None:
    """The diff lines difflib would give, made by pairing lines by index; None when that may differ.

    The common edit (promote, a set field) replaces lines in place, where
    difflib's SequenceMatcher costs far more than the comparison.  Pairing by
    index is what SequenceMatcher finds when no replaced line (old or new)
    appears anywhere in the other text, so every match lies in one unchanged
    run of both, and its longest-match-first search ends on the diagonal; and,
    for texts of 200 lines or more, when every unchanged run holds a line its
    "popular line" heuristic (autojunk) does not ignore.  Otherwise: None.
    """
    if len(old) != len(new):
        return None
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    if not changed:
        return []
    # A few changed lines are looked up by scanning the lists (in C); many, through sets.
    old_lines, new_lines = (old, new) if len(changed) <= 8 else (set(old), set(new))
    if any(old[i] in new_lines or new[i] in old_lines for i in changed):
        return None
    runs = _runs(changed)
    if len(new) >= 200 and not _every_gap_has_unpopular_line(new, runs):
        return None
    lines = [f"--- {fromfile}\n", f"+++ {tofile}\n"]
    for hunk in _hunks(runs):
        start = max(0, hunk[0][0] - _CONTEXT)
        stop = min(len(old), hunk[-1][1] + _CONTEXT)
        span = f"{start + 1}" if stop - start == 1 else f"{start + 1},{stop - start}"
        lines.append(f"@@ -{span} +{span} @@\n")
        at = start
        for first, end in hunk:
            lines.extend(" " + line for line in old[at:first])
            lines.extend("-" + line for line in old[first:end])
            lines.extend("+" + line for line in new[first:end])
            at = end
        lines.extend(" " + line for line in old[at:stop])
    return lines


def _anchored_blocks(old: list[str], new: list[str]) -> list[tuple[int, int, int]]:
    """Matching blocks ``(i, j, size)`` as difflib gives them (ending with ``(len(old), len(new), 0)``), found on
    the lines occurring once in each side: the longest increasing run of their positions, each match grown over
    the equal lines around it."""
    counts: dict[str, int] = {}
    for line in old:
        counts[line] = counts.get(line, 0) + 1
    once_new: dict[str, int] = {}
    for j, line in enumerate(new):
        once_new[line] = -1 if line in once_new else j
    pairs = [(i, once_new[line]) for i, line in enumerate(old) if counts[line] == 1 and once_new.get(line, -1) >= 0]
    blocks: list[tuple[int, int, int]] = []
    at_old = at_new = 0
    for i, j in _increasing(pairs):
        if i < at_old:
            continue  # inside the block grown from the previous anchor
        start_i, start_j = i, j
        while start_i > at_old and start_j > at_new and old[start_i - 1] == new[start_j - 1]:
            start_i, start_j = start_i - 1, start_j - 1
        end_i, end_j = i + 1, j + 1
        while end_i < len(old) and end_j < len(new) and old[end_i] == new[end_j]:
            end_i, end_j = end_i + 1, end_j + 1
        blocks.append((start_i, start_j, end_i - start_i))
        at_old, at_new = end_i, end_j
    blocks.append((len(old), len(new), 0))
    return blocks


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (in order of their first element) whose second elements increase: O(k log k)."""
    tails: list[int] = []  # the smallest second element ending a run of each length
    ends: list[int] = []  # index in pairs of that element
    before = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[length], ends[length] = j, index
        before[index] = ends[length - 1] if length else -1
    run: list[tuple[int, int]] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


def _grouped_diff(groups: Iterable[list[tuple[str, int, int, int, int]]], old: list[str], new: list[str],
                  fromfile: str, tofile: str) -> list[str]:
    """The lines ``difflib.unified_diff`` writes for these grouped opcodes."""
    lines: list[str] = []
    for group in groups:
        if not lines:
            lines += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        lines.append(f"@@ -{_hunk_range(first[1], last[2])} +{_hunk_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
    return lines


def _hunk_range(start: int, stop: int) -> str:
    """A hunk's range of lines ``start:stop``, written as difflib writes it (an empty one names the line before)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _runs(changed: list[int]) -> list[tuple[int, int]]:
    """Consecutive changed line numbers as ``(first, end)`` runs (one replace each)."""
    runs = [(changed[0], changed[0] + 1)]
    for i in changed[1:]:
        if i == runs[-1][1]:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _hunks(runs: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Runs grouped into hunks: difflib splits only at more than twice the context unchanged."""
    hunks = [[runs[0]]]
    for run in runs[1:]:
        if run[0] - hunks[-1][-1][1] > 2 * _CONTEXT:
            hunks.append([run])
        else:
            hunks[-1].append(run)
    return hunks


def _every_gap_has_unpopular_line(new: list[str], runs: list[tuple[int, int]]) -> bool:
    """Whether every unchanged run holds a line SequenceMatcher's autojunk keeps (see above)."""
    counts: dict[str, int] = {}
    for line in new:
        counts[line] = counts.get(line, 0) + 1
    popular = len(new) // 100 + 1
    bounds = [0, *(i for run in runs for i in run), len(new)]
    for lo, hi in zip(bounds[::2], bounds[1::2]):
        if lo < hi and all(counts[line] > popular for line in new[lo:hi]):
            return False
    return True
