"""The steps of ``--pull-request`` in order: check, commit, (the command writes), push, open or update.

:func:`prepare` runs before the command writes anything and refuses what would go wrong
later: not a work tree, uncommitted changes to the files the command will write, a HEAD
whose copy of those files differs from the base branch's, no token, a branch krm-merge did
not make, a forge that refuses the token.  :func:`commit` then makes the one commit on the
base's tip from the command's planned bytes and moves the local branch to it, still before
the write, so a commit that cannot be made leaves every file as it was.  :func:`publish`
runs after the write: the push with a lease, then the pull request found and updated, or
opened.  A push that loses its race to another run of krm-merge (the branch's new tip still
krm-merge's) goes through the loop of ``promote --push`` (:func:`krm_merge.change.race.deliver`):
a promotion is planned again on the branch's new head by its replanner and committed above it, the
pull request then worded by the commits the branch holds; any other change (an update) stands
aside when the other run's tree is this run's, and is an error otherwise.  A failure there keeps
the local commit and branch (the error says which); the rerun
finds the files already written, nothing left to change, and continues from that commit.
:func:`preview` is ``--dry-run``: it reads (``ls-remote``, the forge's list) and writes
nothing, locally or remotely.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from krm_merge import files
from krm_merge.change import commit as commits
from krm_merge.change import race
from krm_merge.change.errors import ChangeError
from krm_merge.change.forges import Target, default_api, detect, open_forge
from krm_merge.change.forges.base import Forge, PullRequest, description
from krm_merge.change.forges.http import limits_from
from krm_merge.change.forges.pacing import Tally
from krm_merge.change.push import lease_lost
from krm_merge.change.redact import Redactor, mask_url_credentials
from krm_merge.change.remote import RemoteRefs, RepoLocation, fetch, ls_remote, parse_location, remote_url
from krm_merge.change.secrets import Token, find_token, token_sources
from krm_merge.change.settings import PipelinePullRequest, Settings, render_branch
from krm_merge.change.worktree import WorkTree, blobs, open_work_tree, package_at, uncommitted, work_tree_blobs
from krm_merge.records import Record


class Request(Record):
    """What a command asks of ``--pull-request``.

    ``branch_template`` is the command's default branch name (``settings.branch`` wins),
    ``placeholders`` the values its ``{name}``s take (``{package}``, the package's path in the
    repository, is always there), ``pipeline`` the Pipeline's
    pull-request promotion when promoting by pipeline, ``client`` options for the HTTP
    client (the run's :class:`Tally`; tests hand in a clock).
    """

    settings: Settings
    package_dir: str
    branch_template: str
    placeholders: Mapping[str, str]
    pipeline: PipelinePullRequest | None = None
    secrets_dir: str | None = None
    environ: Mapping[str, str] | None = None
    client: Mapping[str, Any] | None = None


BranchReplan = Callable[[str, str], "tuple[race.Files, str, str] | None"]
"""``replan(head, package folder)``: the same change planned on the pull request branch's ``head`` (its package
checked out in a scratch folder): the files, the commit's title and body; None when nothing is left to change."""
TITLE_MOST = 200  # characters: the titles of several runs' commits joined, within every forge's title limit
STACK_MOST = 100
"""The most commits of other runs read back from a pull request's branch to word it (as many as pushes allowed)."""


class Published(Record):
    """What the step did (or, in a dry run, would do).

    ``action``: ``opened``, ``updated``, ``unchanged`` (the pull request already says this),
    ``nothing to change``, or in a dry run ``would open`` / ``would update`` / ``would open or update``.
    ``said``: what the push met on the way (races lost and planned again), for the report.
    """

    action: str
    branch: str
    base: str
    forge: str
    repo: str
    url: str | None = None
    number: int | None = None
    commit: str | None = None
    notes: tuple[str, ...] = ()
    said: tuple[str, ...] = ()


