"""pipeline-merge: 3-way merge of Kptfile pipelines (the design doc's rules).

Two ways to give the three Kptfiles:

* ``origin`` and ``upstream`` in the functionConfig as strings holding whole
  Kptfiles; the Kptfile item at the package root (path ``Kptfile``) is local;
* otherwise items grouped by path prefix like resource-merge: every
  ``local/**/Kptfile`` is merged with ``origin/**/Kptfile`` and
  ``upstream/**/Kptfile`` at the same relative path.

Only Kptfiles change; comments in the local Kptfile survive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krm_merge.config import ConfigError, check_keys, parse_choice
from krm_merge.kptfile.merge import merge_kptfile
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.merge3 import Merge3Error
from krm_merge.merge3.conflicts import POLICIES, ConflictPolicy
from krm_merge.update.identity import strip_bookkeeping
from krm_merge.merge3.nodes import MISSING
from krm_merge.kptfile.document import is_kptfile
from krm_merge.update.result import PackageMergeResult
from krm_merge.outcomes.kinds import Decision
from krm_merge.outcomes.render import function_results
from krm_merge.update.report import merge_outcomes
from krm_merge.merge3.sources import PREFIX_KEYS, PrefixError, SourcePrefixes, group_by_source, prefixes_from
from krm_merge.registry import Mode

KEYS = ("origin", "upstream", "conflicts", *PREFIX_KEYS)


@dataclass(frozen=True)
class Config:
    """The pipeline-merge functionConfig (``origin``/``upstream``: Kptfile texts or None)."""

    origin: str | None = None
    upstream: str | None = None
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    prefixes: SourcePrefixes = SourcePrefixes()


def _text(values: dict[str, Any], key: str, where: str) -> str | None:
    value = values.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, dict):
        return yamlio.dump_data(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where}.{key}", "must be a whole Kptfile (YAML text or object)")
    data = yamlio.load_data(value, f"{where}.{key}") if value.strip() else None
    if data is not None and (not isinstance(data, dict) or data.get("kind") != "Kptfile"):
        raise ConfigError(f"{where}.{key}", "must hold a whole Kptfile (kind: Kptfile)")
    return value


def _config(values: dict[str, Any], where: str) -> Config:
    check_keys(values, KEYS, where)
    origin, upstream = _text(values, "origin", where), _text(values, "upstream", where)
    if (origin is None) != (upstream is None) and upstream is None:
        raise ConfigError(f"{where}.upstream", "give `upstream` together with `origin`")
    try:
        prefixes = prefixes_from(values)
    except PrefixError as err:
        raise ConfigError(f"{where}.{err.key}", err.message) from None
    return Config(
        origin=origin,
        upstream=upstream,
        conflicts=ConflictPolicy(parse_choice(values.get("conflicts", ConflictPolicy.UPSTREAM_WINS.value), f"{where}.conflicts", POLICIES)),
        prefixes=prefixes,
    )


def config_from_configmap(data: dict[str, str]) -> Config:
    """ConfigMap keys: origin, upstream (Kptfile texts), conflicts, *Prefix."""
    return _config(data, "data")


def config_from_typed(spec: dict[str, Any]) -> Config:
    """Typed ``PipelineMerge`` spec: the same keys (Kptfiles as text or objects)."""
    return _config(spec, "spec")


def run(rl: ResourceList, config: Config) -> None:
    """Merge the local Kptfile(s); report conflicts."""
    result = PackageMergeResult()
    jobs = _jobs(rl.items, config)
    before = {id(local): local.text for local, *_ in jobs}
    for local, origin, upstream, nested in jobs:
        _merge(local, origin, upstream, nested, config.conflicts, result)
    rl.results.extend(function_results(merge_outcomes(result, lambda obj: obj.path or "")))
    if any(c.winner is Decision.NOT_MERGED for _, c in result.conflicts):  # --conflicts fail
        for local, *_ in jobs:  # all or nothing
            local.set_text(before[id(local)])


def _jobs(items: list[Item], config: Config) -> list[tuple[Item, str | None, str, bool]]:
    """(local Kptfile, origin text, upstream text, nested) for every Kptfile to merge."""
    if config.upstream is not None:
        return [(_root_kptfile(items), config.origin, config.upstream, False)]
    groups = group_by_source(items, config.prefixes)
    others = {
        (groups.rel_path(o), src): o
        for src, objs in (("o", groups.origin), ("u", groups.upstream))
        for o in objs
        if is_kptfile(o)
    }
    locals_ = [o for o in groups.local if is_kptfile(o)]
    if not locals_:
        raise KrmError(f"no Kptfile under {config.prefixes.local}/ (and no `origin`/`upstream` in the functionConfig)")
    jobs = []
    for local in locals_:
        rel = groups.rel_path(local)
        origin, upstream = others.get((rel, "o")), others.get((rel, "u"))
        if upstream is not None:  # no upstream version: nothing to merge
            jobs.append((local, origin.text if origin else None, upstream.text, "/" in rel))
    return jobs


def _root_kptfile(items: list[Item]) -> Item:
    for obj in items:
        if is_kptfile(obj) and (obj.path or "Kptfile") == "Kptfile":
            return obj
    raise KrmError("no Kptfile at the package root (path `Kptfile`) to merge into")


def _merge(local: Item, origin: str | None, upstream: str, nested: bool, policy: ConflictPolicy, result: PackageMergeResult) -> None:
    original_text = local.text
    l_tree = yamlio.load_rt(local.text, local.display())
    o_tree = strip_bookkeeping(yamlio.load_rt(origin, "origin Kptfile")) if origin and origin.strip() else MISSING
    u_tree = strip_bookkeeping(yamlio.load_rt(upstream, "upstream Kptfile"))
    try:
        merged, conflicts = merge_kptfile(l_tree, o_tree, u_tree, update_upstream=nested, conflicts=policy)
    except Merge3Error as err:
        raise KrmError(err.message, local, err.path or None) from None
    result.conflicts.extend((local, c) for c in conflicts)
    local.set_text(yamlio.dump_like(merged, original_text))


MODE: Mode[Config] = Mode(
    name="pipeline-merge",
    kind="PipelineMerge",
    summary="3-way merge of Kptfile pipelines (kpt's Pipeline Merge design)",
    keys=KEYS,
    from_configmap=config_from_configmap,
    from_typed=config_from_typed,
    run=run,
)
