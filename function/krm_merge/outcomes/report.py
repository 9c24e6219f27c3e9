"""One run of a command: what it was, what it did to the disk, and its outcomes; the exit code follows from them.

A command makes one :class:`Report`, adds every outcome as it is decided
(:mod:`krm_merge.outcomes.kinds`), sets :attr:`Report.state` from what it
really did (the write happened, a dry run, stopped before writing), and hands
it to the renderer (:func:`krm_merge.outcomes.render.finish`).  The exit code is
a function of the outcomes' kinds and severities (:func:`exit_code`), never of
their words.
"""

from __future__ import annotations

from enum import Enum

from krm_merge.errors import KrmMergeError
from krm_merge.interrupts import Interrupted
from krm_merge.krm.results import failure

TYPE_CHECKING = False
if TYPE_CHECKING:  # the SDK's function path builds no report: it must not load the package writer
    from typing import Callable, Iterable, TypeVar

    from krm_merge.krm.pkgio import ChangeSet

    T = TypeVar("T")

from .kinds import (
    ConflictOutcome, ConflictsLeft, Decision, FileAction, FileChanged, FileMerged, FleetScope, Kind, Message, Outcome,
    PackageStatus, PackageUpdate,
)
from .words import interrupted

CONFLICTS_LEFT = 3
"""Exit code while conflicts are left in the package for a person (``update --conflicts mark``, ``conflicts``,
``resolve``); a fleet update's too when upstream's value replaced a package's local edit."""
NOTHING_SELECTED = 4
"""Exit code of a fleet update (or merged report) whose roots hold no package tracking its upstream: a job that did
nothing is not a success."""


class State(Enum):
    """What a command did to the files it works on; the JSON report's ``status``."""

    WRITTEN = "written"  # its change set was written (possibly empty)
    DRY_RUN = "dryRun"  # computed and shown, nothing written
    NOT_WRITTEN = "notWritten"  # refused to write what it found (errors reported, a conflict under --conflicts fail)
    FAILED = "failed"  # stopped by an error before it could finish (unreadable input, a write that failed)
    READ_ONLY = "readOnly"  # a command that never writes (conflicts, diff) or had nothing to do


class Report:
    """One command run: ``command`` (``update``), ``target`` (the package or folder), outcomes in order, and state.

    ``subject`` says what the run was asked for, where the outcomes alone do
    not (promote: the promotions).  ``fleet`` is set for a fleet update's
    report (its outcomes are :class:`~.kinds.PackageUpdate`s and messages;
    the renderer writes the fleet document); ``said`` counts the first outcomes
    already said on stderr as they happened (a fleet update's progress,
    :func:`krm_merge.outcomes.render.say_now`).  A plain class with
    ``__slots__``, not a dataclass (start-up, issue 24).
    """

    __slots__ = ("command", "target", "outcomes", "state", "subject", "items_changed", "fleet", "said", "signal",
                 "nothing_selected", "_prog")

    def __init__(self, command: str, target: str = "", state: State = State.READ_ONLY, prog: str = "") -> None:
        self.command = command
        self._prog = prog  # an SDK function run on a folder: its own name
        self.target = target
        self.outcomes: list[Outcome] = []
        self.state = state
        self.subject = ""
        self.items_changed = 0  # run: the items the function changed (its summary line counts them)
        self.fleet: FleetScope | None = None
        self.said = 0
        self.signal: int | None = None  # the termination signal that stopped the run (see guard)
        self.nothing_selected: Outcome | None = None  # a fleet's error saying no package was selected (exit 4)

    @property
    def prog(self) -> str:
        """The program name every stderr line starts with (``krm-merge update``)."""
        return self._prog or f"krm-merge {self.command}"

    def add(self, outcome: Outcome) -> None:
        """One more outcome, in the order it was decided."""
        self.outcomes.append(outcome)

    def extend(self, outcomes: Iterable[Outcome]) -> None:
        """More outcomes, in order."""
        self.outcomes.extend(outcomes)

    def add_changes(self, changes: ChangeSet) -> None:
        """One :class:`~.kinds.FileChanged` per file the change set writes or deletes, and per folder it removes."""
        self.extend(changed_files(changes))

    def as_written(self, *more: Outcome) -> Report:
        """This report as it will read once its change set is written, with ``more`` outcomes decided by the write.

        A commit made before the write (``--pull-request``) takes its words from it.
        """
        copy = Report(self.command, self.target, State.WRITTEN, self._prog)
        copy.outcomes = [*self.outcomes, *more]
        copy.subject = self.subject
        copy.items_changed = self.items_changed
        copy.fleet = self.fleet
        return copy

    def of(self, kind: Kind) -> list[Outcome]:
        """The outcomes of one kind, in order."""
        return [o for o in self.outcomes if o.kind is kind]

    def guard(self, body: Callable[[], T], describe: Callable[[KrmMergeError], str] | None = None) -> T | None:
        """Run ``body`` and return what it returns; a ``KrmMergeError`` or ``OSError`` it raises becomes one error
        outcome (and None is returned).

        The state becomes :attr:`State.FAILED` unless the error came after the
        write (a command sets ``WRITTEN`` only once its transaction is done).
        ``describe`` words a ``KrmMergeError`` (default: its ``one_line()``).

        A termination signal (:class:`krm_merge.interrupts.Interrupted`, a
        ``SystemExit``) stops the run the same way: one error outcome saying
        whether the write was finished (the signal came after the commit point:
        the state is then ``WRITTEN``) or nothing was written, rendered like any
        other, and the exit code becomes 128+signal.
        """
        try:
            return body()
        except (KrmMergeError, OSError) as err:
            self.add(Message(failure(err, describe)))
            if self.state is not State.WRITTEN:
                self.state = State.FAILED
            return None
        except Interrupted as stop:
            self.add(interrupted(stop.signo, stop.written))
            self.signal = stop.signo
            self.state = State.WRITTEN if stop.written else State.FAILED
            return None

    @property
    def exit_code(self) -> int:
        """:func:`exit_code` of the outcomes; 128+signal when a termination signal stopped the run."""
        if self.signal is not None:
            return 128 + self.signal
        if self.fleet is not None and self.fleet.selected == 0:
            # Any other error (a shard report that cannot be read or written, say) is a failure: exit 1.
            return exit_code(o for o in self.outcomes if o is not self.nothing_selected) or NOTHING_SELECTED
        return exit_code(self.outcomes)


