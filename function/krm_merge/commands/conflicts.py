"""``krm-merge conflicts PKG``: what an update left for a person to decide.

A conflict left in a package is a marker in one of its files that the update which wrote it recorded in the
package's conflict ledger; CI can tell a resolved package from an unresolved one by this command's exit code
(0: none left, 3: some left, 1: the package could not be read).  The marker engine (finders, resolvers, the
ledger's binding) is :mod:`krm_merge.update.conflicts`; this module parses and calls it.
"""

from __future__ import annotations

import argparse

from krm_merge.commands.base import command_parser
from krm_merge.outcomes import render
from krm_merge.outcomes.report import CONFLICTS_LEFT, Report
from krm_merge.outcomes.words import UNRECORDED
from krm_merge.update.conflicts import (
    FINDERS, RESOLVERS, Found, Marker, conflicts_left, find_all, left, register, scan, scan_reporting)

PROG = "krm-merge conflicts"


# --- the command ----------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "List the conflicts an update left marked in a package; exit 3 while any is left.",
                          EXAMPLES, _arguments)


EXAMPLES = ("krm-merge conflicts apps/podinfo", "krm-merge conflicts apps/podinfo --output json")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--output", choices=("text", "json"), default="text", help="one line per conflict, or a JSON list")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code (0 none left, 3 some left, 1 error)."""
    args = parser().parse_args(argv)
    report = Report("conflicts", args.package)
    markers = [m.outcome() for m in report.guard(lambda: conflicts_left(args.package, report)) or []]
    listing = render.marker_list(markers) if args.output == "json" else render.marker_lines(markers, args.package)
    # The list is the command's document (stdout); a package that could not be read lists nothing.
    return render.finish(report, results_file=args.results, quiet=args.quiet, document=[listing] if report.exit_code != 1 else [])


__all__ = ["CONFLICTS_LEFT", "FINDERS", "RESOLVERS", "UNRECORDED", "Found", "Marker", "find_all", "left", "main",
           "parser", "register", "scan", "scan_reporting"]
