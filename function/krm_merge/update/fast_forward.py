"""kpt's ``fast-forward`` strategy: refused when the local copy was changed, else upstream's copy replaces it.

Remote subpackages are their own business (kpt checks the package and its
local subpackages only); non-KRM files are checked by
:func:`krm_merge.update.other_files.check_other_files_unmodified`.
"""

from __future__ import annotations

from typing import Any

from krm_merge.kptfile.document import DEFAULT_KPTFILE, is_kptfile
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import KrmError

from .context import MergeContext
from .force_delete_replace import ForceDeleteReplace
from .resources import same_content
from .result import PackageMergeResult


class FastForward:
    """Upstream's copy, only over an unmodified local copy."""

    def check(self, ctx: MergeContext, local: list[Item], origin: list[Item]) -> None:
        """kpt's fast-forward check: the package and its local subpackages unchanged (remote ones are their own)."""
        remote = set(ctx.upstream_infos(local)) | set(ctx.upstream_infos(origin))
        outside = lambda obj: not any(ctx.rel_path(obj).startswith(d + "/") for d in remote)  # noqa: E731
        li, oi = ctx.keyed([o for o in local if outside(o)], [o for o in origin if outside(o)])
        root = ctx.root_kptfile_key(li)
        if root is not None and root not in oi:
            oi[root] = Item(DEFAULT_KPTFILE.format(name="package"))
        _check_unmodified(ctx, li, oi)

    def update(
        self, ctx: MergeContext, li: dict[Any, Item], oi: dict[Any, Item], ui: dict[Any, Item],
    ) -> PackageMergeResult:
        """Once checked, the update is force-delete-replace's, upstream's root Kptfile included (docs/merge.md)."""
        return ForceDeleteReplace(take_root_kptfile=True).update(ctx, li, oi, ui)


def _check_unmodified(ctx: MergeContext, li: dict[Any, Item], oi: dict[Any, Item]) -> None:
    """A KrmError naming every local resource that differs from origin, or was deleted."""
    modified = []
    for key, obj in li.items():
        base = oi.get(key)
        if base is None or not same_content(obj, base, kptfile=is_kptfile(obj)):
            modified.append(ctx.rel_path(obj) + f" ({ctx.identity(obj).display()})")
    modified += [ctx.rel_path(o) + " (deleted)" for k, o in oi.items() if k not in li]
    if modified:
        raise KrmError(
            "local package files have been modified: [" + ", ".join(modified) + "]. use a different update --strategy"
        )


__all__ = ["FastForward"]
