"""One lister walks package trees: ``krm/pkgio.py`` (packages) and ``files.py`` (trees from elsewhere).

kyaml has one reader of a package (``kio.LocalPackageReader``); here
:func:`krm_merge.krm.pkgio.list_package` is it, and
:func:`krm_merge.files.open_dir_beneath` enters what an upstream sends for it.
Any other module that walks or lists a tree (``os.walk``, ``os.fwalk``,
``os.scandir``, ``os.listdir``, ``Path.iterdir``, ``Path.glob``/``rglob``,
``glob.glob``/``iglob``, ``shutil.copytree``) would bring its own rules for
links, hidden names, ``.git`` and krm-merge's reserved names back; it fails
here unless :data:`ALLOWED` names that module and that call with the reason.
Promote reads through the lister too (its screen and its ``--kustomize-image``
folders match on the one listing of the run), so it has no row.  A row no longer used fails too, so the table
stays the list of places that really list folders.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
OS_WALKS = {"walk", "fwalk", "scandir", "listdir"}
"""Functions of ``os`` that list a folder or walk a tree."""
PATH_WALKS = {"iterdir", "glob", "rglob"}
"""Methods of ``pathlib.Path`` that do (``.glob`` on the ``glob`` module is ``glob.glob``)."""
IMPORTED = {"os": OS_WALKS, "glob": {"glob", "iglob"}, "shutil": {"copytree"}}
"""The same, imported by name (``from os import scandir``)."""

ALLOWED: dict[tuple[str, str], str] = {
    ("krm/pkgio.py", "os.scandir"): "the lister itself (list_package)",
    ("krm/pkgio.py", "os.listdir"): "ChangeSet.validate: one folder's names, for new names a case-insensitive "
                                    "file system would merge (one level, no walk)",
    ("files.py", "os.scandir"): "the bounded check of trees from elsewhere (Budget, depth, no link followed)",
    ("txn.py", "os.listdir"): "the transaction's own staging folder, and whether a folder a journal removes is "
                              "empty (one level, krm-merge's own files)",
    ("commands/report.py", "os.listdir"): "report merge DIR: the *.json shard reports of one folder the user "
                                          "names (one level, no package)",
    ("upstream/git.py", "Path.glob"): "the git cache's own .cloning. leftovers beside one mirror (one level)",
    ("testing.py", "Path.glob"): "krm_merge.testing: a test author's examples folder (*/.expected/config.yaml), "
                                 "no package",
    ("testing.py", "shutil.copytree"): "krm_merge.testing: an example copied into a scratch git repository",
}
"""The modules that list a folder or walk a tree, and why each may (module, call): one line each."""


def walks(source: str) -> list[tuple[int, str]]:
    """Each folder listing or tree walk of ``source``: its line and the call (``os.listdir``, ``Path.glob``, ...)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in IMPORTED:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names
                      if alias.name in IMPORTED[node.module]]
        elif isinstance(node, ast.Attribute):
            on = node.value.id if isinstance(node.value, ast.Name) else None
            if on == "os" and node.attr in OS_WALKS:
                found.append((node.lineno, f"os.{node.attr}"))
            elif on == "glob" and node.attr in ("glob", "iglob"):
                found.append((node.lineno, f"glob.{node.attr}"))
            elif node.attr == "copytree":
                found.append((node.lineno, "shutil.copytree"))
            elif node.attr in PATH_WALKS:
                found.append((node.lineno, f"Path.{node.attr}"))
    return sorted(found)


def _all_walks() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, call in walks(path.read_text()):
            found.setdefault((rel, call), []).append(line)
    return found


def test_walks_are_recognised() -> None:
    assert walks("import os\nfor d in os.walk(x): pass\n") == [(2, "os.walk")]
    assert walks("from os import scandir\n") == [(1, "os.scandir")]
    assert walks("names = os.listdir(d)\n") == [(1, "os.listdir")]
    assert walks("list(p.rglob('*'))\nlist(p.glob('*'))\nlist(p.iterdir())\n") == [
        (1, "Path.rglob"), (2, "Path.glob"), (3, "Path.iterdir")]
    assert walks("glob.glob(x)\nglob.iglob(x)\nfrom glob import glob\n") == [
        (1, "glob.glob"), (2, "glob.iglob"), (3, "glob.glob")]
    assert walks("shutil.copytree(a, b)\nfrom shutil import copytree\n") == [
        (1, "shutil.copytree"), (2, "shutil.copytree")]
    assert walks("self.walk(node, field)\nglob.escape(x)\n") == []  # the merge3 walker's method is no tree walk


def test_no_module_walks_a_tree_but_the_homes_allowed() -> None:
    found = {f"{rel}: {call} (line {', '.join(map(str, lines))})" for (rel, call), lines in _all_walks().items()
             if (rel, call) not in ALLOWED}
    assert not found, f"tree walks outside the lister (use pkgio.list_package, or add a row with its reason): {found}"


def test_every_allowed_walk_is_still_there() -> None:
    stale = set(ALLOWED) - set(_all_walks())
    assert not stale, f"ALLOWED rows no module needs any more (remove them): {stale}"


def test_the_lister_names_every_real_folder_but_no_link_and_no_git(tmp_path: Path) -> None:
    from krm_merge.krm import pkgio

    for rel in ("a/b", "a/c", ".hidden/x", ".git/objects", "sub/inner"):
        (tmp_path / rel).mkdir(parents=True)
    (tmp_path / "sub" / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    listing = pkgio.list_package(tmp_path, hidden=True, krmignore=False)
    assert listing.dirs == [".hidden", ".hidden/x", "a", "a/b", "a/c", "sub", "sub/inner"]
    assert listing.linked_dirs == ["link"]
    assert pkgio.list_package(tmp_path).dirs == ["a", "a/b", "a/c", "sub", "sub/inner"]
    assert pkgio.list_package(tmp_path, subpackages=False).dirs == ["a", "a/b", "a/c", "sub"]
