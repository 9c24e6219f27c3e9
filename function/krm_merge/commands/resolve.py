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
import sys
from pathlib import Path

from krm_merge import files, txn
from krm_merge.krm import pkgio
from krm_merge.krm.results import Field, File, KrmError, Result, Results
from krm_merge.krm.values import parse_path

from .conflicts import CONFLICTS_LEFT, RESOLVERS, Marker, find_reporting_duplicates
from .reporting import RESULTS_HELP, emit, guarded, resource_ref, write_results

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
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    return p


def main(argv: list[str]) -> int:
    """Entry point; 0 when no marker is left, 3 when some are (not selected), 1 on error."""
    args = parser().parse_intermixed_args(argv)  # PKG, the selections and --take in any order
    results = Results()
    code = guarded(PROG, lambda: _locked_main(args, results), results)
    write_results(args.results, results)
    return code


def _locked_main(args: argparse.Namespace, results: Results) -> int:
    root = Path(args.package)
    with txn.PackageLock(root, PROG) as lock:
        recovered = [Result(message, "warning") for message in lock.messages]
        results.extend(recovered)
        emit(PROG, recovered)
        return _main(args, root, results)


def _main(args: argparse.Namespace, root: Path, results: Results) -> int:
    found = find_reporting_duplicates(PROG, root, results)
    chosen = [m for m in found if not args.select or any(selects(s, m) for s in args.select)]
    for selection in args.select:
        if not any(selects(selection, m) for m in found):
            raise KrmError(f"no conflict marker matches {selection!r} (list them with krm-merge conflicts {root})")
    write(root, chosen, args.take)
    # Each decided marker as a result: resource, field and file for --results (stdout has the count).
    results.extend(Result(f"took {args.take}: {m.describe()}", "info", resource_ref(m.resource),
                          Field(m.field) if m.field else None, File(m.file)) for m in chosen)
    left = len(found) - len(chosen)
    sys.stdout.write(f"resolved {len(chosen)} conflict(s) in {root} (took {args.take}); {left} left\n")
    return CONFLICTS_LEFT if left else 0


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
