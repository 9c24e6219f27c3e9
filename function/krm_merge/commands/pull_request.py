"""``--pull-request`` of ``promote`` and ``update``: the options, and the step around the command's write.

A command that takes ``--pull-request`` calls, in order: :func:`settings_from_args`
(the options read), :meth:`PullRequestStep.prepare` with the files its plan writes
(everything that can be refused is refused with nothing changed),
:meth:`PullRequestStep.make_commit` with the planned bytes (the commit and the local branch,
still before the write), its own write, then :meth:`PullRequestStep.publish` (push, pull
request) — or, with ``--dry-run``, :meth:`PullRequestStep.preview` instead of the last three.  The pull request's
title and body are the command's report, through :func:`change_text`.  The git and forge
work is :mod:`krm_merge.change`, loaded only when a run opens a pull request.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from krm_merge.change.settings import (
    FORGES, PipelinePullRequest, Settings, SettingsError, branch_value, forge_name, pipeline_pull_request)
from krm_merge.commands.reporting import update_report_markdown
from krm_merge.errors import KrmMergeError
from krm_merge.krm.results import Result, Results, emit
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.pipeline import PipelineRef, pull_request_promotion
from krm_merge.promote.report import to_markdown

if TYPE_CHECKING:
    import argparse

    from krm_merge.change.publish import Prepared, Published
    from krm_merge.promote.request import Resolved

PROMOTE_BRANCH = "krm-merge/promote/{promotion}"
"""A promotion's branch: ``{promotion}`` is ``<namespace>-<pipeline>-<environment>`` of a pipeline promotion
(``<namespace>-<policy>`` of an image policy, ``<image>-<directory>`` of a kustomize image), several
promotions' joined by ``+``."""

OPTION_DEFAULTS: dict[str, Any] = {
    "pull_request": False, "branch": None, "base": None, "remote": None, "forge": None, "forge_api": None,
    "forge_repo": None, "label": None, "reviewer": None,
}
"""The options' values when not given (``update``'s plain form takes them from here)."""


class ChangeText(NamedTuple):
    """The words of a change: the commit's and pull request's title, and their body (Markdown)."""

    title: str
    body: str


def add_options(parser: argparse.ArgumentParser, *, default_branch: str) -> None:
    """The ``--pull-request`` options, in their own group of ``parser``'s help."""
    group = parser.add_argument_group("pull request", "commit the change on a branch, push it and open (or update) "
                                      "a pull request; see docs/pull-requests.md")
    group.add_argument("--pull-request", action="store_true",
                       help="after writing: one commit of the changed files on a branch, pushed with a lease, and "
                            "a pull request whose title and body are the report (its URL on stdout)")
    group.add_argument("--branch", metavar="TEMPLATE", help=f"the branch (default {default_branch})")
    group.add_argument("--base", metavar="BRANCH", help="the branch to merge into (default: the remote's default branch)")
    group.add_argument("--remote", metavar="NAME", help="the remote to push to (default origin)")
    group.add_argument("--forge", choices=FORGES, help="the forge's API (default: told by the remote's host); "
                       "Forgejo is gitea")
    group.add_argument("--forge-api", metavar="URL", help="the forge's API URL (self-hosted; default from the remote's host)")
    group.add_argument("--forge-repo", metavar="OWNER/NAME", help="the repository on the forge (default: from the remote's URL)")
    group.add_argument("--label", action="append", metavar="LABEL", help="add a label (repeatable)")
    group.add_argument("--reviewer", action="append", metavar="USER",
                       help="request a review (repeatable; ORG/TEAM for a team on GitHub and Gitea)")


def settings_from_args(args: Any) -> Settings | None:
    """The pull-request settings of the options; None without ``--pull-request``.  SettingsError for misuse."""
    given = [f"--{name.replace('_', '-')}" for name, default in OPTION_DEFAULTS.items()
             if name != "pull_request" and getattr(args, name, default) not in (None, [], default)]
    if not args.pull_request:
        if given:
            raise SettingsError(given[0], "goes with --pull-request")
        return None
    return Settings(branch=args.branch, base=args.base, remote=args.remote or "origin",
                    forge=forge_name(args.forge, "--forge") if args.forge else None, forge_api=args.forge_api,
                    forge_repo=args.forge_repo, labels=tuple(args.label or ()), reviewers=tuple(args.reviewer or ()))


# --- the words ----------------------------------------------------------------------------


def change_text(command: str, report: Any) -> ChangeText:
    """Title and body of the commit and pull request: the command's report summary line and its Markdown.

    The one place the pull-request step takes the reports' words (the reports are rendered by
    their commands: ``promote``'s by :mod:`krm_merge.promote.report`, ``update``'s by
    :mod:`krm_merge.commands.reporting`); point it at a new renderer and both commands follow.
    ``report`` is ``(entries, summary)`` for promote and ``(title, report dict)`` for update.
    """
    if command == "promote":
        entries, summary = report
        return ChangeText(summary, to_markdown(entries, summary))
    title, data = report
    return ChangeText(title, update_report_markdown(data))


# --- a promotion's step ----------------------------------------------------------------------


