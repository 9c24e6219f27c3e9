"""``krm-merge recover PKG``: finish or roll back an interrupted write of a package, alone.

Every other command does the same first, under the package lock
(:mod:`krm_merge.txn`); this one does nothing else, for a script that wants
a package settled before it reads it with another tool.
"""

from __future__ import annotations

import argparse
import os

from krm_merge import txn
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import message
from krm_merge.outcomes.report import Report

PROG = "krm-merge recover"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog=PROG, description="Finish or roll back an interrupted write of a package (the lock is taken).")
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--results", metavar="FILE", help=render.RESULTS_HELP)
    p.add_argument("--quiet", "-q", action="store_true", help=render.QUIET_HELP)
    return p


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
