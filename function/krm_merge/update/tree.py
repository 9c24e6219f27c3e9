"""The update's walks over package directories, gathered in one place.

Files are listed by the project's one package lister
(:func:`krm_merge.krm.pkgio.list_package`): ``.git`` and krm-merge's
reserved names never, hidden names included (kpt pkg update copies them),
``.krmignore`` not applied (it is ``kpt fn source``'s rule, not the
update's), and symbolic links skipped, as ``kpt pkg update`` skips local
links (content from elsewhere is never followed).  The lister names files
only, so the two folder walks (folders that disappear) stay here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from krm_merge import files
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.results import KrmError

from .plan import UpdatePlan


def _regular_files(root: Path, *, names: tuple[str, ...] = (), hidden: bool = True) -> Iterator[pkgio.PackageFile]:
    """The package's files that are not links (every file, or those named ``names``)."""
    listing = pkgio.list_package(root, names=names, hidden=hidden, krmignore=False)
    return (f for f in listing.files if not f.is_link)


def diff_trees(before: Path, after: Path) -> UpdatePlan:
    """The plan that turns directory ``before`` into ``after`` (``.git`` ignored)."""
    plan = UpdatePlan()
    old, new = _all_files(before), _all_files(after)
    for rel in sorted(set(old) | set(new)):
        a = old[rel].read_bytes() if rel in old else None
        b = new[rel].read_bytes() if rel in new else None
        if a != b:
            plan.writes.append(pkgio.Write(rel, a, b))
    dirs_after = {os.path.relpath(d, after).replace(os.sep, "/") for d, _, _ in os.walk(after)}
    for dirpath, _, _ in os.walk(before, topdown=False):
        rel = os.path.relpath(dirpath, before).replace(os.sep, "/")
        if rel != "." and ".git" not in rel.split("/") and rel not in dirs_after:
            plan.remove_dirs.append(rel)
    return plan


def _all_files(root: Path) -> dict[str, Path]:
    return {f.rel: Path(f.path) for f in _regular_files(root)}


def other_files_of(root: Path, krm_files: set[str]) -> dict[str, Path]:
    """Regular files that are not KRM files of the package (``.git`` and krm-merge's lock excluded, symlinks ignored)."""
    return {f.rel: Path(f.path) for f in _regular_files(root)
            if f.rel not in krm_files and not _is_krm_name(f.rel)}  # a KRM file another copy has: its merge decided it


def _is_krm_name(rel: str) -> bool:
    """A name ``kpt fn source`` reads, outside hidden folders (one in a hidden folder is an ordinary file)."""
    return pkgio.is_krm_name(rel.rsplit("/", 1)[-1]) and not any(p.startswith(".") for p in rel.split("/"))


def kptfiles(root: Path) -> list[str]:
    """Every Kptfile of a package tree (relative paths; links skipped); none when ``root`` is no folder.

    A missing package is reported where its own Kptfile is read, in the user's terms.
    """
    if not root.is_dir():
        return []
    return [f.rel for f in _regular_files(root, names=(pkgio.KPTFILE,))]


def emptied_dirs(local: Path, origin: Path, upstream: Path, plan: UpdatePlan) -> list[str]:
    """Local directories left empty that origin has and upstream does not."""
    deleted = {w.path for w in plan.writes if w.data is None}
    added = {w.path for w in plan.writes if w.data is not None}
    out = []
    for dirpath, dirnames, filenames in os.walk(local, topdown=False):
        rel = os.path.relpath(dirpath, local).replace(os.sep, "/")
        if rel == "." or ".git" in rel.split("/"):
            continue
        if not (origin / rel).is_dir() or (upstream / rel).is_dir():
            continue
        remaining = [f"{rel}/{n}" for n in filenames if f"{rel}/{n}" not in deleted]
        subdirs = [d for d in dirnames if f"{rel}/{d}" not in out]
        if not remaining and not subdirs and not any(a.startswith(rel + "/") for a in added):
            out.append(rel)
    return out


def remote_subpackages(root: Path) -> list[str]:
    """Subpackages below ``root`` whose Kptfile has its own ``upstream.git`` (outermost ones only)."""
    found: list[str] = []
    listed = pkgio.list_package(root, names=(pkgio.KPTFILE,), krmignore=False).subpackages
    for rel in sorted(listed, key=lambda rel: rel.split("/")):  # parents first, as a walk meets them
        if any(rel.startswith(outer + "/") for outer in found):
            continue  # its own subpackages are its business
        try:
            data = yamlio.load_data(files.read_text(root / rel / pkgio.KPTFILE), f"{rel}/Kptfile")
        except KrmError:
            continue  # not a readable Kptfile: the parent's merge reports it
        up = data.get("upstream") if isinstance(data, dict) else None
        if isinstance(up, dict) and isinstance(up.get("git"), dict):
            found.append(rel)
    return found


__all__ = ["diff_trees", "emptied_dirs", "kptfiles", "other_files_of", "remote_subpackages"]
