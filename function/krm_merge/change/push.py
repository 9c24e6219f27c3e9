"""Pushing the pull request's branch, and only it, with a lease.

``git push --force-with-lease=refs/heads/B:EXPECTED``: the remote branch is replaced only
if it still points where it pointed when this run read it (EXPECTED empty: only if it does
not exist), so a push someone made meanwhile is never overwritten.  git checks the lease
against the remote's advertisement, and the remote checks the old value again when it
updates the ref, so a push that lands between the two is refused too.  The user's git does
the pushing: their credential helpers, SSH agent and ``pre-push`` hooks apply.
"""

from __future__ import annotations

from krm_merge.change.errors import ChangeError
from krm_merge.change.remote import ls_remote
from krm_merge.change.worktree import WorkTree
from krm_merge.gitexec import refused_credentials


def push(tree: WorkTree, remote: str, commit: str, branch: str, expected: str | None) -> None:
    """Make ``remote``'s ``branch`` point at ``commit`` if it still points at ``expected``; a ``push`` error otherwise."""
    ref = f"refs/heads/{branch}"
    result = tree.git.attempt(["push", "--porcelain", f"--force-with-lease={ref}:{expected or ''}", remote,
                               f"{commit}:{ref}"])
    if result.code == 0:
        return
    statuses = [line for line in result.out.splitlines() if line.startswith("!")]
    reason = statuses[0].split("\t")[-1] if statuses else result.last_line()
    if "stale info" in reason or _moved(tree, remote, branch, expected):
        raise ChangeError("push", f"lease lost: {remote}'s branch {branch} moved since this run read it "
                          f"(it was at {(expected or 'nothing')[:12]}); someone else pushed to it, nothing of "
                          f"theirs was overwritten ({reason})")
    if refused_credentials(result.err + "\n" + reason):
        raise ChangeError("push", f"authentication refused by {remote} ({result.last_line()}); the push uses "
                          "git's credentials (credential helper, SSH agent, the remote URL)")
    raise ChangeError("push", f"{remote} rejected the push of {branch}: {reason}")


def _moved(tree: WorkTree, remote: str, branch: str, expected: str | None) -> bool:
    """True when the remote branch no longer points at ``expected`` (asked again after a refusal)."""
    try:
        now = ls_remote(tree.git, remote, [branch], default_branch=False).heads.get(branch)
    except ChangeError:
        return False
    return now != expected
