"""One commit on the base branch's tip holding exactly the files a command changes, and the local branch moved to it.

The commit is built from the command's planned bytes, before they are written, beside the
user's index and HEAD, never in them: each new content is stored with ``git hash-object -w
--path=FILE`` (git's filters for that path apply, as with ``git add``), a private index
(``GIT_INDEX_FILE``) is filled from the base commit and given the new entries (a file keeps
the base's mode), and ``git commit-tree`` writes the commit.  A commit that cannot be made
(no identity, a signing key that fails) stops the run before any file is written.  The author and committer are the user's (their
``user.name``/``user.email`` or ``GIT_AUTHOR_*``); it is signed when their configuration asks
(``commit.gpgSign``: GPG, SSH or X.509 by ``gpg.format``, with their ``user.signingKey``) —
``commit-tree`` does not read that setting itself, so ``-S`` is passed for it.  The user's
branch, index and files stay as they are.

Each run rebuilds the branch as the base plus one commit, so the pull request always shows
exactly this run's change on the current base; only a promotion whose push lost its race to
another run's plans again and commits above that run's commit, so both stay.  The commit
message ends with a trailer naming the branch (:data:`TRAILER`): a branch whose tip lacks it
was not made by krm-merge and is never moved or overwritten.
"""

from __future__ import annotations

import os
import tempfile

from krm_merge.change.worktree import WorkTree, blobs
from krm_merge.records import Record

TRAILER = "Krm-Merge-Branch"
RESOLVE_TRAILER = "Krm-Merge-Resolve"
"""Marks a ``resolve --pull-request`` commit: conflicts of the pull request decided on its branch, above the update's
commit (its value is the side taken)."""
ZERO = "0" * 40


class Message(Record):
    """A commit message read back: its title (subject), body, the branch its trailer names (or None) and, for a
    ``resolve --pull-request`` commit, the side it took (:data:`RESOLVE_TRAILER`)."""

    title: str
    body: str
    branch: str | None
    resolution: str | None = None


def commit_message(title: str, body: str, branch: str, resolution: str | None = None) -> str:
    """Title, blank line, body (the report as it is), blank line, the trailers (the last names ``branch``)."""
    title, body = title.strip(), body.strip()
    trailers = (f"{RESOLVE_TRAILER}: {resolution}\n" if resolution else "") + f"{TRAILER}: {branch}\n"
    return f"{title}\n\n{body}\n\n{trailers}" if body else f"{title}\n\n{trailers}"


def read_message(tree: WorkTree, commit: str) -> Message:
    """The message of ``commit`` split back into title, body and trailer branch."""
    text = tree.git.run(["log", "-1", "--format=%B", commit, "--"], "branch", f"reading commit {commit[:12]}")
    title, _, rest = text.strip().partition("\n")
    branch = resolution = None
    lines = rest.strip().split("\n")
    if lines and lines[-1].startswith(f"{TRAILER}: "):
        branch = lines.pop()[len(TRAILER) + 2:].strip()
        if lines and lines[-1].startswith(f"{RESOLVE_TRAILER}: "):
            resolution = lines.pop()[len(RESOLVE_TRAILER) + 2:].strip()
    return Message(title.strip(), "\n".join(lines).strip(), branch, resolution)


def made_for(tree: WorkTree, commit: str, branch: str) -> bool:
    """True when ``commit`` is krm-merge's commit for ``branch`` (its trailer names it)."""
    return read_message(tree, commit).branch == branch


def local_branch(tree: WorkTree, branch: str) -> str | None:
    """The commit the local branch points at, or None."""
    result = tree.git.attempt(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}"])
    return result.out.strip() if result.code == 0 else None


def has_commit(tree: WorkTree, commit: str) -> bool:
    """True when the object store holds ``commit`` (a dry run fetches nothing, so it may not)."""
    return tree.git.attempt(["cat-file", "-e", f"{commit}^{{commit}}"]).code == 0


def is_ancestor(tree: WorkTree, older: str, newer: str) -> bool:
    """True when ``older`` is ``newer`` or one of its ancestors (a checkout merely behind the base's tip)."""
    return tree.git.attempt(["merge-base", "--is-ancestor", older, newer]).code == 0


def checked_out(tree: WorkTree, branch: str) -> bool:
    """True when some work tree of the repository has ``branch`` checked out (moving it would desynchronise that one)."""
    out = tree.git.run(["worktree", "list", "--porcelain"], "branch", "listing the work trees")
    return f"branch refs/heads/{branch}" in out.split("\n")


def signing_flags(tree: WorkTree) -> list[str]:
    """``-S`` when the user's configuration signs commits (``commit.gpgSign``), else nothing."""
    result = tree.git.attempt(["config", "--type=bool", "commit.gpgSign"])
    return ["-S"] if result.code == 0 and result.out.strip() == "true" else []


def build_commit(tree: WorkTree, parent: str, files: list[tuple[str, bytes | None]], message: str) -> tuple[str, str]:
    """The commit (and its tree) that is ``parent`` with each file of ``files`` given those bytes (None: deleted)."""
    modes = {path: entry.split()[0] for path, entry in blobs(tree, parent, [p for p, _ in files]).items()}
    entries = []
    for path, data in files:
        if data is None:
            entries.append(f"0 {ZERO}\t{path}\n")
            continue
        blob = tree.git.run(["hash-object", "-w", f"--path={path}", "--stdin"], "commit", f"storing {path}",
                            stdin_bytes=data)
        entries.append(f"{modes.get(path, '100644')} {blob}\t{path}\n")
    with tempfile.TemporaryDirectory(prefix="krm-merge-index-") as scratch:
        env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        git = tree.git
        git.run(["read-tree", parent], "commit", f"reading the base commit {parent[:12]}", env=env)
        git.run(["update-index", "--index-info"], "commit", "adding the changed files", stdin="".join(entries),
                env=env)
        new_tree = git.run(["write-tree"], "commit", "writing the tree", env=env)
    commit = tree.git.run(["commit-tree", new_tree, "-p", parent, *signing_flags(tree), "-F", "-"], "commit",
                          "writing the commit (git's author and signing configuration apply)", stdin=message)
    return commit, new_tree


def tree_and_parents(tree: WorkTree, commit: str) -> tuple[str, list[str]]:
    """The tree of ``commit`` and its parents."""
    out = tree.git.run(["log", "-1", "--format=%T %P", commit, "--"], "branch", f"reading commit {commit[:12]}")
    first, *parents = out.split()
    return first, parents


def move_branch(tree: WorkTree, branch: str, new: str, old: str | None) -> None:
    """Point the local branch at ``new``, only if it still points at ``old`` (None: only if it does not exist)."""
    tree.git.run(["update-ref", "-m", "krm-merge: pull request", f"refs/heads/{branch}", new, old or ZERO],
                 "branch", f"moving the local branch {branch}")
