"""``krm-merge report merge FILE|DIR...``: the JSON reports of a fleet update's shards combined into one.

Each shard of a fleet update (``update ROOT... --ref REF --shard I/N``, an
Indexed Job's pods, a CI matrix's jobs) writes its own ``--report json``;
this reads them (a folder: its ``*.json`` files) and writes one report for the
whole fleet (:func:`krm_merge.fleet.report.merge`): JSON on stdout unless
``--report FORMAT FILE`` (repeatable) says otherwise.  The totals go to
stderr.  Exit code: the merged fleet's (0 all clean, 3 some conflicted, 1 some
failed), and 1 when a shard's report is missing or the reports do not belong
to one fleet update.
"""

from __future__ import annotations

import argparse
import os
import sys

from krm_merge.commands.reporting import RESULTS_HELP, write_results
from krm_merge.fleet import report
from krm_merge.krm.results import Result, Results, emit, guarded

PROG = "krm-merge report"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog=PROG, description="Combine the JSON reports of a fleet update's shards into one (docs/fleet.md).")
    p.add_argument("action", choices=["merge"], help="merge: combine shard reports")
    p.add_argument("inputs", nargs="+", metavar="FILE|DIR", help="shard reports (a folder: its *.json files)")
    p.add_argument("--report", nargs=2, action="append", metavar=("FORMAT", "FILE"),
                   help="write the merged report: FORMAT json or markdown, FILE '-' for stdout (repeatable; "
                        "default: json to stdout)")
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    return p


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    outputs = args.report or [["json", "-"]]
    if any(fmt not in ("json", "markdown") for fmt, _ in outputs):
        sys.stderr.write(f"{PROG}: error: --report FORMAT must be json or markdown\n")
        return 2
    results = Results()
    code = guarded(PROG, lambda: _merge(args.inputs, outputs, results), results)
    write_results(args.results, results)
    return code


def _merge(inputs: list[str], outputs: list[list[str]], results: Results) -> int:
    merged = report.merge([(path, report.read(path)) for path in _files(inputs)])
    for fmt, path in outputs:
        report.write(fmt, path, merged, sys.stdout)
    sys.stderr.write(f"{PROG}: {report.totals_line(merged)}\n")
    gaps = [Result(gap, "error") for gap in report.missing(merged)]
    results.extend(gaps)
    emit(PROG, gaps)
    return 1 if gaps else int(merged["exitCode"])


def _files(inputs: list[str]) -> list[str]:
    """The report files: each FILE, and each DIR's ``*.json`` in name order."""
    found = []
    for path in inputs:
        if os.path.isdir(path):
            found.extend(os.path.join(path, name) for name in sorted(os.listdir(path)) if name.endswith(".json"))
        else:
            found.append(path)
    return found


__all__ = ["main", "parser"]
