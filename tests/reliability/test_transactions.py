"""The package transaction (krm_merge/txn.py): failure at every step, the lock, edits made underneath.

A failure is injected at the N-th file-system call of a commit, for every N
the commit makes, in two ways: as an error the process survives (a full
disk, a read-only folder: the commit cleans up what it can) and as a crash
(nothing after the failing call runs, as after SIGKILL or a power loss).
After the next lock of the package (what every command does first), the
package must be byte-identical to the state before or after the commit,
and hold no file krm-merge made.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from krm_merge import txn

from .killing import tree as _tree

BEFORE = {"a.yaml": b"a: 1\n", "sub/b.yaml": b"b: 1\n", "gone.yaml": b"x: 1\n", "old/only.yaml": b"o: 1\n"}
AFTER = {"a.yaml": b"a: 2\n", "sub/b.yaml": b"b: 2\n", "new/deep/c.yaml": b"c: 1\n"}
CALLS = ("write", "fsync", "rename", "replace", "unlink", "rmdir", "mkdir", "open", "link")


def _package(root: Path) -> Path:
    for rel, data in BEFORE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _changes() -> list[txn.Change]:
    return [
        txn.Change("a.yaml", AFTER["a.yaml"], BEFORE["a.yaml"]),
        txn.Change("sub/b.yaml", AFTER["sub/b.yaml"], BEFORE["sub/b.yaml"]),
        txn.Change("new/deep/c.yaml", AFTER["new/deep/c.yaml"], None),
        txn.Change("gone.yaml", None, BEFORE["gone.yaml"]),
        txn.Change("old/only.yaml", None, BEFORE["old/only.yaml"]),
    ]


def _commit(root: Path) -> None:
    txn.commit(root, _changes(), remove_dirs=["old"])


class _Crash(BaseException):
    """The process stops here: nothing after the failing call runs."""


class _Injector:
    """Fails the ``at``-th call of the os functions a commit makes (counted across all of them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int, fail: Callable[[str], BaseException]) -> None:
        self.count, self.at, self.fail, self.fired = 0, at, fail, False
        self._real = {name: getattr(os, name) for name in CALLS}
        for name in CALLS:
            monkeypatch.setattr(os, name, self._wrap(name))

    def _wrap(self, name: str) -> Callable[..., Any]:
        real = self._real[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            if not self.fired:
                self.count += 1
                if self.count == self.at:
                    self.fired = True
                    raise self.fail(name)
            return real(*args, **kwargs)

        return call


def _die(lock: txn.PackageLock, *exc: object) -> None:
    """What the kernel does for a dead holder: its flock goes, its lock file stays."""
    if lock._fd is not None:
        if lock._own_handler:
            lock.interrupts.restore()
        del txn._held[lock.root]
        os.close(lock._fd)
        lock._fd = None


def _disk_full(name: str) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _read_only(name: str) -> OSError:
    return OSError(errno.EROFS, os.strerror(errno.EROFS))


def _trial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int, fail: Callable[[str], BaseException],
           crash: bool) -> bool:
    """One commit failing at call ``at``; then recovery; returns whether the failure fired."""
    root = _package(tmp_path / f"pkg-{at}")
    with monkeypatch.context() as m:
        injector = _Injector(m, at, fail)
        if crash:
            m.setattr(txn, "_discard", lambda path: None)  # a dead process cleans nothing up
            m.setattr(txn.PackageLock, "__exit__", _die)
        try:
            _commit(root)
        except (OSError, _Crash, txn.KrmMergeError):
            assert injector.fired
    with txn.PackageLock(root, "test") as lock:
        messages = lock.messages
    state = _tree(root)
    assert state in (BEFORE, AFTER), (at, messages, state)
    return injector.fired


