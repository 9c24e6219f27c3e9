"""Selecting items by group/version/kind/name/namespace/labels/annotations.

The same shape as kustomize's patch ``target`` and kpt's Kptfile
``selectors``; every field given must match, an empty selector matches all.
"""

from __future__ import annotations

import re

from krm_merge.errors import ConfigError
from krm_merge.krm.kubeobject import Item, KubeObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable


class Selector:
    """Which items an operation applies to.

    Immutable and compared by its fields, as the frozen dataclass it was: a plain class, because
    ``dataclasses`` (with ``inspect`` behind it) was a fifth of a function run's start-up (issue 45).
    """

    __slots__ = ("group", "version", "kind", "name", "namespace", "labels", "annotations")
    group: str | None
    version: str | None
    kind: str | None
    name: str | None
    namespace: str | None
    labels: dict[str, str]
    annotations: dict[str, str]

    def __init__(self, group: str | None = None, version: str | None = None, kind: str | None = None,
                 name: str | None = None, namespace: str | None = None, labels: dict[str, str] | None = None,
                 annotations: dict[str, str] | None = None) -> None:
        for key, value in (("group", group), ("version", version), ("kind", kind), ("name", name),
                           ("namespace", namespace), ("labels", {} if labels is None else labels),
                           ("annotations", {} if annotations is None else annotations)):
            object.__setattr__(self, key, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, key) for key in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if type(other) is Selector else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # its labels are a dict, as the dataclass's were

    def __repr__(self) -> str:
        return "Selector(" + ", ".join(f"{key}={getattr(self, key)!r}" for key in self.__slots__) + ")"

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"cannot delete field {key!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return Selector, self._fields()

    @classmethod
    def from_dict(cls, spec: dict[str, Any], where: str = "target") -> Selector:
        """Build from a config mapping (kustomize ``target`` keys, or kpt's ``apiVersion``)."""
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
    """Items by kind, name, label and annotation, for many lookups in one run.

    Finding the targets of N patches among M items by scanning is O(N × M);
    the index hands :meth:`select` a short candidate list instead, which
    :meth:`Selector.matches` then confirms, so the answer is exactly what a
    scan gives, in item order.  Each table is built on the first lookup that
    needs it (a single patch on a 100 MB package builds one, or none), and a
    table is cheap: a bucket is the item itself until a second item shares
    its key.  An edit is reported by calling :meth:`identity` before it and
    :meth:`refresh` after it; buckets only ever gain items (a stale entry is
    filtered out by ``matches``), so a refresh costs O(the item's keys).
    """

    def __init__(self, items: Iterable[Item]) -> None:
        self._items = list(items)
        self._tables: dict[str, dict[Any, Any]] = {}
        self._position: dict[int, int] | None = None  # built once an edit re-files an item

    @staticmethod
    def identity(obj: Item) -> tuple[Any, ...]:
        """What the tables file ``obj`` under; pass it to :meth:`refresh` after editing ``obj``."""
        return obj.kind, obj.name, obj.labels, obj.annotations

    def refresh(self, obj: Item, before: tuple[Any, ...]) -> None:
        """File ``obj`` under the keys it gained by an edit (``before`` from :meth:`identity`)."""
        after = self.identity(obj)
        if after == before:
            return
        refiled = False
        for table, buckets in self._tables.items():
            old_keys = set(_KEYS[table](before))
            for key in _KEYS[table](after):
                if key not in old_keys:
                    _put(buckets, key, obj)
                    refiled = True
        if refiled and self._position is None:
            self._position = {id(o): n for n, o in enumerate(self._items)}

    def named(self, kind: str, name: str) -> list[Item]:
        """Items of exactly this kind and name (any namespace/apiVersion), in item order."""
        return [o for o in self._ordered(self._bucket("kind+name", (kind, name))) if o.kind == kind and o.name == name]

    def sharing(self, kind: str | None, name: str | None) -> list[Item]:
        """Items with this kind or this name, in item order (near misses for messages)."""
        found = (self._bucket("kind", kind) if kind else []) + (self._bucket("name", name) if name else [])
        return [o for o in self._ordered(found) if (kind and o.kind == kind) or (name and o.name == name)]

    def select(self, selector: Selector, *, include_local_config: bool = False) -> list[Item]:
        """Same answer as :func:`select` over all items, from the narrowest candidate list."""
        return [
            obj for obj in self._candidates(selector)
            if (include_local_config or not obj.is_local_config) and selector.matches(obj)
        ]

    def _candidates(self, selector: Selector) -> list[Item]:
        options: list[list[Item]] = []
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
            return self._items
        return self._ordered(min(options, key=len))

    def _bucket(self, table: str, key: Any) -> list[Item]:
        buckets = self._tables.get(table)
        if buckets is None:
            buckets = self._tables[table] = {}
            keys_of = _KEYS[table]
            # Only the annotations table reads annotations: an item read from a directory composes
            # kpt's reader annotations on first use, which the other tables need not pay for.
            with_annotations = table == "annotations"
            for obj in self._items:
                identity = (obj.kind, obj.name, obj.labels, obj.annotations if with_annotations else {})
                for k in keys_of(identity):
                    _put(buckets, k, obj)
        found = buckets.get(key)
        return [] if found is None else found if isinstance(found, list) else [found]

    def _ordered(self, objs: list[Item]) -> list[Item]:
        """Item order without repeats (only re-filed items can be out of order or repeated)."""
        position = self._position
        if position is None or len(objs) < 2:
            return objs
        unique = {id(o): o for o in objs}
        return sorted(unique.values(), key=lambda o: position[id(o)])


def _put(buckets: dict[Any, Any], key: Any, obj: Item) -> None:
    found = buckets.get(key)
    if found is None:
        buckets[key] = obj
    elif isinstance(found, list):
        found.append(obj)
    else:
        buckets[key] = [found, obj]


# Keys of each table, from an identity (kind, name, labels, annotations).
_KEYS: dict[str, Callable[[tuple[Any, ...]], Iterable[Any]]] = {
    "kind+name": lambda ident: ((ident[0], ident[1]),),
    "kind": lambda ident: (ident[0],),
    "name": lambda ident: (ident[1],),
    "labels": lambda ident: ident[2].items(),
    "annotations": lambda ident: ident[3].items(),
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
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(where, "must be a mapping of strings")
    return {str(k): str(v) for k, v in value.items()}


def _parse_label_selector(value: Any, where: str) -> dict[str, str]:
    """``a=b,c=d`` (equality-based selectors only) or a mapping."""
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
