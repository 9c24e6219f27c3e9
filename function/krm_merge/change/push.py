"""Pushing one branch with a lease: the pull request's branch, or the base branch (``promote --push``).

``git push --force-with-lease=refs/heads/B:EXPECTED``: the remote branch is replaced only
if it still points where it pointed when this run read it (EXPECTED empty: only if it does
not exist), so a push someone made meanwhile is never overwritten.  git checks the lease
against the remote's advertisement, and the remote checks the old value again when it
updates the ref, so a push that lands between the two is refused too.  The user's git does
the pushing: their credential helpers, SSH agent and ``pre-push`` hooks apply.

A refusal is told apart without reading git's English: ``--porcelain`` flags a refused ref
with ``!``, and the remote is then asked where the branch points (``ls-remote``).  When it
moved, the race was lost (:data:`MOVED`, with the new head): the caller may plan again on
it (:mod:`krm_merge.change.race`); when it did not, the remote refused the push itself (a
hook, a protected branch, credentials) and that is an error.
"""

from __future__ import annotations

from krm_merge.change.errors import ChangeError
from krm_merge.change.remote import ls_remote
from krm_merge.change.worktree import WorkTree
from krm_merge.gitexec import refused_credentials
from krm_merge.records import Record


class Refused(Record):
    """A push refused because the remote branch moved since it was read: where it points now (None: deleted)."""

    head: str | None
    reason: str


def push(tree: WorkTree, remote: str, commit: str, branch: str, expected: str | None) -> None:
    """Make ``remote``'s ``branch`` point at ``commit`` if it still points at ``expected``; a ``push`` error otherwise."""
    lost = try_push(tree, remote, commit, branch, expected)
    if lost is not None:
        raise lease_lost(remote, branch, expected, lost.reason)


def lease_lost(remote: str, branch: str, expected: str | None, reason: str) -> ChangeError:
    """The ``push`` error of a lost race that is not planned again: someone else's push stands."""
    return ChangeError("push", f"lease lost: {remote}'s branch {branch} moved since this run read it (it was at "
                       f"{(expected or 'nothing')[:12]}); someone else pushed to it, nothing of theirs was "
                       f"overwritten ({reason})")


def try_push(tree: WorkTree, remote: str, commit: str, branch: str, expected: str | None) -> Refused | None:
    """:func:`push`, but a lost race is returned (:class:`Refused`, the branch's new head) rather than raised.

    None when the push landed; a ``push`` error when the remote refused it for any other reason.
    """
    ref = f"refs/heads/{branch}"
    result = tree.git.attempt(["push", "--porcelain", f"--force-with-lease={ref}:{expected or ''}", remote,
                               f"{commit}:{ref}"])
    statuses = [line for line in result.out.splitlines() if line[:1] in ("!", " ", "+", "-", "*", "=")
                and "\t" in line]
    if result.code == 0 and not any(line.startswith("!") for line in statuses):
        return None
    refused = [line for line in statuses if line.startswith("!")]
    reason = refused[0].split("\t")[-1] if refused else result.last_line()
    head, known = _head(tree, remote, branch)
    if known and head != expected:
        return Refused(head, reason)
    if refused_credentials(result.err + "\n" + reason):
        raise ChangeError("push", f"authentication refused by {remote} ({result.last_line()}); the push uses "
                          "git's credentials (credential helper, SSH agent, the remote URL)")
    raise ChangeError("push", f"{remote} rejected the push of {branch}: {reason}")


def _head(tree: WorkTree, remote: str, branch: str) -> tuple[str | None, bool]:
    """Where the remote branch points now (asked again after a refusal), and whether the remote could be asked."""
    try:
        return ls_remote(tree.git, remote, [branch], default_branch=False).heads.get(branch), True
    except ChangeError:
        return None, False
