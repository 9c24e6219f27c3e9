"""Fetching a package's origin and upstream versions from git, as ``kpt pkg update`` does.

A package fetched with ``kpt pkg get`` records in its Kptfile where it came
from (``upstream.git``: repo, directory, ref) and which commit it was fetched
at (``upstreamLock.git.commit``).  The user's own ``git`` does the fetching
(so their credentials, proxies and config apply, as with kpt).  A ref is
resolved with one ``git ls-remote``; the commits an update reads are fetched
by id with their trees only (``--depth=1 --filter=blob:none``, one fetch for
both versions) into a bare repository under ``$XDG_CACHE_HOME/krm-merge/git/``;
the package directory of each is listed from those trees, then the blobs
below it (and nothing else) are fetched in one more fetch, their sizes
checked, and the files read from the objects into memory (a fleet's shared
copies: written into folders; :mod:`krm_merge.upstream.gitread`).

What a Kptfile names is checked before git sees it
(:func:`krm_merge.kptfile.upstream.read_upstream`): no value can become a git
option, a directory cannot climb out of the repository, a commit is a commit id.  A repository that only upstream content
names (a remote subpackage that arrived with an update) is fetched under git's
rules for URLs that do not come from the user (``GIT_PROTOCOL_FROM_USER=0``,
``ext::`` never): a local path or ``file://`` needs the user's own
``protocol.file.allow=always`` (docs/security.md).  git is run by
:mod:`krm_merge.gitexec` (the profiles :data:`~krm_merge.gitexec.UPSTREAM` and
:data:`~krm_merge.gitexec.UPSTREAM_CONTENT`); when it fails, its own words
(stderr, bounded, control characters escaped) are in the error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

try:  # CPython's own BLAKE2: hashlib would load OpenSSL's binding, ~4 ms of every update that fetches (issue 33)
    from _blake2 import blake2b
except ImportError:  # an interpreter without it
    from hashlib import blake2b

from krm_merge import files, gitexec
from krm_merge.gitexec import GitError
from krm_merge.krm.results import KrmError
from krm_merge.records import Record

from . import gitread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    _T = TypeVar("_T")

_SHA = re.compile(r"^[0-9a-f]{40}$")
# Maybe an abbreviated commit id: resolved by the whole mirror, which a shallow fetch before it would cut short.
_ABBREVIATED = re.compile(r"^[0-9a-f]{4,39}$")
# Where the candidates for a ref are fetched to, and every byte git lets a ref name hold after one: all but
# controls, DEL, space and ~^:?*[\ (git check-ref-format); bytes past 0x7f as os.fsencode writes them.
_PROBE = "refs/krm-merge/probe/"
_NAME_BYTES = ([chr(b) for b in range(0x21, 0x7f) if chr(b) not in "~^:?*[\\"]
               + [chr(0xDC00 + b) for b in range(0x80, 0x100)])
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
GIT_TIMEOUT = gitexec.GIT_TIMEOUT
# A blob larger than this is hashed by index-pack as a stream instead of in memory (git's default
# is 512 MiB: an upstream's 500 MB file would be held whole by the fetch, before our size checks).
BIG_FILE_THRESHOLD = "16m"


class Version(Record):
    """One version of a package an update reads: ``directory`` of ``repo`` at ``commit``, written to ``dest``
    (None: read into memory); ``what`` names it in messages (``origin``, ``upstream``)."""

    repo: str
    commit: str
    directory: str
    dest: Path | None
    what: str


class HeldTree(Record):
    """A version read into memory (:meth:`GitCache.read_into_memory`): its entries as git's trees list them,
    and the bytes of each of its files, by path below the package directory."""

    entries: list[gitread.Entry]
    contents: dict[str, bytes]


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
    """The user's git (the first ``git`` on ``PATH``, as ``shutil.which`` finds it), or a clear error."""
    return gitexec.find_git("git is not installed (or not on PATH); krm-merge update needs it to fetch the upstream "
                            "repository (or give --origin DIR --upstream DIR)")


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/krm-merge/git`` (``~/.cache`` when unset)."""
    return Path(files.cache_folder("git"))


class GitCache:
    """Bare mirrors of upstream repositories, one per repository URL."""

    def __init__(self, root: Path | None = None, git: str | None = None) -> None:
        self.root = root or cache_root()
        self.git = git or find_git()
        self._fetched: dict[str, Path] = {}
        self._present: set[tuple[Path, str]] = set()
        self._created: set[Path] = set()  # repositories this run created: nothing in them yet
        self.trusted: set[str] = set()

    def trust(self, repos: Any) -> None:
        """Repositories the user named (their package's Kptfiles): fetched under the user's git rules."""
        self.trusted.update(repos)

    def _profile(self, repo: str) -> str:
        """How ``repo`` is fetched: git's rules for URLs not from the user, unless the user's package names it."""
        return gitexec.UPSTREAM if repo in self.trusted else gitexec.UPSTREAM_CONTENT

    def _git(self, profile: str, git_dir: Path | None) -> gitexec.Git:
        return gitexec.Git(profile, "", executable=self.git, git_dir=str(git_dir) if git_dir else None)

    def _fetch(self, args: list[str], what: str, repo: str, git_dir: Path | None = None,
               stdin: bytes | None = None, during: Callable[[], Any] | None = None) -> str:
        profile = self._profile(repo)
        try:
            return self._run(args, what, git_dir, profile=profile, stdin=stdin, during=during)
        except GitError as err:
            if profile == gitexec.UPSTREAM_CONTENT and gitexec.refused_transport(err):
                raise GitError(what, f"{err.words} ({repo} is named only by upstream content, so git's rules for "
                               "URLs that do not come from the user apply; see docs/security.md)", err.status) from None
            raise

    def _run(self, args: list[str], what: str, git_dir: Path | None = None, profile: str = gitexec.UPSTREAM,
             stdin: bytes | None = None, during: Callable[[], Any] | None = None) -> str:
        """Run git (:meth:`krm_merge.gitexec.Git.run`); its stdout, stripped.  ``during()`` is called while git runs
        (the caller's work overlaps git's)."""
        out = self._git(profile, git_dir).run(args, what, stdin=stdin, timeout=GIT_TIMEOUT, during=during)
        return out.decode("utf-8", "replace").strip()

    def _repo_dir(self, repo: str) -> Path:
        """The cache's repository for ``repo``, created empty (no fetch) the first time.

        Created aside and renamed into place under the mirror's lock, so a
        run killed half-way never leaves a repository to be trusted.  New
        ones are partial (``blob:none``): a fetch brings commits and trees,
        and the blobs of the one directory an update reads are fetched by
        id (:meth:`read_versions`).  Mirrors cloned whole by earlier
        versions are used as they are.
        """
        path = self.root / _mirror_name(repo)
        if (path / "HEAD").is_file():
            return path
        self.root.mkdir(parents=True, exist_ok=True)
        with files.locked(self.root / (path.name + ".lock")):
            _remove_unfinished_clones(path)
            if not (path / "HEAD").is_file():
                tmp = self.root / f"{path.name}{_CLONING}{os.getpid()}"  # under the lock, leftovers removed: unique
                try:
                    _init_bare(tmp / "m", repo)
                    if not path.exists():  # else another run created it meanwhile: use that one
                        os.replace(tmp / "m", path)
                        self._created.add(path)
                finally:
                    files.remove_tree(tmp)
        return path

    def remote_refs(self, repo: str, names: list[str], during: Callable[[], Any] | None = None) -> dict[str, str]:
        """The commits the full ref ``names`` point at in ``repo`` (tags peeled), by one ``git ls-remote``
        (``during()`` called while it runs).

        One round trip that transfers no object: enough to resolve a ref, and
        to see that the package is already at it.
        """
        patterns = [p for name in names for p in (name, name + "^{}")]
        out = self._fetch(["ls-remote", "--", repo, *patterns], f"listing the refs of {repo}", repo, during=during)
        direct, peeled = {}, {}
        for line in out.splitlines():
            commit, _, name = line.partition("\t")
            if name.endswith("^{}"):
                peeled[name[:-3]] = commit
            else:
                direct[name] = commit
        return {name: peeled.get(name, commit) for name, commit in direct.items()}

    def fetch_commits(self, repo: str, commits: list[str]) -> Path:
        """The cache's repository for ``repo`` holding ``commits`` and their trees: only the missing ones are fetched.

        One ``git fetch --depth=1 --filter=blob:none`` of the commits by id
        (each kept by a ``refs/krm-merge/`` ref, so git never prunes it);
        a server that refuses to send a commit by id gets the whole fetch
        of :meth:`mirror` instead.
        """
        path = self._repo_dir(repo)
        missing = list(dict.fromkeys(commits)) if path in self._created else [
            c for c in dict.fromkeys(commits) if not self._has(path, c)]
        if not missing:
            return path
        with files.locked(self.root / (path.name + ".lock")):
            if path not in self._created:
                missing = [c for c in missing if not self._has(path, c)]  # another run may have fetched them
            if not missing:
                return path
            try:
                self._fetch_trees(repo, path, [f"+{c}:refs/krm-merge/{c}" for c in missing],
                                  f"fetching {', '.join(missing)} of {repo}")
                self._created.discard(path)
                return path
            except GitError:
                pass  # e.g. a server without fetch by commit id, or a shallow fetch: the whole repository
        self._created.discard(path)
        mirror = self.mirror(repo)
        for commit in missing:
            self._ensure_commit(mirror, repo, commit)
        return mirror

    def _fetch_trees(self, repo: str, path: Path, specs: list[str], what: str,
                     during: Callable[[], Any] | None = None) -> None:
        """``git fetch --depth=1 --filter=blob:none`` of ``specs`` into ``path``: commits with their trees only
        (``during()`` called while git runs)."""
        # git maintenance --auto (a process) runs after the blobs' fetch only: once an update
        self._fetch(["-c", f"core.bigFileThreshold={BIG_FILE_THRESHOLD}", "-c", "maintenance.auto=false",
                     "fetch", "--quiet", "--no-tags", "--depth=1", "--filter=blob:none", "origin", *specs],
                    what, repo, path, during=during)

    def _fetch_blobs(self, repo: str, path: Path, blobs: list[str]) -> None:
        """Fetch ``blobs`` by id into the partial repository ``path``: the request git's own lazy fetch makes, made
        once for every blob an update reads (git makes it once per process)."""
        with files.locked(self.root / (path.name + ".lock")):
            self._fetch(["-c", "fetch.negotiationAlgorithm=noop", "-c", f"core.bigFileThreshold={BIG_FILE_THRESHOLD}",
                         "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                         "--filter=blob:none", "--stdin", "origin"],
                        f"fetching the files of {repo}", repo, path, stdin="".join(b + "\n" for b in blobs).encode())

    def _missing(self, repo: str, path: Path, trees: list[str], during: Callable[[], Any] | None) -> list[str]:
        """The objects below ``trees`` the partial repository ``path`` lacks, listed without fetching them
        (``during()`` called meanwhile).  A whole mirror lacks nothing: it is not asked."""
        out = self._fetch(["rev-list", "--objects", "--missing=print", *trees], "listing the files the cache lacks",
                          repo, path, during=during)
        return [line[1:] for line in out.splitlines() if line.startswith("?")]

    def _complete(self, path: Path, trees: list[str]) -> bool:
        """Whether the partial repository ``path`` holds every blob below each of ``trees`` (a package
        directory's), asked without a process: ``refs/krm-merge/complete/TREE`` is written only once they are
        all there (:meth:`_mark_complete`).

        A warm update so skips ``git rev-list --missing=print`` (a process, ~5 ms).  Were a blob gone all the
        same, the reader would fetch it on its own (a partial repository's lazy fetch): slower, not wrong.
        """
        return all(_holds_ref(path, f"refs/krm-merge/complete/{tree}") for tree in trees)

    def _mark_complete(self, repo: str, path: Path, trees: list[str]) -> None:
        """Record that the partial repository ``path`` holds every blob below ``trees`` (:meth:`_complete`): one
        ``git update-ref``, once per package directory's tree; a failure only leaves the next update to list
        them again."""
        try:
            self._fetch(["update-ref", "--stdin"], "recording the files the cache holds", repo, path,
                        stdin="".join(f"update refs/krm-merge/complete/{t} {t}\n" for t in trees).encode())
        except GitError:
            pass  # e.g. another update recording the same tree at that instant: it will be there, or asked again

    def _has(self, path: Path, commit: str) -> bool:
        """Whether the cache holds ``commit`` whole, asked without a process and without a lazy fetch.

        ``refs/krm-merge/COMMIT`` is written only after its fetch completed;
        a mirror cloned whole (not partial) may hold it under any ref.
        """
        if (path, commit) in self._present:
            return True
        if _holds_ref(path, f"refs/krm-merge/{commit}"):
            return True
        if _partial(path):
            return False  # partial: asking git would fetch the commit with all its history
        try:
            self._run(["cat-file", "-e", f"{commit}^{{commit}}"], "", path)
        except GitError:  # exit status 1: not there
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
        with files.locked(self.root / (path.name + ".lock")):
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
                return self._run(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], "", mirror)
            except GitError:  # exit status 1 (--quiet): no such commit
                continue
        raise KrmError(f"ref {ref!r} not found in {repo}")

    def resolve_package_ref(self, repo: str, directory: str, ref: str, fetching: list[str] | None = None,
                            during: Callable[[], Any] | None = None) -> tuple[str, str]:
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

        With ``fetching`` (the other commits of ``repo`` the update reads: the
        origin) and a cache that holds nothing of ``repo``, the candidates are
        fetched instead of listed, with their trees and ``fetching``, in one
        ``git fetch`` (:meth:`_fetch_candidates`): the round trip of the
        listing is saved, and :meth:`fetch_commits` then finds every commit
        in the cache.  The refs found, and so the result, are the same.

        ``during()`` is called while the remote is asked (the caller's work
        overlaps the round trip; a commit id asks nothing), perhaps twice
        (a fetch that fails, then the listing): it must not mind.
        """
        if _SHA.match(ref):
            return ref, ref
        tags = package_tags(directory, ref)
        names = list(dict.fromkeys([f"refs/tags/{t}" for t in tags] + [f"refs/tags/{ref}", f"refs/heads/{ref}"]))
        found = None
        if fetching is not None and not _ABBREVIATED.match(ref):
            found = self._fetch_candidates(repo, names, fetching, during)
        if found is None:
            found = self.remote_refs(repo, names, during)
        for tag in tags:
            if f"refs/tags/{tag}" in found:
                return tag, found[f"refs/tags/{tag}"]
        for name in (f"refs/tags/{ref}", f"refs/heads/{ref}"):
            if name in found:
                return ref, found[name]
        return ref, self.resolve(repo, ref)

    def _fetch_candidates(self, repo: str, names: list[str], commits: list[str],
                          during: Callable[[], Any] | None = None) -> dict[str, str] | None:
        """The commits of the full ref ``names`` that exist in ``repo`` (tags peeled), fetched with their trees and
        with ``commits`` in one ``git fetch --depth=1 --filter=blob:none``; None when the cache already held
        something of ``repo`` or that fetch failed (the caller lists the refs instead: today's way, today's errors).

        git refuses a refspec whose source does not exist, so each candidate
        is a glob (``refs/tags/v2*``) fetched into ``refs/krm-merge/probe/``;
        a glob also matches ``v20``, ``v2.1``, ``v2/x``..., each of which
        would cost a commit and its trees, and an upstream can make thousands
        of them.  So every name one more byte long is excluded by a negative
        refspec (``^refs/tags/v2X*`` for each byte X a ref name may hold: git
        applies them before it asks for any object), and only the exact names
        are fetched, whatever the server advertises.  The probe refs are then
        peeled by one ``git cat-file --batch-check`` and replaced by a
        ``refs/krm-merge/COMMIT`` ref, as :meth:`fetch_commits` leaves them.
        Only a repository this run created is fetched so (an empty one: no
        probe ref of another run can be in it), under the mirror's lock.  When
        a candidate begins with another (directory ``v2`` of ref ``v2``:
        ``v2/v2``, ``v2``), that exclusion would drop it: the refs are listed.
        """
        if any(a != b and b.startswith(a) for a in names for b in names):
            return None  # no refspec could take the one without the refs beginning like the other
        if (self.root / _mirror_name(repo) / "HEAD").is_file():
            return None  # the cache holds repo: list the refs first, fetch only what is missing
        path = self._repo_dir(repo)
        if path not in self._created:
            return None  # another run created it meanwhile
        specs = [f"+{c}:refs/krm-merge/{c}" for c in dict.fromkeys(commits)]
        for name in names:
            probe = _PROBE + name[len("refs/"):]
            specs += [f"+{name}*:{probe}*", *(f"^{name}{byte}*" for byte in _NAME_BYTES)]
        with files.locked(self.root / (path.name + ".lock")):
            try:
                self._fetch_trees(repo, path, specs, f"fetching {', '.join(names)} of {repo}", during)
            except GitError as err:
                if err.timed_out:
                    raise  # a server that does not answer is not asked again another way
                return None  # e.g. a commit the server does not have, a ref no refspec can name: asked again, as before
            self._created.discard(path)
            probes = {_PROBE + name[len("refs/"):]: name for name in names}
            out = self._fetch(["cat-file", "--batch-check=%(objectname) %(objecttype)"], "reading the refs fetched",
                              repo, path, stdin="".join(p + "^{}\n" for p in probes).encode())
            found: dict[str, str] = {}
            kept: dict[str, None] = {}  # an ordered set of update-ref lines
            dropped: list[str] = []
            for probe, line in zip(probes, out.splitlines()):
                oid, _, kind = line.partition(" ")
                if kind in ("commit", "tree", "blob"):  # peeled as ls-remote peels: whatever the tags point at
                    found[probes[probe]] = oid
                    kept.update({f"update refs/krm-merge/{oid} {oid}\n": None} if kind == "commit" else {})
                    dropped.append(f"delete {probe}\n")
            if dropped:  # a commit another kind of object names is fetched by fetch_commits, as before
                self._fetch(["update-ref", "--stdin"], "keeping the commits fetched", repo, path,
                            stdin="".join([*kept, *dropped]).encode())
        return found

    def _ensure_commit(self, mirror: Path, repo: str, commit: str) -> None:
        try:
            self._run(["cat-file", "-e", f"{commit}^{{commit}}"], "", mirror)
        except GitError:
            # Not reachable from any ref (e.g. force-pushed away): ask for it by id.
            self._fetch(["fetch", "--quiet", "origin", commit], f"fetching commit {commit} of {repo}", repo, mirror)

    def read_versions(self, versions: list[Version], meanwhile: Callable[[], _T],
                      budget: files.Budget | None = None) -> _T:
        """Write each version's package directory into its empty ``dest``; returns what ``meanwhile()`` returns,
        called while git lists what the cache lacks of them: the caller's own work overlaps git's.

        Per repository: one fetch of the commits and their trees
        (:meth:`fetch_commits`), each directory listed from its trees (names,
        counts and depth checked: :func:`gitread.list_directory`), one fetch of
        the blobs below the directories that the cache lacks, their sizes
        checked before any is read (:func:`gitread.check_sizes`), then the files
        streamed from one ``git cat-file --batch``.  Nothing outside the
        package directories is fetched and no version is ever held in memory.
        Each version is held to one tree's bounds (:func:`files.tree_budget`),
        then charged whole to ``budget`` (the update's,
        :func:`files.update_budget`: all of them together): file counts from
        the trees, before any blob is fetched; sizes from the objects' headers,
        before any file is written.
        """
        return self._read(versions, meanwhile, budget, None)

    def read_into_memory(self, versions: list[Version], meanwhile: Callable[[], _T],
                         budget: files.Budget | None = None) -> tuple[_T, list[HeldTree]]:
        """:meth:`read_versions`, each version read into memory instead of a folder (its ``dest`` unused): what
        ``meanwhile()`` returns, and each version's entries and files' bytes, in the order of ``versions``.

        The same fetches and the same bounds, checked at the same points
        (counts on the trees before any blob is fetched, every size on the
        objects' headers before any content is read), so what is held is
        within one tree's bounds per version and the update's in all.  No
        folder is written nor read back: an update's versions cost their
        bytes, not a file each.
        """
        held: list[HeldTree] = []
        return self._read(versions, meanwhile, budget, held), held

    def _read(self, versions: list[Version], meanwhile: Callable[[], _T], budget: files.Budget | None,
              held: list[HeldTree] | None) -> _T:
        by_repo: dict[str, list[Version]] = {}
        for version in versions:
            by_repo.setdefault(version.repo, []).append(version)
        mirrors = {repo: self.fetch_commits(repo, [v.commit for v in group]) for repo, group in by_repo.items()}
        done: list[_T] = []
        trees: dict[Version, HeldTree] = {}
        for repo, group in by_repo.items():
            self._read_group(repo, mirrors[repo], group, None if done else lambda: done.append(meanwhile()), budget,
                             None if held is None else trees)
        if held is not None:
            held.extend(trees[version] for version in versions)
        return done[0] if done else meanwhile()

    def _read_group(self, repo: str, mirror: Path, group: list[Version], during: Callable[[], Any] | None,
                    budget: files.Budget | None, held: dict[Version, HeldTree] | None) -> None:
        # Each git that reads the cache runs under repo's transport rules too: were an object missing, git
        # would fetch it on its own (a partial repository's lazy fetch).
        with gitread.ObjectReader(self._git(self._profile(repo), mirror)) as reader:
            listed = []
            trees = [files.tree_budget() for _ in group]  # one tree's bounds for each version
            for version, tree in zip(group, trees):
                found = gitread.list_directory(reader, version.commit, version.directory, version.what, tree)
                if found is None:
                    raise KrmError(f"directory {version.directory} does not exist at commit {version.commit} of {repo}")
                if budget is not None:  # and the update's for all of them: a tree within its own bounds is charged whole
                    budget.charge(0, version.what, count=tree.files)
                listed.append(found)
            folders = list(dict.fromkeys(tree for tree, _ in listed))
            if not _partial(mirror) or self._complete(mirror, folders):  # nothing to list, nothing to fetch
                if during is not None:
                    during()
            else:  # during() overlaps the listing of what the cache lacks; the fetch of it, if any, follows
                missing = self._missing(repo, mirror, folders, during)
                if missing:
                    self._fetch_blobs(repo, mirror, missing)
                self._mark_complete(repo, mirror, folders)
            blobs = list(dict.fromkeys(b for _, entries in listed for b in gitread.blobs_of(entries)))
            sizes = self._sizes(repo, mirror, blobs, reader)
            for version, (_, entries), tree in zip(group, listed, trees):
                gitread.check_sizes(entries, sizes, version.what, tree)
                if budget is not None:
                    budget.charge(tree.size, version.what, count=0)
            if held is not None:  # every size is within the bounds: only now is any content read
                for version, (_, entries) in zip(group, listed):
                    held[version] = HeldTree(entries, gitread.read_entries(reader, entries, sizes))
                return
            for version, (_, entries) in zip(group, listed):
                assert version.dest is not None, "a version read into a folder names it"
                version.dest.mkdir(parents=True, exist_ok=True)
                try:
                    gitread.write_entries(reader, entries, str(version.dest))
                except OSError as err:
                    raise KrmError(f"{version.what}: writing {version.directory} at {version.commit} of {repo} "
                                   f"into a temporary folder: {err}") from None

    def _sizes(self, repo: str, path: Path, blobs: list[str], reader: gitread.ObjectReader) -> dict[str, int]:
        """The size of each blob, read from the objects' headers (none of their content is read): by ``reader``
        when it answers sizes, else by one ``git cat-file --batch-check``."""
        if reader.sizes_too:
            sizes = reader.sizes(blobs)
        else:
            out = self._fetch(["cat-file", "--batch-check=%(objectname) %(objectsize)"],
                              "reading the sizes of the files", repo, path, stdin="".join(b + "\n" for b in blobs).encode())
            sizes = {}
            for line in out.splitlines():
                oid, _, size = line.partition(" ")
                if size.isdigit():
                    sizes[oid] = int(size)
        lost = [b for b in blobs if b not in sizes]
        if lost:
            raise KrmError(f"the git cache lacks {len(lost)} file(s) the server was asked for (first {lost[0]})")
        return sizes


_CLONING = ".cloning."


def _partial(path: Path) -> bool:
    """Whether the cache's repository at ``path`` is partial (fetched ``--filter=blob:none``): git may lack
    objects in it, and would fetch them on its own when asked."""
    return "promisor" in _read_or_empty(path / "config")


def _holds_ref(path: Path, ref: str) -> bool:
    """Whether the repository at ``path`` has the full ref ``ref``, loose or packed, read without a process."""
    return (path / ref).is_file() or f" {ref}\n" in _read_or_empty(path / "packed-refs")


def _read_or_empty(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


def _remove_unfinished_clones(path: Path) -> None:
    """Temporary clones of ``path`` left by a killed run (the caller holds the mirror's lock)."""
    for entry in path.parent.glob(path.name + _CLONING + "*"):
        files.remove_tree(entry)


def package_tags(directory: str, ref: str) -> list[str]:
    """The directory-prefixed tags kpt tries for ``ref``, innermost directory first (``a/b/v1``, ``a/v1``)."""
    parts = [p for p in directory.split("/") if p]
    return [f"{'/'.join(parts[:n])}/{ref}" for n in range(len(parts), 0, -1)]


def _init_bare(path: Path, repo: str) -> None:
    """An empty bare repository at ``path`` whose ``origin`` is ``repo``, laid out as ``git init --bare`` does
    (gitrepository-layout(5)), without a git process: that process was ~10 ms of a cold update (issue 33).
    Nor are the user's init templates copied: no hook of theirs runs in the cache."""
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (path / folder).mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    quoted = repo.replace("\\", "\\\\").replace('"', '\\"')  # as `git config remote.origin.url` writes it
    (path / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
                                 f'[remote "origin"]\n\turl = "{quoted}"\n', encoding="utf-8")


def _mirror_name(repo: str) -> str:
    """The cache directory's name for ``repo``: readable, and unique by a hash of the URL."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", repo.rstrip("/").rsplit("/", 1)[-1])[:40] or "repo"
    return f"{readable}-{blake2b(repo.encode('utf-8'), digest_size=8).hexdigest()}.git"


__all__ = ["GitCache", "HeldTree", "Version", "cache_root", "find_git", "package_tags", "split_package_ref"]
