"""``--origin``/``--upstream`` folders are read in place, not copied: what keeps that as safe as the copy was.

The tree is checked whole first (names, sizes, counts; links and special
files left out with a warning), then every file is opened one name at a
time with ``O_NOFOLLOW`` below its folder's descriptor
(:func:`krm_merge.files.read_beneath`).  A swap between the check and the
read is simulated by wrapping the listing step (``pkgio.list_package``):
the test changes the tree right after a listing returns, exactly where a
racing attacker would, without racing.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from krm_merge.outcomes import words
from krm_merge.update.report import refused
from krm_merge import files
from krm_merge.commands import update
from krm_merge.krm import pkgio

from .world import cm, kptfile, write_tree

TOKEN = "s3cr3t-of-the-updating-machine"
# Far above anything here takes (milliseconds): only a guard against a read that blocks.
HANG_GUARD_S = 60


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A folder of the updating machine, outside every package, holding a KRM-looking secret."""
    home = tmp_path / "machine"
    home.mkdir()
    (home / "cm.yaml").write_text(cm("cm", TOKEN))
    (home / "notes.txt").write_text(TOKEN + "\n")
    return home


@pytest.fixture
def copies(tmp_path: Path) -> tuple[Path, Path, Path]:
    """local, origin, upstream: upstream changes cm.yaml, notes.txt and sub/cm.yaml."""
    local, origin, upstream = (tmp_path / "pkgs" / n for n in ("local", "origin", "upstream"))
    for root in (local, origin, upstream):
        write_tree(root, {"Kptfile": kptfile("p"), "cm.yaml": cm("cm", "1"), "notes.txt": "one\n",
                          "sub/cm.yaml": cm("sub", "1")})
    write_tree(upstream, {"cm.yaml": cm("cm", "2"), "notes.txt": "two\n", "sub/cm.yaml": cm("sub", "2")})
    return local, origin, upstream


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail instead of blocking forever (a FIFO opened without O_NONBLOCK waits for a writer)."""
    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError("a read blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(HANG_GUARD_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def swap_after_listing(monkeypatch: pytest.MonkeyPatch, root: Path, swap: Callable[[], None]) -> list[str]:
    """Run ``swap`` once, right after the listing of ``root`` returns; the kinds of listing made.

    The update lists each copy once (its snapshot: the whole-tree check is
    that listing) and every step reads that one listing, so the swap lands
    between the listing and every read of the file.
    """
    real = pkgio.list_package
    calls: list[str] = []

    def listing_then_swap(where: Any, **kwargs: Any) -> pkgio.Listing:
        listing = real(where, **kwargs)
        if Path(where) == root:
            calls.append("untrusted" if kwargs.get("untrusted") else "nofollow" if kwargs.get("nofollow") else "plain")
            if "swapped" not in calls:
                calls.append("swapped")
                swap()
        return listing

    monkeypatch.setattr(pkgio, "list_package", listing_then_swap)
    return calls


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run(local: Path, origin: Path, upstream: Path) -> int:
    return update.main([str(local), "--origin", str(origin), "--upstream", str(upstream)])


# -- the update, with a swap between the check and the read ------------------------------------------


@pytest.mark.parametrize("name", ["cm.yaml", "notes.txt", "sub/cm.yaml"])
def test_a_file_swapped_for_a_link_between_listing_and_reading_is_not_read_through(
    copies: tuple[Path, Path, Path], secret: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], name: str,
) -> None:
    local, origin, upstream = copies
    before = tree_bytes(local)

    def swap() -> None:
        (upstream / name).unlink()
        (upstream / name).symlink_to(secret / Path(name).name)

    calls = swap_after_listing(monkeypatch, upstream, swap)
    assert run(local, origin, upstream) == 1
    assert calls == ["untrusted", "swapped"]  # listed (and checked) whole once; swapped before its read
    err = capsys.readouterr().err
    assert f"upstream: {name}: became a symbolic link after it was listed; not read" in err
    assert TOKEN not in err and "Traceback" not in err
    assert tree_bytes(local) == before  # refused whole: nothing written


def test_a_folder_swapped_for_a_link_between_listing_and_reading_is_not_entered(
    copies: tuple[Path, Path, Path], secret: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local, origin, upstream = copies
    before = tree_bytes(local)

    def swap() -> None:
        os.rename(upstream / "sub", upstream / "sub.old")
        (upstream / "sub").symlink_to(secret)  # secret holds cm.yaml, as sub did

    swap_after_listing(monkeypatch, upstream, swap)
    assert run(local, origin, upstream) == 1
    err = capsys.readouterr().err
    assert "sub: a folder on the way is no longer a folder (a symbolic link?); not read" in err
    assert TOKEN not in err and "Traceback" not in err
    assert tree_bytes(local) == before


def test_a_file_swapped_for_a_fifo_between_listing_and_reading_is_refused_without_blocking(
    copies: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    no_hang: None,
) -> None:
    local, origin, upstream = copies
    before = tree_bytes(local)

    def swap() -> None:
        (upstream / "notes.txt").unlink()
        os.mkfifo(upstream / "notes.txt")  # an open for reading without O_NONBLOCK would wait for a writer

    swap_after_listing(monkeypatch, upstream, swap)
    assert run(local, origin, upstream) == 1
    assert "upstream: notes.txt: no longer a regular file; not read" in capsys.readouterr().err
    assert tree_bytes(local) == before


def test_without_a_swap_the_in_place_update_takes_upstream(copies: tuple[Path, Path, Path]) -> None:
    local, origin, upstream = copies
    assert run(local, origin, upstream) == 0
    assert (local / "notes.txt").read_text() == "two\n"
    assert 'a: "2"' in (local / "cm.yaml").read_text() and 'a: "2"' in (local / "sub" / "cm.yaml").read_text()


def test_origin_and_upstream_are_read_where_they_are_not_copied(
    copies: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every read of origin and upstream goes through the in-place reader, below those very folders."""
    local, origin, upstream = copies
    real = files.read_beneath
    roots: set[str] = set()

    def spy(root: Any, rel: str, what: str | None = None) -> bytes:
        roots.add(os.fspath(root))
        return real(root, rel, what)

    monkeypatch.setattr(files, "read_beneath", spy)
    assert run(local, origin, upstream) == 0
    assert {str(origin), str(upstream)} <= roots


