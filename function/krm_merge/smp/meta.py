"""Schema lookups for the merge engine, with Kubernetes error wording."""

from __future__ import annotations


from ..records import Record
from ..schema.base import OPEN_SCHEMA, PatchMeta, SchemaLookupError, SchemaNode
from .errors import SmpError
from .path import Path, render

RETAIN_KEYS_STRATEGY = "retainKeys"
MERGE_STRATEGY = "merge"
REPLACE_STRATEGY = "replace"


class FieldMeta(Record):
    """What the engine needs to know about one field.

    ``schema`` is the schema of the field's value (of its elements for lists),
    never ``None``: unknown subtrees get :data:`OPEN_SCHEMA`.
    """

    schema: SchemaNode
    strategy: str  # "", "merge" or "replace" (any other value behaves like replace)
    retain_keys: bool
    merge_key: str  # "" when none is declared


def split_retain_keys(strategies: tuple[str, ...], path: Path) -> tuple[bool, str]:
    """``extractRetainKeysPatchStrategy``: (has retainKeys, main strategy)."""
    if not strategies:
        return False, ""
    if len(strategies) == 1:
        only = strategies[0]
        return (True, "") if only == RETAIN_KEYS_STRATEGY else (False, only)
    if len(strategies) == 2:
        if strategies[0] == RETAIN_KEYS_STRATEGY:
            return True, strategies[1]
        if strategies[1] == RETAIN_KEYS_STRATEGY:
            return True, strategies[0]
    raise SmpError(f"unexpected patch strategy: [{' '.join(strategies)}]", render(path))


def _to_field_meta(sub: SchemaNode | None, meta: PatchMeta, path: Path) -> FieldMeta:
    if not meta.strategies and not meta.merge_key:
        return FieldMeta(sub if sub is not None else OPEN_SCHEMA, "", False, "")
    retain, strategy = split_retain_keys(tuple(meta.strategies), path)
    return FieldMeta(sub if sub is not None else OPEN_SCHEMA, strategy, retain, meta.merge_key or "")


def lookup_map_field(schema: SchemaNode, key: str, path: Path) -> FieldMeta:
    """Patch metadata of a map-valued field (``LookupPatchMetadataForStruct``)."""
    try:
        sub, meta = schema.lookup_struct(key)
    except SchemaLookupError as err:
        raise SmpError(str(err), render(path)) from None
    return _to_field_meta(sub, meta, path)


def lookup_list_field(schema: SchemaNode, key: str, path: Path) -> FieldMeta:
    """Patch metadata of a list-valued field (``LookupPatchMetadataForSlice``)."""
    try:
        sub, meta = schema.lookup_slice(key)
    except SchemaLookupError as err:
        raise SmpError(str(err), render(path)) from None
    return _to_field_meta(sub, meta, path)
