"""``krm-merge recover PKG``: finish or roll back an interrupted write of a package, alone.

Every other command does the same first, under the package lock
(:mod:`krm_merge.txn`); this one does nothing else, for a script that wants
a package settled before it reads it with another tool.
"""

from __future__ import annotations

import argparse
import os
import sys

from krm_merge import txn
from krm_merge.commands.reporting import write_results
from krm_merge.errors import KrmMergeError
from krm_merge.krm.results import File, Results, result_of

PROG = "krm-merge recover"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog=PROG, description="Finish or roll back an interrupted write of a package (the lock is taken).")
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--results", metavar="FILE", help="also write the results as YAML to FILE (kpt's format)")
    return p


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    results = Results()
    if not os.path.isdir(args.package):
        results.error(f"{args.package} is not a directory", file=File(args.package))
    else:
        try:
            with txn.PackageLock(args.package, PROG) as lock:
                for message in lock.messages:
                    results.warning(message, file=File(args.package))
        except KrmMergeError as err:
            results.append(result_of(err))
    for result in results:
        sys.stderr.write(f"{PROG}: {result.display()}\n")
    write_results(args.results, results)
    if not results:
        sys.stdout.write(f"{args.package}: no interrupted write to recover\n")
    return results.exit_code()
