"""The schema interface every merge algorithm asks for patch metadata.

Mirrors apimachinery's ``LookupPatchMeta``: a schema node answers, for one
field of the object it describes, the field's patch metadata and the schema of
the field's value (for lists: of the list's elements).  Strategic merge patch
(``krm_merge.smp``) and the 3-way merge (``krm_merge.merge3``) both use it, so
the built-in Kubernetes table, CRD schemas, declared keys and the conformance
test schema are interchangeable sources.
"""

from __future__ import annotations

from krm_merge.errors import KrmMergeError
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # protocols are for type checkers: plain base classes at run time (issue 45)


class SchemaLookupError(KrmMergeError):
    """A field could not be looked up (Kubernetes: ``unable to find api field``)."""


# A NamedTuple, not a dataclass: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class PatchMeta(Record):
    """Patch metadata of one field.

    ``strategies`` holds the comma-separated parts of
    ``x-kubernetes-patch-strategy`` (``("merge",)``, ``("merge", "retainKeys")``,
    ``("replace",)``, ``()`` for the default).  ``merge_key`` is
    ``x-kubernetes-patch-merge-key``.  ``list_map_keys`` holds
    ``x-kubernetes-list-map-keys`` (server-side apply's associative-list keys),
    which the 3-way merge uses when no merge key is declared.
    """

    strategies: tuple[str, ...] = ()
    merge_key: str | None = None
    list_map_keys: tuple[str, ...] = ()
    list_type: str | None = None  # x-kubernetes-list-type: atomic|set|map


NO_META = PatchMeta()


class SchemaNode(Protocol):
    """Schema of one object (map) in a document."""

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        """Metadata of map-valued field ``key`` and the schema of its value.

        Returns ``(None, NO_META)`` below an arbitrary/unknown subtree where
        nothing is known and nothing is an error.  Raises
        :class:`SchemaLookupError` when the schema is known and has no such
        field (the upstream error texts are in ``smp-algorithm.md`` §10).
        """
        ...

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        """Metadata of list-valued field ``key`` and the schema of its elements."""
        ...


class OpenSchema:
    """A schema that knows nothing: every lookup yields no metadata.

    This is JSON-merge-patch behaviour: maps merge recursively, lists are
    replaced wholesale.  Used for kinds with no schema at all.
    """

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        return self, NO_META

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        return self, NO_META


OPEN_SCHEMA = OpenSchema()
