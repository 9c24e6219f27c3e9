"""The update of a local package copy from an origin and an upstream directory, as a plan.

KRM resources and Kptfiles go through the package merge
(:func:`krm_merge.modes.resource_merge.merge`'s code path), every other file
through :mod:`.other_files`; origin and upstream are content from elsewhere,
checked whole as they are listed, once each, and then read in place without
following any link (:class:`krm_merge.krm.snapshot.Snapshot`,
:func:`krm_merge.krm.pkgio.check_untrusted`, docs/security.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

from krm_merge import files
from krm_merge.kptfile.document import Strategy
from krm_merge.krm import package, pkgio, yamlio
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.snapshot import Snapshot
from krm_merge.krm.results import KrmError
from krm_merge.outcomes.kinds import Outcome
from krm_merge.merge3.conflicts import MARKER, ConflictPolicy
from krm_merge.merge3.rules import fallback_keys_from

from . import ledger
from .package_merge import merge_package
from .other_files import check_other_files_unmodified, ignored_changes, other_files_differ, plan_other_files
from .plan import UpdatePlan
from .report import merge_outcomes, refused
from .result import FilesPolicy
from .tree import emptied_dirs


Copy = Union[Path, Snapshot]
"""A package copy as a folder (listed here, once) or as a snapshot a caller already took."""


def plan_update(
    local: Copy,
    origin: Copy,
    upstream: Copy,
    *,
    strategy: Strategy = Strategy.RESOURCE_MERGE,
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS,
    fallback_keys: str | None = None,
    checked: bool = False,
    files_policy: FilesPolicy = FilesPolicy.KEEP_LOCAL,
) -> UpdatePlan:
    """Compute the update of ``local`` without writing anything.

    Each copy is listed once (:class:`krm_merge.krm.snapshot.Snapshot`; a
    snapshot given is used as it is) and every step below reads that one
    listing.  ``origin`` and ``upstream`` are content from elsewhere: their
    listing checks them whole (:func:`pkgio.check_untrusted`: names, sizes,
    counts) and, unless ``checked`` (they already went through
    :func:`pkgio.prune_untrusted`, which named them), upstream's links and
    special files are named in warnings; both are then
    read in place, no link in them followed (not even one swapped in after
    the check: every read opens its names with ``O_NOFOLLOW``).  ``files_policy``
    ``MERGE`` merges non-KRM files changed on both sides
    (:mod:`krm_merge.merge3.textfile`) instead of keeping local's (kpt).
    Which files are resources is local's ``.krmignore``'s to say, for all
    three copies: a copy from elsewhere cannot hide a resource from the merge.
    """
    for label, root in (("local", local), ("origin", origin), ("upstream", upstream)):
        if isinstance(root, Path) and not root.is_dir():
            raise KrmError(f"{label} package {root} is not a directory")
    local_copy = local if isinstance(local, Snapshot) else Snapshot.local(local)
    origin_copy = origin if isinstance(origin, Snapshot) else Snapshot.untrusted(origin, "origin")
    upstream_copy = upstream if isinstance(upstream, Snapshot) else Snapshot.untrusted(upstream, "upstream")
    plan = _plan_copies(local_copy, origin_copy, upstream_copy, strategy, conflicts, fallback_keys, files_policy)
    if not checked:  # only upstream's left-out entries are reported (as before)
        plan.outcomes[:0] = refused(upstream_copy.listing, "upstream")
    return plan


def _plan_copies(
    local: Snapshot, origin: Snapshot, upstream: Snapshot, strategy: Strategy, conflicts: ConflictPolicy,
    fallback_keys: str | None, files_policy: FilesPolicy = FilesPolicy.KEEP_LOCAL,
) -> UpdatePlan:
    patterns = pkgio.read_krmignore(local.root)
    lpkg, lrl = read_copy(local, patterns)
    opkg, orl = read_copy(origin, patterns)
    upkg, url = read_copy(upstream, patterns)
    krm_files = set(lpkg.files) | set(opkg.files) | set(upkg.files)
    if strategy is Strategy.FAST_FORWARD:
        check_other_files_unmodified(local, origin, set(lpkg.files) | set(opkg.files))
    try:
        result = merge_package(
            strategy, conflicts, fallback_keys_from(fallback_keys),
            lrl.items, orl.items, url.items, lambda obj: obj.path or "",
            other_files_changed=other_files_differ(local, origin, krm_files),
        )
    except yamlio.UnreadableYamlError:
        # The copies are parsed lazily, so the first broken document stopped the merge: name every broken file.
        package.check_unreadable([("local", lpkg), ("origin", opkg), ("upstream", upkg)])
        raise

    plan = UpdatePlan()
    for new, up in result.added:
        new.set_reader_annotations(up.reader_annotations)
    for obj, index in result.moved_index:
        obj.place(obj.path or "", index)
    for obj, up in result.moved_file:
        obj.place(up.path or "", up.index)
    items = sorted(result.items, key=lambda o: o.index)
    lrl.items = items
    for write in package.plan_changes(lpkg, lrl):
        files.check_relative(write.path)
        plan.writes.append(write)
    other_writes, other_outcomes, text_marks = plan_other_files(
        local, origin, upstream, krm_files, strategy, result, merge=files_policy is FilesPolicy.MERGE,
        fail=conflicts is ConflictPolicy.FAIL)
    plan.writes.extend(other_writes)
    plan.remove_dirs.extend(emptied_dirs(local, origin, upstream, plan))
    # The markers the update writes, for the package's conflict ledger (update/ledger.py), and what the ledger
    # checks its earlier entries against: upstream's values, the subpackages' own ledgers.
    plan.marks = [ledger.field_entry(obj, obj.path or "", mark) for obj, mark in result.marks] + text_marks
    plan.upstream = [("", ledger.UpstreamFields(url.items))]
    plan.subpackages = list(local.listing.subpackages)
    plan.outcomes = merge_outcomes(result, lambda obj: obj.path or "")
    plan.outcomes += other_outcomes
    plan.outcomes += ignored_changes(local, origin, upstream, patterns)
    plan.outcomes += _forged_in_resources(opkg, upkg)
    return plan


def _forged_in_resources(opkg: package.Package, upkg: package.Package) -> list[Outcome]:
    """Each line of a resource file upstream added or changed that is shaped like a conflict marker: content,
    said so (no update recorded it, so ``conflicts`` and ``resolve`` never take it for a conflict)."""
    found: list[Outcome] = []
    for rel, source in sorted(upkg.files.items()):
        if MARKER in source.text and (rel not in opkg.files or opkg.files[rel].text != source.text):
            found.extend(ledger.forged_markers("upstream", rel, source.text.encode("utf-8")))
    return found


def read_copy(copy: Snapshot, ignore: list[str]) -> tuple[package.Package, ResourceList]:
    """Read a package copy's resources without parsing its documents.

    Only resources that differ between the copies are ever parsed (the merge
    compares texts first), which keeps a large update fast; a document that
    is not a mapping is still rejected when it has to be merged.  The files
    are the snapshot's (a copy from elsewhere read in place, following no
    link); ``ignore``: the ``.krmignore`` patterns that apply.
    """
    return package.read_package(copy.root, validate=False, untrusted=copy.what, ignore=ignore, snapshot=copy)


__all__ = ["Copy", "plan_update", "read_copy"]
