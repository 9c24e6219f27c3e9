"""``krm-merge check [DIR]...``: fail while a krm-merge write is interrupted (or running) below DIR.

For git hooks and CI, before a commit: a command killed during its write
(SIGKILL, a power loss) leaves the package half-written until the next
krm-merge command that writes it, or ``krm-merge recover PKG``, finishes or
rolls back the write.  ``git add -A`` would commit that state.  This command
walks each DIR (default: the current folder; every package and subpackage
below it, no link followed, ``.git`` skipped) and names every package that
holds an interrupted write, a write in progress, or a lock file a killed
command left (:func:`krm_merge.txn.pending`), saying to run ``recover``; and
a lock file or transaction folder that is not krm-merge's own in this
checkout (one that came with the package's files), saying to look at it and
delete it: ``recover`` never runs it.  It reads only.

Exit code 0 when nothing is pending (nothing is printed), 1 when something is
(one error line per package, saying what to run), 2 on bad usage.  The
pre-commit hook (``.pre-commit-hooks.yaml``), a plain git hook and a CI step
are in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import os

from krm_merge import txn
from krm_merge.commands.base import command_parser
from krm_merge.errors import KrmMergeError
from krm_merge.krm import pkgio
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import Message, message
from krm_merge.outcomes.report import Report

PROG = "krm-merge check"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Fail while a krm-merge write is interrupted or running (for git hooks and CI).",
                          EXAMPLES, _arguments)


EXAMPLES = ("krm-merge check", 'krm-merge check --quiet "$(git rev-parse --show-toplevel)"  # a git hook')


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dirs", metavar="DIR", nargs="*", default=["."],
                   help="folders to search, packages and subpackages at any depth (default: .)")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    report = Report("check", " ".join(args.dirs))
    for top in args.dirs:
        report.extend(check(top))
    return render.finish(report, results_file=args.results, quiet=args.quiet)


def check(top: str) -> list[Message]:
    """One error per package below ``top`` that holds what :func:`krm_merge.txn.pending` finds."""
    if not os.path.isdir(top):
        return [message(f"{top} is not a directory", "error", top)]
    try:
        # Folders only: the name filter matches no listed file (krm-merge's own names are never listed).
        listing = pkgio.list_package(top, names=(txn.LOCK_NAME,), hidden=True, krmignore=False)
    except OSError as err:
        return [message(f"cannot read {err.filename}: {err.strerror}", "error", str(err.filename))]
    found = []
    for folder in ["", *listing.dirs]:
        package = os.path.join(top, folder) if folder else top
        try:
            left = txn.pending(package)
        except KrmMergeError as err:  # krm-merge's key cannot be trusted: nothing can be told apart
            found.append(message(err.one_line(), "error", package))
            continue
        except OSError as err:
            found.append(message(f"cannot read {err.filename}: {err.strerror}", "error", package))
            continue
        if left is None:
            continue
        if left.foreign:  # its words name it and say how to remove it: recover would refuse it
            found.append(message(left.what, "error", package))
        else:
            found.append(message(f"{package}: {left.what}; run `krm-merge recover {package}` before committing",
                                 "error", package))
    return found


__all__ = ["check", "main", "parser"]
