"""``krm-merge recover PKG``: finish or roll back an interrupted write of a package, alone.

Every command that writes does the same first, under the package lock
(:mod:`krm_merge.txn`); this one does nothing else, for a script that wants
a package settled before it reads it with another tool (the commands that
only read never finish a write: they say to run this).  Only a write
krm-merge itself left in this checkout is finished: a transaction folder or
lock file that came with the package's files, or from another checkout or
user, is refused (exit 1) naming it, and left for the user to delete.
"""

from __future__ import annotations

import argparse
import os

from krm_merge import txn
from krm_merge.commands.base import command_parser
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import message
from krm_merge.outcomes.report import Report

PROG = "krm-merge recover"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Finish or roll back an interrupted write of a package (the lock is taken).",
                          EXAMPLES, _arguments)


EXAMPLES = ("krm-merge recover apps/podinfo",)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG", help="the package directory")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    report = Report("recover", args.package)
    if not os.path.isdir(args.package):
        report.add(message(f"{args.package} is not a directory", "error", args.package))
    else:
        report.guard(lambda: _recover(args.package, report))
    return render.finish(report, results_file=args.results, quiet=args.quiet)


def _recover(package: str, report: Report) -> None:
    """Take the lock (which finishes or rolls back an interrupted write) and say what it did."""
    with txn.PackageLock(package, PROG) as lock:
        report.extend(message(text, "warning", package) for text in lock.messages)
