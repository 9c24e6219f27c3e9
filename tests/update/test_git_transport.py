"""The git transport of ``update`` (``upstream/git.py``, ``upstream/gitread.py``) against real git.

* trees an attacker writes object by object (``git hash-object --literally``:
  names git's own commands would never write, links and folders under one
  name, nesting past the bound) are refused before anything is written;
* an upstream of huge files that compress to nothing (a few MB of ``.git``)
  is refused at the blobs' sizes, in a child process whose memory is capped
  (``RLIMIT_AS``) and measured (``RUSAGE_CHILDREN``);
* a failing git keeps its own words in the error (bounded, control
  characters escaped);
* the cache's lock files go away, and a lock another process holds is
  never removed;
* on a cold cache the ref is resolved inside the trees' fetch (5 requests on
  2 connections over HTTP), to what the listing resolves it, fetching no ref
  an upstream names like it, and a run killed half-way leaves a usable cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from krm_merge import files, gitexec
from krm_merge.commands import update
from krm_merge.krm.results import KrmError
from krm_merge.upstream import git as gitmod
from krm_merge.upstream import gitread
from tests.git_http import GitHttpServer

from .world import World, cm, fetched_by_hand, filtering_world, spy_git

pytestmark = pytest.mark.e2e

HANG_GUARD_S = 120  # far above what each run here takes (a few seconds)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return filtering_world(tmp_path, monkeypatch)


def git_bytes(world: World, *args: str, data: bytes = b"") -> str:
    proc = subprocess.run(["git", *args], cwd=world.up, env=world.env, input=data, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().strip()


def blob(world: World, data: bytes) -> str:
    return git_bytes(world, "hash-object", "-w", "--stdin", data=data)


def raw_tree(world: World, entries: list[tuple[str, bytes, str]]) -> str:
    """A tree object written as given, in the given order: (mode, name, object id)."""
    data = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return git_bytes(world, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", data=data)


def commit_package(world: World, package_tree: str, tag: str) -> str:
    """A commit whose ``pkg/`` is ``package_tree``, tagged ``tag``."""
    root = raw_tree(world, [("40000", b"pkg", package_tree)])
    commit = git_bytes(world, "commit-tree", root, "-p", "HEAD", "-m", tag)
    world.git("tag", tag, commit)
    return commit


def unchanged(world: World) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in world.our_pkg.rglob("*") if p.is_file()}


# -- what goes over the wire ----------------------------------------------------------------------------


def served(world: World, tmp_path: Path) -> Path:
    """A bare copy of ``world``'s upstream (every ref) to serve over HTTP, partial fetches allowed (as GitHub's)."""
    root = tmp_path / "served"
    root.mkdir()
    world.git("clone", "-q", "--bare", str(world.up), str(root / "up.git"))
    world.git("--git-dir", str(root / "up.git"), "config", "uploadpack.allowFilter", "true")
    return root


def test_over_smart_http_a_cold_update_makes_two_round_trips_and_a_warm_one_one(world: World, tmp_path: Path) -> None:
    """Served by ``git http-backend`` (tests/git_http.py): a cold update fetches the two commits with their trees,
    the ref resolved inside that fetch (one connection: git's capability request, the listing of the candidate
    refs, the fetch), then the package's files (one connection, two requests); the same update again (warm)
    lists the refs only.  kpt makes 3 connections and 9 requests either way (bench/cases_cold_fetch.py); before
    issue 33's cold path, 3 connections and 6 requests."""
    v1 = world.commit({"cm.yaml": cm("cm", "1"), "../other/big.yaml": cm("big", "x" * 5000)}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2"), "new.yaml": cm("new", "n")}, tag="v2")
    with GitHttpServer(served(world, tmp_path)) as server:
        fetched_by_hand(world, v1, repo=server.url("up.git"))
        copy = tmp_path / "copy"
        shutil.copytree(world.our_pkg, copy)
        assert update.main([f"{world.our_pkg}@v2"]) == 0
        assert (server.connections, server.requests) == (2, [
            "GET /up.git/info/refs?service=git-upload-pack", "POST /up.git/git-upload-pack",
            "POST /up.git/git-upload-pack",
            "GET /up.git/info/refs?service=git-upload-pack", "POST /up.git/git-upload-pack"])
        assert (world.our_pkg / "new.yaml").is_file() and '"2"' in (world.our_pkg / "cm.yaml").read_text()
        server.reset_counts()
        assert update.main([f"{copy}@v2"]) == 0
        assert (server.connections, len(server.requests)) == (1, 2)
    assert (copy / "new.yaml").read_bytes() == (world.our_pkg / "new.yaml").read_bytes()
    assert (copy / "Kptfile").read_bytes() == (world.our_pkg / "Kptfile").read_bytes()


# -- the ref resolved on a cold cache: kpt's rules, as the listing resolves it --------------------------


def lock_of(package: Path) -> tuple[str, str]:
    """(upstreamLock.git.ref, upstreamLock.git.commit) of ``package``'s Kptfile."""
    lock = (package / "Kptfile").read_text().split("upstreamLock:")[1]
    return (lock.split("\n    ref: ")[1].split("\n")[0], lock.split("\n    commit: ")[1].split("\n")[0])


def refs_world(world: World) -> dict[str, str]:
    """An upstream holding every kind of ref kpt resolves: name -> the commit it names (peeled)."""
    ids = {"v1": world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")}
    ids["pkg/v2"] = world.commit({"cm.yaml": cm("cm", "pkg-v2")}, tag="pkg/v2")  # kpt's tag for the package dir
    ids["v2"] = world.commit({"cm.yaml": cm("cm", "v2")}, tag="v2")  # the plain tag, which pkg/v2 wins over
    ids["plain"] = world.commit({"cm.yaml": cm("cm", "plain")}, tag="plain")
    ids["ann"] = world.commit({"cm.yaml": cm("cm", "ann")})
    world.git("tag", "-a", "ann", "-m", "annotated")
    world.git("tag", "-a", "annann", "-m", "a tag of a tag", "ann")  # peeled to the commit, as ls-remote's ^{}
    ids["annann"] = ids["ann"]
    ids["both"] = world.commit({"cm.yaml": cm("cm", "both-tag")}, tag="both")  # a tag and a branch: the tag wins
    world.git("branch", "both", world.commit({"cm.yaml": cm("cm", "both-branch")}))
    ids["rel"] = world.commit({"cm.yaml": cm("cm", "rel")})
    world.git("branch", "rel")
    # names a glob refs/tags/v2* would also match, each at a commit of its own: never fetched
    for name in ("v20", "v2.1", "v2-rc", "v2\u00e9"):
        world.commit({"cm.yaml": cm("cm", name)}, tag=name)
    world.git("branch", "v2/x")
    world.commit({"cm.yaml": cm("cm", "main")})
    return ids


RESOLVED = {  # ref asked -> (ref kpt locks, the name in refs_world of the commit it locks)
    "v2": ("pkg/v2", "pkg/v2"), "plain": ("plain", "plain"), "rel": ("rel", "rel"), "ann": ("ann", "ann"),
    "annann": ("annann", "annann"), "both": ("both", "both"),
}


@pytest.mark.parametrize("ref", sorted(RESOLVED))
def test_a_cold_update_resolves_the_ref_as_the_listing_does(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: str,
) -> None:
    """Package tags first, then the tag, then the branch; annotated tags peeled: the lock written on a cold cache
    (the ref resolved inside the fetch) is the lock written on a warm one (``ls-remote``), which is kpt's."""
    ids = refs_world(world)
    fetched_by_hand(world, ids["v1"])
    copy = tmp_path / "copy"
    shutil.copytree(world.our_pkg, copy)
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@{ref}"]) == 0
    assert "ls-remote" not in [c[1] for c in calls]  # cold: resolved inside the trees' fetch
    calls.clear()
    assert update.main([f"{copy}@{ref}"]) == 0
    assert "ls-remote" in [c[1] for c in calls]  # warm: listed first, as before
    locked, name = RESOLVED[ref]
    assert lock_of(world.our_pkg) == lock_of(copy) == (locked, ids[name])
    assert (world.our_pkg / "cm.yaml").read_bytes() == (copy / "cm.yaml").read_bytes()
    assert (world.our_pkg / "Kptfile").read_bytes() == (copy / "Kptfile").read_bytes()
    cache = next((Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git"))
    assert world.git("--git-dir", str(cache), "for-each-ref", "refs/krm-merge/probe/") == ""  # probes dropped


def test_a_package_tag_that_begins_with_the_ref_is_found_on_a_cold_cache(world: World, tmp_path: Path) -> None:
    """Directory ``/v2`` and ref ``v2``: kpt's first candidate is the tag ``v2/v2``, which a refspec excluding the
    names one byte longer than ``v2`` would drop (then the branch ``v2`` would win): resolved as the listing does."""
    package_tag = world.commit({"cm.yaml": cm("cm", "1")}, tag="v2/v2")
    world.git("branch", "v2", world.commit({"cm.yaml": cm("cm", "2")}))
    repo = f"file://{world.up}"
    cold = gitmod.GitCache(tmp_path / "cold")
    cold.trust([repo])
    listed = gitmod.GitCache(tmp_path / "listed")
    listed.trust([repo])
    assert cold.resolve_package_ref(repo, "/v2", "v2", fetching=[]) == listed.resolve_package_ref(repo, "/v2", "v2") \
        == ("v2/v2", package_tag)


def cached_commits(world: World) -> set[str]:
    (cache,) = (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git")
    out = world.git("--git-dir", str(cache), "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    return {oid for oid, kind in (line.split() for line in out.splitlines()) if kind == "commit"}


def test_a_cold_update_fetches_no_commit_of_the_names_a_glob_would_also_match(world: World) -> None:
    """An upstream adds a thousand refs beginning with the ref's name (tags and branches ``v2-0001``...,
    ``v20``, ``v2.1``, ``v2é``, ``v2/x``), each at a commit with a tree of its own: the cold update's fetch
    takes the exact names only (one more byte excluded by a negative refspec each), so the cache holds the
    origin's and the upstream's commits and nothing else."""
    ids = refs_world(world)
    fetched_by_hand(world, ids["v1"], directory="/")
    stream = []
    for n in range(1000):
        body = f"evil {n}\n".encode()
        stream += [b"blob", f"mark :{n + 1}".encode(), f"data {len(body)}".encode(), body]
        kind = "tags" if n % 2 else "heads"
        stream += [f"commit refs/{kind}/v2-{n:04}".encode(), b"committer e <e@e> 0 +0000", b"data 0",
                   f"M 100644 :{n + 1} evil.yaml".encode(), b""]
    proc = subprocess.run(["git", "fast-import", "--quiet"], cwd=world.up, env=world.env,
                          input=b"\n".join(stream) + b"\n", capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(world.git("for-each-ref", "refs/tags/v2*", "refs/heads/v2*").splitlines()) > 1000
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert lock_of(world.our_pkg) == ("v2", ids["v2"])
    assert cached_commits(world) == {ids["v1"], ids["v2"]}


def test_a_ref_that_does_not_exist_is_the_same_error_cold_and_warm(
    world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ids = refs_world(world)
    fetched_by_hand(world, ids["v1"])
    before = unchanged(world)
    assert update.main([f"{world.our_pkg}@nope"]) == 1
    cold = capsys.readouterr().err
    assert f"ref 'nope' not found in file://{world.up}" in cold and "Traceback" not in cold
    assert unchanged(world) == before
    assert update.main([f"{world.our_pkg}@nope"]) == 1  # the cache now holds the repository: listed first
    assert capsys.readouterr().err == cold


def test_a_commit_id_is_taken_as_it_is_and_fetched_with_the_origin(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = refs_world(world)
    fetched_by_hand(world, ids["v1"])
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@{ids['plain']}"]) == 0
    assert lock_of(world.our_pkg) == (ids["plain"], ids["plain"])
    assert "ls-remote" not in [c[1] for c in calls] and len([c for c in calls if "fetch" in c]) == 2


KILL_AT_UPDATE_REF = textwrap.dedent("""\
    #!/bin/sh
    # git, except that the process which runs `git update-ref` is killed (SIGKILL) before it does
    for arg in "$@"; do
        if [ "$arg" = update-ref ]; then kill -9 $PPID; sleep 5; exit 1; fi
    done
    exec {git} "$@"
""")


def test_a_cold_update_killed_between_its_fetch_and_its_refs_leaves_a_cache_the_next_update_uses(
    world: World, tmp_path: Path,
) -> None:
    """Killed after the trees' fetch wrote its probe refs and before they were replaced: the next update (warm:
    the repository is there) lists the refs, fetches what has no ``refs/krm-merge/`` ref, and is right."""
    ids = refs_world(world)
    fetched_by_hand(world, ids["v1"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(KILL_AT_UPDATE_REF.format(git=shutil.which("git")))
    (bin_dir / "git").chmod(0o755)
    before = unchanged(world)
    env = {**world.env, "PATH": f"{bin_dir}{os.pathsep}{world.env['PATH']}"}
    killed = subprocess.run([sys.executable, "-m", "krm_merge", "update", f"{world.our_pkg}@plain"], env=env,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert killed.returncode == -9, killed.stderr
    # nothing written (the package's lock file stays, the kernel released its flock: taken over next time)
    assert {k: v for k, v in unchanged(world).items() if not k.endswith(".krm-merge.lock")} == before
    root = Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git"
    (cache,) = root.glob("*.git")
    assert world.git("--git-dir", str(cache), "for-each-ref", "refs/krm-merge/probe/") != ""  # killed there
    done = subprocess.run([sys.executable, "-m", "krm_merge", "update", f"{world.our_pkg}@plain"], env=world.env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    assert lock_of(world.our_pkg) == ("plain", ids["plain"]) and '"plain"' in (world.our_pkg / "cm.yaml").read_text()
    assert [p.name for p in root.iterdir() if ".cloning." in p.name or p.name.endswith(".lock")] == []


# -- reading a package directory out of the cache ----------------------------------------------------


def test_the_reading_writes_files_folders_links_and_modes_as_committed(world: World, tmp_path: Path) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    script = blob(world, b"#!/bin/sh\necho hi\n")
    inner = raw_tree(world, [("100644", b"a.yaml", blob(world, b"a: 1\n"))])
    pkg = raw_tree(world, [
        ("100755", b"run.sh", script), ("40000", b"d", inner), ("120000", b"l", blob(world, b"/etc/passwd")),
        ("160000", b"sub", v1),  # a submodule: git archive and kpt's checkout leave an empty folder
    ])
    v2 = commit_package(world, pkg, "v2")
    dest = tmp_path / "dest"
    cache = gitmod.GitCache(tmp_path / "cache")
    cache.trust([f"file://{world.up}"])
    assert cache.read_versions([gitmod.Version(f"file://{world.up}", v2, "/pkg", dest, "upstream")], lambda: 7) == 7
    assert (dest / "d" / "a.yaml").read_bytes() == b"a: 1\n"
    assert os.access(dest / "run.sh", os.X_OK) and not os.access(dest / "d" / "a.yaml", os.X_OK)
    assert os.readlink(dest / "l") == "/etc/passwd"  # a link stays a link: the caller prunes it
    assert (dest / "sub").is_dir() and not list((dest / "sub").iterdir())
    assert sorted(p.name for p in dest.iterdir()) == ["d", "l", "run.sh", "sub"]


@pytest.mark.parametrize(("entries", "message"), [
    ([("100644", b"..", "BLOB")], "'..'"),
    ([("100644", b".", "BLOB")], "'.'"),
    ([("100644", b"a/b.yaml", "BLOB")], "a slash"),
    ([("100644", b"x\x1b]52;c;aGk=\x07.yaml", "BLOB")], "control character"),
    ([("120000", b"l", "LINK"), ("40000", b"l", "TREE")], "l"),  # a link and a folder under one name
    ([("100644", b"x", "BLOB"), ("100644", b"x", "BLOB")], "x"),  # one name twice
])
def test_a_tree_git_itself_would_not_write_is_refused_before_anything_is_written(
    world: World, tmp_path: Path, entries: list[tuple[str, bytes, str]], message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    outside = tmp_path / "outside"
    outside.mkdir()
    ids = {"BLOB": blob(world, b"x: 1\n"), "LINK": blob(world, str(outside).encode()),
           "TREE": raw_tree(world, [("100644", b"x.yaml", blob(world, b"through the link\n"))])}
    commit_package(world, raw_tree(world, [(mode, name, ids[oid]) for mode, name, oid in entries]), "v2")
    fetched_by_hand(world, v1)
    before = unchanged(world)
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and message in err and "Traceback" not in err
    assert unchanged(world) == before
    assert not list(outside.iterdir())  # nothing written through the link


def test_folders_nested_past_the_bound_are_refused_before_any_blob_is_fetched(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(gitread.files, "MAX_TREE_DEPTH", 5)  # the one depth bound of trees from elsewhere
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    tree = raw_tree(world, [("100644", b"deep.yaml", blob(world, b"x: 1\n"))])
    for _ in range(8):
        tree = raw_tree(world, [("40000", b"d", tree)])
    commit_package(world, tree, "v2")
    fetched_by_hand(world, v1)
    calls: list[list[str]] = []
    real = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, *a, **k: calls.append(cmd) or real(cmd, *a, **k))
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    assert "nested more than 5 deep; refused" in capsys.readouterr().err
    assert not [c for c in calls if "--stdin" in c and "fetch" in c]  # refused from the trees alone


def test_more_files_than_the_bound_are_refused_before_any_blob_is_fetched(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(gitmod.gitread.files, "MAX_TREE_FILES", 10)
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({f"many/f{i}.yaml": f"i: {i}\n" for i in range(20)}, tag="v2")
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    assert "upstream: more than 10 files; refused" in capsys.readouterr().err
    cache = next((Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git"))
    out = world.git("--git-dir", str(cache), "cat-file", "--batch-all-objects", "--batch-check=%(objecttype)")
    assert "blob" not in out.split()  # the trees said enough: no file was fetched


def test_a_tree_object_over_the_read_bound_is_refused(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(gitread, "MAX_OBJECT_READ", 200)  # a tree of ten entries is ~300 bytes
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({f"f{i}.yaml": f"i: {i}\n" for i in range(10)}, tag="v2")
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    err = capsys.readouterr().err
    assert "(tree) of" in err and "bytes in the git cache; refused" in err and "Traceback" not in err


def test_thousands_of_files_are_read_in_one_pass(world: World) -> None:
    """3,000 files: far more blob ids than a pipe holds, in each direction of each git the reading talks to."""
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({f"many/f{i:04}.yaml": cm(f"f{i}", str(i)) for i in range(3000)}, tag="v2")
    fetched_by_hand(world, v1)
    start = time.monotonic()
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert time.monotonic() - start < HANG_GUARD_S
    assert len(list((world.our_pkg / "many").iterdir())) == 3000
    assert '"2999"' in (world.our_pkg / "many" / "f2999.yaml").read_text()


# -- huge files that compress to nothing ------------------------------------------------------------

ZEROS_MB = 500
CHILD_MEMORY_LIMIT = 1 << 30  # RLIMIT_AS of the update: 1 GiB of address space for 2.5 GB of files
PEAK_RSS_BOUND_KB = 256 * 1024  # the largest process of the update (python or any git) stays below this


def zeros_blob(world: World, megabytes: int) -> str:
    """A blob of ``megabytes`` MB of zeros, written by git straight into a pack (a few MB once deflated)."""
    sparse = world.tmp / "zeros.bin"
    with open(sparse, "wb") as out:
        out.truncate(megabytes * 1_000_000)
    try:  # above core.bigFileThreshold git streams a file into a pack instead of reading it into memory
        return git_bytes(world, "-c", "core.bigFileThreshold=1m", "hash-object", "-w", str(sparse))
    finally:
        sparse.unlink()


MEASURE = textwrap.dedent("""
    import resource, subprocess, sys
    limit = int(sys.argv[1])
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    proc = subprocess.run(sys.argv[2:], preexec_fn=cap, capture_output=True, text=True, timeout=600)
    sys.stdout.write(proc.stderr)
    print("\\nEXIT", proc.returncode, "PEAK_KB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")


def test_five_huge_files_of_zeros_are_refused_at_their_sizes_in_bounded_memory(world: World) -> None:
    """Issue 31: five 500 MB files of zeros (one 500 MB blob, 2.5 MB in the repository, five names) were held
    whole in memory by ``git archive`` before any check: refused at 5.15 GB resident, a MemoryError traceback
    under ``ulimit -v``.  Now they are refused from the blobs' sizes, before one byte of them is read."""
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    zeros = zeros_blob(world, ZEROS_MB)
    entries = [("100644", b"cm.yaml", blob(world, cm("cm", "2").encode()))]
    entries += [("100644", f"zeros{i}.bin".encode(), zeros) for i in range(1, 6)]
    commit_package(world, raw_tree(world, entries), "v2")
    world.git("repack", "-a", "-d", "-q")  # as a server keeps it: packed
    assert sum(p.stat().st_size for p in (world.up / ".git" / "objects").rglob("*") if p.is_file()) < 8 * (1 << 20)
    fetched_by_hand(world, v1)
    before = unchanged(world)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(CHILD_MEMORY_LIMIT), sys.executable, "-m", "krm_merge",
                           "update", f"{world.our_pkg}@v2"], env=world.env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert time.monotonic() - start < HANG_GUARD_S
    err, _, tail = proc.stdout.rpartition("\nEXIT ")
    code, peak_kb = int(tail.split()[0]), int(tail.split()[2])
    assert code == 1, err
    assert "upstream: more than 2147483648 bytes in all; refused" in err and "Traceback" not in err
    assert peak_kb < PEAK_RSS_BOUND_KB, f"peak RSS {peak_kb} KB"
    assert unchanged(world) == before


# -- git's own words in errors --------------------------------------------------------------------------


def test_a_missing_repository_keeps_gits_words(world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fetched_by_hand(world, "0" * 40, repo=f"file://{tmp_path / 'nothere'}")
    assert update.main([str(world.our_pkg)]) == 1
    err = capsys.readouterr().err
    assert f"listing the refs of file://{tmp_path / 'nothere'}:" in err
    assert f"'{tmp_path / 'nothere'}' does not appear to be a git repository" in err
    assert "and the repository exists" in err and len(err.strip().splitlines()) == 1


def fake_ssh(tmp_path: Path, script: str) -> str:
    path = tmp_path / "ssh"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


def test_a_refused_ssh_login_keeps_sshs_words(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GIT_SSH_COMMAND", fake_ssh(tmp_path, 'echo "git@example.invalid: Permission denied (publickey)." >&2\nexit 255\n'))
    fetched_by_hand(world, "0" * 40, repo="ssh://git@example.invalid/team/catalog.git")
    assert update.main([str(world.our_pkg)]) == 1
    err = capsys.readouterr().err
    assert "listing the refs of ssh://git@example.invalid/team/catalog.git:" in err
    assert "Permission denied (publickey)" in err and "Could not read from remote repository" in err


def test_a_servers_words_are_escaped_and_bounded(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    # an OSC 52 sequence (set the clipboard) and a title change, then 200 KB of noise
    noise = "printf 'evil\\033]52;c;cm0gLXJmIH4=\\007 and \\033]0;title\\007\\n' >&2\n" + \
        "i=0; while [ $i -lt 2000 ]; do printf '%0100d\\n' $i >&2; i=$((i+1)); done\nexit 255\n"
    monkeypatch.setenv("GIT_SSH_COMMAND", fake_ssh(tmp_path, noise))
    fetched_by_hand(world, "0" * 40, repo="ssh://git@example.invalid/team/catalog.git")
    assert update.main([str(world.our_pkg)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "evil\\x1b]52;c;cm0gLXJmIH4=\\x07" in err  # still readable, not acted on
    assert len(err) < 2 * gitexec.MAX_MESSAGE and "bytes left out" in err
    assert "Could not read from remote repository" in err  # the end of what git said is kept


def test_an_unknown_ref_and_an_unknown_commit_are_named(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@nope"]) == 1
    assert f"ref 'nope' not found in file://{world.up}" in capsys.readouterr().err
    gone = "1" * 40  # a lock commit the server does not have
    (world.our_pkg / "Kptfile").write_text((world.our_pkg / "Kptfile").read_text().replace(v1, gone))
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    err = capsys.readouterr().err
    assert f"fetching commit {gone} of file://{world.up}:" in err and f"not our ref {gone}" in err


def test_a_server_that_does_not_answer_a_cold_fetch_is_not_asked_again(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """A failed cold fetch falls back to listing the refs, but one that timed out does not wait twice."""
    monkeypatch.setenv("GIT_SSH_COMMAND", fake_ssh(tmp_path, "exec sleep 5\n"))
    monkeypatch.setattr(gitmod, "GIT_TIMEOUT", 1)
    fetched_by_hand(world, "0" * 40, repo="ssh://git@example.invalid/team/catalog.git")
    calls = spy_git(monkeypatch)
    start = time.monotonic()
    assert update.main([f"{world.our_pkg}@v2"]) == 1
    assert time.monotonic() - start < HANG_GUARD_S
    assert "git timed out after 1 s" in capsys.readouterr().err
    assert [c for c in calls if "fetch" in c] and not [c for c in calls if "ls-remote" in c]


def test_git_words_one_line_escaped() -> None:
    said = b"fatal: 'x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n" \
        b"Please make sure you have the correct access rights\nand the repository exists.\n"
    assert gitexec.git_words(said) == ("fatal: 'x' does not appear to be a git repository; fatal: Could not read from "
                                      "remote repository; Please make sure you have the correct access rights; and "
                                      "the repository exists.")
    assert gitexec.git_words("remote: \x1b[31mred\x9b\r\n".encode()) == "remote: \\x1b[31mred\\x9b"  # C1 too


# -- the cache's lock files ------------------------------------------------------------------------------


def test_no_lock_file_is_left_in_the_cache(world: World) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    fetched_by_hand(world, v1)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    root = Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git"
    assert [p.name for p in root.iterdir() if p.name.endswith(".lock")] == []
    assert len(list(root.glob("*.git"))) == 1


HOLDER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from krm_merge.files import locked
    path, log, hold = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    for _ in range(int(sys.argv[4])):
        with locked(path):
            with open(log, "a") as out:
                out.write("in\\n")
            if hold.replace(".", "").isdigit():
                time.sleep(float(hold))
            else:  # hold until that file exists
                while not os.path.exists(hold):
                    time.sleep(0.01)
            with open(log, "a") as out:
                out.write("out\\n")
""")


def waiting_on_a_flock(pid: int) -> bool:
    """Whether process ``pid`` is blocked in ``flock`` (Linux: a ``->`` line of /proc/locks)."""
    return any(line.split()[1:3] == ["->", "FLOCK"] and line.split()[5] == str(pid)
               for line in Path("/proc/locks").read_text().splitlines())


def test_a_lock_held_by_another_process_is_waited_for_and_never_removed(world: World, tmp_path: Path) -> None:
    if not Path("/proc/locks").exists():
        pytest.skip("needs /proc/locks to see a process waiting for a lock")
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    fetched_by_hand(world, v1)
    root = Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git"
    root.mkdir(parents=True)
    lock = root / (gitmod._mirror_name(f"file://{world.up}") + ".lock")
    log, release = tmp_path / "log", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(log), str(release), "1"], env=world.env)
    deadline = time.monotonic() + HANG_GUARD_S
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    ours = subprocess.Popen([sys.executable, "-m", "krm_merge", "update", f"{world.our_pkg}@v2"], env=world.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not waiting_on_a_flock(ours.pid) and ours.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert waiting_on_a_flock(ours.pid)  # the update waits for the other process's lock
    assert lock.exists() and log.read_text() == "in\n"  # which nobody but its holder removes
    release.touch()
    out, err = ours.communicate(timeout=HANG_GUARD_S)
    assert holder.wait(timeout=HANG_GUARD_S) == 0 and ours.returncode == 0, err
    assert log.read_text() == "in\nout\n" and '"2"' in (world.our_pkg / "cm.yaml").read_text()
    assert not lock.exists()


def test_removing_lock_files_keeps_the_lock_exclusive(tmp_path: Path) -> None:
    """Three processes taking and releasing one lock (each removing the file as it releases): never two inside."""
    lock, log = tmp_path / "repo.git.lock", tmp_path / "log"
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(log), "0.005", "40"], env=env) for _ in range(3)]
    assert [p.wait(timeout=HANG_GUARD_S) for p in procs] == [0, 0, 0]
    lines = log.read_text().split()
    assert len(lines) == 240 and lines == ["in", "out"] * 120  # strictly alternating: one holder at a time
    assert not lock.exists()


def test_a_lock_on_a_removed_file_is_taken_again_on_the_new_one(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    with files.locked(path):
        assert path.exists()
    assert not path.exists()
    with files.locked(path):  # created again
        assert path.exists()
    with pytest.raises(KrmError):
        with files.locked(path):
            raise KrmError("inside")
    assert not path.exists()  # removed also when the block fails
