"""reorder-merge: strategic merge patches applied exactly as the API server does.

Each patch names its targets either by its own apiVersion/kind/name
(kustomize's patchesStrategicMerge) or by a ``target`` selector.  The patch
is applied to plain data by :mod:`krm_merge.smp`; the item's text is then
brought to the result with minimal edits, so comments and formatting stay.
With ``desired``, the mode does what ``kubectl apply`` does offline.
"""

from __future__ import annotations

import re

from krm_merge.config import ConfigError, check_keys, parse_bool, parse_choice
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.krm.selectors import ItemIndex, Selector
from krm_merge.krm.values import format_path
from krm_merge.records import Record
from krm_merge.registry import Mode
from krm_merge.schema import DeclaredKey, DeclaredKeyError, InvalidCrdError, SchemaRegistry, is_crd
from krm_merge.smp.apply import apply_patch
from krm_merge.smp.errors import SmpError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SERVER_ONLY_CHOICES = ("interleave", "first")
KEYS = ("patch", "patches", "serverOnlyItems", "desired", "mergeKeys")
# `patches` is a list of patches with targets: a ConfigMap, which holds strings, cannot carry it.
_CONFIGMAP_KEYS = tuple(key for key in KEYS if key != "patches")
PATCH_KEYS = ("patch", "target", "optional")


class Patch(Record):
    """One strategic merge patch and what it applies to."""

    body: dict[str, Any]
    target: Selector | None = None
    optional: bool = False
    label: str = "patch 1"


class MergeKey(Record):
    """A user-declared merge key for a list field of a kind."""

    kind: str
    path: str
    key: str | None
    strategy: str = "merge"
    group: str | None = None


class Config(Record):
    """The reorder-merge functionConfig."""

    patches: tuple[Patch, ...] = ()
    desired: tuple[dict[str, Any], ...] = ()
    server_only_items: str = "interleave"
    merge_keys: tuple[MergeKey, ...] = ()


def config_from_configmap(data: dict[str, str]) -> Config:
    """``patch``/``desired``/``mergeKeys`` hold YAML text; ``serverOnlyItems`` a word."""
    check_keys(data, _CONFIGMAP_KEYS)
    patches = _patches_from_documents(data.get("patch", ""), "data.patch")
    desired = _objects_from_text(data.get("desired", ""), "data.desired")
    merge_keys = _merge_keys(_load_yaml(data.get("mergeKeys", ""), "data.mergeKeys") or [], "data.mergeKeys")
    server_only = parse_choice(data.get("serverOnlyItems", "interleave"), "data.serverOnlyItems", SERVER_ONLY_CHOICES)
    return _validated(Config(tuple(patches), desired, server_only, merge_keys))


def config_from_typed(spec: dict[str, Any]) -> Config:
    """Typed form: ``patches`` (each with ``patch``, ``target``, ``optional``) and the rest."""
    check_keys(spec, KEYS, "spec")
    patches: list[Patch] = []
    if "patch" in spec:
        patches.extend(_patches_from_value(spec["patch"], "spec.patch", len(patches)))
    entries = spec.get("patches") or []
    if not isinstance(entries, list):
        raise ConfigError("spec.patches", "must be a list of {patch, target, optional}")
    for n, entry in enumerate(entries):
        where = f"spec.patches[{n}]"
        if not isinstance(entry, dict):
            raise ConfigError(where, "must be an object with `patch` and optional `target`, `optional`")
        check_keys(entry, PATCH_KEYS, where)
        target = Selector.from_dict(entry["target"], f"{where}.target") if entry.get("target") else None
        optional = parse_bool(entry.get("optional", False), f"{where}.optional")
        for p in _patches_from_value(entry.get("patch"), f"{where}.patch", len(patches)):
            patches.append(Patch(p.body, target, optional, p.label))
    desired_value = spec.get("desired") or []
    if isinstance(desired_value, str):
        desired = _objects_from_text(desired_value, "spec.desired")
    elif isinstance(desired_value, list) and all(isinstance(d, dict) for d in desired_value):
        for n, d in enumerate(desired_value):
            _check_string_keys(d, f"spec.desired[{n}]", ())
        desired = tuple(desired_value)
    else:
        raise ConfigError("spec.desired", "must be a list of objects or a string of YAML documents")
    merge_keys = _merge_keys(spec.get("mergeKeys") or [], "spec.mergeKeys")
    server_only = parse_choice(spec.get("serverOnlyItems", "interleave"), "spec.serverOnlyItems", SERVER_ONLY_CHOICES)
    return _validated(Config(tuple(patches), desired, server_only, merge_keys))


