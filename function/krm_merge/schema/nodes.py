"""Schema nodes shared by every schema source (built-in table, CRDs).

They reproduce the errors apimachinery's OpenAPI-based lookup
(``PatchMetaFromOpenAPI``) raises when the data and the schema disagree about
a value's shape, e.g. a map patched into a field the schema says is a string.
"""

from __future__ import annotations

from .base import NO_META, PatchMeta, SchemaLookupError, SchemaNode


class PrimitiveNode:
    """Schema of a scalar value: nothing can be looked up below it."""

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        raise SchemaLookupError("expected kind, but got primitive")

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        raise SchemaLookupError("expected slice, but got primitive")


class ListNode:
    """Schema of a list-valued field reached by a map lookup (data is a map, schema a list)."""

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        raise SchemaLookupError("expected kind, but got slice")

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        raise SchemaLookupError("expected visit kind first, then visit array")


PRIMITIVE_NODE = PrimitiveNode()
LIST_NODE = ListNode()


def patch_meta(
    strategy: str | None,
    merge_key: str | None,
    list_type: str | None = None,
    list_map_keys: tuple[str, ...] = (),
) -> PatchMeta:
    """Build a :class:`PatchMeta` from the raw OpenAPI extension values."""
    if not (strategy or merge_key or list_type or list_map_keys):
        return NO_META
    return PatchMeta(
        strategies=tuple(strategy.split(",")) if strategy else (),
        merge_key=merge_key or None,
        list_map_keys=tuple(list_map_keys),
        list_type=list_type,
    )
