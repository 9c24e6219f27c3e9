"""Schemas of custom resources, read from CustomResourceDefinition objects.

A CRD's ``openAPIV3Schema`` (per version) becomes a :class:`SchemaNode`:

* ``properties`` are the known fields; a field a schema with properties does
  not list fails with ``unable to find api field "<k>"`` (apimachinery's
  OpenAPI v3 wording) unless the object has
  ``x-kubernetes-preserve-unknown-fields: true``;
* ``additionalProperties`` makes a map: every key has the values' schema;
* an object with neither properties nor additionalProperties, a value with
  ``x-kubernetes-preserve-unknown-fields`` and an untyped value are
  arbitrary: nothing is known below them and nothing is an error;
* list metadata: ``x-kubernetes-patch-strategy`` /
  ``x-kubernetes-patch-merge-key`` when present; otherwise derived the way
  server-side apply merges: ``x-kubernetes-list-type: map`` with a single
  ``x-kubernetes-list-map-keys`` entry -> strategy ``merge`` on that key;
  ``x-kubernetes-list-type: set`` of scalars -> strategy ``merge`` (set union);
  ``map`` with several keys keeps the keys in ``list_map_keys`` but no
  strategy (a strategic merge patch has a single merge key, so such a list
  is replaced, as for built-in lists of that shape);
* ``apiVersion``, ``kind`` and ``metadata`` at the root always use the
  built-in ``ObjectMeta`` schema (CRD schemas rarely describe metadata), so
  finalizers and ownerReferences merge as on built-in kinds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .base import NO_META, OPEN_SCHEMA, PatchMeta, SchemaLookupError, SchemaNode
from .builtin import builtin_definition
from .nodes import LIST_NODE, PRIMITIVE_NODE, patch_meta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean"})


class InvalidCrdError(SchemaLookupError):
    """A CustomResourceDefinition lacks what is needed to build its schema."""


def _is_arbitrary(schema: Mapping[str, Any]) -> bool:
    if schema.get("x-kubernetes-preserve-unknown-fields") is True and not schema.get("properties"):
        return True
    return "type" not in schema and not schema.get("properties") and "items" not in schema


def derived_list_meta(schema: Mapping[str, Any]) -> PatchMeta:
    """Patch metadata of a list field of a CRD schema (see the module docstring)."""
    strategy = schema.get("x-kubernetes-patch-strategy")
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    list_type = schema.get("x-kubernetes-list-type")
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    if not strategy and not merge_key:
        items = schema.get("items") or {}
        if list_type == "map" and len(keys) == 1:
            strategy, merge_key = "merge", keys[0]
        elif list_type == "set" and items.get("type") in _SCALAR_TYPES:
            strategy = "merge"
    return patch_meta(strategy, merge_key, list_type, keys)


def _value_node(schema: Mapping[str, Any]) -> SchemaNode:
    """Schema of a value, looked into as a map."""
    if schema.get("x-kubernetes-int-or-string"):
        return PRIMITIVE_NODE
    if _is_arbitrary(schema):
        return OPEN_SCHEMA
    kind = schema.get("type")
    if kind == "array":
        return LIST_NODE
    if kind in _SCALAR_TYPES:
        return PRIMITIVE_NODE
    return CrdObjectNode(schema)


def _element_node(schema: Mapping[str, Any]) -> SchemaNode:
    """Schema of the elements of a value, looked into as a list."""
    if schema.get("x-kubernetes-int-or-string") or schema.get("type") in _SCALAR_TYPES:
        raise SchemaLookupError("expected slice, but got primitive")
    if _is_arbitrary(schema):
        return OPEN_SCHEMA
    if schema.get("type") != "array":
        raise SchemaLookupError("expected slice, but got map")
    items = schema.get("items")
    return _value_node(items) if isinstance(items, Mapping) else OPEN_SCHEMA


class CrdObjectNode:
    """One object schema (``JSONSchemaProps``) of a CRD."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema
        self._cache: dict[tuple[str, bool], tuple[SchemaNode | None, PatchMeta]] = {}

    def _field(self, key: str) -> tuple[Mapping[str, Any] | None, bool]:
        """(field schema, is-a-property); ``(None, False)`` when nothing is known."""
        properties = self._schema.get("properties") or {}
        if key in properties:
            return properties[key], True
        extra = self._schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return extra, False
        if properties and not self._schema.get("x-kubernetes-preserve-unknown-fields"):
            raise SchemaLookupError(f'unable to find api field "{key}"')
        return None, False

    def _lookup(self, key: str, as_list: bool) -> tuple[SchemaNode | None, PatchMeta]:
        found = self._cache.get((key, as_list))
        if found is None:
            schema, is_property = self._field(key)
            if schema is None:
                found = (OPEN_SCHEMA, NO_META)
            else:
                # Map values carry no metadata of their own (Go: map element type).
                meta = derived_list_meta(schema) if is_property else NO_META
                node = _element_node(schema) if as_list else _value_node(schema)
                found = (node, meta)
            self._cache[(key, as_list)] = found
        return found

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        return self._lookup(key, False)

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        return self._lookup(key, True)


