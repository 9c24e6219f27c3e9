"""``krm-merge update ROOT... --upstream REPO[/DIRECTORY] --ref REF``: every consumer of one package moved at once.

The fleet form of ``update`` (loaded by :func:`krm_merge.commands.update.main`
when ``--ref`` is given).  It selects the packages under the roots that track
the upstream (:mod:`krm_merge.fleet.select`), keeps this shard's share
(:mod:`krm_merge.fleet.shard`), resolves, fetches and extracts the versions
once for all of them (:mod:`krm_merge.fleet.versions`), and runs each
package's update — the single ``krm-merge update PATH@REF``, reused, with the
same options — in worker processes (:mod:`krm_merge.fleet.run`).  Each
package's update is one outcome of the run's report (:mod:`krm_merge.fleet.report`),
its line said on stderr as that package ends, the totals last; ``--report``
writes the fleet report (the package's own update report in each entry),
``--results`` a result per package.  Exit code: 0 all clean, 3 some package
conflicted or lost a local edit to upstream's value, 1 some failed, 4 no package selected; 2 for a usage error.

With ``--pull-request`` (:mod:`krm_merge.commands.fleet_pull_request`) each
consumers' repository (``--pull-request-per package``: each package) gets one
branch and pull request: checked before the workers start, committed, pushed
and opened by this process once they are done.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

from krm_merge.commands import update
from krm_merge.change.settings import Settings, SettingsError
from krm_merge.commands.fleet_pull_request import FleetPullRequests, Written
from krm_merge.commands.pull_request_options import settings_from_args
from krm_merge.errors import KrmMergeError
from krm_merge.fleet import shard
from krm_merge.fleet.package import after, before, update_one
from krm_merge.fleet.run import default_jobs, run_all
from krm_merge.fleet.select import Package, nothing_selected, select
from krm_merge.fleet.versions import Shared, prepare
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import FleetScope, PackageStatus, PackageUpdate, message
from krm_merge.outcomes.report import Report, State
from krm_merge.records import Record
from krm_merge.txn import Interrupted
from krm_merge.update.plan import UpdatePlan
from krm_merge.update.result import UpdateRequest
from krm_merge.upstream.git import GitCache

PROG = "krm-merge update"
USAGE = 2


class Done(Record):
    """One package's update as it comes back from its worker: its outcome, its dry-run diff, with
    ``--pull-request`` what goes into its pull request, and what its package lock said of an interrupted
    write it found there (finished or rolled back first, as a single update does; a dry run only says it)."""

    outcome: PackageUpdate
    diff: str
    written: Written = Written(None, None)
    recovered: tuple[str, ...] = ()


class _UsageError(KrmMergeError):
    """A fleet option missing or out of place (exit code 2, as argparse's errors)."""


def parser() -> argparse.ArgumentParser:
    """The update command's parser: the fleet form is one of its forms."""
    return update.parser()


def main(argv: list[str]) -> int:
    """Entry point of the fleet form; returns the exit code."""
    return run(update.parse_args(argv))


def run(args: argparse.Namespace | SimpleNamespace) -> int:
    """The fleet form, its command line read by :func:`krm_merge.commands.update.parse_args`; the exit code."""
    try:
        _check_usage(args)
        settings = settings_from_args(args)
        which = shard.from_options(args.shard, args.shard_count, os.environ)
    except (_UsageError, SettingsError, shard.ShardError) as err:
        return render.usage_error(PROG, str(err))
    report = Report("update", ", ".join([args.package, *args.roots]))
    refused = render.refuse_destinations(report, args.results, args.report, quiet=args.quiet)
    if refused is not None:  # before the first package is fetched or written
        return refused
    diffs, stopped = report.guard(lambda: _fleet(args, which, report, settings)) or ([], 0)
    code = render.finish(report, results_file=args.results, report_to=args.report, document=diffs, quiet=args.quiet)
    return 128 + stopped if stopped else code


def _check_usage(args: argparse.Namespace | SimpleNamespace) -> None:
    if args.upstream is None:
        raise _UsageError("a fleet update (--ref) needs --upstream REPO[/DIRECTORY]: the upstream whose consumers move")
    if args.origin is not None:
        raise _UsageError("--origin is for one package's update from directories, not for a fleet update (--ref)")
    if args.report and args.report[0] not in render.FORMATS:
        raise _UsageError(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    if args.pull_request_per is not None and not args.pull_request:
        raise _UsageError("--pull-request-per goes with --pull-request")


def _fleet(args: argparse.Namespace | SimpleNamespace, which: shard.Shard | None, report: Report,
           settings: Settings | None) -> tuple[list[str], int]:
    """Select, take this shard's share, update each package in a worker: each package's outcome joins ``report``
    (its line said as it ends); with ``settings`` (``--pull-request``), the pull requests around the workers.
    Returns the dry run's diffs and the signal that stopped the run (0: none)."""
    roots = [args.package, *args.roots]
    packages = select(roots, args.upstream, args.match)
    mine = [p for p in packages if which is None or which.takes(p.key)]
    index, count = tuple(which) if which is not None else (0, 1)
    report.fleet = FleetScope(args.upstream, args.ref, len(packages), count, (index,))
    report.state = State.DRY_RUN if args.dry_run else State.WRITTEN  # each package: its own transaction
    if not packages:  # an error of its own exit code (outcomes.report.NOTHING_SELECTED): a job that did nothing
        report.nothing_selected = message(nothing_selected(roots, args.upstream, args.match), "error")
        report.add(report.nothing_selected)
    requests = None if settings is None else FleetPullRequests(report, settings, args.pull_request_per,
                                                                   args.upstream, args.ref)
    refused = requests.prepare(mine, dry_run=args.dry_run) if requests is not None else {}
    render.say_now(report, quiet=args.quiet)
    jobs = args.jobs or default_jobs()
    done: dict[int, Done] = {}

    def arrived(index: int, one: Done) -> None:
        done[index] = one
        # said in the fleet's own output, before the package's line: the update wrote (or read) after it
        report.extend(message(f"{one.outcome.path}: {text}", "warning", one.outcome.path) for text in one.recovered)
        report.add(one.outcome)
        render.say_now(report, quiet=args.quiet)  # a package's line as its update ends

    # The fleet's options, read once; each package's request is this one with its path (krm_merge.fleet.package).
    template = update.request_from(args, package="", ref=args.ref)
    stopped = 0
    with tempfile.TemporaryDirectory(prefix="krm-merge-fleet-") as tmp:
        shared = prepare(mine, args.ref, GitCache(), Path(tmp), jobs)
        try:
            run_all(mine, lambda package: _update_one(args, template, shared, package, requests, refused), jobs=jobs,
                    lost=lambda package, why: _lost(args, shared, package, why), on_result=arrived)
        except Interrupted as err:
            stopped = err.signo
    # The report lists the packages in selection order, whatever order their updates ended in.
    finished = [done[i] for i in sorted(done)]
    report.outcomes[:] = [o for o in report.outcomes if not isinstance(o, PackageUpdate)] + [d.outcome for d in finished]
    if requests is not None and not stopped:  # stopped: no commit, no push (the next run puts them up)
        requests.finish({d.outcome.path: (d.outcome, d.written) for d in finished}, dry_run=args.dry_run)
    if requests is not None:
        requests.account()
    return [f"==> {d.outcome.path} <==\n{d.diff}" for d in finished if d.diff], stopped


def _update_one(args: argparse.Namespace | SimpleNamespace, template: UpdateRequest, shared: Shared,
                package: Package, requests: FleetPullRequests | None, refused: dict[str, str]) -> Done:
    """In a worker: the package's update (:func:`krm_merge.fleet.package.update_one`) with the fleet's options;
    its report kept in the package's entry.

    With ``requests`` (``--pull-request``) the planned files and the package's words come back for its pull
    request; a package whose pull request was ``refused`` before the run is not updated (its entry: failed)."""
    if package.path in refused:
        return _lost(args, shared, package, refused[package.path])

    def written(report: Report, plan: UpdatePlan | None) -> Written:
        if requests is not None and plan is not None and report.state in (State.WRITTEN, State.DRY_RUN):
            return Written(tuple((w.path, w.data) for w in plan.changes.writes), requests.words(package.path, report))
        return Written(None, None)

    outcome, diff, kept, recovered = update_one(template, shared, package, written)
    return Done(outcome, diff, kept, recovered)


def _lost(args: argparse.Namespace | SimpleNamespace, shared: Shared, package: Package, why: str) -> Done:
    """The result of a package whose worker ended without one."""
    return Done(PackageUpdate(package.path, PackageStatus.FAILED, 1, before(package), after(shared, package, args.ref),
                              why), "")


__all__ = ["main", "parser", "run"]
