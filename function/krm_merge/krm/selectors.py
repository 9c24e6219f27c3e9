"""Selecting items by group/version/kind/name/namespace/labels/annotations.

The same shape as kustomize's patch ``target`` and kpt's Kptfile
``selectors``; every field given must match, an empty selector matches all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from krm_merge.errors import ConfigError
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


def _name_matches(pattern: str, name: str) -> bool:
    # kustomize targets accept regular expressions for names.
    if pattern == name:
        return True
    if not any(ch in pattern for ch in "^$*+?[](){}|\\"):
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
