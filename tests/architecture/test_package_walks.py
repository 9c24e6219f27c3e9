"""One lister walks package trees: ``krm/pkgio.py`` (packages) and ``files.py`` (trees from elsewhere).

kyaml has one reader of a package (``kio.LocalPackageReader``); here
:func:`krm_merge.krm.pkgio.list_package` is it, and
:func:`krm_merge.files.open_dir_beneath` enters what an upstream sends for it.
Any other module that walks a tree (``os.walk``, ``os.scandir``,
``Path.rglob``) would bring its own rules for links, hidden names, ``.git``
and krm-merge's reserved names back; it fails here.  Promote's hot path
reads through the lister too (its screen works on the listing), so it has
no exception.  One-level reads of krm-merge's own folders (``txn.py``'s
staging folder with ``os.listdir``, the git cache's with ``iterdir``/``glob``)
are not package walks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
WALKERS = {"krm/pkgio.py", "files.py"}
WALKS = {"walk", "scandir", "rglob", "fwalk"}


def walks(source: str) -> list[int]:
    """Lines that walk a tree: ``os.walk``/``os.scandir``/``os.fwalk`` (or the bare names imported), any ``.rglob``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [node.lineno for alias in node.names if alias.name in WALKS]
        elif isinstance(node, ast.Attribute) and node.attr in WALKS:
            on_os = isinstance(node.value, ast.Name) and node.value.id == "os"
            if on_os or node.attr == "rglob":
                found.append(node.lineno)
    return found


def test_walks_are_recognised() -> None:
    assert walks("import os\nfor d in os.walk(x): pass\n") == [2]
    assert walks("from os import scandir\n") == [1]
    assert walks("list(p.rglob('*'))\n") == [1]
    assert walks("self.walk(node, field)\n") == []  # the merge3 walker's method is no tree walk


def test_no_module_but_the_lister_and_files_walks_a_tree() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel not in WALKERS and (lines := walks(path.read_text())):
            found[rel] = lines
    assert not found, f"tree walks outside krm/pkgio.py and files.py (use pkgio.list_package): {found}"


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
