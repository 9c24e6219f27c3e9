"""``krm-merge resolve PKG --take local|upstream [SELECTION]...``: decide the conflicts an update left.

``--take local`` keeps the value in the file and removes the marker;
``--take upstream`` sets the field to upstream's value as the update
recorded it in the package's conflict ledger (:mod:`krm_merge.update.ledger`),
never to what the marker's text says, and removes the marker.  Only markers
an update recorded are conflicts: marker-shaped text no update recorded is
named in a warning and left alone.  With no selection every conflict is
decided; a selection is

* ``Kind/name`` or ``Kind/namespace/name`` (as ``conflicts`` prints it; the
  Kind in any case, as kubectl reads it), optionally ``:FIELD``, a field
  path as printed (``spec.containers[name=app].image``) or with list indices
  (``spec.containers[0].image``), selecting that field and those below it;
* ``FILE`` (package-relative, as ``conflicts`` prints it): every conflict in
  it, the diff3 regions of ``update --files merge`` included; ``FILE:LINE``
  the one at that line; ``FILE:FIELD`` a field of a plain YAML file (a Helm
  ``values.yaml``: ``values.yaml:replicaCount``).

Each marker is decided by the resolver of its kind
(:data:`krm_merge.commands.conflicts.RESOLVERS`), all of one document in one
edit; the files and the ledger (without the entries decided; deleted with
the last) are written at once, or none: one transaction of
:mod:`krm_merge.txn`, under the package lock from the read to the write.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from krm_merge import files, txn
from krm_merge.commands.base import command_parser
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import parse_path
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import Resolved, message
from krm_merge.outcomes.report import Report, State
from krm_merge.update.ledger import ledger_write

from .conflicts import RESOLVERS, Found, Marker, left, scan_reporting

PROG = "krm-merge resolve"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Decide conflicts an update left marked, and remove their markers.", EXAMPLES,
                          _arguments)


EXAMPLES = ("krm-merge resolve apps/podinfo --take upstream",
            "krm-merge resolve apps/podinfo --take local Deployment/app:spec.replicas")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--take", choices=("local", "upstream"), required=True,
                   help="local: keep the value in the file; upstream: write upstream's value, as the update recorded it")
    p.add_argument("select", metavar="SELECTION", nargs="*",
                   help="Kind/[namespace/]name[:FIELD], FILE, FILE:LINE or FILE:FIELD (default: every conflict)")


def main(argv: list[str]) -> int:
    """Entry point; 0 when no conflict is left, 3 when some are (not selected), 1 on error."""
    args = parser().parse_intermixed_args(argv)  # PKG, the selections and --take in any order
    report = Report("resolve", args.package)
    report.subject = args.take
    refused = render.refuse_destinations(report, args.results, None, quiet=args.quiet)
    if refused is not None:
        return refused
    report.guard(lambda: _locked_main(args, report))
    return render.finish(report, results_file=args.results, quiet=args.quiet)


def _locked_main(args: argparse.Namespace, report: Report) -> None:
    root = Path(args.package)
    with txn.PackageLock(root, PROG) as lock:
        report.extend(message(text) for text in lock.messages)
        _main(args, root, report)


def _main(args: argparse.Namespace, root: Path, report: Report) -> None:
    found = scan_reporting(root, report)
    recorded = found.recorded
    args.select = [package_relative(selection, root) for selection in args.select]
    chosen = [m for m in recorded if not args.select or any(selects(s, m) for s in args.select)]
    for selection in args.select:
        if not any(selects(selection, m) for m in recorded):
            raise KrmError(f"no conflict marker matches {selection!r}{_hint(selection, found)} (list them with "
                           f"krm-merge conflicts {root})")
    write(root, found, chosen, args.take)
    report.state = State.WRITTEN
    # Each decided marker, with its resource, field and file; then what is left.
    report.extend(Resolved(m.outcome(), args.take) for m in chosen)
    decided = {id(m) for m in chosen}
    rest = [m for m in recorded if id(m) not in decided]
    if rest:
        report.add(left(args.package, rest))


def package_relative(selection: str, root: Path) -> str:
    """A ``FILE[:LINE|:FIELD]`` selection named as ``conflicts`` prints it (under the package directory, from
    where the command runs: ``apps/web/a.yaml:8``) made relative to the package; other selections unchanged.

    Only a path naming an existing file inside the package is rewritten, so ``Deployment/web`` stays a resource.
    """
    head, colon, rest = selection.partition(":")
    if not head or not os.path.isfile(head):
        return selection
    inside = os.path.relpath(os.path.abspath(head), os.path.abspath(root))
    if inside == os.pardir or inside.startswith(os.pardir + os.sep) or os.path.isabs(inside):
        return selection
    return inside.replace(os.sep, "/") + colon + rest


def _hint(selection: str, found: Found) -> str:
    if any(selects(selection, m) for m in found.unrecorded):
        return ": it names only markers no update recorded, which are not conflicts (delete them by hand)"
    if selection.startswith(":"):
        return ": name the file of a plain YAML field (values.yaml:replicaCount)"
    return ""


def selects(selection: str, marker: Marker) -> bool:
    """Whether a selection (``RESOURCE[:FIELD]``, ``FILE``, ``FILE:LINE``, ``FILE:FIELD``) names ``marker``."""
    head, _, rest = selection.partition(":")
    if head == marker.file and rest.isdigit():
        return marker.line == int(rest)
    if head != marker.file and not _same_resource(head, marker.resource):
        return False
    return not rest or _below(marker, rest)


def _same_resource(wanted: str, resource: str) -> bool:
    """``Kind/[ns/]name`` names ``resource``; the Kind in any case (kubectl reads ``deployment/web``)."""
    kind, _, rest = wanted.partition("/")
    have_kind, _, have_rest = resource.partition("/")
    return bool(resource) and rest == have_rest and kind.casefold() == have_kind.casefold()


def _below(marker: Marker, field: str) -> bool:
    """The marker's field is ``field`` or below it (as printed, or with list indices)."""
    path = marker.field
    if path == field or path.startswith(field + ".") or path.startswith(field + "["):
        return True
    try:
        wanted = parse_path(field)
    except ValueError:
        return False  # a printed path with [key=value] labels: compared as text above
    return bool(marker.path) and marker.path[: len(wanted)] == wanted


