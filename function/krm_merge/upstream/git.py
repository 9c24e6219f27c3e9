"""Fetching a package's origin and upstream versions from git, as ``kpt pkg update`` does.

A package fetched with ``kpt pkg get`` records in its Kptfile where it came
from (``upstream.git``: repo, directory, ref) and which commit it was fetched
at (``upstreamLock.git.commit``).  The user's own ``git`` does the fetching
(so their credentials, proxies and config apply, as with kpt); every
repository is kept as a bare mirror under ``$XDG_CACHE_HOME/krm-merge/git/``
and only fetched again on the next update.  A package directory is extracted
at a commit with ``git archive``.

What a Kptfile names is checked before git sees it
(:func:`krm_merge.kptfile.upstream.read_upstream`): no value can become a git
option, a directory cannot climb out of the repository, a commit is a commit id.  A repository that only upstream content
names (a remote subpackage that arrived with an update) is fetched under git's
rules for URLs that do not come from the user (``GIT_PROTOCOL_FROM_USER=0``,
``ext::`` never): a local path or ``file://`` needs the user's own
``protocol.file.allow=always`` (docs/security.md).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from krm_merge.krm.results import KrmError

_SHA = re.compile(r"^[0-9a-f]{40}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
GIT_TIMEOUT = 600
SMALL_ARCHIVE = 1 << 20  # bytes of tar below which tarfile beats starting the system's tar


def split_package_ref(arg: str) -> tuple[str, str | None]:
    """``PKG@REF`` -> (PKG, REF); a path that exists as given (even with ``@``) has no ref."""
    if os.path.isdir(arg) or "@" not in arg:
        return arg, None
    path, _, ref = arg.rpartition("@")
    if not ref:
        raise KrmError(f"{arg}: empty ref after '@'")
    if ref.startswith("-") or _CONTROL.search(ref):
        raise KrmError(f"{arg}: the ref after '@' begins with '-' or holds a control character")
    return path, ref


def find_git() -> str:
    """The user's git, or a clear error."""
    git = shutil.which("git")
    if git is None:
        raise KrmError("git is not installed (or not on PATH); krm-merge update needs it to fetch the upstream "
                       "repository (or give --origin DIR --upstream DIR)")
    return git


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/krm-merge/git`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "krm-merge" / "git"


class GitCache:
    """Bare mirrors of upstream repositories, one per repository URL."""

    def __init__(self, root: Path | None = None, git: str | None = None) -> None:
        self.root = root or cache_root()
        self.git = git or find_git()
        self._fetched: dict[str, Path] = {}
        self.trusted: set[str] = set()

    def trust(self, repos: Any) -> None:
        """Repositories the user named (their package's Kptfiles): fetched under the user's git rules."""
        self.trusted.update(repos)

    def _transport(self, repo: str) -> tuple[list[str], dict[str, str] | None]:
        """git options and environment for fetching ``repo``: git's rules for URLs not from the user,
        unless the user's package names it."""
        if repo in self.trusted:
            return [], None
        return ["-c", "protocol.ext.allow=never"], {**os.environ, "GIT_PROTOCOL_FROM_USER": "0"}

    def _fetch(self, args: list[str], what: str, repo: str, git_dir: Path | None = None) -> None:
        options, env = self._transport(repo)
        try:
            self._run(options + args, what, git_dir, env=env)
        except KrmError as err:
            if env is not None and "not allowed" in err.message:
                raise KrmError(f"{err.message} ({repo} is named only by upstream content, so git's rules for "
                               "URLs that do not come from the user apply; see docs/security.md)") from None
            raise

    def _run(self, args: list[str], what: str, git_dir: Path | None = None, stdout_bytes: bool = False,
             env: dict[str, str] | None = None) -> Any:
        cmd = [self.git] + (["--git-dir", str(git_dir)] if git_dir else []) + args
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL, env=env)
        except OSError as err:
            raise KrmError(f"cannot run git: {err}") from None
        except subprocess.TimeoutExpired:
            raise KrmError(f"{what}: git timed out after {GIT_TIMEOUT} s") from None
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise KrmError(f"{what}: {message[-1] if message else f'git exited with {proc.returncode}'}")
        return proc.stdout if stdout_bytes else proc.stdout.decode("utf-8", "replace").strip()

    def mirror(self, repo: str) -> Path:
        """The local mirror of ``repo``: cloned the first time, fetched once per run after that."""
        if repo in self._fetched:
            return self._fetched[repo]
        path = self.root / _mirror_name(repo)
        self.root.mkdir(parents=True, exist_ok=True)
        # One fetch or clone of a mirror at a time: two updates sharing the cache wait for each other.
        with _locked(self.root / (path.name + ".lock")):
            _remove_unfinished_clones(path)
            if (path / "HEAD").is_file():
                self._fetch(["fetch", "--quiet", "--prune", "--force", "--tags", "origin"], f"fetching {repo}", repo, path)
            else:
                # Cloned aside and renamed into place: a clone killed half-way is never taken for a mirror.
                tmp = Path(tempfile.mkdtemp(prefix=path.name + _CLONING, dir=self.root))
                try:
                    self._fetch(["clone", "--quiet", "--mirror", "--", repo, str(tmp / "m")], f"cloning {repo}", repo)
                    if not path.exists():  # else another run cloned it meanwhile: use that one
                        os.replace(tmp / "m", path)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
        self._fetched[repo] = path
        return path

    def resolve(self, repo: str, ref: str) -> str:
        """The commit a branch, tag or commit id names in ``repo``."""
        mirror = self.mirror(repo)
        if _SHA.match(ref):
            self._ensure_commit(mirror, repo, ref)
            return ref
        for candidate in (f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
            try:
                return str(self._run(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], "", mirror))
            except KrmError:
                continue
        raise KrmError(f"ref {ref!r} not found in {repo}")

    def resolve_package_ref(self, repo: str, directory: str, ref: str) -> tuple[str, str]:
        """kpt's resolution of ``ref`` for the package at ``directory``: (the ref kpt locks, its commit).

        A repository can version several packages independently with tags
        prefixed by their directory (``pkg/v1``), while the Kptfile's
        ``upstream.git.ref`` says ``v1``.  Like kpt's fetcher, the tag
        ``DIR/REF`` is tried for the package directory and then each parent
        directory, and only then ``REF`` itself; the ref found is what kpt
        records in ``upstreamLock.git.ref``.
        """
        mirror = self.mirror(repo)
        for tag in package_tags(directory, ref):
            try:
                commit = self._run(["rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"], "", mirror)
            except KrmError:
                continue
            return tag, str(commit)
        return ref, self.resolve(repo, ref)

    def _ensure_commit(self, mirror: Path, repo: str, commit: str) -> None:
        try:
            self._run(["cat-file", "-e", f"{commit}^{{commit}}"], "", mirror)
        except KrmError:
            # Not reachable from any ref (e.g. force-pushed away): ask for it by id.
            self._fetch(["fetch", "--quiet", "origin", commit], f"fetching commit {commit} of {repo}", repo, mirror)

    def extract(self, repo: str, commit: str, directory: str, dest: Path) -> None:
        """Write the package ``directory`` at ``commit`` into the empty directory ``dest``."""
        mirror = self.mirror(repo)
        sub = directory.strip("/")
        treeish = f"{commit}:{sub}" if sub else commit
        try:  # the common case in one git process; the checks below only explain a failure
            data = self._run(["archive", "--format=tar", treeish], "", mirror, stdout_bytes=True)
        except KrmError:
            self._ensure_commit(mirror, repo, commit)
            try:
                kind = self._run(["cat-file", "-t", treeish], "", mirror)
            except KrmError:
                kind = ""
            if kind not in ("tree", "commit"):
                raise KrmError(f"directory {directory} does not exist at commit {commit} of {repo}") from None
            data = self._run(["archive", "--format=tar", treeish], f"reading {directory} at {commit} of {repo}", mirror, stdout_bytes=True)
        dest.mkdir(parents=True, exist_ok=True)
        # A package of usual size unpacks faster in-process than by starting tar.
        if len(data) <= SMALL_ARCHIVE and _untar_in_process(data, dest):
            return
        if not _untar_with_tar(data, dest):
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(dest, filter="data")


_CLONING = ".cloning."


class _locked:
    """An exclusive ``flock`` on ``path`` for a ``with`` block (released by the kernel if the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        import fcntl

        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # the lock file stays: removing it would let two waiters lock different files


def _remove_unfinished_clones(path: Path) -> None:
    """Temporary clones of ``path`` left by a killed run (the caller holds the mirror's lock)."""
    for entry in path.parent.glob(path.name + _CLONING + "*"):
        shutil.rmtree(entry, ignore_errors=True)


def package_tags(directory: str, ref: str) -> list[str]:
    """The directory-prefixed tags kpt tries for ``ref``, innermost directory first (``a/b/v1``, ``a/v1``)."""
    parts = [p for p in directory.split("/") if p]
    return [f"{'/'.join(parts[:n])}/{ref}" for n in range(len(parts), 0, -1)]


def _untar_in_process(data: bytes, dest: Path) -> bool:
    """Unpack with tarfile's safe filter; False (``dest`` emptied again) on what it refuses, e.g. a link out."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError):
        _empty(dest)
        return False
    return True


def _empty(dest: Path) -> None:
    for entry in dest.iterdir():
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def _untar_with_tar(data: bytes, dest: Path) -> bool:
    """Unpack with the system's tar (several times faster than tarfile for thousands of files).

    git archive writes relative paths only (a git tree cannot name ``..``);
    symlinks are unpacked as links and never followed by the package reader.
    """
    tar = shutil.which("tar")
    if tar is None:
        return False
    try:
        proc = subprocess.run([tar, "-x", "-f", "-", "-C", str(dest), "--no-same-owner"], input=data,
                              capture_output=True, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode != 0:
        _empty(dest)  # start again with tarfile on an empty directory
        return False
    return True


def _mirror_name(repo: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", repo.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{readable}-{hashlib.sha256(repo.encode('utf-8')).hexdigest()[:16]}.git"


__all__ = ["GitCache", "cache_root", "find_git", "package_tags", "split_package_ref"]
