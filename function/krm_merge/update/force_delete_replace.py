"""kpt's ``force-delete-replace`` strategy: the local copy becomes upstream's, local changes are dropped.

Local Kptfiles keep only their name, ``upstream`` and ``upstreamLock``
(kpt's rule); a root Kptfile upstream does not have is kept whole.
"""

from __future__ import annotations

from typing import Any

from krm_merge.kptfile.document import ROOT_KPTFILE, is_kptfile, with_local_upstream
from krm_merge.krm.kubeobject import KubeObject

from .context import MergeContext
from .resources import take_upstream
from krm_merge.outcomes.kinds import Action, Reason

from .result import PackageMergeResult


class ForceDeleteReplace:
    """Upstream wins everything."""

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
                result.outcomes.append((obj, Action.DELETED, Reason.NOT_UPSTREAM, ctx.options.strategy.value))
                continue
            result.outcomes.append((obj, Action.TAKEN, Reason.REPLACED_BY_STRATEGY, ctx.options.strategy.value))
            if up is obj:
                pass  # root Kptfile, none upstream: local's kept whole
            elif is_kptfile(obj) and ctx.rel_path(obj) == ROOT_KPTFILE:
                set_kptfile_from_upstream(obj, up)
            else:  # a resource, or a subpackage's Kptfile: replaced whole, its upstream info too (kpt)
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
