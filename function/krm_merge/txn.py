"""Package writes as transactions: one lock per package, a journal, checked swaps, recovery.

The one writer of a package (``run``, the SDK's ``run`` on a directory,
``update``, ``promote`` and ``resolve`` all end here):

* **Lock.** ``<pkg>/.krm-merge.lock`` is held with ``flock`` for the whole
  command that writes and names its holder (process id, command, start
  time, host).  A second command on the package fails at once naming the
  holder, as git does with ``index.lock``.  The kernel drops the lock when
  its holder dies, so a lock left by a killed process is taken over without
  guessing whether a process id is still alive (and two takers cannot both
  win).  The lock file is removed when the command ends.
* **Transaction.** The new bytes are staged in ``<pkg>/.krm-merge.txn/``
  (same file system, so the renames are atomic; a hidden folder of files
  without a YAML suffix, which no package reader lists), each file fsynced.
  Every target is then compared with the bytes the command read: an edit
  made underneath stops the transaction naming the file, and nothing is
  written.  The journal (each step, with the staged file's inode and a
  fingerprint, size and CRC-32, of the bytes read and of the bytes to
  write) is written to ``journal.tmp``, fsynced and renamed to ``journal``:
  that rename is the commit point.
* **Seals.** krm-merge's state in a package is never content: the
  transaction folder's first file, ``seal``, the journal and the lock
  file's holder record each carry a keyed BLAKE2b over themselves and their
  place (the package's real path, the inodes of the package folder and of
  the folder or file), made with a random key of this user kept outside
  every package (``$XDG_STATE_HOME/krm-merge/journal.key``, mode 0600;
  :func:`_key_folders`).  A folder or journal that arrived with the
  package's files (``kpt pkg get`` copies hidden files), or was copied from
  another checkout, carries no seal that holds here: it is named
  (:class:`ForeignStateError`) and never run, finished or removed.
* **Checked swaps.** A file is then swapped, never overwritten: it is
  opened and held with a read lease (Linux: while it is held, nobody can open
  the file for writing without the holder seeing it, and a file open for
  writing cannot be leased), compared with the bytes read, exchanged with
  its staged file in one ``renameat2(RENAME_EXCHANGE)``, and the file
  swapped out must be the one held, unchanged, its lease unbroken.  A new
  file is linked into place (never over a file created meanwhile); a deleted
  one is moved into the transaction folder and checked the same way.  The
  swapped-out files stay in the transaction folder until the end.  The
  touched folders are fsynced and the transaction folder removed.
* **Rollback.** An edit found during the swaps (a file changed, replaced,
  created, deleted or opened for writing by another program) rolls the
  transaction back: a rollback mark is written durably, every swap is undone
  (the old files go back, each edit with them), and :class:`ChangedUnderneathError`
  names the file.  A file edited after krm-merge had swapped it in keeps its
  new bytes and that edit (the message names it): an edit is never thrown
  away to make the package whole.
* **Recovery.** Whoever takes the lock first to write finishes an
  interrupted transaction of its own checkout: with a journal it is rolled
  forward by the same checked steps (each one idempotent: a step's state is
  read from the files' inodes), or rolled back when it holds a rollback mark
  or a check fails; without a journal the staged files are dropped (no
  target was touched).  Before any step, every path of the journal is
  checked by the writer's own rule (in the package, no symbolic link on the
  way, nothing under ``.git``) and every name in the folder is one the
  writer gives; a journal without a seal (version 1 and 2, an earlier
  krm-merge's, among them) is refused.  A command that only reads
  (``read_only``) never recovers: it says what it found.  SIGTERM,
  SIGINT and SIGHUP raise :class:`~krm_merge.interrupts.Interrupted` (exit
  status 128+signal): before the commit point the transaction is dropped,
  after it the signal waits until the transaction is finished (or rolled
  back).

What is left unseen (docs/reliability.md "Edits made during a write"): with
a lease, an open for writing that the kernel began before the swap and
checks against the lease only after it was released; where no lease can be
taken (not Linux, another user's file, a file system without leases), a
write through a descriptor opened before the swap and written after the
check; without ``RENAME_EXCHANGE``, a file replaced (an editor's atomic
save) between the two system calls that stand in for it.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import os
import signal
import stat
import sys
import threading
import time
import zlib

try:  # CPython's own BLAKE2 and hmac's comparison: hashlib and hmac would load OpenSSL's binding (~4 ms of a write)
    from _blake2 import blake2b
    from _operator import _compare_digest as compare_digest
except ImportError:  # an interpreter without them
    from hashlib import blake2b
    from hmac import compare_digest  # type: ignore[no-redef]  # the same function; typeshed types the two apart

from krm_merge import interrupts
from krm_merge.errors import KrmMergeError
from krm_merge.files import GIT_FOLDER, LOCK_NAME, TXN_NAME, check_relative, protected_name
from krm_merge.interrupts import Interrupted
from krm_merge.records import Record
from krm_merge.yaml.load import max_input_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

# Names krm-merge keeps in a package root while it works (LOCK_NAME, TXN_NAME: files.py's, with the rule for
# their other spellings, files.protected_name); no walker may read them.
RESERVED_NAMES = frozenset({LOCK_NAME, TXN_NAME})
_JOURNAL = "journal"
_ROLLBACK = "rollback"
_SEAL = "seal"  # the transaction folder's seal: the first file made in it, the last one removed
# Of the journal: version 1 (no "version") had neither inodes nor fingerprints, version 2 no seal; neither is run.
_VERSION = 3
_KEY_NAME = "journal.key"
_KEY_SIZE = 32
_MAC_SIZE = 64  # hex digits of a 32-byte keyed BLAKE2b


class PackageLockedError(KrmMergeError):
    """Another krm-merge command holds the package's lock."""


class ChangedUnderneathError(KrmMergeError):
    """A file changed on disk between the command's read and its write."""


class ForeignStateError(KrmMergeError):
    """A lock file or transaction folder in the package that krm-merge did not leave in this checkout."""


class InterruptedWriteError(KrmMergeError):
    """A command that only reads met a write interrupted past its commit point (``recover`` finishes it)."""


class _Edited(Exception):
    """Found during the swaps: another program changed ``rel``; the transaction rolls back."""

    def __init__(self, rel: str, what: str) -> None:
        super().__init__(rel, what)
        self.rel = rel
        self.what = what


class Change(Record):
    """One file of a transaction: ``data is None`` deletes it.

    ``before`` is what the command read (None: the file did not exist); the
    file must still hold exactly that when the transaction commits.
    """

    path: str  # package-relative, "/" separators; writing through a symlink is refused (deleting one is not)
    data: bytes | None
    before: bytes | None


# --- the lock --------------------------------------------------------------------------

_held: dict[str, "PackageLock"] = {}