@pytest.mark.parametrize("crash", [False, True], ids=["error", "crash"])
@pytest.mark.parametrize("fail", [_disk_full, _read_only], ids=["ENOSPC", "EROFS"])
def test_a_failure_at_every_step_leaves_the_state_before_or_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: Callable[[str], BaseException], crash: bool
) -> None:
    steps = 0
    fired = True
    while fired:
        steps += 1
        fail_with = (lambda name: _Crash()) if crash else fail
        fired = _trial(tmp_path, monkeypatch, steps, fail_with, crash)
    assert steps > 20  # the injector reached every call of a commit (staging, journal, renames, fsyncs)


def test_the_commit_point_is_the_journal_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Crashed just before the journal is renamed: rolled back; just after: rolled forward."""
    real_rename = os.rename
    for after in (False, True):
        root = _package(tmp_path / f"pkg-{after}")

        def rename(src: str, dst: str, *, after: bool = after) -> None:
            if after:
                real_rename(src, dst)
            raise _Crash()

        with monkeypatch.context() as m:
            m.setattr(os, "rename", rename)
            m.setattr(txn, "_discard", lambda path: None)
            with pytest.raises(_Crash):
                _commit(root)
        assert (root / txn.TXN_NAME).is_dir()
        with txn.PackageLock(root, "test") as lock:
            message = " ".join(lock.messages)
        assert ("finished" if after else "rolled back") in message
        assert _tree(root) == (AFTER if after else BEFORE)


class _EditBeforeSwap:
    """Wraps the swap of a file into place (``txn._exchange``): the ``nth`` swap first appends to the file
    it is about to replace, as another program's edit landing between the check and the swap would.

    Leases are off in these in-process tests (a process's own write would wait on its own lease), so
    the swapped-out file is read again; ``tests/reliability/test_edit_during_commit.py`` races a
    real editor process against the leased swaps.
    """

    EDIT = b"# edited during the write\n"

    def __init__(self, nth: int) -> None:
        self.nth, self.calls, self.real, self.edited = nth, 0, txn._exchange, ""

    def __call__(self, source: str, target: str, out: str) -> None:
        self.calls += 1
        if self.calls == self.nth and not self.edited:
            with open(target, "ab") as fh:
                fh.write(self.EDIT)
            self.edited = target
        self.real(source, target, out)


def _edited(rel: str) -> dict[str, bytes]:
    return {**BEFORE, rel: BEFORE[rel] + _EditBeforeSwap.EDIT}


def test_an_edit_made_just_before_a_swap_rolls_the_write_back_and_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path / "pkg")
    monkeypatch.setattr(txn, "_LEASES", False)
    monkeypatch.setattr(txn, "_exchange", _EditBeforeSwap(2))  # a.yaml is swapped first, then sub/b.yaml
    with pytest.raises(txn.ChangedUnderneathError) as err:
        _commit(root)
    assert err.value.message.startswith("sub/b.yaml was edited by another program during the write")
    assert "rolled back" in err.value.message
    assert _tree(root) == _edited("sub/b.yaml")


def test_a_rollback_killed_at_any_step_is_finished_by_the_next_command_and_keeps_the_edit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Crashed at every call of a commit that finds an edit: never a lost edit, never a mixed package."""
    at, fired = 0, True
    while fired:
        at += 1
        root = _package(tmp_path / f"pkg-{at}")
        with monkeypatch.context() as m:
            m.setattr(txn, "_LEASES", False)
            editor = _EditBeforeSwap(2)
            m.setattr(txn, "_exchange", editor)
            injector = _Injector(m, at, lambda name: _Crash())
            m.setattr(txn, "_discard", lambda path: None)
            m.setattr(txn.PackageLock, "__exit__", _die)
            try:
                _commit(root)
            except (_Crash, txn.ChangedUnderneathError):
                pass
            fired = injector.fired
        with txn.PackageLock(root, "test") as lock:
            messages = lock.messages
        allowed = [_edited("sub/b.yaml")] if editor.edited else [BEFORE, AFTER]
        assert _tree(root) in allowed, (at, messages)
    assert at > 20


def test_a_file_edited_after_it_was_written_keeps_that_edit_when_the_write_rolls_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path / "pkg")
    real = txn._exchange
    calls: list[str] = []

    def exchange(source: str, target: str, out: str) -> None:
        calls.append(target)
        if len(calls) == 2:
            with open(root / "a.yaml", "ab") as fh:  # a.yaml, written an instant ago, edited
                fh.write(b"# mine\n")
            with open(target, "ab") as fh:  # and sub/b.yaml edited just before its swap
                fh.write(b"# mine too\n")
        real(source, target, out)

    monkeypatch.setattr(txn, "_LEASES", False)
    monkeypatch.setattr(txn, "_exchange", exchange)
    with pytest.raises(txn.ChangedUnderneathError) as err:
        _commit(root)
    assert "a.yaml was edited after krm-merge wrote it and keeps the new content with that edit" in err.value.message
    assert _tree(root) == {**BEFORE, "a.yaml": AFTER["a.yaml"] + b"# mine\n", "sub/b.yaml": BEFORE["sub/b.yaml"] + b"# mine too\n"}


