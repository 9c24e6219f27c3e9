"""Turning a package merge's conflicts and warnings into results."""

from __future__ import annotations

from krm_merge.krm.results import Results

from krm_merge.merge3.conflicts import ConflictPolicy
from .result import PackageMergeResult


def report(results: Results, merged: PackageMergeResult, policy: ConflictPolicy) -> None:
    """One result per conflict (resource, field, local and upstream values, winner) and warning.

    Under ``conflicts: fail`` conflicts are errors; a conflict upstream won is
    a warning (local's change was lost); one local won is informational.
    """
    for obj, conflict in merged.conflicts:
        kwargs = {"field": conflict.path, "current": conflict.local, "proposed": conflict.upstream}
        if policy is ConflictPolicy.FAIL or conflict.winner == "none":  # a rule may ask to fail for one field
            results.error(f"conflict: {conflict.describe()}", obj, **kwargs)
        elif conflict.winner in ("upstream", "marked"):  # local's change lost, or left to a person
            results.warning(f"conflict: {conflict.describe()}", obj, **kwargs)
        else:
            results.info(f"conflict: {conflict.describe()}", obj, **kwargs)
    for obj, message in merged.warnings:
        results.warning(message, obj)