class PackageLock:
    """The package's lock for the length of a ``with`` block; recovers first.

    ``messages`` says what recovery did (empty when nothing was interrupted).
    Re-entering a lock this process already holds on the same root is a no-op
    (``with`` gives the lock that holds it).  With ``read_only`` (``--dry-run``,
    ``conflicts``) no lock is taken and nothing is recovered or removed: an
    interrupted write is only said (:func:`pending`); one past its commit
    point raises :class:`InterruptedWriteError` (the files may be half
    written: ``recover`` finishes it), a command writing the package now
    :class:`PackageLockedError`.  A lock file or transaction folder that is
    not krm-merge's own (:class:`ForeignStateError`) is refused, never run;
    a command that only reads says it in ``messages`` and goes on.
    ``interrupts`` handles the termination signals while the lock is held:
    the command line's (``cli.entry`` installs one first), or one of the
    lock's own for a program that uses krm-merge as a library.
    """

    def __init__(self, root: str | os.PathLike[str], command: str, *, read_only: bool = False) -> None:
        self.root = os.path.realpath(root)
        self.command = command
        self.read_only = read_only
        self.messages: list[str] = []
        self.interrupts = interrupts.Handler()
        self._fd: int | None = None
        self._own_handler = False

    def __enter__(self) -> "PackageLock":
        if self.root in _held:
            return _held[self.root]
        if not os.path.isdir(self.root):
            return self  # the command reports the missing package in its own words
        if self.read_only:
            self._look(self.root)
            return self
        try:
            with interrupts.held_back():  # a signal in between would leave the lock file behind
                self._fd = _acquire(self.root, self.command, self.messages)
                _held[self.root] = self
                self._take_signals()
            self.messages.extend(recover(self.root))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        with interrupts.held_back():  # the lock file goes whatever arrives meanwhile
            if self._own_handler:
                self.interrupts.restore()
            del _held[self.root]
            fd, self._fd = self._fd, None
            try:
                # Unlinked before it is unlocked: a process that opened the old file re-checks the inode.
                os.unlink(os.path.join(self.root, LOCK_NAME))
            except OSError:
                pass
            os.close(fd)

    def _look(self, root: str) -> None:
        """A command that only reads: what a write left is said, never finished, rolled back or removed."""
        if not os.path.lexists(os.path.join(root, TXN_NAME)):
            return  # a lock file alone: nothing was half written
        holder = _live_holder(os.path.join(root, LOCK_NAME))
        if holder is not None:
            raise PackageLockedError(_locked(root, holder), file=os.path.join(root, LOCK_NAME))
        found = pending(root)
        if found is None:
            return
        if found.foreign:
            self.messages.append(found.what)
        elif found.half_written:
            raise InterruptedWriteError(
                f"{root}: {found.what}; this command only reads and does not finish it: run "
                f"`krm-merge recover {root}`, then run it again", file=os.path.join(root, TXN_NAME))
        else:
            self.messages.append(f"{root}: {found.what}; the package is whole (`krm-merge recover {root}` removes "
                                 "what is left)")

    def _take_signals(self) -> None:
        running = interrupts.installed()
        if running is not None:
            self.interrupts = running
        else:
            self._own_handler = self.interrupts.install()


