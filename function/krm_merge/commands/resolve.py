"""``krm-merge resolve PKG --take local|upstream [RESOURCE[:FIELD]]...``: decide marked conflicts.

``--take local`` keeps the value in the file and removes the marker;
``--take upstream`` sets the field to the value the marker names and
removes it.  With no selection every marker is decided; ``RESOURCE`` is
``Kind/name`` or ``Kind/namespace/name`` (as ``conflicts`` prints it) and
``FIELD`` a field path, either as printed (``spec.containers[name=app].image``)
or with list indices (``spec.containers[0].image``); a field selects the
markers at or below it.  Each marker is decided by the resolver of its kind
(:data:`krm_merge.commands.conflicts.RESOLVERS`); all files are written at
once, or none: one transaction of :mod:`krm_merge.txn`, under the package
lock from the read to the write.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from krm_merge import files, txn
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import parse_path
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import Resolved, message
from krm_merge.outcomes.report import Report, State

from .conflicts import RESOLVERS, Marker, find_reporting_duplicates, left

PROG = "krm-merge resolve"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"krm-merge resolve: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog="krm-merge resolve", description="Decide conflicts an update left marked, and remove their markers.")
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--take", choices=("local", "upstream"), required=True,
                   help="local: keep the value in the file; upstream: write the value the marker names")
    p.add_argument("select", metavar="RESOURCE[:FIELD]", nargs="*",
                   help="Kind/name or Kind/namespace/name, optionally :field.path (default: every conflict)")
    p.add_argument("--results", metavar="FILE", help=render.RESULTS_HELP)
    return p


def main(argv: list[str]) -> int:
    """Entry point; 0 when no marker is left, 3 when some are (not selected), 1 on error."""
    args = parser().parse_intermixed_args(argv)  # PKG, the selections and --take in any order
    report = Report("resolve", args.package)
    report.guard(lambda: _locked_main(args, report))
    return render.finish(report, results_file=args.results)


def _locked_main(args: argparse.Namespace, report: Report) -> None:
    root = Path(args.package)
    with txn.PackageLock(root, PROG) as lock:
        report.extend(message(text) for text in lock.messages)
        _main(args, root, report)


def _main(args: argparse.Namespace, root: Path, report: Report) -> None:
    found = find_reporting_duplicates(root, report)
    chosen = [m for m in found if not args.select or any(selects(s, m) for s in args.select)]
    for selection in args.select:
        if not any(selects(selection, m) for m in found):
            raise KrmError(f"no conflict marker matches {selection!r} (list them with krm-merge conflicts {root})")
    write(root, chosen, args.take)
    report.state = State.WRITTEN
    # Each decided marker, with its resource, field and file; then what is left.
    report.extend(Resolved(m.outcome(), args.take) for m in chosen)
    rest = [m for m in found if m not in chosen]
    if rest:
        report.add(left(args.package, rest))


def selects(selection: str, marker: Marker) -> bool:
    """Whether ``RESOURCE[:FIELD]`` names ``marker`` (a field also selects the fields below it)."""
    resource, _, field = selection.partition(":")
    if resource != marker.resource:
        return False
    if not field:
        return True
    if _below(marker.field, field):
        return True
    try:
        wanted = parse_path(field)
    except ValueError:
        return False  # a printed path with [key=value] labels: compared as text above
    return marker.path[: len(wanted)] == wanted


def _below(path: str, field: str) -> bool:
    return path == field or path.startswith(field + ".") or path.startswith(field + "[")


def write(root: Path, markers: list[Marker], take: str) -> None:
    """Apply ``take`` to ``markers`` file by file, then write every changed file at once."""
    by_file: dict[str, list[Marker]] = {}
    for marker in markers:
        by_file.setdefault(marker.file, []).append(marker)
    changes = pkgio.ChangeSet()
    for rel, mine in sorted(by_file.items()):
        files.check_relative(rel)
        before = files.read_bytes(root / rel)  # through a link, as the lister read it
        text = before.decode("utf-8")
        for kind in dict.fromkeys(m.kind for m in mine):
            text = RESOLVERS[kind](rel, text, [m for m in mine if m.kind == kind], take)
        changes.writes.append(pkgio.Write(rel, before, text.encode("utf-8")))
    changes.apply(root, command=PROG)


__all__ = ["main", "parser", "selects", "write"]
