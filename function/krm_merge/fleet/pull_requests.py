"""``--pull-request`` of a fleet update: one branch and pull request per package, or per consumers' repository.

The same step as a single ``krm-merge update --pull-request``
(:class:`~krm_merge.change.stage.PullRequestStep`, the same options,
forges, token handling and checks), run by the fleet's main process around its
workers, so no two processes ever touch one git repository's refs at once:

1. :meth:`FleetPullRequests.prepare`, before any package is updated: the
   packages are grouped (``--pull-request-per package``: each on its own;
   ``repo``, the default: every package of one consumers' git work tree), and
   each group's step checks its work tree, remote, base, branch and token for
   the package folders it will change.  A group refused here has its packages
   reported ``failed`` with the step's error and none of them is updated, as a
   refused single update writes nothing.
2. The workers update the packages; each sends back its planned file bytes and,
   per package, the words of its pull request (its own update report, titled by
   its path in the repository, as a single update's).
3. :meth:`FleetPullRequests.finish`: per group, one commit of the written
   packages' planned bytes on the base's tip, pushed with a lease, and the pull
   request opened or updated (``--dry-run``: its preview).  A package that failed,
   or that a conflict stopped (``--conflicts fail``: nothing written), puts
   nothing in it: such a package gets no pull request, as with a single update;
   a package whose conflicts were marked (``--conflicts mark``) goes up with its
   markers, as with a single update.

Each step's outcome (opened, updated, failed at which step) is a
:class:`~krm_merge.outcomes.kinds.PullRequestOutcome` of the fleet report.  Every
step's forge requests are paced by one budget per API host and identity, shared with
other processes (the shards) through the cache (:mod:`krm_merge.change.forges.pacing`);
what they asked of each forge, in requests and seconds waited for its budget, is a
:class:`~krm_merge.outcomes.kinds.ForgeRequests` of the report (:meth:`FleetPullRequests.account`).
Unlike a single update, the commit is made after the packages' writes (it
holds all of a repository's packages): a commit or push that fails then leaves
the packages written, and says so in its outcome.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from krm_merge.change.redact import Redactor
from krm_merge.change.settings import Settings, Target
from krm_merge.change.stage import ChangeText, PullRequestStep, change_text, new_tally
from krm_merge.change.worktree import open_work_tree
from krm_merge.errors import KrmMergeError
from krm_merge.outcomes.kinds import FleetScope, ForgeRequests, PackageUpdate
from krm_merge.outcomes.report import Report
from krm_merge.records import Record

if TYPE_CHECKING:
    from krm_merge.change.forges.pacing import Tally
    from krm_merge.fleet.select import Package

PER = ("repo", "package")
"""``--pull-request-per``'s values; the first is the default."""
PACKAGE_BRANCH = "krm-merge/update/{package}"
"""A package's own branch: the single ``update --pull-request``'s, so one package never has two pull requests."""
REPO_BRANCH = "krm-merge/fleet/{upstream}"
"""A repository's branch: ``{upstream}`` is the upstream's repository name and package directory."""

File = tuple[str, "bytes | None"]


class Written(Record):
    """What a worker sends back for the pull request: the planned files (relative to the package; None when
    nothing was written: a failure or a conflict that stopped the write) and the package's own words."""

    files: tuple[File, ...] | None
    text: ChangeText | None


class _Planned(Record):
    """A planned file as :meth:`PullRequestStep.make_commit` takes it (a path relative to the work tree's top)."""

    path: str
    data: bytes | None


class _Group:
    """The packages one step puts up for review, and where each is in the work tree."""

    __slots__ = ("top", "prefixes", "step")

    def __init__(self, top: str) -> None:
        self.top = top
        self.prefixes: dict[str, str] = {}  # package path -> its folder relative to the top ("." at the top)
        self.step: PullRequestStep | None = None