def _acquire(root: str, command: str, messages: list[str]) -> int:
    key = _sealing_key()  # first: a user without a place for the key gets one error, and nothing is made
    path = os.path.join(root, LOCK_NAME)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EISDIR):
                raise ForeignStateError(_foreign(path, "it is not a file"), file=path) from None
            raise KrmMergeError(f"cannot lock package {root}: {err.strerror or err}", file=path) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device, which a lock file never is
            os.close(fd)
            raise ForeignStateError(_foreign(path, "it is not a file"), file=path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _wait_for_holder(fd)
            os.close(fd)
            raise PackageLockedError(_locked(root, holder), file=path) from None
        if _same_file(fd, path):
            try:
                stale = _lock_record(root, fd)
            except ForeignStateError:
                os.close(fd)  # not ours to remove: the user decides
                raise
            if stale:
                messages.append(f"took over the lock of {_describe(stale)}, which is no longer running")
            _write_holder(root, fd, command, key)
            return fd
        os.close(fd)  # its holder removed it between our open and our lock: try the new one
    raise PackageLockedError(f"cannot lock package {root}: the lock file keeps changing", file=path)


def _locked(root: str, holder: dict[str, Any]) -> str:
    return (f"package {root} is locked by another krm-merge command ({_describe(holder)}); "
            "nothing was read or written: run again when it has finished")


def _lock_record(root: str, fd: int) -> dict[str, Any]:
    """The holder record of a lock file left by a killed command ({}: empty, as a command killed while it
    opened it leaves it); :class:`ForeignStateError` when it is not sealed for this checkout."""
    raw = os.pread(fd, _MAX_HOLDER, 0)
    if not raw:
        return {}
    record = _unseal(raw, b"lock", _lock_binding(root, fd), _keys())
    if record is None:
        path = os.path.join(root, LOCK_NAME)
        raise ForeignStateError(_foreign(path, _UNSEALED), file=path)
    return record


def _lock_binding(root: str, fd: int) -> bytes:
    return _bind(root, os.fstat(fd).st_ino)


def _same_file(fd: int, path: str) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return False


def _wait_for_holder(fd: int) -> dict[str, Any]:
    """The holder's record; it writes it just after locking, so an empty file is read again briefly."""
    for _ in range(50):
        holder = _read_holder(fd)
        if holder:
            return holder
        time.sleep(0.002)
    return {}


_MAX_HOLDER = 4096


def _read_holder(fd: int) -> dict[str, Any]:
    """The record a live holder wrote, for its description only (nothing else is done with it)."""
    try:
        data = json.loads(os.pread(fd, _MAX_HOLDER, 0).partition(b"\n")[2] or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_holder(root: str, fd: int, command: str, key: bytes) -> None:
    holder = {"pid": os.getpid(), "command": command, "started": _now(), "host": os.uname().nodename}
    raw = _sealed(key, b"lock", _lock_binding(root, fd), json.dumps(holder).encode("utf-8"))
    os.ftruncate(fd, 0)
    os.pwrite(fd, raw, 0)


def _describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown: it is starting"
    return (f"process {holder.get('pid')} on {holder.get('host')}, "
            f"{holder.get('command')}, started {holder.get('started')}")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# --- the transaction -------------------------------------------------------------------


def commit(root: str | os.PathLike[str], changes: Sequence[Change], *, remove_dirs: Sequence[str] = (),
           command: str = "krm-merge") -> None:
    """Apply ``changes`` (then remove the folders ``remove_dirs`` if empty) all-or-nothing.

    Takes the package lock unless this process holds it already.  Raises
    :class:`ChangedUnderneathError` when a file no longer holds its
    ``before`` bytes (before the commit point) or another program changed
    one during the swaps (rolled back), ``OSError`` when staging fails:
    nothing is written in every case.
    """
    root = os.path.realpath(root)
    if not changes and not remove_dirs:
        return
    with PackageLock(root, command) as lock:
        _commit_locked(root, list(changes), list(remove_dirs), command, lock.interrupts)


def preload() -> None:
    """Load ahead what :func:`commit` calls of the C library (``syncfs``, ``renameat2``: ctypes, ~3 ms), for a
    caller that waits on something else first (an update, on git) and then writes."""
    _linux_calls()


def check_changes(root: str, changes: Sequence[Change], remove_dirs: Sequence[str] = ()) -> None:
    """Refuse a change the writer must never make: a path leaving the package, a link written through,
    a reserved name, a folder where a file goes (or a file where a folder must be made).

    ``root`` is resolved.  The writer checks this itself; ``krm/pkgio`` calls it
    for a dry run too, so that a plan refuses what the write would.
    """
    seen: dict[str, str] = {}
    for change in changes:
        _check_path(root, change.path, seen, deleting=change.data is None)
    for rel in remove_dirs:
        check_relative(rel)
        problem = _path_problem(root, rel, seen, folder=True)
        if problem is not None:
            raise KrmMergeError(f"refusing to remove {rel!r}: {problem}", file=rel)


def _commit_locked(root: str, changes: list[Change], remove_dirs: list[str], command: str,
                   handler: interrupts.Handler) -> None:
    check_changes(root, changes, remove_dirs)
    handler.raise_swallowed()  # a signal a finalizer swallowed stops the run here, before anything is written
    key = _sealing_key()
    txn = os.path.join(root, TXN_NAME)
    try:
        binding = _begin(root, txn, key)  # inside: a signal right after the mkdir must not leave the folder
        ops = _stage_all(root, txn, changes, remove_dirs)
        _check_unchanged(root, changes)
    except BaseException:
        _discard(txn)  # before the commit point: no target was touched
        raise
    # One held-back stretch from the journal's write to the end: a signal taken between the commit
    # point and the finish would say "nothing written" while the journal rolls the write forward.
    with interrupts.held_back():
        try:
            _write_journal(txn, ops, command, key, binding)
        except BaseException:
            _discard(txn)  # the journal was not written: no target was touched
            raise
        try:
            _finish(root, txn, ops)
        except OSError as err:
            # Past the commit point the journal stays: the next command (or `recover`) finishes it.
            raise KrmMergeError(
                f"writing {root} stopped half-way: {err.strerror or err} ({err.filename}); the journal is kept "
                f"and the next krm-merge command on the package (or `krm-merge recover {root}`) finishes the write",
                file=err.filename or root,
            ) from None
        handler.written = True  # before the signals held back meanwhile are let through


def _begin(root: str, txn: str, key: bytes) -> bytes:
    """Make the transaction folder, its seal first (recovery runs nothing in a folder without one), then the
    git marker; returns its binding (:func:`_bind`), which the journal is sealed with too."""
    os.mkdir(txn)
    binding = _bind(root, os.lstat(txn).st_ino)
    _write_file(os.path.join(txn, _SEAL), _mac(key, b"folder", binding), 0o600)
    _refuse_git_add(txn)
    return binding


# The transaction folder holds an empty git repository's skeleton while it exists: git takes
# the folder for an embedded repository with no commit, and `git add -A` (or `git add .`, or
# any path above it) then fails as a whole, "does not have a commit checked out", adding
# nothing.  So a package that a killed command left half-written cannot be staged that way
# until it is recovered (tests/reliability/test_git_check.py; `git commit -a` is caught by
# `krm-merge check` as a hook, docs/reliability.md).
_GIT_MARKER = ".git"
_GIT_HEAD = b"ref: refs/heads/krm-merge-interrupted-write\n"


def _refuse_git_add(txn: str) -> None:
    marker = os.path.join(txn, _GIT_MARKER)
    os.mkdir(marker)
    for folder in ("objects", "refs"):
        os.mkdir(os.path.join(marker, folder))
    _write_file(os.path.join(marker, "HEAD"), _GIT_HEAD, 0o644)


def _check_path(root: str, rel: str, seen: dict[str, str], *, deleting: bool = False) -> None:
    check_relative(rel)
    problem = _path_problem(root, rel, seen, files_on_the_way=True)
    if problem is not None:
        raise KrmMergeError(f"refusing to write {rel!r}: {problem}", file=rel)
    if deleting:
        return
    target = os.path.join(root, rel)
    if os.path.islink(target):
        raise KrmMergeError(f"refusing to write {rel!r}: it is a symbolic link", file=rel)
    if os.path.isdir(target):
        raise KrmMergeError(f"refusing to write {rel!r}: it is a folder", file=rel)


def _path_problem(root: str, rel: Any, seen: dict[str, str], *, folder: bool = False,
                  files_on_the_way: bool = False) -> str | None:
    """Why ``rel`` may not be a path the writer changes, None when it may: the one rule of the writer's checks
    and of a journal's (:func:`_check_ops`), so that recovery never refuses what the writer wrote.

    Package-relative (no ``..``, not absolute), not krm-merge's own names, nothing under ``.git`` (both in
    every spelling a file system may take for them, :func:`krm_merge.files.protected_name`), and no
    symbolic link on the way: every folder above it (with ``folder``, it too) that exists is a folder,
    never followed through a link.  With ``files_on_the_way`` a file standing where a folder must be is
    refused too (a journal meets that only when a folder was replaced after its write: its steps then fail
    on it).  ``seen`` keeps what was found of each folder, across the paths of one check.
    """
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel:
        return "the path leaves the package"
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return "the path leaves the package"
    if protected_name(parts[0]) in RESERVED_NAMES:  # .KRM-MERGE.TXN is the journal on macOS
        return "krm-merge keeps its lock and journal there"
    if any(protected_name(part) == GIT_FOLDER for part in parts):  # .GIT, .git., GIT~1: .git somewhere
        return "it is under .git, which krm-merge never writes"
    walked = ""
    for part in parts if folder else parts[:-1]:
        walked = f"{walked}/{part}" if walked else part
        if walked not in seen:
            seen[walked] = _what_is(os.path.join(root, walked))
        found = seen[walked]
        if found == _MISSING:
            return None  # made by the write, and every folder below it
        if found == _LINK:
            return f"{walked} is a symbolic link, which krm-merge never writes through"
        if found == _FILE and files_on_the_way:
            return f"{walked} is a file, not a folder"
    return None


_FOLDER, _LINK, _FILE, _MISSING = "folder", "link", "file", "missing"  # what :func:`_path_problem` found on the way


def _what_is(path: str) -> str:
    """What stands at ``path``, never followed through a link."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return _MISSING
    return _FOLDER if stat.S_ISDIR(mode) else _LINK if stat.S_ISLNK(mode) else _FILE


def _stage_all(root: str, txn: str, changes: list[Change], remove_dirs: list[str]) -> list[dict[str, Any]]:
    """Stage every new file (fsynced) and return the journal's steps: folders to make, swaps, folders to remove."""
    ops: list[dict[str, Any]] = []
    staged: list[str] = []
    folders: dict[str, None] = {}
    for i, change in enumerate(changes):
        before = None if change.before is None else _fingerprint(change.before)
        if change.data is None:
            ops.append({"op": "delete", "path": change.path, "old": f"{i}.old", "before": before})
            continue
        stage = f"{i}.staged"
        staged.append(os.path.join(txn, stage))
        ino = _write_file(staged[-1], change.data, _mode_of(os.path.join(root, change.path)))
        folders.update(dict.fromkeys(_missing_folders(root, change.path)))
        ops.append({"op": "write", "path": change.path, "stage": stage, "old": f"{i}.old", "ino": ino,
                    "before": before, "after": _fingerprint(change.data)})
    _sync_files(txn, [os.path.join(txn, _SEAL), *staged])  # the seal too: a journal is run only beside it
    return ([{"op": "mkdir", "path": rel} for rel in folders] + ops
            + [{"op": "rmdir", "path": rel} for rel in remove_dirs if os.path.isdir(os.path.join(root, rel))])


def _missing_folders(root: str, rel: str) -> list[str]:
    """The folders above ``rel`` that do not exist yet, outermost first."""
    parts = rel.split("/")[:-1]
    above = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return [folder for folder in above if not os.path.isdir(os.path.join(root, folder))]


def _fingerprint(data: bytes) -> list[int]:
    """Size and CRC-32 of some bytes: what the journal records to recognise them."""
    return [len(data), zlib.crc32(data)]


def _mode_of(path: str) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o644


def _write_file(path: str, data: bytes, mode: int, *, sync: bool = False) -> int:
    """Create ``path`` with ``data``; its inode number."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


# Above this many files one syncfs(2) of the file system is cheaper than an fsync each
# (measured: 1,500 staged files, 0.14 s against 0.42 s one after the other).  Below it the
# files are fsynced by a few threads at once: the file system commits its journal once for
# fsyncs that wait together, and syncfs would also wait for every other process's dirty
# data (on a shared disk, most of its time).  Measured on the promote bench's write (40
# files, 1.7 MB, fresh copies, load average 4): 0.049 s with syncfs, 0.071 s fsync after
# fsync, 0.033 s with 8 threads (medians of 16 alternating runs).
_SYNCFS_FROM = 256
_SYNC_THREADS = 8


def _sync_files(directory: str, paths: list[str]) -> None:
    """Make the files ``paths`` (all below ``directory``) durable."""
    if len(paths) >= _SYNCFS_FROM and _syncfs(directory):
        return
    _fsync_all(paths)


def _fsync_all(paths: Sequence[str], *, missing_ok: bool = False) -> None:
    """fsync every path (files or folders), a few at a time; the first failure is raised once the threads stop.

    With ``missing_ok`` a path that is gone is skipped (a folder removed by the transaction).
    """
    if len(paths) <= 1:
        for path in paths:
            _fsync_path(path, missing_ok)
        return
    pending = iter(paths)
    take = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        while not errors:
            with take:
                path = next(pending, None)
            if path is None:
                return
            try:
                _fsync_path(path, missing_ok)
            except BaseException as err:  # raised again in the calling thread, whatever it is
                errors.append(err)

    # Daemon threads: a signal that ends the command (before the commit point) does not wait for them.
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(_SYNC_THREADS, len(paths)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _fsync_path(path: str, missing_ok: bool) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not missing_ok:
            raise
        # a folder some file systems cannot sync (see _fsync_dir): the rename order still holds
    finally:
        os.close(fd)


def _syncfs(directory: str) -> bool:
    """syncfs(2) on the file system holding ``directory``; False where it is not available."""
    syncfs = _linux_calls().get("syncfs")
    if syncfs is None:
        return False
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        return bool(syncfs(fd) == 0)
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=None)
def _linux_calls() -> dict[str, Callable[..., int]]:
    """``syncfs`` and ``renameat2`` of the C library and ``errno`` (ctypes' get_errno); empty elsewhere."""
    if not sys.platform.startswith("linux"):
        return {}
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return {}
    calls: dict[str, Callable[..., int]] = {name: getattr(libc, name) for name in ("syncfs", "renameat2")
                                            if hasattr(libc, name)}
    calls["errno"] = ctypes.get_errno
    return calls


def _check_unchanged(root: str, changes: list[Change]) -> None:
    for change in changes:
        try:
            with open(os.path.join(root, change.path), "rb") as fh:
                now: bytes | None = fh.read()
        except FileNotFoundError:
            now = None
        except IsADirectoryError:
            now = b""  # never equal to what was read: a folder now stands where a file was
        if now != change.before:
            what = "was created" if change.before is None else "was deleted" if now is None else "was edited"
            raise ChangedUnderneathError(
                f"{change.path} {what} by someone else since krm-merge read it; nothing was written "
                "(run the command again on the new state)",
                file=change.path,
            )


def _write_journal(txn: str, ops: list[dict[str, Any]], command: str, key: bytes, binding: bytes) -> None:
    record = {"version": _VERSION, "command": command, "pid": os.getpid(), "started": _now(), "ops": ops}
    data = _sealed(key, b"journal", binding, json.dumps(record).encode("utf-8"))
    if len(data) > max_input_bytes():  # recovery would refuse to read it: nothing is written rather
        raise KrmMergeError(f"the write's journal would be {len(data)} bytes, above the input limit; nothing "
                            "was written (raise KRM_MERGE_MAX_INPUT_MB, or write fewer files at once)")
    tmp = os.path.join(txn, _JOURNAL + ".tmp")
    _write_file(tmp, data, 0o600, sync=True)
    os.rename(tmp, os.path.join(txn, _JOURNAL))
    _fsync_dir(txn)  # the commit point: from here on the transaction is finished (or rolled back)


def _finish(root: str, txn: str, ops: list[dict[str, Any]]) -> None:
    """Carry out the journal; an edit found on the way rolls it back and raises :class:`ChangedUnderneathError`."""
    try:
        _roll_forward(root, txn, ops)
    except _Edited as edit:
        _write_file(os.path.join(txn, _ROLLBACK), json.dumps([edit.rel, edit.what]).encode("utf-8"), 0o644,
                    sync=True)
        _fsync_dir(txn)  # from here on the transaction is rolled back, whoever finishes it
        kept = _roll_back(root, txn, ops)
        _discard(txn)
        _fsync_dir(root)
        raise ChangedUnderneathError(_rolled_back(edit.rel, edit.what, kept), file=edit.rel) from None
    _discard(txn)
    _fsync_dir(root)


def _rolled_back(rel: str, what: str, kept: list[str]) -> str:
    said = (f"{rel} {what} by another program during the write: the write was rolled back and the edit is kept "
            "(run the command again on the new state)")
    if kept:
        said += "; " + "; ".join(kept)
    return said


def _roll_forward(root: str, txn: str, ops: list[dict[str, Any]]) -> None:
    """Carry out the journal; every step may already have been done by an interrupted run (its inodes tell)."""
    for op in ops:
        target = os.path.join(root, op["path"])
        if op["op"] == "mkdir":
            try:
                os.mkdir(target)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(target).st_mode):  # a file (or link) made there meanwhile
                    raise _Edited(op["path"], "was created") from None
        elif op["op"] == "write":
            _swap_in(target, txn, op)
        elif op["op"] == "delete":
            _move_out(target, txn, op)
        elif op["op"] == "rmdir":
            try:
                os.rmdir(target)
            except FileNotFoundError:
                pass
            except OSError as err:
                if err.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                # not empty after all (e.g. ignored files): kept
    _sync_folders(root, ops)


def _swap_in(target: str, txn: str, op: dict[str, Any]) -> None:
    """Put the staged file of a write at ``target``; the file it replaces (checked) goes to the ``old`` name."""
    rel, stage, old = op["path"], os.path.join(txn, op["stage"]), os.path.join(txn, op["old"])
    if _inode(target) == op["ino"]:  # swapped in by an interrupted run: check what it swapped out
        if op["before"] is not None:
            if _inode(stage) not in (None, op["ino"]):
                os.rename(stage, old)  # exchanged, not yet renamed: the stage name holds the old file
            if os.path.lexists(old) and not _holds(old, op["before"]):  # gone: checked, and discarded
                raise _Edited(rel, "was edited")
        elif os.path.lexists(stage):
            os.unlink(stage)
        return
    if _inode(stage) != op["ino"]:  # only the file krm-merge staged goes in: never one put at its name
        raise _Edited(rel, "had its staged content replaced")
    if op["before"] is None:
        if os.path.lexists(target):
            raise _Edited(rel, "was created")
        try:
            os.link(stage, target, follow_symlinks=False)  # never over a file created meanwhile
        except FileExistsError:
            raise _Edited(rel, "was created") from None
        os.unlink(stage)
        return
    held = _Held(rel, target)
    try:
        if not held.holds(op["before"]):
            raise _Edited(rel, "was edited")
        _exchange(stage, target, old)
        if not held.is_at(old, op["before"]):
            raise _Edited(rel, "was edited")
    finally:
        held.close()


def _move_out(target: str, txn: str, op: dict[str, Any]) -> None:
    """Delete ``target`` by moving it (checked) to the ``old`` name."""
    rel, old = op["path"], os.path.join(txn, op["old"])
    if os.path.lexists(old):  # moved out by an interrupted run
        if not (os.path.islink(old) or _holds(old, op["before"])):
            raise _Edited(rel, "was edited")
        return
    if not os.path.lexists(target):
        return  # deleted by someone else already: nothing of it to keep
    if op["before"] is None:
        raise _Edited(rel, "was created")
    if os.path.islink(target):
        os.rename(target, old)  # deleting a link loses no content (its target stays)
        return
    held = _Held(rel, target)
    try:
        if not held.holds(op["before"]):
            raise _Edited(rel, "was edited")
        os.rename(target, old)
        if not held.is_at(old, op["before"]):
            raise _Edited(rel, "was edited")
    finally:
        held.close()


# --- rollback --------------------------------------------------------------------------


def _roll_back(root: str, txn: str, ops: list[dict[str, Any]]) -> list[str]:
    """Undo every step done, last first; each may already have been undone.  What could not be undone, said."""
    kept: list[str] = []
    for op in reversed(ops):
        target = os.path.join(root, op["path"])
        if op["op"] == "write":
            kept.extend(_undo_write(root, target, txn, op))
        elif op["op"] == "delete":
            kept.extend(_undo_delete(root, target, txn, op))
        elif op["op"] == "mkdir":
            try:
                os.rmdir(target)
            except OSError:
                pass  # gone already, or holds a file kept as edited
        elif op["op"] == "rmdir":
            try:
                os.mkdir(target)
            except FileExistsError:
                pass
    _sync_folders(root, ops)
    return kept


def _undo_write(root: str, target: str, txn: str, op: dict[str, Any]) -> list[str]:
    """Put back what a write swapped out; a written file edited since stays, as edited."""
    if _inode(target) != op["ino"]:
        return []  # not swapped in (or undone already)
    rel, stage, old = op["path"], os.path.join(txn, op["stage"]), os.path.join(txn, op["old"])
    back = old if os.path.lexists(old) else stage  # exchanged, not yet renamed: the stage name holds the old file
    try:
        held = _Held(rel, target)
    except _Edited:
        return [_kept_as_edited(root, rel, back, op["before"])]  # changed an instant ago: left as it is
    try:
        if not held.holds(op["after"]):
            return [_kept_as_edited(root, rel, back, op["before"])]
        if op["before"] is None:
            os.rename(target, old)  # a new file's ``old`` name takes it away
            if held.is_at(old, op["after"]):
                return []
            try:
                os.link(old, target, follow_symlinks=False)  # edited in the instant between: it stays
            except FileExistsError:  # and a new file made at its place: both kept
                return [_set_aside(root, rel, old)]
            return [_kept_as_edited(root, rel, None, None)]
        if not os.path.lexists(back):
            return [f"{rel} keeps the new content: its old content is no longer in the transaction folder"]
        undone = os.path.join(txn, op["stage"] + ".undone")
        _exchange(back, target, undone)
        if held.is_at(undone, op["after"]):
            return []
        _exchange(undone, target, back)  # edited in the instant between: the edited file goes back
        return [_kept_as_edited(root, rel, back, op["before"])]
    finally:
        held.close()


def _undo_delete(root: str, target: str, txn: str, op: dict[str, Any]) -> list[str]:
    """Put back a file a delete moved out (never over a file created since)."""
    rel, old = op["path"], os.path.join(txn, op["old"])
    if not os.path.lexists(old):
        return []
    try:
        os.link(old, target, follow_symlinks=False)
    except FileExistsError:
        if _inode(old) != _inode(target) and not (os.path.islink(old) or _holds(old, op["before"])):
            return [_set_aside(root, rel, old)]  # edited, then a new file made at its place: both kept
    os.unlink(old)
    return []


def _kept_as_edited(root: str, rel: str, old: str | None, before: list[int] | None) -> str:
    """The message for a written file left as edited; its old file is set aside if it was edited too."""
    said = f"{rel} was edited after krm-merge wrote it and keeps the new content with that edit"
    if old is not None and os.path.lexists(old) and before is not None and not _holds(old, before):
        said += f"; {_set_aside(root, rel, old)}"
    return said


def _set_aside(root: str, rel: str, old: str) -> str:
    """Link a file that holds an edit but cannot go back to its place beside it, under a new name."""
    for n in range(1, 1000):
        aside = f"{rel}.krm-merge-kept" + (f"-{n}" if n > 1 else "")
        try:
            os.link(old, os.path.join(root, aside), follow_symlinks=False)
        except FileExistsError:
            continue
        return f"the edited earlier content of {rel} is kept in {aside}"
    raise KrmMergeError(f"cannot keep the edited earlier content of {rel}: too many {rel}.krm-merge-kept files",
                        file=rel)


# --- checked swaps ---------------------------------------------------------------------

_LEASES = sys.platform.startswith("linux") and hasattr(fcntl, "F_SETLEASE")
# A lease break is announced with a signal (SIGIO by default, which would end the process);
# SIGURG is ignored unless a program asks for it, and the holder asks with F_GETLEASE instead.
_LEASE_SIGNAL = getattr(signal, "SIGURG", 0)
# How long a swap waits for another program to close a file it has open for writing
# (an append takes microseconds; a program that keeps a file open makes the write roll back).
_WRITER_WAIT = 1.0
_CHUNK = 1 << 20


class _Held:
    """A file opened read-only and, where the system allows, held with a read lease.

    While the lease is held, nobody can open the file for writing without
    breaking it (the opener waits until it is released), and a file open for
    writing cannot be leased: so leased, unchanged when checked, and the
    lease still unbroken later means no write reached the file in between.
    Without a lease (another system, a file system without leases) the file
    is read again instead, and a write through a descriptor opened before
    the swap can go unseen.
    """

    __slots__ = ("rel", "fd", "ino", "leased")

    def __init__(self, rel: str, path: str) -> None:
        self.rel = rel
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(path, flags)
        except FileNotFoundError:
            raise _Edited(rel, "was deleted") from None
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise _Edited(rel, "was replaced by a symbolic link") from None
            raise
        info = os.fstat(self.fd)
        self.ino = info.st_ino
        self.leased = False
        if not stat.S_ISREG(info.st_mode):
            self.close()
            raise _Edited(rel, "was replaced by something that is not a file")
        self._lease()

    def _lease(self) -> None:
        if not _LEASES:
            return
        deadline = time.monotonic() + _WRITER_WAIT
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETSIG, _LEASE_SIGNAL)
        except OSError:
            return
        while True:
            try:
                fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
                self.leased = True
                return
            except OSError as err:
                if err.errno != errno.EAGAIN:
                    return  # EACCES: another user's file; EINVAL: a file system without leases
            if time.monotonic() > deadline:  # open for writing by another program all along
                self.close()
                raise _Edited(self.rel, "was open for writing")
            time.sleep(0.002)

    def holds(self, expected: list[int]) -> bool:
        """Whether the file holds the bytes of the fingerprint ``expected``."""
        return _fd_fingerprint(self.fd) == expected

    def is_at(self, path: str, expected: list[int]) -> bool:
        """After a move: whether the file at ``path`` is this one and unchanged (another one: holds ``expected``)."""
        if _inode(path) != self.ino:
            return _holds(path, expected)  # replaced before the move: that file was moved
        if self.leased:
            return fcntl.fcntl(self.fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK  # unbroken: nobody opened it to write
        return self.holds(expected)

    def close(self) -> None:
        """Release the lease (a program waiting to open the file goes on) and the descriptor."""
        os.close(self.fd)


def _exchange(source: str, target: str, out: str) -> None:
    """Put the file at ``source`` at ``target``; the file that was at ``target`` ends at ``out``.

    One ``renameat2(RENAME_EXCHANGE)`` where the system has it (nothing can
    come between taking the old file away and putting the new one), else a
    hard link to the old file and a rename over it.
    """
    if _rename_exchange(source, target):
        os.rename(source, out)
        return
    if os.path.lexists(out):
        os.unlink(out)  # a link an interrupted run made to the same file
    os.link(target, out, follow_symlinks=False)
    os.replace(source, target)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _rename_exchange(a: str, b: str) -> bool:
    """Swap the files at ``a`` and ``b`` atomically; False where the system or file system cannot."""
    calls = _linux_calls()
    if "renameat2" not in calls:
        return False
    if calls["renameat2"](_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = calls["errno"]()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), b)


def _inode(path: str) -> int | None:
    """The inode number at ``path`` (a link's own), None when nothing is there."""
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None


def _holds(path: str, expected: list[int] | None) -> bool:
    """Whether the file at ``path`` (never followed through a link) holds the bytes of ``expected``."""
    if expected is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        return _fd_fingerprint(fd) == expected
    finally:
        os.close(fd)


def _fd_fingerprint(fd: int) -> list[int]:
    crc, offset = 0, 0
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return [offset, crc]
        crc = zlib.crc32(chunk, crc)
        offset += len(chunk)


def _sync_folders(root: str, ops: list[dict[str, Any]]) -> None:
    """Make the folders the steps changed durable (many: one syncfs)."""
    touched = {os.path.dirname(os.path.join(root, op["path"])) for op in ops}
    if not (len(touched) >= _SYNCFS_FROM and _syncfs(root)):
        _fsync_all(sorted(touched, key=len, reverse=True), missing_ok=True)


def _discard(txn: str) -> None:
    """Remove the transaction folder (staged and swapped-out files, the journal, the rollback mark, the git marker).

    The journal goes first, durably when staged files or a rollback mark
    remain: a journal left beside some of its staged files would have
    recovery roll forward a transaction that was dropped, one left without
    its rollback mark would roll forward one that was rolled back.  Beside
    swapped-out files alone it need not be (one fsync less per write): a
    finished swap whose old file is gone is taken as checked (:func:`_swap_in`).
    """
    try:
        names = os.listdir(txn)
    except FileNotFoundError:
        return
    if _JOURNAL in names:
        os.unlink(os.path.join(txn, _JOURNAL))
        names.remove(_JOURNAL)
        if any(not name.endswith(".old") and name not in (_GIT_MARKER, _SEAL) for name in names):
            _fsync_dir(txn)
    for name in names:
        if name == _GIT_MARKER:
            _remove_git_marker(os.path.join(txn, name))
        elif name != _SEAL:
            try:
                os.unlink(os.path.join(txn, name))
            except FileNotFoundError:
                pass
    # The seal goes last: a folder left half removed is still known as krm-merge's (one left without
    # it is empty, which recovery removes whoever made it).
    for last, remove in ((os.path.join(txn, _SEAL), os.unlink), (txn, os.rmdir)):
        try:
            remove(last)
        except FileNotFoundError:
            pass


def _remove_git_marker(marker: str) -> None:
    """Remove the git skeleton of :func:`_refuse_git_add` (what of it an interrupted run made)."""
    for remove, name in ((os.unlink, "HEAD"), (os.rmdir, "objects"), (os.rmdir, "refs"), (os.rmdir, "")):
        try:
            remove(os.path.join(marker, name))
        except FileNotFoundError:
            pass


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename order still holds
    finally:
        os.close(fd)


# --- recovery --------------------------------------------------------------------------
#
# What is honoured (docs/reliability.md, "Recovery: what is honoured"): a transaction folder whose
# seal this user's key made for this checkout, a journal sealed with the same binding, and in it
# only steps whose every path stays in the package.  Anything else under krm-merge's names came
# with the package's files (an upstream, an archive, a copy of another checkout) or from another
# user: it is named, and never run, finished, rolled back or removed.


class Pending(Record):
    """What a krm-merge command left in a package (:func:`pending`)."""

    what: str  # in a few words
    foreign: bool = False  # not krm-merge's own in this checkout: never run; the user removes it
    half_written: bool = False  # past its commit point: some files may hold the new content, others the old


class _Left(Record):
    """What :func:`_inspect` found in a package's transaction folder."""

    kind: str  # _NONE, _BEGUN, _STAGED, _JOURNALED or _FOREIGN
    why: str = ""  # _FOREIGN: why it is not krm-merge's own
    ended: str | None = None  # _STAGED: how its write had ended (:func:`_ended`); None: before its commit point
    record: dict[str, Any] | None = None  # _JOURNALED: the journal, its seal and every step checked


_NONE, _BEGUN, _STAGED, _JOURNALED, _FOREIGN = "none", "begun", "staged", "journaled", "foreign"
_NO_SEAL = "no seal of this user's krm-merge for this checkout"
_UNSEALED = f"it carries {_NO_SEAL}"


def recover(root: str | os.PathLike[str]) -> list[str]:
    """Finish or drop an interrupted transaction of the package; what was done, as messages.

    The caller holds the lock (:class:`PackageLock` calls this itself).  A
    transaction folder that is not krm-merge's own in this checkout (its seal,
    its journal or a path its journal names: :func:`_inspect`) raises
    :class:`ForeignStateError` before any step, and is left as it is.
    """
    root = os.path.realpath(root)
    txn = os.path.join(root, TXN_NAME)
    left = _inspect(root)
    if left.kind == _NONE:
        return []
    if left.kind == _FOREIGN:
        raise ForeignStateError(_foreign(txn, left.why), file=txn)
    if left.kind != _JOURNALED:
        with interrupts.held_back():
            _discard(txn)
            _fsync_dir(root)
        if left.kind == _BEGUN:
            return [f"removed an empty transaction folder from {root}: a write stopped as it began or as it ended, "
                    "no file of the package is half written"]
        if left.ended is None:
            return [f"rolled back an interrupted write in {root}: it had not reached its commit point, "
                    "no file of the package had been changed"]
        return [f"removed what was left of a write in {root} that had {left.ended}"]
    record = left.record or {}
    ops = record["ops"]
    by = _by(record)
    with interrupts.held_back():
        if os.path.lexists(os.path.join(txn, _ROLLBACK)):
            kept = _roll_back(root, txn, ops)
            _discard(txn)
            _fsync_dir(root)
            return [f"rolled back an interrupted write in {root} ({by}): another program changed a file "
                    "during it" + "".join(f"; {said}" for said in kept)]
        try:
            _finish(root, txn, ops)
        except ChangedUnderneathError as err:
            return [f"rolled back an interrupted write in {root} ({by}): {err.message}"]
    files = sum(1 for op in ops if op["op"] in ("write", "delete"))
    return [f"finished an interrupted write in {root} ({files} file(s), {by}): it had passed its commit point"]


def _by(record: dict[str, Any]) -> str:
    return f"by {record.get('command')}, process {record.get('pid')}, started {record.get('started')}"


def _inspect(root: str) -> _Left:
    """What the transaction folder of the package ``root`` (resolved) holds; reads only.

    Nothing; krm-merge's own (sealed for this checkout: its seal made with
    this user's key over the package's real path and the inodes of the
    package folder and of the transaction folder), without a journal or with
    a journal sealed the same way whose every step is checked
    (:func:`_check_ops`); an empty folder (what a write stopped as it began,
    or as it ended, leaves: nothing in it to lose); or something else.
    """
    txn = os.path.join(root, TXN_NAME)
    found = _what_is(txn)
    if found == _MISSING:
        return _Left(_NONE)
    if found != _FOLDER:
        return _Left(_FOREIGN, "it is a symbolic link" if found == _LINK else "it is not a folder")
    try:
        names = os.listdir(txn)
        binding = _bind(root, os.lstat(txn).st_ino)
    except FileNotFoundError:
        return _Left(_NONE)  # its write ended meanwhile
    keys = _keys()
    if not _holds_seal(txn, keys, binding):
        if _just_begun(txn, names):
            return _Left(_BEGUN)
        return _Left(_FOREIGN, f"it holds a journal, but {_NO_SEAL}" if _JOURNAL in names else _UNSEALED)
    if _JOURNAL not in names:
        return _Left(_STAGED, ended=_ended(names))
    record = _unseal(_read_sealed(os.path.join(txn, _JOURNAL)), b"journal", binding, keys)
    if record is None or record.get("version") != _VERSION:
        return _Left(_FOREIGN, "its journal is not the one krm-merge sealed in it")
    problem = _check_ops(root, record.get("ops"))
    if problem is not None:
        return _Left(_FOREIGN, f"its journal {problem}")
    return _Left(_JOURNALED, record=record)


def _just_begun(txn: str, names: list[str]) -> bool:
    """Whether a folder without a seal holds nothing: empty, or only an empty seal (a write killed as it made it)."""
    if not names:
        return True
    if names != [_SEAL]:
        return False
    info = os.lstat(os.path.join(txn, _SEAL))
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def _ended(names: list[str]) -> str | None:
    """How the write of a transaction folder without a journal ended ("finished", "been rolled back"):
    it was being removed; None: it had not reached its commit point."""
    if _ROLLBACK in names:
        return "been rolled back"
    if any(name.endswith(".old") for name in names):
        return "finished (every file written)"
    return None


_STEPS = {"mkdir": {}, "rmdir": {}, "write": {"stage": "staged", "old": "old"}, "delete": {"old": "old"}}


def _check_ops(root: str, ops: Any) -> str | None:
    """What makes a journal's steps unsafe to run, None when nothing does; checked before any step.

    Every path by the writer's own rule (:func:`_path_problem`: inside the
    package, no symbolic link on the way, nothing under ``.git``), every
    name in the transaction folder one the writer gives (``N.staged``,
    ``N.old``, each used once), every inode and fingerprint a number.
    """
    if not isinstance(ops, list):
        return "holds no list of steps"
    seen: dict[str, str] = {}
    used: set[str] = set()
    for n, op in enumerate(ops, 1):
        if not isinstance(op, dict) or op.get("op") not in _STEPS:
            return f"holds an unknown step (step {n})"
        problem = _path_problem(root, op.get("path"), seen, folder=op["op"] in ("mkdir", "rmdir"))
        if problem is not None:
            return f"names {op.get('path')!r} (step {n}): {problem}"
        for field, suffix in _STEPS[op["op"]].items():
            name = op.get(field)
            stem, dot, ending = name.partition(".") if isinstance(name, str) else ("", "", "")
            if not (isinstance(name, str) and stem.isascii() and stem.isdigit() and dot and ending == suffix) or name in used:
                return f"names {name!r} as the {field} file of {op.get('path')!r} (step {n}), not a file it staged"
            used.add(name)
        if op["op"] == "write" and not (type(op.get("ino")) is int and _fingerprint_or_none(op.get("before"))
                                        and _fingerprint_or_none(op.get("after")) and op.get("after") is not None):
            return f"holds a malformed write of {op.get('path')!r} (step {n})"
        if op["op"] == "delete" and not _fingerprint_or_none(op.get("before")):
            return f"holds a malformed deletion of {op.get('path')!r} (step {n})"
    return None


def _fingerprint_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value))