def test_a_file_created_during_the_write_is_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _package(tmp_path / "pkg")
    real = os.link

    def link(source: str, target: str, **kwargs: Any) -> None:
        if str(target).endswith("new/deep/c.yaml"):
            Path(target).write_bytes(b"made by someone else\n")  # between the check and the link
        real(source, target, **kwargs)

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(txn.ChangedUnderneathError, match="new/deep/c.yaml was created by another program"):
        _commit(root)
    assert _tree(root) == {**BEFORE, "new/deep/c.yaml": b"made by someone else\n"}


def _begun(root: Path) -> Path:
    """The transaction folder as krm-merge makes it for ``root`` (sealed, git marker), nothing staged yet."""
    folder = root / txn.TXN_NAME
    txn._begin(str(root.resolve()), str(folder), txn._sealing_key())
    return folder


@pytest.mark.parametrize("left, said", [("3.staged", "it had not reached its commit point"),
                                         ("3.old", "that had finished (every file written)"),
                                         ("rollback", "that had been rolled back")])
def test_a_transaction_folder_without_its_journal_is_said_for_what_it_was(tmp_path: Path, left: str, said: str) -> None:
    """Killed while the folder was being removed (journal first) or before the commit point: the package is whole."""
    root = _package(tmp_path / "pkg")
    (_begun(root) / left).write_bytes(b"x")
    assert txn.pending(root) is not None
    with txn.PackageLock(root, "test") as lock:
        assert said in " ".join(lock.messages)
    assert _tree(root) == BEFORE and txn.pending(root) is None


@pytest.mark.parametrize("folder", ["empty", "empty seal"])
def test_a_folder_left_by_a_write_killed_as_it_began_is_removed(tmp_path: Path, folder: str) -> None:
    """Killed between making the folder and writing its seal: nothing in it can be anyone's content."""
    root = _package(tmp_path / "pkg")
    (root / txn.TXN_NAME).mkdir()
    if folder == "empty seal":
        (root / txn.TXN_NAME / "seal").write_bytes(b"")
    with txn.PackageLock(root, "test") as lock:
        assert "removed an empty transaction folder" in " ".join(lock.messages)
    assert _tree(root) == BEFORE


@pytest.mark.parametrize("version", [None, 2])
def test_a_journal_of_an_earlier_format_is_refused_not_run(tmp_path: Path, version: int | None) -> None:
    """Versions 1 and 2 carried no seal: even in a folder krm-merge sealed, such a journal is never run."""
    root = _package(tmp_path / "pkg")
    folder = _begun(root)
    (folder / "0.staged").write_bytes(AFTER["a.yaml"])
    ops = [{"op": "write", "path": "a.yaml", "stage": "0.staged", "old": "0.old",
            "ino": (folder / "0.staged").stat().st_ino, "before": None, "after": [5, 0]},
           {"op": "delete", "path": "gone.yaml", "old": "1.old", "before": None}]
    record = {"command": "old", "pid": 1, "started": "x", "ops": ops, **({"version": version} if version else {})}
    (folder / "journal").write_text(json.dumps(record))
    before = _tree(root)
    with pytest.raises(txn.ForeignStateError, match="its journal is not the one krm-merge sealed in it"):
        with txn.PackageLock(root, "test"):
            pass
    assert _tree(root) == before and not (root / txn.LOCK_NAME).exists()


