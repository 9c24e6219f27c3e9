"""``krm-merge update`` fetches only what the update needs (issue 24).

Checked on a local repository whose server side allows partial fetches (as
GitHub's does): the cache ends up with the two commits the update reads, the
trees, and the blobs of the package directory only; an update to the commit
the package is at asks the remote for its refs and fetches nothing.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from krm_merge.commands import update
from krm_merge.upstream import git as gitmod
from tests.conftest import require_binary

from .world import World, cm, kptfile, spy_git

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("git")
    w = World(tmp_path, monkeypatch)
    w.git("config", "uploadpack.allowFilter", "true")
    return w


def fetched_at(world: World, commit: str, ref: str = "v1") -> None:
    """A package as ``kpt pkg get`` leaves it (by hand: no kpt needed)."""
    world.our_pkg.mkdir(parents=True)
    git = f"    repo: file://{world.up}\n    directory: /pkg\n    ref: {ref}\n"
    (world.our_pkg / "Kptfile").write_text(kptfile("local", (
        f"upstream:\n  type: git\n  git:\n{git}  updateStrategy: resource-merge\n"
        f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {commit}\n"
    )))
    (world.our_pkg / "cm.yaml").write_text(cm("cm", "1"))


def cached_objects(world: World) -> set[str]:
    """Every object the cache holds (listing them never fetches)."""
    (cache,) = (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git")
    out = world.git("--git-dir", str(cache), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def blob(world: World, rev: str, path: str) -> str:
    return world.git("rev-parse", f"{rev}:{path}")


def test_only_the_two_commits_and_the_package_directory_are_fetched(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    old = world.commit({"cm.yaml": cm("cm", "0"), "../other/big.yaml": cm("big", "x" * 5000)}, tag="v0")
    v1 = world.commit({"cm.yaml": cm("cm", "1"), "../other/big.yaml": cm("big", "y" * 5000)}, tag="v1")
    v2 = world.commit({"cm.yaml": cm("cm", "2"), "new.yaml": cm("new", "n")}, tag="v2")
    fetched_at(world, v1)
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert (world.our_pkg / "new.yaml").is_file() and '"2"' in (world.our_pkg / "cm.yaml").read_text()
    fetches = [c for c in calls if "fetch" in c]
    assert len(fetches) == 1 and {"--depth=1", "--filter=blob:none"} <= set(fetches[0])
    objects = cached_objects(world)
    assert {v1, v2} <= objects and old not in objects  # the two commits, not the history
    assert {blob(world, "v1", "pkg/cm.yaml"), blob(world, "v2", "pkg/cm.yaml"), blob(world, "v2", "pkg/new.yaml")} <= objects
    assert blob(world, "v1", "other/big.yaml") not in objects  # outside the package: never fetched


def test_an_update_to_where_the_package_is_lists_refs_and_fetches_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.git("tag", "same")  # another name of the same commit
    fetched_at(world, v1)
    before = (world.our_pkg / "cm.yaml").read_bytes()
    calls = spy_git(monkeypatch)
    assert update.main([f"{world.our_pkg}@same"]) == 0
    assert [c[1] for c in calls] == ["ls-remote"]  # one round trip, no object transferred
    assert (world.our_pkg / "cm.yaml").read_bytes() == before
    assert "ref: same" in (world.our_pkg / "Kptfile").read_text()
    assert not (Path(world.env["XDG_CACHE_HOME"]) / "krm-merge").exists()  # not even a cache


def test_a_server_refusing_partial_fetches_still_gets_an_update(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world.git("config", "uploadpack.allowFilter", "false")
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    fetched_at(world, v1)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()


def test_a_commit_id_and_an_abbreviated_one_resolve(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    v2 = world.commit({"cm.yaml": cm("cm", "2")})
    world.commit({"cm.yaml": cm("cm", "3")})
    fetched_at(world, v1)
    assert update.main([f"{world.our_pkg}@{v2}"]) == 0
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()
    assert update.main([f"{world.our_pkg}@{v1[:10]}"]) == 0  # not a ref name: the whole mirror resolves it
    assert '"1"' in (world.our_pkg / "cm.yaml").read_text()


def tar_of(*members: tuple[str, bytes | str | None]) -> bytes:
    """A tar of (name, content) members: bytes a file, str a link to it, None a directory; ``HARD:`` a hard link."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(content, str):
                info.type, info.linkname = (tarfile.LNKTYPE, content[5:]) if content.startswith("HARD:") else (tarfile.SYMTYPE, content)
                tar.addfile(info)
            else:
                info.size, info.mode = len(content), 0o4777
                tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def test_the_in_process_unpacking_takes_files_directories_and_links_only(tmp_path: Path) -> None:
    dest = tmp_path / "ok"
    dest.mkdir()
    assert gitmod._untar_in_process(tar_of(("d", None), ("d/a.yaml", b"a: 1\n"), ("l", "/etc/passwd")), dest)
    assert (dest / "d" / "a.yaml").read_bytes() == b"a: 1\n"
    assert (dest / "d" / "a.yaml").stat().st_mode & 0o7777 == 0o755  # no set-id bits, no group/other write
    assert os.readlink(dest / "l") == "/etc/passwd"  # a link stays a link: the caller prunes it
    for bad in (tar_of(("../x", b"")), tar_of(("/abs", b"")), tar_of(("a", b""), ("h", "HARD:a")),
                tar_of(("l", str(tmp_path)), ("l/x", b"through the link"))):
        dest = tmp_path / f"bad{len(list(tmp_path.iterdir()))}"
        dest.mkdir()
        assert not gitmod._untar_in_process(bad, dest)
        assert not list(dest.iterdir())  # emptied for the next way of unpacking
    assert not (tmp_path / "x").exists()
