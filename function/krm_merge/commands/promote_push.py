"""``promote --push``: the promotion delivered as one commit pushed to the base branch, never losing a race.

Flux image automation's way: no pull request, one commit on the branch the cluster syncs
from, pushed with a lease (and signed where the user's git configuration signs).  The step
around the command's write (:class:`PushStep`): checked and committed before the write (the
checkout stays as it is, as with ``--pull-request``), pushed after it by
:func:`krm_merge.change.race.deliver`, which plans the same promotions again on the new head
each time another writer pushed first.  There a field this run sets may have been set by the
other writer to another value: :mod:`krm_merge.promote.contest` decides which stands (the
higher version), per promotion (a promotion that loses on any of its fields is left out of
the new plan), and the report says which won.
"""

from __future__ import annotations

from collections.abc import Sequence

from krm_merge.change.settings import branch_value
from krm_merge.commands.pull_request import _change, change_text
from krm_merge.errors import KrmMergeError
from krm_merge.outcomes.kinds import Message, message
from krm_merge.outcomes.report import Report
from krm_merge.promote.contest import RULE, ours_prevails
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.filemode import FileRun, plan
from krm_merge.promote.report import field_sets
from krm_merge.promote.request import Promotion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from krm_merge.change import race
    from krm_merge.promote.changes import Change

Key = tuple[str, int, str]  # file, document index, field path


def _race() -> Any:
    """:mod:`krm_merge.change.race`, through the pull-request step's door: git's steps load only when a run pushes."""
    return _change().race


class PushStep:
    """The ``--push`` step of one promote run: prepared and committed before the write, pushed after it."""

    def __init__(self, report: Report, root: str, promotions: Sequence[Promotion], *, remote: str,
                 base: str | None, attempts: int | None, skip_unreadable: bool) -> None:
        self.report = report
        self.root = root
        self.promotions = list(promotions)
        self.remote = remote
        self.base = base
        self.attempts = attempts or _race().ATTEMPTS
        self.skip_unreadable = skip_unreadable
        self.target: race.Target | None = None
        self.made: str | None = None
        self.baseline: dict[Key, str | None] = {}
        self.said: set[tuple[Key, str]] = set()  # contests reported: a later re-plan meeting the same one is quiet
        self.keep = "krm-merge/push"

    def before_write(self, run: FileRun, *, dry_run: bool) -> bool:
        """Check and commit the planned writes on the base's tip; True when committed (the files then stay)."""
        paths = [w.path for w in run.writes.writes]
        if not paths:
            return False
        try:
            self.target = _race().prepare(self.root, self.remote, self.base, paths, dry_run=dry_run)
        except KrmMergeError as err:
            raise _nothing_written(err) from None
        self.keep = "krm-merge/push/" + "+".join(dict.fromkeys(branch_value(r.rendered.describe().replace("/", "-"))
                                                              for r in run.resolved))[:100]
        if dry_run:
            self.report.add(message(f"push: would push one commit of {len(paths)} file(s) to {self.remote} "
                                    f"{self.target.base} ({self.target.head[:12]})", "info"))
            return False
        self.baseline = {_key(rel, change): change.old for rel, change in run.changes}
        text = change_text(self.report.as_written())
        try:
            self.made = _race().commit(self.target, self.target.head, [(w.path, w.data) for w in run.writes.writes],
                                    _message(text.title, text.body))
        except KrmMergeError as err:
            raise _nothing_written(err) from None
        return True

    def after_write(self, run: FileRun) -> None:
        """Push the commit; planned again on each new head the remote moved to, up to the bound."""
        if self.target is None or self.made is None:
            return
        landed = _race().deliver(self.target, self.made, self._replan, attempts=self.attempts, keep=self.keep)
        target = self.target
        again = (f" after planning again on {len(landed.replanned)} newer head(s) of {target.base}"
                 if landed.replanned else "")
        if landed.commit is None:
            self.report.add(message(f"push: nothing left to push{again}: {target.remote} {target.base} already "
                                    "says what this run would", "info"))
        else:
            self.report.add(message(f"push: pushed {landed.commit[:12]} to {target.remote} {target.base}"
                                    f"{again} ({landed.pushes} push(es))", "info"))

    def _replan(self, head: str, package: str) -> tuple[race.Files, str] | None:
        """The promotions planned on ``head``'s package; a field the other writer set is decided by the rule."""
        promotions = list(self.promotions)
        run: FileRun | None = self._plan(package, promotions, head)
        lost = self._contests(run, head) if run is not None else set()
        if lost:
            # A promotion that loses on any field is left out: its fields stay as the other writer set them.
            promotions = [p for p in promotions if not lost & {_key(rel, c) for rel, c in
                                                                 self._plan(package, [p], head).changes}]
            run = self._plan(package, promotions, head) if promotions else None
        if run is None or not run.writes.writes:
            return None
        sub = Report("promote", self.root)
        sub.subject = self.report.subject
        sub.extend(field_sets(run.changes))
        sub.add_changes(run.writes)
        text = change_text(sub.as_written())
        return [(w.path, w.data) for w in run.writes.writes], _message(text.title, text.body)

    def _plan(self, package: str, promotions: list[Promotion], head: str) -> FileRun:
        run = plan(package, promotions, skip_unreadable=self.skip_unreadable)
        errors = [o.result.message for o in run.outcomes if isinstance(o, Message) and o.severity == "error"]
        if errors:
            raise PromoteError(f"planning again on {head[:12]} of {self.target.base if self.target else 'the base'}: "
                               f"{errors[0]}")
        return run

    def _contests(self, run: FileRun, head: str) -> set[Key]:
        """The fields another writer set (to a value other than ours) whose value stands; each said in the report."""
        lost: set[Key] = set()
        for rel, change in run.changes:
            key = _key(rel, change)
            if key not in self.baseline or change.old == self.baseline[key] or change.old is None:
                continue
            won = ours_prevails(change.new, change.old)
            if not won:
                lost.add(key)
            if (key, change.old) in self.said:
                continue
            self.said.add((key, change.old))
            winner, loser = (change.new, change.old) if won else (change.old, change.new)
            self.report.add(message(
                f"push: {rel} {change.path}: another writer set {change.old} meanwhile (at {head[:12]}); "
                f"{winner} stands over {loser} ({'ours' if won else 'theirs'}: {RULE})", "info", rel))
        return lost


def _key(rel: str, change: Change) -> Key:
    return rel, change.doc, change.path


def _message(title: str, body: str) -> str:
    """The commit message: the report's title and body (no branch trailer: the base branch is not krm-merge's)."""
    title, body = title.strip(), body.strip()
    return f"{title}\n\n{body}\n" if body else f"{title}\n"


def _nothing_written(err: KrmMergeError) -> KrmMergeError:
    """A refusal before the write ends as every such refusal ends: nothing written."""
    if "nothing written" in err.message:
        return err
    return KrmMergeError(f"{err.message}; nothing written", tags=err.tags)