def pending(root: str | os.PathLike[str]) -> Pending | None:
    """What a krm-merge command left in the package ``root``, said in a few words; None when nothing.

    An interrupted write (before or past its commit point), a command still
    writing (it holds the lock), a lock file a killed command left, or a lock
    file or transaction folder that is not krm-merge's own in this checkout
    (``foreign``: never run; the user removes it).  Reads only: the lock is
    tested with a shared ``flock`` held for an instant.
    """
    root = os.path.realpath(root)
    txn, lock = os.path.join(root, TXN_NAME), os.path.join(root, LOCK_NAME)
    if not os.path.lexists(txn) and not os.path.lexists(lock):
        return None
    holder = _live_holder(lock)
    if holder is not None:
        return Pending(f"a krm-merge command is writing it now ({_describe(holder)})")
    if not os.path.lexists(txn):
        return _left_lock(root, lock)
    left = _inspect(root)
    if left.kind == _NONE:
        return None
    if left.kind == _FOREIGN:
        return Pending(_foreign(txn, left.why), foreign=True)
    if left.kind == _BEGUN:
        return Pending("a write stopped as it began or as it ended left an empty transaction folder "
                       "(no file of the package is half written)")
    if left.kind == _STAGED:
        if left.ended is not None:
            return Pending(f"a write that had {left.ended} was interrupted while its transaction folder was removed")
        return Pending("a write was interrupted before its commit point (no file of the package was changed yet)")
    record = left.record or {}
    files = sum(1 for op in record["ops"] if op["op"] in ("write", "delete"))
    return Pending(f"a write of {files} file(s) was interrupted past its commit point: some files may hold the new "
                   f"content, others the old ({_by(record)})", half_written=True)


