"""Traversal of the 3-way merge (local <- origin -> upstream), kyaml's ``yaml/walk``.

:class:`Walker` owns every step through the trees: :meth:`Walker.walk` looks
at the node kind and calls one of :meth:`~Walker.walk_map`,
:meth:`~Walker.walk_associative_list`, :meth:`~Walker.walk_plain_list`,
:meth:`~Walker.walk_scalar`; each recurses through :meth:`~Walker.walk`
again.  What happens to a node is decided by a :class:`~.visit.Visitor`
(:class:`~.visitor.Merge3Visitor` by default); the walker applies the
decision.  Local is the destination: it is edited in place, so its untouched
nodes keep their comments and formatting; nodes taken from upstream are moved
over (upstream's tree is consumed, never copied).  What a node is made of
(ruamel's round-trip trees, or plain data) is the visitor's
:class:`~.visit.Representation`: the walker asks it for comments, new
containers and a rebuilt list, and leaves comments out where it has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeAlias

from krm_merge.krm.values import format_path
from krm_merge.outcomes import kinds

from .assoc import element_key, element_label, index_elements, ordered_keys, rebuilt
from .conflicts import (
    ABSENT_VALUE, MARKER, Conflict, ConflictPolicy, FieldMark, FieldRules, Lookups, locator_of, marker_text, recorded,
)
from .nodes import MISSING, ROUND_TRIP, NodeKind, child, kind_of
from .rules import FALLBACK_KEYS, INFER_LIST, ListRule, ListStrategy, MergeSchema, SchemaResolver, infer_keys
from .visit import Action, Decision, Representation, Sources, Visitor
from .visitor import Merge3Error, Merge3Visitor


class _KindMismatch(Exception):
    pass


@dataclass(frozen=True)
class _Field:
    """Where a node sits, for schema lookups: map field ``key`` of ``parent``, or a list element."""

    parent: MergeSchema | None
    key: str | None = None

    def map_schema(self) -> MergeSchema | None:
        if self.key is None:
            return self.parent
        return self.parent.map_field(self.key) if self.parent is not None else None

    def list_rule(self) -> tuple[ListRule, MergeSchema | None]:
        if self.key is None or self.parent is None:
            return INFER_LIST, None
        return self.parent.list_field(self.key)


@dataclass
class Walker:
    """Walks three trees at once and applies a visitor's decisions.

    ``fallback_keys``: candidate element keys for lists the schema does not
    describe (the first key every element carries makes the list
    associative; empty: such lists are plain).  ``resolver`` looks up the
    schema of an embedded object by apiVersion/kind.
    """

    visitor: Visitor
    fallback_keys: tuple[str, ...] = FALLBACK_KEYS
    resolver: SchemaResolver | None = None
    # Called with (destination map, key, the three values) after each field is settled and still there.
    on_field: Callable[[Any, Any, Sources], None] | None = None
    rep: Representation = ROUND_TRIP  # what the trees are made of (the visitor's own)

    def walk_document(self, local: Any, origin: Any, upstream: Any, schema: MergeSchema | None) -> Any:
        """Merge three documents; returns the merged local or MISSING."""
        return self.walk_map(Sources(local, origin, upstream), schema)

    def walk(self, nodes: Sources, where: _Field) -> Any:
        """Dispatch on the node kind of the first non-null version."""
        try:
            kind = _node_kind(nodes)
        except _KindMismatch:
            return self._apply(self.visitor.visit_kind_change(nodes), nodes)
        if kind is NodeKind.SEQ:
            rule, elements = where.list_rule()
            rule = self._resolve_rule(rule, nodes)
            if rule.strategy is ListStrategy.PLAIN:
                return self.walk_plain_list(nodes, rule)
            return self.walk_associative_list(nodes, rule, elements)
        if kind is NodeKind.SCALAR:
            return self.walk_scalar(nodes)
        return self.walk_map(nodes, where.map_schema())

    # -- one function per node kind ------------------------------------------

    def walk_map(self, nodes: Sources, schema: MergeSchema | None) -> Any:
        """Visit the map, then walk every field of the three versions into the destination."""
        decision = self.visitor.visit_map(nodes, schema)
        if decision.action is not Action.DESCEND:
            return self._apply(decision, nodes)
        inner = decision.sources
        assert inner is not None
        if schema is None and self.resolver is not None:
            schema = self._embedded_schema(inner)
        dest = inner.local
        for key in _union_keys(inner):
            self._walk_field(inner, key, schema)
        if not dest and decision.drop_if_empty:
            return MISSING
        return dest

    def walk_associative_list(self, nodes: Sources, rule: ListRule, elements: MergeSchema | None) -> Any:
        """Visit the list, then walk the elements matched by key; local order is kept."""
        decision = self.visitor.visit_list(nodes, rule, elements)
        if decision.action is not Action.DESCEND:
            return self._apply(decision, nodes)
        inner = decision.sources
        assert inner is not None
        dest = inner.local
        local_keys = [element_key(e, rule) for e in dest]  # before elements are merged in place
        li, oi, ui = (index_elements(n, rule) for n in (dest, inner.origin, inner.upstream))
        merged: dict[Any, Any] = {}
        for key in ordered_keys(li, oi, ui):
            element = Sources(li.get(key, MISSING), oi.get(key, MISSING), ui.get(key, MISSING), inner.path + (element_label(rule, key),))
            result = self.walk(element, _Field(elements))
            if rule.keyed:
                result = _complete_element(result, element, rule, key)
            merged[key] = result
        self.rep.replace_items(dest, *rebuilt(dest, local_keys, merged))
        if not dest and decision.drop_if_empty:
            return MISSING
        return dest

    def walk_plain_list(self, nodes: Sources, rule: ListRule) -> Any:
        """A plain list is decided whole by the visitor."""
        return self._apply(self.visitor.visit_list(nodes, rule, None), nodes)

    def walk_scalar(self, nodes: Sources) -> Any:
        """A scalar is decided by the visitor."""
        return self._apply(self.visitor.visit_scalar(nodes), nodes)

    # -- helpers -------------------------------------------------------------

    def _walk_field(self, inner: Sources, key: Any, schema: MergeSchema | None) -> None:
        """Walk map field ``key`` and set (or remove) it on the destination, comments included."""
        l, o, u = inner.local, inner.origin, inner.upstream
        rep = self.rep
        values = Sources(child(l, key), child(o, key), child(u, key), inner.path + (str(key),))
        take_comment, saved = False, None
        if rep.comments:
            comments = Sources(rep.key_comment(l, key), rep.key_comment(o, key), rep.key_comment(u, key), values.path)
            take_comment = self.visitor.visit_key(values, comments).action is Action.REPLACE
            saved = rep.save_key_comment(l, key)
        result = self.walk(values, _Field(schema, str(key)))
        if result is MISSING:
            if key in l:
                del l[key]
                rep.drop_key_comment(l, key)
            return
        if values.local is not result:
            l[key] = result
        # The key's comments follow their own rule (visit_key), also when the value is upstream's:
        # a comment local wrote on a line (a $promotion marker) stays when upstream changes the value.
        if take_comment:
            rep.copy_key_comment(l, key, u, key)
        elif rep.comments and values.local is not result:
            rep.restore_key_comment(l, key, saved)
        if self.on_field is not None:
            self.on_field(l, key, values)

    def _apply(self, decision: Decision, nodes: Sources) -> Any:
        if decision.action is Action.KEEP:
            return nodes.local
        if decision.action is Action.REPLACE:
            return decision.node
        if decision.action is Action.DELETE:
            return MISSING
        raise Merge3Error(f"a {decision.action.value} decision cannot be applied to this node kind")

    def _resolve_rule(self, rule: ListRule, nodes: Sources) -> ListRule:
        """A list the schema does not describe: associative on the first fallback key all elements carry."""
        if rule.strategy is not ListStrategy.INFER:
            return rule
        versions = [nodes.local, nodes.origin, nodes.upstream]
        keys = infer_keys(versions, self.fallback_keys) if self.fallback_keys else None
        return ListRule(ListStrategy.ASSOCIATIVE, keys) if keys else ListRule(ListStrategy.PLAIN)

    def _embedded_schema(self, nodes: Sources) -> MergeSchema | None:
        for node in (nodes.local, nodes.origin, nodes.upstream):
            if isinstance(node, dict) and node.get("apiVersion") and node.get("kind"):
                assert self.resolver is not None
                return self.resolver(str(node["apiVersion"]), str(node["kind"]))
        return None


def _node_kind(nodes: Sources) -> NodeKind | None:
    """Kind of the first non-null version (None: all absent); the others must agree."""
    kinds = [kind_of(n) for n in (nodes.local, nodes.origin, nodes.upstream) if n is not MISSING and n is not None]
    if not kinds:
        return None
    if any(k is not kinds[0] for k in kinds[1:]):
        raise _KindMismatch
    return kinds[0]


def _union_keys(nodes: Sources) -> list[Any]:
    """Field names of the three versions, sorted (kyaml's order for fields new to local)."""
    seen: dict[Any, None] = {}
    for node in (nodes.local, nodes.origin, nodes.upstream):
        if isinstance(node, dict):
            for k in node:
                seen.setdefault(k, None)
    return sorted(seen, key=str)


def _complete_element(result: Any, element: Sources, rule: ListRule, key: Any) -> Any:
    """An element merged to nothing goes away; one new to local gets its key fields."""
    if result is MISSING or not result:
        return MISSING
    if element.local is MISSING and isinstance(result, dict):
        for name, value in zip(rule.keys, key):
            if name not in result and value != "":
                source = element.upstream if element.upstream is not MISSING else element.origin
                result[name] = source[name] if isinstance(source, dict) and name in source else value
    return result


_Marked: TypeAlias = "tuple[Any, Any, Sources, str]"
"""A marked field: its map, its key, the three values, its path as the conflict names it."""


@dataclass(frozen=True)
class MergeOptions:
    """Settings of one merge: conflict policy, fallback list keys, embedded-schema resolver."""

    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    fallback_keys: tuple[str, ...] = FALLBACK_KEYS
    resolver: SchemaResolver | None = None
    rules: FieldRules = FieldRules()  # the package's rules, deciding the fields they name before ``conflicts``
    keep_unchanged_nulls: bool = False  # a null in all three versions stays (kyaml: explicit null deletes)


@dataclass
class Merger:
    """One 3-way merge run: a :class:`Walker` with a visitor (kyaml's rules unless given).

    ``representation``: what the trees are made of (round-trip trees unless
    given; :data:`.plain.PLAIN_DATA` for plain data, whose markers are handed back in :attr:`pending`).
    """

    options: MergeOptions = field(default_factory=MergeOptions)
    visitor: Merge3Visitor | None = None
    # The markers the last merge_document wrote, for the update's conflict ledger.
    marked: list[FieldMark] = field(default_factory=list)
    # Plain data holds no comment: the markers the caller writes into the text, each (field's data path, marker).
    pending: list[tuple[tuple[Any, ...], str]] = field(default_factory=list)
    representation: Representation = ROUND_TRIP

    def __post_init__(self) -> None:
        if self.visitor is None:
            self.visitor = Merge3Visitor(self.options.conflicts, rules=self.options.rules,
                                         keep_unchanged_nulls=self.options.keep_unchanged_nulls, rep=self.representation)

    @property
    def conflicts(self) -> list[Conflict]:
        """The conflicts the visitor decided so far."""
        assert self.visitor is not None
        return self.visitor.conflicts

    def merge_document(self, local: Any, origin: Any, upstream: Any, schema: MergeSchema | None) -> Any:
        """Merge three documents (maps); returns the merged local or MISSING.

        Under ``conflicts: mark`` every field the visitor found changed on
        both sides keeps local's value and gets :func:`.conflicts.marker_comment`
        on its line; :attr:`marked` records each (where it is, the three values).
        """
        assert self.visitor is not None
        marks: list[_Marked] = []
        on_field = None
        if self.options.conflicts is ConflictPolicy.MARK or self.options.rules.marks:
            on_field = self._conflict_finder(marks)
        walker = Walker(self.visitor, self.options.fallback_keys, self.options.resolver, on_field, self.representation)
        merged = walker.walk_document(local, origin, upstream, schema)
        rep = walker.rep
        # Each value's JSON once, for its marker and for the ledger (two conversions per marker cost a fifth of
        # marking 20,000 fields).
        values_of = [(recorded(_marker_data(values.upstream), rep.to_plain_data),
                      recorded(_marker_data(values.origin), rep.to_plain_data)) for _, _, values, _ in marks]
        texts = [marker_text(up[0], origin[0]) for up, origin in values_of]
        self.pending = []
        paths = _container_paths(merged, {id(container) for container, _, _, _ in marks}) if marks else {}
        if rep.comments:
            for (container, key, _, _), text in zip(marks, texts):
                # a marker an earlier update left on the field gives way to this one
                rep.add_line_comment(container, key, text, replacing=f"# {MARKER}")
        else:
            for (container, key, _, _), text in zip(marks, texts):
                where = paths.get(id(container)) if isinstance(container, dict) else None
                # a field the merge dropped, or an element of a list: no line of the text is its own
                self.pending.append(((*where, key) if where is not None else (), text))
        self.marked = _field_marks(merged, paths, marks, values_of, rep.to_plain_data) if marks else []
        return merged

    def _conflict_finder(self, marks: list[_Marked]) -> Callable[[Any, Any, Sources], None]:
        """An ``on_field`` hook noting each field whose own value the visitor recorded as a conflict."""
        seen = [0]

        def note(container: Any, key: Any, values: Sources) -> None:
            found = self.conflicts[seen[0]:]
            if not found:
                return  # no conflict since the last field: no path to write
            seen[0] = len(self.conflicts)
            path = format_path(values.path)
            if any(c.path == path and c.winner is kinds.Decision.MARKED for c in found):
                marks.append((container, key, values, path))

        return note


def _field_marks(merged: Any, paths: dict[int, tuple[Any, ...]], marks: list[_Marked],
                 values_of: list[tuple[tuple[str, Any], tuple[str, Any]]], to_plain_data: Callable[[Any], Any],
                 ) -> list[FieldMark]:
    """Each marked field where the merged document holds it (a field the merge then dropped is left out); ``paths``
    holds the data path of each marked field's map, ``values_of`` upstream's and origin's values as recorded."""
    out: list[FieldMark] = []
    lookups: Lookups = {}
    for (container, key, _, field), (up, origin) in zip(marks, values_of):
        where = paths.get(id(container))
        locator = locator_of(merged, (*where, key), lookups) if where is not None else None
        if locator is not None:  # an element's naming value as data (ruamel's scalar types dropped), as recorded
            locator = tuple((p[0], to_plain_data(p[1])) if isinstance(p, tuple) else p for p in locator)
            out.append(FieldMark(locator, field, to_plain_data(container[key]), up[1], origin[1]))
    return out


def _container_paths(tree: Any, wanted: set[int]) -> dict[int, tuple[Any, ...]]:
    """The data path (keys and indices) of each map of ``tree`` whose id is in ``wanted`` (the first, if shared)."""
    found: dict[int, tuple[Any, ...]] = {}
    stack: list[tuple[Any, tuple[Any, ...]]] = [(tree, ())]
    while stack and len(found) < len(wanted):
        node, path = stack.pop()
        if isinstance(node, dict):
            if id(node) in wanted:
                found.setdefault(id(node), path)
            stack.extend((value, (*path, key)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, (*path, index)) for index, value in enumerate(node))
    return found


def _marker_data(node: Any) -> Any:
    # The node itself, not a plain copy: a copy would expand every alias in it (bounded in the marker instead).
    return ABSENT_VALUE if node is MISSING else node


__all__ = ["Merge3Error", "MergeOptions", "Merger", "Walker"]
