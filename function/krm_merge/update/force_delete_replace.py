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
from krm_merge.krm.kubeobject import KubeObject

from .context import MergeContext
from .resources import take_upstream
from .result import OUTCOME_DELETED, OUTCOME_KEPT, OUTCOME_TAKEN, PackageMergeResult


class ForceDeleteReplace:
    """Upstream wins everything but the root Kptfile (``take_root_kptfile``: that too, with local's upstream info)."""

    def __init__(self, take_root_kptfile: bool = False) -> None:
        self.take_root_kptfile = take_root_kptfile

    def check(self, ctx: MergeContext, local: list[KubeObject], origin: list[KubeObject]) -> None:
        """Nothing to check: local changes are dropped by design."""

    def update(
        self, ctx: MergeContext, li: dict[Any, KubeObject], oi: dict[Any, KubeObject], ui: dict[Any, KubeObject],
    ) -> PackageMergeResult:
        """Every local resource becomes upstream's or goes; upstream's new ones are added (origin is not asked)."""
        result = PackageMergeResult()
        for key, obj in li.items():
            up = ui.get(key)
            if up is None:
                result.deleted.append(obj)
                result.outcomes.append((obj, OUTCOME_DELETED, f"not upstream ({ctx.options.strategy.value})"))
                continue
            if is_kptfile(obj) and ctx.rel_path(obj) == ROOT_KPTFILE and (up is obj or not self.take_root_kptfile):
                result.outcomes.append((obj, OUTCOME_KEPT, f"the root Kptfile ({ctx.options.strategy.value})"))
            elif is_kptfile(obj) and ctx.rel_path(obj) == ROOT_KPTFILE:
                result.outcomes.append((obj, OUTCOME_TAKEN, ctx.options.strategy.value))
                set_kptfile_from_upstream(obj, up)
            else:  # a resource, or a subpackage's Kptfile: replaced whole, its upstream info too (kpt)
                result.outcomes.append((obj, OUTCOME_TAKEN, ctx.options.strategy.value))
                take_upstream(obj, up)
            result.items.append(obj)
            if obj.changed:
                result.updated.append(obj)
        for key, up in ui.items():
            if key not in li:
                ctx.add(result, up)
        return result


def set_kptfile_from_upstream(obj: KubeObject, up: KubeObject) -> None:
    """Upstream's Kptfile with local's name, upstream and upstreamLock (the rule: :func:`with_local_upstream`)."""
    mine = obj.data if isinstance(obj.data, dict) else {}
    take_upstream(obj, up)
    obj.set_data(with_local_upstream(obj.copy_data(), mine))


__all__ = ["ForceDeleteReplace", "set_kptfile_from_upstream"]