def _left_lock(root: str, lock: str) -> Pending | None:
    """A lock file nobody holds: left by a killed command, or not krm-merge's own."""
    try:
        fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None  # its command ended meanwhile
    except OSError:
        return Pending(_foreign(lock, "it is not a file"), foreign=True)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Pending(_foreign(lock, "it is not a file"), foreign=True)
        raw = os.pread(fd, _MAX_HOLDER, 0)
        if raw and _unseal(raw, b"lock", _lock_binding(root, fd), _keys()) is None:
            return Pending(_foreign(lock, _UNSEALED), foreign=True)
    finally:
        os.close(fd)
    return Pending(f"{LOCK_NAME} was left by a krm-merge command that was killed (no write was interrupted)")


def _foreign(path: str, why: str) -> str:
    """The one line that names a lock file or transaction folder krm-merge did not leave in this checkout."""
    return (f"{path} is not krm-merge's own ({why}; it may have come with the package's files, from an upstream, "
            "an archive or a copy of another checkout): krm-merge runs nothing in it and writes nothing to the "
            f"package while it is there; look at it, then delete it (rm -r -- {_quoted(path)})")


def _quoted(path: str) -> str:
    """``path`` as one word of a POSIX shell."""
    return "'" + path.replace("'", "'\\''") + "'"


