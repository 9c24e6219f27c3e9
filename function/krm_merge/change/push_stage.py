"""``promote --push``: the stage of the change pipeline that delivers a promotion as one commit on the base branch.

Flux image automation's way: no pull request, one commit on the branch the cluster syncs from,
pushed with a lease (and signed where the user's git configuration signs).  A stage next to the
pull-request stage (:mod:`krm_merge.change.stage`), called by :func:`krm_merge.change.pipeline.run` in
the same order: :meth:`PushStep.before_write` with the planned writes (the checks and the commit on the
base's tip, before the write; the checkout stays as it is), then :meth:`PushStep.publish`, which pushes
it through :func:`krm_merge.change.race.deliver`.  Each time another writer pushed first the same
promotions are planned again on the new head by the plan's own :class:`Replanner` (a value from the
engine's layer, :class:`krm_merge.promote.filemode.Replanner`, never a function of the command), which
decides each field the other writer set by the race rule and says it in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from krm_merge.change import race
from krm_merge.change.settings import branch_value
from krm_merge.change.stage import change_text, nothing_written
from krm_merge.errors import KrmMergeError
from krm_merge.outcomes.kinds import Kind, message
from krm_merge.outcomes.report import Report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from krm_merge.change.race import Replanner
    from krm_merge.change.settings import PushTarget


class PushStep:
    """The ``--push`` stage of one run: prepared and committed before the write, pushed after it."""

    def __init__(self, report: Report, target: PushTarget, replanner: Replanner, *,
                 pause: Callable[[int], None] | None = None) -> None:
        self.report = report
        self.target = target
        self.replanner = replanner
        self.pause = pause
        self.base: race.Target | None = None
        self.made: str | None = None
        self.committed = False  # before_write() made the first commit (or found nothing left to commit)
        self._tip_words: Report | None = None  # the words of the first plan made on the tip (a checkout behind)

    def before_write(self, writes: Sequence[Any], written: Callable[[], Report], *, dry_run: bool) -> bool:
        """Check, then commit the planned ``writes`` on the base's tip (worded by ``written()``, the report as the
        write leaves it); True when committed (the files then stay as they are).  A dry run only reads the remote
        and says what it would push.  What is refused here leaves every file as it was, and its error says so."""
        paths = [w.path for w in writes]
        if not paths:
            return False
        t = self.target
        try:
            self.base = race.prepare(t.root, t.remote, t.base, paths, dry_run=dry_run)
            head = self.base.head or ""  # prepare() found the base branch: it has a head
            if dry_run:
                behind = "; HEAD is behind it: the commit would be planned again on its tip" if self.base.behind else ""
                self.report.add(message(f"push: would push one commit of {len(paths)} file(s) to {t.remote} "
                                        f"{self.base.base} ({head[:12]}){behind}", "info"))
                return False
            if self.base.behind:
                # The checkout's plan was made on older files: what is pushed is the plan made on the tip.
                self.report.add(message(f"push: HEAD is behind {t.remote} {self.base.base}: the promotion is planned "
                                        f"again on its tip ({head[:12]})", "info"))
                self.made = race.commit_replanned(self.base, head, self._replan)
                self._said_by_tip()
            else:
                text = change_text(written())
                self.made = race.commit(self.base, head, [(w.path, w.data) for w in writes],
                                        _message(text.title, text.body))
            self.committed = True
        except KrmMergeError as err:
            raise nothing_written(err) from None
        return True

    def publish(self) -> None:
        """Push the commit; planned again on each new head the remote moved to, up to the bound."""
        if self.base is None or not self.committed:
            return
        base = self.base
        if self.made is None:  # behind: the tip already says it (another writer's value stood)
            self.report.add(message(f"push: nothing left to push: {base.remote} {base.base} already says what this "
                                    "run would", "info"))
            return
        keep = "krm-merge/push/" + "+".join(dict.fromkeys(branch_value(name.replace("/", "-"))
                                                          for name in self.replanner.names))[:100]
        landed = race.deliver(base, self.made, self._replan, attempts=self.target.attempts or race.ATTEMPTS,
                              keep=keep, pause=self.pause)
        again = (f" after planning again on {len(landed.replanned)} newer head(s) of {base.base}"
                 if landed.replanned else "")
        if landed.commit is None:
            self.report.add(message(f"push: nothing left to push{again}: {base.remote} {base.base} already "
                                    "says what this run would", "info"))
        else:
            self.report.add(message(f"push: pushed {landed.commit[:12]} to {base.remote} {base.base}"
                                    f"{again} ({landed.pushes} push(es))", "info"))

    def _said_by_tip(self) -> None:
        """The fields set and files changed, as the plan made on the tip has them (not the checkout's plan): the
        report says what is pushed; none when the tip already says it all."""
        said = {Kind.FIELD_SET, Kind.FILE_CHANGED}
        tip = [o for o in self._tip_words.outcomes if o.kind in said] if self._tip_words is not None else []
        outcomes = self.report.outcomes
        at = next((i for i, o in enumerate(outcomes) if o.kind in said), len(outcomes))  # where the plan said them
        kept = [o for o in outcomes if o.kind not in said]  # before ``at`` nothing is taken out
        self.report.outcomes = kept[:at] + tip + kept[at:]

    @property
    def package_name(self) -> str:
        """The package's path in the repository (the repository's folder name for a package at its top)."""
        assert self.base is not None, "before_write() first"
        return str(self.base.tree.package_name)

    def _replan(self, head: str, package: str) -> tuple[race.Files, str] | None:
        """:data:`race.Replan`: the plan's replanner on ``head``'s package, its words the commit message."""
        assert self.base is not None
        planned = self.replanner.replan(head, self.base.base, package, self.report)
        if self.made is None and not self.committed:
            self._tip_words = planned.words if planned is not None else None
        if planned is None:
            return None
        text = change_text(planned.words)
        return list(planned.files), _message(text.title, text.body)


def _message(title: str, body: str) -> str:
    """The commit message: the report's title and body (no branch trailer: the base branch is not krm-merge's)."""
    title, body = title.strip(), body.strip()
    return f"{title}\n\n{body}\n" if body else f"{title}\n"


__all__ = ["PushStep"]
