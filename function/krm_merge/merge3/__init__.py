"""3-way merge of YAML trees (local <- origin -> upstream), kyaml-style.

Public API::

    merge3(local, origin, upstream, schema=None, options=MergeOptions()) -> MergeOutcome

``local``/``origin``/``upstream`` are ruamel round-trip trees (or plain
dicts/lists) of one document, or MISSING.  ``local`` is edited in place and
``upstream``'s nodes may be moved into it; pass fresh trees.

Layout (as kyaml's ``walk`` + ``merge3``): :mod:`.walker` owns all
traversal, :mod:`.visit` is the visitor contract, :mod:`.visitor` holds
kyaml's rules; another policy is another visitor (``merge3(...,
visitor=...)``).
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
from .visit import Action, Decision, Sources, Visitor
from .visitor import Merge3Error, Merge3Visitor
from .walker import MergeOptions, Merger, Walker


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
    visitor: Merge3Visitor | None = None,
) -> MergeOutcome:
    """Merge one document; raises :class:`Merge3Error` when it cannot be merged."""
    merger = Merger(options or MergeOptions(), visitor)
    result = merger.merge_document(local, origin, upstream, schema)
    return MergeOutcome(result, merger.conflicts)


__all__ = [
    "FALLBACK_KEYS",
    "MISSING",
    "NO_SCHEMA",
    "Action",
    "Conflict",
    "ConflictPolicy",
    "Decision",
    "ListRule",
    "ListStrategy",
    "Merge3Error",
    "Merge3Visitor",
    "MergeOptions",
    "MergeOutcome",
    "MergeSchema",
    "Merger",
    "SchemaNodeAdapter",
    "Sources",
    "Visitor",
    "Walker",
    "merge3",
]