class Prepared:
    """What :func:`prepare` found, for :func:`publish` or :func:`preview`."""

    __slots__ = ("tree", "redactor", "remote", "target", "forge", "branch", "base", "base_sha", "remote_sha",
                 "local_sha", "open_pr", "paths", "settings", "words")

    def __init__(self, tree: WorkTree, redactor: Redactor, settings: Settings, target: Target,
                 forge: Forge | None, branch: str, base: str, refs: RemoteRefs, local_sha: str | None,
                 paths: list[str]) -> None:
        self.tree = tree
        self.redactor = redactor
        self.settings = settings
        self.remote = settings.remote
        self.target = target
        self.forge = forge
        self.branch = branch
        self.base = base
        self.base_sha = refs.heads[base]
        self.remote_sha = refs.heads.get(branch)
        self.local_sha = local_sha
        self.open_pr: PullRequest | None = None
        self.paths = paths
        self.words: tuple[str, str] | None = None  # the pull request's title and body when the branch words them

    def published(self, action: str, commit: str | None = None, pr: PullRequest | None = None) -> Published:
        """The outcome record for ``action``."""
        return Published(action, self.branch, self.base, self.target.forge, self.target.repo,
                         pr.url if pr else None, pr.number if pr else None, commit,
                         tuple(self.forge.notes) if self.forge is not None else ())


def prepare(request: Request, package_paths: list[str], *, dry_run: bool) -> Prepared:
    """Check everything that can be checked before the command writes ``package_paths`` (relative to the package)."""
    prepared = _prepared(request, package_paths, dry_run=dry_run)
    _check_branches_are_ours(prepared)
    _check_work_tree(prepared)
    if prepared.forge is not None:
        prepared.open_pr = prepared.forge.find_open(prepared.branch, prepared.base)
    return prepared


def prepare_resolution(request: Request) -> Prepared:
    """``resolve --pull-request``: the pull request's branch (fetched; it must exist and be krm-merge's) and its
    open pull request.  The user's files are not read: the conflicts are the branch's."""
    prepared = _prepared(request, [], dry_run=False)
    if prepared.remote_sha is None:
        raise ChangeError("branch", f"{prepared.remote} has no branch {prepared.branch}: no pull request to resolve "
                          "(an update opens it: krm-merge update PKG@REF --conflicts mark --pull-request)")
    _check_branches_are_ours(prepared)
    if prepared.forge is not None:
        prepared.open_pr = prepared.forge.find_open(prepared.branch, prepared.base)
    return prepared


def _prepared(request: Request, package_paths: list[str], *, dry_run: bool) -> Prepared:
    """The work tree, remote, forge, token, branch and base a run's pull request is about (the branches fetched)."""
    environ = os.environ if request.environ is None else request.environ
    redactor = Redactor()
    settings = request.settings
    tree = open_work_tree(request.package_dir, redactor, environ)
    url = remote_url(tree.git, settings.remote)
    mask_url_credentials(url, redactor)
    target, token = _target_and_token(request, parse_location(url), environ, redactor)
    limits = limits_from(environ)  # a wrong deadline is refused before the fetch, as a wrong token is
    branch = _branch_name(tree, request, settings)
    base, refs = _base(tree, settings, request.pipeline, branch)
    if not dry_run:
        fetch(tree.git, settings.remote, [base, *([branch] if branch in refs.heads else [])])
    forge = open_forge(target, token, redactor, limits=limits, **(request.client or {})) if token is not None else None
    return Prepared(tree, redactor, settings, target, forge, branch, base, refs, commits.local_branch(tree, branch),
                    [tree.repo_path(p) for p in package_paths])


