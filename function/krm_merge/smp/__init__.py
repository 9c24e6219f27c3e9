"""Kubernetes strategic merge patch on plain Python data — the public API.

Exactly what ``kubectl patch --type strategic`` and client-side
``kubectl apply`` compute, verified against kubectl and the 176 upstream
conformance cases::

    from krm_merge import smp

    live = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
    smp.apply(live, patch)["spec"]["template"]["spec"]["containers"]
    # [{'name': 'app', 'image': 'app:2'}]

Values are what a JSON or YAML loader gives: ``dict`` (any ``Mapping``),
``list``, ``str``, ``int``, ``float``, ``bool``, ``None``.  No function
modifies its arguments, and results never share objects with them.

Which lists merge by which key comes from a :class:`Schema`: by default the
built-in Kubernetes table, looked up by the object's ``apiVersion`` and
``kind``; a kind it does not know gets JSON-merge-patch semantics (maps merge,
lists are replaced) unless a CRD or declared merge keys describe it.

Every failure raises :class:`SmpError` (or a subclass) whose ``message`` is the
Kubernetes wording and whose ``path`` is the field path.  The algorithm and its
few deliberate deviations from Go are in ``docs/smp.md``.

The engine modules below this package (``krm_merge.smp.apply``,
``.create``, ``.kubectl_apply``, ...) are internal; so are the names this
module still imports from them for existing callers (``apply_patch``,
``create_two_way_patch``, ``create_three_way_patch``, ``apply_desired``,
``kubectl_apply_patch``), which take a schema node and mutate their input.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import ModuleType

from ..errors import KrmMergeError
from ..faces import lazy_names
from ..records import Record
from ..schema.base import OPEN_SCHEMA, SchemaLookupError, SchemaNode
from ..schema.crd import is_crd
from ..schema.registry import DeclaredKey, DeclaredKeyError, SchemaRegistry
from .apply import apply_patch
from .annotations import LAST_APPLIED_ANNOTATION as _LAST_APPLIED
from .errors import ConflictError, MissingMergeKeyError, SmpError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "LAST_APPLIED_ANNOTATION",
    "ConflictError",
    "MergeKey",
    "MissingMergeKeyError",
    "Schema",
    "SchemaError",
    "SmpError",
    "apply",
    "create_three_way",
    "create_two_way",
    "offline_apply",
]

LAST_APPLIED_ANNOTATION: str = _LAST_APPLIED
"""``kubectl.kubernetes.io/last-applied-configuration``: where :func:`offline_apply` records ``desired``."""


class SchemaError(KrmMergeError, ValueError):
    """A :class:`Schema` could not be built: a malformed CRD or merge-key declaration."""


class MergeKey(Record):
    """A merge key declared for a list field of a kind that has no schema.

    ``path`` names the list by field names from the object root, through maps
    and list elements alike (``spec.ports``, ``spec.template.spec.containers``;
    a ``[]`` after a segment is ignored).  ``key`` ``None`` with strategy
    ``"merge"`` declares a set of scalars.  ``strategy`` is ``"merge"``,
    ``"replace"``, ``"retainKeys"`` or a comma-joined combination, as in
    ``x-kubernetes-patch-strategy``.  ``group`` ``None`` matches the kind in
    every API group.  The same fields as the ``mergeKeys`` entries of the
    reorder-merge functionConfig.
    """

    kind: str
    path: str
    key: str | None = None
    strategy: str = "merge"
    group: str | None = None

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> MergeKey:
        """Build from a ``{kind, path, key, strategy, group}`` mapping (config form)."""
        unknown = sorted(set(entry) - {"kind", "path", "key", "strategy", "group"})
        if unknown:
            raise SchemaError(f"merge key: unknown field {unknown[0]!r}; valid: group, key, kind, path, strategy")
        try:
            return cls(
                kind=str(entry["kind"]),
                path=str(entry["path"]),
                key=None if entry.get("key") is None else str(entry["key"]),
                strategy=str(entry.get("strategy", "merge")),
                group=None if entry.get("group") is None else str(entry["group"]),
            )
        except KeyError as err:
            raise SchemaError(f"merge key: {err.args[0]} is required") from None

    def _declared(self) -> DeclaredKey:
        return DeclaredKey(self.kind, self.path, self.key, self.strategy, self.group)


class Schema:
    """Where the patch metadata (merge keys, patch strategies) of each kind comes from.

    Always layered, most specific first: declared merge keys override a CRD's
    schema, which overrides the built-in Kubernetes table (generated from the
    Kubernetes OpenAPI; see ``docs/schema.md``).  A kind none of them knows
    gets no metadata: maps merge and lists are replaced.

    Schemas are immutable values; build and combine them with::

        Schema.builtin()
        Schema.from_crd(crd)                       # a CustomResourceDefinition object
        Schema.builtin().with_merge_keys(MergeKey("Widget", "spec.parts", "id"))
        Schema.from_crd(a) | Schema.from_crd(b)    # later operand wins on a clash
    """

    __slots__ = ("_crds", "_keys", "_registry", "_node")

    def __init__(self) -> None:
        """The built-in table alone; the same as :meth:`builtin`."""
        self._crds: tuple[Mapping[str, Any], ...] = ()
        self._keys: tuple[MergeKey, ...] = ()
        self._node: SchemaNode | None = None
        self._registry = SchemaRegistry()

    @classmethod
    def builtin(cls) -> Schema:
        """The built-in Kubernetes table (what ``schema=None`` uses)."""
        return cls()

    @classmethod
    def from_crd(cls, crd: Mapping[str, Any]) -> Schema:
        """The schema a CustomResourceDefinition declares for its kind, over the built-in table.

        Reads ``x-kubernetes-patch-merge-key``/``-strategy`` and
        ``x-kubernetes-list-type``/``-list-map-keys`` of every version.
        Raises :class:`SchemaError` for an object that is not a usable CRD.
        """
        return cls().with_crd(crd)

    @classmethod
    def from_merge_keys(cls, *keys: MergeKey | Mapping[str, Any]) -> Schema:
        """Declared merge keys over the built-in table (see :meth:`with_merge_keys`)."""
        return cls().with_merge_keys(*keys)

    def with_crd(self, crd: Mapping[str, Any]) -> Schema:
        """This schema plus a CRD's (the CRD wins over earlier CRDs of the same kind)."""
        if not isinstance(crd, Mapping) or not is_crd(crd):
            raise SchemaError("not a CustomResourceDefinition (apiVersion apiextensions.k8s.io/*)")
        return self._derive(crds=(*self._crds, _plain(crd)))

    def with_merge_keys(self, *keys: MergeKey | Mapping[str, Any]) -> Schema:
        """This schema plus declared merge keys (:class:`MergeKey` or ``{kind, path, key, ...}``)."""
        parsed = tuple(k if isinstance(k, MergeKey) else MergeKey.from_dict(k) for k in keys)
        return self._derive(keys=(*self._keys, *parsed))

    def __or__(self, other: Schema) -> Schema:
        """Both schemas' CRDs and merge keys; ``other`` wins where they disagree."""
        if not isinstance(other, Schema):
            return NotImplemented
        return self._derive(crds=(*self._crds, *other._crds), keys=(*self._keys, *other._keys))

    def __repr__(self) -> str:
        kinds = [c.get("spec", {}).get("names", {}).get("kind") for c in self._crds]
        return f"Schema(crds={kinds!r}, merge_keys={list(self._keys)!r})"

    def _derive(
        self, *, crds: tuple[Mapping[str, Any], ...] | None = None, keys: tuple[MergeKey, ...] | None = None
    ) -> Schema:
        if self._node is not None:
            raise SchemaError("a schema built from a custom node cannot be combined")
        out = Schema.__new__(Schema)
        out._crds = self._crds if crds is None else crds
        out._keys = self._keys if keys is None else keys
        out._node = None
        try:
            out._registry = SchemaRegistry(out._crds, [k._declared() for k in out._keys])
        except (SchemaLookupError, DeclaredKeyError) as err:
            raise SchemaError(str(err)) from None
        return out

    @classmethod
    def _from_node(cls, node: SchemaNode) -> Schema:
        """Internal: one schema node for every object (tests use the conformance schema)."""
        out = cls()
        out._node = node
        return out

    def _for(self, *objects: Any) -> SchemaNode:
        """The node for the first object that names its ``apiVersion`` and ``kind``."""
        if self._node is not None:
            return self._node
        for obj in objects:
            if isinstance(obj, Mapping):
                api_version, kind = obj.get("apiVersion"), obj.get("kind")
                if isinstance(api_version, str) and isinstance(kind, str) and api_version and kind:
                    return self._registry.for_object(api_version, kind)
        return OPEN_SCHEMA