class CrdRootNode:
    """Root of a custom resource: the CRD schema with the built-in metadata."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._inner = CrdObjectNode(schema)

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        if key == "metadata":
            return builtin_definition(OBJECT_META), NO_META
        if key in ("apiVersion", "kind"):
            return PRIMITIVE_NODE, NO_META
        return self._inner.lookup_struct(key)

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        if key == "metadata":
            raise SchemaLookupError("expected slice, but got map")
        if key in ("apiVersion", "kind"):
            raise SchemaLookupError("expected slice, but got primitive")
        return self._inner.lookup_slice(key)


def _crd_name(crd: Mapping[str, Any]) -> str:
    metadata = crd.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return f"CustomResourceDefinition {name or '<unnamed>'}"


def _version_schemas(crd: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any] | None]]:
    """(version name, openAPIV3Schema) pairs; apiextensions v1 and v1beta1 layouts."""
    spec = crd["spec"]
    shared = (spec.get("validation") or {}).get("openAPIV3Schema")  # v1beta1
    versions = spec.get("versions") or []
    if not versions and spec.get("version"):
        versions = [{"name": spec["version"]}]
    for version in versions:
        if not isinstance(version, Mapping) or not isinstance(version.get("name"), str):
            raise InvalidCrdError(f"{_crd_name(crd)}: spec.versions[].name missing")
        own = (version.get("schema") or {}).get("openAPIV3Schema")
        yield version["name"], own if own is not None else shared


def crd_schemas(crd: Mapping[str, Any]) -> dict[tuple[str, str, str], SchemaNode]:
    """Schemas a CRD defines, keyed by ``(group, version, kind)``.

    A version without a schema gets one that knows nothing but the metadata.
    Raises :class:`InvalidCrdError` when group, kind or version names are missing.
    """
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        raise InvalidCrdError(f"{_crd_name(crd)}: spec missing")
    group = spec.get("group")
    names = spec.get("names")
    kind = names.get("kind") if isinstance(names, Mapping) else None
    if not isinstance(group, str) or not isinstance(kind, str):
        raise InvalidCrdError(f"{_crd_name(crd)}: spec.group or spec.names.kind missing")
    result: dict[tuple[str, str, str], SchemaNode] = {}
    for version, schema in _version_schemas(crd):
        if schema is not None and not isinstance(schema, Mapping):
            raise InvalidCrdError(f"{_crd_name(crd)}: openAPIV3Schema of {version} is not a map")
        result[(group, version, kind)] = CrdRootNode(schema or {})
    return result


def is_crd(obj: Mapping[str, Any]) -> bool:
    """Whether a resource is a CustomResourceDefinition (any apiextensions version)."""
    api_version = obj.get("apiVersion")
    return (
        obj.get("kind") == "CustomResourceDefinition"
        and isinstance(api_version, str)
        and api_version.startswith("apiextensions.k8s.io/")
    )