def _target_and_token(request: Request, location: RepoLocation, environ: Mapping[str, str],
                      redactor: Redactor) -> tuple[Target, Token | None]:
    """Which forge, API and repository (:func:`forge_target`) and the forge token (masked from now on).

    Every setting the run lacks is said in one ``pull request`` error, a dry run's as
    the real run's: the forge, the repository on it, the API of a remote that is a
    local path, the token.  The token is needed by a dry run too: what it shows is
    what the real run does with the same settings.
    """
    settings, remote = request.settings, request.settings.remote
    missing: list[str] = []
    target = forge_target(settings, request.pipeline, location, remote, redactor, missing)
    secret = request.pipeline.secret if request.pipeline else None
    token = find_token(target.forge, environ, secret, request.secrets_dir) if target.forge else None
    if token is not None:
        redactor.add(token.value)
    elif not target.forge and any(environ.get(name, "").strip() for name in token_sources()):
        pass  # a token is there for some forge: which one is said by the missing --forge
    else:
        sources = " or ".join(token_sources(target.forge or None))
        missing.append(f"a {target.forge or 'forge'} token: set {sources}"
                       + (f", or give --secrets-dir holding {secret}" if secret else ""))
    if not location.host and not settings.forge_api:
        missing.append(f"--forge-api URL ({remote} is a local path)")
    if missing:
        raise ChangeError("pull request", "missing " + "; ".join(missing))
    return target, token


def _base(tree: WorkTree, settings: Settings, pipeline: PipelinePullRequest | None,
          branch: str) -> tuple[str, RemoteRefs]:
    """The base branch (the option, the Pipeline's, the remote's default) and what ``ls-remote`` says of both branches."""
    base = settings.base or (pipeline.base if pipeline else None)
    refs = ls_remote(tree.git, settings.remote, [branch, *([base] if base else [])], default_branch=base is None)
    base = base or refs.default_branch
    if not base:
        raise ChangeError("base", f"cannot tell the default branch of {settings.remote}: give --base")
    if base == branch:
        raise ChangeError("branch", f"the pull request's branch is the base branch {base}: give another --branch")
    if base not in refs.heads:
        raise ChangeError("base", f"{settings.remote} has no branch {base!r}")
    if commits.checked_out(tree, branch):
        raise ChangeError("branch", f"{branch} is checked out in a work tree of this repository; krm-merge "
                          "rebuilds that branch on each run: switch to another branch")
    return base, refs


def forge_target(settings: Settings, pipeline: PipelinePullRequest | None, location: RepoLocation, remote: str,
                 redactor: Redactor, missing: list[str]) -> Target:
    """Which forge, API and repository: the options, else the Pipeline's type, else the remote's host.

    The API and the token's destination come from the options or the remote's URL (the
    user's own configuration), never from the Pipeline, which is repository content: its
    ``url`` must name the same repository as the remote.  What cannot be told joins
    ``missing`` (the option to give; its forge or repository is then empty).
    """
    forge = settings.forge or (pipeline.forge if pipeline else None) or detect(location)
    shown = redactor.redact(location.host or "a local path")
    if forge is None:
        missing.append(f"--forge github|gitlab|gitea|bitbucket (the forge {remote} is on: {shown} does not say"
                       + ("; and --forge-api URL for a self-hosted one)" if location.host else ")"))
    repo = (settings.forge_repo or location.path).strip("/")
    if not repo or "/" not in repo or not location.host and not settings.forge_repo:
        missing.append(f"--forge-repo OWNER/NAME (the repository on the forge: {remote}'s URL does not say)")
        return Target(forge or "", "", "")
    if forge is None:
        return Target("", "", repo)
    if pipeline is not None and pipeline.url:
        named = parse_location(pipeline.url)
        if named.path.lower() != repo.lower() or (location.host and named.host.lower() != location.host.lower()):
            raise ChangeError("pull request", f"{pipeline.where}.url names {redactor.redact(pipeline.url)}, "
                              f"not {remote}'s repository ({shown}/{repo}); the pull request goes to {remote}")
    api = settings.forge_api or (default_api(forge, location.host) if location.host else "")
    return Target(forge, api, repo)  # no API (a local remote, no --forge-api): refused when it is needed


