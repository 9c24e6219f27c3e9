"""One commit pushed to a branch with a lease, planned again on every race it loses: ``promote --push`` and
``--pull-request``.

:func:`prepare` runs before the command writes anything: the work tree, the remote, the base
branch (fetched), and the files the promotion changes (no uncommitted change to them, HEAD's
copy the same as the base's, as ``--pull-request`` checks them, unless HEAD is merely behind the
base: then the target says so and the first commit is planned again on the tip, :func:`commit_replanned`, as
after a lost race; a CI job that starts late is the normal case).  :func:`commit` makes the
commit of the planned bytes on the base's tip (the user's author and signing configuration
apply; the checkout stays as it is).  :func:`deliver` pushes it with a lease on the base
branch.  When another writer pushed first (:func:`krm_merge.change.push.try_push` tells a
lost race from a refusal by git's porcelain output and a second look at the remote, not by
git's words), it waits a jittered, growing pause, fetches the new head, and asks the
push stage (:mod:`krm_merge.change.push_stage`, with the plan's own replanner) to plan the same
promotion again on that head's files (``replan``: the markers' edits applied to the new tree,
not a text rebase), commits that on the new head and pushes again, at most ``attempts`` pushes in all.  Past the bound it stops with a ``push`` error;
the last commit made is kept on a local branch and nothing of anyone's is overwritten.  The same loop pushes a
pull request's branch (:func:`krm_merge.change.publish.publish`): there the :class:`Target` is that branch and
the head it was read at (None: it did not exist), and ``accept`` refuses a new head krm-merge did not make.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable, Mapping

from krm_merge.change import commit as commits
from krm_merge.change.errors import ChangeError
from krm_merge.change.push import try_push
from krm_merge.change.redact import Redactor, mask_url_credentials
from krm_merge.change.remote import fetch, ls_remote, remote_url
from krm_merge.change.worktree import WorkTree, blobs, open_work_tree, package_at, uncommitted
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    from krm_merge.outcomes.report import Report

    class Replanned(Protocol):
        """The files of a promotion planned again on a newer head, and the report whose words make its commit."""

        @property
        def files(self) -> Sequence[tuple[str, bytes | None]]: ...

        @property
        def words(self) -> Report: ...

    class Replanner(Protocol):
        """Plans the run's change again on ``head``'s copy of the package (None: nothing left to change).

        The push stage (``--push``) and the pull-request stage both hold one: kept here, beside the loop that
        calls it, so neither stage imports the other."""

        @property
        def names(self) -> Sequence[str]: ...

        def replan(self, head: str, base: str, package: str, report: Report) -> Replanned | None: ...

ATTEMPTS = 20
"""Pushes in all (the first and the re-planned ones) before ``promote --push`` gives up: ``--push-attempts``."""
PAUSE_FIRST = 0.25  # seconds: the longest first pause; each lost race doubles it ...
PAUSE_MOST = 10.0  # ... up to this; the pause is drawn at random below it ("full jitter"), so racers spread out

Files = list[tuple[str, "bytes | None"]]
"""Files of the package (path relative to the package, new bytes or None for deleted)."""
Replan = Callable[[str, str], "tuple[Files, str] | None"]
"""``replan(head, package folder)``: the files and commit message of the same promotion planned on ``head``'s
copy of the package (checked out in a scratch folder); None when nothing is left to change there."""


class Target:
    """The branch a push goes to (``--push``: the base branch, as :func:`prepare` found it; ``--pull-request``: the
    pull request's): the work tree, remote, branch, and its head when read (None: the branch did not exist).
    ``behind``: HEAD's copy of the changed files differs from the head's and HEAD is an ancestor of it (the
    checkout is behind the base), so the plan made on the checkout must be made again on the head."""

    __slots__ = ("tree", "remote", "base", "head", "behind")

    def __init__(self, tree: WorkTree, remote: str, base: str, head: str | None, *, behind: bool = False) -> None:
        self.tree = tree
        self.remote = remote
        self.base = base
        self.head = head
        self.behind = behind


class Landed(Record):
    """What :func:`deliver` did: the commit now at the head of the base (None: nothing left to push, the other
    writers' change already says it), how many pushes it took, and the heads it planned again on."""

    commit: str | None
    pushes: int
    replanned: tuple[str, ...]


def prepare(package_dir: str, remote: str, base: str | None, package_paths: list[str], *, dry_run: bool = False,
            environ: Mapping[str, str] | None = None) -> Target:
    """Check what can be checked before the command writes ``package_paths`` (relative to the package).

    A dry run only reads (``ls-remote``): nothing is fetched, so the base's copy of the files is compared
    only when the object store already holds it.  HEAD's copy differing from the base's is refused, unless
    HEAD is an ancestor of the base's tip: the target is then ``behind`` (plan again on the tip); a HEAD
    with commits of its own on those files would have its push carry them, so that stays refused.
    """
    redactor = Redactor()
    tree = open_work_tree(package_dir, redactor, os.environ if environ is None else environ)
    mask_url_credentials(remote_url(tree.git, remote), redactor)
    refs = ls_remote(tree.git, remote, [base] if base else [], default_branch=base is None)
    base = base or refs.default_branch
    if not base:
        raise ChangeError("base", f"cannot tell the default branch of {remote}: give --base")
    if base not in refs.heads:
        raise ChangeError("base", f"{remote} has no branch {base!r}")
    if not dry_run:
        fetch(tree.git, remote, [base])
    tip = refs.heads[base]
    target = Target(tree, remote, base, tip)
    paths = [tree.repo_path(p) for p in package_paths]
    dirty = uncommitted(tree, paths)
    if dirty:
        raise ChangeError("work tree", "uncommitted changes to files the command would change: "
                          f"{', '.join(dirty)}; commit or stash them first (other changes are left alone)")
    head = tree.git.attempt(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).out.strip() or None
    if head is not None and head != tip and commits.has_commit(tree, tip):
        ours, theirs = blobs(tree, head, paths), blobs(tree, tip, paths)
        differ = [path for path in paths if ours.get(path) != theirs.get(path)]
        if differ and commits.is_ancestor(tree, head, tip):
            target.behind = True
        elif differ:
            raise ChangeError("base", f"{', '.join(differ)} differ between HEAD and {remote}/{base}: the push "
                              f"would carry those differences too; run on a checkout of {remote}/{base}")
    return target


def commit(target: Target, parent: str, files: Files, message: str) -> str:
    """The commit that is ``parent`` with the package's ``files`` changed (the checkout is not touched)."""
    tree = target.tree
    made, _ = commits.build_commit(tree, parent, [(tree.repo_path(path), data) for path, data in files], message)
    return made


def deliver(target: Target, made: str, replan: Replan, *, attempts: int = ATTEMPTS, keep: str,
            pause: Callable[[int], None] | None = None, accept: Callable[[str], None] | None = None) -> Landed:
    """Push ``made`` to the target's branch; on each lost race plan again on the new head and push that.

    ``keep`` is the local branch the last commit stays on when the bound is reached.
    ``pause(n)`` waits before the n-th re-plan (default: :func:`jittered_pause`).
    ``accept(head)`` raises a :class:`ChangeError` for a new head this run must not build on (a pull request's
    branch ending in a person's commit); the last commit is then kept as at the bound.
    """
    wait = pause or jittered_pause
    head = target.head
    replanned: list[str] = []
    commit_now: str | None = made
    for push_number in range(1, attempts + 1):
        if commit_now is None:
            return Landed(None, push_number - 1, tuple(replanned))
        lost = try_push(target.tree, target.remote, commit_now, target.base, head)
        if lost is None:
            return Landed(commit_now, push_number, tuple(replanned))
        if lost.head is None:
            raise ChangeError("push", f"{target.remote}'s branch {target.base} was deleted while this run pushed "
                              "to it", kept=_keep(target, commit_now, keep))
        if push_number == attempts:
            break
        wait(push_number)
        head = _fetch_head(target)
        if accept is not None:
            try:
                accept(head)
            except ChangeError as err:
                raise err.keeping(_keep(target, commit_now or made, keep)) from None
        replanned.append(head)
        commit_now = commit_replanned(target, head, replan)
    raise ChangeError("push", f"{target.remote}'s branch {target.base} moved before each of {attempts} pushes "
                      f"(other writers pushed first; --push-attempts raises the bound); nothing of theirs was "
                      "overwritten", kept=_keep(target, commit_now or made, keep))


def jittered_pause(number: int) -> None:
    """Sleep a random time below ``PAUSE_FIRST * 2**(number-1)`` seconds (at most :data:`PAUSE_MOST`)."""
    time.sleep(random.uniform(0, min(PAUSE_MOST, PAUSE_FIRST * 2 ** (number - 1))))


def _fetch_head(target: Target) -> str:
    """Fetch the target's branch; the commit it points at now."""
    fetch(target.tree.git, target.remote, [target.base])
    return target.tree.git.run(["rev-parse", "--verify", "FETCH_HEAD^{commit}"], "remote",
                               f"reading the fetched {target.base}")


def commit_replanned(target: Target, head: str, replan: Replan) -> str | None:
    """The same promotion planned on ``head`` and committed on it; None when nothing is left to change."""
    with tempfile.TemporaryDirectory(prefix="krm-merge-push-") as scratch:
        package = package_at(target.tree, head, scratch, "push", f"reading the package from {head[:12]}")
        planned = replan(head, package)
    if planned is None or not planned[0]:
        return None
    files, message = planned
    return commit(target, head, files, message)


def _keep(target: Target, made: str, branch: str) -> str:
    """Keep ``made`` on the local ``branch`` (created or moved: it is krm-merge's own); what the error says."""
    target.tree.git.run(["update-ref", "-m", "krm-merge: push", f"refs/heads/{branch}", made], "push",
                        f"keeping the commit on {branch}")
    return f"the commit {made[:12]} stays on the local branch {branch}; your files are as they were"


__all__ = ["ATTEMPTS", "Landed", "Target", "commit", "commit_replanned", "deliver", "jittered_pause", "prepare"]
