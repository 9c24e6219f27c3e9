"""krm-merge's own state arriving as content: a transaction folder or journal is run only where krm-merge left it.

``kpt pkg get`` copies hidden files, so an upstream can ship
``.krm-merge.txn/journal`` (both earlier formats, copied from txn.py as it
wrote them) naming ``../.git/hooks/post-commit``, a file outside the package
to write and one to delete, and a staged file outside to move in.  Every
command that meets it (those that write, those that only read, ``recover``,
``check``, a fleet update) must leave every one of those files as it was,
name the folder in one line and leave it for the user to delete.  A journal
krm-merge wrote itself is not run either once its path is edited to escape
(someone who can write the package but cannot read the key), nor in a copy
of the package (``cp -a``); and a command that only reads never finishes
one (it says that ``recover`` does).  docs/security.md, "krm-merge's own
state arriving as content", names each defence and its test here.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from krm_merge import txn

from tests.conftest import require_binary

from .harness import KRM_MERGE
from .killing import tree

pytestmark = pytest.mark.e2e

MARKER = ' # {"$promotion": "default:pipe-0:prod"}'
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\n"


def deployment(replicas: int) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n"
            f"  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1.0{MARKER}\n")


HOOK = b"#!/bin/sh\necho pwned > pwned.txt\n"
VICTIM = b"a file of the updating machine\n"
SECRET = b"token: s3cr3t\n"
WRITTEN = b"written outside the package\n"
# From the package (tmp/work/NAME): the consumer repository's hooks, and tmp/outside.
HOOK_PATH = "../.git/hooks/post-commit"
WRITE_PATH, DELETE_PATH = "../../outside/written.txt", "../../outside/victim.txt"
STAGE_OUTSIDE = "../../../outside/secret.txt"  # from tmp/work/NAME/.krm-merge.txn


def _fingerprint(data: bytes) -> list[int]:
    return [len(data), zlib.crc32(data)]


def shipped_journal(version: int) -> dict[str, bytes]:
    """The ``.krm-merge.txn`` folder an upstream commits: a journal of txn.py's format ``version`` and its staged
    files (version 1: txn.py before inodes and fingerprints; version 2: as it wrote them until the seal)."""
    if version == 1:
        ops: list[dict[str, Any]] = [
            {"op": "write", "path": HOOK_PATH, "stage": "0.staged"},
            {"op": "write", "path": WRITE_PATH, "stage": "1.staged"},
            {"op": "delete", "path": DELETE_PATH},
        ]
        record: dict[str, Any] = {"command": "krm-merge update", "pid": 4242, "started": "2024-01-01T00:00:00Z",
                                  "ops": ops}
    else:
        ops = [
            {"op": "write", "path": HOOK_PATH, "stage": "0.staged", "old": "0.old", "ino": 1, "before": None,
             "after": _fingerprint(HOOK)},
            {"op": "write", "path": WRITE_PATH, "stage": "1.staged", "old": "1.old", "ino": 2, "before": None,
             "after": _fingerprint(WRITTEN)},
            {"op": "delete", "path": DELETE_PATH, "old": "2.old", "before": _fingerprint(VICTIM)},
            {"op": "write", "path": "stolen.yaml", "stage": STAGE_OUTSIDE, "old": "3.old", "ino": 3, "before": None,
             "after": _fingerprint(SECRET)},
        ]
        record = {"version": 2, "command": "krm-merge update", "pid": 4242, "started": "2024-01-01T00:00:00Z",
                  "ops": ops}
    return {"journal": json.dumps(record).encode(), "0.staged": HOOK, "1.staged": WRITTEN}


class World:
    """``up``: the upstream (``pkg/`` at v1, v2, and ``shipped``: v1 with a ``.krm-merge.txn`` folder);
    ``work``: the consumers' git repository; ``outside``: files of the machine."""

    def __init__(self, tmp: Path, version: int) -> None:
        self.tmp, self.up, self.work, self.outside = tmp, tmp / "up", tmp / "work", tmp / "outside"
        self.env = dict(
            os.environ, HOME=str(tmp / "home"), TMPDIR=str(tmp / "tmp"), XDG_CACHE_HOME=str(tmp / "cache"),
            XDG_STATE_HOME=str(tmp / "state"), GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null",
            GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e",
        )
        for folder in ("home", "tmp", "up/pkg", "work", "outside"):
            (tmp / folder).mkdir(parents=True, exist_ok=True)
        (self.outside / "victim.txt").write_bytes(VICTIM)
        (self.outside / "secret.txt").write_bytes(SECRET)
        self.git(["init", "-q", "-b", "main"], self.up)
        self.commit({"Kptfile": KPTFILE.encode(), "deploy.yaml": deployment(1).encode()}, "v1")
        txn_dir = self.up / "pkg" / txn.TXN_NAME
        txn_dir.mkdir()
        for name, data in shipped_journal(version).items():
            (txn_dir / name).write_bytes(data)
        (txn_dir / "0.staged").chmod(0o755)  # the hook comes executable, as git keeps it
        self.commit({}, "shipped")
        shutil.rmtree(txn_dir)
        self.commit({"deploy.yaml": deployment(3).encode()}, "v2")
        self.git(["init", "-q", "-b", "main"], self.work)

    def git(self, args: list[str], cwd: Path) -> str:
        done = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"git {args}: {done.stderr}"
        return done.stdout.strip()

    def commit(self, files: dict[str, bytes], tag: str) -> None:
        for rel, data in files.items():
            (self.up / "pkg" / rel).write_bytes(data)
        self.git(["add", "-A"], self.up)
        self.git(["commit", "-q", "--allow-empty", "-m", tag], self.up)
        self.git(["tag", tag], self.up)

    @property
    def spec(self) -> str:
        return f"file://{self.up}.git/pkg"

    def get(self, name: str, ref: str = "shipped") -> Path:
        """``kpt pkg get`` of the upstream at ``ref`` into ``work/NAME``."""
        done = subprocess.run(["kpt", "pkg", "get", f"{self.spec}@{ref}", name], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return self.work / name

    def krm_merge(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KRM_MERGE, *args], cwd=self.work, env=self.env, capture_output=True, text=True,
                              timeout=300)

    def untouched(self, pkg: Path | None = None) -> None:
        """Nothing the shipped journal names was written, deleted or moved; its folder is still there."""
        assert not (self.work / ".git" / "hooks" / "post-commit").exists(), "the hook was written"
        assert not (self.outside / "written.txt").exists(), "a file outside the package was written"
        assert (self.outside / "victim.txt").read_bytes() == VICTIM, "a file outside the package was deleted"
        assert (self.outside / "secret.txt").read_bytes() == SECRET, "a file was moved from outside"
        if pkg is not None:
            assert not (pkg / "stolen.yaml").exists()
            assert (pkg / txn.TXN_NAME / "journal").is_file(), "the shipped folder was removed without the user"


