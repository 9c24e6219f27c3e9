"""A Kptfile's ``upstream`` and ``upstreamLock``: read and checked, and recorded after an update.

kpt keeps every Kptfile read and edit in ``kptfileutil``; these are the
update's.  What a Kptfile names is checked before git sees it
(:func:`read_upstream`): no value can become a git option, a directory
cannot climb out of the repository, a commit is a commit id — these values
are written by whoever wrote the Kptfile, upstream authors included.
"""

from __future__ import annotations

import re
from pathlib import Path

from krm_merge import files
from krm_merge.kptfile.document import Strategy
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import deep_equal
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_COMMIT_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_FIELD_LENGTH = 4096


# NamedTuples, not frozen dataclasses: every update reads them, and a frozen dataclass costs
# ~0.5-1 ms to create at import against ~0.1 ms (issue 24: a no-op update's start-up).
class GitUpstream(Record):
    """``upstream.git`` of a Kptfile: which repository, package directory and ref to follow."""

    repo: str
    directory: str
    ref: str


class GitLock(Record):
    """``upstreamLock.git``: the commit the local copy was fetched at."""

    repo: str
    directory: str
    ref: str
    commit: str


def read_upstream(kptfile: Any, where: str = "Kptfile") -> tuple[GitUpstream, GitLock | None]:
    """The git upstream and lock of a Kptfile, or a KrmError saying what is missing."""
    if not isinstance(kptfile, dict):
        raise KrmError(f"{where} is not a Kptfile (not a mapping)")
    upstream = kptfile.get("upstream")
    if not isinstance(upstream, dict) or not upstream:
        raise KrmError(f"{where}: package has no upstream (upstream.git is missing); fetch it with kpt pkg get, "
                       "or give --origin DIR --upstream DIR")
    kind = upstream.get("type", "git")
    if kind != "git" or not isinstance(upstream.get("git"), dict):
        raise KrmError(f"{where}: upstream.type {kind!r} is not supported (only git)")
    git = upstream["git"]
    repo = _text(git, "repo", f"{where}: upstream.git.repo")
    up = GitUpstream(repo, str(git.get("directory") or "/"), str(git.get("ref") or ""))
    check_fields(up.repo, up.directory, up.ref, f"{where}: upstream.git")
    lock_node = kptfile.get("upstreamLock")
    lock = None
    if isinstance(lock_node, dict) and isinstance(lock_node.get("git"), dict):
        lg = lock_node["git"]
        commit = str(lg.get("commit") or "")
        if commit:
            lock = GitLock(str(lg.get("repo") or repo), str(lg.get("directory") or up.directory), str(lg.get("ref") or ""), commit)
            check_fields(lock.repo, lock.directory, lock.ref, f"{where}: upstreamLock.git")
            if not _COMMIT_ID.match(commit):
                raise KrmError(f"{where}: upstreamLock.git.commit {commit[:80]!r} is not a commit id (40 or 64 hex digits)",
                               field="upstreamLock.git.commit")
    return up, lock


def locked_commit(kptfile: Any) -> str:
    """The commit a Kptfile's (data's) ``upstreamLock.git`` names; ``""`` when there is none or it is not a commit id.

    An update's conflict ledger records it (:mod:`krm_merge.update.ledger`): a
    ledger an upstream ships cannot name the commit it is part of.
    """
    lock = kptfile.get("upstreamLock") if isinstance(kptfile, dict) else None
    git = lock.get("git") if isinstance(lock, dict) else None
    commit = git.get("commit") if isinstance(git, dict) else None
    return commit if isinstance(commit, str) and _COMMIT_ID.match(commit) else ""


def read_package_kptfile(local: Path, name: str | None = None) -> tuple[str, GitUpstream, GitLock | None]:
    """The Kptfile of package ``local`` (its text) with its upstream and lock; ``name`` is how messages call it."""
    kptfile = local / "Kptfile"
    if not local.is_dir():
        raise KrmError(f"package {local} is not a directory")
    if not kptfile.is_file():
        raise KrmError(f"{kptfile} not found: not a kpt package (fetch it with kpt pkg get, or give --origin/--upstream)")
    text = files.read_text(kptfile)
    name = name or str(kptfile)
    upstream, lock = read_upstream(yamlio.load_data(text, name), name)
    return text, upstream, lock


