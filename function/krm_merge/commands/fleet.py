"""``krm-merge update ROOT... --upstream REPO[/DIRECTORY] --ref REF``: every consumer of one package moved at once.

The fleet form of ``update`` (loaded by :func:`krm_merge.commands.update.main`
when ``--ref`` is given).  It selects the packages under the roots that track
the upstream (:mod:`krm_merge.fleet.select`), keeps this shard's share
(:mod:`krm_merge.fleet.shard`), resolves, fetches and extracts the versions
once for all of them (:mod:`krm_merge.fleet.versions`), and runs each
package's update — the single ``krm-merge update PATH@REF``, reused, with the
same options — in worker processes (:mod:`krm_merge.fleet.run`).  One line per
package and the totals go to stderr; ``--report`` writes the fleet report
(:mod:`krm_merge.fleet.report`), ``--results`` every package's results.  Exit
code: 0 all clean, 3 some package conflicted, 1 some failed; 2 for a usage error.

Where a later ``--pull-request`` plugs in: :func:`_update_one` returns each
package's entry once its transaction is done; a branch and pull request per
package (or, after :func:`krm_merge.fleet.run.run_all`, per repository) is made
from there.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import argparse

from krm_merge.commands import update
from krm_merge.commands.reporting import guarded, update_report, write_results
from krm_merge.errors import KrmMergeError
from krm_merge.fleet import report, shard
from krm_merge.fleet.run import default_jobs, run_all
from krm_merge.fleet.select import Package, select
from krm_merge.fleet.versions import Shared, prepare
from krm_merge.krm.results import Result, Results, emit
from krm_merge.txn import Interrupted
from krm_merge.update.plan import COMMAND as PROG
from krm_merge.update.plan import UpdatePlan, within
from krm_merge.upstream.git import GitCache

USAGE = 2


class Done(NamedTuple):
    """One package's update as it comes back from its worker: its entry, its dry-run diff, its results."""

    entry: report.Entry
    diff: str
    results: tuple[Result, ...]


class _UsageError(KrmMergeError):
    """A fleet option missing or out of place (exit code 2, as argparse's errors)."""


def parser() -> argparse.ArgumentParser:
    """The update command's parser: the fleet form is one of its forms."""
    return update.parser()


def main(argv: list[str]) -> int:
    """Entry point of the fleet form; returns the exit code."""
    args = update.parse_args(argv)
    try:
        _check_usage(args)
        which = shard.from_options(args.shard, args.shard_count, os.environ)
    except (_UsageError, shard.ShardError) as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
        return USAGE
    results = Results()
    code = guarded(PROG, lambda: _fleet(args, which, results), results)
    write_results(args.results, results)
    return code


def _check_usage(args: argparse.Namespace) -> None:
    if args.upstream is None:
        raise _UsageError("a fleet update (--ref) needs --upstream REPO[/DIRECTORY]: the upstream whose consumers move")
    if args.origin is not None:
        raise _UsageError("--origin is for one package's update from directories, not for a fleet update (--ref)")
    if args.report and args.report[0] not in ("json", "markdown"):
        raise _UsageError(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    if args.jobs is not None and args.jobs < 1:
        raise _UsageError(f"--jobs must be at least 1, got {args.jobs}")


def _fleet(args: argparse.Namespace, which: shard.Shard | None, results: Results) -> int:
    packages = select([args.package, *args.roots], args.upstream, args.match)
    mine = [p for p in packages if which is None or which.takes(p.key)]
    if not packages:
        _say(results, Result(f"no package under {', '.join([args.package, *args.roots])} tracks {args.upstream}", "warning"))
    jobs = args.jobs or default_jobs()
    done: dict[int, Done] = {}

    def arrived(index: int, one: Done) -> None:
        done[index] = one
        sys.stderr.write(f"{PROG}: {report.line(one.entry)}\n")

    stopped: Interrupted | None = None
    cache = GitCache()
    with tempfile.TemporaryDirectory(prefix="krm-merge-fleet-") as tmp:
        shared = prepare(mine, args.ref, cache, Path(tmp), jobs)
        try:
            run_all(mine, lambda package: _update_one(args, shared, package), jobs=jobs,
                    lost=lambda package, why: _lost(args, shared, package, why), on_result=arrived)
        except Interrupted as err:
            stopped = err
    finished = [done[i] for i in sorted(done)]
    data = report.build([d.entry for d in finished], upstream=args.upstream, ref=args.ref, dry_run=args.dry_run,
                        selected=len(packages), shard=tuple(which) if which is not None else None)
    for one in finished:
        results.extend(one.results)
    _finish(args, data, finished)
    if stopped is not None:
        return 128 + stopped.signo
    return int(data["exitCode"])


def _finish(args: argparse.Namespace, data: dict[str, Any], finished: list[Done]) -> None:
    """The totals line, the dry run's diffs (unless the report goes to stdout) and the report."""
    sys.stderr.write(f"{PROG}: {report.totals_line(data)}\n")
    to_stdout = bool(args.report) and args.report[1] == "-"
    if args.dry_run and not to_stdout:
        for one in finished:
            if one.diff:
                sys.stdout.write(f"==> {one.entry.path} <==\n{one.diff}")
    if args.report:
        report.write(args.report[0], args.report[1], data, sys.stdout)


def _say(results: Results, result: Result) -> None:
    results.append(result)
    emit(PROG, [result])


def _update_one(args: argparse.Namespace, shared: Shared, package: Package) -> Done:
    """In a worker: ``krm-merge update PATH@REF`` with the fleet's options, its output kept, not printed."""
    one = SimpleNamespace(**{**vars(args), "package": package.path, "roots": (), "upstream": None,
                             "report": None, "results": None})
    results = Results()
    seen: dict[str, Any] = {}

    def keep(plan: UpdatePlan, code: int) -> None:
        seen.update(changed=bool(plan.writes), refused=update.refused(plan, args.conflicts),
                    report=update_report(plan, policy=args.conflicts, dry_run=args.dry_run, code=code))

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):  # the fleet prints one line per package instead
        code = update.update_package(one, results, on_plan=keep, versions=shared.versions())
    status = report.status_of(code, changed=seen.get("changed", False), refused=seen.get("refused", 0))
    error = "; ".join(r.message for r in results if r.severity == "error") if status == "failed" else None
    entry = report.Entry(package.path, status, code, _before(package), _after(args, shared, package), error,
                         seen.get("report"))
    return Done(entry, out.getvalue() if args.dry_run else "", tuple(within(package.path, r) for r in results))


def _lost(args: argparse.Namespace, shared: Shared, package: Package, why: str) -> Done:
    """The result of a package whose worker ended without one."""
    entry = report.Entry(package.path, "failed", 1, _before(package), _after(args, shared, package), why, None)
    return Done(entry, "", (within(package.path, Result(why, "error")),))


def _before(package: Package) -> dict[str, str] | None:
    lock = package.lock
    return {"ref": lock.ref, "commit": lock.commit} if lock is not None else None


def _after(args: argparse.Namespace, shared: Shared, package: Package) -> dict[str, str] | None:
    found = shared.target(package, args.ref)
    return {"ref": found[0], "commit": found[1]} if found is not None else None


__all__ = ["main", "parser"]
