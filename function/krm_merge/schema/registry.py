"""One place to ask for the schema of any object: declared keys, CRDs, built-ins.

Precedence, most specific first: keys the user declared for a kind override
whatever a CRD says, a CRD overrides the built-in table, and a kind known to
none of them gets a schema that knows nothing (``OPEN_SCHEMA``: maps merge,
lists are replaced) plus the declared keys.

Also home of the two helpers the 3-way merge needs: :func:`associative_key`
(kyaml's rule for associative lists) and kpt's documented key list.
"""

from __future__ import annotations

from krm_merge.errors import KrmMergeError
from krm_merge.records import Record

import re
from collections.abc import Callable, Iterable, Mapping

from .base import NO_META, OPEN_SCHEMA, PatchMeta, SchemaLookupError, SchemaNode
from .builtin import builtin_api_versions, builtin_schema
from .crd import crd_schemas
from .nodes import patch_meta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The `kpt pkg update` reference says lists whose elements carry one of these
# fields are "automatically recognized" as associative.  kyaml removed that
# inference in 2020; kpt 1.0.0-beta.56's resource-merge never infers keys and
# the Kptfile merge infers only `name` (see KYAML_INFERRED_KEY).  Kept for
# documentation and for an opt-in "documented behaviour" mode.
KPT_DOCUMENTED_ASSOCIATIVE_KEYS: tuple[str, ...] = (
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
)
# The one key kyaml still infers, and only with inference switched on (the
# Kptfile pipeline merge): a schemaless list is associative on `name` iff some
# version of it has `name` on every element.
KYAML_INFERRED_KEY = "name"


class DeclaredKeyError(KrmMergeError, ValueError):
    """A declared key is malformed (empty kind or path, bad strategy)."""


_STRATEGIES = frozenset({"merge", "replace", "retainKeys"})


# A NamedTuple and a plain class, not dataclasses: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class DeclaredKey(Record):
    """A merge key the user declares for a list field of a kind.

    ``path`` names the list by field names from the object root, through
    maps and list elements alike: ``spec.ports``,
    ``spec.template.spec.containers``, ``spec.containers.ports`` (a ``[]``
    after a segment is accepted and ignored: ``spec.containers[].ports``).
    ``merge_key`` ``None`` with strategy ``merge`` declares a set of scalars.
    ``group`` ``None`` matches the kind in every API group.
    """

    kind: str
    path: str
    merge_key: str | None = None
    strategy: str = "merge"
    group: str | None = None

    def segments(self) -> tuple[str, ...]:
        """The field names of :attr:`path`."""
        return tuple(part.removesuffix("[]") for part in self.path.split("."))

    def patch_meta(self) -> PatchMeta:
        """The metadata this declaration gives the field."""
        return patch_meta(
            self.strategy,
            self.merge_key,
            None,
            (self.merge_key,) if self.merge_key else (),
        )

    def validate(self) -> None:
        """Raise :class:`DeclaredKeyError` if the declaration cannot be used."""
        if not self.kind:
            raise DeclaredKeyError(f"declared key {self.path!r}: kind is empty")
        if not self.path or any(not part for part in self.segments()):
            raise DeclaredKeyError(f"declared key for {self.kind}: bad field path {self.path!r}")
        parts = self.strategy.split(",")
        if not all(part in _STRATEGIES for part in parts):
            raise DeclaredKeyError(
                f"declared key {self.kind} {self.path}: unknown strategy {self.strategy!r}"
            )


class _PathTree:
    """Declared metadata for one field and the declarations below it."""

    __slots__ = ("meta", "children")

    def __init__(self) -> None:
        self.meta: PatchMeta | None = None
        self.children: dict[str, _PathTree] = {}

    def add(self, segments: tuple[str, ...], meta: PatchMeta) -> None:
        node = self
        for segment in segments:
            node = node.children.setdefault(segment, _PathTree())
        node.meta = meta


