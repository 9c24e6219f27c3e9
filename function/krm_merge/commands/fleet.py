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

With ``--pull-request`` (:mod:`krm_merge.fleet.pull_requests`) each
consumers' repository (``--pull-request-per package``: each package) gets one
branch and pull request: checked before the workers start, committed, pushed
and opened by this process once they are done.  This module parses: the run is
:func:`krm_merge.fleet.update.update_fleet`, given a :class:`~krm_merge.fleet.update.FleetRequest`.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from krm_merge.update.result import UpdateRequest

from krm_merge.change.pipeline import Output
from krm_merge.change.settings import SettingsError
from krm_merge.commands.pull_request_options import settings_from_args
from krm_merge.errors import KrmMergeError
from krm_merge.fleet import shard
from krm_merge.fleet.update import FleetRequest, run_fleet
from krm_merge.outcomes import render

PROG = "krm-merge update"
USAGE = 2


class _UsageError(KrmMergeError):
    """A fleet option missing or out of place (exit code 2, as argparse's errors)."""


def run(args: argparse.Namespace | SimpleNamespace, each: UpdateRequest) -> int:
    """The fleet form, its command line read by :func:`krm_merge.commands.update.parse_args` (``each``: the
    update every selected package gets, parsed there once); the exit code.

    Given the request rather than importing the update command for it: a command never loads another.
    """
    try:
        _check_usage(args)
        settings = settings_from_args(args)
        which = shard.from_options(args.shard, args.shard_count, os.environ)
    except (_UsageError, SettingsError, shard.ShardError) as err:
        return render.usage_error(PROG, str(err))
    request = FleetRequest((args.package, *args.roots), args.upstream, args.ref,
                           each, args.match, which, args.jobs,
                           settings, args.pull_request_per, args.quiet)
    return run_fleet(request, Output(args.results, args.report, args.quiet))


def _check_usage(args: argparse.Namespace | SimpleNamespace) -> None:
    if args.upstream is None:
        raise _UsageError("a fleet update (--ref) needs --upstream REPO[/DIRECTORY]: the upstream whose consumers move")
    if args.origin is not None:
        raise _UsageError("--origin is for one package's update from directories, not for a fleet update (--ref)")
    if args.report and args.report[0] not in render.FORMATS:
        raise _UsageError(f"--report FORMAT must be json or markdown, got {args.report[0]!r}")
    if args.pull_request_per is not None and not args.pull_request:
        raise _UsageError("--pull-request-per goes with --pull-request")


__all__ = ["run"]
