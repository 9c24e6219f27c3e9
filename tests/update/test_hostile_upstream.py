"""An upstream package is untrusted input: what a hostile upstream author tries, and what ``update`` refuses.

Each test builds an upstream on a local git repository (``World``) or as
``--origin/--upstream`` directories, holding what an attacker would commit:
links to the updating machine's files, subpackage cycles and deep chains,
Kptfile fields aimed at git, bad names, many and large files.  After each
update the package holds nothing from outside the upstream's own tree (the
secret's token is searched for in every file), and the run ends with a
clear result (exit 0 with a warning, or exit 1 naming what was refused).
docs/security.md states the rules these tests pin.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from krm_merge import files
from krm_merge.commands import update
from krm_merge.update import git as update_git

from tests.conftest import require_binary

from .world import World, cm, fetched_by_hand, kptfile, write_tree

pytestmark = pytest.mark.e2e

TOKEN = "s3cr3t-t0ken-of-the-updating-machine"
KUBECONFIG = (
    "apiVersion: v1\nkind: Config\nmetadata:\n  name: kubeconfig\n"
    f"users:\n- name: admin\n  user:\n    token: {TOKEN}\n"
)
NOT_KRM = f"just: text\ntoken: {TOKEN}\n"  # a host file that is YAML but not a KRM object
# Far above what each update takes here (a second or two), as a guard against a hang or a long recursion.
HANG_GUARD_S = 60


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("kpt")
    require_binary("git")
    return World(tmp_path, monkeypatch)


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    """Files of the updating machine, outside every package and repository."""
    home = tmp_path / "machine"
    (home / "dir").mkdir(parents=True)
    (home / "kubeconfig.yaml").write_text(KUBECONFIG)
    (home / "leak.yaml").write_text(NOT_KRM)
    (home / "dir" / "inner.yaml").write_text(KUBECONFIG.replace("kubeconfig", "inner"))
    return home


def assert_no_secret(root: Path) -> None:
    """No file below ``root`` holds the token, and no link is left in it."""
    for dirpath, dirnames, names in os.walk(root):
        for name in dirnames + names:
            full = Path(dirpath) / name
            assert not full.is_symlink(), f"{full} is a link"
            if full.is_file():
                assert TOKEN.encode() not in full.read_bytes(), f"{full} holds the machine's secret"


def link_targets(secrets: Path) -> dict[str, str]:
    """Link name -> target: absolute, climbing with ``..``, a directory, dangling."""
    return {
        "cluster.yaml": str(secrets / "kubeconfig.yaml"),
        "leak.yaml": str(secrets / "leak.yaml"),
        # from up/pkg/ (and pkgs/upstream/, ours/local/) two levels up is the test's temp directory
        "climb.yaml": "../../machine/kubeconfig.yaml",
        "linked": str(secrets / "dir"),
        "dangling.yaml": str(secrets / "missing.yaml"),
    }


def add_links(root: Path, targets: dict[str, str]) -> None:
    for name, target in targets.items():
        (root / name).symlink_to(target)


def run_update(argv: list[str]) -> tuple[int, float]:
    """``krm-merge update`` in this process (module bounds lowered by a test apply): exit code, seconds."""
    start = time.monotonic()
    rc = update.main(argv)
    return rc, time.monotonic() - start


def run_guarded(argv: list[str]) -> tuple[int, str]:
    """``krm-merge update`` in a child stopped after the hang guard (what would block is in the test):
    exit code, stderr."""
    proc = subprocess.run([sys.executable, "-m", "krm_merge", "update", *argv], capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    return proc.returncode, proc.stderr


# -- symbolic links in a git upstream -------------------------------------------------------------


def test_links_in_a_git_upstream_are_skipped_with_a_warning_as_kpt_skips_them(
    world: World, secrets: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    add_links(world.up / "pkg", link_targets(secrets))
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    assert world.git("ls-files", "-s", "pkg/cluster.yaml").startswith("120000")  # committed as a link
    capsys.readouterr()
    assert world.both("v2") == (0, 0)
    err = capsys.readouterr().err
    for name in link_targets(secrets):
        assert f"upstream: {name}: a symbolic link; not read and not copied" in err
        assert not (world.our_pkg / name).exists() and not (world.our_pkg / name).is_symlink()
        assert not (world.kpt_pkg / name).exists()  # kpt's result holds neither the link nor its content
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()
    assert_no_secret(world.our_pkg)
    assert_no_secret(world.kpt_pkg)


def test_a_link_replacing_a_file_upstream_does_not_bring_the_target(world: World, secrets: Path) -> None:
    world.commit({"cm.yaml": cm("cm", "1"), "notes.txt": "plain\n"}, tag="v1")
    world.get("v1")
    for name in ("cm.yaml", "notes.txt"):
        (world.up / "pkg" / name).unlink()
        (world.up / "pkg" / name).symlink_to(secrets / "kubeconfig.yaml")
    world.commit({}, tag="v2")
    assert world.update_ours("v2") == 0
    assert_no_secret(world.our_pkg)


def test_a_link_in_the_origin_version_is_not_read(world: World, secrets: Path) -> None:
    (world.up / "pkg").mkdir(exist_ok=True)
    add_links(world.up / "pkg", {"cluster.yaml": str(secrets / "kubeconfig.yaml")})
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    assert world.update_ours("v2") == 0
    assert_no_secret(world.our_pkg)


# -- the same hostile trees as --origin/--upstream directories ---------------------------------------


def dir_copies(tmp_path: Path) -> tuple[Path, Path, Path]:
    local, origin, upstream = (tmp_path / "pkgs" / n for n in ("local", "origin", "upstream"))
    for root in (local, origin, upstream):
        write_tree(root, {"Kptfile": kptfile("p"), "cm.yaml": cm("cm", "1")})
    write_tree(upstream, {"cm.yaml": cm("cm", "2")})
    return local, origin, upstream


def test_links_in_upstream_and_origin_directories_are_skipped(
    tmp_path: Path, secrets: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    local, origin, upstream = dir_copies(tmp_path)
    targets = link_targets(secrets)
    add_links(upstream, targets)
    add_links(origin, targets)
    rc, _ = run_update([str(local), "--origin", str(origin), "--upstream", str(upstream)])
    assert rc == 0
    err = capsys.readouterr().err
    assert all(f"upstream: {name}: a symbolic link" in err for name in targets)
    assert '"2"' in (local / "cm.yaml").read_text()
    assert_no_secret(local)


def test_a_fifo_in_an_upstream_directory_is_skipped_not_read(tmp_path: Path) -> None:
    local, origin, upstream = dir_copies(tmp_path)
    os.mkfifo(upstream / "pipe.yaml")  # reading it would block forever
    rc, err = run_guarded([str(local), "--origin", str(origin), "--upstream", str(upstream)])
    assert rc == 0, err
    assert "upstream: pipe.yaml: not a regular file" in err
    assert not (local / "pipe.yaml").exists()


def test_run_still_reads_links_of_the_users_own_package(tmp_path: Path, secrets: Path) -> None:
    """``run`` reads the user's package as kpt fn source does (links to files followed): the strict rule is update's."""
    from krm_merge.krm import package

    pkg = tmp_path / "mine"
    write_tree(pkg, {"Kptfile": kptfile("p")})
    (pkg / "cluster.yaml").symlink_to(secrets / "kubeconfig.yaml")
    _, rl = package.read_package(pkg)
    assert [item.name for item in rl.items if item.kind == "Config"] == ["kubeconfig"]


# -- names, counts and sizes -------------------------------------------------------------------------


@pytest.mark.parametrize(("names", "message"), [
    (["bad\x01name.yaml"], "control character"),
    (["line\nbreak.txt"], "control character"),
    (["Service.yaml", "service.yaml"], "case-insensitive"),
    (["dir/A.txt", "dir/a.txt"], "case-insensitive"),
])
def test_bad_names_in_a_git_upstream_are_refused(
    world: World, names: list[str], message: str, capsys: pytest.CaptureFixture[str],
) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({name: "x: 1\n" for name in names}, tag="v2")
    before = {p: p.read_bytes() for p in world.our_pkg.rglob("*") if p.is_file()}
    assert world.update_ours("v2") == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "upstream" in err
    assert {p: p.read_bytes() for p in world.our_pkg.rglob("*") if p.is_file()} == before


def test_bad_names_in_an_upstream_directory_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local, origin, upstream = dir_copies(tmp_path)
    (upstream / "tab\there.yaml").write_text(cm("t", "1"))
    rc, _ = run_update([str(local), "--origin", str(origin), "--upstream", str(upstream)])
    assert rc == 1
    assert "'tab\\there.yaml'" in capsys.readouterr().err
    assert '"1"' in (local / "cm.yaml").read_text()


# -- .git and krm-merge's own names in another spelling -----------------------------------------------

FSMONITOR = "[core]\n\tfsmonitor = touch pwned-by-upstream\n"  # runs on the user's next `git status`
# The spelling, whether it arrives as a folder, and what it is on macOS or Windows (git's t0060 and t1014 lists,
# and krm-merge's names folded the same ways).
LOOK_ALIKES = [
    (".GIT", True, ".git"), (".Git", True, ".git"), (".git.", True, ".git"), (".git ", True, ".git"),
    (".git . .", True, ".git"), ("git~1", True, ".git"), ("GIT~1", True, ".git"),
    (".git::$INDEX_ALLOCATION", True, ".git"), (".g\u200cit", True, ".git"), (".gi\u200dt", True, ".git"),
    ("\ufeff.git", True, ".git"),
    (".Krm-Merge.Conflicts", False, ".krm-merge.conflicts"), ("KRM-ME~1.CON", False, ".krm-merge.conflicts"),
    (".KRM-MERGE.TXN", True, ".krm-merge.txn"), ("kr3cb9~1.txn", True, ".krm-merge.txn"),
    (".krm-merge.lock.", False, ".krm-merge.lock"), (".Krm-Merge.Lock", False, ".krm-merge.lock"),
]


def look_alike_files(name: str, folder: bool) -> dict[str, str]:
    """What an attacker puts under the name: a repository's config with a command in it, or a forged ledger."""
    return {f"{name}/config": FSMONITOR, f"{name}/HEAD": "ref: refs/heads/main\n"} if folder else {name: "{}\n"}


