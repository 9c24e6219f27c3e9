"""kpt's ``force-delete-replace`` strategy: the local copy becomes upstream's, local changes are dropped.

The root Kptfile is the user's package: kpt keeps local's whole (its
``info``, its pipeline) and only records the new ``upstream``/``upstreamLock``
afterwards.  Subpackages' Kptfiles are replaced like any resource.
``fast-forward`` runs this strategy over an unmodified package, but takes
upstream's root Kptfile with local's name, ``upstream`` and ``upstreamLock``
(a deliberate difference from kpt, docs/merge.md: nothing local is lost).
"""

from __future__ import annotations

from typing import Any

from krm_merge.kptfile.document import ROOT_KPTFILE, is_kptfile, with_local_upstream
from krm_merge.krm.kubeobject import Item
from krm_merge.outcomes.kinds import Action, Reason

from .context import MergeContext
from .resources import take_upstream
from .result import PackageMergeResult


class ForceDeleteReplace:
    """Upstream wins everything but the root Kptfile (``take_root_kptfile``: that too, with local's upstream info)."""

    def __init__(self, take_root_kptfile: bool = False) -> None:
        self.take_root_kptfile = take_root_kptfile

    def check(self, ctx: MergeContext, local: list[Item], origin: list[Item]) -> None:
        """Nothing to check: local changes are dropped by design."""

    def update(
        self, ctx: MergeContext, li: dict[Any, Item], oi: dict[Any, Item], ui: dict[Any, Item],
    ) -> PackageMergeResult:
        """Every local resource becomes upstream's or goes; upstream's new ones are added (origin is not asked)."""
        result = PackageMergeResult()
        for key, obj in li.items():
            up = ui.get(key)
            if up is None:
                result.deleted.append(obj)
                result.outcomes.append((obj, Action.DELETED, Reason.NOT_UPSTREAM, ctx.options.strategy.value))
                continue
            if is_kptfile(obj) and ctx.rel_path(obj) == ROOT_KPTFILE and (up is obj or not self.take_root_kptfile):
                result.outcomes.append((obj, Action.KEPT, Reason.ROOT_KPTFILE, ctx.options.strategy.value))
            elif is_kptfile(obj) and ctx.rel_path(obj) == ROOT_KPTFILE:
                result.outcomes.append((obj, Action.TAKEN, Reason.REPLACED_BY_STRATEGY, ctx.options.strategy.value))
                set_kptfile_from_upstream(obj, up)
            else:  # a resource, or a subpackage's Kptfile: replaced whole, its upstream info too (kpt)
                result.outcomes.append((obj, Action.TAKEN, Reason.REPLACED_BY_STRATEGY, ctx.options.strategy.value))
                take_upstream(obj, up)
            result.items.append(obj)
            if obj.changed:
                result.updated.append(obj)
        for key, up in ui.items():
            if key not in li:
                ctx.add(result, up)
        return result


def set_kptfile_from_upstream(obj: Item, up: Item) -> None:
    """Upstream's Kptfile with local's name, upstream and upstreamLock (the rule: :func:`with_local_upstream`)."""
    mine = obj.data if isinstance(obj.data, dict) else {}
    take_upstream(obj, up)
    obj.set_data(with_local_upstream(obj.copy_data(), mine))


__all__ = ["ForceDeleteReplace", "set_kptfile_from_upstream"]
