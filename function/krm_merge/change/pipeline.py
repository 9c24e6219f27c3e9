"""The one change pipeline of every writing command: plan → validate → (commit) → write → publish → render.

``update``, ``promote``, ``resolve`` (through its stage) and each package of a fleet update run
:func:`run`: the command hands it a typed value, never a closure of its own:

* a :class:`Planner` from the engine's layer (:class:`krm_merge.update.git.UpdatePlanner`,
  :class:`krm_merge.promote.filemode.FilePlanner`): it plans under the package lock and returns a
  :class:`Planned` (the writes, whether an error stopped them, the checks the write makes, the
  write itself);
* the pull-request :class:`~krm_merge.change.stage.Target` (or a promotion's
  :class:`PromoteTarget`, whose branch and Pipeline come from the plan), a promotion's
  :class:`PushTarget` (``promote --push``: the stage :mod:`krm_merge.change.push_stage`, which commits on
  the base branch and plans again with the plan's own replanner when another writer pushed first), or None.

In order: the plan (its outcomes in the report); nothing more when an error stopped it
(``not written``); the write's checks (dry runs alike: a dry run refuses what the write would,
and its diff is made); with ``--pull-request`` the stage's checks and its commit of the planned
bytes (worded by the report as the write will leave it), a refusal ending with the documented
"nothing written"; the transaction's write (not with ``--pull-request``: the change is committed
on its branch and the user's files stay as they are); then what the write leaves is said, and the
stage publishes.  Nothing says "set" or "changed" before the write: the report's state is what the
renderer reads (:mod:`krm_merge.outcomes.render`).  :func:`run_command` wraps that with what comes
before and after it on a command line: the destinations refused before anything is read, the
render last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

from krm_merge.change.settings import PushTarget, Settings, Target
from krm_merge.outcomes import render
from krm_merge.outcomes.report import Report, State
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from krm_merge.change.push_stage import PushStep
    from krm_merge.change.race import Replanner
    from krm_merge.change.stage import PullRequestStep
    from krm_merge.errors import KrmMergeError
    from krm_merge.promote.pipeline import PipelineRef
    from krm_merge.promote.request import Resolved

    Finder = Callable[[PipelineRef], "dict[str, Any] | None"]

    class Planned(Protocol):
        """A planned change, as the pipeline sees it (the engine's own type implements it)."""

        @property
        def planned_writes(self) -> Sequence[Any]: ...  # krm.pkgio.Write: path, new bytes

        @property
        def stop(self) -> State | None: ...  # the state a run ends in before the write (an error: not written)

        def check(self) -> None: ...  # what the write checks, before it (a refused write gets no commit)

        def diff(self) -> Iterator[str]: ...  # a dry run's unified diff

        def write(self) -> None: ...  # the one transaction

        def written(self, package_name: str | None) -> Report: ...  # the report as the write leaves it

        def done(self, *, on_branch: bool) -> None: ...  # after the write: what it leaves, said

    class Planner(Protocol):
        """Plans under the package lock (held for the ``with`` block: from the read to the write)."""

        def plan(self, report: Report) -> AbstractContextManager[Planned]: ...

    class BranchPlanned(Planned, Protocol):
        """A resolution's plan: its commit's words (title, body)."""

        def words(self) -> tuple[str, str]: ...

    class BranchPlanner(Planner, Protocol):
        """Plans a change of the package as a pull request's branch holds it (``resolve --pull-request``)."""

        @property
        def take(self) -> str: ...

        def plan_at(self, folder: str, report: Report) -> BranchPlanned: ...

    class PromotePlanned(Planned, Protocol):
        """A promotion's plan: what it resolved names its pull request's branch and Pipeline; its replanner plans
        it again on the branch's new head when another run pushed to the branch first."""

        @property
        def resolved(self) -> Sequence[Resolved]: ...

        @property
        def find_pipeline(self) -> Finder: ...

        @property
        def pipeline_asks(self) -> bool | None: ...  # --event: the Pipeline's promotion is a pull request

        def replanner(self) -> Replanner: ...

    class PushPlanned(Planned, Protocol):
        """A plan that can be made again on a newer head of the base branch (``promote --push``)."""

        def replanner(self) -> Replanner: ...


class PromoteTarget(Record):
    """A promotion's pull request: the settings, the tree, the token folder; its branch and its Pipeline's
    pull-request promotion come from the plan.  ``if_pipeline_asks`` (``promote --event`` without
    ``--pull-request``): only when the Pipeline's promotion for the target environment is a pull request.
    ``attempts``: the pushes in all when other runs keep pushing to the branch first (``--push-attempts``; None:
    :data:`krm_merge.change.race.ATTEMPTS`)."""

    settings: Settings
    root: str
    secrets_dir: str | None = None
    if_pipeline_asks: bool = False
    attempts: int | None = None


class Output(Record):
    """Where a command's report goes: ``--results FILE``, ``--report FORMAT FILE``, ``--quiet``."""

    results: str | None = None
    report: tuple[str, str] | None = None
    quiet: bool = False


def run(planner: Planner, report: Report, *, target: Target | PromoteTarget | PushTarget | None = None,
        dry_run: bool = False) -> Iterator[str]:
    """Plan, validate, commit (``--pull-request``), write and publish one change; what happened is in ``report``
    (its state says whether anything was written).  Returns a dry run's diff (empty otherwise).  Errors are
    raised (the caller's :meth:`Report.guard` makes them the report's)."""
    with planner.plan(report) as planned:
        if planned.stop is not None:
            report.state = planned.stop
            return iter(())
        stage = _stage(report, target, planned)
        diff: Iterator[str] = iter(())
        if dry_run:
            diff = planned.diff()
        elif stage is not None:
            planned.check()  # before the pull request's commit: a refused write gets none
        kept = False
        if stage is not None:
            publishing = stage
            kept = stage.before_write(planned.planned_writes, lambda: planned.written(publishing.package_name),
                                      dry_run=dry_run)
        if dry_run:
            report.state = State.DRY_RUN
            return diff
        if not kept:
            planned.write()
        report.state = State.WRITTEN
        planned.done(on_branch=stage is not None)
        if stage is not None:
            stage.publish()
        return iter(())


def run_on_branch(planner: BranchPlanner, report: Report, target: Target) -> None:
    """``resolve --pull-request``: the change planned on the package as the pull request's branch holds it (read
    into a scratch folder), committed on that branch, pushed with a lease, and the pull request saying what is
    left.  The user's files, index and HEAD stay as they are."""
    stages = _stages()
    step = stages.PullRequestStep(report, target)
    with step.branch_package() as package:
        planned = planner.plan_at(package, report)
        planned.done(on_branch=True)
        text = stages.ChangeText(*planned.words())
        writes = [(w.path, w.data) for w in planned.planned_writes]
    step.commit_resolution(writes, text, planner.take)
    report.state = State.WRITTEN  # committed on the branch and published (a failure before: the error says)


def run_command(planner: Planner | KrmMergeError, report: Report, output: Output, *,
                target: Target | PromoteTarget | PushTarget | None = None, dry_run: bool = False,
                on_branch: bool = False,
                describe: Callable[[KrmMergeError], str] | None = None) -> int:
    """A writing command's whole run: its destinations refused before anything is read or written (dry runs
    alike), :func:`run`, then the render (only the document asked for on stdout: a report to ``-``, else a dry
    run's diff).  Returns the exit code.  ``planner`` may be the error that kept the command from building its
    request (a bad ``PKG@REF``): the run's error, said once the destinations are checked.  ``on_branch``: the
    change is made on the pull request's branch (:func:`run_on_branch`), not in the user's files."""
    refused = render.refuse_destinations(report, output.results, output.report, quiet=output.quiet)
    if refused is not None:
        return refused
    diff = report.guard(lambda: _run_or_raise(planner, report, target, dry_run, on_branch), describe=describe)
    return render.finish(report, results_file=output.results, report_to=output.report, quiet=output.quiet,
                         document=diff or ())


def _run_or_raise(planner: Planner | KrmMergeError, report: Report, target: Target | PromoteTarget | PushTarget | None,
                  dry_run: bool, on_branch: bool) -> Iterator[str]:
    if isinstance(planner, BaseException):
        raise planner
    if on_branch and isinstance(target, Target):
        run_on_branch(planner, report, target)  # type: ignore[arg-type]
        return iter(())
    return run(planner, report, target=target, dry_run=dry_run)


def _stage(report: Report, target: Target | PromoteTarget | PushTarget | None,
           planned: Planned) -> PullRequestStep | PushStep | None:
    """The stage of the run around its write: the pull request (a promotion's is named by what its plan
    resolved), or ``--push`` (given the plan's replanner)."""
    if target is None:
        return None
    stages = _stages()
    if isinstance(target, PushTarget):
        pushing: PushPlanned = planned  # type: ignore[assignment]
        push: PushStep = stages.PushStep(report, target, pushing.replanner())
        return push
    if isinstance(target, PromoteTarget):
        promotion: PromotePlanned = planned  # type: ignore[assignment]
        if target.if_pipeline_asks and not promotion.pipeline_asks:
            return None
        step: PullRequestStep = stages.promote_step(report, target.settings, target.root, promotion.resolved,
                                                    promotion.find_pipeline, secrets_dir=target.secrets_dir,
                                                    replanner=promotion.replanner(), attempts=target.attempts)
        return step
    made: PullRequestStep = stages.PullRequestStep(report, target)
    return made


def _stages() -> Any:
    """:mod:`krm_merge.change.stages`, loaded when a run opens a pull request or pushes to the base branch."""
    # start-up: only a run with --pull-request or --push loads the stages, their words and git's steps
    from krm_merge.change import stages

    return stages


__all__ = ["Output", "PromoteTarget", "PushTarget", "run", "run_command", "run_on_branch"]