def git_out(world: World, *args: str, data: bytes = b"") -> str:
    proc = subprocess.run(["git", *args], cwd=world.up, env=world.env, input=data, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().strip()


def commit_tree_with(world: World, name: str, folder: bool, tag: str) -> None:
    """Commit ``name`` into ``pkg/`` as git's plumbing writes any tree (git add refuses these names; a server
    sends them all the same), on top of what is committed, and tag it."""
    def mktree(lines: list[bytes]) -> str:
        return git_out(world, "mktree", "-z", data=b"".join(line + b"\0" for line in lines))

    def blob(text: str) -> str:
        return git_out(world, "hash-object", "-w", "--stdin", data=text.encode())

    entries = {rel.partition("/")[2]: blob(text) for rel, text in look_alike_files(name, folder).items()}
    if folder:
        inner = mktree([f"100644 blob {oid}\t{rel}".encode() for rel, oid in entries.items()])
        entry = f"040000 tree {inner}\t{name}".encode()
    else:
        entry = f"100644 blob {blob('{}' + chr(10))}\t{name}".encode()
    package = mktree([*(e for e in git_out(world, "ls-tree", "-z", "HEAD:pkg").encode().split(b"\0") if e), entry])
    root = mktree([f"040000 tree {package}\tpkg".encode()])
    world.git("tag", tag, git_out(world, "commit-tree", root, "-p", "HEAD", "-m", tag))


def assert_left_out(local: Path, name: str, protected: str, stderr: str) -> None:
    """Nothing of the look-alike is in the package, and the warning names its spelling (escaped) and the name."""
    assert not os.path.lexists(local / name) and "pwned" not in "".join(
        p.read_text() for p in local.rglob("*") if p.is_file()), os.listdir(local)
    shown = name.replace("\u200c", "\\u200c").replace("\u200d", "\\u200d").replace("\ufeff", "\\ufeff")
    whose = "a git repository's own folder" if protected == ".git" else "a name krm-merge keeps its own state under"
    assert f"warning: upstream: {shown}: {protected} on some file systems (" in stderr and whose in stderr, stderr
    assert '"2"' in (local / "cm.yaml").read_text() and "Traceback" not in stderr  # the rest of the update went on


@pytest.mark.parametrize(("name", "folder", "protected"), LOOK_ALIKES, ids=[ascii(n) for n, _, _ in LOOK_ALIKES])
def test_another_spelling_of_git_or_krm_merges_names_in_a_git_upstream_is_left_out(
    world: World, name: str, folder: bool, protected: str,
) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    fetched_by_hand(world, v1)
    world.commit({"cm.yaml": cm("cm", "2")})
    commit_tree_with(world, name, folder, "v2")
    assert name in git_out(world, "ls-tree", "--name-only", "-z", "v2:pkg").split("\0")
    update = subprocess.run([sys.executable, "-m", "krm_merge", "update", f"{world.our_pkg}@v2"], env=world.env,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert update.returncode == 0, update.stderr
    assert_left_out(world.our_pkg, name, protected, update.stderr)


@pytest.mark.parametrize(("name", "folder", "protected"), LOOK_ALIKES, ids=[ascii(n) for n, _, _ in LOOK_ALIKES])
def test_another_spelling_of_git_or_krm_merges_names_in_an_upstream_directory_is_left_out(
    tmp_path: Path, name: str, folder: bool, protected: str,
) -> None:
    local, origin, upstream = dir_copies(tmp_path)
    write_tree(upstream, look_alike_files(name, folder))
    update = subprocess.run([sys.executable, "-m", "krm_merge", "update", str(local), "--origin", str(origin),
                             "--upstream", str(upstream)], capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert update.returncode == 0, update.stderr
    assert_left_out(local, name, protected, update.stderr)


def test_too_many_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(files, "MAX_TREE_FILES", 10)
    local, origin, upstream = dir_copies(tmp_path)
    write_tree(upstream, {f"many/f{i}.txt": "x\n" for i in range(20)})
    assert run_update([str(local), "--origin", str(origin), "--upstream", str(upstream)])[0] == 1
    assert "upstream: more than 10 files; refused" in capsys.readouterr().err
    assert not (local / "many").exists()


def test_too_many_bytes_in_all_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(files, "MAX_TREE_BYTES", 4096)
    local, origin, upstream = dir_copies(tmp_path)
    write_tree(upstream, {f"f{i}.txt": "x" * 1000 for i in range(5)})
    assert run_update([str(local), "--origin", str(origin), "--upstream", str(upstream)])[0] == 1
    assert "upstream: more than 4096 bytes in all; refused" in capsys.readouterr().err


def test_a_huge_file_in_a_git_upstream_is_refused_before_it_is_read(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({"blob.bin": "x" * 300_000}, tag="v2")
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "0.1")
    rc, elapsed = run_update([f"{world.our_pkg}@v2"])
    assert rc == 1 and elapsed < HANG_GUARD_S
    err = capsys.readouterr().err
    assert "blob.bin" in err and "Traceback" not in err
    assert not (world.our_pkg / "blob.bin").exists()


# -- Kptfile fields an upstream author writes -------------------------------------------------------


def remote_sub(repo: str, directory: str = "/pkg", ref: str = "main", commit: str | None = None) -> str:
    lock = (f"upstreamLock:\n  type: git\n  git:\n    repo: {repo}\n    directory: {directory}\n"
            f"    ref: {ref}\n    commit: {commit}\n") if commit else ""
    return kptfile("sub", f"upstream:\n  type: git\n  git:\n    repo: {repo}\n    directory: {directory}\n    ref: {ref}\n{lock}")


def root_repo(world: World) -> str:
    text = (world.our_pkg / "Kptfile").read_text()
    return next(line.split("repo:", 1)[1].strip() for line in text.splitlines() if "repo:" in line)


@pytest.mark.parametrize(("field", "kwargs", "message"), [
    ("repo", {"repo": "'--upload-pack=touch {marker}'"}, "upstream.git.repo '--upload-pack=touch"),
    ("ref", {"ref": "'--output={marker}'"}, "upstream.git.ref '--output="),
    ("directory", {"directory": "/../../machine"}, "holds '..'"),
    ("commit", {"commit": "'--upload-pack=touch {marker}'"}, "upstreamLock.git.commit"),
    ("ext", {"repo": "'ext::sh -c touch% {marker}'"}, "ext:: transport"),
])
def test_malicious_kptfile_fields_of_a_remote_subpackage_are_refused(
    world: World, field: str, kwargs: dict[str, str], message: str, capsys: pytest.CaptureFixture[str],
) -> None:
    marker = world.tmp / "pwned"
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    args = {"repo": root_repo(world), **{k: v.format(marker=marker) for k, v in kwargs.items()}}
    world.commit({"sub/Kptfile": remote_sub(**args)}, tag="v2")
    rc, elapsed = run_update([f"{world.our_pkg}@v2"])
    err = capsys.readouterr().err
    assert rc == 1 and elapsed < HANG_GUARD_S
    assert message in err and "Traceback" not in err, err
    assert f"{world.our_pkg}/sub/Kptfile" in err  # where the user finds it, not the scratch copy
    assert not marker.exists()
    assert not (world.our_pkg / "sub").exists()


def test_a_local_repository_named_only_by_upstream_needs_the_users_permission(
    world: World, secrets: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    private = world.tmp / "private"
    (private / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=private)
    (private / "pkg" / "cluster.yaml").write_text(KUBECONFIG)  # a repository of the machine, not the upstream's
    world.git("add", "-A", cwd=private)
    world.git("commit", "-qm", "private", cwd=private)
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({"sub/Kptfile": remote_sub(str(private))}, tag="v2")
    assert run_update([f"{world.our_pkg}@v2"])[0] == 1
    err = capsys.readouterr().err
    assert "transport 'file' not allowed" in err and "named only by upstream content" in err
    assert_no_secret(world.our_pkg)
    # git's own rule decides: a user who allows the file transport everywhere gets kpt's behaviour.
    for key, value in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "protocol.file.allow"), ("GIT_CONFIG_VALUE_0", "always")):
        monkeypatch.setenv(key, value)
    assert run_update([f"{world.our_pkg}@v2"])[0] == 0
    assert TOKEN in (world.our_pkg / "sub" / "cluster.yaml").read_text()


def test_the_local_repositorys_refusal_is_explained_to_a_user_reading_git_in_another_language(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """git speaks the user's language (LANGUAGE=de); the refusal is still told apart and explained (git has no exit
    status for it: its English words, read under LC_ALL=C, krm_merge.gitexec)."""
    private = world.tmp / "private"
    (private / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=private)
    (private / "pkg" / "cm.yaml").write_text(cm("private", "1"))
    world.git("add", "-A", cwd=private)
    world.git("commit", "-qm", "private", cwd=private)
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({"sub/Kptfile": remote_sub(str(private))}, tag="v2")
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    assert run_update([f"{world.our_pkg}@v2"])[0] == 1
    assert "named only by upstream content" in capsys.readouterr().err
    assert not (world.our_pkg / "sub").exists()


def test_a_ref_or_commit_given_after_at_cannot_be_an_option(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    assert update.main([f"{world.our_pkg}@--upload-pack=touch {world.tmp / 'pwned'}"]) == 1
    assert "begins with '-'" in capsys.readouterr().err
    assert not (world.tmp / "pwned").exists()


# -- subpackage cycles and chains -----------------------------------------------------------------------


def test_a_subpackage_pointing_back_at_its_package_is_refused_at_once(world: World) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({"sub/Kptfile": remote_sub(root_repo(world), "/pkg", "v2")}, tag="v2")
    rc, err = run_guarded([f"{world.our_pkg}@v2"])
    assert rc == 1
    assert "remote subpackages form a cycle" in err and err.count("/pkg@v2") == 2, err
    assert not (world.our_pkg / "sub").exists()


def new_repo(world: World, name: str, content: dict[str, str]) -> Path:
    repo = world.tmp / name
    (repo / "pkg").mkdir(parents=True)
    write_tree(repo / "pkg", content)
    world.git("init", "-q", "-b", "main", cwd=repo)
    world.git("add", "-A", cwd=repo)
    world.git("commit", "-q", "--allow-empty", "-m", name, cwd=repo)
    return repo


def allow_file_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "protocol.file.allow"), ("GIT_CONFIG_VALUE_0", "always")):
        monkeypatch.setenv(key, value)


def test_a_cycle_through_two_repositories_is_refused(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    allow_file_transport(monkeypatch)  # so that the cycle, not the transport, is what stops it
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    a = root_repo(world)
    b = new_repo(world, "b", {"Kptfile": kptfile("b"), "back/Kptfile": remote_sub(a, "/pkg", "main")})
    world.commit({"to-b/Kptfile": remote_sub(f"file://{b}", "/pkg", "main")})
    rc, err = run_guarded([str(world.our_pkg)])
    assert rc == 1
    assert f"form a cycle: {a}/pkg@main -> file://{b}/pkg@main -> {a}/pkg@main" in err, err
    assert not (world.our_pkg / "to-b").exists()


def chain_repo(world: World, length: int) -> str:
    """One repository whose package d0 holds a remote subpackage d1, which holds d2, ... (no cycle)."""
    url = f"file://{world.tmp / 'chain'}"
    content = {f"d{i}/Kptfile": kptfile(f"d{i}") for i in range(length)}
    content.update({f"d{i}/next/Kptfile": remote_sub(url, f"/d{i + 1}", "main") for i in range(length - 1)})
    new_repo(world, "chain", {})
    write_tree(world.tmp / "chain", content)
    world.git("add", "-A", cwd=world.tmp / "chain")
    world.git("commit", "-qm", "chain", cwd=world.tmp / "chain")
    return url


def test_a_deep_chain_of_remote_subpackages_is_bounded(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    allow_file_transport(monkeypatch)
    monkeypatch.setattr(update_git, "MAX_SUBPACKAGE_DEPTH", 3)
    url = chain_repo(world, 6)
    pkg = world.tmp / "deep"
    write_tree(pkg, {"Kptfile": kptfile("deep")})
    write_tree(pkg, {"top/Kptfile": remote_sub(url, "/d0", "main")})
    rc, elapsed = run_update([str(pkg / "top")])
    err = capsys.readouterr().err
    assert rc == 1 and elapsed < HANG_GUARD_S
    assert "nested more than 3 deep" in err and f"{url}/d3@main" in err, err


def test_a_chain_within_the_bound_is_updated(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    allow_file_transport(monkeypatch)
    url = chain_repo(world, 3)
    pkg = world.tmp / "shallow"
    write_tree(pkg, {"Kptfile": remote_sub(url, "/d0", "main")})
    assert update.main([str(pkg)]) == 0
    assert (pkg / "next" / "next" / "Kptfile").is_file()


def test_the_number_of_remote_subpackages_is_bounded(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(update_git, "MAX_SUBPACKAGES", 2)
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"leaf/x.yaml": cm("x", "1")}, tag="leaf")
    world.get("v1")
    repo = root_repo(world)
    world.commit({f"s{i}/Kptfile": remote_sub(repo, "/pkg/leaf", "leaf") for i in range(3)}, tag="v2")
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    assert f"{world.our_pkg}/s2/Kptfile: more than 2 remote subpackages" in capsys.readouterr().err
    assert not (world.our_pkg / "s0").exists()


def test_git_cannot_be_told_to_leave_the_repository_through_directory(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The root Kptfile too: a directory with '..' is refused by the check, before git runs at all."""
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    text = (world.our_pkg / "Kptfile").read_text().replace("directory: /pkg", "directory: /pkg/../..", 1)
    (world.our_pkg / "Kptfile").write_text(text)
    calls: list[object] = []
    real_run = subprocess.run

    def spy(cmd: list[str], *a: object, **k: object) -> object:
        calls.append(cmd)
        return real_run(cmd, *a, **k)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", spy)
    assert update.main([str(world.our_pkg)]) == 1
    assert "holds '..'" in capsys.readouterr().err
    assert calls == []


# -- .krmignore ------------------------------------------------------------------------------------


def test_an_upstream_krmignore_cannot_hide_a_resource_from_the_merge(tmp_path: Path) -> None:
    """Which files are resources is local's ``.krmignore``'s to say: one upstream adds cannot make a resource look
    deleted upstream (kpt reads each copy with its own, and deletes local's unchanged copy)."""
    local, origin, upstream = dir_copies(tmp_path)
    (upstream / ".krmignore").write_text("cm.yaml\n")
    before = (local / "cm.yaml").read_text()
    rc, err = run_guarded([str(local), "--origin", str(origin), "--upstream", str(upstream)])
    assert rc == 0, err
    assert (local / "cm.yaml").exists() and (local / "cm.yaml").read_text() != before  # upstream's change taken
    assert "deleted" not in err
