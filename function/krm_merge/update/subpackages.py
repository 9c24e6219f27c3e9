"""kpt's rules for whole subpackages in a package update.

A subpackage (a directory below the root holding a Kptfile) is decided as a
whole before its resources are merged (checked against kpt 1.0.0-beta.56):
deleted upstream, it is removed if unchanged locally, else kept whole with a
warning; deleted locally, it stays deleted (upstream's new files are not
brought back); added on both sides, it is an error, as in kpt.  A remote
subpackage (its Kptfile has its own ``upstream``) is merged with the
parent's upstream copy by its own ``updateStrategy`` unless local re-pointed
it (then it is left to its own update), and only its Kptfile is merged when
upstream's copy is unfetched (``upstream`` without ``upstreamLock``).
"""

from __future__ import annotations

from typing import Any, Callable

from krm_merge.kptfile.document import Strategy, is_kptfile
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.pkgio import folders_of
from krm_merge.krm.results import KrmError
from krm_merge.outcomes.kinds import Action, Reason

from .context import MergeContext
from .resources import same_content
from .result import PackageMergeResult, Subpackage

MergeOwn = Callable[[str, Any, list[Item], list[Item], list[Item], PackageMergeResult], None]
"""Merges a remote subpackage by its own strategy into the result: ``(directory, its upstream, local, origin, upstream, out)``."""


def decide_subpackages(
    ctx: MergeContext, merge_own: MergeOwn, local: list[Item], origin: list[Item], upstream: list[Item], out: PackageMergeResult
) -> tuple[list[Item], list[Item], list[Item]]:
    """kpt's per-subpackage rules; returns the items left for the resource merge.

    Items of a subpackage decided here leave the three lists: kept ones go
    straight to ``out.items``, removed ones to ``out.deleted``.  Each item is
    filed once under the subpackage folders above it, so deciding thousands of
    subpackages costs their items, not items times subpackages.
    """
    sources = (local, origin, upstream)
    ld, od, ud = (ctx.subpackage_dirs(src) for src in sources)
    infos = [ctx.upstream_infos(src) for src in sources]
    folders = ld | od | ud
    below = [_by_subpackage(ctx, src, folders) for src in sources]
    decided: set[int] = set()  # ids of the items that leave the three lists
    for directory in sorted(folders, key=lambda d: (d.count("/"), d)):
        if any(folder in out.subpackages for folder in folders_of(directory)):
            continue  # inside a subpackage already decided as a whole
        if ctx.options.strategy is not Strategy.RESOURCE_MERGE and not any(directory in info for info in infos):
            continue  # fast-forward / replace: a local subpackage is replaced with the rest (kpt)
        # kpt asks whether the directory exists: a subpackage whose Kptfile alone was removed is still there
        inside = [found.get(directory, []) for found in below]
        decision = _decide(ctx, directory, bool(inside[0]), bool(inside[1]), bool(inside[2]), inside[0], inside[1])
        if decision is Subpackage.MERGE and inside[0] and inside[2]:
            decision = remote_decision(*(info.get(directory) for info in infos))
            if decision is Subpackage.MERGE and directory in infos[0]:
                decision = Subpackage.OWN
        if decision is Subpackage.MERGE:
            continue
        out.subpackages[directory] = decision
        if decision is Subpackage.OWN:
            merge_own(directory, infos[0][directory][0], inside[0], inside[1], inside[2], out)
        if decision is Subpackage.UNFETCHED:  # the Kptfiles stay in the merge
            inside = [[o for o in items if not is_kptfile(o)] for items in inside]
        mine = inside[0]
        if decision is not Subpackage.OWN:
            action = Action.DELETED if decision is Subpackage.DELETE else Action.KEPT
            warned = _warned(mine)
            out.outcomes.extend((o, action, _reason(decision, id(o) in warned), directory) for o in mine)
        if decision is Subpackage.OWN:
            pass
        elif decision is Subpackage.DELETE:
            out.deleted.extend(mine)
        else:
            out.items.extend(mine)  # untouched (a local directory that lost its Kptfile stays too)
        decided.update(id(o) for items in inside for o in items)
    local, origin, upstream = ([o for o in src if id(o) not in decided] for src in sources)
    return local, origin, upstream


