"""The package lister and the change set (krm/pkgio.py): what is listed, the link policy, apply and diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
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


# Every spelling a file system takes for .git or krm-merge's own names (git's t0060-path-utils.sh and
# t1014-read-tree-confusing.sh lists, and the same folds of krm-merge's names), with what it is there.
LOOK_ALIKES = {
    ".git": ".git", ".GIT": ".git", ".Git": ".git", ".git.": ".git", ".git ": ".git", ".git . .": ".git",
    ".git...": ".git", "git~1": ".git", "GIT~1": ".git", "Git~4 .": ".git", "gi2837~1": ".git", "GI28~123": ".git",
    ".git:": ".git", ".git::$INDEX_ALLOCATION": ".git", "git~1::$INDEX_ALLOCATION": ".git",
    ".g\u200cit": ".git", ".gi\u200dt": ".git", "\ufeff.git": ".git", ".git\u200e": ".git", "\u202e.GIT": ".git",
    ".\u206ag\u206fit": ".git",
    ".krm-merge.conflicts": ".krm-merge.conflicts", ".Krm-Merge.Conflicts": ".krm-merge.conflicts",
    ".krm-merge.conflicts. ": ".krm-merge.conflicts", "KRM-ME~1.CON": ".krm-merge.conflicts",
    "kr5d0a~1.con": ".krm-merge.conflicts", ".krm-merge.conflict\u017f": ".krm-merge.conflicts",
    ".krm-merge.lock": ".krm-merge.lock", ".KRM-MERGE.LOCK.": ".krm-merge.lock", "krm-me~4.loc": ".krm-merge.lock",
    "KR8AA0~9.LOC": ".krm-merge.lock", ".\u212arm-merge.lock": ".krm-merge.lock",
    ".krm-merge.txn": ".krm-merge.txn", ".KRM-MERGE.TXN": ".krm-merge.txn", "KRM-ME~2.TXN:x": ".krm-merge.txn",
    "kr3cb9~1.txn": ".krm-merge.txn", ".krm\u200d-merge.txn": ".krm-merge.txn",
    "~1234567.txn": ".krm-merge.txn", "KRM-ME~1": ".krm-merge.*", "kr5d~123": ".krm-merge.*",
}
# Names that are none of them on any file system.
NOT_LOOK_ALIKES = [
    ".gitignore", ".github", ".gitkeep", ".gitmodules", ".git-blame-ignore-revs", ".git~1", "git", "git~", "git~0",
    "git~5", "git~1x", "git~12", "gi2837~0", "gi2837~1x", "gi2838~1", "gitmod~1", ".gi", ".git_", "_.git", "a.git",
    ".g-it", ".gi\u200bt", ".\u01e7it", "krm-merge.yaml", ".krm-merge", ".krm-merge.yaml", ".krm-merge.conflicts.yaml",
    ".krm-merge.lock.old", "x.krm-merge.txn", "KRM-ME~1.YAM", "KRM-ME~5.TXN", "krm-me~1x.con", "kr5d0a~1.loc",
    "Kptfile", "kustomization.yaml", "app.yaml", "~", "~1", "k~", "", ".", "..",
]


@pytest.mark.parametrize(("name", "protected"), sorted(LOOK_ALIKES.items()))
def test_every_spelling_of_git_and_krm_merges_names_is_that_name(name: str, protected: str) -> None:
    assert files.protected_name(name) == protected
    if name != protected:
        assert files.how_protected(name)  # the warning can say how


@pytest.mark.parametrize("name", NOT_LOOK_ALIKES)
def test_other_names_are_not_protected(name: str) -> None:
    assert files.protected_name(name) is None


# What the fast path must know of: every character of the names above, and the code points that fold to them.
_ALPHABET = sorted(set("".join(LOOK_ALIKES) + "".join(NOT_LOOK_ALIKES) + ".~:$ 0123456789abcdefgiklmnortxyGIKT"
                       + "\u212a\u017f\u0130\u0131\u00e9\u200b\u200c\ufeff\uff47\u01e7"))


@settings(max_examples=examples(2000), deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=12) | st.sampled_from(sorted(LOOK_ALIKES)).flatmap(
    lambda name: st.tuples(st.text(alphabet=_ALPHABET, max_size=2), st.just(name),
                           st.text(alphabet=_ALPHABET, max_size=2)).map("".join)))
def test_the_fast_path_agrees_with_the_full_rule(name: str) -> None:
    """A name the fast path answers at once is one the full rule matches nothing for, and the lister's loop,
    which tests less before it calls the rule, calls it for every name the fast path lets through."""
    full = files._protected_name(name)
    assert files.protected_name(name) == full
    if not files.may_be_protected(name):
        assert full is None
    elif name:
        lead = name[0]
        assert lead == "." or lead > "\x7f" or "~" in name  # pkgio.list_package's and _walk_beneath's test


def test_the_short_name_hash_is_git_s(  # the fall-back prefixes git's path.c hard-codes for its own names
) -> None:
    assert [files._short_name_hash(n) for n in (".gitmodules", ".gitignore", ".gitattributes", ".mailmap")] == [
        "7eba", "250a", "7d29", "ba30"]


def test_the_users_package_leaves_every_spelling_of_git_and_krm_merges_names_out(tmp_path: Path) -> None:
    """``.GIT`` on macOS and ``GIT~1`` on Windows are the package's repository: never listed, as ``.git`` is not."""
    for rel in (".GIT/config.yaml", "sub/git~1/HEAD.yaml", "sub/.g\u200cit/x.yaml", ".Krm-Merge.Conflicts",
                "KRM-ME~1.TXN/0.yaml", ".krm-merge.lock.", "ok.yaml", ".gitignore", "sub/.github/w.yaml"):
        _write(tmp_path, rel)
    for options in ({"hidden": True}, {"hidden": True, "nofollow": True}):
        assert pkgio.list_package(tmp_path, **options).rels() == [  # type: ignore[arg-type]
            ".gitignore", "ok.yaml", "sub/.github/w.yaml"]
    listing = pkgio.check_untrusted(tmp_path, "upstream")
    assert listing.rels() == [".gitignore", "ok.yaml", "sub/.github/w.yaml"]
    assert listing.git_names == [".GIT", "sub/.g\u200cit", "sub/git~1"]
    assert listing.own_names == [".Krm-Merge.Conflicts", ".krm-merge.lock.", "KRM-ME~1.TXN"]


def test_a_link_into_another_spelling_of_git_is_not_written_through(tmp_path: Path) -> None:
    _write(tmp_path, "git~1/config", "x\n")
    os.symlink("git~1/config", tmp_path / "c.yaml")
    with pytest.raises(files.UnsafePathError, match="into git~1"):
        pkgio.ChangeSet([pkgio.Write("c.yaml", b"x\n", b"y\n")]).apply(tmp_path, command="test")
    assert (tmp_path / "git~1/config").read_text() == "x\n"


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
