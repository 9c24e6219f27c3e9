"""A fleet update's run: select, take this shard's share, update each package in a worker, the pull requests.

The command (:mod:`krm_merge.commands.fleet`) reads the options once into a :class:`FleetRequest` (the
fleet's :class:`~krm_merge.update.result.UpdateRequest` among them) and calls :func:`update_fleet`; each
package's update is the change pipeline a single update runs (:func:`krm_merge.fleet.package.update_one`),
in worker processes (:mod:`krm_merge.fleet.run`), its outcome joining the fleet's report as it ends.  With
``--pull-request`` (:mod:`krm_merge.fleet.pull_requests`) each consumers' repository (or each package) gets
one branch and pull request: checked before the workers start, committed, pushed and opened by this process
once they are done.  Nothing here calls back into the command.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from krm_merge.change.pipeline import Output
from krm_merge.change.settings import Settings
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import FleetScope, PackageStatus, PackageUpdate, message
from krm_merge.outcomes.report import Report, State
from krm_merge.records import Record
from krm_merge.txn import Interrupted
from krm_merge.update.plan import UpdatePlan
from krm_merge.update.result import UpdateRequest
from krm_merge.upstream.git import GitCache

from . import shard
from .package import after, before, update_one
from .pull_requests import FleetPullRequests, Written
from .run import default_jobs, run_all
from .select import Package, nothing_selected, select
from .versions import Shared, prepare


class FleetRequest(Record):
    """A fleet update as the command line asks it, read once: the roots, the upstream and ``--ref``, the
    selection (``--match``, this shard), ``--jobs``, the request every package's update is made from
    (``template``: its ``package`` is each package's path), ``--pull-request``'s settings and ``per``."""

    roots: tuple[str, ...]
    upstream: str
    ref: str
    template: UpdateRequest
    match: str | None = None
    shard: shard.Shard | None = None
    jobs: int | None = None
    settings: Settings | None = None
    per: str | None = None
    quiet: bool = False  # the packages' lines as they end (the render's, from run_fleet's Output) are said or not


class Done(Record):
    """One package's update as it comes back from its worker: its outcome, its dry-run diff, with
    ``--pull-request`` what goes into its pull request, and what its package lock said of an interrupted
    write it found there (finished or rolled back first, as a single update does; a dry run only says it)."""

    outcome: PackageUpdate
    diff: str
    written: Written = Written(None, None)
    recovered: tuple[str, ...] = ()


def run_fleet(request: FleetRequest, output: Output) -> int:
    """A fleet update's whole run: the destinations refused before the first package is fetched or written,
    :func:`update_fleet`, then the render (a line per package as it ends, the totals, ``--results``,
    ``--report``).  The exit code: 128 + the signal that stopped the run, else the report's."""
    report = Report("update", ", ".join(request.roots))
    refused = render.refuse_destinations(report, output.results, output.report, quiet=output.quiet)
    if refused is not None:
        return refused
    diffs, stopped = report.guard(lambda: update_fleet(request, report)) or ([], 0)
    code = render.finish(report, results_file=output.results, report_to=output.report, document=diffs,
                         quiet=output.quiet)
    return 128 + stopped if stopped else code


def update_fleet(request: FleetRequest, report: Report) -> tuple[list[str], int]:
    """Select, take this shard's share, update each package in a worker: each package's outcome joins ``report``
    (its line said as it ends); with ``--pull-request``, the pull requests around the workers.  Returns the dry
    run's diffs and the signal that stopped the run (0: none)."""
    dry_run = request.template.dry_run
    packages = select(list(request.roots), request.upstream, request.match)
    which = request.shard
    mine = [p for p in packages if which is None or which.takes(p.key)]
    index, count = tuple(which) if which is not None else (0, 1)
    report.fleet = FleetScope(request.upstream, request.ref, len(packages), count, (index,))
    report.state = State.DRY_RUN if dry_run else State.WRITTEN  # each package: its own transaction
    if not packages:  # an error of its own exit code (outcomes.report.NOTHING_SELECTED): a job that did nothing
        report.nothing_selected = message(nothing_selected(list(request.roots), request.upstream, request.match),
                                          "error")
        report.add(report.nothing_selected)
    requests = None if request.settings is None else FleetPullRequests(report, request.settings, request.per,
                                                                           request.upstream, request.ref)
    refused = requests.prepare(mine, dry_run=dry_run) if requests is not None else {}
    render.say_now(report, quiet=request.quiet)
    jobs = request.jobs or default_jobs()
    done: dict[int, Done] = {}

    def arrived(index: int, one: Done) -> None:
        done[index] = one
        # said in the fleet's own output, before the package's line: the update wrote (or read) after it
        report.extend(message(f"{one.outcome.path}: {text}", "warning", one.outcome.path) for text in one.recovered)
        report.add(one.outcome)
        render.say_now(report, quiet=request.quiet)  # a package's line as its update ends

    stopped = 0
    with tempfile.TemporaryDirectory(prefix="krm-merge-fleet-") as tmp:
        shared = prepare(mine, request.ref, GitCache(), Path(tmp), jobs)
        try:
            run_all(mine, lambda package: _update_one(request, shared, package, requests, refused), jobs=jobs,
                    lost=lambda package, why: _lost(request, shared, package, why), on_result=arrived)
        except Interrupted as err:
            stopped = err.signo
    # The report lists the packages in selection order, whatever order their updates ended in.
    finished = [done[i] for i in sorted(done)]
    report.outcomes[:] = [o for o in report.outcomes if not isinstance(o, PackageUpdate)] + [d.outcome for d in finished]
    if requests is not None and not stopped:  # stopped: no commit, no push (the next run puts them up)
        requests.finish({d.outcome.path: (d.outcome, d.written) for d in finished}, dry_run=dry_run)
    if requests is not None:
        requests.account()
    return [f"==> {d.outcome.path} <==\n{d.diff}" for d in finished if d.diff], stopped


def _update_one(request: FleetRequest, shared: Shared, package: Package, requests: FleetPullRequests | None,
                refused: dict[str, str]) -> Done:
    """In a worker: the package's update (:func:`krm_merge.fleet.package.update_one`) with the fleet's options;
    its report kept in the package's entry.

    With ``requests`` (``--pull-request``) the planned files and the package's words come back for its pull
    request; a package whose pull request was ``refused`` before the run is not updated (its entry: failed)."""
    if package.path in refused:
        return _lost(request, shared, package, refused[package.path])

    def written(report: Report, plan: UpdatePlan | None) -> Written:
        if requests is not None and plan is not None and report.state in (State.WRITTEN, State.DRY_RUN):
            return Written(tuple((w.path, w.data) for w in plan.changes.writes), requests.words(package.path, report))
        return Written(None, None)

    outcome, diff, kept, recovered = update_one(request.template, shared, package, written)
    return Done(outcome, diff, kept, recovered)


def _lost(request: FleetRequest, shared: Shared, package: Package, why: str) -> Done:
    """The result of a package whose worker ended without one."""
    return Done(PackageUpdate(package.path, PackageStatus.FAILED, 1, before(package),
                              after(shared, package, request.ref), why), "")


__all__ = ["Done", "FleetRequest", "run_fleet", "update_fleet"]
