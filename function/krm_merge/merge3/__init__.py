"""3-way merge of YAML trees (local <- origin -> upstream), kyaml-style.

Public API::

    merge3(local, origin, upstream, schema=None, options=MergeOptions()) -> MergeOutcome

``local``/``origin``/``upstream`` are ruamel round-trip trees (or plain
dicts/lists) of one document, or MISSING.  ``local`` is edited in place and
``upstream``'s nodes may be moved into it; pass fresh trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .conflicts import Conflict, ConflictPolicy
from .nodes import MISSING
from .rules import (
    FALLBACK_KEYS,
    NO_SCHEMA,
    ListRule,
    ListStrategy,
    MergeSchema,
    SchemaNodeAdapter,
)
from .walker import Merge3Error, MergeOptions, Merger


@dataclass
class MergeOutcome:
    """The merged document (MISSING when the merge deletes it) and its conflicts."""

    result: Any
    conflicts: list[Conflict] = field(default_factory=list)


def merge3(
    local: Any,
    origin: Any,
    upstream: Any,
    schema: MergeSchema | None = None,
    options: MergeOptions | None = None,
) -> MergeOutcome:
    """Merge one document; raises :class:`Merge3Error` when it cannot be merged."""
    merger = Merger(options or MergeOptions())
    result = merger.merge_document(local, origin, upstream, schema)
    return MergeOutcome(result, merger.conflicts)


__all__ = [
    "FALLBACK_KEYS",
    "MISSING",
    "NO_SCHEMA",
    "Conflict",
    "ConflictPolicy",
    "ListRule",
    "ListStrategy",
    "Merge3Error",
    "MergeOptions",
    "MergeOutcome",
    "MergeSchema",
    "Merger",
    "SchemaNodeAdapter",
    "merge3",
]