def _validated(config: Config) -> Config:
    if not config.patches and not config.desired:
        raise ConfigError("patch", "give at least one patch (`patch`/`patches`) or `desired` objects")
    return config


def _load_yaml(text: str, key: str) -> Any:
    try:
        return yamlio.load_data(text, key) if text.strip() else None
    except KrmError as err:
        raise ConfigError(key, err.message) from None


def _patches_from_documents(text: str, key: str, start: int = 0) -> list[Patch]:
    try:
        docs = [d for d in yamlio.load_all_data(text, key) if d is not None] if text.strip() else []
    except KrmError as err:
        raise ConfigError(key, err.message) from None
    out = []
    for n, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise ConfigError(key, f"document {n + 1} is not a mapping (a strategic merge patch is an object)")
        _check_string_keys(doc, f"{key} (document {n + 1})", ())
        out.append(Patch(doc, label=f"patch {start + n + 1}"))
    return out


def _check_string_keys(value: Any, key: str, path: tuple[str | int, ...]) -> None:
    """A patch is a JSON object: every key must be a string (``2:``/``~:`` are not)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                where = format_path(path) or "the top level"
                raise ConfigError(key, f"key {k!r} at {where} is not a string; quote it (JSON object keys are strings)")
            _check_string_keys(v, key, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_string_keys(v, key, (*path, i))


def _patches_from_value(value: Any, key: str, start: int) -> list[Patch]:
    if isinstance(value, str):
        return _patches_from_documents(value, key, start)
    if isinstance(value, dict):
        _check_string_keys(value, key, ())
        return [Patch(value, label=f"patch {start + 1}")]
    raise ConfigError(key, "must be an object or a string of YAML documents")


def _objects_from_text(text: str, key: str) -> tuple[dict[str, Any], ...]:
    return tuple(p.body for p in _patches_from_documents(text, key))


def _merge_keys(value: Any, key: str) -> tuple[MergeKey, ...]:
    if not isinstance(value, list):
        raise ConfigError(key, "must be a list of {kind, path, key, strategy, group}")
    out = []
    for n, entry in enumerate(value):
        where = f"{key}[{n}]"
        if not isinstance(entry, dict):
            raise ConfigError(where, "must be an object")
        check_keys(entry, ("kind", "group", "path", "key", "strategy"), where)
        if not entry.get("kind") or not entry.get("path"):
            raise ConfigError(where, "needs `kind` and `path` (e.g. kind: MyApp, path: spec.ports, key: port)")
        out.append(MergeKey(str(entry["kind"]), str(entry["path"]),
                            str(entry["key"]) if entry.get("key") else None,
                            str(entry.get("strategy", "merge")),
                            str(entry["group"]) if entry.get("group") is not None else None))
    return tuple(out)


# --- running ----------------------------------------------------------------------


def run(rl: ResourceList, config: Config) -> None:
    """Apply every patch to its targets, then every desired object."""
    registry = _registry(rl, config)
    index = ItemIndex(rl.items)  # one lookup per patch instead of a scan of every item
    for patch in config.patches:
        targets = _targets(index, patch)
        if not targets:
            message = f"{patch.label} matches no item ({_describe_target(patch)})" + _near_misses(index, patch)
            if patch.optional:
                rl.results.warning(message, tags={"patch": patch.label})
                continue
            raise KrmError(message, tags={"patch": patch.label})
        if all(obj.is_local_config for obj in targets):
            _warn_local_config_only(rl, patch, targets)
        for obj in targets:
            _apply_one(obj, patch, registry, config, rl, index)
    if config.desired:
        _apply_desired(rl, config, registry, index)


def _warn_local_config_only(rl: ResourceList, patch: Patch, targets: list[Item]) -> None:
    """Say so when a patch reaches nothing but local-config items.

    The usual cause is a whole functionConfig file passed as ``patch=$(cat FILE)``
    from inside the package: the "patch" then names that ConfigMap, matches the
    file itself and changes nothing, which passed without a word.
    """
    shown = ", ".join(obj.display() for obj in targets[:3]) + (" and more" if len(targets) > 3 else "")
    rl.results.warning(
        f"{patch.label} matches only local-config items ({shown}: config.kubernetes.io/local-config), "
        "which are not deployed; if this is a functionConfig file, pass it with --fn-config, "
        "or give the patch itself",
        targets[0], tags={"patch": patch.label},
    )


def _registry(rl: ResourceList, config: Config) -> Any:
    crds = [obj.data for obj in rl.items if obj.kind == "CustomResourceDefinition" and is_crd(obj.data)]
    declared = [DeclaredKey(k.kind, k.path, k.key, k.strategy, k.group) for k in config.merge_keys]
    try:
        return SchemaRegistry(crds=crds, declared=declared)
    except (DeclaredKeyError, InvalidCrdError) as err:
        raise KrmError(f"cannot build the schema: {err}") from None


def _targets(index: ItemIndex, patch: Patch) -> list[Item]:
    if patch.target is not None:
        explicit_kind = patch.target.kind is not None
        return index.select(patch.target, include_local_config=explicit_kind)
    body = patch.body
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    kind, name = body.get("kind"), meta.get("name")
    if not kind or not name:
        raise KrmError(
            f"{patch.label} has no target: give it apiVersion, kind and metadata.name, "
            "or use the typed config with a `target` selector",
            tags={"patch": patch.label},
        )
    return _items_named_by(index, body, api_version_optional=True)


def _items_named_by(index: ItemIndex, body: dict[str, Any], *, api_version_optional: bool) -> list[Item]:
    """Items with the kind, name (and apiVersion, namespace when given) of ``body``."""
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    api_version, kind, name, namespace = body.get("apiVersion"), body.get("kind"), meta.get("name"), meta.get("namespace")
    if not isinstance(kind, str) or not isinstance(name, str):
        return []  # items' kinds and names are strings: `kind: 1` names nothing
    return [
        obj for obj in index.named(kind, name)
        if ((api_version_optional and not api_version) or obj.api_version == api_version)
        and (namespace is None or obj.namespace == namespace)
    ]


def _describe_target(patch: Patch) -> str:
    if patch.target is not None:
        return patch.target.describe()
    meta = patch.body.get("metadata") or {}
    ns = f"{meta.get('namespace')}/" if isinstance(meta, dict) and meta.get("namespace") else ""
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{patch.body.get('apiVersion', '')} {patch.body.get('kind')}/{ns}{name}".strip()


def _near_misses(index: ItemIndex, patch: Patch) -> str:
    """Items that share the kind or the name of the wanted target."""
    if patch.target is not None:
        kind, name = patch.target.kind, patch.target.name
    else:
        meta = patch.body.get("metadata") or {}
        kind, name = patch.body.get("kind"), meta.get("name") if isinstance(meta, dict) else None
    near = [obj.display() for obj in index.sharing(_str_or_none(kind), _str_or_none(name))]
    if not near:
        return ""
    shown = ", ".join(near[:5]) + (f" and {len(near) - 5} more" if len(near) > 5 else "")
    return f"; near misses: {shown}"


def _data_identity(data: Any) -> tuple[Any, ...]:
    """What selectors read of an item: apiVersion, kind and the metadata that names it."""
    meta = data.get("metadata") if isinstance(data, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return (data.get("apiVersion"), data.get("kind"), meta.get("name"), meta.get("namespace"),
            meta.get("labels"), meta.get("annotations"))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _apply_one(obj: Item, patch: Patch, registry: Any, config: Config, rl: ResourceList,
               index: ItemIndex) -> None:
    schema = registry.for_object(obj.api_version, obj.kind)
    _warn_stand_in(rl, registry, obj, patch.label)
    replaced: list[str] = []
    before = index.identity(obj)
    try:
        # server_only_items is one of SERVER_ONLY_CHOICES (parse_choice), the placements apply_patch names
        result = apply_patch(obj.copy_data(), patch.body, schema,
                             server_only_items=config.server_only_items,  # type: ignore[arg-type]
                             on_schemaless_replace=replaced.append)
    except SmpError as err:
        raise KrmError(
            f"{patch.label}: {err.message}{_schema_hint(err.message, obj)}",
            obj, err.path or None, tags={"patch": patch.label},
        ) from None
    if not isinstance(result, dict) or not result:
        raise KrmError(f"{patch.label} deletes the whole object; remove the item instead", obj,
                       tags={"patch": patch.label})
    _store(obj, result, before, index)
    for path in replaced:
        declared = re.sub(r"\[[^]]*\]", "", path)
        rl.results.warning(
            f"{patch.label}: no schema describes list {path}, so the patch replaced it whole "
            "(as a JSON merge patch does); if its elements should merge by key, declare the key "
            f"with `mergeKeys` (e.g. {{kind: {obj.kind}, path: {declared}, key: name}}) "
            "or include the kind's CustomResourceDefinition",
            obj, field=path, tags={"patch": patch.label},
        )


def _store(obj: Item, result: dict[str, Any], before: tuple[Any, ...], index: ItemIndex) -> None:
    """Write the patched data back; re-file the item if its identity changed."""
    changed_identity = _data_identity(result) != _data_identity(obj.data)
    obj.set_data(result)
    if changed_identity:  # cheaper than re-reading the header of every edited item
        index.refresh(obj, before)
    obj.forget_data()  # 16,000 parsed Deployments would triple the memory; the text is enough


def _warn_stand_in(rl: ResourceList, registry: Any, obj: Item, label: str) -> None:
    """A version no schema describes is merged with its group/kind's newest described version."""
    stand_in = registry.stand_in_for(obj.api_version, obj.kind)
    if stand_in is not None:
        rl.results.warning(
            f"{label}: no Kubernetes release or CRD serves {obj.api_version} {obj.kind}; merged with the "
            f"schema of {stand_in} {obj.kind} (kubectl refuses: strategic merge patch is not supported "
            f"for {obj.api_version}, Kind={obj.kind}); check the apiVersion",
            obj, field="apiVersion", tags={"patch": label},
        )


