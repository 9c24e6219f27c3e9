"""One package of a fleet update, in its worker: the single update's pipeline, given a request of its own.

The fleet's options arrive once, as an :class:`~krm_merge.update.result.UpdateRequest` (the command line
read by the command); each selected package's request is that one with the package's path, and its update
is the change pipeline (:func:`krm_merge.change.pipeline.run`) with the update's planner
(:class:`krm_merge.update.git.UpdatePlanner`), the very pipeline ``krm-merge update PKG@REF`` runs (lock,
plan from the fleet's shared versions, write), its own report kept in the package's entry.  Its pull request
is the fleet's, made by the main process around the workers (:mod:`krm_merge.fleet.pull_requests`).
"""

from __future__ import annotations

from typing import Callable, TypeVar

from krm_merge.change.pipeline import run
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import PackageStatus, PackageUpdate, Version
from krm_merge.outcomes.report import Report, conflicts_found, files_changed, not_merged
from krm_merge.update.git import UpdatePlanner
from krm_merge.update.plan import UpdatePlan
from krm_merge.update.result import UpdateRequest

from .report import local_edits, status_of
from .select import Package
from .versions import Shared

T = TypeVar("T")


def update_one(template: UpdateRequest, shared: Shared, package: Package,
               then: Callable[[Report, UpdatePlan | None], T]) -> tuple[PackageUpdate, str, T, tuple[str, ...]]:
    """``krm-merge update PATH@REF`` of one selected package with the fleet's options (``template``, whose
    ``ref`` is the fleet's): its outcome, a dry run's diff, what ``then(report, plan)`` made of the package's
    report and plan before the outcome was taken from them (a pull request's files and words), and what its
    package lock said of an interrupted write it found."""
    request = template._replace(package=package.path)
    report = Report("update", package.path)
    recovered: list[str] = []
    planner = UpdatePlanner(request, versions=shared.versions(), recovered=recovered)
    diff = report.guard(lambda: run(planner, report, dry_run=request.dry_run))
    plan = planner.planned.plan if planner.planned is not None and diff is not None else None
    kept = then(report, plan)
    code = report.exit_code
    status = status_of(code, changed=plan is not None and bool(plan.writes), refused=not_merged(report.outcomes))
    errors = "; ".join(r.message for r in render.results(report) if r.severity == "error")
    outcome = PackageUpdate(package.path, status, code, before(package), after(shared, package, template.ref),
                            errors if status is PackageStatus.FAILED else "", files_changed(report.outcomes),
                            conflicts_found(report.outcomes), render.report_document(report),
                            local_edits(report.outcomes))
    return outcome, "".join(diff) if request.dry_run and diff is not None else "", kept, tuple(recovered)


def before(package: Package) -> Version | None:
    """The version a package's lock says it is at (None: no lock)."""
    lock = package.lock
    return Version(lock.ref, lock.commit) if lock is not None else None


def after(shared: Shared, package: Package, ref: str | None) -> Version | None:
    """The version a package moves to (None: its upstream's ref was not resolved)."""
    found = shared.target(package, ref or "")
    return Version(*found) if found is not None else None


__all__ = ["after", "before", "update_one"]
