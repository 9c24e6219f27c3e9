"""Which packages a fleet update moves: every kpt package under the roots that tracks one upstream.

A package is selected when its Kptfile's ``upstream.git`` names the
repository of ``--upstream REPO[/DIRECTORY]`` (and that directory, when one is
given), at any depth below a root.  The repository is compared by host and
path (:func:`names`: a path or ``file://``, ``https://`` or ``git@host:``,
``.git`` or not, a trailing ``/`` or not, the host in any case); kpt's own form
``REPO.git/DIRECTORY`` says where the repository ends, and without ``.git``
whatever follows a Kptfile's repository is its directory.  Folders below a
selected package are not searched: its remote subpackages are updated by its
own update, as ``kpt pkg update`` does.  ``--match GLOB`` keeps the packages
whose path below their root matches (``fnmatch``: ``*`` crosses ``/``).

A Kptfile that cannot be read as YAML but whose ``repo:`` (and ``directory:``)
lines name the upstream is selected too: its update then fails with the single update's own error, so a broken
consumer is reported instead of silently left behind.  Links are not followed
and hidden folders (``.git`` among them) are not entered: the one lister's rules
(:func:`krm_merge.krm.pkgio.list_package`).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import posixpath
import re
from typing import Any, Sequence

from krm_merge import files
from krm_merge.change.remote import RepoLocation, parse_location
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.upstream import GitLock, GitUpstream, read_upstream
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.results import KrmError
from krm_merge.records import Record
from krm_merge.update.git import clean_directory

class Package(Record):
    """A selected package: where it is, and what its Kptfile says (None for a Kptfile that could not be read)."""

    root: str  # the root it was found under, as given
    rel: str  # its folder below the root, "/"-separated; "." for the root itself
    upstream: GitUpstream | None
    lock: GitLock | None

    @property
    def path(self) -> str:
        """The package's folder as ``krm-merge update PATH@REF`` would be given it (the report's name for it)."""
        return os.path.normpath(os.path.join(self.root, self.rel))

    @property
    def key(self) -> str:
        """What the shard of the package is decided by: its path below its root (the same on every machine)."""
        return self.rel


def names(spec: str, repo: str, directory: str) -> bool:
    """Whether ``--upstream spec`` names a Kptfile's ``upstream.git`` repository ``repo`` (and ``directory``).

    The repositories are compared by the one reading of a repository's spelling,
    :func:`krm_merge.change.remote.parse_location` and
    :meth:`~krm_merge.change.remote.RepoLocation.same_repository`: host and
    path, so a path and ``file://``, ``https://host/o/r`` and ``git@host:o/r``,
    with or without ``.git`` or a trailing ``/``, the host in any case, are one
    repository.
    """
    theirs = parse_location(repo)
    spec_repo, dot_git, spec_dir = spec.partition(".git/")
    if dot_git and spec_dir.strip("/"):
        return _location(spec_repo).same_repository(theirs) and clean_directory(spec_dir) == clean_directory(directory)
    ours = _location(spec_repo if dot_git else spec)
    if ours.same_repository(theirs):
        return True
    # without .git, whatever follows the Kptfile's repository is its directory
    head, rest = ours.path[:len(theirs.path)], ours.path[len(theirs.path):]
    return (rest.startswith("/") and ours._replace(path=head).same_repository(theirs)
            and clean_directory(rest) == clean_directory(directory))


def _location(spec: str) -> RepoLocation:
    """``--upstream``'s repository: a local path is read from where the command runs, as git reads it."""
    found = parse_location(spec)
    if found.host or "://" in spec:
        return found
    return parse_location(os.path.abspath(spec))


def _spelling(repo: str, directory: str) -> str:
    """A Kptfile's upstream as ``--upstream`` takes it: kpt's ``REPO.git/DIRECTORY`` (the repository alone for
    its root)."""
    bare = repo.rstrip("/").removesuffix(".git")
    folder = clean_directory(directory).strip("/")
    return f"{bare}.git/{folder}" if folder else repo


def nothing_selected(roots: Sequence[str], spec: str, match: str | None = None, shown: int = 3) -> str:
    """Why no package under ``roots`` was selected, as an error: the ``--match`` that kept none of the packages
    tracking ``spec``, or the upstreams the roots' Kptfiles do track, the ``shown`` closest to ``spec`` first."""
    where = ", ".join(roots)
    tracking = select(roots, spec) if match is not None else []
    if tracking:
        paths = ", ".join(p.rel for p in tracking[:shown]) + (", ..." if len(tracking) > shown else "")
        return (f"no package under {where} tracks {spec} and matches --match {match}: {len(tracking)} package(s) "
                f"track it ({paths}; --match is matched against the path below the root)")
    spellings = sorted(set(_tracked(roots)))
    if not spellings:
        return f"no package under {where} tracks {spec}: no Kptfile there names a git upstream"
    closest = difflib.get_close_matches(spec, spellings, n=shown, cutoff=0.0)
    return (f"no package under {where} tracks {spec}: the Kptfiles there track {len(spellings)} other upstream(s), "
            f"the closest: {', '.join(closest)}")


