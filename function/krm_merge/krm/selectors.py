"""Selecting items by group/version/kind/name/namespace/labels/annotations.

The same shape as kustomize's patch ``target`` and kpt's Kptfile
``selectors``; every field given must match, an empty selector matches all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from krm_merge.krm.kubeobject import KubeObject


@dataclass(frozen=True)
class Selector:
    """Which items an operation applies to."""

    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, spec: dict[str, Any], where: str = "target") -> Selector:
        """Build from a config mapping (kustomize ``target`` keys, or kpt's ``apiVersion``)."""
        from krm_merge.config import ConfigError

        allowed = {"group", "version", "kind", "name", "namespace", "apiVersion",
                   "labelSelector", "annotationSelector", "labels", "annotations"}
        unknown = sorted(set(spec) - allowed)
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}", f"unknown key; valid keys: {', '.join(sorted(allowed))}")
        group, version = spec.get("group"), spec.get("version")
        if spec.get("apiVersion"):
            g, _, v = str(spec["apiVersion"]).rpartition("/")
            group, version = g, v
        labels = _parse_label_selector(spec.get("labelSelector"), f"{where}.labelSelector")
        labels.update(_str_map(spec.get("labels"), f"{where}.labels"))
        annotations = _parse_label_selector(spec.get("annotationSelector"), f"{where}.annotationSelector")
        annotations.update(_str_map(spec.get("annotations"), f"{where}.annotations"))
        return cls(
            group=_opt(group), version=_opt(version), kind=_opt(spec.get("kind")),
            name=_opt(spec.get("name")), namespace=_opt(spec.get("namespace")),
            labels=labels, annotations=annotations,
        )

    def matches(self, obj: KubeObject) -> bool:
        """True when every field of the selector matches ``obj``."""
        if self.kind is not None and obj.kind != self.kind:
            return False
        if self.group is not None and obj.group != self.group:
            return False
        if self.version is not None and obj.version != self.version:
            return False
        if self.name is not None and not _name_matches(self.name, obj.name):
            return False
        if self.namespace is not None and obj.namespace != self.namespace:
            return False
        labels, annotations = obj.labels, obj.annotations
        if any(labels.get(k) != v for k, v in self.labels.items()):
            return False
        return all(annotations.get(k) == v for k, v in self.annotations.items())

    def describe(self) -> str:
        """A compact human form, for error messages."""
        parts = [f"{k}={v}" for k, v in (("group", self.group), ("version", self.version),
                 ("kind", self.kind), ("name", self.name), ("namespace", self.namespace)) if v is not None]
        parts += [f"label {k}={v}" for k, v in self.labels.items()]
        parts += [f"annotation {k}={v}" for k, v in self.annotations.items()]
        return ", ".join(parts) or "everything"


def select(items: Iterable[KubeObject], selector: Selector, *, include_local_config: bool = False) -> list[KubeObject]:
    """Items matching ``selector``; local-config items only when asked for."""
    return [
        obj for obj in items
        if (include_local_config or not obj.is_local_config) and selector.matches(obj)
    ]


