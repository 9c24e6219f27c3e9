"""``krm-merge recover PKG``: finish or roll back an interrupted write of a package, alone.

Every other command does the same first, under the package lock
(:mod:`krm_merge.txn`); this one does nothing else, for a script that wants
a package settled before it reads it with another tool.
"""

from __future__ import annotations

import argparse
import os
import sys

from krm_merge.errors import KrmMergeError

PROG = "krm-merge recover"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog=PROG, description="Finish or roll back an interrupted write of a package (the lock is taken).")
    p.add_argument("package", metavar="PKG", help="the package directory")
    return p


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    from krm_merge import txn

    args = parser().parse_args(argv)
    if not os.path.isdir(args.package):
        sys.stderr.write(f"{PROG}: error: {args.package} is not a directory\n")
        return 1
    try:
        with txn.PackageLock(args.package, PROG) as lock:
            messages = lock.messages
    except KrmMergeError as err:
        sys.stderr.write(f"{PROG}: error: {err.one_line()}\n")
        return 1
    for message in messages:
        sys.stderr.write(f"{PROG}: {message}\n")
    if not messages:
        sys.stdout.write(f"{args.package}: no interrupted write to recover\n")
    return 0
