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

With ``--pull-request`` the conflicts are those of the pull request an
``update --conflicts mark --pull-request`` opened: the package is read as its
branch holds it, the decision is one commit on that branch, pushed with a
lease, and the pull request's body says what is left
(:meth:`~krm_merge.commands.pull_request.PullRequestStep.resolve_on_branch`);
the user's files stay as they are (docs/pull-requests.md).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from krm_merge import files, txn
from krm_merge.change.settings import Settings, SettingsError
from krm_merge.commands.base import command_parser
from krm_merge.commands.pull_request import ChangeText, PullRequestStep
from krm_merge.commands.pull_request_options import UPDATE_BRANCH, add_options, settings_from_args
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import parse_path
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import ConflictsLeft, Resolved, message
from krm_merge.outcomes.report import Report, State
from krm_merge.update.ledger import ledger_write

from .conflicts import RESOLVERS, Found, Marker, left, scan_reporting

PROG = "krm-merge resolve"


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    return command_parser(PROG, "Decide conflicts an update left marked, and remove their markers.", EXAMPLES,
                          _arguments)


EXAMPLES = ("krm-merge resolve apps/podinfo --take upstream",
            "krm-merge resolve apps/podinfo --take local Deployment/app:spec.replicas",
            "krm-merge resolve apps/podinfo --take upstream --pull-request")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("package", metavar="PKG", help="the package directory")
    p.add_argument("--take", choices=("local", "upstream"), required=True,
                   help="local: keep the value in the file; upstream: write upstream's value, as the update recorded it")
    p.add_argument("select", metavar="SELECTION", nargs="*",
                   help="Kind/[namespace/]name[:FIELD], FILE, FILE:LINE or FILE:FIELD (default: every conflict)")
    add_options(p, default_branch=UPDATE_BRANCH)


def main(argv: list[str]) -> int:
    """Entry point; 0 when no conflict is left, 3 when some are (not selected), 1 on error."""
    args = parser().parse_intermixed_args(argv)  # PKG, the selections and --take in any order
    try:
        settings = settings_from_args(args)
    except SettingsError as err:
        return render.usage_error(PROG, str(err))
    report = Report("resolve", args.package)
    report.subject = args.take
    refused = render.refuse_destinations(report, args.results, None, quiet=args.quiet)
    if refused is not None:
        return refused
    if settings is not None:
        report.guard(lambda: _on_pull_request(args, report, settings))
    else:
        report.guard(lambda: _locked_main(args, report))
    return render.finish(report, results_file=args.results, quiet=args.quiet)


def _locked_main(args: argparse.Namespace, report: Report) -> None:
    root = Path(args.package)
    with txn.PackageLock(root, PROG) as lock:
        report.extend(message(text) for text in lock.messages)
        _main(args, root, report)


def _main(args: argparse.Namespace, root: Path, report: Report) -> None:
    found, chosen = _chosen(args, root, report)
    write(root, found, chosen, args.take)
    report.state = State.WRITTEN
    _decided(args, report, found, chosen)


def _chosen(args: argparse.Namespace, root: Path, report: Report) -> tuple[Found, list[Marker]]:
    """The package's conflicts (``root``: where it is read) and those the selections choose."""
    found = scan_reporting(root, report)
    recorded = found.recorded
    selections = [package_relative(selection, Path(args.package)) for selection in args.select]
    chosen = [m for m in recorded if not selections or any(selects(s, m) for s in selections)]
    for selection in selections:
        if not any(selects(selection, m) for m in recorded):
            raise KrmError(f"no conflict marker matches {selection!r}{_hint(selection, found)} (list them with "
                           f"krm-merge conflicts {args.package})")
    return found, chosen


def _decided(args: argparse.Namespace, report: Report, found: Found, chosen: list[Marker], *,
             on_branch: bool = False) -> None:
    """Each decided marker in the report, with its resource, field and file; then what is left."""
    report.extend(Resolved(m.outcome(), args.take) for m in chosen)
    decided = {id(m) for m in chosen}
    rest = [m for m in found.recorded if id(m) not in decided]
    if rest:
        report.add(left(args.package, rest)._replace(on_branch=on_branch))


def _on_pull_request(args: argparse.Namespace, report: Report, settings: Settings) -> None:
    """``--pull-request``: decide the conflicts of the update's pull request on its branch; the files stay."""
    step = PullRequestStep(report, settings, args.package, branch_template=UPDATE_BRANCH, placeholders={})

    def decide(package: str) -> tuple[list[tuple[str, bytes | None]], ChangeText]:
        root = Path(package)
        found, chosen = _chosen(args, root, report)
        changes = planned(root, found, chosen, args.take)
        _decided(args, report, found, chosen, on_branch=True)
        return [(w.path, w.data) for w in changes.writes], _resolution_text(report, len(chosen))

    step.resolve_on_branch(decide, args.take)
    report.state = State.WRITTEN  # committed on the branch and published (a failure before: the error says)


def _resolution_text(report: Report, decided: int) -> ChangeText:
    """A resolution commit's words: what was decided, and first in its body (the pull request's) what is left."""
    rest = sum(o.count for o in report.outcomes if isinstance(o, ConflictsLeft))
    taken = report.subject
    status = ("**No conflict is left**: every conflict of this update is decided." if not rest else
              f"**{rest} conflict(s) left**: decide them with `krm-merge resolve {report.target} --take "
              "local|upstream --pull-request`.")
    title = f"resolve: {decided} conflict(s) of {report.target} decided (took {taken}), {rest} left"
    return ChangeText(title, f"{status}\n\n{render.report_markdown(report.as_written())}")


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
    """Apply ``take`` to the ``chosen`` conflicts file by file and drop their ledger entries, all in one write
    (:func:`planned`, written as one transaction)."""
    planned(root, found, chosen, take).apply(root, command=PROG)


def planned(root: Path, found: Found, chosen: list[Marker], take: str) -> pkgio.ChangeSet:
    """The writes that apply ``take`` to the ``chosen`` conflicts file by file and drop their ledger entries.

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
    return changes


__all__ = ["main", "package_relative", "parser", "planned", "selects", "write"]
