"""resource-merge: kpt pkg update's 3-way package merge on a ResourceList.

Items are grouped by the first segment of their path (``local/``,
``origin/``, ``upstream/`` — configurable), so ``kpt fn eval WORKDIR --exec
krm-merge -- mode=resource-merge`` works on a folder holding the three
package copies side by side.  origin/upstream items come out unchanged;
local items are replaced by the merge result; resources added upstream are
added under the local prefix; resources the merge deletes are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krm_merge.config import ConfigError, check_keys, parse_choice
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.merge3.conflicts import POLICIES, ConflictPolicy
from krm_merge.update.package_merge import merge_package
from krm_merge.kptfile.document import STRATEGIES, Strategy
from krm_merge.update.result import OtherFilesChanged, PackageMergeResult, RelPath
from krm_merge.merge3.rules import FALLBACK_KEYS, fallback_keys_from
from krm_merge.outcomes.kinds import Decision
from krm_merge.outcomes.render import function_results
from krm_merge.update.report import merge_outcomes
from krm_merge.merge3.sources import PREFIX_KEYS, PrefixError, SourceGroups, SourcePrefixes, group_by_source, prefixes_from
from krm_merge.registry import Mode

KEYS = ("strategy", "conflicts", "fallbackKeys", *PREFIX_KEYS)


@dataclass(frozen=True)
class Config:
    """The resource-merge functionConfig.

    ``fallback_keys``: element keys tried, in order, for lists the schema
    does not describe (kpt's documented list by default; empty = such lists
    are plain lists, which is what kpt 1.0.0-beta.56 really does).
    """

    strategy: Strategy = Strategy.RESOURCE_MERGE
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    prefixes: SourcePrefixes = SourcePrefixes()
    fallback_keys: tuple[str, ...] = FALLBACK_KEYS


def parse_prefixes(values: dict[str, Any], where: str) -> SourcePrefixes:
    """The three folder names, or a ConfigError naming the key."""
    try:
        return prefixes_from(values)
    except PrefixError as err:
        raise ConfigError(f"{where}.{err.key}", err.message) from None


def parse_fallback_keys(value: Any, key: str) -> tuple[str, ...]:
    """``fallbackKeys``: None = kpt's documented list; a comma-separated string or a list of names."""
    if value is None or isinstance(value, str):
        return fallback_keys_from(value)
    if isinstance(value, list) and all(isinstance(k, str) for k in value):
        return tuple(value)
    raise ConfigError(key, "must be a list of field names (ConfigMap: comma-separated)")


def _config(values: dict[str, Any], where: str) -> Config:
    check_keys(values, KEYS, where)
    return Config(
        strategy=Strategy(parse_choice(values.get("strategy", Strategy.RESOURCE_MERGE.value), f"{where}.strategy", STRATEGIES)),
        conflicts=ConflictPolicy(parse_choice(values.get("conflicts", ConflictPolicy.UPSTREAM_WINS.value), f"{where}.conflicts", POLICIES)),
        prefixes=parse_prefixes(values, where),
        fallback_keys=parse_fallback_keys(values.get("fallbackKeys"), f"{where}.fallbackKeys"),
    )


def config_from_configmap(data: dict[str, str]) -> Config:
    """ConfigMap keys: strategy, conflicts, fallbackKeys (comma-separated), *Prefix."""
    return _config(data, "data")


def config_from_typed(spec: dict[str, Any]) -> Config:
    """Typed ``ResourceMerge`` spec: the same keys, ``fallbackKeys`` a list."""
    return _config(spec, "spec")


def run(rl: ResourceList, config: Config) -> None:
    """Merge the local copy with origin and upstream; report conflicts and warnings."""
    groups = group_by_source(rl.items, config.prefixes)
    if not (groups.local or groups.origin or groups.upstream):
        p = config.prefixes
        raise KrmError(f"no items under {p.local}/, {p.origin}/ or {p.upstream}/: nothing to merge")
    before = {id(o): o.text for o in groups.local}
    result = merge(config, groups.local, groups.origin, groups.upstream, groups.rel_path)
    rl.results.extend(function_results(merge_outcomes(result, groups.rel_path)))
    if any(c.winner is Decision.NOT_MERGED for _, c in result.conflicts):  # --conflicts fail, or a rule's fail
        for obj in groups.local:  # all or nothing: leave local untouched
            obj.set_text(before[id(obj)])
        return
    place_added(result, groups, config.prefixes.local)
    rl.items = replace_local_items(rl.items, groups, result.items)


def merge(
    config: Config,
    local: list[Item],
    origin: list[Item],
    upstream: list[Item],
    rel_path: RelPath,
    other_files_changed: OtherFilesChanged | None = None,
) -> PackageMergeResult:
    """The resource-merge of three package copies: this mode and ``krm-merge update`` both run it.

    ``rel_path`` gives an item's path inside its copy; ``other_files_changed``
    tells whether a subpackage directory's non-KRM files changed locally (the
    update command knows them; a ResourceList has none).
    """
    return merge_package(config.strategy, config.conflicts, config.fallback_keys, local, origin, upstream, rel_path,
                         other_files_changed)


def place_added(result: PackageMergeResult, groups: SourceGroups, local_prefix: str) -> None:
    """Give resources added upstream, and those following upstream to another file, upstream's path."""
    for new, up in result.added:
        new.set_path(f"{local_prefix}/{groups.rel_path(up)}", up.index)
    for obj, index in result.moved_index:
        obj.set_path(obj.path or f"{local_prefix}/{groups.rel_path(obj)}", index)
    for obj, up in result.moved_file:
        obj.set_path(f"{local_prefix}/{groups.rel_path(up)}", up.index)


def replace_local_items(items: list[Item], groups: SourceGroups, merged: list[Item]) -> list[Item]:
    """The item list with the local copy's items replaced by ``merged`` (at the first local position)."""
    local_ids = {id(o) for o in groups.local}
    out: list[Item] = []
    inserted = False
    for obj in items:
        if id(obj) in local_ids:
            if not inserted:
                out.extend(merged)
                inserted = True
            continue
        out.append(obj)
    if not inserted:
        out.extend(merged)
    return out


MODE: Mode[Config] = Mode(
    name="resource-merge",
    kind="ResourceMerge",
    summary="kpt pkg update's 3-way package merge",
    keys=KEYS,
    from_configmap=config_from_configmap,
    from_typed=config_from_typed,
    run=run,
)
