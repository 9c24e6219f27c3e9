"""The upstream versions of a fleet update: each ref resolved once, each repository fetched once, each tree extracted once.

Before any package is updated, :func:`prepare` resolves ``--ref`` once per
(repository, package directory) (kpt's directory-prefixed tags make the
directory part of the answer), fetches every commit the packages need — the
new version and each package's own origin (``upstreamLock``) — in one fetch
per repository into the shared git cache, and extracts each distinct
(repository, commit, directory) once into a folder of the run, pruned of links
exactly as a single update prunes its own copy, then made read-only: every
package's update reads the same folders in place.

Each package's update asks for its versions through :class:`SharedVersions`
(the single update's :class:`~krm_merge.update.git.GitVersions` seam), which
answers from those tables.  Whatever the tables do not hold — a version whose
resolution, fetch or extraction failed here, a remote subpackage's own
upstream — falls back to the single update's own way, so the package gets
exactly the single update's answer or error.  A fresh
:class:`~krm_merge.upstream.git.GitCache` per package keeps git's trust rules
per package: a repository one package names is not trusted for another's
upstream content.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.upstream import GitLock, GitUpstream
from krm_merge.krm import pkgio
from krm_merge.outcomes.kinds import Outcome
from krm_merge.records import Record
from krm_merge.update.git import GitVersions, Trees, clean_directory
from krm_merge.update.planner import plan_update  # loaded once here: every forked worker has it
from krm_merge.update.report import refused
from krm_merge.upstream.git import GitCache, Version

from .select import Package

TargetKey = tuple[str, str, str]  # (repository, directory as the Kptfile spells it, ref)
TreeKey = tuple[str, str, str]  # (repository, commit, clean directory)


class Extracted(Record):
    """One tree of the run: its read-only folder, what pruning its links deleted (as an upstream's), and its files
    and bytes as git's trees and object headers gave them (each update that reads it is charged them)."""

    folder: Path
    links: tuple[Outcome, ...]
    files: int = 0
    size: int = 0


class Shared(Record):
    """What :func:`prepare` found: resolved refs and extracted trees, read by every package's update."""

    cache_root: Path
    git: str
    resolved: dict[TargetKey, tuple[str, str]]  # -> (the ref kpt locks, its commit)
    extracted: dict[TreeKey, Extracted]
    empty: Path  # the origin of a package without a lock

    def versions(self) -> SharedVersions:
        """The versions one package's update reads (a fresh cache object: git's trust is per package)."""
        return SharedVersions(GitCache(self.cache_root, self.git), self)

    def target(self, package: Package, ref: str) -> tuple[str, str] | None:
        """(ref, commit) ``package`` moves to, when it was resolved here."""
        if package.upstream is None:
            return None
        return self.resolved.get((package.upstream.repo, package.upstream.directory, ref))


class SharedVersions(GitVersions):
    """A package's versions from the run's tables; anything else the single update's own way."""

    def __init__(self, cache: GitCache, shared: Shared) -> None:
        super().__init__(cache)
        self.shared = shared

    def resolve(self, target: GitUpstream, lock: GitLock | None = None) -> tuple[str, str]:
        found = self.shared.resolved.get((target.repo, target.directory, target.ref))
        return found if found is not None else super().resolve(target, lock)

    @contextmanager
    def trees(self, lock: GitLock | None, target: GitUpstream, commit: str,
              budget: files.Budget | None = None) -> Iterator[Trees]:
        upstream = self.shared.extracted.get(_tree_key(target.repo, commit, target.directory))
        origin = (Extracted(self.shared.empty, ()) if lock is None
                  else self.shared.extracted.get(_tree_key(lock.repo, lock.commit, lock.directory)))
        if upstream is None or origin is None:
            with super().trees(lock, target, commit, budget) as own:
                yield own
            return
        if budget is not None:  # the update's one budget: shared trees cost each update what its own would
            budget.charge(origin.size, "origin", count=origin.files)
            budget.charge(upstream.size, "upstream", count=upstream.files)
        yield Trees(origin.folder, upstream.folder, list(upstream.links), plan_update)


def _tree_key(repo: str, commit: str, directory: str) -> TreeKey:
    return repo, commit, clean_directory(directory)


def prepare(packages: Sequence[Package], ref: str, cache: GitCache, folder: Path, jobs: int) -> Shared:
    """Resolve, fetch and extract what ``packages`` need to move to ``ref``, into ``folder`` (empty, the run's own).

    Nothing here fails the run: a version that cannot be had is left out of
    the tables, and each package that needs it gets the single update's error.
    """
    known = [p for p in packages if p.upstream is not None]
    cache.trust({r for p in known for r in _repos(p)})  # named by the user's own Kptfiles, as a single update trusts them
    resolved = _resolve(cache, {(p.upstream.repo, p.upstream.directory, ref) for p in known if p.upstream})
    trees: dict[TreeKey, tuple[str, str, str]] = {}  # key -> (repo, commit, directory) to extract
    for p in known:
        assert p.upstream is not None
        found = resolved.get((p.upstream.repo, p.upstream.directory, ref))
        if found is not None:
            trees[_tree_key(p.upstream.repo, found[1], p.upstream.directory)] = (p.upstream.repo, found[1], p.upstream.directory)
        if p.lock is not None:
            trees[_tree_key(p.lock.repo, p.lock.commit, p.lock.directory)] = (p.lock.repo, p.lock.commit, p.lock.directory)
    _fetch(cache, trees.values())
    empty = folder / "empty"
    empty.mkdir()
    _seal(empty)
    items = sorted(trees.items())
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # git object readers, side by side
        done = list(pool.map(lambda n: _extract(cache, items[n][1], folder / f"tree-{n}"), range(len(items))))
    extracted = {key: found for (key, _), found in zip(items, done) if found is not None}
    return Shared(cache.root, cache.git, resolved, extracted, empty)


def _repos(package: Package) -> set[str]:
    return {r.repo for r in (package.upstream, package.lock) if r is not None}


def _resolve(cache: GitCache, targets: Iterable[TargetKey]) -> dict[TargetKey, tuple[str, str]]:
    """``ref`` resolved once per (repository, directory): one ``git ls-remote`` each."""
    resolved = {}
    for repo, directory, ref in sorted(targets):
        try:
            resolved[(repo, directory, ref)] = cache.resolve_package_ref(repo, directory, ref)
        except KrmMergeError:
            continue  # each package of it gets the single update's error
    return resolved


def _fetch(cache: GitCache, trees: Iterable[tuple[str, str, str]]) -> None:
    """Every commit of ``trees`` in one fetch per repository; one by one where that fetch fails."""
    by_repo: dict[str, list[str]] = {}
    for repo, commit, _ in trees:
        by_repo.setdefault(repo, []).append(commit)
    for repo, commits in sorted(by_repo.items()):
        try:
            cache.fetch_commits(repo, sorted(set(commits)))
        except KrmMergeError:
            for commit in sorted(set(commits)):  # one unknown commit must not deprive the others
                try:
                    cache.fetch_commits(repo, [commit])
                except KrmMergeError:
                    continue


def _extract(cache: GitCache, tree: tuple[str, str, str], dest: Path) -> Extracted | None:
    """One tree unpacked, pruned as a single update prunes its upstream, and sealed; None when it cannot be."""
    repo, commit, directory = tree
    tally = files.update_budget()  # what the tree holds, as the update that reads it will be charged
    try:
        # one tree's bounds, checked on git's trees and object headers as a single update checks them
        cache.read_versions([Version(repo, commit, directory, dest, "upstream")], meanwhile=lambda: None, budget=tally)
        links = refused(pkgio.prune_untrusted(dest, "upstream"), "upstream")
    except (KrmMergeError, OSError):
        return None
    _seal(dest)
    return Extracted(dest, tuple(links), tally.files, tally.size)


def _seal(folder: Path) -> None:
    """Make a tree read-only: one package's update can never change what the others read."""
    listing = pkgio.list_package(folder, hidden=True, krmignore=False, nofollow=True)  # links are pruned already
    for file in listing.files:
        os.chmod(file.path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    for rel in [*reversed(listing.dirs), "."]:
        os.chmod(folder / rel, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)


__all__ = ["Extracted", "Shared", "SharedVersions", "prepare"]