def check_fields(repo: str, directory: str, ref: str, where: str) -> None:
    """Refuse a repo, directory or ref git could read as an option, or a directory that leaves the repository.

    These values are written by whoever wrote the Kptfile, upstream authors included.
    """
    for key, value in (("repo", repo), ("directory", directory), ("ref", ref)):
        if len(value) > MAX_FIELD_LENGTH or _CONTROL.search(value):
            raise KrmError(f"{where}.{key}: longer than {MAX_FIELD_LENGTH} characters or holds a control character",
                           field=f"{where}.{key}")
    for key, value in (("repo", repo), ("ref", ref)):
        if value.startswith("-"):
            raise KrmError(f"{where}.{key} {value!r} begins with '-' (git would read it as an option)", field=f"{where}.{key}")
    if ".." in directory.replace("\\", "/").split("/"):
        raise KrmError(f"{where}.directory {directory!r} holds '..' (it would leave the repository)", field=f"{where}.directory")
    if repo.lower().startswith("ext::"):
        raise KrmError(f"{where}.repo {repo!r}: git's ext:: transport runs a command; refused", field=f"{where}.repo")


def _text(node: dict[str, Any], key: str, field: str) -> str:
    value = node.get(key)
    if not isinstance(value, str) or not value:
        raise KrmError(f"{field} is missing or not a string")
    return value


def record_lock(kptfile_text: str, upstream: GitUpstream, commit: str, strategy: Strategy | None,
                lock_ref: str | None = None) -> str:
    """The root Kptfile after an update: ``upstream.git.ref``, ``updateStrategy`` and ``upstreamLock`` as kpt writes them.

    ``lock_ref`` is the ref the fetch resolved (a directory-prefixed tag,
    see :meth:`GitCache.resolve_package_ref`), default ``upstream.ref``.
    Only those fields change; the rest of the file keeps its layout and comments.
    """
    if _records(kptfile_text, upstream, commit, strategy, lock_ref or upstream.ref):
        return kptfile_text  # already says so (an update to where the package is): no round trip
    # Item's editors splice the changed lines into the text (comments and layout stay).
    obj = Item(kptfile_text)
    data = obj.copy_data()
    up = data.get("upstream")
    if isinstance(up, dict) and isinstance(up.get("git"), dict):
        up["git"]["ref"] = upstream.ref
    if isinstance(up, dict) and strategy is not None:
        up["updateStrategy"] = strategy.value
    lock = {"type": "git", "git": {"repo": upstream.repo, "directory": upstream.directory,
                                   "ref": lock_ref or upstream.ref, "commit": commit}}
    if "upstreamLock" in data or "upstream" not in data:
        data["upstreamLock"] = lock
    else:  # kpt's place: right after upstream
        ordered: dict[str, Any] = {}
        for key, value in data.items():
            ordered[key] = value
            if key == "upstream":
                ordered["upstreamLock"] = lock
        data = ordered
    obj.set_data(data)
    return obj.text


def _records(kptfile_text: str, upstream: GitUpstream, commit: str, strategy: Strategy | None, lock_ref: str) -> bool:
    """Whether the Kptfile already records this ref, strategy and lock."""
    data = yamlio.load_data(kptfile_text, "Kptfile")
    up = data.get("upstream") if isinstance(data, dict) else None
    if not isinstance(up, dict) or not isinstance(up.get("git"), dict) or up["git"].get("ref") != upstream.ref:
        return False
    if strategy is not None and up.get("updateStrategy") != strategy.value:
        return False
    lock = {"repo": upstream.repo, "directory": upstream.directory, "ref": lock_ref, "commit": commit}
    return deep_equal(data.get("upstreamLock"), {"type": "git", "git": lock})


__all__ = ["GitLock", "GitUpstream", "check_fields", "locked_commit", "read_package_kptfile", "read_upstream",
           "record_lock"]
