"""File I/O of the package commands: bounded reads, safe paths, atomic writes, diffs.

The one place that knows how krm-merge touches files:

* reads refuse a file above the input size limit before reading it;
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

from krm_merge.errors import KrmMergeError
from krm_merge.yaml.load import check_size, max_input_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Iterator, Sequence

# No pathlib here (it pulls in urllib.parse and ipaddress: milliseconds every command would
# pay at start-up, dry runs included): paths are strings.


class UnsafePathError(KrmMergeError):
    """A write that would leave the package or follow a symbolic link."""


class UntrustedTreeError(KrmMergeError):
    """A tree from elsewhere (upstream, origin) that is refused before any of it is read."""


# --- reading ----------------------------------------------------------------------------


def read_text(path: str | os.PathLike[str]) -> str:
    """A file as UTF-8 text, CRLF line ends kept; a file above the size limit is refused.

    Raises ``OSError``, ``UnicodeDecodeError`` or the loader's size error.
    """
    check_size(os.stat(path).st_size, os.fspath(path))
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes; a file above the size limit is refused."""
    check_size(os.stat(path).st_size, os.fspath(path))
    with open(path, "rb") as fh:
        return fh.read()


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
        limit = max_input_bytes() if what is not None else None
        if limit is not None and info.st_size > limit:
            check_size(info.st_size, f"{what}: {rel}")
        # os.read on the descriptor: a buffered file object would add a stat, an ioctl and a seek per file
        chunks: list[bytes] = []
        got = 0
        while True:
            chunk = os.read(fd, max(info.st_size - got + 1, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if limit is not None and got > limit:  # a file growing after the check is still bounded
                check_size(got, f"{what}: {rel}")
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
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


# --- writing ----------------------------------------------------------------------------


def write_files_atomic(writes: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several files all-or-nothing (see the module docstring).  Raises ``OSError``."""
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
        for tmp, target in staged:
            try:
                with open(target, "rb") as fh:
                    before: bytes | None = fh.read()
            except FileNotFoundError:
                before = None
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
            matcher.matching_blocks = _anchored_blocks(old, new)  # difflib's own cache: it is not matched again
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