def commit(prepared: Prepared, files: list[tuple[str, bytes | None]], title: str, body: str) -> str | None:
    """Make the commit of the command's planned ``files`` (package path, new bytes or None) on the base's tip.

    In place of the command's write (the files stay as they are): the local branch is moved to it
    (only from where it was read).  The remote branch's own commit is kept when it is the same
    change on the same base in the same words (nothing to push then), also with resolutions above
    it (``resolve --pull-request``: the pull request then keeps its words); else the local
    branch's, when an earlier run's push failed.  None when there is nothing to commit.
    """
    p = prepared
    if not files:
        return None
    message = commits.commit_message(title, body, p.branch)
    made, tree = commits.build_commit(p.tree, p.base_sha, [(p.tree.repo_path(path), data) for path, data in files],
                                      message)
    under = _below_resolutions(p, p.remote_sha) if p.remote_sha is not None else None
    if p.remote_sha is not None and under is not None and _same_change(p, under, tree, made):
        # Already pushed, or pushed with conflicts decided above it (resolve --pull-request): a rerun of the
        # same update keeps the decisions.
        p.words = branch_words(p, p.remote_sha) if under != p.remote_sha else None
        made = p.remote_sha
    elif p.local_sha is not None and _same_change(p, p.local_sha, tree, made):
        made = p.local_sha  # an earlier run's commit, kept after its push failed: the rerun continues from it
    if made != p.local_sha:
        commits.move_branch(p.tree, p.branch, made, p.local_sha)
        p.local_sha = made
    return made


def publish(prepared: Prepared, made: str | None, title: str, body: str, *, replan: BranchReplan | None = None,
            attempts: int | None = None, pause: Callable[[int], None] | None = None) -> Published:
    """Push the commit :func:`commit` made and open or update the pull request.

    Without one (nothing was written), a commit an earlier run left on the local branch (not
    yet pushed, or without its pull request) is published instead; without that there is
    nothing to do.  When another run of krm-merge pushed to the branch first, ``replan`` (a
    promotion's) plans the change again on the branch's new head, at most ``attempts`` pushes
    in all (``pause``: :func:`krm_merge.change.race.deliver`'s); without it the run stands
    aside when the other run's tree is this run's, and the lease lost is an error otherwise.
    """
    p = prepared
    if made is None:
        made = _pending(p)
        if made is None:
            return p.published("nothing to change")
        message = commits.read_message(p.tree, made)
        title, body = message.title, message.body
    if p.words is not None:
        title, body = p.words
    kept = f"the commit {made[:12]} stays on the local branch {p.branch}"
    try:
        if made != p.remote_sha:
            landed = race.deliver(race.Target(p.tree, p.remote, p.branch, p.remote_sha), made,
                                  _on_branch(p, made, replan), attempts=attempts or race.ATTEMPTS, keep=p.branch,
                                  pause=pause, accept=lambda head: _check_tip_is_ours(p, head))
            if landed.replanned:
                return _after_races(p, landed, attempts or race.ATTEMPTS, planned=replan is not None)
    except ChangeError as err:
        raise (err if err.kept else err.keeping(kept)) from None
    try:
        return _pull_request(p, made, title, body)
    except ChangeError as err:  # the branch is on the remote: a rerun only opens or updates the pull request
        raise err.keeping(f"{kept} and is pushed to {p.remote}") from None


def _on_branch(p: Prepared, made: str, replan: BranchReplan | None) -> race.Replan:
    """:data:`krm_merge.change.race.Replan` on the pull request's branch: the change's commit message ends in the
    branch's trailer.  Without ``replan``: nothing left when the new head's tree is ``made``'s (another run pushed
    this very change), else the lease lost is the run's error."""
    def again(head: str, package: str) -> tuple[race.Files, str] | None:
        if replan is None:
            if commits.tree_and_parents(p.tree, head)[0] == commits.tree_and_parents(p.tree, made)[0]:
                return None
            raise lease_lost(p.remote, p.branch, p.remote_sha, f"its tip {head[:12]} holds another change")
        planned = replan(head, package)
        if planned is None:
            return None
        changed, title, body = planned
        return changed, commits.commit_message(title, body, p.branch)

    return again


