"""Fetching a package's origin and upstream versions from git, as ``kpt pkg update`` does.

A package fetched with ``kpt pkg get`` records in its Kptfile where it came
from (``upstream.git``: repo, directory, ref) and which commit it was fetched
at (``upstreamLock.git.commit``).  The user's own ``git`` does the fetching
(so their credentials, proxies and config apply, as with kpt).  A ref is
resolved with one ``git ls-remote``; only the commits an update reads are
fetched (``--depth=1 --filter=blob:none``) into a bare repository under
``$XDG_CACHE_HOME/krm-merge/git/``, and a package directory is extracted at
a commit with ``git archive`` (which fetches that directory's blobs, in one
batch).

What a Kptfile names is checked before git sees it
(:func:`krm_merge.kptfile.upstream.read_upstream`): no value can become a git
option, a directory cannot climb out of the repository, a commit is a commit id.  A repository that only upstream content
names (a remote subpackage that arrived with an update) is fetched under git's
rules for URLs that do not come from the user (``GIT_PROTOCOL_FROM_USER=0``,
``ext::`` never): a local path or ``file://`` needs the user's own
``protocol.file.allow=always`` (docs/security.md).
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, TypeVar

from krm_merge import files
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
        self._present: set[tuple[Path, str]] = set()
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

    def _fetch(self, args: list[str], what: str, repo: str, git_dir: Path | None = None) -> Any:
        options, env = self._transport(repo)
        try:
            return self._run(options + args, what, git_dir, env=env)
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

    def _repo_dir(self, repo: str) -> Path:
        """The cache's repository for ``repo``, created empty (no fetch) the first time.

        Created aside and renamed into place under the mirror's lock, so a
        run killed half-way never leaves a repository to be trusted.  New
        ones are partial (``blob:none``): a fetch brings commits and trees,
        and ``git archive`` fetches the blobs of the one directory it reads,
        in one batch.  Mirrors cloned whole by earlier versions are used as
        they are.
        """
        path = self.root / _mirror_name(repo)
        if (path / "HEAD").is_file():
            return path
        self.root.mkdir(parents=True, exist_ok=True)
        with _locked(self.root / (path.name + ".lock")):
            _remove_unfinished_clones(path)
            if not (path / "HEAD").is_file():
                tmp = Path(tempfile.mkdtemp(prefix=path.name + _CLONING, dir=self.root))
                try:
                    self._run(["init", "--quiet", "--bare", str(tmp / "m")], f"creating the cache of {repo}")
                    self._run(["config", "remote.origin.url", repo], f"creating the cache of {repo}", tmp / "m")
                    if not path.exists():  # else another run created it meanwhile: use that one
                        os.replace(tmp / "m", path)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
        return path

    def remote_refs(self, repo: str, names: list[str]) -> dict[str, str]:
        """The commits the full ref ``names`` point at in ``repo`` (tags peeled), by one ``git ls-remote``.

        One round trip that transfers no object: enough to resolve a ref, and
        to see that the package is already at it.
        """
        patterns = [p for name in names for p in (name, name + "^{}")]
        out = self._fetch(["ls-remote", "--", repo, *patterns], f"listing the refs of {repo}", repo)
        direct, peeled = {}, {}
        for line in str(out).splitlines():
            commit, _, name = line.partition("\t")
            if name.endswith("^{}"):
                peeled[name[:-3]] = commit
            else:
                direct[name] = commit
        return {name: peeled.get(name, commit) for name, commit in direct.items()}

    def fetch_commits(self, repo: str, commits: list[str]) -> Path:
        """The cache's repository for ``repo`` holding ``commits``: only the missing ones are fetched.

        One ``git fetch --depth=1 --filter=blob:none`` of the commits by id
        (each kept by a ``refs/krm-merge/`` ref, so git never prunes it);
        a server that refuses to send a commit by id gets the whole fetch
        of :meth:`mirror` instead.
        """
        path = self._repo_dir(repo)
        missing = [c for c in dict.fromkeys(commits) if not self._has(path, c)]
        if not missing:
            return path
        with _locked(self.root / (path.name + ".lock")):
            missing = [c for c in missing if not self._has(path, c)]  # another run may have fetched them
            if not missing:
                return path
            specs = [f"+{c}:refs/krm-merge/{c}" for c in missing]
            try:
                self._fetch(["fetch", "--quiet", "--no-tags", "--depth=1", "--filter=blob:none", "origin", *specs],
                            f"fetching {', '.join(missing)} of {repo}", repo, path)
                return path
            except KrmError:
                pass  # e.g. a server without fetch by commit id, or a shallow fetch: the whole repository
        mirror = self.mirror(repo)
        for commit in missing:
            self._ensure_commit(mirror, repo, commit)
        return mirror

    def _has(self, path: Path, commit: str) -> bool:
        """Whether the cache holds ``commit`` whole, asked without a process and without a lazy fetch.

        ``refs/krm-merge/COMMIT`` is written only after its fetch completed;
        a mirror cloned whole (not partial) may hold it under any ref.
        """
        if (path, commit) in self._present:
            return True
        ref = f"refs/krm-merge/{commit}"
        if (path / ref).is_file() or f" {ref}\n" in _read_or_empty(path / "packed-refs"):
            return True
        if "promisor" in _read_or_empty(path / "config"):
            return False  # partial: asking git would fetch the commit with all its history
        try:
            self._run(["cat-file", "-e", f"{commit}^{{commit}}"], "", path)
        except KrmError:
            return False
        self._present.add((path, commit))  # a commit in a whole mirror stays: ask git once a run
        return True

    def mirror(self, repo: str) -> Path:
        """The cache's repository of ``repo`` with every branch and tag fetched (once per run).

        Only needed for what :meth:`remote_refs` cannot answer (an abbreviated
        commit id, ...) and for servers that refuse :meth:`fetch_commits`.
        """
        if repo in self._fetched:
            return self._fetched[repo]
        path = self._repo_dir(repo)
        # One fetch of a mirror at a time: two updates sharing the cache wait for each other.
        with _locked(self.root / (path.name + ".lock")):
            self._fetch(["fetch", "--quiet", "--prune", "--force", "origin", "+refs/heads/*:refs/heads/*",
                         "+refs/tags/*:refs/tags/*"], f"fetching {repo}", repo, path)
        self._fetched[repo] = path
        return path

    def resolve(self, repo: str, ref: str) -> str:
        """The commit a branch, tag or commit id names in ``repo`` (from the whole mirror)."""
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
        records in ``upstreamLock.git.ref``.  Branches and tags are asked of
        the remote (:meth:`remote_refs`, no object fetched); a commit id is
        taken as it is (fetched when extracted); anything else goes to the
        whole mirror.
        """
        if _SHA.match(ref):
            return ref, ref
        tags = package_tags(directory, ref)
        names = [f"refs/tags/{t}" for t in tags] + [f"refs/tags/{ref}", f"refs/heads/{ref}"]
        found = self.remote_refs(repo, names)
        for tag in tags:
            if f"refs/tags/{tag}" in found:
                return tag, found[f"refs/tags/{tag}"]
        for name in names[len(tags):]:
            if name in found:
                return ref, found[name]
        return ref, self.resolve(repo, ref)

    def _ensure_commit(self, mirror: Path, repo: str, commit: str) -> None:
        try:
            self._run(["cat-file", "-e", f"{commit}^{{commit}}"], "", mirror)
        except KrmError:
            # Not reachable from any ref (e.g. force-pushed away): ask for it by id.
            self._fetch(["fetch", "--quiet", "origin", commit], f"fetching commit {commit} of {repo}", repo, mirror)

    def extract_all(self, jobs: list[tuple[str, str, str, Path]], meanwhile: Callable[[], _T]) -> _T:
        """:meth:`extract` of each ``(repo, commit, directory, dest)``, their ``git archive`` run side by side;
        returns what ``meanwhile()`` returns, called while the archives are being written.

        An update reads two versions: one archive waits for the other's
        process start and disk reads otherwise, and the caller's own work
        (update loads the merge there) overlaps git's.  A failed archive is
        done again by :meth:`extract`, which explains the failure.
        """
        started: list[tuple[subprocess.Popen[bytes], tuple[str, str, str, Path]]] = []
        try:
            for repo, commit, directory, dest in jobs:
                mirror = self.fetch_commits(repo, [commit])
                options, env = self._transport(repo)
                sub = directory.strip("/")
                cmd = [self.git, "--git-dir", str(mirror), *options, "archive", "--format=tar",
                       f"{commit}:{sub}" if sub else commit]
                try:
                    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, env=env)
                except OSError as err:
                    raise KrmError(f"cannot run git: {err}") from None
                started.append((proc, (repo, commit, directory, dest)))
            result = meanwhile()
            for proc, (repo, commit, directory, dest) in started:
                try:
                    data, _ = proc.communicate(timeout=GIT_TIMEOUT)
                except subprocess.TimeoutExpired:
                    raise KrmError(f"reading {directory} at {commit} of {repo}: git timed out after {GIT_TIMEOUT} s") from None
                if proc.returncode != 0:
                    self.extract(repo, commit, directory, dest)
                else:
                    _unpack(data, dest)
            return result
        finally:
            for proc, _job in started:  # none outlives the update, whatever stopped it
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()

    def extract(self, repo: str, commit: str, directory: str, dest: Path) -> None:
        """Write the package ``directory`` at ``commit`` into the empty directory ``dest``."""
        mirror = self.fetch_commits(repo, [commit])
        sub = directory.strip("/")
        treeish = f"{commit}:{sub}" if sub else commit
        try:  # the common case in one git process; the checks below only explain a failure
            data = self._archive(repo, mirror, treeish, "")
        except KrmError:
            try:
                kind = self._run(["cat-file", "-t", treeish], "", mirror)
            except KrmError:
                kind = ""
            if kind not in ("tree", "commit"):
                raise KrmError(f"directory {directory} does not exist at commit {commit} of {repo}") from None
            data = self._archive(repo, mirror, treeish, f"reading {directory} at {commit} of {repo}")
        _unpack(data, dest)

    def _archive(self, repo: str, mirror: Path, treeish: str, what: str) -> bytes:
        """``git archive`` of ``treeish``; a partial cache fetches the blobs it needs, under ``repo``'s transport rules."""
        options, env = self._transport(repo)
        return bytes(self._run(options + ["archive", "--format=tar", treeish], what, mirror, stdout_bytes=True, env=env))