def write(root: Path, found: Found, chosen: list[Marker], take: str) -> None:
    """Apply ``take`` to the ``chosen`` conflicts file by file and drop their ledger entries, all in one write.

    Entries whose marker is gone or whose value was edited (decided by hand)
    are dropped too; a ledger left empty is deleted, each other one written
    with the binding it was read with.  Only markers an update recorded are
    acted on.
    """
    if any(m.entry is None for m in chosen):
        raise KrmError("refusing to act on a marker no update recorded")  # a caller's mistake, never a user's
    changes = pkgio.ChangeSet()
    by_file: dict[str, list[Marker]] = {}
    for marker in chosen:
        by_file.setdefault(marker.file, []).append(marker)
    for rel, mine in sorted(by_file.items()):
        files.check_relative(rel)
        before = files.read_bytes(root / rel)  # through a link, as the lister read it
        text = before.decode("utf-8")
        for kind in dict.fromkeys(m.kind for m in mine):
            text = RESOLVERS[kind](rel, text, [m for m in mine if m.kind == kind], take)
        changes.writes.append(pkgio.Write(rel, before, text.encode("utf-8")))
    decided = {id(m.entry) for m in chosen}
    left = {id(m.entry) for m in found.recorded} - decided
    for ledger in found.ledgers:
        change = ledger_write(ledger, [e for e in ledger.entries if id(e) in left])
        if change is not None:
            changes.writes.append(change)
    changes.apply(root, command=PROG)


__all__ = ["main", "package_relative", "parser", "selects", "write"]
