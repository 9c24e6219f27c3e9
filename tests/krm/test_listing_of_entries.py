"""A tree read into memory is listed by the rules of a tree read from disk (issue 33).

An update reads origin and upstream out of git into memory: their listing is
:func:`pkgio.listing_of_entries` over git's entries instead of
:func:`pkgio.check_untrusted` over a folder.  Random trees (folders, files,
links, subpackages, ``.git`` and krm-merge's own names in several spellings, hidden names) are
written to disk and listed both ways: every field must agree.  What no folder
can hold but a tree object can (one name twice) is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge import files
from krm_merge.krm import pkgio

NAMES = ["a.yaml", "b.yml", "Kptfile", "README.md", ".hidden", ".git", ".krm-merge.conflicts", ".krm-merge.lock",
         "sub", "deep", "x", "GIT~1", ".g\u200cit", ".KRM-MERGE.TXN", "krm-me~1.loc"]
FIELDS = ("files", "dirs", "links", "subpackages", "own_names", "git_names", "others", "linked_dirs", "broken_links")

Tree = dict[str, object]  # name -> bytes (a file), "->target" str (a link), or a Tree (a folder)


def trees(depth: int = 3) -> st.SearchStrategy[Tree]:
    leaf = st.one_of(st.binary(max_size=8), st.sampled_from(["->a.yaml", "->/etc/passwd", "->missing"]))
    if depth == 0:
        return st.dictionaries(st.sampled_from(NAMES), leaf, max_size=4)
    return st.dictionaries(st.sampled_from(NAMES), st.one_of(leaf, st.deferred(lambda: trees(depth - 1))), max_size=5)


def write(tree: Tree, folder: Path) -> None:
    for name, value in tree.items():
        path = folder / name
        if isinstance(value, dict):
            path.mkdir()
            write(value, path)
        elif isinstance(value, str):
            os.symlink(value[2:], path)
        else:
            assert isinstance(value, bytes)
            path.write_bytes(value)


def entries_of(tree: Tree, prefix: str = "") -> list[tuple[str, str]]:
    """(rel, kind) in git's walk order: each folder before what it holds."""
    out: list[tuple[str, str]] = []
    for name, value in tree.items():
        rel = prefix + name
        if isinstance(value, dict):
            out.append((rel, pkgio.ENTRY_DIR))
            out.extend(entries_of(value, rel + "/"))
        else:
            out.append((rel, pkgio.ENTRY_LINK if isinstance(value, str) else pkgio.ENTRY_FILE))
    return out


def fields(listing: pkgio.Listing, root: str) -> dict[str, list[object]]:
    found: dict[str, list[object]] = {name: list(getattr(listing, name)) for name in FIELDS}
    found["files"] = [(f.rel, os.path.relpath(f.path, root), f.kind, f.is_link, f.package) for f in listing.files]
    return found


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=trees())
def test_a_tree_in_memory_is_listed_as_the_same_tree_on_disk(tree: Tree, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("tree")
    write(tree, root)
    on_disk = pkgio.check_untrusted(root, "upstream")
    in_memory = pkgio.listing_of_entries("<upstream>", entries_of(tree), "upstream")
    assert fields(in_memory, "<upstream>") == fields(on_disk, str(root))


@pytest.mark.parametrize(("entries", "message"), [
    ([("x", pkgio.ENTRY_FILE), ("x", pkgio.ENTRY_FILE)], "x: two entries of one folder have this name"),
    ([("d", pkgio.ENTRY_DIR), ("d/l", pkgio.ENTRY_LINK), ("d/l", pkgio.ENTRY_DIR)], "d/l: two entries"),
    ([("Service.yaml", pkgio.ENTRY_FILE), ("service.yaml", pkgio.ENTRY_FILE)], "case-insensitive"),
    ([("\u00e9.yaml", pkgio.ENTRY_FILE), ("e\u0301.yaml", pkgio.ENTRY_FILE)], "NFC/NFD"),
    ([("a\x1b.yaml", pkgio.ENTRY_FILE)], "control character"),
    ([("..", pkgio.ENTRY_DIR)], "'..'"),
])
def test_what_no_folder_could_hold_is_refused(entries: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(files.UntrustedTreeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pkgio.listing_of_entries("<upstream>", entries, "upstream")


def test_folders_nested_past_the_bound_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_TREE_DEPTH", 3)
    entries = [("a", pkgio.ENTRY_DIR), ("a/b", pkgio.ENTRY_DIR), ("a/b/c", pkgio.ENTRY_DIR)]
    assert pkgio.listing_of_entries("<u>", entries, "upstream").dirs == ["a", "a/b", "a/b/c"]
    with pytest.raises(files.UntrustedTreeError, match="nested more than 3 deep"):
        pkgio.listing_of_entries("<u>", [*entries, ("a/b/c/d", pkgio.ENTRY_DIR)], "upstream")


def test_every_spelling_of_git_and_krm_merges_names_is_left_out_and_named() -> None:
    """git refuses these names on checkout, but a server sends them in a tree: ``.GIT`` is ``.git`` on macOS,
    ``GIT~1`` on Windows; what is below them is never listed."""
    entries = [(".GIT", pkgio.ENTRY_DIR), (".GIT/config", pkgio.ENTRY_FILE), ("d", pkgio.ENTRY_DIR),
               ("d/git~1", pkgio.ENTRY_DIR), ("d/git~1/hooks", pkgio.ENTRY_DIR), ("d/git~1/hooks/x", pkgio.ENTRY_FILE),
               ("\ufeff.git", pkgio.ENTRY_LINK), (".Krm-Merge.Conflicts", pkgio.ENTRY_FILE),
               ("KRM-ME~1.TXN", pkgio.ENTRY_DIR), ("KRM-ME~1.TXN/journal", pkgio.ENTRY_FILE), ("ok.yaml", pkgio.ENTRY_FILE)]
    listing = pkgio.listing_of_entries("<upstream>", entries, "upstream")
    assert listing.rels() == ["ok.yaml"] and listing.dirs == ["d"] and listing.links == []
    assert listing.git_names == [".GIT", "d/git~1", "\ufeff.git"]
    assert listing.own_names == [".Krm-Merge.Conflicts", "KRM-ME~1.TXN"]
