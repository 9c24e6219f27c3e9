"""A package merge's decisions as typed outcomes: each resource, each conflict; links a copy held.

The merge decides (:class:`~krm_merge.update.result.PackageMergeResult`); this
module only names what it decided in the outcomes' terms
(:mod:`krm_merge.outcomes.kinds`), for ``krm-merge update``'s plan and for the
resource-merge and pipeline-merge modes, whose results are the renderer's
(:func:`krm_merge.outcomes.render.function_results`).
"""

from __future__ import annotations

from krm_merge.krm.kubeobject import Item
from krm_merge.krm.pkgio import Listing
from krm_merge.krm.results import ResourceRef
from krm_merge.outcomes.kinds import ConflictOutcome, LinkRefused, Outcome, RefusedEntry, ResourceOutcome

from .result import PackageMergeResult, RelPath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from krm_merge.merge3.conflicts import Conflict


def resource_of(obj: Item) -> ResourceRef | None:
    """The resource an item is; None for a YAML document that is no resource (no apiVersion, no kind: its file names it)."""
    ref = obj.ref()
    return None if not ref.kind and not ref.api_version else ref


def merge_outcomes(merged: PackageMergeResult, rel_path: RelPath) -> list[Outcome]:
    """One outcome per resource the merge decided, then one per conflict, in the merge's order."""
    found: list[Outcome] = [ResourceOutcome(resource_of(obj), rel_path(obj), action, reason, detail)
                            for obj, action, reason, detail in merged.outcomes]
    found += [conflict_outcome(obj, conflict, rel_path) for obj, conflict in merged.conflicts]
    return found


def conflict_outcome(obj: Item, conflict: Conflict, rel_path: RelPath) -> ConflictOutcome:
    """One field changed on both sides, as an outcome: resource, file, field, the three values, the decision."""
    return ConflictOutcome(resource_of(obj), rel_path(obj), obj.index, conflict.path, conflict.local, conflict.upstream,
                           conflict.origin, conflict.winner, conflict.rule)


def refused(listing: Listing, what: str) -> list[Outcome]:
    """The links, special files, names of krm-merge's own state (its conflict ledger, lock, journal) and other
    spellings of ``.git`` of a copy from elsewhere (``what``: origin, upstream): never read nor copied."""
    out: list[Outcome] = [LinkRefused(what, rel) for rel in listing.links]
    return (out
            + [LinkRefused(what, rel, RefusedEntry.SPECIAL) for rel in listing.others]
            + [LinkRefused(what, rel, RefusedEntry.OWN_NAME) for rel in listing.own_names]
            + [LinkRefused(what, rel, RefusedEntry.GIT_NAME) for rel in listing.git_names])


__all__ = ["conflict_outcome", "merge_outcomes", "refused", "resource_of"]