class _DeclaredNode:
    """A schema node with declared field metadata laid over it."""

    def __init__(self, base: SchemaNode, tree: _PathTree) -> None:
        self._base = base
        self._tree = tree

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        entry = self._tree.children.get(key)
        if entry is None:
            return self._base.lookup_struct(key)
        return self._overlay(entry, lambda: self._base.lookup_struct(key))

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        entry = self._tree.children.get(key)
        if entry is None:
            return self._base.lookup_slice(key)
        return self._overlay(entry, lambda: self._base.lookup_slice(key))

    @staticmethod
    def _overlay(
        entry: _PathTree, lookup: Callable[[], tuple[SchemaNode | None, PatchMeta]]
    ) -> tuple[SchemaNode | None, PatchMeta]:
        try:
            sub, meta = lookup()
        except SchemaLookupError:
            # The user declared the field, so it exists even if the schema disagrees.
            sub, meta = OPEN_SCHEMA, NO_META
        if entry.meta is not None:
            meta = entry.meta
        if entry.children:
            sub = _DeclaredNode(sub if sub is not None else OPEN_SCHEMA, entry)
        return sub, meta


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STABILITY = {None: 2, "beta": 1, "alpha": 0}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' version order as a sort key: GA over beta over alpha, higher numbers first.

    ``v1`` > ``v1beta2`` > ``v1beta1`` > ``v1alpha1``; a version not in this
    form sorts below all of them (alphabetically among themselves).
    """
    match = _KUBE_VERSION.fullmatch(version)
    if match is None:
        return (-1, 0, 0, version)
    major, stability, minor = match.groups()
    return (_STABILITY[stability], int(major), int(minor or 0), "")


class SchemaRegistry:
    """Schemas by object type: declared keys over CRDs over the built-in table."""

    def __init__(
        self, crds: Iterable[Mapping[str, Any]] = (), declared: Iterable[DeclaredKey] = ()
    ) -> None:
        """Index the CRDs (later ones win on a clash) and the declared keys.

        Raises ``InvalidCrdError`` / :class:`DeclaredKeyError` on malformed input.
        """
        self._crds: dict[tuple[str, str, str], SchemaNode] = {}
        for crd in crds:
            self._crds.update(crd_schemas(crd))
        self._declared: list[DeclaredKey] = []
        for key in declared:
            key.validate()
            self._declared.append(key)
        self._cache: dict[tuple[str, str], tuple[SchemaNode, str | None]] = {}

    def for_object(self, api_version: str, kind: str) -> SchemaNode:
        """Schema of objects with this ``apiVersion`` and ``kind`` (never ``None``).

        A version of a known group/kind that no CRD and no Kubernetes release
        describes (``apps/v1alpha1 Deployment``) gets the schema of the newest
        version that is described; :meth:`stand_in_for` names it so the
        caller can warn.
        """
        return self._resolve(api_version, kind)[0]

    def stand_in_for(self, api_version: str, kind: str) -> str | None:
        """The ``apiVersion`` whose schema :meth:`for_object` used in place of this one, if any."""
        return self._resolve(api_version, kind)[1]

    def _resolve(self, api_version: str, kind: str) -> tuple[SchemaNode, str | None]:
        cached = self._cache.get((api_version, kind))
        if cached is None:
            cached = self._build(api_version, kind)
            self._cache[(api_version, kind)] = cached
        return cached

    def _exact(self, api_version: str, kind: str) -> SchemaNode | None:
        group, version = _split_api_version(api_version)
        return self._crds.get((group, version, kind)) or builtin_schema(api_version, kind)

    def _stand_in(self, api_version: str, kind: str) -> str | None:
        """The newest described version of the same group and kind, or ``None``."""
        group, version = _split_api_version(api_version)
        if not version:
            return None  # no apiVersion at all: not a version to stand in for
        known = set(builtin_api_versions(group, kind))
        known.update(f"{g}/{v}" if g else v for g, v, k in self._crds if g == group and k == kind)
        known.discard(api_version)
        if not known:
            return None
        return max(known, key=lambda av: (version_priority(_split_api_version(av)[1]), av))

    def _build(self, api_version: str, kind: str) -> tuple[SchemaNode, str | None]:
        group, _ = _split_api_version(api_version)
        stand_in = None
        base = self._exact(api_version, kind)
        if base is None:
            stand_in = self._stand_in(api_version, kind)
            base = self._exact(stand_in, kind) if stand_in else None
        if base is None:
            base = OPEN_SCHEMA
        tree = _PathTree()
        for key in self._declared:
            if key.kind == kind and (key.group is None or key.group == group):
                tree.add(key.segments(), key.patch_meta())
        return (_DeclaredNode(base, tree) if tree.children else base), stand_in


def associative_key(schema_node: SchemaNode | None, field_name: str) -> tuple[str, ...] | None:
    """kyaml's associative-list keys of list field ``field_name``, or ``None``.

    A list is associative iff its patch strategy includes ``merge``; its keys
    are ``x-kubernetes-list-map-keys`` if given, else the patch merge key,
    else ``()`` (a list of scalars merged as a set).  An unknown field or no
    schema gives ``None`` (not associative), as in kyaml's resource merge.
    """
    if schema_node is None:
        return None
    try:
        _, meta = schema_node.lookup_slice(field_name)
    except SchemaLookupError:
        return None
    if "merge" not in meta.strategies:
        return None
    if meta.list_map_keys:
        return meta.list_map_keys
    return (meta.merge_key,) if meta.merge_key else ()
