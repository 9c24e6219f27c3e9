"""What the package merge did to each resource and each conflict, as report entries.

The outcomes are decided where the merge decides them
(``PackageMergeResult.outcomes``); this module turns them into the entries
the update's summary line and ``--report`` arrange
(:mod:`krm_merge.commands.outcomes`).
"""

from __future__ import annotations

from typing import Any, Callable

Entry = dict[str, Any]

DECISIONS = {"upstream": "upstream's value", "local": "local's value", "marked": "local's value, marked",
             "none": "not merged (conflicts: fail)"}
"""How a conflict was decided, by ``Conflict.winner``."""


def entries(result: Any, rel_path: Callable[[Any], str]) -> list[Entry]:
    """One entry per resource of a package merge (``kind: resource``), then one per conflict (``kind: conflict``)."""
    out: list[Entry] = []
    for obj, outcome, reason in result.outcomes:
        out.append({"kind": "resource", "resource": obj.ref().display(), "file": rel_path(obj),
                    "outcome": outcome, "reason": reason})
    for obj, conflict in result.conflicts:
        out.append({"kind": "conflict", "resource": obj.ref().display(), "file": rel_path(obj), "field": conflict.path,
                    "local": conflict.local, "upstream": conflict.upstream, "origin": conflict.origin,
                    "decision": DECISIONS.get(conflict.winner, conflict.winner)})
        if conflict.rule:  # decided by a rule in the package, not by --conflicts
            out[-1]["reason"] = f"a rule: {conflict.rule}"
    return out


__all__ = ["DECISIONS", "Entry", "entries"]
