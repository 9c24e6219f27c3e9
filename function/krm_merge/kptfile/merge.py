"""3-way merge of a Kptfile (local <- origin -> upstream).

The whole Kptfile goes through the generic engine (lists without schema are
associative on ``name`` when every element has one, as kpt infers them);
``pipeline.mutators`` / ``pipeline.validators`` follow the design doc's rules
(:mod:`.functions`); selectors and exclude lists are plain lists (upstream's
whole list when upstream changed it — the doc's example 9 prose).  Local keeps
its own ``metadata.name``/``namespace`` and ``upstream``/``upstreamLock``
(``update_upstream`` takes the latter two from upstream, as kpt does for
nested packages).  Comments survive: local's tree is edited in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from krm_merge.merge3 import Conflict, MergeOptions, Merger
from krm_merge.merge3.conflicts import ConflictPolicy, FieldMark
from krm_merge.merge3.nodes import MISSING, new_map, new_seq, same
from krm_merge.merge3.rules import INFER_LIST, PLAIN_LIST, ListRule, MergeSchema
from krm_merge.krm.yamlio import dump_like
from krm_merge.krm.yamlio import load_rt as load
from krm_merge.merge3.visit import DELETE, KEEP, Decision, Sources, descend, replace_with
from krm_merge.merge3.visitor import Merge3Visitor

from . import comments
from .functions import choose_function_rule

FUNCTION_LISTS = ("mutators", "validators")
SELECTOR_LISTS = ("selectors", "exclude")
LOCAL_OWNED = ("upstream", "upstreamLock")
LOCAL_OWNED_METADATA = ("name", "namespace")


class FunctionSchema:
    """One pipeline function: selector lists are plain lists.

    Also the marker :class:`PipelineVisitor` recognises function lists and
    functions by.
    """

    def map_field(self, key: str) -> MergeSchema | None:
        return None

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        # selectors/exclude have no identity: upstream's whole list if it changed (doc example 9)
        return PLAIN_LIST, None


class _PipelineSchema:
    def __init__(self, rules: dict[str, ListRule]) -> None:
        self.rules = rules

    def map_field(self, key: str) -> MergeSchema | None:
        return None

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        if key in self.rules:
            return self.rules[key], FunctionSchema()
        return PLAIN_LIST, None


class _KptfileSchema:
    def __init__(self, rules: dict[str, ListRule]) -> None:
        self.pipeline = _PipelineSchema(rules)

    def map_field(self, key: str) -> MergeSchema | None:
        return self.pipeline if key == "pipeline" else None

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        return INFER_LIST, None  # kpt infers `name` keys in the rest of the Kptfile


class PipelineVisitor(Merge3Visitor):
    """kyaml's rules, plus the resource-level rules for whole pipeline functions.

    A function added upstream is taken as upstream wrote it; one deleted
    locally stays deleted; one deleted upstream goes unless local changed
    it (then local's is kept whole) — instead of kyaml's partial fragments.
    A function list deleted upstream is merged against an empty list, so
    functions local added survive.
    """

    def visit_list(self, nodes: Sources, rule: ListRule, elements: MergeSchema | None) -> Decision:
        o, u = nodes.origin, nodes.upstream
        if isinstance(elements, FunctionSchema) and rule.keyed and u is MISSING and isinstance(o, list):
            l = nodes.local
            dest = new_seq() if l is MISSING or l is None else l
            return descend(nodes.with_local(dest).with_upstream(new_seq()), drop_if_empty=True)
        return super().visit_list(nodes, rule, elements)

    def visit_map(self, nodes: Sources, schema: MergeSchema | None) -> Decision:
        if not isinstance(schema, FunctionSchema):
            return super().visit_map(nodes, schema)
        l, o, u = nodes.local, nodes.origin, nodes.upstream
        if l is MISSING and o is MISSING:
            return replace_with(u)  # added upstream: as upstream wrote it (field order, comments)
        if o is not MISSING and l is MISSING:
            return DELETE
        if o is not MISSING and u is MISSING:
            return DELETE if same(l, o) else KEEP
        return super().visit_map(nodes, schema)


def _pipeline(doc: Any) -> Any:
    return doc.get("pipeline") if isinstance(doc, dict) else None


def _function_list(doc: Any, key: str) -> Any:
    if isinstance(doc, dict) and isinstance(doc.get("pipeline"), dict):
        return doc["pipeline"].get(key, MISSING)
    return MISSING


def function_rules(local: Any, origin: Any, upstream: Any) -> dict[str, ListRule]:
    """The merge rule of each function list, decided from its three versions."""
    return {key: choose_function_rule([_function_list(d, key) for d in (local, origin, upstream)]) for key in FUNCTION_LISTS}


def _without_local_owned(doc: Any) -> Any:
    """Drop the fields local always keeps (so the merge leaves local's alone)."""
    if not isinstance(doc, dict):
        return doc
    for key in LOCAL_OWNED:
        doc.pop(key, None)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        for key in LOCAL_OWNED_METADATA:
            meta.pop(key, None)
    return doc


def merge_kptfile(
    local: Any,
    origin: Any,
    upstream: Any,
    *,
    update_upstream: bool = False,
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS,
    marked: list[FieldMark] | None = None,
) -> tuple[Any, list[Conflict]]:
    """Merge three Kptfile trees into ``local`` (edited in place; the others are consumed).

    Returns the merged tree and the fields changed on both sides; the markers
    ``conflicts: mark`` wrote are appended to ``marked`` (the update's ledger).
    """
    if not isinstance(local, dict):
        local = new_map()
    taken = {k: upstream[k] for k in LOCAL_OWNED if update_upstream and isinstance(upstream, dict) and k in upstream}
    rules = function_rules(local, origin, upstream)
    heads = {
        key: [comments.detach(_pipeline(doc), key, rules[key].key_fn) for doc in (local, origin, upstream)]
        for key in FUNCTION_LISTS
    }
    origin, upstream = _without_local_owned(origin), _without_local_owned(upstream)
    merger = Merger(MergeOptions(conflicts, fallback_keys=("name",)), PipelineVisitor(conflicts))
    result = merger.merge_document(local, origin, upstream, _KptfileSchema(rules))
    if marked is not None:
        marked.extend(merger.marked)
    if result is MISSING:
        result = local
    for key, (mine, base, theirs) in heads.items():
        comments.attach(_pipeline(result), key, mine, base, theirs)
    for key, value in taken.items():
        result[key] = value
    return result, merger.conflicts


@dataclass
class KptfileMergeResult:
    """Merged Kptfile text and the fields changed on both sides."""

    text: str
    conflicts: list[Conflict] = field(default_factory=list)


def merge_kptfile_text(
    local: str,
    origin: str | None,
    upstream: str | None,
    *,
    update_upstream: bool = False,
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS,
) -> KptfileMergeResult:
    """Text-level :func:`merge_kptfile`; the result keeps local's sequence style."""
    trees = [load(t, what) if t is not None and t.strip() else MISSING for t, what in ((local, "local Kptfile"), (origin, "origin Kptfile"), (upstream, "upstream Kptfile"))]
    merged, found = merge_kptfile(*trees, update_upstream=update_upstream, conflicts=conflicts)
    return KptfileMergeResult(dump_like(merged, local), found)