def _schema_hint(message: str, obj: Item) -> str:
    if "merge key" not in message:
        return ""
    return (
        f". {obj.kind} has no merge key for this list: declare one with the typed config's "
        "`mergeKeys` (e.g. {kind: " + obj.kind + ", path: spec.items, key: name}) "
        "or include its CustomResourceDefinition with x-kubernetes-list-map-keys"
    )


def _apply_desired(rl: ResourceList, config: Config, registry: Any, index: ItemIndex) -> None:
    # Only with `desired`: a patch run never loads the patch-creation engine kubectl apply needs.
    from krm_merge.smp.kubectl_apply import apply_desired

    for n, desired in enumerate(config.desired):
        meta = desired.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        kind, name = desired.get("kind"), meta.get("name")
        live = _items_named_by(index, desired, api_version_optional=False)
        if not live:
            raise KrmError(f"desired object {n + 1} ({kind}/{name}) matches no item; "
                           "offline apply only updates objects present in the package")
        for obj in live:
            schema = registry.for_object(obj.api_version, obj.kind)
            _warn_stand_in(rl, registry, obj, f"desired object {n + 1}")
            before = index.identity(obj)
            try:
                result = apply_desired(obj.copy_data(), desired, schema)
            except SmpError as err:
                raise KrmError(f"desired object {n + 1}: {err.message}", obj, err.path or None) from None
            _store(obj, result, before, index)


MODE: Mode[Config] = Mode(
    name="reorder-merge",
    kind="ReorderMerge",
    summary="apply Kubernetes strategic merge patches exactly as the API server does",
    keys=KEYS,
    from_configmap=config_from_configmap,
    from_typed=config_from_typed,
    run=run,
)
