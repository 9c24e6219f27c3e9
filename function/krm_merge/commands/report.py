"""``krm-merge report merge FILE|DIR...``: the JSON reports of a fleet update's shards combined into one.

Each shard of a fleet update (``update ROOT... --ref REF --shard I/N``, an
Indexed Job's pods, a CI matrix's jobs) writes its own ``--report json``;
this reads them (a folder: its ``*.json`` files) back as typed outcomes and
writes one report for the whole fleet (:func:`krm_merge.fleet.report.merge`):
JSON on stdout unless ``--report FORMAT FILE`` (repeatable) says otherwise.
The totals go to stderr.  Exit code: the merged fleet's (0 all clean, 3 some
conflicted or lost a local edit to upstream's value, 1 some failed, 4 no package
selected), and 1 when a shard's report is missing or the reports do not belong
to one fleet update.
"""

from __future__ import annotations

import argparse
import os

from krm_merge.commands.base import command_parser
from krm_merge.fleet import report as fleet_report
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import message
from krm_merge.outcomes.report import Report, State

PROG = "krm-merge report"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Combine the JSON reports of a fleet update's shards into one (docs/fleet.md).",
                          EXAMPLES, _arguments)


EXAMPLES = ("krm-merge report merge shards/ --report markdown summary.md --report json -",)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["merge"], help="merge: combine shard reports")
    p.add_argument("inputs", nargs="+", metavar="FILE|DIR", help="shard reports (a folder: its *.json files)")
    p.add_argument("--report", nargs=2, action="append", metavar=("FORMAT", "FILE"),
                   help="write the merged report: FORMAT json or markdown, FILE '-' for stdout (repeatable; "
                        "default: json to stdout)")


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    outputs = args.report or [["json", "-"]]
    if any(fmt not in render.FORMATS for fmt, _ in outputs):
        return render.usage_error(PROG, "--report FORMAT must be json or markdown")
    report = Report("report", " ".join(args.inputs))
    report.guard(lambda: _merge(args.inputs, outputs, report))
    return render.finish(report, results_file=args.results, quiet=args.quiet)


def _merge(inputs: list[str], outputs: list[list[str]], report: Report) -> None:
    """The shards merged into ``report`` (its fleet scope, each package, what is missing), and written."""
    merged = fleet_report.merge([(path, fleet_report.shard_of(path, fleet_report.read(path))) for path in _files(inputs)])
    report.fleet = merged.scope
    report.state = State.DRY_RUN if merged.dry_run else State.WRITTEN
    report.extend(merged.packages)
    report.said = len(report.outcomes)  # each package's line was said by its shard's run: the merge says the totals
    report.extend(message(gap, "error") for gap in fleet_report.missing(merged))
    for fmt, path in outputs:
        render.write_report(fmt, path, report)


def _files(inputs: list[str]) -> list[str]:
    """The report files: each FILE, and each DIR's ``*.json`` in name order."""
    found = []
    for path in inputs:
        if os.path.isdir(path):
            inside = [os.path.join(path, name) for name in sorted(os.listdir(path)) if name.endswith(".json")]
            if not inside:  # a shard's report missing from the folder is said by the merge; none at all is no merge
                raise fleet_report.ReportError(f"{path}: a folder holding no *.json report", file=path)
            found.extend(inside)
        else:
            found.append(path)  # read strictly: a regular file (fleet_report.read)
    return found


__all__ = ["main", "parser"]
