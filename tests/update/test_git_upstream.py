"""``krm-merge update PKG[@REF]``: fetching with git, the cache, the Kptfile bookkeeping, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from krm_merge.commands import update
from krm_merge.kptfile import upstream as kptupstream
from krm_merge.kptfile.document import Strategy
from krm_merge.krm.results import KrmError
from krm_merge.upstream import git as gitmod
from tests.conftest import require_binary

from .world import World, cm, fetched_by_hand, kptfile, spy_git

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("git")
    return World(tmp_path, monkeypatch)


def fetched(world: World, repo: str, ref: str, commit: str, directory: str = "/pkg") -> None:
    """A package as ``kpt pkg get`` leaves it (written by hand: these tests need no kpt)."""
    fetched_by_hand(world, commit, repo, ref, directory)


def lock_of(world: World) -> dict[str, str]:
    return yaml.safe_load((world.our_pkg / "Kptfile").read_text())["upstreamLock"]["git"]


@pytest.mark.parametrize("form", ["file", "path"])
def test_update_to_a_tag_then_a_commit_with_file_url_and_plain_path(world: World, form: str) -> None:
    c1 = world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    c2 = world.commit({"cm.yaml": cm("cm", "2")}, tag="v2")
    c3 = world.commit({"cm.yaml": cm("cm", "3")})
    repo = f"file://{world.up}" if form == "file" else str(world.up)
    fetched(world, repo, "v1", c1)
    assert update.main([f"{world.our_pkg}@v2"]) == 0
    assert lock_of(world) == {"repo": repo, "directory": "/pkg", "ref": "v2", "commit": c2}
    assert yaml.safe_load((world.our_pkg / "cm.yaml").read_text())["data"] == {"a": "2"}
    assert update.main([f"{world.our_pkg}@{c3}"]) == 0
    assert lock_of(world)["commit"] == c3 and lock_of(world)["ref"] == c3
    assert update.main([str(world.our_pkg)]) == 0  # the ref recorded last time
    assert lock_of(world)["commit"] == c3


def test_second_update_reuses_the_cached_mirror(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    c1 = world.commit({"cm.yaml": cm("cm", "1")})
    world.commit({"cm.yaml": cm("cm", "2")})
    fetched(world, f"file://{world.up}", "main", c1)
    calls = spy_git(monkeypatch)
    assert update.main([str(world.our_pkg)]) == 0
    assert not any("init" in c for c in calls)  # the cache's repository is laid out without a git process
    assert len(list((Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git").glob("*.git"))) == 1  # created once
    assert sum("fetch" in c for c in calls) == 1  # origin and upstream in one fetch
    calls.clear()
    c3 = world.commit({"cm.yaml": cm("cm", "3")})
    assert update.main([str(world.our_pkg)]) == 0
    assert not any("init" in c or "clone" in c for c in calls)
    (fetch,) = [c for c in calls if "fetch" in c]
    assert fetch[-1] == f"+{c3}:refs/krm-merge/{c3}"  # only the new commit: origin is cached
    assert lock_of(world)["commit"] == c3  # the fetch saw the new commit


def test_root_directory_package_and_dry_run(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    c1 = world.commit({"cm.yaml": cm("cm", "1")})
    world.commit({"cm.yaml": cm("cm", "2")})
    (world.up / "top.yaml").write_text(cm("top", "1"))
    world.git("add", "-A")
    world.git("commit", "-qm", "top")
    fetched(world, f"file://{world.up}", "main", c1, directory="/")
    before = (world.our_pkg / "Kptfile").read_text()
    assert update.main([str(world.our_pkg), "--dry-run"]) == 0
    out = capsys.readouterr().out
    # identity ignores the path (docs/merge.md, R11): local cm.yaml matches upstream's pkg/cm.yaml
    assert "+++ b/top.yaml" in out and '+  a: "2"' in out and "+    commit:" in out
    assert (world.our_pkg / "Kptfile").read_text() == before


def test_errors_are_one_line(world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    c1 = world.commit({"cm.yaml": cm("cm", "1")})
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "Kptfile").write_text(kptfile("plain"))
    assert update.main([str(plain)]) == 1
    assert "package has no upstream" in capsys.readouterr().err
    fetched(world, f"file://{world.up}", "main", c1)
    assert update.main([f"{world.our_pkg}@nope"]) == 1
    assert "ref 'nope' not found" in capsys.readouterr().err
    assert update.main([str(tmp_path / "missing")]) == 1
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "no-git").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git"))
    assert update.main([str(world.our_pkg)]) == 1
    err = capsys.readouterr().err
    assert "git is not installed" in err and "Traceback" not in err


def test_missing_directory_at_the_commit(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    c1 = world.commit({"cm.yaml": cm("cm", "1")})
    world.commit({"cm.yaml": None})
    fetched(world, f"file://{world.up}", "main", c1)
    assert update.main([str(world.our_pkg)]) == 1
    assert "directory /pkg does not exist at commit" in capsys.readouterr().err


def test_split_package_ref(tmp_path: Path) -> None:
    assert gitmod.split_package_ref("pkg@v1.2") == ("pkg", "v1.2")
    assert gitmod.split_package_ref("a@b/pkg@main") == ("a@b/pkg", "main")
    odd = tmp_path / "x@y"
    odd.mkdir()
    assert gitmod.split_package_ref(str(odd)) == (str(odd), None)
    with pytest.raises(KrmError, match="empty ref"):
        gitmod.split_package_ref("pkg@")


def test_record_lock_keeps_layout_and_inserts_the_lock_after_upstream() -> None:
    text = kptfile("p", "upstream:  # where from\n  type: git\n  git:\n    repo: r\n    directory: /d\n    ref: v1\ninfo:\n  description: x\n")
    out = kptupstream.record_lock(text, kptupstream.GitUpstream("r", "/d", "v2"), "c" * 40, Strategy.FAST_FORWARD)
    assert "# where from" in out
    data = yaml.safe_load(out)
    assert list(data) == ["apiVersion", "kind", "metadata", "upstream", "upstreamLock", "info"]
    assert data["upstreamLock"] == {"type": "git", "git": {"repo": "r", "directory": "/d", "ref": "v2", "commit": "c" * 40}}
    assert data["upstream"]["git"]["ref"] == "v2" and data["upstream"]["updateStrategy"] == "fast-forward"