def _live_holder(lock: str) -> dict[str, Any] | None:
    """The holder's record when a live process holds the lock file (None: free, or no lock file)."""
    try:
        fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_holder(fd) or {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# --- seals -----------------------------------------------------------------------------
#
# A seal is a keyed BLAKE2b (a MAC) over what it seals and where: the package's real path, the
# inode of the package folder and the inode of the transaction folder (or of the lock file).  The
# key is this user's, kept outside every package (:func:`_key_folders`), so a folder that arrives
# with the package's files, or is copied from another checkout (a new path or new inodes), cannot
# carry a seal that holds here.  The device number is left out: it may change across a reboot
# (device-mapper minors, btrfs, NFS), which is when a power loss's write must still be finished.


def _bind(root: str, ino: int) -> bytes:
    """Where a seal holds: the package's real path, its folder's inode, and ``ino`` (the sealed folder's or file's)."""
    return b"%s\0%d\0%d" % (os.fsencode(root), os.lstat(root).st_ino, ino)


def _mac(key: bytes, what: bytes, binding: bytes, body: bytes = b"") -> bytes:
    mac = blake2b(key=key, digest_size=_MAC_SIZE // 2, person=b"krm-merge-txn")
    mac.update(what + b"\0" + binding + b"\0")
    mac.update(body)
    return mac.hexdigest().encode("ascii")


def _sealed(key: bytes, what: bytes, binding: bytes, body: bytes) -> bytes:
    """``body`` (JSON) behind its seal: the bytes of a journal or a lock file."""
    return _mac(key, what, binding, body) + b"\n" + body


def _unseal(data: bytes | None, what: bytes, binding: bytes, keys: list[bytes]) -> dict[str, Any] | None:
    """The JSON object ``data`` seals when one of ``keys`` sealed it for ``binding``; None otherwise."""
    if data is None or data[_MAC_SIZE:_MAC_SIZE + 1] != b"\n":
        return None
    mac, body = data[:_MAC_SIZE], data[_MAC_SIZE + 1:]
    if not any(compare_digest(_mac(key, what, binding, body), mac) for key in keys):
        return None
    try:
        record = json.loads(body)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _holds_seal(txn: str, keys: list[bytes], binding: bytes) -> bool:
    seal = _read_sealed(os.path.join(txn, _SEAL), _MAC_SIZE)
    return seal is not None and any(compare_digest(_mac(key, b"folder", binding), seal) for key in keys)


def _read_sealed(path: str, limit: int | None = None) -> bytes | None:
    """The bytes of a regular file (never through a link, never a FIFO) of at most ``limit`` bytes (default:
    the input limit); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > (max_input_bytes() if limit is None else limit):
            return None
        chunks, offset = [], 0
        while chunk := os.pread(fd, _CHUNK, offset):
            chunks.append(chunk)
            offset += len(chunk)
            if offset > info.st_size:
                return None  # growing as it is read: not a journal krm-merge wrote
        return b"".join(chunks)
    finally:
        os.close(fd)


def _key_folders() -> list[str]:
    """Where this user's key may be kept, in the order tried: ``$XDG_STATE_HOME/krm-merge``
    (``~/.local/state/krm-merge``), ``$XDG_CACHE_HOME/krm-merge`` (``~/.cache/krm-merge``, beside the git
    cache: for a user whose home cannot be written, such as a container's ``nobody``) and
    ``$TMPDIR/krm-merge-UID`` (last: a reboot may empty it)."""
    home = os.path.expanduser("~")

    def xdg(name: str, default: str) -> str:
        value = os.environ.get(name, "")
        return value if os.path.isabs(value) else os.path.join(home, default)

    temp = os.environ.get("TMPDIR", "")
    return [os.path.join(xdg("XDG_STATE_HOME", ".local/state"), "krm-merge"),
            os.path.join(xdg("XDG_CACHE_HOME", ".cache"), "krm-merge"),
            os.path.join(temp if os.path.isabs(temp) else "/tmp", f"krm-merge-{os.geteuid()}")]


def _keys() -> list[bytes]:
    """Every key of this user a seal may have been made with.  A key file that cannot be trusted stops the
    command (:func:`_untrusted_key`): what it sealed must not be taken for something else's."""
    keys = []
    for folder in _key_folders():
        key, problem = _read_key(folder)
        if problem:
            raise _untrusted_key(folder, problem)
        if key is not None:
            keys.append(key)
    return keys


def _untrusted_key(folder: str, problem: str) -> KrmMergeError:
    return KrmMergeError(f"{problem}: krm-merge seals each write's journal with it (docs/reliability.md); chmod 600 "
                         "it if only its mode is wrong, else delete it (a new one is made)",
                         file=os.path.join(folder, _KEY_NAME))


def _sealing_key() -> bytes:
    """The key to seal with: the first one kept, else a new one in the first folder that can keep it."""
    folders = _key_folders()
    for folder in folders:
        key, problem = _read_key(folder)
        if problem:
            raise _untrusted_key(folder, problem)
        if key is not None:
            return key
    failed = []
    for folder in folders:
        try:
            return _make_key(folder)
        except OSError as err:
            failed.append(f"{folder}: {err.strerror or err}")
    raise KrmMergeError("cannot write: no folder can keep the key krm-merge seals each write's journal with ("
                        + "; ".join(failed) + "): set XDG_STATE_HOME to a folder this user can write")


def _read_key(folder: str) -> tuple[bytes | None, str]:
    """The key kept in ``folder`` (None: none, or another user's file), and what is wrong with this user's file
    there when it cannot be trusted: a key is a regular file that no one else may read or write, of its size."""
    path = os.path.join(folder, _KEY_NAME)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return None, f"krm-merge's key {path} cannot be read ({err.strerror or err})"
    try:
        info = os.fstat(fd)
        key = os.pread(fd, _KEY_SIZE + 1, 0) if stat.S_ISREG(info.st_mode) else b""
    finally:
        os.close(fd)
    if info.st_uid != os.geteuid():
        return None, ""  # another user's (a shared temporary folder): not a key of this user, and never used
    if info.st_mode & 0o077 or len(key) != _KEY_SIZE:
        return None, (f"krm-merge's key {path} is not a private key of this user (mode "
                      f"{stat.S_IMODE(info.st_mode):04o}, {info.st_size} bytes; a key is mode 0600, {_KEY_SIZE} bytes)")
    return key, ""


def _make_key(folder: str) -> bytes:
    """A new random key in ``folder``, made durable, never over one another process made meanwhile."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".{_KEY_NAME}.{os.getpid()}.tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)  # left by a killed process that had this process id
    _write_file(tmp, os.urandom(_KEY_SIZE), 0o600, sync=True)
    try:
        os.link(tmp, os.path.join(folder, _KEY_NAME), follow_symlinks=False)
    except FileExistsError:
        pass  # another process made one first: both use it
    finally:
        os.unlink(tmp)
    _fsync_dir(folder)
    key, problem = _read_key(folder)
    if key is None:
        raise OSError(errno.EPERM, problem or "the key was not kept", folder)
    return key


__all__ = [
    "LOCK_NAME", "RESERVED_NAMES", "TXN_NAME", "Change", "ChangedUnderneathError", "ForeignStateError", "Interrupted",
    "InterruptedWriteError", "PackageLock", "PackageLockedError", "Pending", "check_changes", "commit", "pending",
    "preload", "recover",
]
