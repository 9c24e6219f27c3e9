"""Which of the three package copies an item belongs to, by its path's first segment.

``kpt fn eval WORKDIR`` on a folder holding ``local/``, ``origin/`` and
``upstream/`` side by side gives items whose path annotation starts with
that folder name; the prefixes are configurable.  A prefix that matches no
item is an error when it was configured, or when items lie in a folder no
prefix claims (a typo, or a different layout): the message lists the folders
seen.  A default prefix with nothing under it and nothing unclaimed is just
an empty copy (e.g. no origin: a package added on both sides).
"""

from __future__ import annotations

from krm_merge.errors import KrmMergeError

from dataclasses import dataclass, field
from typing import Any, Mapping

from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import KrmError

PREFIX_KEYS = ("localPrefix", "originPrefix", "upstreamPrefix")
"""The functionConfig keys naming the three folders."""


@dataclass(frozen=True)
class SourcePrefixes:
    """Folder names of the three copies; ``configured``: the config keys that set them."""

    local: str = "local"
    origin: str = "origin"
    upstream: str = "upstream"
    configured: frozenset[str] = field(default=frozenset(), compare=False)

    def by_key(self) -> dict[str, str]:
        """Config key -> folder name."""
        return dict(zip(PREFIX_KEYS, (self.local, self.origin, self.upstream)))


class PrefixError(KrmMergeError, ValueError):
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
    configured = frozenset(key for key in PREFIX_KEYS if values.get(key))
    local, origin, upstream = given
    return SourcePrefixes(local, origin, upstream, configured=configured)


@dataclass
class SourceGroups:
    """Items split by copy; ``rel`` maps an item (by id) to its path inside its copy."""

    local: list[Item] = field(default_factory=list)
    origin: list[Item] = field(default_factory=list)
    upstream: list[Item] = field(default_factory=list)
    other: list[Item] = field(default_factory=list)
    rel: dict[int, str] = field(default_factory=dict)

    def rel_path(self, obj: Item) -> str:
        """Path of ``obj`` relative to its copy's folder."""
        return self.rel.get(id(obj), obj.path or "")


def split_prefix(path: str) -> tuple[str, str]:
    """``local/a/b.yaml`` -> (``local``, ``a/b.yaml``)."""
    path = path.lstrip("./") if path.startswith("./") else path
    head, sep, rest = path.partition("/")
    return (head, rest) if sep else ("", path)


def group_by_source(items: list[Item], prefixes: SourcePrefixes) -> SourceGroups:
    """Split items into the three copies (others, e.g. the function config, kept aside).

    Raises :class:`KrmError` for a prefix that matches no item (see module docstring).
    """
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
    _check_prefixes(items, prefixes, groups)
    return groups


def _check_prefixes(items: list[Item], prefixes: SourcePrefixes, groups: SourceGroups) -> None:
    seen = sorted({head for head, rest in (split_prefix(o.path or "") for o in items) if head})
    unclaimed = [head for head in seen if head not in (prefixes.local, prefixes.origin, prefixes.upstream)]
    found = {prefixes.local: groups.local, prefixes.origin: groups.origin, prefixes.upstream: groups.upstream}
    for key, prefix in prefixes.by_key().items():
        if found[prefix] or not (key in prefixes.configured or unclaimed):
            continue
        folders = ", ".join(f"{h}/" for h in seen) if seen else "none (no item has a folder in its path)"
        raise KrmError(f"{key} {prefix!r} matches no item; the items' top folders are: {folders}", field=key)
