"""What the engine needs to know about a field: its list rule and child schema.

The walker only asks two questions of a :class:`MergeSchema`: "what is the
schema of map field ``key``?" and "how is list field ``key`` merged, and what
is the schema of its elements?".  :class:`SchemaNodeAdapter` answers them
from a :class:`krm_merge.schema.base.SchemaNode` (built-in table, CRDs,
declared keys); the Kptfile pipeline merge supplies its own schema.
"""

from __future__ import annotations

from enum import Enum

from krm_merge.records import Record
from krm_merge.schema.base import PatchMeta, SchemaLookupError, SchemaNode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol, TypeAlias
else:
    Protocol = object  # protocols are for type checkers: plain base classes at run time (issue 45)

KeyFn: TypeAlias = "Callable[[Any], tuple[str, ...] | None]"


class ListStrategy(Enum):
    """How a list is merged."""

    PLAIN = "plain"  # replaced wholesale by upstream's when upstream changed it
    ASSOCIATIVE = "associative"  # elements matched by key (or by value for scalar sets)
    INFER = "infer"  # no schema: decided from the elements (fallback key list)


# A NamedTuple, not a dataclass: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class ListRule(Record):
    """Merge rule of one list field.

    ``keys`` are the element fields forming the identity (empty for a set of
    scalars).  ``key_fn`` overrides them with a computed identity supplied by
    the caller (e.g. the Kptfile's pipeline functions: name, or image without
    tag, or exec path); it returns ``None`` for an element without identity.
    """

    strategy: ListStrategy
    keys: tuple[str, ...] = ()
    key_fn: KeyFn | None = None

    @property
    def keyed(self) -> bool:
        """Elements are maps matched by key (not scalars matched by value)."""
        return bool(self.keys) or self.key_fn is not None


PLAIN_LIST = ListRule(ListStrategy.PLAIN)
INFER_LIST = ListRule(ListStrategy.INFER)

# The keys kpt's documentation says are recognised automatically for lists
# without a schema (order = priority).
FALLBACK_KEYS: tuple[str, ...] = ("mountPath", "devicePath", "ip", "type", "topologyKey", "name", "containerPort")


def fallback_keys_from(text: str | None) -> tuple[str, ...]:
    """``--fallback-keys`` / a ConfigMap's ``fallbackKeys``: None = :data:`FALLBACK_KEYS`; else comma-separated names."""
    if text is None:
        return FALLBACK_KEYS
    return tuple(k.strip() for k in text.split(",") if k.strip())


class MergeSchema(Protocol):
    """Schema of one map node as seen by the 3-way merge."""

    def map_field(self, key: str) -> MergeSchema | None:
        """Schema of the map stored under ``key`` (None: unknown)."""
        ...

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        """Rule of the list under ``key`` and the schema of its elements."""
        ...


class SchemaNodeAdapter:
    """Adapts a patch-metadata :class:`SchemaNode` to :class:`MergeSchema`.

    kyaml treats a list as associative iff its patch strategy contains
    ``merge``; keys are ``x-kubernetes-list-map-keys`` if present, else the
    patch merge key, else none (a scalar set).  A field the schema does not
    know gets no schema (lists: inferred).
    """

    __slots__ = ("node",)

    def __init__(self, node: SchemaNode) -> None:
        self.node = node

    def map_field(self, key: str) -> MergeSchema | None:
        try:
            sub, _meta = self.node.lookup_struct(key)
        except SchemaLookupError:
            return None
        return SchemaNodeAdapter(sub) if sub is not None else None

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        try:
            sub, meta = self.node.lookup_slice(key)
        except SchemaLookupError:
            return INFER_LIST, None
        elem = SchemaNodeAdapter(sub) if sub is not None else None
        return rule_from_patch_meta(meta), elem


def rule_from_patch_meta(meta: PatchMeta) -> ListRule:
    """kyaml's reading of patch metadata (see module docstring)."""
    if "merge" not in meta.strategies:
        says_nothing = not meta.strategies and meta.merge_key is None and not meta.list_map_keys and meta.list_type is None
        # "no metadata at all" is also how an open (unknown-kind) schema answers
        return INFER_LIST if says_nothing else PLAIN_LIST
    if meta.list_map_keys:
        return ListRule(ListStrategy.ASSOCIATIVE, tuple(meta.list_map_keys))
    if meta.merge_key:
        return ListRule(ListStrategy.ASSOCIATIVE, (meta.merge_key,))
    return ListRule(ListStrategy.ASSOCIATIVE, ())


class NoSchema:
    """A schema that knows nothing: maps merge, lists are inferred."""

    def map_field(self, key: str) -> MergeSchema | None:
        return None

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        return INFER_LIST, None


NO_SCHEMA = NoSchema()

SchemaResolver: TypeAlias = "Callable[[str, str], MergeSchema | None]"
"""Looks up the schema of an object by (apiVersion, kind); used for embedded objects."""


def infer_keys(versions: list[Any], candidates: tuple[str, ...]) -> tuple[str, ...] | None:
    """First candidate key carried by every element of every present version.

    Returns None (plain list) when some element is not a map or no candidate
    is carried by all elements.  All versions empty -> plain list too.
    """
    elements = [e for v in versions if isinstance(v, list) for e in v]
    if not elements or not all(isinstance(e, dict) for e in elements):
        return None
    for key in candidates:
        if all(key in e and e[key] is not None for e in elements):
            return (key,)
    return None