def promote_step(prog: str, results: Results, settings: Settings, root: str, resolved: Sequence[Resolved],
                 find_pipeline: Callable[[PipelineRef], dict[str, Any] | None], *,
                 secrets_dir: str | None = None) -> PullRequestStep:
    """The pull-request step of a promote run (command or ``krm-merge run``): its branch names what is promoted,
    and a Pipeline's pull-request promotion fills in what the settings leave out."""
    slugs = list(dict.fromkeys(_slug(r) for r in resolved))
    promotion = "+".join(slugs) if len("+".join(slugs)) <= 100 else f"{slugs[0]}-and-{len(slugs) - 1}-more"
    placeholders = {"promotion": promotion}
    first = next((r for r in resolved if r.promotion.pipeline is not None), None)
    if first is not None and first.promotion.pipeline is not None:
        placeholders.update(namespace=first.promotion.pipeline.namespace, pipeline=first.promotion.pipeline.name,
                            environment=first.target or "", value=first.promotion.value)
    return PullRequestStep(prog, results, settings, root, branch_template=PROMOTE_BRANCH, placeholders=placeholders,
                           pipeline=_pipeline_pull_request(resolved, find_pipeline), secrets_dir=secrets_dir)


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

    ``prog`` names the command in its stderr lines; ``results`` is the command's result list
    (what the step says joins it, for ``--results``).
    """

    def __init__(self, prog: str, results: Results, settings: Settings, package_dir: str, *,
                 branch_template: str, placeholders: Mapping[str, str], pipeline: PipelinePullRequest | None = None,
                 secrets_dir: str | None = None, client: Mapping[str, Any] | None = None) -> None:
        self.prog = prog
        self.results = results
        self.request_args = (settings, package_dir, branch_template, dict(placeholders), pipeline, secrets_dir)
        self.client = client
        self.prepared: Prepared | None = None
        self.published: Published | None = None
        self.failed: KrmMergeError | None = None
        self.made: str | None = None
        self.text = ChangeText("", "")

    def prepare(self, package_paths: Sequence[str], *, dry_run: bool) -> None:
        """Check the work tree, remote, base, branch and forge before the command writes ``package_paths``."""
        change = _change()
        settings, package_dir, template, values, pipeline, secrets_dir = self.request_args
        request = change.Request(settings, package_dir, template, values, pipeline, secrets_dir, None, self.client)
        self.prepared = self._recorded(lambda: change.prepare(request, list(package_paths), dry_run=dry_run))

    def make_commit(self, writes: Sequence[Any], text: ChangeText) -> None:
        """Make the commit of the planned ``writes`` (``krm.pkgio.Write``: path, new bytes) before they are written."""
        assert self.prepared is not None, "prepare() first"
        self.text = text
        files = [(w.path, w.data) for w in writes]
        self.made = self._recorded(lambda: _change().commit(self.prepared, files, text.title, text.body))

    def publish(self) -> Published:
        """Push the commit and open or update the pull request; its URL on stdout, a line on stderr."""
        assert self.prepared is not None, "prepare() and make_commit() first"
        published = self._recorded(lambda: _change().publish(self.prepared, self.made, self.text.title,
                                                              self.text.body))
        self.published = published
        self._say_notes(published)
        if published.url is None:
            self._say(f"no pull request: nothing to change (branch {published.branch})")
            return published
        verb = {"opened": "opened", "updated": "updated", "unchanged": "already up to date"}[published.action]
        noun = f"merge request !{published.number}" if published.forge == "gitlab" else f"pull request #{published.number}"
        self._say(f"{noun} {verb}: {published.branch} into {published.base} (commit {str(published.commit)[:12]})")
        sys.stdout.write(published.url + "\n")
        return published

    def _recorded(self, step: Callable[[], Any]) -> Any:
        """Run one step; its error is kept for the report's ``pullRequest`` entry, and raised."""
        try:
            return step()
        except KrmMergeError as err:
            self.failed = err
            raise

    def preview(self, package_paths: Sequence[str], text: ChangeText) -> Published:
        """``--dry-run``: the branch, the commit message and the pull request it would open, on stdout."""
        assert self.prepared is not None, "prepare() first"
        published, message = _change().preview(self.prepared, list(package_paths), text.title, text.body)
        self.published = published
        if not message:
            sys.stdout.write("pull request (dry run): nothing to change, no pull request\n")
            return published
        where = f"{published.forge} {published.repo}"
        which = f" #{published.number} ({published.url})" if published.url else ""
        sys.stdout.write(f"pull request (dry run): {published.action} a pull request{which} on {where}: "
                         f"branch {published.branch} into {published.base}, {len(package_paths)} file(s)\n")
        sys.stdout.write("commit message:\n" + "".join(f"    {line}".rstrip() + "\n" for line in message.split("\n")))
        return published

    @property
    def package_name(self) -> str:
        """The package's path in the repository (the repository's folder name for a package at its top)."""
        assert self.prepared is not None, "prepare() first"
        return str(self.prepared.tree.package_name)

    def report_entry(self) -> dict[str, Any] | None:
        """The ``pullRequest`` entry of ``--report json``, once the step ran (or failed: the error and its step)."""
        if self.failed is not None:
            tags = self.failed.tags or {}
            return {"error": self.failed.message, "step": tags.get("step", "")}
        return self.published.to_dict() if self.published is not None else None

    def _say(self, message: str, severity: str = "info") -> None:
        result = Result(message, severity)
        self.results.append(result)
        emit(self.prog, [result])

    def _say_notes(self, published: Published) -> None:
        for note in published.notes:
            self._say(note, "warning")


def _change() -> Any:
    """The git and forge side (:mod:`krm_merge.change.publish`), loaded when a run opens a pull request."""
    # start-up: only a run with --pull-request loads git's steps, the forges and urllib (~20 ms of imports).
    from krm_merge.change import publish

    return publish
