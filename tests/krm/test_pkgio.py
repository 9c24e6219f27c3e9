"""The package lister and the change set (krm/pkgio.py): what is listed, the link policy, apply and diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from krm_merge import files, txn
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError


def _write(root: Path, rel: str, text: str = "a: 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _yaml(root: Path, **options: object) -> pkgio.Listing:
    return pkgio.list_package(root, suffixes=pkgio.YAML_SUFFIXES, names=(pkgio.KPTFILE,), **options)  # type: ignore[arg-type]


def test_lists_files_with_their_kind_sorted(tmp_path: Path) -> None:
    for rel in ("b.yaml", "a/c.yml", "Kptfile", "README.md", "a-b/x.yaml"):
        _write(tmp_path, rel)
    listing = pkgio.list_package(tmp_path)
    assert [(f.rel, f.kind) for f in listing.files] == [
        ("Kptfile", "kptfile"), ("README.md", "other"), ("a-b/x.yaml", "krm"), ("a/c.yml", "krm"), ("b.yaml", "krm")]
    assert all(f.path == os.path.join(tmp_path, f.rel) and not f.is_link for f in listing.files)
    assert _yaml(tmp_path).rels() == ["Kptfile", "a-b/x.yaml", "a/c.yml", "b.yaml"]


def test_names_pick_files_without_suffixes(tmp_path: Path) -> None:
    for rel in ("x.yaml", "k/Kustomization", "k/README"):
        _write(tmp_path, rel)
    assert pkgio.list_package(tmp_path, names=("Kustomization",)).rels() == ["k/Kustomization"]


def test_reserved_names_and_git_are_never_listed_hidden_names_only_when_asked(tmp_path: Path) -> None:
    for rel in (".git/config.yaml", "sub/.git/HEAD.yaml", f"{txn.TXN_NAME}/0.staged", txn.LOCK_NAME,
                ".hidden.yaml", ".dir/x.yaml", "ok.yaml"):
        _write(tmp_path, rel)
    assert pkgio.list_package(tmp_path).rels() == ["ok.yaml"]
    assert pkgio.list_package(tmp_path, hidden=True).rels() == [".dir/x.yaml", ".hidden.yaml", "ok.yaml"]


def test_krmignore_patterns_leave_files_and_folders_out(tmp_path: Path) -> None:
    for rel in ("keep.yaml", "drop.yaml", "gen/x.yaml", "a/secret.yaml", "a/keep.yaml"):
        _write(tmp_path, rel)
    (tmp_path / ".krmignore").write_text("# comment\ndrop.yaml\ngen/\nsecret.yaml\n")
    assert _yaml(tmp_path).rels() == ["a/keep.yaml", "keep.yaml"]
    assert len(_yaml(tmp_path, krmignore=False).files) == 5


def test_subpackages_are_named_tagged_and_entered_only_when_asked(tmp_path: Path) -> None:
    for rel in ("Kptfile", "a.yaml", "sub/Kptfile", "sub/b.yaml", "sub/deep/Kptfile", "sub/deep/c.yaml", "plain/d.yaml"):
        _write(tmp_path, rel)
    listing = _yaml(tmp_path)
    assert listing.subpackages == ["sub", "sub/deep"]
    assert {f.rel: f.package for f in listing.files} == {
        "Kptfile": "", "a.yaml": "", "plain/d.yaml": "", "sub/Kptfile": "sub", "sub/b.yaml": "sub",
        "sub/deep/Kptfile": "sub/deep", "sub/deep/c.yaml": "sub/deep"}
    own = _yaml(tmp_path, subpackages=False)
    assert own.rels() == ["Kptfile", "a.yaml", "plain/d.yaml"] and own.subpackages == ["sub"]


def test_links_to_files_are_read_links_to_folders_are_not_followed_broken_links_are_named(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    _write(root, "real.yaml")
    _write(tmp_path, "outside/o.yaml")
    os.symlink(root / "real.yaml", root / "in.yaml")
    os.symlink(tmp_path / "outside" / "o.yaml", root / "out.yaml")
    os.symlink(tmp_path / "outside", root / "linkdir")
    os.symlink(tmp_path / "missing.yaml", root / "gone.yaml")
    listing = _yaml(root)
    assert [(f.rel, f.is_link) for f in listing.files] == [("in.yaml", True), ("out.yaml", True), ("real.yaml", False)]
    assert listing.linked_dirs == ["linkdir"] and listing.broken_links == ["gone.yaml"]
    with pytest.raises(KrmError, match=r"gone.yaml is a broken symbolic link \(to .*missing.yaml\)"):
        raise pkgio.broken_link_error(listing.root, listing.broken_links[0])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_yaml_is_not_listed_as_a_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    listing = _yaml(tmp_path)
    assert listing.files == [] and listing.others == ["pipe.yaml"]


# --- the change set -----------------------------------------------------------------------


def test_apply_writes_deletes_and_removes_emptied_folders(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "a: 1\n")
    _write(tmp_path, "old/b.yaml", "b: 1\n")
    changes = pkgio.ChangeSet([pkgio.Write("a.yaml", b"a: 1\n", b"a: 2\n"), pkgio.Write("old/b.yaml", b"b: 1\n", None),
                               pkgio.Write("new/c.yaml", None, b"c: 1\n")], ["old"])
    changes.apply(tmp_path, command="test")
    assert (tmp_path / "a.yaml").read_text() == "a: 2\n" and (tmp_path / "new/c.yaml").read_text() == "c: 1\n"
    assert not (tmp_path / "old").exists() and not (tmp_path / txn.TXN_NAME).exists()


def test_apply_writes_through_a_link_to_a_file_inside_the_package(tmp_path: Path) -> None:
    _write(tmp_path, "base/real.yaml", "a: 1\n")
    os.symlink("base/real.yaml", tmp_path / "link.yaml")
    pkgio.ChangeSet([pkgio.Write("link.yaml", b"a: 1\n", b"a: 2\n")]).apply(tmp_path, command="test")
    assert (tmp_path / "link.yaml").is_symlink() and (tmp_path / "base/real.yaml").read_text() == "a: 2\n"


def test_apply_refuses_a_link_leading_out_of_the_package(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    victim = _write(tmp_path, "victim.yaml", "a: 1\n")
    root.mkdir()
    os.symlink(victim, root / "link.yaml")
    with pytest.raises(files.UnsafePathError, match="outside the package"):
        pkgio.ChangeSet([pkgio.Write("link.yaml", b"a: 1\n", b"a: 2\n")]).apply(root, command="test")
    assert victim.read_text() == "a: 1\n"


def test_apply_refuses_a_link_into_git(tmp_path: Path) -> None:
    _write(tmp_path, ".git/config", "x\n")
    os.symlink(".git/config", tmp_path / "c.yaml")
    with pytest.raises(files.UnsafePathError, match="into .git"):
        pkgio.ChangeSet([pkgio.Write("c.yaml", b"x\n", b"y\n")]).apply(tmp_path, command="test")
    assert (tmp_path / ".git/config").read_text() == "x\n"


def test_two_links_to_one_file_with_different_bytes_are_refused_same_bytes_written_once(tmp_path: Path) -> None:
    _write(tmp_path, "real.yaml", "a: 1\n")
    os.symlink("real.yaml", tmp_path / "l1.yaml")
    os.symlink("real.yaml", tmp_path / "l2.yaml")
    differ = pkgio.ChangeSet([pkgio.Write("l1.yaml", b"a: 1\n", b"a: 2\n"), pkgio.Write("l2.yaml", b"a: 1\n", b"a: 3\n")])
    with pytest.raises(KrmError, match="same file"):
        differ.apply(tmp_path, command="test")
    same = pkgio.ChangeSet([pkgio.Write("l1.yaml", b"a: 1\n", b"a: 2\n"), pkgio.Write("l2.yaml", b"a: 1\n", b"a: 2\n")])
    same.apply(tmp_path, command="test")
    assert (tmp_path / "real.yaml").read_text() == "a: 2\n"


def test_deleting_a_link_deletes_the_link_not_its_target(tmp_path: Path) -> None:
    _write(tmp_path, "real.yaml", "a: 1\n")
    os.symlink("real.yaml", tmp_path / "link.yaml")
    pkgio.ChangeSet([pkgio.Write("link.yaml", b"a: 1\n", None)]).apply(tmp_path, command="test")
    assert not os.path.lexists(tmp_path / "link.yaml") and (tmp_path / "real.yaml").read_text() == "a: 1\n"


def test_an_edit_underneath_stops_the_change_set(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "a: edited\n")
    with pytest.raises(txn.ChangedUnderneathError, match="a.yaml was edited"):
        pkgio.ChangeSet([pkgio.Write("a.yaml", b"a: 1\n", b"a: 2\n")]).apply(tmp_path, command="test")
    assert (tmp_path / "a.yaml").read_text() == "a: edited\n"


def test_diff_is_a_unified_diff_with_notes_for_binary_files_and_folders(tmp_path: Path) -> None:
    changes = pkgio.ChangeSet([pkgio.Write("a.yaml", b"a: 1\n", b"a: 2\n"), pkgio.Write("img.bin", b"\xff\x00", b"\xfe"),
                               pkgio.Write("gone.yaml", b"g: 1\n", None)], ["old"])
    assert "".join(changes.diff(tmp_path)) == (
        "--- a/a.yaml\n+++ b/a.yaml\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"
        "Binary file img.bin changed\n"
        "--- a/gone.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-g: 1\n"
        "directory old removed\n")
    assert len(changes) == 3 and changes and not pkgio.ChangeSet()


def test_the_check_of_a_dry_run_stats_each_files_own_folders_not_the_roots_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: validate (every dry run's check) looked at every folder of the root's absolute path twice
    a file (two os.path.realpath); it looks at the written file's folders below the root only."""
    def stats_of(root: Path) -> int:
        writes = [pkgio.Write(_write(root, f"team-{n}/app/deploy.yaml").relative_to(root).as_posix(),
                              b"a: 1\n", b"a: 2\n") for n in range(20)]
        calls = []
        real_lstat, real_stat = os.lstat, os.stat
        monkeypatch.setattr(os, "lstat", lambda *a, **k: calls.append(a) or real_lstat(*a, **k))
        monkeypatch.setattr(os, "stat", lambda *a, **k: calls.append(a) or real_stat(*a, **k))
        try:
            assert len(pkgio.ChangeSet(writes).validate(root)) == 20
        finally:
            monkeypatch.setattr(os, "lstat", real_lstat)
            monkeypatch.setattr(os, "stat", real_stat)
        return len(calls)

    shallow, deep = tmp_path / "a", tmp_path.joinpath(*[f"d{n}" for n in range(40)])
    # the root itself is resolved once a check, whatever the number of files
    assert stats_of(deep) - stats_of(shallow) <= len(deep.parts)
    assert stats_of(shallow) <= 20 * 10


def test_a_folder_that_cannot_be_read_is_an_error_naming_it_not_a_skip(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from krm_merge.krm import package

    _write(tmp_path, "ok.yaml")
    _write(tmp_path, "locked/x.yaml")
    real = os.scandir

    def scandir(path: str) -> object:
        if os.path.basename(path) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(PermissionError):
        pkgio.list_package(tmp_path)
    with pytest.raises(KrmError, match=r"cannot read folder .*locked: Permission denied"):
        package.read_package(tmp_path)