_T = TypeVar("_T")
_CLONING = ".cloning."


class _locked:
    """An exclusive ``flock`` on ``path`` for a ``with`` block (released by the kernel if the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # the lock file stays: removing it would let two waiters lock different files


def _read_or_empty(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


def _remove_unfinished_clones(path: Path) -> None:
    """Temporary clones of ``path`` left by a killed run (the caller holds the mirror's lock)."""
    for entry in path.parent.glob(path.name + _CLONING + "*"):
        shutil.rmtree(entry, ignore_errors=True)


def package_tags(directory: str, ref: str) -> list[str]:
    """The directory-prefixed tags kpt tries for ``ref``, innermost directory first (``a/b/v1``, ``a/v1``)."""
    parts = [p for p in directory.split("/") if p]
    return [f"{'/'.join(parts[:n])}/{ref}" for n in range(len(parts), 0, -1)]


def _tarfile() -> ModuleType:
    """:mod:`tarfile`, loaded by the first extraction: an update to the ref the package is at
    extracts nothing, and importing tarfile was ~1.4 ms of its ~65 ms CPU (issue 24)."""
    import tarfile

    return tarfile


def _unpack(data: bytes, dest: Path) -> None:
    """Write the tar ``data`` (a ``git archive``) into the empty directory ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    # A package of usual size unpacks faster in-process than by starting tar.
    if len(data) <= SMALL_ARCHIVE and _untar_in_process(data, dest):
        return
    if not _untar_with_tar(data, dest):
        with _tarfile().open(fileobj=io.BytesIO(data), mode="r:") as tar:  # uncompressed: see _untar_in_process
            tar.extractall(dest, filter="data")


def _untar_in_process(data: bytes, dest: Path) -> bool:
    """Unpack ``git archive``'s directories, files and links; False (``dest`` emptied again) on anything else.

    tarfile's ``data`` filter resolves every member's path (several
    ``lstat`` a member: most of the unpacking time of a small package); this
    unpacks only what a git tree can hold, checks each name itself, creates
    files with ``O_EXCL | O_NOFOLLOW`` and the links last, so no file is
    written through a link.  Links stay links (the caller prunes them).
    """
    tarfile = _tarfile()
    links: list[tuple[str, str]] = []
    try:
        # "r:": git archive --format=tar is never compressed; "r" would try gzip, bz2 and xz
        # first, importing gzip (start-up time of every update, issue 24).
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar:
                path = _member_path(dest, member.name)
                if path is None:
                    raise tarfile.TarError(f"unexpected name {member.name!r}")
                if member.isdir():
                    os.makedirs(path, exist_ok=True)
                elif member.isreg():
                    _write_member(path, tar.extractfile(member), member.mode)
                elif member.issym():
                    links.append((member.linkname, path))
                else:
                    raise tarfile.TarError(f"{member.name}: not a file, directory or link")
        for target, path in links:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
    except (tarfile.TarError, OSError, ValueError):
        _empty(dest)
        return False
    return True


def _member_path(dest: Path, name: str) -> str | None:
    """Where member ``name`` goes below ``dest``; None for a name that is absolute, climbs or holds a NUL."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or ".." in parts or "\0" in name:
        return None
    return os.path.join(dest, *parts)


def _write_member(path: str, source: Any, mode: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # As the data filter: no set-id bits, no group/other write, the owner can read and write.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                 (mode & 0o755) | 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(source.read() if source is not None else b"")


def _empty(dest: Path) -> None:
    for entry in dest.iterdir():
        files.remove_tree(entry)  # however deep the archive nested its folders (shutil.rmtree recurses)


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
    """The cache directory's name for ``repo``: readable, and unique by a hash of the URL."""
    # Only a fetch names the cache: an update to the ref the package is at (one ls-remote) never
    # loads hashlib, whose OpenSSL binding was ~2.7 ms of that update's ~65 ms CPU (issue 24).
    import hashlib

    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", repo.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{readable}-{hashlib.sha256(repo.encode('utf-8')).hexdigest()[:16]}.git"


__all__ = ["GitCache", "cache_root", "find_git", "package_tags", "split_package_ref"]