@functools.cache
def _builtin() -> Schema:
    # One shared value: a Schema is immutable, and its registry caches lookups per kind.
    return Schema()


def _schema(schema: Schema | None) -> Schema:
    if schema is None:
        return _builtin()
    if not isinstance(schema, Schema):
        raise TypeError(f"schema must be a krm_merge.smp.Schema, not {type(schema).__name__}")
    return schema


def _plain(value: Any) -> Any:
    """A fresh copy as plain ``dict``/``list`` (the engine and the caller never share objects)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _as_map(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SmpError(f"{what}: expected a map[string]interface {{}}, but received a {type(value).__name__}")
    return _plain(value)


def apply(live: Mapping[str, Any], patch: Mapping[str, Any], *, schema: Schema | None = None) -> dict[str, Any]:
    """``live`` with strategic merge patch ``patch`` applied, as ``kubectl patch --type strategic``.

    Every directive is supported: ``$patch`` (``replace``, ``delete``,
    ``merge``), ``$setElementOrder``, ``$deleteFromPrimitiveList``,
    ``$retainKeys``, and ``null`` to delete.  Map keys keep their order (new
    keys are appended in patch order); list order is the API server's.
    The schema is looked up by ``live``'s ``apiVersion``/``kind`` (else the
    patch's).  A top-level ``$patch: delete`` returns ``{}``.

    Raises :class:`SmpError` (:class:`MissingMergeKeyError` when a directive
    needs a merge key the schema lacks) with the Kubernetes message.
    """
    node = _schema(schema)._for(live, patch)
    result = apply_patch(_as_map(live, "live"), _as_map(patch, "patch"), node)
    return result if result is not None else {}


def _create() -> ModuleType:
    """The patch-creation engine, imported on first use: a plain patch (the function path) never needs it."""
    from . import create

    return create


def create_two_way(
    original: Mapping[str, Any], modified: Mapping[str, Any], *, schema: Schema | None = None
) -> dict[str, Any]:
    """The patch that turns ``original`` into ``modified`` (Kubernetes ``CreateTwoWayMergePatch``).

    Includes the ``$setElementOrder``, ``$deleteFromPrimitiveList`` and
    ``$retainKeys`` entries Kubernetes generates; ``{}`` when they are equal.
    ``apply(original, patch)`` gives ``modified`` back.
    """
    node = _schema(schema)._for(modified, original)
    return _create().create_two_way_patch(_as_map(original, "original"), _as_map(modified, "modified"), node)


def create_three_way(
    original: Mapping[str, Any] | None,
    modified: Mapping[str, Any],
    current: Mapping[str, Any],
    *,
    schema: Schema | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """The patch ``kubectl apply`` sends (Kubernetes ``CreateThreeWayMergePatch``).

    ``original`` is the last-applied configuration (``None`` when there is
    none), ``modified`` the new desired configuration, ``current`` the live
    object.  The patch holds every change from ``current`` to ``modified`` and
    the deletions from ``original`` to ``modified``.

    Unless ``overwrite``, raises :class:`ConflictError` (``conflicts`` lists the
    field paths) when the patch would change fields that were changed from
    ``original`` to ``current``.
    """
    node = _schema(schema)._for(modified, current, original)
    return _create().create_three_way_patch(
        _as_map(original, "original") if original is not None else None,
        _as_map(modified, "modified"),
        _as_map(current, "current"),
        node,
        overwrite=overwrite,
    )


def offline_apply(
    live: Mapping[str, Any] | None,
    desired: Mapping[str, Any],
    *,
    schema: Schema | None = None,
    overwrite: bool = True,
) -> dict[str, Any]:
    """The object client-side ``kubectl apply`` of ``desired`` leaves in place of ``live``.

    The 3-way patch is computed from ``live``'s
    ``kubectl.kubernetes.io/last-applied-configuration`` annotation, ``desired``
    and ``live``, then applied; the annotation is updated to record
    ``desired`` byte for byte as kubectl writes it.  ``live`` ``None`` (or
    ``{}``) means the object does not exist yet: ``desired`` plus the
    annotation.  ``overwrite=False`` is ``kubectl apply --overwrite=false``
    (raises :class:`ConflictError`).
    """
    from .kubectl_apply import apply_desired

    node = _schema(schema)._for(desired, live)
    current = _as_map(live, "live") if live else None
    return apply_desired(current, _as_map(desired, "desired"), node, overwrite=overwrite)


# Internal engine names kept importable for existing callers (not covered by the semver
# promise), loaded on first use: a plain patch (the function's common path) never needs
# the patch-creation modules.
_LAZY_ENGINE = {
    "create_two_way_patch": ".create",
    "create_three_way_patch": ".create",
    "apply_desired": ".kubectl_apply",
    "kubectl_apply_patch": ".kubectl_apply",
}

__getattr__ = lazy_names(__name__, _LAZY_ENGINE, globals())
