"""Turning a package merge's conflicts and warnings into results."""

from __future__ import annotations

from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import CONFLICT, Result, Results, make_result
from krm_merge.merge3.conflicts import Conflict, ConflictPolicy

from .result import PackageMergeResult


def report(results: Results, merged: PackageMergeResult, policy: ConflictPolicy) -> None:
    """One result per conflict (resource, field, local and upstream values, winner) and warning.

    Under ``conflicts: fail`` conflicts are errors; a conflict upstream won is
    a warning (local's change was lost); one local won is informational.
    """
    for obj, conflict in merged.conflicts:
        results.append(conflict_result(obj, conflict, policy, f"{CONFLICT}{conflict.describe()}"))
    for obj, message in merged.warnings:
        results.warning(message, obj)


def conflict_result(obj: KubeObject, conflict: Conflict, policy: ConflictPolicy, message: str) -> Result:
    """The result of one conflict: its resource, field, local and upstream values; its severity by who won."""
    return make_result(conflict_severity(conflict, policy), message, obj, field=conflict.path,
                       current=conflict.local, proposed=conflict.upstream)


def conflict_severity(conflict: Conflict, policy: ConflictPolicy) -> str:
    """An error when the field is not merged, a warning when local's change is lost or left to a person, else info."""
    if policy is ConflictPolicy.FAIL or conflict.winner == "none":  # a rule may ask to fail for one field
        return "error"
    if conflict.winner in ("upstream", "marked"):
        return "warning"
    return "info"
