"""kpt's ``resource-merge`` strategy: each resource 3-way merged, kpt's table for added and deleted ones.

==========  ========  =======  ==============================================
origin      upstream  local    result
==========  ========  =======  ==============================================
–           –         yes      keep local
–           yes       –        add upstream's
yes         –         yes      delete if local is unmodified, else keep + warning
yes         yes       –        stays deleted
any         yes       yes      field-level 3-way merge (origin may be absent)
==========  ========  =======  ==============================================

A resource upstream renamed in place (deleted, and a resource of its kind
added at its file and document index) is, when local left it unmodified,
local's text with upstream's change, as for any resource upstream changed
(kpt deletes it and adds upstream's: the same data).
"""

from __future__ import annotations

from typing import Any

from krm_merge.kptfile.document import is_kptfile
from krm_merge.krm.kubeobject import Item

from .context import MergeContext
from .resources import same_content
from krm_merge.outcomes.kinds import Action, Reason

from .result import PackageMergeResult


class ResourceMerge:
    """The default strategy: local changes are kept, upstream's are merged in."""

    def check(self, ctx: MergeContext, local: list[Item], origin: list[Item]) -> None:
        """Nothing to check: local changes are what this strategy keeps."""

    def update(
        self, ctx: MergeContext, li: dict[Any, Item], oi: dict[Any, Item], ui: dict[Any, Item],
    ) -> PackageMergeResult:
        """Merge every resource local and upstream share; add, delete and keep by kpt's table."""
        result = PackageMergeResult()
        renamed = ctx.renamed_upstream(li, oi, ui)
        for key, obj in li.items():
            base, up = oi.get(key), ui.get(key)
            if key in renamed:
                ctx.take_renamed(obj, oi[key], ui[renamed[key]], result)
                continue
            if up is None:
                if base is not None and same_content(obj, base, kptfile=is_kptfile(obj)):
                    result.deleted.append(obj)
                    result.outcomes.append((obj, Action.DELETED, Reason.DELETED_UPSTREAM, ""))
                    continue
                why = Reason.LOCAL_ONLY if base is None else Reason.DELETED_UPSTREAM_CHANGED_LOCALLY
                result.outcomes.append((obj, Action.KEPT, why, ""))
                result.items.append(obj)
                continue
            if not ctx.merge_into(obj, base, up, result):
                result.deleted.append(obj)
                result.outcomes.append((obj, Action.DELETED, Reason.DELETED_BY_MERGE, ""))
                continue
            ctx.merge_index(obj, base, up, result)
            result.items.append(obj)
            if obj.changed:
                result.updated.append(obj)
        taken = set(renamed.values())
        for key, up in ui.items():
            if key in taken:
                continue
            if key not in li and key not in oi:
                ctx.add(result, up)
            elif key not in li:
                # Deleted locally stays deleted (kpt); said when that drops a change upstream made.
                base = oi[key]
                changed = not same_content(up, base, kptfile=is_kptfile(up))
                why = Reason.DELETED_LOCALLY_CHANGED_UPSTREAM if changed else Reason.DELETED_LOCALLY
                result.outcomes.append((up, Action.KEPT, why, ""))
        return result


__all__ = ["ResourceMerge"]