class FleetPullRequests:
    """The pull requests of one fleet run (see the module's docstring for the order of the calls)."""

    def __init__(self, report: Report, settings: Settings, per: str | None, upstream: str, ref: str) -> None:
        self.report = report
        self.settings = settings
        self.per = per or PER[0]
        self.upstream = upstream
        self.ref = ref
        self.groups: list[_Group] = []
        self.tally: Tally | None = None

    def prepare(self, packages: Sequence[Package], *, dry_run: bool) -> dict[str, str]:
        """Group the packages and check each group's pull request before anything is written; returns the
        packages a refused group holds, each with the refusal (they are not to be updated)."""
        self.groups = _grouped(packages, by_package=self.per == "package")
        self.tally = new_tally()
        refused: dict[str, str] = {}
        for group in self.groups:
            step = PullRequestStep(self.report, Target(self.settings, group.top, self._template(),
                                                       self._placeholders(group)), tally=self.tally)
            try:
                step.prepare(list(group.prefixes.values()), dry_run=dry_run)
            except KrmMergeError as err:  # recorded in the report as the step's failed outcome
                refused.update(dict.fromkeys(group.prefixes, f"pull request: {err.message}"))
                continue
            group.step = step
        return refused

    def words(self, package_path: str, report: Report) -> ChangeText | None:
        """In a worker: a package's own pull request's words (per package), its report titled by its path in the
        repository, as a single update's; None per repository (the repository's report words it)."""
        if self.per != "package":
            return None
        prefix = next((g.prefixes[package_path] for g in self.groups if package_path in g.prefixes), package_path)
        report.subject = f"{prefix} to {self.ref}"
        return change_text(report.as_written())

    def finish(self, outcomes: Mapping[str, tuple[PackageUpdate, Written]], *, dry_run: bool) -> None:
        """Per prepared group: one commit of its written packages, pushed, and its pull request opened or updated
        (a dry run: previewed).  A step that fails is the group's failed outcome; the other groups go on."""
        for group in self.groups:
            done = [outcomes[path] for path in group.prefixes if path in outcomes]
            written = [(outcome, w) for outcome, w in done if w.files is not None]
            if group.step is None or not written:
                continue  # refused before the update, or every package failed or was stopped by a conflict
            files = [_Planned(_join(group.prefixes[outcome.path], rel), data)
                     for outcome, w in written for rel, data in w.files or ()]
            text = written[0][1].text if self.per == "package" else None
            text = text or change_text(self._repo_report(group, [outcome for outcome, _ in done]))
            try:
                if dry_run:
                    group.step.preview([f.path for f in files], text)
                else:
                    group.step.make_commit(files, text)
                    group.step.publish()
            except KrmMergeError:
                continue  # the report holds the step's failed outcome

    def account(self) -> None:
        """What the run's pull requests asked of each forge (requests, seconds waited for its budget): one
        :class:`~krm_merge.outcomes.kinds.ForgeRequests` per API host in the report."""
        for (forge, host), (requests, waited) in (self.tally.used if self.tally is not None else {}).items():
            self.report.add(ForgeRequests(forge, host, int(requests), round(waited, 1)))

    def _template(self) -> str:
        return PACKAGE_BRANCH if self.per == "package" else REPO_BRANCH

    def _placeholders(self, group: _Group) -> dict[str, str]:
        """The branch template's values: the package (per repository: the work tree's folder), ref and upstream."""
        [first, *_] = group.prefixes.values()
        package = first if self.per == "package" and first != "." else os.path.basename(group.top)
        return {"package": package, "ref": self.ref, "upstream": upstream_name(self.upstream)}

    def _repo_report(self, group: _Group, outcomes: list[PackageUpdate]) -> Report:
        """A repository's pull request's report: the fleet report of its packages alone."""
        scope = self.report.fleet
        sub = Report("update", group.top, self.report.state)
        sub.fleet = FleetScope(self.upstream, self.ref, len(outcomes), *(scope[3:] if scope else ()))
        sub.outcomes = list(outcomes)
        return sub


def upstream_name(upstream: str) -> str:
    """The upstream in a branch name: its repository's name and the package directory
    (``https://github.com/org/blueprints.git/apps/web`` → ``blueprints/apps/web``)."""
    repo, dot_git, directory = upstream.partition(".git/")
    name = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return f"{name}/{directory.strip('/')}" if dot_git and directory.strip("/") else name


def _grouped(packages: Sequence[Package], *, by_package: bool) -> list[_Group]:
    """The packages by work tree (``by_package``: each on its own), in selection order.  A package in no work
    tree is a group of its own: its step refuses it with the single update's error."""
    groups: dict[str, _Group] = {}
    for package in packages:
        try:
            tree = open_work_tree(package.path, Redactor())
            top, prefix = tree.top, tree.prefix or "."
        except KrmMergeError:
            top, prefix = package.path, "."
        group = groups.setdefault(package.path if by_package else top, _Group(top))
        group.prefixes[package.path] = prefix
    return list(groups.values())


def _join(prefix: str, rel: str) -> str:
    """A package file's path relative to the work tree's top."""
    return rel if prefix == "." else f"{prefix}/{rel}"


__all__ = ["PER", "FleetPullRequests", "Written", "upstream_name"]
