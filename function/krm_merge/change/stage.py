"""``--pull-request`` of ``promote``, ``update``, ``resolve`` and a fleet update: the stage around the write.

A stage of the change pipeline (:mod:`krm_merge.change.pipeline`), not closures of a command: the command
reads its options once (:func:`~krm_merge.commands.pull_request_options.settings_from_args`) into a
:class:`Target` (named fields: the settings, the package, the branch template and its values), and the
pipeline calls, in order: :meth:`PullRequestStep.before_write` with the planned writes (it calls
:meth:`~PullRequestStep.prepare`: everything that can be refused is refused with nothing changed;
then :meth:`~PullRequestStep.make_commit` with the planned bytes: the commit and the local branch,
still before the write), its own write, then :meth:`PullRequestStep.publish` (push, pull
request) — or, with ``--dry-run``, :meth:`~PullRequestStep.preview` instead of the last three.  The pull request's
title and body are the command's report, through :func:`change_text`.  What the step did is one typed
outcome in the command's report (:class:`~krm_merge.outcomes.kinds.PullRequestOutcome`): the renderer
says it on stderr, puts the URL (or a dry run's preview) on stdout and the ``pullRequest`` entry in
``--report json``.  The git and forge work is :mod:`krm_merge.change`, loaded only when a run opens a
pull request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from krm_merge.change.settings import (
    PROMOTE_BRANCH, PipelinePullRequest, Settings, SettingsError, Target, branch_value, pipeline_pull_request)
from krm_merge.errors import KrmMergeError
from krm_merge.outcomes import render
from krm_merge.outcomes.kinds import PullRequestAction, PullRequestOutcome, message
from krm_merge.outcomes.report import Report
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.pipeline import PipelineRef, pull_request_promotion
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from krm_merge.change.forges.pacing import Tally
    from krm_merge.change.publish import Prepared, Published
    from krm_merge.change.race import Replanner
    from krm_merge.promote.request import Resolved


class ChangeText(Record):
    """The words of a change: the commit's and pull request's title, and their body (Markdown)."""

    title: str
    body: str


# --- the words ----------------------------------------------------------------------------


def change_text(report: Report) -> ChangeText:
    """Title and body of the commit and pull request: the report's title and its Markdown (the one renderer's).

    The commit is made before the write: ``report`` is the command's report as it
    will read once written (:meth:`~krm_merge.outcomes.report.Report.as_written`).
    """
    return ChangeText(render.title(report), render.report_markdown(report))


# --- a promotion's step ----------------------------------------------------------------------


def promote_step(report: Report, settings: Settings, root: str, resolved: Sequence[Resolved],
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None], *,
                 secrets_dir: str | None = None, replanner: Replanner | None = None,
                 attempts: int | None = None) -> PullRequestStep:
    """The pull-request step of a promote run (command or ``krm-merge run``): its branch names what is promoted,
    and a Pipeline's pull-request promotion fills in what the settings leave out.  ``replanner``: the plan's own
    (the command's), to plan the promotion again on the branch's new head when another run pushed to it first, at
    most ``attempts`` pushes (``--push-attempts``)."""
    slugs = list(dict.fromkeys(_slug(r) for r in resolved))
    promotion = "+".join(slugs) if len("+".join(slugs)) <= 100 else f"{slugs[0]}-and-{len(slugs) - 1}-more"
    placeholders = {"promotion": promotion}
    first = next((r for r in resolved if r.promotion.pipeline is not None), None)
    if first is not None and first.promotion.pipeline is not None:
        placeholders.update(namespace=first.promotion.pipeline.namespace, pipeline=first.promotion.pipeline.name,
                            environment=first.target or "", value=first.promotion.value)
    return PullRequestStep(report, Target(settings, root, PROMOTE_BRANCH, placeholders,
                                          _pipeline_pull_request(resolved, find_pipeline), secrets_dir),
                           replanner=replanner, attempts=attempts)


def _slug(resolved: Resolved) -> str:
    """One promotion in a branch name: ``ns-pipeline-env``, ``ns-policy``, ``image-directory``."""
    p = resolved.promotion
    if p.pipeline is not None:
        return branch_value(f"{p.pipeline.namespace}-{p.pipeline.name}-{resolved.target}")
    if p.image_policy is not None:
        return branch_value(p.image_policy.replace(":", "-"))
    return branch_value(f"{p.image}-{resolved.scope or ''}")


def _pipeline_pull_request(resolved: Sequence[Resolved], find_pipeline: Callable[[PipelineRef], dict[str, Any] | None],
                           ) -> PipelinePullRequest | None:
    """The pull-request promotion of the run's Pipeline (the one all its pipeline promotions agree on), if any."""
    found: dict[str, PipelinePullRequest] = {}
    for r in resolved:
        ref = r.promotion.pipeline
        pipeline = find_pipeline(ref) if ref is not None else None
        block = pull_request_promotion(pipeline, r.target or "") if pipeline is not None and ref is not None else None
        if block is not None and ref is not None:
            try:
                settings = pipeline_pull_request(block, ref.namespace)
            except SettingsError as err:
                raise PromoteError(f"Pipeline {ref}: {err}") from None
            found[f"Pipeline {ref} {settings.where}"] = settings
    if len(set(found.values())) > 1:
        raise PromoteError("the promotions' Pipelines ask for different pull requests (" + ", ".join(found)
                           + "): promote them in separate runs")
    return next(iter(found.values()), None)


# --- the step -------------------------------------------------------------------------------


class PullRequestStep:
    """The pull-request step of one command run: prepared before the write, published after it.

    What it did (or, failing, which step failed) joins the command's ``report`` as a
    :class:`~krm_merge.outcomes.kinds.PullRequestOutcome`, and what pacing the forge's
    requests warned of (a broken pacing state) as warnings.  ``tally`` counts the forge's
    requests and the time waited for its budget (a fleet hands one to all its steps; by
    default the step's own).  ``replanner`` (a promotion's): when another run pushed to the branch first, the
    promotion planned again on its new head (:mod:`krm_merge.change.race`'s loop, at most ``attempts`` pushes,
    ``pause`` between them); without it the run stands aside only when the other run pushed this very change.
    """

    def __init__(self, report: Report, target: Target, *, client: Mapping[str, Any] | None = None,
                 tally: Tally | None = None, replanner: Replanner | None = None, attempts: int | None = None,
                 pause: Callable[[int], None] | None = None) -> None:
        self.report = report
        self.target = target
        self.client = client
        self.tally = tally
        self.replanner = replanner
        self.attempts = attempts
        self.pause = pause
        self.prepared: Prepared | None = None
        self.made: str | None = None
        self.text = ChangeText("", "")

    def before_write(self, writes: Sequence[Any], written: Callable[[], Report], *, dry_run: bool) -> bool:
        """All of the step that comes before the command's write: the checks, then the commit of the planned
        ``writes`` (a dry run: its preview), worded by ``written()``, the command's report as the write would
        leave it (:func:`change_text`).  What it refuses leaves every file as it was, and its error says so.

        True when the change is committed on the pull request's branch: the command then leaves the files as
        they are (the user's checkout never holds the change uncommitted, so pulling the merged pull request
        needs no manual step)."""
        paths = [w.path for w in writes]
        try:
            self.prepare(paths, dry_run=dry_run)
            text = change_text(written())
            if dry_run:
                self.preview(paths, text)
                return False
            self.make_commit(writes, text)
        except KrmMergeError as err:
            raise nothing_written(err) from None
        return True

    def prepare(self, package_paths: Sequence[str], *, dry_run: bool) -> None:
        """Check the work tree, remote, base, branch and forge before the command writes ``package_paths``."""
        change = _change()
        request = self._request(change, pipeline=True)
        self.prepared = self._recorded(lambda: change.prepare(request, list(package_paths), dry_run=dry_run))

    def make_commit(self, writes: Sequence[Any], text: ChangeText) -> None:
        """Make the commit of the planned ``writes`` (``krm.pkgio.Write``: path, new bytes) before they are written."""
        assert self.prepared is not None, "prepare() first"
        self.text = text
        files = [(w.path, w.data) for w in writes]
        self.made = self._recorded(lambda: _change().commit(self.prepared, files, text.title, text.body))

    def publish(self) -> None:
        """Push the commit and open or update the pull request (the report's outcome: opened, updated, ...)."""
        assert self.prepared is not None, "prepare() and make_commit() first"
        replan = self._replan if self.replanner is not None else None
        published = self._recorded(lambda: _change().publish(self.prepared, self.made, self.text.title,
                                                              self.text.body, replan=replan,
                                                              attempts=self.attempts, pause=self.pause))
        self.report.extend(message(text, "info") for text in published.said)
        self.report.add(_outcome(published))

    def _replan(self, head: str, package: str) -> tuple[list[tuple[str, bytes | None]], str, str] | None:
        """:data:`krm_merge.change.publish.BranchReplan`: the plan's replanner on ``head``'s package (the contests
        it meets said in the report), its words the commit's."""
        assert self.replanner is not None and self.prepared is not None
        planned = self.replanner.replan(head, self.prepared.branch, package, self.report)
        if planned is None:
            return None
        text = change_text(planned.words)
        return list(planned.files), text.title, text.body

    def _request(self, change: Any, *, pipeline: bool) -> Any:
        """The git side's request (:class:`krm_merge.change.publish.Request`) of the target; ``pipeline``: with the
        Pipeline's pull-request promotion and its token's folder (a resolution works on the update's branch)."""
        if self.tally is None:
            self.tally = change.Tally()
        t = self.target
        return change.Request(t.settings, t.package_dir, t.branch_template, dict(t.placeholders),
                              t.pipeline if pipeline else None, t.secrets_dir if pipeline else None, None,
                              {**(self.client or {}), "tally": self.tally})

    def _recorded(self, step: Callable[[], Any]) -> Any:
        """Run one step; its error becomes the report's failed outcome (which step), and is raised."""
        try:
            return step()
        except KrmMergeError as err:
            self._warnings()
            where = self.prepared
            self.report.add(PullRequestOutcome(
                PullRequestAction.FAILED, branch=where.branch if where else "", base=where.base if where else "",
                step=str((err.tags or {}).get("step", "")), error=err.message))
            raise
        finally:
            self._warnings()

    def _warnings(self) -> None:
        """What pacing the forge's requests warned of (a broken pacing state), in the report once."""
        for text in self.tally.new_warnings() if self.tally is not None else ():
            self.report.add(message(f"pull request: {text}"))

    def preview(self, package_paths: Sequence[str], text: ChangeText) -> None:
        """``--dry-run``: the branch, the commit message and the pull request it would open (the report's outcome)."""
        assert self.prepared is not None, "prepare() first"
        published, words = _change().preview(self.prepared, list(package_paths), text.title, text.body)
        self._warnings()
        self.report.add(_outcome(published, files=len(package_paths) if words else 0, message=words))

    @contextmanager
    def branch_package(self) -> Iterator[str]:
        """``resolve --pull-request``, first half: the package as the pull request's branch holds it, read into a
        scratch folder that lives as long as the ``with`` block (the command decides its conflicts there, then
        calls :meth:`commit_resolution`).  The user's files, index and HEAD stay as they are."""
        change = _change()
        request = self._request(change, pipeline=False)
        self.prepared = self._recorded(lambda: change.prepare_resolution(request))
        with change.scratch_folder() as scratch:
            yield self._recorded(lambda: change.branch_package(self.prepared, scratch))

    def commit_resolution(self, planned: Sequence[tuple[str, bytes | None]], text: ChangeText, taken: str) -> None:
        """``resolve --pull-request``, second half: the files the decision changes (package path, new bytes or
        None) as one commit on the branch, pushed with a lease, and the pull request saying what is left; with
        nothing decided the branch stays as it is and only the pull request's words change."""
        assert self.prepared is not None, "branch_package() first"
        change = _change()
        self.text = text
        if planned:
            self.made = self._recorded(lambda: change.commit_resolution(self.prepared, list(planned), text.title,
                                                                        text.body, taken))
        else:  # nothing decided: the branch stays as it is, and words the pull request
            self.made = self.prepared.remote_sha
            self.prepared.words = self._recorded(lambda: change.branch_words(self.prepared, self.made))
        self.publish()

    @property
    def package_name(self) -> str:
        """The package's path in the repository (the repository's folder name for a package at its top)."""
        assert self.prepared is not None, "prepare() first"
        return str(self.prepared.tree.package_name)


def nothing_written(err: KrmMergeError) -> KrmMergeError:
    """A refusal before the command's write, its message ending as every such refusal ends: nothing written."""
    if "nothing written" in err.message or "nothing was sent, written" in err.message:
        return err
    return KrmMergeError(f"{err.message}; nothing written", resource=err.resource, field=err.field, file=err.file,
                         tags=err.tags)


def _outcome(published: Published, files: int = 0, message: str = "") -> PullRequestOutcome:
    """The report's outcome of what :mod:`krm_merge.change.publish` did (or would do)."""
    return PullRequestOutcome(PullRequestAction(published.action), published.forge, published.repo,
                              published.branch, published.base, published.url, published.number, published.commit,
                              tuple(published.notes), files, message)


def new_tally() -> Tally:
    """A count of the forges' requests and waits to hand to several steps (a fleet's pull requests)."""
    tally: Tally = _change().Tally()
    return tally


def _change() -> Any:
    """The git and forge side (:mod:`krm_merge.change.publish`), loaded when a run opens a pull request."""
    # start-up: only a run with --pull-request loads git's steps, the forges and urllib (~20 ms of imports).
    from krm_merge.change import publish

    return publish