def _check_tip_is_ours(p: Prepared, head: str) -> None:
    """A race lost to a commit krm-merge did not make (a person's, on the pull request) is never built on."""
    if not commits.made_for(p.tree, head, p.branch):
        raise ChangeError("branch", f"{p.remote}'s branch {p.branch} now ends in a commit krm-merge did not make "
                          f"({head[:12]}), pushed while this run pushed; krm-merge never builds on or overwrites it")


def _after_races(p: Prepared, landed: race.Landed, attempts: int, *, planned: bool) -> Published:
    """The pull request after the branch moved under this run: ours planned again and pushed above the other
    runs' commits (the pull request worded by all of them), or nothing left to push (theirs stands, and so does
    their pull request).  The local branch follows the remote's.  ``planned``: the change was planned again on
    the new heads (a promotion), not only compared with them."""
    head = landed.replanned[-1]
    again = (f"after {'planning again on' if planned else 'reading'} {len(landed.replanned)} newer head(s) of "
             f"{p.branch}")
    if landed.commit is None:
        commits.move_branch(p.tree, p.branch, head, p.local_sha)
        p.local_sha = head
        said = (f"pull request: nothing left to push {again}: {p.remote}'s {p.branch} already says what this run "
                "would (another run's commit); its pull request is that run's",)
        try:
            pr = (p.open_pr or p.forge.find_open(p.branch, p.base)) if p.forge is not None else None
        except ChangeError as err:
            raise err.keeping(f"the local branch {p.branch} is at {head[:12]}, the other run's commit") from None
        if pr is None:
            return p.published("nothing to change")._replace(said=said)
        return p.published("unchanged", head, pr)._replace(said=said)
    commits.move_branch(p.tree, p.branch, landed.commit, p.local_sha)
    p.local_sha = landed.commit
    said = (f"pull request: pushed {landed.commit[:12]} to {p.remote} {p.branch} {again} "
            f"({landed.pushes} push(es) of {attempts})",)
    title, body = stacked_words(p, landed.commit)
    try:
        return _pull_request(p, landed.commit, title, body, said)
    except ChangeError as err:
        raise err.keeping(f"the commit {landed.commit[:12]} stays on the local branch {p.branch} and is pushed to "
                          f"{p.remote}") from None


def stacked_words(prepared: Prepared, tip: str) -> tuple[str, str]:
    """The pull request's title and body for a branch holding several runs' commits (a race planned again above
    another run's): their titles (distinct, newest first) and their bodies, newest first, apart by rules."""
    p = prepared
    listed = p.tree.git.run(["rev-list", "--first-parent", f"--max-count={STACK_MOST}", tip, f"^{p.base_sha}", "--"],
                            "branch", f"reading the commits of {p.branch}").split()
    titles: list[str] = []
    bodies: list[str] = []
    for commit in listed:
        message = commits.read_message(p.tree, commit)
        if message.branch != p.branch:
            break
        titles.append(message.title)
        bodies.append(message.body)
    distinct = list(dict.fromkeys(titles))
    title = "; ".join(distinct)
    if len(title) > TITLE_MOST:
        title = f"{distinct[0]} (and {len(distinct) - 1} more)"
    return title, "\n\n---\n\n".join(body for body in bodies if body)


def preview(prepared: Prepared, package_paths: list[str], title: str, body: str) -> tuple[Published, str]:
    """What :func:`publish` would do, and the commit message, without doing anything."""
    p = prepared
    if not package_paths:
        return p.published("nothing to change"), ""
    if p.forge is None:
        action = "would open or update"
    else:
        action = "would update" if p.open_pr is not None else "would open"
    return p.published(action, pr=p.open_pr), commits.commit_message(title, body, p.branch)


# --- resolve --pull-request: conflicts decided on the pull request's branch ------------------


def scratch_folder() -> tempfile.TemporaryDirectory[str]:
    """A private folder for :func:`branch_package`, removed when the ``with`` block ends."""
    return tempfile.TemporaryDirectory(prefix="krm-merge-resolve-")


