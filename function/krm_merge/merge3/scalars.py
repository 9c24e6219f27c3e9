"""Per-node rules for scalars and plain (non-associative) lists.

Both follow kyaml's merge3 rules (kpt-merge note §2.4); they only *decide*
(keep local, take upstream, delete) and flag conflicts;
:class:`~.visitor.Merge3Visitor` settles conflicts and the walker applies
the decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from krm_merge.outcomes.kinds import Decision

from .conflicts import Conflict
from .nodes import MISSING, ROUND_TRIP

if TYPE_CHECKING:
    from .visit import Representation

Take = Literal["local", "upstream", "delete"]


@dataclass(frozen=True)
class Verdict:
    """Outcome of a rule: what to take, and whether both sides changed the value."""

    take: Take
    conflict: bool = False


KEEP_LOCAL = Verdict("local")
TAKE_UPSTREAM = Verdict("upstream")
DELETE = Verdict("delete")


def decide_scalar(l: Any, o: Any, u: Any, same: Callable[[Any, Any], bool] = ROUND_TRIP.same) -> Verdict:
    """kyaml's scalar rule.

    1. explicit null locally or upstream deletes the field;
    2. present in exactly one of origin/upstream: upstream decides (added or
       deleted upstream) — a local change of a field deleted upstream, or a
       different local value of a field added on both sides, is a conflict;
    3. in neither: local's;
    4/5. upstream changed it: upstream's (a conflict if local changed it too,
       differently); 6. otherwise local's.

    ``same``: the representation's equality as data.
    """
    if u is None or l is None:
        return DELETE
    if (o is MISSING) != (u is MISSING):
        both_changed = l is not MISSING and not same(l, o) and not same(l, u)
        return Verdict("upstream", both_changed)
    if o is MISSING:
        return KEEP_LOCAL
    if same(o, u):
        return KEEP_LOCAL
    both_changed = l is not MISSING and not same(l, o) and not same(l, u)
    return Verdict("upstream", both_changed)


def restyled(u: Any, l: Any, rep: Representation = ROUND_TRIP) -> Any:
    """Upstream's value, written in local's quoting style when it replaces one."""
    if l is MISSING or l is None:
        return u
    return rep.restyle(u, l)


def conflict_record(path: str, l: Any, o: Any, u: Any, winner: Decision, rep: Representation = ROUND_TRIP) -> Conflict:
    """Conflict entry with short renderings of the three values."""
    return Conflict(path=path, origin=rep.render(o), local=rep.render(l), upstream=rep.render(u), winner=winner)
