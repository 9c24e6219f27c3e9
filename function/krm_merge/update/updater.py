"""The ``Updater`` protocol and the strategies by kpt's names, as kpt's ``internal/util/update`` has them.

A strategy decides what happens to the resources of one package whose
three copies are matched by identity (:class:`~krm_merge.update.context.MergeContext`);
a new strategy is a new module and one entry in :data:`UPDATERS`, not an
edit of the package merge.
"""

from __future__ import annotations

from typing import Any, Protocol

from krm_merge.kptfile.document import Strategy
from krm_merge.krm.kubeobject import Item

from .context import MergeContext
from .fast_forward import FastForward
from .force_delete_replace import ForceDeleteReplace
from .resource_merge import ResourceMerge
from .result import PackageMergeResult

Keyed = dict[Any, Item]
"""One copy of a package, its resources by identity (:meth:`MergeContext.keyed`)."""


class Updater(Protocol):
    """One update strategy (kpt's ``Updater`` interface)."""

    def check(self, ctx: MergeContext, local: list[Item], origin: list[Item]) -> None:
        """Refuse the update before anything is decided (a KrmError), or accept it."""

    def update(self, ctx: MergeContext, li: Keyed, oi: Keyed, ui: Keyed) -> PackageMergeResult:
        """What becomes of each resource of local, origin and upstream."""


UPDATERS: dict[Strategy, Updater] = {
    Strategy.RESOURCE_MERGE: ResourceMerge(),
    Strategy.FAST_FORWARD: FastForward(),
    Strategy.FORCE_DELETE_REPLACE: ForceDeleteReplace(),
}


def updater_for(strategy: Strategy) -> Updater:
    """The updater of a strategy."""
    return UPDATERS[strategy]


__all__ = ["UPDATERS", "Keyed", "Updater", "updater_for"]
