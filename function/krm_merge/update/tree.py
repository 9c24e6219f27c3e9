"""The update's walks over package directories, gathered in one place.

Every walk skips ``.git``, krm-merge's own reserved names and symbolic links
(content from elsewhere is never followed); when the package reader of
:mod:`krm_merge.krm.package` can list a package's files, these walks move
onto it here, in one place.
"""

from __future__ import annotations

import os
from pathlib import Path

from krm_merge import files
from krm_merge.krm import yamlio
from krm_merge.krm.results import KrmError

from .plan import FileWrite, UpdatePlan


def diff_trees(before: Path, after: Path) -> UpdatePlan:
    """The plan that turns directory ``before`` into ``after`` (``.git`` ignored)."""
    plan = UpdatePlan()
    old, new = _all_files(before), _all_files(after)
    for rel in sorted(set(old) | set(new)):
        a = old[rel].read_bytes() if rel in old else None
        b = new[rel].read_bytes() if rel in new else None
        if a != b:
            plan.writes.append(FileWrite(rel, a, b))
    dirs_after = {os.path.relpath(d, after).replace(os.sep, "/") for d, _, _ in os.walk(after)}
    for dirpath, _, _ in os.walk(before, topdown=False):
        rel = os.path.relpath(dirpath, before).replace(os.sep, "/")
        if rel != "." and ".git" not in rel.split("/") and rel not in dirs_after:
            plan.remove_dirs.append(rel)
    return plan


def _all_files(root: Path) -> dict[str, Path]:
    from krm_merge.txn import RESERVED_NAMES

    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            if name in RESERVED_NAMES:
                continue
            full = Path(dirpath) / name
            if not full.is_symlink():
                out[full.relative_to(root).as_posix()] = full
    return out


def other_files_of(root: Path, krm_files: set[str]) -> dict[str, Path]:
    """Regular files that are not KRM files of the package (``.git`` and krm-merge's lock excluded, symlinks ignored)."""
    from krm_merge.txn import RESERVED_NAMES

    out: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and d not in RESERVED_NAMES
                             and not os.path.islink(os.path.join(dirpath, d)))
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            if name in RESERVED_NAMES:
                continue
            full = Path(dirpath) / name
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if rel in krm_files or full.is_symlink() or not full.is_file():
                continue
            if _is_krm_name(rel):
                continue  # a KRM file another copy has (its merge decided it)
            out[rel] = full
    return out


def _is_krm_name(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (name.endswith((".yaml", ".yml")) or name == "Kptfile") and not any(p.startswith(".") for p in rel.split("/"))


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
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        if rel == "." or "Kptfile" not in filenames:
            continue
        try:
            data = yamlio.load_data(files.read_text(Path(dirpath) / "Kptfile"), f"{rel}/Kptfile")
        except KrmError:
            continue  # not a readable Kptfile: the parent's merge reports it
        up = data.get("upstream") if isinstance(data, dict) else None
        if isinstance(up, dict) and isinstance(up.get("git"), dict):
            found.append(rel)
            dirnames[:] = []  # its own subpackages are its business
    return found


__all__ = ["remote_subpackages", "diff_trees", "emptied_dirs", "other_files_of"]
