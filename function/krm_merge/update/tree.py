"""The update's walks over package directories, gathered in one place.

Each copy is listed once, by the project's one package lister
(:func:`krm_merge.krm.pkgio.list_package`), into a
:class:`krm_merge.krm.snapshot.Snapshot` every step here filters: ``.git`` and krm-merge's
reserved names never, hidden names included (kpt pkg update copies them),
``.krmignore`` not applied (it is ``kpt fn source``'s rule, not the
update's), and symbolic links skipped, as ``kpt pkg update`` skips local
links: the walks are ``nofollow`` listings and files are read in place
through :func:`krm_merge.files.read_beneath`, so content from elsewhere
(origin, upstream) is never read through a link, not even one swapped in
after the listing, and needs no copy first.  Its folders
(:attr:`~krm_merge.krm.pkgio.Listing.dirs`) say which ones an update empties
or removes: no walk of its own here.
"""

from __future__ import annotations

import os

from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.results import KrmError
from krm_merge.krm.snapshot import Snapshot, SnapshotFile

from .plan import UpdatePlan


def diff_trees(before: Snapshot, after: Snapshot) -> UpdatePlan:
    """The plan that turns the copy ``before`` into ``after`` (``.git`` ignored)."""
    plan = UpdatePlan()
    old, new = _all_files(before), _all_files(after)
    for rel in sorted(set(old) | set(new)):
        a = old[rel].read_bytes() if rel in old else None
        b = new[rel].read_bytes() if rel in new else None
        if a != b:
            plan.writes.append(pkgio.Write(rel, a, b))
    gone = set(before.listing.dirs) - set(after.listing.dirs)
    plan.remove_dirs.extend(rel for rel in _bottom_up(before.listing.dirs) if rel in gone)
    return plan


def _bottom_up(folders: list[str]) -> list[str]:
    """Folders each after every folder inside it: one emptied is removed after its contents."""
    return sorted(folders, key=lambda rel: rel.split("/"), reverse=True)


def _all_files(copy: Snapshot) -> dict[str, SnapshotFile]:
    return {f.rel: copy.file(f.rel) for f in copy.regular_files()}


def other_files_of(copy: Snapshot, krm_files: set[str]) -> dict[str, SnapshotFile]:
    """Regular files that are not KRM files of the package (``.git`` and krm-merge's lock excluded, symlinks ignored)."""
    return {f.rel: copy.file(f.rel) for f in copy.regular_files()
            if f.rel not in krm_files and not _is_krm_name(f.rel)}  # a KRM file another copy has: its merge decided it


def ignored_krm_files(copy: Snapshot, patterns: list[str]) -> dict[str, SnapshotFile]:
    """The files ``kpt fn source`` would read (YAML, Kptfiles) that ``patterns`` (local's ``.krmignore``) leave out.

    The update reads none of them as resources, and they are no "other
    files" either: :func:`krm_merge.update.other_files.ignored_changes` names
    each one upstream changed.  Nothing is listed without patterns.
    """
    if not patterns:
        return {}
    return {f.rel: copy.file(f.rel) for f in copy.regular_files()
            if _is_krm_name(f.rel) and pkgio.ignored(f.rel, patterns)}


def _is_krm_name(rel: str) -> bool:
    """A name ``kpt fn source`` reads, outside hidden folders (one in a hidden folder is an ordinary file)."""
    return pkgio.is_krm_name(rel.rsplit("/", 1)[-1]) and not any(p.startswith(".") for p in rel.split("/"))


def emptied_dirs(local: Snapshot, origin: Snapshot, upstream: Snapshot, plan: UpdatePlan) -> list[str]:
    """Local directories left empty that origin has and upstream does not."""
    deleted = {w.path for w in plan.writes if w.data is None}
    # every folder a new file will sit in, at any depth (looked up, not searched, per folder)
    filled = {folder for w in plan.writes if w.data is not None for folder in pkgio.folders_of(w.path)}
    listing = local.listing
    entries, folders = _contents(listing)
    # The folders origin and upstream have, from their listings: no stat through a link of theirs.
    in_origin, in_upstream = set(origin.listing.dirs), set(upstream.listing.dirs)
    out: list[str] = []
    emptied: set[str] = set()
    for rel in _bottom_up(listing.dirs):
        if rel not in in_origin or rel in in_upstream:
            continue
        if os.path.lexists(os.path.join(local.root, rel, ".git")):
            continue  # a repository of its own inside the package (the lister does not enter .git)
        remaining = [entry for entry in entries.get(rel, ()) if entry not in deleted]
        subdirs = [d for d in folders.get(rel, ()) if d not in emptied]
        if not remaining and not subdirs and rel not in filled:
            out.append(rel)
            emptied.add(rel)
    return out


def _contents(listing: pkgio.Listing) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Folder -> what is in it but folders (files, links, special files); folder -> the folders in it."""
    entries: dict[str, list[str]] = {}
    for rel in (*listing.rels(), *listing.links, *listing.linked_dirs, *listing.broken_links, *listing.others):
        entries.setdefault(rel.rpartition("/")[0], []).append(rel)
    folders: dict[str, list[str]] = {}
    for rel in listing.dirs:
        folders.setdefault(rel.rpartition("/")[0], []).append(rel)
    return entries, folders


def remote_subpackages(copy: Snapshot) -> list[str]:
    """Subpackages of a copy whose Kptfile has its own ``upstream.git`` (outermost ones only)."""
    found: list[str] = []
    found_set: set[str] = set()  # the same, looked up by each folder above a subpackage
    listed = copy.subpackages()
    for rel in sorted(listed, key=lambda rel: rel.split("/")):  # parents first, as a walk meets them
        if any(folder in found_set for folder in pkgio.folders_of(rel)):
            continue  # its own subpackages are its business
        try:
            data = yamlio.load_data(copy.read_text(f"{rel}/{pkgio.KPTFILE}"), f"{rel}/Kptfile")
        except KrmError:
            continue  # not a readable Kptfile: the parent's merge reports it
        up = data.get("upstream") if isinstance(data, dict) else None
        if isinstance(up, dict) and isinstance(up.get("git"), dict):
            found.append(rel)
            found_set.add(rel)
    return found


__all__ = ["diff_trees", "emptied_dirs", "ignored_krm_files", "other_files_of", "remote_subpackages"]
