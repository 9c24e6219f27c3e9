"""Which of the three package copies an item belongs to, by its path's first segment.

``kpt fn eval WORKDIR`` on a folder holding ``local/``, ``origin/`` and
``upstream/`` side by side gives items whose path annotation starts with
that folder name; the prefixes are configurable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from krm_merge.krm.kubeobject import KubeObject

PREFIX_KEYS = ("localPrefix", "originPrefix", "upstreamPrefix")
"""The functionConfig keys naming the three folders."""


@dataclass(frozen=True)
class SourcePrefixes:
    """Folder names of the three copies."""

    local: str = "local"
    origin: str = "origin"
    upstream: str = "upstream"


class PrefixError(ValueError):
    """A bad folder name; ``key`` is the functionConfig key it came from."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def prefixes_from(values: Mapping[str, Any]) -> SourcePrefixes:
    """The three folder names of a functionConfig: distinct, non-empty single segments."""
    defaults = SourcePrefixes()
    given = [str(values.get(key) or default).strip("/") for key, default in zip(PREFIX_KEYS, (defaults.local, defaults.origin, defaults.upstream))]
    for key, value in zip(PREFIX_KEYS, given):
        if not value or "/" in value or value in (".", ".."):
            raise PrefixError(key, f"must be one folder name, got {value!r}")
    if len(set(given)) != 3:
        raise PrefixError("localPrefix", "localPrefix, originPrefix and upstreamPrefix must differ")
    return SourcePrefixes(*given)


@dataclass
class SourceGroups:
    """Items split by copy; ``rel`` maps an item (by id) to its path inside its copy."""

    local: list[KubeObject] = field(default_factory=list)
    origin: list[KubeObject] = field(default_factory=list)
    upstream: list[KubeObject] = field(default_factory=list)
    other: list[KubeObject] = field(default_factory=list)
    rel: dict[int, str] = field(default_factory=dict)

    def rel_path(self, obj: KubeObject) -> str:
        """Path of ``obj`` relative to its copy's folder."""
        return self.rel.get(id(obj), obj.path or "")


def split_prefix(path: str) -> tuple[str, str]:
    """``local/a/b.yaml`` -> (``local``, ``a/b.yaml``)."""
    path = path.lstrip("./") if path.startswith("./") else path
    head, sep, rest = path.partition("/")
    return (head, rest) if sep else ("", path)


def group_by_source(items: list[KubeObject], prefixes: SourcePrefixes) -> SourceGroups:
    """Split items into the three copies (others, e.g. the function config, kept aside)."""
    groups = SourceGroups()
    buckets = {prefixes.local: groups.local, prefixes.origin: groups.origin, prefixes.upstream: groups.upstream}
    for obj in items:
        head, rest = split_prefix(obj.path or "")
        bucket = buckets.get(head)
        if bucket is None:
            groups.other.append(obj)
            continue
        bucket.append(obj)
        groups.rel[id(obj)] = rest
    return groups
