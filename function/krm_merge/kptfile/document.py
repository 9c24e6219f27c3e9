"""What a Kptfile is to a package update: how it is recognised, kpt's default one, and its render status.

kpt keeps every Kptfile rule of its update in ``kptfileutil``; these are
the ones the package merge needs besides the pipeline merge (:mod:`.merge`)
and the upstream/lock fields (:mod:`.upstream`).
"""

from __future__ import annotations

from enum import Enum

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.values import same

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


ROOT_KPTFILE = "Kptfile"
DEFAULT_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
RENDERED_CONDITION = "Rendered"
UPSTREAM_FIELDS = ("upstream", "upstreamLock")
"""Where a copy came from: its own, never another copy's (except where kpt says so)."""


class Strategy(Enum):
    """How a package update treats local changes."""

    RESOURCE_MERGE = "resource-merge"
    FAST_FORWARD = "fast-forward"
    FORCE_DELETE_REPLACE = "force-delete-replace"


STRATEGIES = tuple(s.value for s in Strategy)
"""kpt's names of the strategies (``upstream.updateStrategy``, ``--strategy``)."""


def update_strategy(text: str) -> Strategy | None:
    """A Kptfile's ``upstream.updateStrategy`` when it names one of kpt's strategies, else None."""
    data = yamlio.load_data(text, "Kptfile")
    value = ((data or {}).get("upstream") or {}).get("updateStrategy") if isinstance(data, dict) else None
    return Strategy(value) if value in STRATEGIES else None


# How much local work each strategy can lose: resource-merge merges it, fast-forward refuses to
# update over it (the update fails, nothing lost), force-delete-replace deletes it.
_RISK = {Strategy.RESOURCE_MERGE: 0, Strategy.FAST_FORWARD: 1, Strategy.FORCE_DELETE_REPLACE: 2}


def more_destructive(proposed: Strategy, current: Strategy) -> bool:
    """Whether strategy ``proposed`` treats local changes harder than ``current``."""
    return _RISK[proposed] > _RISK[current]


def is_kptfile(obj: Item) -> bool:
    """Whether the item is a Kptfile (kind Kptfile of group kpt.dev)."""
    return obj.kind == "Kptfile" and obj.group == "kpt.dev"


def without_render_status(kptfile: dict[str, Any]) -> None:
    """Drop what ``kpt fn render`` records in a Kptfile's ``status`` (it describes another copy's render).

    ``status.renderStatus`` and conditions of type ``Rendered`` go; other
    conditions stay; an emptied ``conditions`` or ``status`` goes too.
    """
    status = kptfile.get("status")
    if not isinstance(status, dict):
        return
    status.pop("renderStatus", None)
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        kept = [c for c in conditions if not (isinstance(c, dict) and c.get("type") == RENDERED_CONDITION)]
        if kept:
            status["conditions"] = kept
        else:
            status.pop("conditions")
    if not status:
        kptfile.pop("status")


def comparable(kptfile: dict[str, Any]) -> dict[str, Any]:
    """A Kptfile's data without what each copy holds for itself: its name, upstream and lock, its render status.

    Two copies equal so are the same package content (fast-forward,
    subpackage decisions).  ``status`` is written by ``kpt fn render`` and
    controllers, not by the user: kpt's current rule (beta.56 still counted
    it, so a rendered package could not fast-forward).
    """
    out = {k: v for k, v in kptfile.items() if k not in (*UPSTREAM_FIELDS, "status")}
    meta = out.get("metadata")
    out["metadata"] = {k: v for k, v in meta.items() if k != "name"} if isinstance(meta, dict) else {}
    return out


def without_local_owned(kptfile: dict[str, Any]) -> dict[str, Any]:
    """A Kptfile's data (shallow copies) without what a copy always keeps its own in a merge: ``metadata.name``
    and ``namespace``, ``upstream`` and ``upstreamLock`` (:func:`krm_merge.kptfile.merge.merge_kptfile`'s rule)."""
    out = {k: v for k, v in kptfile.items() if k not in UPSTREAM_FIELDS}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in ("name", "namespace")}
    return out


def only_local_owned_changed(local: Any, origin: Any) -> bool:
    """Whether local's root Kptfile holds origin's data but for what the copy owns (what ``kpt pkg get`` writes).

    Then merging upstream's Kptfile is applying upstream's change (origin -> upstream, as data) to
    local's: no field changed on both sides, nothing for the function-list rules to decide.
    """
    if not isinstance(local, dict) or not isinstance(origin, dict):
        return False
    return same(without_local_owned(local), without_local_owned(origin))


def upstream_info(kptfile: Any) -> tuple[Any, Any] | None:
    """A Kptfile's ``(upstream, upstreamLock)`` when it names an upstream (a remote package), else None."""
    if not isinstance(kptfile, dict) or not kptfile.get("upstream"):
        return None
    return kptfile.get("upstream"), kptfile.get("upstreamLock")


def unchanged_upstream_keeps_local(local: Any, upstream: Any, *, nested: bool) -> bool:
    """Whether local's Kptfile is the merge when upstream's did not change since origin.

    A root Kptfile: always.  A nested one: only when local's upstream and
    lock already are upstream's (else kpt takes upstream's, and the Kptfile
    merge runs).
    """
    if not nested:
        return True
    return isinstance(local, dict) and isinstance(upstream, dict) and all(
        upstream.get(key) is None or same(local.get(key), upstream.get(key)) for key in UPSTREAM_FIELDS
    )


def with_local_upstream(taken: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    """Upstream's Kptfile data (``taken``) with local's name, upstream and upstreamLock; no render status.

    kpt's force-delete-replace of a root Kptfile: the package stays the one
    the user fetched, under the name they gave it.
    """
    keep = {k: local[k] for k in UPSTREAM_FIELDS if k in local}
    name = (local.get("metadata") or {}).get("name")
    ordered: dict[str, Any] = {}
    for key, value in taken.items():
        if key in UPSTREAM_FIELDS:
            continue
        ordered[key] = value
        if key == "metadata":  # kpt's field order: upstream info right after metadata
            ordered.update(keep)
    ordered.update({k: v for k, v in keep.items() if k not in ordered})
    if name is not None:
        ordered.setdefault("metadata", {})["name"] = name
    without_render_status(ordered)  # upstream's render is not this copy's (kpt clears it)
    return ordered


__all__ = ["STRATEGIES", "Strategy", "more_destructive", "update_strategy", "DEFAULT_KPTFILE", "RENDERED_CONDITION", "ROOT_KPTFILE", "UPSTREAM_FIELDS", "comparable", "is_kptfile", "only_local_owned_changed", "unchanged_upstream_keeps_local", "upstream_info", "with_local_upstream", "without_local_owned", "without_render_status"]
