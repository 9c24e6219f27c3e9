"""3-way merge of YAML trees (local <- origin -> upstream), kyaml-style.

Public API::

    merge3(local, origin, upstream, schema=None, options=MergeOptions()) -> MergeOutcome

``local``/``origin``/``upstream`` are ruamel round-trip trees (or plain
dicts/lists) of one document, or MISSING.  ``local`` is edited in place and
``upstream``'s nodes may be moved into it; pass fresh trees.  ``Merger(...,
representation=PLAIN_DATA)`` merges plain data without ruamel.yaml (no
comments, so no conflict markers).

Layout (as kyaml's ``walk`` + ``merge3``): :mod:`.walker` owns all
traversal, :mod:`.visit` is the visitor contract, :mod:`.visitor` holds
kyaml's rules; another policy is another visitor (``merge3(...,
visitor=...)``).
"""

from __future__ import annotations

import importlib

from krm_merge.faces import lazy_names
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from .conflicts import Conflict
    from .policy import ConflictPolicy
    from .nodes import MISSING, ROUND_TRIP
    from .plain import PLAIN_DATA
    from .rules import FALLBACK_KEYS, NO_SCHEMA, ListRule, ListStrategy, MergeSchema, SchemaNodeAdapter
    from .visit import Action, Decision, Representation, Sources, Visitor
    from .visitor import Merge3Error, Merge3Visitor
    from .walker import MergeOptions, Merger, Walker

# Where each public name lives.  They are imported on first use (PEP 562): the engine
# pulls in ruamel.yaml, and importing any merge3 module runs this file first, while an
# update whose resources need no round-trip merge (most of a kpt-fetched package's) only
# needs the package rules and never pays for it.
_HOMES = {
    "Conflict": ".conflicts", "ConflictPolicy": ".policy", "MISSING": ".nodes", "ROUND_TRIP": ".nodes",
    "PLAIN_DATA": ".plain", "Representation": ".visit",
    "FALLBACK_KEYS": ".rules", "NO_SCHEMA": ".rules", "ListRule": ".rules", "ListStrategy": ".rules",
    "MergeSchema": ".rules", "SchemaNodeAdapter": ".rules",
    "Action": ".visit", "Decision": ".visit", "Sources": ".visit", "Visitor": ".visit",
    "Merge3Error": ".visitor", "Merge3Visitor": ".visitor",
    "MergeOptions": ".walker", "Merger": ".walker", "Walker": ".walker",
}


__getattr__ = lazy_names(__name__, _HOMES, globals())


# A NamedTuple, not a dataclass: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class MergeOutcome(Record):
    """The merged document (MISSING when the merge deletes it) and its conflicts."""

    result: Any
    conflicts: list[Conflict]


def merge3(
    local: Any,
    origin: Any,
    upstream: Any,
    schema: MergeSchema | None = None,
    options: MergeOptions | None = None,
    visitor: Merge3Visitor | None = None,
) -> MergeOutcome:
    """Merge one document; raises :class:`Merge3Error` when it cannot be merged."""
    walker = importlib.import_module(".walker", __name__)  # the engine, on first use (see _HOMES)
    merger = walker.Merger(options or walker.MergeOptions(), visitor)
    result = merger.merge_document(local, origin, upstream, schema)
    return MergeOutcome(result, merger.conflicts)


__all__ = [
    "FALLBACK_KEYS",
    "MISSING",
    "NO_SCHEMA",
    "PLAIN_DATA",
    "ROUND_TRIP",
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
    "Representation",
    "SchemaNodeAdapter",
    "Sources",
    "Visitor",
    "Walker",
    "merge3",
]
