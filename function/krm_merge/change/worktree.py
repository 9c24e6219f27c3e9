"""The work tree a command changes: where it is, and whether the files it will write are free to change.

Checked before the command writes anything, so a refusal leaves every file as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from krm_merge.change.errors import ChangeError
from krm_merge.change.gitrun import Git
from krm_merge.change.redact import Redactor


class WorkTree:
    """A package directory inside a git work tree: the tree's top and the package's path in it."""

    __slots__ = ("git", "top", "prefix")

    def __init__(self, git: Git, top: str, prefix: str) -> None:
        self.git = git
        self.top = top
        self.prefix = prefix  # the package folder relative to the top, "" at the top, "/" separated

    def repo_path(self, package_rel: str) -> str:
        """A path relative to the package as a path relative to the top of the work tree.

        A symbolic link is followed to its target (the command writes through a link inside
        the package), which must be in the work tree.
        """
        path = f"{self.prefix}/{package_rel}" if self.prefix else package_rel
        full = os.path.join(self.top, path)
        if not os.path.islink(full):
            return path
        target = os.path.relpath(os.path.realpath(full), os.path.realpath(self.top)).replace(os.sep, "/")
        if target.startswith("../"):
            raise ChangeError("work tree", f"{path} is a symbolic link out of the work tree")
        return target

    @property
    def package_name(self) -> str:
        """The package's path in the repository, or the repository folder's name for a package at the top."""
        return self.prefix or os.path.basename(self.top)


def open_work_tree(package_dir: str, redactor: Redactor, environ: Mapping[str, str] | None = None) -> WorkTree:
    """The work tree holding ``package_dir``; ``work tree`` error when it is not in one."""
    if not os.path.isdir(package_dir):
        raise ChangeError("work tree", f"{package_dir} is not a directory")
    git = Git(os.path.realpath(package_dir), redactor, environ)
    probe = git.attempt(["rev-parse", "--is-inside-work-tree", "--show-toplevel"])
    lines = probe.out.split("\n")
    if probe.code != 0 or lines[0] != "true" or len(lines) < 2:
        raise ChangeError("work tree", f"{package_dir} is not inside a git work tree ({probe.last_line()}); "
                          "--pull-request commits to the repository the package is in")
    top = lines[1]
    prefix = os.path.relpath(os.path.realpath(package_dir), os.path.realpath(top)).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix
    return WorkTree(Git(top, redactor, environ), top, prefix)


def uncommitted(tree: WorkTree, paths: Iterable[str]) -> list[str]:
    """Which of ``paths`` (relative to the top) differ from HEAD in the index or the work tree, or are untracked."""
    wanted = sorted(set(paths))
    if not wanted:
        return []
    result = tree.git.attempt(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--",
                               *wanted])
    if result.code != 0:
        raise ChangeError("work tree", f"reading the work tree's status: {result.last_line()}")
    return sorted({entry[3:] for entry in result.out.split("\0") if len(entry) > 3})  # "XY path", unstripped


def blobs(tree: WorkTree, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """The blob id (and mode) of each of ``paths`` in ``commit``; a path the commit does not have is absent."""
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    out = tree.git.run(["ls-tree", "-z", "--full-tree", commit, "--", *wanted], "work tree",
                       f"reading {commit[:12]}'s files")
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            mode, _, blob = meta.split(" ")
            found[path] = f"{mode} {blob}"
    return found


def work_tree_blobs(tree: WorkTree, paths: Iterable[str]) -> dict[str, str]:
    """The blob id each existing file of ``paths`` would have if added (git's filters applied), without storing it."""
    present = [p for p in sorted(set(paths)) if os.path.isfile(os.path.join(tree.top, p))]
    if not present:
        return {}
    out = tree.git.run(["hash-object", "--", *present], "work tree", "hashing the changed files")
    return dict(zip(present, out.split("\n")))


def package_at(tree: WorkTree, commit: str, scratch: str, step: str, what: str) -> str:
    """The package folder as ``commit`` holds it, checked out under ``scratch`` at its path in the repository.

    Read from git's objects through a private index (git's filters apply, as for a checkout): the
    user's files, index and HEAD are not touched.  A commit without the folder gives an empty one.
    """
    prefix = tree.prefix
    top = os.path.join(scratch, "repo")
    package = os.path.join(top, *prefix.split("/")) if prefix else top
    env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
    tree.git.run(["read-tree", f"{commit}:{prefix}" if prefix else commit], step, what, env=env)
    tree.git.run(["checkout-index", "--all", "--force", f"--prefix={package}{os.sep}"], step, what, env=env)
    os.makedirs(package, exist_ok=True)
    return package
