"""The package update of three copies of a package: subpackages decided first, then the strategy.

The entry point of kpt's package rules, for ``krm-merge update`` and the
resource-merge function mode alike: subpackages are decided as a whole
(:mod:`.subpackages`), the root Kptfile is never deleted (an origin or
upstream without one — ``kpt pkg get`` generated local's — counts as kpt's
default Kptfile), the strategy (:mod:`.updater`) decides each resource, and
the resources written carry kpt's identity markers (:mod:`.markers`).
"""

from __future__ import annotations

from typing import Any

from krm_merge.kptfile.document import Strategy, is_kptfile
from krm_merge.krm.kubeobject import Item
from krm_merge.merge3.conflicts import ConflictPolicy

from .context import MergeContext
from .markers import add_identity_markers
from .result import OtherFilesChanged, PackageMergeOptions, PackageMergeResult, RelPath
from .subpackages import decide_subpackages
from .updater import updater_for


def merge_package(
    strategy: Strategy, conflicts: ConflictPolicy, fallback_keys: tuple[str, ...],
    local: list[Item], origin: list[Item], upstream: list[Item], rel_path: RelPath,
    other_files_changed: OtherFilesChanged | None = None,
) -> PackageMergeResult:
    """kpt's package update of three copies, Kptfiles by the pipeline-aware Kptfile merge.

    The resource-merge mode and ``krm-merge update`` both run it;
    ``other_files_changed`` tells whether a subpackage directory's non-KRM
    files changed locally (the update knows them; a ResourceList has none).
    """
    options = PackageMergeOptions(strategy, conflicts, fallback_keys)
    return PackageMerger(options, rel_path, other_files_changed).merge(local, origin, upstream)


class PackageMerger(MergeContext):
    """Merges the three copies of a package (lists of items)."""

    def merge(self, local: list[Item], origin: list[Item], upstream: list[Item]) -> PackageMergeResult:
        """Decide the subpackages, then run the configured strategy on the rest; kpt's identity markers last."""
        self.prepare(local, origin, upstream)
        updater = updater_for(self.options.strategy)
        updater.check(self, local, origin)
        decided = PackageMergeResult()
        local, origin, upstream = decide_subpackages(self, self._merge_own, local, origin, upstream, decided)
        li, oi, ui = self.keyed(local, origin, upstream)
        for key in self.package_kptfile_keys(li, ui):
            self.default_kptfile(key, li, oi, ui)
        result = updater.update(self, li, oi, ui)
        result.subpackages = decided.subpackages
        result.strategies = decided.strategies
        for name in ("items", "added", "deleted", "updated", "conflicts", "moved_index", "moved_file", "outcomes"):
            setattr(result, name, getattr(decided, name) + getattr(result, name))
        if self.options.add_kpt_merge_comment:
            for obj in result.items:
                if not is_kptfile(obj):
                    add_identity_markers(obj)
        return result

    def _merge_own(
        self, directory: str, upstream_info: Any, local: list[Item], origin: list[Item],
        upstream: list[Item], out: PackageMergeResult,
    ) -> None:
        """kpt merges a remote subpackage with the parent's upstream copy using the subpackage's own strategy."""
        own = upstream_info.get("updateStrategy") if isinstance(upstream_info, dict) else None
        strategy = Strategy(own) if own in {s.value for s in Strategy} else Strategy.RESOURCE_MERGE
        options = PackageMergeOptions(strategy, self.options.conflicts, self.options.fallback_keys, self.options.add_kpt_merge_comment)
        sub = PackageMerger(options, self.rel_path, self.other_files_changed, root_dir=directory)
        inside = self.inside(directory)
        result = sub.merge([o for o in local if inside(o)], [o for o in origin if inside(o)], [o for o in upstream if inside(o)])
        for name in ("items", "added", "deleted", "updated", "conflicts", "moved_index", "moved_file", "outcomes"):
            getattr(out, name).extend(getattr(result, name))
        out.subpackages.update(result.subpackages)
        out.strategies[directory] = strategy
        out.strategies.update(result.strategies)


__all__ = ["PackageMerger", "merge_package"]