def test_a_commit_writes_modes_and_leaves_nothing_behind(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    (root / "a.yaml").chmod(0o600)
    _commit(root)
    assert _tree(root) == AFTER
    assert (root / "a.yaml").stat().st_mode & 0o777 == 0o600


def test_an_edit_made_underneath_stops_the_transaction_naming_the_file(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    (root / "sub/b.yaml").write_bytes(b"b: edited by a person\n")
    expected = _tree(root)
    with pytest.raises(txn.ChangedUnderneathError) as err:
        _commit(root)
    assert "sub/b.yaml was edited" in err.value.message and "nothing was written" in err.value.message
    assert _tree(root) == expected


def test_a_file_created_underneath_is_detected(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    (root / "new/deep").mkdir(parents=True)
    (root / "new/deep/c.yaml").write_bytes(b"mine\n")
    with pytest.raises(txn.ChangedUnderneathError, match="new/deep/c.yaml was created"):
        _commit(root)
    assert (root / "new/deep/c.yaml").read_bytes() == b"mine\n"


def test_a_symbolic_link_is_never_written_through(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    (root / "link.yaml").symlink_to("a.yaml")
    with pytest.raises(txn.KrmMergeError, match="symbolic link"):
        txn.commit(root, [txn.Change("link.yaml", b"x\n", BEFORE["a.yaml"])])
    assert (root / "a.yaml").read_bytes() == BEFORE["a.yaml"]


@pytest.mark.parametrize("rel", [".KRM-MERGE.TXN/journal", "KRM-ME~1.TXN/x.yaml", ".Krm-Merge.Lock.", "krm-me~2.loc"])
def test_the_lock_and_journal_are_never_written_in_another_spelling(tmp_path: Path, rel: str) -> None:
    """On macOS ``.KRM-MERGE.TXN`` is the journal's folder, on Windows ``KRM-ME~1.TXN`` may be (as for the names
    as spelled: files.protected_name)."""
    root = _package(tmp_path / "pkg")
    with pytest.raises(txn.KrmMergeError, match="krm-merge keeps its lock and journal there"):
        txn.commit(root, [txn.Change(rel, b"x\n", None)])
    assert not os.path.lexists(root / rel.split("/")[0])


_HOLD = """
import sys, time
from krm_merge import txn
with txn.PackageLock(sys.argv[1], "krm-merge promote"):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holder(root: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(root), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
    return proc


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    proc = _holder(root, 60)
    try:
        with pytest.raises(txn.PackageLockedError) as err:
            _commit(root)
        assert f"process {proc.pid}" in err.value.message and "krm-merge promote" in err.value.message
        assert "started 20" in err.value.message
        assert _tree(root) == {**BEFORE, txn.LOCK_NAME: (root / txn.LOCK_NAME).read_bytes()}
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg")
    proc = _holder(root, 60)
    proc.kill()
    proc.wait(timeout=10)
    held = json.loads((root / txn.LOCK_NAME).read_bytes().partition(b"\n")[2])  # behind its seal
    assert held["pid"] == proc.pid  # the dead holder's lock file is still there
    with txn.PackageLock(root, "test") as lock:
        assert any(f"process {proc.pid}" in m and "no longer running" in m for m in lock.messages)
    _commit(root)
    assert _tree(root) == AFTER


def test_the_recover_command_says_what_it_did(tmp_path: Path) -> None:
    from .harness import KRM_MERGE

    root = _package(tmp_path / "pkg")
    (_begun(root) / "0.staged").write_bytes(b"half\n")
    out = subprocess.run([KRM_MERGE, "recover", str(root)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "rolled back an interrupted write" in out.stderr, out
    assert _tree(root) == BEFORE
    again = subprocess.run([KRM_MERGE, "recover", str(root)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "krm-merge recover: " in again.stderr and "no interrupted write" in again.stderr
