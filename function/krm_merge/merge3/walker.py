"""Traversal of the 3-way merge (local <- origin -> upstream).

In the spirit of kyaml's ``walk`` + ``merge3``: :class:`Merger` visits a node
in all three trees at once and dispatches on the node kind to the per-kind
rules (scalars and plain lists in :mod:`.scalars`, associative lists in
:mod:`.assoc`).  Local is the destination: it is edited in place, so its
untouched nodes keep their comments and formatting; nodes taken from
upstream are moved over (upstream's tree is consumed, never copied).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import assoc, scalars
from .conflicts import Conflict, ConflictPolicy, format_path
from .nodes import (
    MISSING,
    NodeKind,
    child,
    copy_key_comment,
    drop_key_comment,
    key_comment,
    restore_key_comment,
    save_key_comment,
    kind_of,
    new_map,
    same,
)
from .rules import FALLBACK_KEYS, ListRule, ListStrategy, MergeSchema, SchemaResolver, infer_keys


class Merge3Error(Exception):
    """The three versions cannot be merged (e.g. a field changed its node kind)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


@dataclass(frozen=True)
class MergeOptions:
    """Settings of one merge.

    ``fallback_keys``: candidate element keys for lists without schema (the
    first key every element carries makes the list associative; empty tuple =
    such lists are plain, which is what kpt's resource-merge really does).
    ``resolver`` looks up schemas of embedded objects by apiVersion/kind.
    """

    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    fallback_keys: tuple[str, ...] = FALLBACK_KEYS
    resolver: SchemaResolver | None = None


