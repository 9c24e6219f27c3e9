"""``krm-merge resolve PKG --take local|upstream [SELECTION]...``: decide the conflicts an update left.

``--take local`` keeps the value in the file and removes the marker;
``--take upstream`` sets the field to upstream's value as the update
recorded it in the package's conflict ledger (:mod:`krm_merge.update.ledger`),
never to what the marker's text says, and removes the marker.  Only markers
an update recorded are conflicts: marker-shaped text no update recorded is
named in a warning and left alone.  With no selection every conflict is
decided; a selection is

* ``Kind/name`` or ``Kind/namespace/name`` (as ``conflicts`` prints it; the
  Kind in any case, as kubectl reads it), optionally ``:FIELD``, a field
  path as printed (``spec.containers[name=app].image``) or with list indices
  (``spec.containers[0].image``), selecting that field and those below it;
* ``FILE`` (package-relative, as ``conflicts`` prints it): every conflict in
  it, the diff3 regions of ``update --files merge`` included; ``FILE:LINE``
  the one at that line; ``FILE:FIELD`` a field of a plain YAML file (a Helm
  ``values.yaml``: ``values.yaml:replicaCount``).

Each marker is decided by the resolver of its kind
(:data:`krm_merge.update.conflicts.RESOLVERS`), all of one document in one
edit; the files and the ledger (without the entries decided; deleted with
the last) are written at once, or none: one transaction of
:mod:`krm_merge.txn`, under the package lock from the read to the write.

With ``--pull-request`` the conflicts are those of the pull request an
``update --conflicts mark --pull-request`` opened: the package is read as its
branch holds it, the decision is one commit on that branch, pushed with a
lease, and the pull request's body says what is left
(:func:`krm_merge.change.pipeline.run_on_branch`);
the user's files stay as they are (docs/pull-requests.md).  This module parses; the engine is
:mod:`krm_merge.update.resolution`, run by the change pipeline (:mod:`krm_merge.change.pipeline`).
"""

from __future__ import annotations

import argparse

from krm_merge.change.pipeline import Output, run_command
from krm_merge.change.settings import SettingsError, Target
from krm_merge.commands.base import command_parser
from krm_merge.commands.pull_request_options import UPDATE_BRANCH, add_options, settings_from_args
from krm_merge.outcomes import render
from krm_merge.outcomes.report import Report
from krm_merge.update.resolution import (
    PROG, TAKES, ResolvePlanner, ResolveRequest, package_relative, planned, selects, write)


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Decide conflicts an update left marked, and remove their markers.", EXAMPLES,
                          _arguments)


EXAMPLES = ("krm-merge resolve apps/podinfo --take upstream",
            "krm-merge resolve apps/podinfo --take local Deployment/app:spec.replicas",
            "krm-merge resolve apps/podinfo --take upstream --pull-request")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--take", choices=TAKES, required=True,
                   help="local: keep the value in the file; upstream: write upstream's value, as the update recorded it")
    p.add_argument("select", metavar="SELECTION", nargs="*",
                   help="Kind/[namespace/]name[:FIELD], FILE, FILE:LINE or FILE:FIELD (default: every conflict)")
    add_options(p, default_branch=UPDATE_BRANCH)


def main(argv: list[str]) -> int:
    """Entry point; 0 when no conflict is left, 3 when some are (not selected), 1 on error."""
    args = parser().parse_intermixed_args(argv)  # PKG, the selections and --take in any order
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        return render.usage_error(PROG, str(err))
    report = Report("resolve", args.package)
    report.subject = args.take
    target = None if settings is None else Target(settings, args.package, UPDATE_BRANCH, {})
    return run_command(ResolvePlanner(ResolveRequest(args.package, args.take, tuple(args.select))), report,
                       Output(args.results, None, args.quiet), target=target, on_branch=target is not None)


__all__ = ["main", "package_relative", "parser", "planned", "selects", "write"]