class ItemIndex:
    """Items by kind, name, label and annotation, built once per run.

    Finding the targets of N patches among M items by scanning is O(N × M);
    the index hands :meth:`select` a small candidate list instead, which
    :meth:`Selector.matches` then confirms, so the answer is exactly what a
    scan gives, in item order.  An edit that may change an item's identity
    (kind, name, labels, annotations) is reported with :meth:`refresh`.
    """

    def __init__(self, items: Iterable[KubeObject]) -> None:
        self._items = list(items)
        self._position = {id(obj): n for n, obj in enumerate(self._items)}
        self._tables: dict[str, dict[Any, dict[int, KubeObject]]] = {}
        self._filed: dict[int, dict[str, list[Any]]] = {id(obj): {} for obj in self._items}
        for table in ("kind+name", "kind", "name"):
            self._build(table)

    def refresh(self, obj: KubeObject) -> None:
        """Re-file ``obj`` after an edit (O(its own keys), whatever the number of items)."""
        filed = self._filed[id(obj)]
        for table, old_keys in filed.items():
            new_keys = _KEYS[table](obj)
            if new_keys == old_keys:
                continue
            buckets = self._tables[table]
            for key in old_keys:
                buckets[key].pop(id(obj), None)
            for key in new_keys:
                buckets.setdefault(key, {})[id(obj)] = obj
            filed[table] = new_keys

    def named(self, kind: str, name: str) -> list[KubeObject]:
        """Items of exactly this kind and name (any namespace/apiVersion), in item order."""
        return self._ordered(self._tables["kind+name"].get((kind, name), {}))

    def sharing(self, kind: str | None, name: str | None) -> list[KubeObject]:
        """Items with this kind or this name, in item order (near misses for messages)."""
        found: dict[int, KubeObject] = {}
        if kind:
            found.update(self._bucket("kind", kind))
        if name:
            found.update(self._bucket("name", name))
        return self._ordered(found)

    def select(self, selector: Selector, *, include_local_config: bool = False) -> list[KubeObject]:
        """Same answer as :func:`select` over all items, from the narrowest candidate list."""
        return [
            obj for obj in self._candidates(selector)
            if (include_local_config or not obj.is_local_config) and selector.matches(obj)
        ]

    def _candidates(self, selector: Selector) -> list[KubeObject]:
        options: list[dict[int, KubeObject]] = []
        literal_name = selector.name is not None and not _is_pattern(selector.name)
        if selector.kind is not None and literal_name:
            options.append(self._bucket("kind+name", (selector.kind, selector.name)))
        elif literal_name:
            options.append(self._bucket("name", selector.name))
        elif selector.kind is not None:
            options.append(self._bucket("kind", selector.kind))
        options += [self._bucket("labels", pair) for pair in selector.labels.items()]
        options += [self._bucket("annotations", pair) for pair in selector.annotations.items()]
        if not options:
            return list(self._items)
        return self._ordered(min(options, key=len))

    def _bucket(self, table: str, key: Any) -> dict[int, KubeObject]:
        if table not in self._tables:
            self._build(table)  # labels/annotations: only when a selector asks
        return self._tables[table].get(key, {})

    def _build(self, table: str) -> None:
        buckets: dict[Any, dict[int, KubeObject]] = {}
        keys_of = _KEYS[table]
        for obj in self._items:
            keys = keys_of(obj)
            self._filed[id(obj)][table] = keys
            for key in keys:
                buckets.setdefault(key, {})[id(obj)] = obj
        self._tables[table] = buckets

    def _ordered(self, bucket: dict[int, KubeObject]) -> list[KubeObject]:
        objs = list(bucket.values())
        if len(objs) > 1:
            objs.sort(key=lambda o: self._position[id(o)])
        return objs


_KEYS: dict[str, Callable[[KubeObject], list[Any]]] = {
    "kind+name": lambda o: [(o.kind, o.name)],
    "kind": lambda o: [o.kind],
    "name": lambda o: [o.name],
    "labels": lambda o: sorted(o.labels.items()),
    "annotations": lambda o: sorted(o.annotations.items()),
}


def _is_pattern(name: str) -> bool:
    return any(ch in name for ch in "^$*+?[](){}|\\")


def _name_matches(pattern: str, name: str) -> bool:
    # kustomize targets accept regular expressions for names.
    if pattern == name:
        return True
    if not _is_pattern(pattern):
        return False
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return False


def _opt(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _str_map(value: Any, where: str) -> dict[str, str]:
    from krm_merge.config import ConfigError

    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(where, "must be a mapping of strings")
    return {str(k): str(v) for k, v in value.items()}


def _parse_label_selector(value: Any, where: str) -> dict[str, str]:
    """``a=b,c=d`` (equality-based selectors only) or a mapping."""
    from krm_merge.config import ConfigError

    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        return _str_map(value, where)
    out: dict[str, str] = {}
    for term in str(value).split(","):
        term = term.strip()
        key, sep, val = term.partition("==") if "==" in term else term.partition("=")
        if not sep or not key.strip():
            raise ConfigError(where, f"only equality selectors (key=value) are supported, got {term!r}")
        out[key.strip()] = val.strip()
    return out
