"""kyaml's 3-way merge rules as a visitor (kyaml ``yaml/merge3/visitor.go``).

Local is the destination: maps and associative lists are merged into local's
own containers (so its untouched nodes keep their comments and layout);
scalars and plain lists are decided by :func:`.scalars.decide_scalar`.
Conflicts (a value changed differently on both sides) are settled by the
:class:`ConflictPolicy` and recorded.
"""

from __future__ import annotations

from krm_merge.errors import KrmMergeError
from krm_merge.krm.values import format_path
from krm_merge.outcomes import kinds

from dataclasses import dataclass, field
from typing import Any

from . import scalars
from .conflicts import Conflict, ConflictPolicy, FieldRules
from .nodes import MISSING, ROUND_TRIP, kind_of
from .rules import ListRule, ListStrategy, MergeSchema
from .visit import DELETE, KEEP, Action, Decision, Representation, Sources, descend, replace_with

UPSTREAM_COMMENT = Decision(Action.REPLACE)
"""visit_key's answer for "take upstream's comments"."""


# How a conflict is decided under each policy (upstream-wins: upstream's value).
_WINNERS = {ConflictPolicy.LOCAL_WINS: kinds.Decision.LOCAL, ConflictPolicy.MARK: kinds.Decision.MARKED,
            ConflictPolicy.FAIL: kinds.Decision.NOT_MERGED}


class Merge3Error(KrmMergeError):
    """The three versions cannot be merged (e.g. a field changed its node kind)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message, field=path or None)
        self.message = message
        self.path = path


@dataclass
class Merge3Visitor:
    """The generic 3-way merge policy; collects the conflicts it decided."""

    policy: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS
    conflicts: list[Conflict] = field(default_factory=list)
    rules: FieldRules = field(default_factory=FieldRules)  # the package's rules, before ``policy``
    # An explicit null in all three versions stays (kyaml deletes it; ``krm-merge update`` keeps what nobody changed).
    keep_unchanged_nulls: bool = False
    rep: Representation = ROUND_TRIP  # the trees' nodes (the walker's too)

    def visit_map(self, nodes: Sources, schema: MergeSchema | None) -> Decision:
        """Explicit null deletes; gone locally and upstream stays gone; else merge into local's map."""
        l, o, u = nodes.local, nodes.origin, nodes.upstream
        if self.keep_unchanged_nulls and l is None and o is None and u is None:
            return KEEP  # (a field null in all three is walked as a map: it has no kind)
        if u is None or l is None or (l is MISSING and u is MISSING):
            return DELETE
        created = l is MISSING
        dest = self.rep.new_map() if created else l
        return descend(nodes.with_local(dest), drop_if_empty=_drop_emptied(created, not created and not l, o, u, self.rep))

    def visit_list(self, nodes: Sources, rule: ListRule, elements: MergeSchema | None) -> Decision:
        """Plain lists are atoms; associative ones are merged element by element into local's."""
        if rule.strategy is ListStrategy.PLAIN:
            return self._settle(scalars.decide_scalar(nodes.local, nodes.origin, nodes.upstream, self.rep.same), nodes)
        l, o, u = nodes.local, nodes.origin, nodes.upstream
        if (u is MISSING or u is None) and o is not MISSING and o is not None:
            return DELETE
        if u is MISSING and o is MISSING:
            return KEEP
        dest = self.rep.new_seq() if l is MISSING or l is None else l
        return descend(nodes.with_local(dest))

    def visit_scalar(self, nodes: Sources) -> Decision:
        """kyaml's scalar rule (:func:`.scalars.decide_scalar`)."""
        return self._settle(scalars.decide_scalar(nodes.local, nodes.origin, nodes.upstream, self.rep.same), nodes)

    def visit_key(self, values: Sources, comments: Sources) -> Decision:
        """Comments follow the scalar rule, whatever happens to the value: upstream's change wins unless local edited it.

        A comment local wrote or changed on a field (a ``$promotion``
        marker) stays when upstream changes the value; a scalar's line
        comment changed on both sides goes with upstream's value when
        upstream changed that too (kyaml's tables: a list's stays local's).
        """
        lv, ov, uv = values.local, values.origin, values.upstream
        cl, co, cu = comments.local, comments.origin, comments.upstream
        if uv is MISSING:
            return KEEP
        if lv is MISSING:
            take = True
        elif ov is MISSING:
            take = cl != cu and cl == (None, None)
        elif cl == co or cu == co:
            take = cl == co and co != cu
        else:
            take = cl != cu and not isinstance(uv, (dict, list)) and not self.rep.same(ov, uv)
        return UPSTREAM_COMMENT if take else KEEP

    def visit_kind_change(self, nodes: Sources) -> Decision:
        """A kind change on one side only is an ordinary change (kyaml errors on any)."""
        l, o, u = nodes.local, nodes.origin, nodes.upstream
        if self.rep.same(o, u):
            return KEEP
        if self.rep.same(l, o):
            return replace_with(u)
        first, other = _kinds(l, o, u)
        raise Merge3Error(f"wrong node kind: expected {first} but got {other}", format_path(nodes.path))

    def _settle(self, decision: scalars.Verdict, nodes: Sources) -> Decision:
        """Apply the conflict policy to a rule's outcome."""
        l, o, u = nodes.local, nodes.origin, nodes.upstream
        if decision.conflict:
            path = format_path(nodes.path)
            rule = self.rules.find(path) if self.rules else None
            policy = rule.policy if rule is not None else self.policy
            # mark: local's value stays; Merger writes the marker once the field is settled
            winner = _WINNERS.get(policy, kinds.Decision.UPSTREAM)
            record = scalars.conflict_record(path, l, o, u, winner, self.rep)
            if rule is not None:
                record = record._replace(rule=rule.text)
            self.conflicts.append(record)
            if winner in (kinds.Decision.LOCAL, kinds.Decision.MARKED):
                return KEEP
        if decision.take == "upstream":
            if u is MISSING or u is None:
                return DELETE
            return replace_with(scalars.restyled(u, l, self.rep))
        if decision.take == "delete":
            return DELETE
        return KEEP


def _kinds(*nodes: Any) -> tuple[str, str]:
    kinds = [kind_of(n).value for n in nodes if n is not MISSING and n is not None]
    first = kinds[0]
    return first, next(k for k in kinds[1:] if k != first)


def _drop_emptied(created: bool, was_empty: bool, o: Any, u: Any, rep: Representation) -> bool:
    """Whether a map the merge leaves empty disappears.

    kyaml keeps such maps as ``{}``; we drop them when local had deleted the
    map (and upstream did not change it) or upstream deleted it, so a locally
    deleted ``labels`` does not come back as ``labels: {}``.  A map that was
    already empty locally, or an empty map upstream added, stays.
    """
    if created:
        return rep.same(o, u)
    return u is MISSING and (not was_empty or (isinstance(o, dict) and not o))