# -- the reader ---------------------------------------------------------------------------------------


def test_read_beneath_reads_a_regular_file_and_refuses_links_on_the_way(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, {"a/b/file.txt": "mine\n"})
    assert files.read_beneath(root, "a/b/file.txt") == b"mine\n"
    (root / "link.txt").symlink_to(secret / "notes.txt")
    (root / "a" / "linked").symlink_to(secret)
    (root / "inside.txt").symlink_to(root / "a" / "b" / "file.txt")  # even a link inside the tree
    for rel in ("link.txt", "a/linked/notes.txt", "inside.txt"):
        with pytest.raises(files.UntrustedTreeError):
            files.read_beneath(root, rel, "upstream")


def test_read_beneath_bounds_content_from_elsewhere_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tree"
    write_tree(root, {"big.bin": "x" * 300_000})
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "0.1")
    with pytest.raises(Exception, match="upstream: big.bin is too large"):
        files.read_beneath(root, "big.bin", "upstream")
    assert len(files.read_beneath(root, "big.bin")) == 300_000  # the user's own file: as before, not bounded


def test_a_root_reached_through_a_link_is_read(tmp_path: Path) -> None:
    """The user names the root: it may be a link (only names below it must not be)."""
    write_tree(tmp_path / "real", {"f.txt": "ok\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert files.read_beneath(tmp_path / "alias", "f.txt") == b"ok\n"


# -- the untrusted listing ------------------------------------------------------------------------------


def test_the_untrusted_listing_follows_no_link_and_lists_what_the_plain_one_does(
    tmp_path: Path, secret: Path, no_hang: None,
) -> None:
    root = tmp_path / "tree"
    write_tree(root, {"Kptfile": kptfile("p"), "a/cm.yaml": cm("a", "1"), ".hidden/x.txt": "x\n",
                      "sub/Kptfile": kptfile("sub"), "sub/cm.yaml": cm("s", "1")})
    plain = pkgio.list_package(root, hidden=True, krmignore=False)
    checked = pkgio.check_untrusted(root, "upstream")
    assert checked.files == plain.files and checked.dirs == plain.dirs and checked.subpackages == plain.subpackages
    (root / "file-link.yaml").symlink_to(secret / "cm.yaml")
    (root / "dir-link").symlink_to(secret)
    (root / "broken.yaml").symlink_to(secret / "missing.yaml")
    os.mkfifo(root / "pipe.yaml")
    checked = pkgio.check_untrusted(root, "upstream")
    assert checked.links == ["broken.yaml", "dir-link", "file-link.yaml"]
    assert checked.others == ["pipe.yaml"]
    assert checked.files == plain.files and checked.dirs == plain.dirs  # nothing reached through a link
    assert [words.text(o) for o in refused(checked, "upstream")] == [
        "upstream: broken.yaml: a symbolic link; not read and not copied (content from elsewhere is never read "
        "through a link; docs/security.md)",
        "upstream: dir-link: a symbolic link; not read and not copied (content from elsewhere is never read "
        "through a link; docs/security.md)",
        "upstream: file-link.yaml: a symbolic link; not read and not copied (content from elsewhere is never read "
        "through a link; docs/security.md)",
        "upstream: pipe.yaml: not a regular file or folder; not read and not copied",
    ]


@pytest.mark.parametrize(("names", "message"), [
    (["bad\x01name.yaml"], "control character"),
    (["dir/A.txt", "dir/a.txt"], "dir/A.txt and dir/a.txt are the same file on a case-insensitive file system"),
])
def test_the_untrusted_listing_refuses_bad_names(tmp_path: Path, names: list[str], message: str) -> None:
    write_tree(tmp_path / "tree", {name: "x\n" for name in names})
    with pytest.raises(files.UntrustedTreeError, match=message):
        pkgio.check_untrusted(tmp_path / "tree", "upstream")


def test_the_untrusted_listing_bounds_files_bytes_and_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tree"
    write_tree(root, {f"d/f{i}.txt": "x" * 100 for i in range(5)})
    pkgio.check_untrusted(root, "upstream")
    monkeypatch.setattr(files, "MAX_TREE_FILES", 4)
    with pytest.raises(files.UntrustedTreeError, match="upstream: more than 4 files; refused"):
        pkgio.check_untrusted(root, "upstream")
    monkeypatch.setattr(files, "MAX_TREE_FILES", 100)
    monkeypatch.setattr(files, "MAX_TREE_BYTES", 450)
    with pytest.raises(files.UntrustedTreeError, match="upstream: more than 450 bytes in all; refused"):
        pkgio.check_untrusted(root, "upstream")
    monkeypatch.setattr(files, "MAX_TREE_BYTES", 10_000)
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "0.00001")  # about 10 bytes
    with pytest.raises(Exception, match=r"upstream: d/f\d.txt is too large"):
        pkgio.check_untrusted(root, "upstream")


def test_a_folder_swapped_for_a_link_is_not_entered_by_the_walk(tmp_path: Path, secret: Path) -> None:
    """The walk enters each folder through :func:`files.open_dir_beneath`, which refuses a link on the way."""
    root = tmp_path / "tree"
    write_tree(root, {"sub/x.txt": "x\n"})
    os.rename(root / "sub", root / "sub.old")
    (root / "sub").symlink_to(secret)
    with pytest.raises(files.UntrustedTreeError, match="no longer a folder"):
        os.close(files.open_dir_beneath(root, "sub"))


def test_prune_deletes_links_and_special_files_but_never_their_targets(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, {"cm.yaml": cm("cm", "1"), "d/keep.txt": "k\n"})
    (root / "d" / "link.txt").symlink_to(secret / "notes.txt")
    (root / "dir-link").symlink_to(secret)
    os.mkfifo(root / "d" / "pipe")
    pruned = pkgio.prune_untrusted(root, "upstream")
    assert len(pruned.links + pruned.others) == 3
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["cm.yaml", "d", "d/keep.txt"]
    assert (secret / "notes.txt").read_text() == TOKEN + "\n" and (secret / "cm.yaml").exists()


def test_a_subpackage_not_entered_takes_its_links_with_it(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "tree"
    write_tree(root, {"Kptfile": kptfile("p"), "sub/Kptfile": kptfile("sub"), "sub/cm.yaml": cm("s", "1")})
    (root / "sub" / "link.yaml").symlink_to(secret / "cm.yaml")
    (root / "top.yaml").symlink_to(secret / "cm.yaml")
    assert pkgio.list_package(root, nofollow=True).links == ["sub/link.yaml", "top.yaml"]
    outer = pkgio.list_package(root, nofollow=True, subpackages=False)
    assert outer.links == ["top.yaml"] and outer.subpackages == ["sub"] and outer.rels() == ["Kptfile"]