@pytest.fixture(params=[1, 2], ids=["version-1", "version-2"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    require_binary("kpt")
    require_binary("git")
    return World(tmp_path, request.param)


def _named(stderr: str, pkg: Path) -> None:
    """One line names the folder, says it is not krm-merge's and how to remove it; never a traceback."""
    folder = f"{pkg.resolve()}/{txn.TXN_NAME}"
    lines = [line for line in stderr.splitlines() if f"{folder} is not krm-merge's own" in line]
    assert len(lines) == 1, stderr
    assert "krm-merge runs nothing in it" in lines[0] and f"rm -r -- '{folder}'" in lines[0]
    assert "Traceback" not in stderr


PROMOTE = ("promote", "{pkg}", "--set", "default:pipe-0:prod=web:2.0")
RUN = ("run", "{pkg}", "--", "mode=promote", "pipeline=default/pipe-0", "environment=prod", "value=web:2.0")
# command -> (argv, writes): a command that writes fails (exit 1); one that only reads says it and goes on.
COMMANDS = {
    "conflicts": (("conflicts", "{pkg}"), False),
    "update --dry-run": (("update", "{pkg}@v2", "--dry-run"), False),
    "update": (("update", "{pkg}@v2"), True),
    "promote --dry-run": ((*PROMOTE, "--dry-run"), False),
    "promote": (PROMOTE, True),
    "run --dry-run": (("run", "{pkg}", "--dry-run", *RUN[2:]), False),
    "run": (RUN, True),
    "recover": (("recover", "{pkg}"), True),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_journal_shipped_by_upstream_is_never_run(world: World, command: str) -> None:
    pkg = world.get("pkg")
    assert (pkg / txn.TXN_NAME / "journal").is_file()  # kpt pkg get copied it
    before = tree(pkg)
    argv, writes = COMMANDS[command]
    done = world.krm_merge(*(a.replace("{pkg}", str(pkg)) for a in argv))
    world.untouched(pkg)
    _named(done.stderr, pkg)
    if writes:
        assert done.returncode == 1 and "error" in done.stderr, done.stderr
        assert tree(pkg) == before  # nothing written while the folder is there
    else:
        assert done.returncode == 0 and "warning" in done.stderr, done.stderr


def test_check_names_a_shipped_folder_and_never_says_recover(world: World) -> None:
    pkg = world.get("pkg")
    done = world.krm_merge("check", str(world.work))
    world.untouched(pkg)
    assert done.returncode == 1
    _named(done.stderr, pkg)
    assert "krm-merge recover" not in done.stderr, done.stderr


def test_a_shipped_folder_blocks_writes_only_until_the_user_deletes_it(world: World) -> None:
    pkg = world.get("pkg")
    refused = world.krm_merge("update", f"{pkg}@v2")
    assert refused.returncode == 1
    shutil.rmtree(pkg / txn.TXN_NAME)  # what the message says to do
    done = world.krm_merge("update", f"{pkg}@v2")
    assert done.returncode == 0, done.stderr
    assert "replicas: 3" in (pkg / "deploy.yaml").read_text()
    world.untouched()


def test_a_fleet_update_fails_the_package_with_a_shipped_folder_and_updates_the_others(world: World) -> None:
    evil, good = world.get("a"), world.get("b", "v1")
    done = world.krm_merge("update", str(world.work), "--upstream", world.spec, "--ref", "v2")
    world.untouched(evil)
    assert done.returncode == 1, done.stderr
    _named(done.stderr, evil)
    assert any(line.startswith(f"krm-merge update: {evil}: failed: ") for line in done.stderr.splitlines()), done.stderr
    assert "replicas: 3" in (good / "deploy.yaml").read_text() and "replicas: 1" in (evil / "deploy.yaml").read_text()


# --- journals krm-merge wrote itself --------------------------------------------------------------------------


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own key folder, for the writes made in this process and the commands it starts."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path


BEFORE = {"a.yaml": b"a: 1\n", "b.yaml": b"b: 1\n", "deploy.yaml": deployment(1).encode()}
AFTER = {"a.yaml": b"a: 2\n", "b.yaml": b"b: 2\n"}
NEW = {"c.yaml": b"c: 1\n"}  # written last, linked into place


def interrupted(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package whose write krm-merge stopped half-way, past its commit point (a.yaml new, b.yaml old)."""
    root.mkdir(parents=True)
    for rel, data in BEFORE.items():
        (root / rel).write_bytes(data)
    return interrupt(root, monkeypatch)


def interrupt(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """krm-merge's own write of :data:`AFTER` over :data:`BEFORE`'s files in ``root`` and of :data:`NEW`, stopped
    at its second swap (a full disk): past the commit point, a.yaml new, b.yaml old, no c.yaml, the journal kept."""
    real, calls = txn._exchange, []

    def disk_full_at_the_second_swap(source: str, target: str, out: str) -> None:
        calls.append(target)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", target)
        real(source, target, out)

    with monkeypatch.context() as m:
        m.setattr(txn, "_exchange", disk_full_at_the_second_swap)
        with pytest.raises(txn.KrmMergeError, match="the journal is kept"):
            txn.commit(root, [*(txn.Change(rel, data, BEFORE[rel]) for rel, data in AFTER.items()),
                              *(txn.Change(rel, data, None) for rel, data in NEW.items())], command="test")
    assert (root / "a.yaml").read_bytes() == AFTER["a.yaml"] and (root / "b.yaml").read_bytes() == BEFORE["b.yaml"]
    assert not (root / "c.yaml").exists()
    return root


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], capture_output=True, text=True, timeout=300)


READ_ONLY = {
    "conflicts": ("conflicts", "{pkg}"),
    "update --dry-run": ("update", "{pkg}", "--origin", "{pkg}", "--upstream", "{pkg}", "--dry-run"),
    "promote --dry-run": ("promote", "{pkg}", "--set", "default:pipe-0:prod=web:2.0", "--dry-run"),
    "run --dry-run": ("run", "{pkg}", "--dry-run", *RUN[2:]),
}


@pytest.mark.parametrize("command", list(READ_ONLY))
def test_a_command_that_only_reads_never_finishes_an_interrupted_write(
        keyed: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    pkg = interrupted(keyed / "pkg", monkeypatch)
    half = tree(pkg)
    done = _run(*(a.replace("{pkg}", str(pkg)) for a in READ_ONLY[command]))
    assert done.returncode == 1, done.stderr
    assert "interrupted past its commit point" in done.stderr and f"krm-merge recover {pkg}" in done.stderr
    assert tree(pkg) == half  # nothing finished, rolled back or removed, no lock file made
    assert _run("recover", str(pkg)).returncode == 0
    assert (pkg / "b.yaml").read_bytes() == AFTER["b.yaml"]


def test_a_copied_package_does_not_run_the_journal_of_the_original(
        keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = interrupted(keyed / "pkg", monkeypatch)
    copy = keyed / "copy"
    subprocess.run(["cp", "-a", str(pkg), str(copy)], check=True, timeout=60)
    half = tree(copy)
    refused = _run("recover", str(copy))
    assert refused.returncode == 1 and "it holds a journal, but no seal" in refused.stderr, refused.stderr
    _named(refused.stderr, copy)
    assert tree(copy) == half
    checked = _run("check", str(copy))
    assert checked.returncode == 1 and "krm-merge recover" not in checked.stderr, checked.stderr
    finished = _run("recover", str(pkg))  # the original's own is finished
    assert finished.returncode == 0 and "finished an interrupted write" in finished.stderr, finished.stderr
    assert tree(pkg) == {**BEFORE, **AFTER, **NEW}


def test_a_journal_edited_to_escape_the_package_is_refused(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone who can write the package but not read the key edits krm-merge's own journal."""
    pkg = interrupted(keyed / "pkg", monkeypatch)
    journal = pkg / txn.TXN_NAME / "journal"
    edited = journal.read_bytes().replace(b'"path": "c.yaml"', b'"path": "../escaped.yaml"')
    assert b"../escaped.yaml" in edited
    journal.write_bytes(edited)
    half = tree(pkg)
    done = _run("recover", str(pkg))
    assert done.returncode == 1 and "its journal is not the one krm-merge sealed in it" in done.stderr, done.stderr
    assert not (keyed / "escaped.yaml").exists()
    assert tree(pkg) == half


def _sealed_journal(root: Path, ops: list[dict[str, Any]], staged: dict[str, bytes]) -> None:
    """A journal sealed with this user's key (as if the key had leaked, or a bug wrote it): the paths are still
    checked before any step."""
    folder = root / txn.TXN_NAME
    real = str(root.resolve())
    key = txn._sealing_key()
    binding = txn._begin(real, str(folder), key)
    for name, data in staged.items():
        (folder / name).write_bytes(data)
    for op in ops:
        if op.get("ino") == "staged":
            op["ino"] = (folder / op["stage"]).stat().st_ino if (folder / op["stage"]).is_file() else 1
    txn._write_journal(str(folder), ops, "test", key, binding)


def _write(path: str, stage: str = "0.staged", old: str = "0.old") -> dict[str, Any]:
    return {"op": "write", "path": path, "stage": stage, "old": old, "ino": "staged", "before": None,
            "after": _fingerprint(b"x: 1\n")}


@pytest.mark.parametrize("ops, said", [
    ([_write("../escaped.yaml")], "the path leaves the package"),
    ([_write("/tmp/escaped.yaml")], "the path leaves the package"),
    ([_write(".git/hooks/post-commit")], "under .git"),
    ([_write(".GIT/hooks/post-commit")], "under .git"),
    ([_write("linked/escaped.yaml")], "linked is a symbolic link"),
    ([{"op": "mkdir", "path": "linked"}], "linked is a symbolic link"),
    ([_write("ok.yaml", stage="../../escaped.yaml")], "not a file it staged"),
    ([{"op": "delete", "path": "a.yaml", "old": "../../outside.yaml", "before": None}], "not a file it staged"),
    ([_write(".krm-merge.lock")], "krm-merge keeps its lock and journal there"),
], ids=["dotdot", "absolute", "git", "git-case", "link-on-the-way", "mkdir-link", "stage", "old", "reserved"])
def test_every_path_of_a_sealed_journal_is_checked_before_any_step(
        keyed: Path, ops: list[dict[str, Any]], said: str) -> None:
    pkg = keyed / "pkg"
    pkg.mkdir()
    (pkg / "a.yaml").write_bytes(b"a: 1\n")
    (keyed / "elsewhere").mkdir()
    (pkg / "linked").symlink_to(keyed / "elsewhere", target_is_directory=True)
    (pkg / ".git" / "hooks").mkdir(parents=True)
    first = [_write("first.yaml", "9.staged", "9.old")]  # a safe step before it: not run either
    _sealed_journal(pkg, first + ops, {"0.staged": b"x: 1\n", "9.staged": b"x: 1\n"})
    before = tree(pkg)
    done = _run("recover", str(pkg))
    assert done.returncode == 1 and said in done.stderr and "(step 2)" in done.stderr, done.stderr
    _named(done.stderr, pkg)
    assert tree(pkg) == before and not os.listdir(keyed / "elsewhere") and not (keyed / "escaped.yaml").exists()


def test_a_lock_file_shipped_as_content_is_not_taken_over(keyed: Path) -> None:
    pkg = keyed / "pkg"
    pkg.mkdir()
    (pkg / "a.yaml").write_bytes(b"a: 1\n")
    forged = json.dumps({"pid": 1, "command": "krm-merge promote", "started": "x", "host": "h"}).encode()
    (pkg / txn.LOCK_NAME).write_bytes(forged)
    checked = _run("check", str(pkg))
    assert checked.returncode == 1 and "krm-merge recover" not in checked.stderr, checked.stderr
    assert f"{pkg.resolve()}/{txn.LOCK_NAME} is not krm-merge's own" in checked.stderr
    done = _run("recover", str(pkg))
    assert done.returncode == 1 and "is not krm-merge's own" in done.stderr, done.stderr
    assert (pkg / txn.LOCK_NAME).read_bytes() == forged  # left for the user


def test_the_key_is_private_to_the_user(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    interrupted(keyed / "pkg", monkeypatch)
    key = keyed / "state" / "krm-merge" / "journal.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    key.chmod(0o644)  # others could read it and forge a seal: nothing is taken as sealed, nothing run or written
    half = tree(keyed / "pkg")
    for argv in (["recover"], ["check"], ["conflicts"], ["promote", "--set", "default:pipe-0:prod=web:2.0"]):
        done = _run(argv[0], str(keyed / "pkg"), *argv[1:])
        assert done.returncode == 1 and f"{key} is not a private key of this user" in done.stderr, (argv, done.stderr)
        assert "chmod 600" in done.stderr and "Traceback" not in done.stderr
    assert tree(keyed / "pkg") == half
    key.chmod(0o600)
    assert _run("recover", str(keyed / "pkg")).returncode == 0


def _clean_world(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A world whose packages are fetched clean (v1); this process writes with the commands' key."""
    require_binary("kpt")
    require_binary("git")
    world = World(tmp, 2)
    monkeypatch.setenv("XDG_STATE_HOME", world.env["XDG_STATE_HOME"])
    return world


def _fleet_with_an_interrupted_write(world: World, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Packages ``a`` and ``b`` at v1, each with local files a.yaml and b.yaml; ``a`` holds krm-merge's own write
    of them stopped past its commit point."""
    a, b = world.get("a", "v1"), world.get("b", "v1")
    for pkg in (a, b):
        for rel in AFTER:
            (pkg / rel).write_bytes(BEFORE[rel])
    return interrupt(a, monkeypatch), b


def test_a_fleet_update_says_that_it_finished_a_packages_interrupted_write_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = _clean_world(tmp_path, monkeypatch)
    a, b = _fleet_with_an_interrupted_write(world, monkeypatch)
    done = world.krm_merge("update", str(world.work), "--upstream", world.spec, "--ref", "v2")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if f"{a}: finished an interrupted write in {a}" in line]
    assert len(said) == 1 and said[0].startswith("krm-merge update: warning: "), done.stderr
    for pkg in (a, b):  # a: its write finished, then updated like b
        assert "replicas: 3" in (pkg / "deploy.yaml").read_text()
    assert (a / "b.yaml").read_bytes() == AFTER["b.yaml"] and (b / "b.yaml").read_bytes() == BEFORE["b.yaml"]


def test_a_fleet_dry_run_fails_the_package_with_an_interrupted_write_and_finishes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = _clean_world(tmp_path, monkeypatch)
    a, b = _fleet_with_an_interrupted_write(world, monkeypatch)
    half = tree(a)
    done = world.krm_merge("update", str(world.work), "--upstream", world.spec, "--ref", "v2", "--dry-run")
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stderr.splitlines() if line.startswith(f"krm-merge update: {a}: failed: ")]
    assert len(failed) == 1 and "interrupted past its commit point" in failed[0], done.stderr
    assert f"krm-merge recover {a}" in failed[0]
    assert tree(a) == half  # a dry run finishes nothing
    assert "replicas: 3" in done.stdout and f"==> {b} <==" in done.stdout  # the others go on
