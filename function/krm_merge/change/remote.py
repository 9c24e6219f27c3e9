"""The remote a pull request goes to: its URL, its default branch, and where its branches point.

``git ls-remote`` asks the remote without fetching or writing anything, so a dry run
can use it too.  The repository on the forge is read from the remote's URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from krm_merge.change.errors import ChangeError
from krm_merge.change.gitrun import Git
from krm_merge.gitexec import refused_credentials
from krm_merge.records import Record

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@github.com:org/repo.git


class RepoLocation(Record):
    """A repository's host (no user, no port; empty for a local path) and its path (``org/repo``)."""

    host: str
    path: str

    def same_repository(self, other: RepoLocation) -> bool:
        """The same host and path, ignoring case (forges compare them so)."""
        return self.host.lower() == other.host.lower() and self.path.lower() == other.path.lower()


class RemoteRefs(Record):
    """What one ``ls-remote`` said: the default branch (if asked) and the commit of each branch asked."""

    default_branch: str | None
    heads: dict[str, str]  # branch name -> commit id; a missing branch is absent


def remote_url(git: Git, remote: str) -> str:
    """The URL ``git push REMOTE`` uses (``remote.<name>.pushurl``, else ``url``); a ``remote`` error when unknown."""
    if remote.startswith("-"):
        raise ChangeError("remote", f"{remote!r} is not a remote name")
    result = git.attempt(["remote", "get-url", "--push", remote])
    if result.code != 0:
        raise ChangeError("remote", f"no remote {remote!r} in this repository (give --remote): {result.last_line()}")
    return result.out.strip()


def parse_location(url: str) -> RepoLocation:
    """Host and repository path of a remote URL: ``https://``, ``ssh://``, ``git@host:path`` or ``file://``."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host = parts.hostname or ""
        path = unquote(parts.path)
    else:
        scp = _SCP_LIKE.match(url)
        host, path = (scp.group(1), scp.group(2)) if scp else ("", url)
    path = path.strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return RepoLocation(host, path.rstrip("/"))


def ls_remote(git: Git, remote: str, branches: list[str], *, default_branch: bool) -> RemoteRefs:
    """The commits of ``branches`` on ``remote`` (and its default branch), from one ``git ls-remote``."""
    patterns = (["HEAD"] if default_branch else []) + [f"refs/heads/{b}" for b in branches]
    args = ["ls-remote", *(["--symref"] if default_branch else []), remote, *patterns]
    result = git.attempt(args)
    if result.code != 0 and refused_credentials(result.err):
        raise ChangeError("remote", f"authentication refused by {remote} ({result.last_line()}); krm-merge uses "
                          "git's credentials (credential helper, SSH agent, the remote URL)")
    if result.code != 0:
        raise ChangeError("remote", f"cannot read the branches of remote {remote!r}: {result.last_line()}")
    default, head_sha, heads = None, None, {}
    for line in result.out.splitlines():
        if line.startswith("ref: ") and line.endswith("\tHEAD"):
            target = line[len("ref: "):-len("\tHEAD")]
            default = target.removeprefix("refs/heads/") if target.startswith("refs/heads/") else None
            continue
        sha, _, ref = line.partition("\t")
        if ref == "HEAD":
            head_sha = sha
        elif ref.startswith("refs/heads/") and ref[len("refs/heads/"):] in branches:
            heads[ref[len("refs/heads/"):]] = sha
    if default is not None and head_sha is not None:
        heads.setdefault(default, head_sha)  # the default branch is where HEAD points
    return RemoteRefs(default, heads)


def fetch(git: Git, remote: str, branches: list[str]) -> None:
    """Bring the commits of ``branches`` (which exist on ``remote``) into the local object store."""
    if not branches:
        return
    git.run(["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", remote,
             *[f"refs/heads/{b}" for b in branches]], "remote", f"fetching {', '.join(branches)} from {remote}")