def _by_subpackage(ctx: MergeContext, items: list[Item], folders: set[str]) -> dict[str, list[Item]]:
    """Subpackage folder -> the items below it (at any depth), in their order."""
    out: dict[str, list[Item]] = {}
    for obj in items:
        for folder in folders_of(ctx.rel_path(obj)):
            if folder in folders:
                out.setdefault(folder, []).append(obj)
    return out


_REASONS = {
    Subpackage.DELETE: Reason.SUBPACKAGE_DELETED, Subpackage.SKIP: Reason.SUBPACKAGE_DELETED_LOCALLY,
    Subpackage.REMOTE: Reason.SUBPACKAGE_REMOTE, Subpackage.UNFETCHED: Reason.SUBPACKAGE_UNFETCHED,
}


def _warned(mine: list[Item]) -> set[int]:
    """The ids of the local items that carry a kept subpackage's warning: its Kptfiles, or its first item when
    the local copy lost its Kptfile (the folder is still there and still kept: a person is told all the same)."""
    return {id(o) for o in mine if is_kptfile(o)} or {id(o) for o in mine[:1]}


def _reason(decision: Subpackage, warned: bool) -> Reason:
    """Why a resource of a subpackage decided whole got its outcome (a kept one's ``warned`` item carries the warning)."""
    if decision is Subpackage.KEEP:
        return Reason.SUBPACKAGE_KEPT if warned else Reason.KEPT_WITH_SUBPACKAGE
    return _REASONS[decision]


def _decide(
    ctx: MergeContext, directory: str, in_local: bool, in_origin: bool, in_upstream: bool,
    local: list[Item], origin: list[Item],
) -> Subpackage:
    if in_local and in_upstream and not in_origin:
        raise KrmError(f'subpackage "{directory}" added in both upstream and local')
    if in_origin and not in_local:
        return Subpackage.SKIP
    if in_origin and in_local and not in_upstream:
        return Subpackage.KEEP if _subpackage_changed(ctx, directory, local, origin) else Subpackage.DELETE
    return Subpackage.MERGE


def _subpackage_changed(ctx: MergeContext, directory: str, local: list[Item], origin: list[Item]) -> bool:
    inside = ctx.inside(directory)
    li, oi = ctx.keyed([o for o in local if inside(o)], [o for o in origin if inside(o)])
    if li.keys() != oi.keys():
        return True
    if any(not same_content(obj, oi[key], kptfile=is_kptfile(obj)) for key, obj in li.items()):
        return True
    return ctx.other_files_changed is not None and ctx.other_files_changed(directory)


def remote_decision(local: tuple[Any, Any] | None, origin: tuple[Any, Any] | None, upstream: tuple[Any, Any] | None) -> Subpackage:
    """kpt's rules (``mergePackage``) for a subpackage present locally and upstream that has its own upstream."""
    if local is None and origin is None and upstream is None:
        return Subpackage.MERGE  # a local package (no upstream anywhere) of the parent
    if upstream is not None and not upstream[1]:
        return Subpackage.UNFETCHED  # kpt merges only the Kptfile (updateUpstream)
    if local is None or origin is None:
        return Subpackage.REMOTE
    if not origin[1]:
        raise KrmError("no origin available for package (its origin Kptfile has upstream but no upstreamLock)")
    own = local[0].get("updateStrategy") if isinstance(local[0], dict) else None
    if _git_of(local[0]) != _git_of(origin[0]) and own in (None, "", Strategy.RESOURCE_MERGE.value):
        return Subpackage.REMOTE  # re-pointed locally: kpt's resource-merge leaves it to its own update
    return Subpackage.MERGE


def _git_of(upstream: Any) -> Any:
    return upstream.get("git") if isinstance(upstream, dict) else None


__all__ = ["MergeOwn", "decide_subpackages", "remote_decision"]