def branch_package(prepared: Prepared, scratch: str) -> str:
    """The package as the pull request's branch holds it, under ``scratch`` at its path in the repository, with
    the Kptfile of each folder above it (a ledger is bound to them); the package's folder.

    Read from git's objects through a private index (git's filters apply, as for a checkout): the user's
    files, index and HEAD are not touched.
    """
    p = prepared
    sha, prefix = p.remote_sha or "", p.tree.prefix
    if p.tree.git.attempt(["cat-file", "-e", f"{sha}:{prefix}" if prefix else f"{sha}^{{tree}}"]).code != 0:
        raise ChangeError("branch", f"{p.remote}'s branch {p.branch} has no folder {prefix}: no package to resolve")
    top = os.path.join(scratch, "repo")
    package = package_at(p.tree, sha, scratch, "branch", f"reading {prefix or 'the package'} from {p.branch}")
    folders = prefix.split("/")[:-1] if prefix else []
    for depth in range(len(folders) + 1):  # the folders above the package, up to the repository's top
        rel = "/".join([*folders[:depth], "Kptfile"])
        found = p.tree.git.attempt(["cat-file", "blob", f"{sha}:{rel}"])
        if found.code == 0:
            target = os.path.join(top, *rel.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            files.write_files_atomic([(target, found.out.encode("utf-8"))])
    return package


def commit_resolution(prepared: Prepared, package_files: list[tuple[str, bytes | None]], title: str, body: str,
                      taken: str) -> str:
    """One commit on the pull request's branch (above its tip) of ``package_files`` (package path, new bytes or
    None) as ``resolve`` decided them; the local branch follows (only from where it was read).  The pull request
    is then worded by the branch (:func:`branch_words`)."""
    p = prepared
    paths = [(f"{p.tree.prefix}/{rel}" if p.tree.prefix else rel, data) for rel, data in package_files]
    made, _ = commits.build_commit(p.tree, p.remote_sha or "", paths,
                                   commits.commit_message(title, body, p.branch, taken))
    commits.move_branch(p.tree, p.branch, made, p.local_sha)
    p.local_sha = made
    p.words = branch_words(p, made)
    return made


def branch_words(prepared: Prepared, tip: str) -> tuple[str, str]:
    """The pull request's title and body for a branch ending in ``resolve`` commits: the update's title; the
    body each resolution's report (the newest, saying what is left, first), then the update's report."""
    p = prepared
    said: list[str] = []
    at = tip
    while (message := commits.read_message(p.tree, at)).resolution is not None:
        said.append(message.body)
        at = commits.tree_and_parents(p.tree, at)[1][0]
    return message.title, "\n\n".join([*said, "---", message.body] if said else [message.body])


def _same_change(p: Prepared, commit: str, tree: str, made: str) -> bool:
    """``commit`` is the same files on the same base in the same words as the commit ``made`` (of ``tree``)."""
    return commits.tree_and_parents(p.tree, commit) == (tree, [p.base_sha]) \
        and commits.read_message(p.tree, commit) == commits.read_message(p.tree, made)


def _below_resolutions(p: Prepared, tip: str) -> str:
    """The commit under the ``resolve --pull-request`` commits that end the branch at ``tip`` (``tip`` if none)."""
    at = tip
    while True:
        message = commits.read_message(p.tree, at)
        parents = commits.tree_and_parents(p.tree, at)[1]
        if message.resolution is None or message.branch != p.branch or len(parents) != 1:
            return at
        at = parents[0]


# --- the steps ---------------------------------------------------------------------


def _branch_name(tree: WorkTree, request: Request, settings: Settings) -> str:
    template = settings.branch or request.branch_template
    branch = render_branch(template, {"package": tree.package_name, **request.placeholders})
    result = tree.git.attempt(["check-ref-format", "--branch", branch])
    if result.code != 0 or branch.startswith("-"):
        raise ChangeError("branch", f"{branch!r} is not a valid branch name (from {template!r})")
    return branch


def _check_branches_are_ours(p: Prepared) -> None:
    """The local and remote branch, when they exist, end in krm-merge's commit for this branch."""
    if p.local_sha is not None and not commits.made_for(p.tree, p.local_sha, p.branch):
        raise ChangeError("branch", f"a local branch {p.branch} exists that krm-merge did not make (its last "
                          f"commit has no '{commits.TRAILER}: {p.branch}' trailer): give another --branch")
    if p.remote_sha is not None and commits.has_commit(p.tree, p.remote_sha) \
            and not commits.made_for(p.tree, p.remote_sha, p.branch):
        raise ChangeError("branch", f"{p.remote}'s branch {p.branch} ends in a commit krm-merge did not make "
                          f"({p.remote_sha[:12]}); krm-merge never overwrites it: merge or close that pull "
                          "request and delete the branch, or give another --branch")


def _check_work_tree(p: Prepared) -> None:
    """No uncommitted change to a file the command writes (unless an earlier run wrote it), HEAD's copy = base's."""
    dirty = uncommitted(p.tree, p.paths)
    if dirty and p.local_sha is not None:  # an earlier run's write, already committed on the branch: ours
        earlier = {path: entry.split()[-1] for path, entry in blobs(p.tree, p.local_sha, dirty).items()}
        now = work_tree_blobs(p.tree, dirty)
        dirty = [path for path in dirty if path not in earlier or earlier[path] != now.get(path)]
    if dirty:
        raise ChangeError("work tree", "uncommitted changes to files the command would change: "
                          f"{', '.join(dirty)}; commit or stash them first (other changes are left alone)")
    if not commits.has_commit(p.tree, p.base_sha):
        return  # a dry run fetched nothing: the base's files cannot be compared here
    head = p.tree.git.attempt(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).out.strip() or None
    if head is None or head == p.base_sha:
        return
    ours, theirs = blobs(p.tree, head, p.paths), blobs(p.tree, p.base_sha, p.paths)
    differ = [path for path in p.paths if ours.get(path) != theirs.get(path)]
    if differ:
        raise ChangeError("base", f"{', '.join(differ)} differ between HEAD and {p.remote}/{p.base}: the pull "
                          f"request would carry those differences too; run on a checkout of {p.remote}/{p.base}")


def _pending(p: Prepared) -> str | None:
    """The local branch's commit when an earlier run made it and its change is not in the base yet."""
    if p.local_sha is None:
        return None
    _, parents = commits.tree_and_parents(p.tree, p.local_sha)
    if len(parents) != 1:
        return None
    changed = p.tree.git.run(["diff-tree", "-r", "-z", "--name-only", "--no-renames", parents[0], p.local_sha],
                             "branch", f"reading commit {p.local_sha[:12]}").split("\0")
    changed = [c for c in changed if c]
    if not changed or blobs(p.tree, p.local_sha, changed) == blobs(p.tree, p.base_sha, changed):
        return None  # merged (or made moot) already
    return p.local_sha


def _pull_request(p: Prepared, made: str, title: str, body: str, said: tuple[str, ...] = ()) -> Published:
    """Open the pull request, or update the open one when its title or body (as the forge keeps it) differ."""
    if p.forge is None:  # prepare refuses a run without a token; kept for the type checker
        raise ChangeError("pull request", "no forge token")
    forge, settings = p.forge, p.settings
    pr = p.open_pr or forge.find_open(p.branch, p.base)  # looked for again: one may have been opened meanwhile
    if pr is None:
        pr, action = forge.create(p.branch, p.base, title, body), "opened"
    elif (pr.title, pr.body.strip()) != (title, description(body).strip()):
        pr, action = forge.update(pr, title, body), "updated"
    else:
        action = "unchanged"
    forge.add_labels(pr, settings.labels)
    forge.request_reviewers(pr, settings.reviewers)
    return p.published(action, made, pr)._replace(said=said)


__all__ = ["BranchReplan", "Prepared", "Published", "Request", "Tally", "Token", "branch_package", "branch_words",
           "commit", "commit_resolution", "forge_target", "scratch_folder", "prepare", "prepare_resolution", "preview",
           "publish", "stacked_words"]