def changed_files(changes: ChangeSet) -> list[Outcome]:
    """The files a change set writes (added, changed, deleted), then the folders it removes."""
    found: list[Outcome] = [
        FileChanged(w.path, FileAction.ADDED if w.before is None else FileAction.DELETED if w.data is None
                    else FileAction.CHANGED)
        for w in changes.writes
    ]
    return found + [FileChanged(rel, FileAction.DIRECTORY_REMOVED) for rel in changes.remove_dirs]


def exit_code(outcomes: Iterable[Outcome]) -> int:
    """1 when any outcome is an error; :data:`CONFLICTS_LEFT` (3) when conflicts are left to decide (a fleet
    update: a package conflicted, or upstream's value replaced a package's local edit); else 0."""
    found = list(outcomes)
    if any(o.severity == "error" for o in found):
        return 1
    if any(isinstance(o, ConflictsLeft) and o.count
           or isinstance(o, PackageUpdate) and (o.status is PackageStatus.CONFLICTED or o.overwritten)
           for o in found):
        return CONFLICTS_LEFT
    return 0


def files_changed(outcomes: Iterable[Outcome]) -> int:
    """The files a command's change set writes or deletes (folders removed are not counted)."""
    return sum(1 for o in outcomes if isinstance(o, FileChanged) and o.action is not FileAction.DIRECTORY_REMOVED)


def conflicts_found(outcomes: Iterable[Outcome]) -> int:
    """The conflicts an update found, however decided: fields changed on both sides and diff3 regions."""
    found = list(outcomes)
    return (sum(1 for o in found if isinstance(o, ConflictOutcome))
            + sum(len(o.regions) for o in found if isinstance(o, FileMerged)))


def not_merged(outcomes: Iterable[Outcome]) -> int:
    """The conflicting fields and diff3 regions that stopped an update (``--conflicts fail``, a rule's fail)."""
    found = list(outcomes)
    fields = sum(1 for o in found if isinstance(o, ConflictOutcome) and o.decision is Decision.NOT_MERGED)
    return fields + sum(len(o.regions) for o in found if isinstance(o, FileMerged) and o.decision is Decision.NOT_MERGED)


__all__ = ["CONFLICTS_LEFT", "NOTHING_SELECTED", "Report", "State", "changed_files", "conflicts_found", "exit_code",
           "files_changed", "not_merged"]
