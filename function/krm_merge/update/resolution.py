"""``krm-merge resolve``'s engine: the conflicts a selection chooses, decided by the resolvers of their kind.

``--take local`` keeps the value in the file and removes the marker; ``--take upstream`` sets the field to
upstream's value as the update recorded it in the package's conflict ledger (:mod:`krm_merge.update.ledger`),
never to what the marker's text says.  Each marker is decided by the resolver of its kind
(:data:`krm_merge.update.conflicts.RESOLVERS`), all of one document in one edit; the files and the ledger
(without the entries decided; deleted with the last) are one change set.  :class:`ResolvePlanner` is the
change pipeline's planner (:mod:`krm_merge.change.pipeline`): under the package lock in the user's files, or
on a pull request's branch read into a scratch folder (``resolve --pull-request``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from krm_merge import files, txn
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import parse_path
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import ConflictsLeft, Resolved, message
from krm_merge.outcomes.report import Report, State
from krm_merge.records import Record
from krm_merge.update.conflicts import RESOLVERS, Found, Marker, left, scan_reporting
from krm_merge.update.ledger import ledger_write

PROG = "krm-merge resolve"
TAKES = ("local", "upstream")


class ResolveRequest(Record):
    """What ``resolve`` is asked, read once from the command line: the package, the side taken, the selections
    (empty: every conflict)."""

    package: str
    take: str
    selections: tuple[str, ...] = ()


class ResolvePlanner:
    """A resolution as the change pipeline runs it: planned under the package lock in the user's files
    (:meth:`plan`), or in a folder holding the package as a pull request's branch does (:meth:`plan_at`)."""

    def __init__(self, request: ResolveRequest) -> None:
        self.request = request

    @contextmanager
    def plan(self, report: Report) -> Iterator[Resolution]:
        """The resolution of the package's conflicts, the lock held from the read to the write."""
        root = Path(self.request.package)
        with txn.PackageLock(root, PROG) as lock:
            report.extend(message(text) for text in lock.messages)
            yield self.plan_at(root, report)

    @property
    def take(self) -> str:
        """The side taken (``local``, ``upstream``): a resolution commit's trailer says it."""
        return self.request.take

    def plan_at(self, folder: str | Path, report: Report) -> Resolution:
        """The resolution of the package as ``folder`` holds it (its selections named as the user typed them)."""
        root = Path(folder)
        found = scan_reporting(root, report)
        recorded = found.recorded
        request = self.request
        selections = [package_relative(selection, Path(request.package)) for selection in request.selections]
        chosen = [m for m in recorded if not selections or any(selects(s, m) for s in selections)]
        for selection in selections:
            if not any(selects(selection, m) for m in recorded):
                raise KrmError(f"no conflict marker matches {selection!r}{_hint(selection, found)} (list them with "
                               f"krm-merge conflicts {request.package})")
        return Resolution(root, request, report, found, chosen, planned(root, found, chosen, request.take))


class Resolution:
    """The decided conflicts' writes, as the change pipeline takes them (:class:`krm_merge.change.pipeline.Planned`)."""

    __slots__ = ("root", "request", "report", "found", "chosen", "changes")

    def __init__(self, root: Path, request: ResolveRequest, report: Report, found: Found, chosen: list[Marker],
                 changes: pkgio.ChangeSet) -> None:
        self.root = root
        self.request = request
        self.report = report
        self.found = found
        self.chosen = chosen
        self.changes = changes

    @property
    def planned_writes(self) -> Sequence[pkgio.Write]:
        """The files decided and the ledgers' writes (package path, new bytes or None)."""
        return self.changes.writes

    @property
    def stop(self) -> State | None:
        """A resolution always goes on (a selection naming no conflict is an error raised while planning)."""
        return None

    def check(self) -> None:
        """What the write checks, before it."""
        self.changes.validate(self.root)

    def diff(self) -> Iterator[str]:
        """The decisions as a unified diff."""
        return self.changes.diff(self.root)

    def write(self) -> None:
        """The files and ledgers written at once, or none."""
        self.changes.apply(self.root, command=PROG)

    def written(self, package_name: str | None) -> Report:
        """The report as the write leaves it."""
        return self.report.as_written()

    def done(self, *, on_branch: bool) -> None:
        """Each decided marker in the report, with its resource, field and file; then what is left."""
        self.report.extend(Resolved(m.outcome(), self.request.take) for m in self.chosen)
        decided = {id(m) for m in self.chosen}
        rest = [m for m in self.found.recorded if id(m) not in decided]
        if rest:
            self.report.add(left(self.request.package, rest)._replace(on_branch=on_branch))

    def words(self) -> tuple[str, str]:
        """A resolution commit's title and body (the pull request's): what was decided, what is left."""
        return resolution_text(self.report, len(self.chosen))


def resolution_text(report: Report, decided: int) -> tuple[str, str]:
    """A resolution commit's words: what was decided, and first in its body (the pull request's) what is left."""
    rest = sum(o.count for o in report.outcomes if isinstance(o, ConflictsLeft))
    taken = report.subject
    status = ("**No conflict is left**: every conflict of this update is decided." if not rest else
              f"**{rest} conflict(s) left**: decide them with `krm-merge resolve {report.target} --take "
              "local|upstream --pull-request`.")
    title = f"resolve: {decided} conflict(s) of {report.target} decided (took {taken}), {rest} left"
    return title, f"{status}\n\n{render.report_markdown(report.as_written())}"


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


__all__ = ["PROG", "TAKES", "Resolution", "ResolvePlanner", "ResolveRequest", "package_relative", "planned",
           "resolution_text", "selects", "write"]