def _tracked(roots: Sequence[str]) -> list[str]:
    """The upstream of every package under ``roots`` whose Kptfile names a git upstream, as ``--upstream`` takes it."""
    found: list[str] = []
    for root in roots:
        listing = pkgio.list_package(root, names=("Kptfile",), krmignore=False)
        for kptfile in listing.files:
            if kptfile.is_link:
                continue
            try:
                git = _git_upstream(yamlio.load_data(files.read_text(kptfile.path), kptfile.path))
            except (OSError, UnicodeDecodeError, KrmMergeError):
                continue
            if git is not None and isinstance(git.get("repo"), str):
                found.append(_spelling(git["repo"], str(git.get("directory") or "/")))
    return found


def select(roots: Sequence[str], spec: str, match: str | None = None) -> list[Package]:
    """Every package under ``roots`` that tracks ``spec``, root by root, each root's in path order."""
    found: list[Package] = []
    seen: set[str] = set()  # roots that overlap name a package once
    for root in roots:
        if not os.path.isdir(root):
            raise KrmError(f"{root}: not a directory (a fleet update's ROOT is a folder holding packages)")
        for package in _walk(root, spec):
            real = os.path.realpath(package.path)
            if real not in seen and (match is None or fnmatch.fnmatchcase(package.rel, match)):
                seen.add(real)
                found.append(package)
    return found


def _walk(root: str, spec: str) -> list[Package]:
    found: list[Package] = []
    taken: set[str] = set()
    listing = pkgio.list_package(root, names=("Kptfile",), krmignore=False)  # hidden folders and .git left out
    for kptfile in sorted(listing.files, key=lambda f: f.rel.split("/")):  # a package before the folders inside it
        rel = posixpath.dirname(kptfile.rel) or "."
        if kptfile.is_link or not taken.isdisjoint(_above(rel)):
            continue  # a link is no package's own Kptfile; a selected package's remote subpackages are its update's
        package = _consumer(root, rel, kptfile.path, spec)
        if package is not None:
            found.append(package)
            taken.add(rel)
    return found


def _above(rel: str) -> list[str]:
    """The folders above ``rel`` (``"."`` first), below its root."""
    if rel == ".":
        return []
    parts = rel.split("/")
    return ["."] + ["/".join(parts[:n]) for n in range(1, len(parts))]


def _consumer(root: str, rel: str, kptfile: str, spec: str) -> Package | None:
    """The package of ``kptfile`` if it tracks ``spec``, else None."""
    try:
        text = files.read_text(kptfile)
    except (OSError, UnicodeDecodeError, KrmMergeError):
        return None  # not readable: whether it is a consumer cannot be told
    try:
        data = yamlio.load_data(text, kptfile)
    except KrmMergeError:
        return Package(root, rel, None, None) if _mentions(text, spec) else None
    git = _git_upstream(data)
    if git is None or not names(spec, str(git.get("repo") or ""), str(git.get("directory") or "/")):
        return None
    try:
        upstream, lock = read_upstream(data, kptfile)
    except KrmMergeError:
        return Package(root, rel, None, None)  # a consumer whose Kptfile its own update refuses
    return Package(root, rel, upstream, lock)


_REPO_LINE = re.compile(r"^\s*repo:\s*[\"']?([^\"'\s#]+)", re.MULTILINE)
_DIRECTORY_LINE = re.compile(r"^\s*directory:\s*[\"']?([^\"'\s#]+)", re.MULTILINE)


def _mentions(text: str, spec: str) -> bool:
    """Whether a Kptfile that is not YAML has ``repo:`` (and ``directory:``) lines naming ``spec``."""
    directory = _DIRECTORY_LINE.search(text)
    return any(names(spec, repo, directory.group(1) if directory else "/") for repo in _REPO_LINE.findall(text))


def _git_upstream(data: Any) -> dict[str, Any] | None:
    """``upstream.git`` of a Kptfile's data, when it has a git upstream."""
    upstream = data.get("upstream") if isinstance(data, dict) else None
    if not isinstance(upstream, dict) or upstream.get("type", "git") != "git":
        return None
    git = upstream.get("git")
    return git if isinstance(git, dict) else None


__all__ = ["Package", "names", "nothing_selected", "select"]