@dataclass
class Merger:
    """One 3-way merge run; collects the conflicts it decided."""

    options: MergeOptions = field(default_factory=MergeOptions)
    conflicts: list[Conflict] = field(default_factory=list)

    # -- entry points -------------------------------------------------------

    def merge_document(self, local: Any, origin: Any, upstream: Any, schema: MergeSchema | None) -> Any:
        """Merge three documents (maps); returns the merged local or MISSING."""
        return self.merge_map(local, origin, upstream, schema, ())

    # -- dispatch -------------------------------------------------------------

    def node_kind(self, l: Any, o: Any, u: Any, path: tuple[Any, ...]) -> NodeKind | None:
        """Kind of the first non-null version; the others must agree."""
        kinds = [kind_of(n) for n in (l, o, u) if n is not MISSING and n is not None]
        if not kinds:
            return None
        first = kinds[0]
        for k in kinds[1:]:
            if k is not first:
                raise Merge3Error(f"wrong node kind: expected {first.value} but got {k.value}", format_path(path))
        return first

    def merge_field(self, l: Any, o: Any, u: Any, schema: MergeSchema | None, key: str, path: tuple[Any, ...]) -> tuple[Any, bool]:
        """Merge the values of map field ``key``; returns (result, taken_from_upstream)."""
        try:
            kind = self.node_kind(l, o, u, path)
        except Merge3Error:
            # A kind change on one side only is an ordinary change (kyaml errors on any).
            if same(o, u):
                return l, False
            if same(l, o):
                return u, True
            raise
        if kind is NodeKind.MAP:
            sub = schema.map_field(key) if schema is not None else None
            return self.merge_map(l, o, u, sub, path), False
        if kind is NodeKind.SEQ:
            if schema is not None:
                rule, elem_schema = schema.list_field(key)
            else:
                rule, elem_schema = ListRule(ListStrategy.INFER), None
            return self.merge_list(l, o, u, rule, elem_schema, path)
        return self.merge_scalar(l, o, u, path)

    # -- maps ---------------------------------------------------------------

    def merge_map(self, l: Any, o: Any, u: Any, schema: MergeSchema | None, path: tuple[Any, ...]) -> Any:
        """Merge three maps into ``l`` (created when local lacks it)."""
        if u is None or l is None:
            return MISSING
        if l is MISSING and u is MISSING:
            return MISSING
        created = l is MISSING
        was_empty = not created and not l
        if created:
            l = new_map()
        if schema is None and self.options.resolver is not None:
            schema = self._embedded_schema(l, o, u)
        keys = _union_keys(l, o, u)
        for key in keys:
            self._merge_key(l, o, u, key, schema, path)
        if not l and _drop_emptied(created, was_empty, o, u):
            return MISSING
        return l

    def _merge_key(self, l: Any, o: Any, u: Any, key: Any, schema: MergeSchema | None, path: tuple[Any, ...]) -> None:
        lv, ov, uv = child(l, key), child(o, key), child(u, key)
        cl, co, cu = key_comment(l, key), key_comment(o, key), key_comment(u, key)
        saved = save_key_comment(l, key)
        result, from_upstream = self.merge_field(lv, ov, uv, schema, str(key), path + (str(key),))
        if result is MISSING:
            if key in l:
                del l[key]
                drop_key_comment(l, key)
            return
        if lv is not result:
            l[key] = result
        if from_upstream or _take_upstream_comment(lv, ov, uv, cl, co, cu):
            copy_key_comment(l, key, u, key)
        elif lv is not result:
            restore_key_comment(l, key, saved)

    def _embedded_schema(self, l: Any, o: Any, u: Any) -> MergeSchema | None:
        for node in (l, o, u):
            if isinstance(node, dict) and node.get("apiVersion") and node.get("kind"):
                assert self.options.resolver is not None
                return self.options.resolver(str(node["apiVersion"]), str(node["kind"]))
        return None

    # -- scalars and lists -------------------------------------------------------

    def merge_scalar(self, l: Any, o: Any, u: Any, path: tuple[Any, ...]) -> tuple[Any, bool]:
        """Scalar rule; see :func:`.scalars.decide_scalar`."""
        decision = scalars.decide_scalar(l, o, u)
        return self._apply(decision, l, o, u, path)

    def merge_list(
        self, l: Any, o: Any, u: Any, rule: ListRule, elem_schema: MergeSchema | None, path: tuple[Any, ...]
    ) -> tuple[Any, bool]:
        """Dispatch a list to the plain or associative rule."""
        if rule.strategy is ListStrategy.INFER:
            keys = infer_keys([l, o, u], self.options.fallback_keys) if self.options.fallback_keys else None
            rule = ListRule(ListStrategy.ASSOCIATIVE, keys) if keys else ListRule(ListStrategy.PLAIN)
        if rule.strategy is ListStrategy.PLAIN:
            # a list's key comment is merged on its own (comment rule), not with the value
            return self._apply(scalars.decide_plain_list(l, o, u), l, o, u, path)[0], False
        return assoc.merge_associative(self, l, o, u, rule, elem_schema, path), False

    def _apply(self, decision: scalars.Decision, l: Any, o: Any, u: Any, path: tuple[Any, ...]) -> tuple[Any, bool]:
        if decision.conflict:
            winner = {ConflictPolicy.LOCAL_WINS: "local", ConflictPolicy.FAIL: "none"}.get(self.options.conflicts, "upstream")
            self.conflicts.append(scalars.conflict_record(format_path(path), l, o, u, winner))
            if winner == "local":
                return l, False
        if decision.take == "upstream":
            if u is MISSING or u is None:
                return MISSING, False
            return scalars.restyled(u, l), True
        if decision.take == "delete":
            return MISSING, False
        return l, False


def _drop_emptied(created: bool, was_empty: bool, o: Any, u: Any) -> bool:
    """Whether a map the merge left empty disappears.

    kyaml keeps such maps as ``{}``; we drop them when local had deleted the
    map (and upstream did not change it) or upstream deleted it, so a locally
    deleted ``labels`` does not come back as ``labels: {}``.  A map that was
    already empty locally, or an empty map upstream added, stays.
    """
    if created:
        return same(o, u)
    return u is MISSING and (not was_empty or (isinstance(o, dict) and not o))


def _union_keys(l: Any, o: Any, u: Any) -> list[Any]:
    seen: dict[Any, None] = {}
    for node in (l, o, u):
        if isinstance(node, dict):
            for k in node:
                seen.setdefault(k, None)
    return sorted(seen, key=str)


def _take_upstream_comment(lv: Any, ov: Any, uv: Any, cl: Any, co: Any, cu: Any) -> bool:
    """Comments follow the scalar rule: upstream's change wins unless local edited it."""
    if uv is MISSING:
        return False
    if lv is MISSING:
        return True
    if ov is MISSING:
        return lv is MISSING or cl != cu and cl == (None, None)
    return cl == co and co != cu
