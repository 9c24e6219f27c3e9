"""The update of a ``kpt pkg get`` package from git: fetch origin and upstream, plan, recurse into remote subpackages.

The origin (``upstreamLock``'s commit) and upstream (``REF``, default
``upstream.git.ref``) versions are fetched with the user's git
(:mod:`krm_merge.upstream.git`); the root Kptfile then records the new
``upstream.git.ref`` and ``upstreamLock`` as kpt does.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from types import ModuleType

from krm_merge import files, txn
from krm_merge.errors import KrmMergeError
from krm_merge.kptfile.document import Strategy, more_destructive, update_strategy
from krm_merge.kptfile.upstream import GitLock, GitUpstream, read_package_kptfile, read_upstream, record_lock
from krm_merge.krm import pkgio, yamlio
from krm_merge.krm.results import File, KrmError
from krm_merge.krm.snapshot import Snapshot
from krm_merge.merge3.policy import ConflictPolicy
from krm_merge.outcomes.kinds import Action, ConflictsLeft, Message, Outcome, Reason, ResourceOutcome, message
from krm_merge.outcomes.report import Report, State
from krm_merge.records import Record
from krm_merge.upstream import gitread
from krm_merge.upstream.git import GitCache, Version, package_tags
from krm_merge.yaml.load import collecting_duplicate_keys

from .plan import COMMAND, UpdatePlan, apply_plan
from .report import refused
from .result import FilesPolicy, UpdateRequest
from .tree import diff_trees, remote_subpackages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Sequence

    from .ledger import Entry


# Remote subpackages name their own upstreams, so an upstream author decides how deep and
# how wide the recursion goes: both are bounded, and a cycle is refused before any fetch.
MAX_SUBPACKAGE_DEPTH = 16
MAX_SUBPACKAGES = 256

UpstreamKey = tuple[str, str, str]  # (repo, directory, ref): where a package's update comes from


class Recursion:
    """Where a recursive update is: the chain of upstreams above; what the whole walk has visited and taken.

    ``budget`` is the update's (:func:`krm_merge.files.update_budget`): every
    origin and upstream version the walk extracts is charged to it, so a fan-out
    of subpackages takes no more files and bytes than one tree may.
    """

    # A plain class, not a dataclass: every update builds this class, and @dataclass
    # compiles generated code at import (~0.3 ms of a no-op update's start-up, issue 24).
    __slots__ = ("chain", "visited", "budget")

    def __init__(self, chain: tuple[UpstreamKey, ...] = (), visited: list[int] | None = None,
                 budget: files.Budget | None = None) -> None:
        self.chain = chain
        self.visited = [0] if visited is None else visited  # shared by the whole walk
        self.budget = files.update_budget() if budget is None else budget  # shared by the whole walk

    def __repr__(self) -> str:
        return f"Recursion(chain={self.chain!r}, visited={self.visited!r})"

    def enter(self, key: UpstreamKey, where: str) -> Recursion:
        """The state one level down, or a KrmError for a cycle or a chain too deep."""
        names = " -> ".join(_describe(k) for k in (*self.chain, key))
        if key in self.chain:
            raise KrmError(f"{where}: remote subpackages form a cycle: {names}; refused", file=File(where))
        if len(self.chain) >= MAX_SUBPACKAGE_DEPTH:
            raise KrmError(f"{where}: remote subpackages nested more than {MAX_SUBPACKAGE_DEPTH} deep: {names}", file=File(where))
        return Recursion((*self.chain, key), self.visited, self.budget)

    def count(self, where: str) -> None:
        """One more remote subpackage, or a KrmError past :data:`MAX_SUBPACKAGES`."""
        self.visited[0] += 1
        if self.visited[0] > MAX_SUBPACKAGES:
            raise KrmError(f"{where}: more than {MAX_SUBPACKAGES} remote subpackages in one update; refused", file=File(where))


class Trees(Record):
    """The two versions of one package update, as folders read in place (links already pruned), or their
    snapshots when the reader listed them already."""

    origin: Path | Snapshot  # empty without a lock (kpt: everything counts as added upstream)
    upstream: Path | Snapshot
    links: list[Outcome]  # what pruning the upstream folder deleted (LinkRefused), said before the merge's outcomes
    planner: Callable[..., UpdatePlan]  # the merge's planner, loaded while the versions were read


class GitVersions:
    """Where an update's origin and upstream versions come from: resolved and read from a git cache.

    The update asks this object twice per package (:meth:`resolve`, then
    :meth:`trees` unless the package is already at the commit), so a caller
    that has already resolved, fetched and read the versions of many
    packages (:mod:`krm_merge.fleet.versions`) hands the same folders to
    each of them by overriding these two methods.  This default does it for
    one update: every tree read afresh from git's objects into memory.
    """

    def __init__(self, cache: GitCache) -> None:
        self.cache = cache

    def resolve(self, target: GitUpstream, lock: GitLock | None = None) -> tuple[str, str]:
        """(the ref kpt locks, its commit) for ``target`` (:meth:`GitCache.resolve_package_ref`), the package being
        at ``lock``.

        An update to another ref than the one the package is locked at will
        read its trees: on a cold cache they are fetched while the ref is
        resolved, with the origin's.  An update to the ref it is at (a daily
        "is there an update?" job) lists the refs first, so that nothing is
        fetched when the ref has not moved.
        """
        repo, directory, ref = target.repo, target.directory, target.ref
        # An update to another ref is all but sure to merge: the merge's planner is imported while the remote
        # is asked.  One to the ref it is at imports nothing more (a no-op never loads the merge).
        if lock is None or lock.repo != repo:  # the origin, if any, comes from elsewhere
            return self.cache.resolve_package_ref(repo, directory, ref, fetching=[], during=_merge_planner)
        if lock.ref in (ref, *package_tags(directory, ref)):
            return self.cache.resolve_package_ref(repo, directory, ref)
        return self.cache.resolve_package_ref(repo, directory, ref, fetching=[lock.commit], during=_merge_planner)

    @contextmanager
    def trees(self, lock: GitLock | None, target: GitUpstream, commit: str,
              budget: files.Budget | None = None) -> Iterator[Trees]:
        """Origin (``lock``'s commit) and upstream (``commit`` of ``target``) read, for the ``with`` block; each
        tree's files and bytes charged to ``budget`` (the update's) before any of its bytes is read."""
        # without a lock kpt's origin is empty: everything counts as added upstream
        versions = ([Version(lock.repo, lock.commit, lock.directory, None, "origin")] if lock is not None else []) + [
            Version(target.repo, commit, target.directory, None, "upstream")]
        plan_update, held = self.cache.read_into_memory(versions, meanwhile=_planner_and_writer, budget=budget)
        # Each version is read into memory, never written to a folder: the snapshot the plan reads is the
        # listing of its entries (links named, never made) and their bytes.
        snapshots = [Snapshot.held(pkgio.listing_of_entries(f"<{v.what} {v.commit}>", gitread.entry_kinds(t.entries),
                                                            v.what), v.what, t.contents)
                     for v, t in zip(versions, held)]
        origin = snapshots[0] if lock is not None else Snapshot.held(pkgio.Listing("<origin>"), "origin", {})
        upstream = snapshots[-1]
        yield Trees(origin, upstream, refused(upstream.listing, "upstream"), plan_update)


def _describe(key: UpstreamKey) -> str:
    repo, directory, ref = key
    return f"{repo}{directory}@{ref}"


class _Options:
    """What the user asked of the whole update, the same at every level of the recursion."""

    __slots__ = ("conflicts", "fallback_keys", "versions", "files_policy", "accept_upstream_strategy")

    def __init__(self, conflicts: ConflictPolicy, fallback_keys: str | None, versions: GitVersions,
                 files_policy: FilesPolicy, accept_upstream_strategy: bool) -> None:
        self.conflicts = conflicts
        self.fallback_keys = fallback_keys
        self.versions = versions
        self.files_policy = files_policy
        self.accept_upstream_strategy = accept_upstream_strategy


def plan_git_update(
    local: Path,
    ref: str | None,
    *,
    strategy: Strategy | None = None,
    conflicts: ConflictPolicy = ConflictPolicy.UPSTREAM_WINS,
    fallback_keys: str | None = None,
    cache: GitCache | None = None,
    recursive: bool = True,
    files_policy: FilesPolicy = FilesPolicy.KEEP_LOCAL,
    accept_upstream_strategy: bool = False,
    versions: GitVersions | None = None,
) -> UpdatePlan:
    """Fetch origin and upstream of a ``kpt pkg get`` package with git and plan its update.

    The plan also rewrites the root Kptfile's ``upstream.git.ref``,
    ``upstream.updateStrategy`` and ``upstreamLock`` (repo, directory, ref,
    resolved commit), as ``kpt pkg update`` does.  With ``recursive`` (kpt's
    behaviour) every remote subpackage — a subpackage whose Kptfile has its
    own ``upstream.git`` — is then updated from its own upstream, parent
    first; it follows ``ref`` and ``strategy`` only when it tracks the same
    repository, directory tree and ref as the root (kpt's rule).  A cycle of
    remote subpackages, a chain deeper than :data:`MAX_SUBPACKAGE_DEPTH`,
    more than :data:`MAX_SUBPACKAGES` of them, or more files and bytes in all
    than one tree may hold (``files.update_budget``) is refused.

    Local decides how local is updated: a remote subpackage is updated by the
    strategy of the user's own Kptfile (kpt's default, resource-merge, when
    the user has none) unless ``strategy`` applies to it; a strategy that
    arrives with the update (upstream changed the subpackage's
    ``updateStrategy``) is not used for it and, unless
    ``accept_upstream_strategy`` (kpt's behaviour), not recorded either: the
    Kptfile keeps the user's, and a result says what upstream proposes.
    ``versions`` says where the two versions come from (default: read from
    ``cache``; a fleet update's shared folders).
    """
    versions = versions or GitVersions(cache or GitCache())
    where = str(local / "Kptfile")
    kptfile_text, upstream, lock = read_package_kptfile(local, where)
    users = Snapshot.local(local)  # the one listing of the user's package: every step below reads it
    versions.cache.trust(_repos_named_by(users))  # the user's own package, as it is before the update
    options = _Options(conflicts, fallback_keys, versions, files_policy, accept_upstream_strategy)
    walk = Recursion().enter((upstream.repo, clean_directory(upstream.directory), ref or upstream.ref), where)
    plan = _plan_one_git_package(users, kptfile_text, upstream, lock, ref, strategy, options.conflicts,
                                 options.fallback_keys, versions, files_policy, walk.budget, strategy)
    plan.subpackages = list(users.listing.subpackages)  # the ledgers of the user's subpackages (update/ledger.py)
    written = _Written()
    written.add("", plan, walk, where)
    if not recursive or not _has_remote_subpackages(users, plan):
        return plan
    # kpt updates remote subpackages one after the other, each on the result of the
    # previous step; we do the same in memory: each level's plan is laid over the local
    # snapshot (an overlay) and the next level is planned on it, and the final plan is the
    # overlay's difference from local, so the update stays all-or-nothing (and --dry-run
    # shows all of it) with nothing copied, written or listed again before the one write.
    tree = _Planned(users.overlaid(plan.writes, plan.remove_dirs), written)
    found, marks = list(plan.outcomes), list(plan.marks)
    fields = plan.upstream or [("", None)]  # upstream's values by package folder, for the ledger (none: at the commit)
    _update_remote_subpackages(tree, "", local, upstream, ref, strategy, options, walk, where, found, marks, fields)
    final = diff_trees(users, tree.snapshot)
    final.outcomes, final.marks, final.upstream, final.subpackages = found, marks, fields, plan.subpackages
    return final


class _Written:
    """The bytes an update plans to write, file by file, as each package's plan is laid over the ones before.

    A recursive update holds every level's planned bytes in memory until the
    one write, and a fan-out of remote subpackages multiplies what one
    upstream brings (each copy of a subpackage planned anew): git's objects and
    the read budget (:func:`files.update_budget`) see the upstream once, the
    plan sees every copy.  So the plan is bounded by :func:`files.max_write_bytes`
    as each package's plan joins it, before the next subpackage is planned:
    the refusal comes with memory bounded by the limit, nothing written.
    """

    __slots__ = ("sizes", "total", "limit")

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}  # each file's planned bytes (a later plan's write replaces an earlier one's)
        self.total = 0
        self.limit = files.max_write_bytes()

    def add(self, folder: str, plan: UpdatePlan, walk: Recursion, where: str) -> None:
        """The writes of the package at ``folder`` ("" for the root, else "a/b/"); a KrmError naming ``where``
        (its Kptfile), the chain of upstreams that led to it and the bytes, past the limit."""
        for write in plan.writes:
            rel = folder + write.path
            size = len(write.data) if write.data is not None else 0
            self.total += size - self.sizes.get(rel, 0)
            self.sizes[rel] = size
        if self.total > self.limit:
            chain = " -> ".join(_describe(k) for k in walk.chain)
            through = "remote subpackages" if len(walk.chain) > 1 else "upstream"
            raise KrmError(f"{where}: the update would write {self.total:,} bytes, more than the "
                           f"{self.limit / 1048576:g} MB one update may write ({through}: {chain}); "
                           f"refused, nothing written (set {files.MAX_WRITE_ENV} to raise the limit)", file=File(where))


class _Planned:
    """The package as the update leaves it so far: the local snapshot with every level's plan laid over it, and
    the bytes those plans write (bounded as each is laid)."""

    __slots__ = ("snapshot", "written")

    def __init__(self, snapshot: Snapshot, written: _Written) -> None:
        self.snapshot = snapshot
        self.written = written

    def lay(self, folder: str, plan: UpdatePlan, walk: Recursion, where: str) -> None:
        """Lay the plan of the package at ``folder`` ("a/b/") over the tree, its bytes counted first (``walk``,
        ``where``: the subpackage's chain and Kptfile, named by a refusal)."""
        self.written.add(folder, plan, walk, where)
        self.snapshot = self.snapshot.overlaid(plan.writes, plan.remove_dirs, folder)


def _update_remote_subpackages(
    tree: _Planned, package: str, users: Path | None, upstream: GitUpstream, ref: str | None,
    strategy: Strategy | None, options: _Options, walk: Recursion, where: str, found: list[Outcome], marks: list[Entry],
    fields: list[tuple[str, Any]],
) -> None:
    """Update each remote subpackage below folder ``package`` of ``tree`` ("" for the root, else "a/b/"), its
    plan laid over the tree, then theirs; their outcomes go to ``found``, the conflicts they mark (the
    ledger's entries) to ``marks``, named from ``package``, and the upstream each merged to ``fields``.

    ``users`` is the same package in the user's own tree, as it was before the update
    (None when it is new): its Kptfiles say how the user's subpackages are updated.
    """
    for sub in remote_subpackages(tree.snapshot.below(package)):
        # Named where the user finds it (the overlay has no path of its own).
        sub_where = f"{where.removesuffix('Kptfile')}{sub}/Kptfile"
        walk.count(sub_where)
        at = f"{package}{sub}/"
        copy = tree.snapshot.below(at)  # the subpackage as its parent's plan leaves it
        sub_text = copy.read_text(pkgio.KPTFILE)
        sub_up, sub_lock = read_upstream(yamlio.load_data(sub_text, sub_where), sub_where)
        follows = (
            sub_up.repo == upstream.repo and sub_up.ref == upstream.ref
            and clean_directory(sub_up.directory).startswith(clean_directory(upstream.directory))
        )
        sub_ref, sub_strategy = (ref, strategy) if follows else (None, None)
        sub_walk = walk.enter((sub_up.repo, clean_directory(sub_up.directory), sub_ref or sub_up.ref), sub_where)
        users_sub = users / sub if users is not None and (users / sub).is_dir() else None
        used, recorded, proposal = _own_strategy(sub_text, users_sub, sub_strategy, options.accept_upstream_strategy,
                                                 f"{sub}/Kptfile")
        sub_plan = _plan_one_git_package(copy, sub_text, sub_up, sub_lock, sub_ref, used,
                                         options.conflicts, options.fallback_keys, options.versions,
                                         options.files_policy, walk.budget, recorded)
        tree.lay(at, sub_plan, sub_walk, sub_where)
        fields.extend((at + folder, values) for folder, values in sub_plan.upstream or [("", None)])
        if proposal is not None:
            found.append(proposal)
        inner, inner_marks = list(sub_plan.outcomes), list(sub_plan.marks)
        _update_remote_subpackages(tree, at, users_sub, sub_up, sub_ref, sub_strategy, options, sub_walk,
                                   sub_where, inner, inner_marks, fields)
        found.extend(outcome.within(sub) for outcome in inner)  # named where the user finds them
        marks.extend(entry.within(sub) for entry in inner_marks)


def _own_strategy(merged_kptfile: str, users: Path | None, flag: Strategy | None, accept: bool, name: str,
                  ) -> tuple[Strategy | None, Strategy | None, Message | None]:
    """How a remote subpackage is updated: (the strategy used, the one its Kptfile records; None for each: the
    one its merged Kptfile names), and what to say of upstream's proposal (None: nothing).

    ``--strategy`` when it applies to the subpackage; else the user's own
    Kptfile's, as it was before the update (kpt's default, resource-merge,
    when it names none); with ``accept``, the one the update brings (kpt's
    rule).  The merged Kptfile says what upstream proposes: a gentler
    strategy is recorded for the next update, a more destructive one only
    if the user takes it.  A subpackage the user's tree does not have at all
    (``users`` None) arrives whole, its Kptfile as upstream wrote it: there
    is no local work in it to protect (kpt's rule).
    """
    if flag is not None:
        return flag, flag, None
    if users is None:
        return None, None, None
    proposed = update_strategy(merged_kptfile) or Strategy.RESOURCE_MERGE
    mine = _users_strategy(users) or Strategy.RESOURCE_MERGE
    if accept or proposed is mine:
        return None, None, None
    if not more_destructive(proposed, mine):
        return mine, None, message(f"{name}: upstream changes updateStrategy from {mine.value} to {proposed.value}: "
                                   f"recorded for the next update; this update used {mine.value}", "info", name)
    text = (f"{name}: upstream changes updateStrategy from {mine.value} to {proposed.value}; not applied: this "
            f"update used {mine.value} and the Kptfile keeps it (local decides how local is updated). To take it, "
            f"set upstream.updateStrategy: {proposed.value} in {name} yourself, or update with "
            "--accept-upstream-strategy")
    return mine, mine, message(text, "warning", name)


def _users_strategy(users: Path | None) -> Strategy | None:
    """``upstream.updateStrategy`` of the user's own Kptfile of a package (None: no such Kptfile, or none named)."""
    if users is None or not (users / "Kptfile").is_file():
        return None
    try:
        return update_strategy(files.read_text(users / "Kptfile"))
    except (KrmMergeError, OSError, UnicodeDecodeError):
        return None  # unreadable: kpt's default; the merge reported the file


def _repos_named_by(local: Snapshot) -> set[str]:
    """Every repository the Kptfiles of the user's package name (upstream and lock)."""
    repos: set[str] = set()
    for rel in local.kptfiles():
        kptfile = os.path.join(local.root, rel)
        try:
            up, lock = read_upstream(yamlio.load_data(files.read_text(kptfile), kptfile), kptfile)
        except (KrmMergeError, OSError, UnicodeDecodeError):
            continue  # no upstream, or unreadable: the update reports it where it matters
        repos.add(up.repo)
        if lock is not None:
            repos.add(lock.repo)
    return repos


def _has_remote_subpackages(local: Snapshot, plan: UpdatePlan) -> bool:
    if remote_subpackages(local):
        return True
    return any(w.path.endswith("/Kptfile") and w.data is not None and b"upstream:" in w.data for w in plan.writes)


def clean_directory(directory: str) -> str:
    """A package directory of a repository as one spelling: ``pkg``, ``/pkg/`` and ``/pkg`` are ``/pkg``, the root ``/``."""
    return PurePosixPath("/" + directory.strip("/")).as_posix()


def _plan_one_git_package(
    local: Snapshot, kptfile_text: str, upstream: GitUpstream, lock: GitLock | None, ref: str | None,
    strategy: Strategy | None, conflicts: ConflictPolicy, fallback_keys: str | None, versions: GitVersions,
    files_policy: FilesPolicy = FilesPolicy.KEEP_LOCAL, budget: files.Budget | None = None,
    recorded: Strategy | None = None,
) -> UpdatePlan:
    """The update of one package (``strategy``: the one used, else its Kptfile's; ``recorded``: the one its
    Kptfile is left with, else the one it names)."""
    target = GitUpstream(upstream.repo, upstream.directory, ref or upstream.ref)
    if not target.ref:
        raise KrmError(f"{os.path.join(local.root, 'Kptfile')}: upstream.git.ref is empty; give PKG@REF")
    effective = strategy or update_strategy(kptfile_text) or Strategy.RESOURCE_MERGE
    lock_ref, commit = versions.resolve(target, lock)
    if effective is Strategy.RESOURCE_MERGE and _at_commit(lock, target, commit):
        # Origin and upstream are one tree: the merge gives local back, so only the ref is recorded.
        plan = UpdatePlan()
        _record_lock_in_plan(plan, kptfile_text, lambda text: record_lock(text, target, commit, recorded, lock_ref))
        return plan
    with versions.trees(lock, target, commit, budget) as trees:
        plan = trees.planner(local, trees.origin, trees.upstream, strategy=effective, conflicts=conflicts,
                             fallback_keys=fallback_keys, checked=True, files_policy=files_policy)
        plan.outcomes[:0] = trees.links
    _record_lock_in_plan(plan, kptfile_text, lambda text: record_lock(text, target, commit, recorded, lock_ref))
    return plan


def _merge_planner() -> Callable[..., UpdatePlan]:
    """The merge's planner.  Imported only by an update that will read versions (a no-op update never
    loads the merge, nor ruamel with it), while git asks the remote for the ref (issue 33: on a cold
    cache, the fetch of the trees), so the import overlaps git's work instead of adding to it."""
    from .planner import plan_update

    return plan_update


def _planner_and_writer() -> Callable[..., UpdatePlan]:
    """The merge's planner, and what the transaction calls of the C library, loaded while git reads the cache."""
    txn.preload()
    return _merge_planner()


def _at_commit(lock: GitLock | None, target: GitUpstream, commit: str) -> bool:
    """Whether the package is already locked at ``commit`` of the same repository and directory."""
    return (lock is not None and lock.commit == commit and lock.repo == target.repo
            and clean_directory(lock.directory) == clean_directory(target.directory))


def lock_recorded(outcome: Outcome) -> Outcome:
    """The root Kptfile's outcome once the update records its new lock in it: no longer "kept local (unchanged
    upstream)", since the file changes; any other outcome as it is."""
    if (isinstance(outcome, ResourceOutcome) and outcome.file == "Kptfile" and outcome.action is Action.KEPT
            and outcome.reason is Reason.UNCHANGED_UPSTREAM):
        return outcome._replace(action=Action.MERGED, reason=Reason.LOCK_RECORDED)
    return outcome


def _record_lock_in_plan(plan: UpdatePlan, kptfile_text: str, record: Callable[[str], str]) -> None:
    """Record the lock in the plan's Kptfile write (the root Kptfile as merged, else as it is)."""
    for write in plan.writes:
        if write.path == "Kptfile" and write.data is not None:
            write.data = record(write.data.decode("utf-8")).encode("utf-8")
            return
    new = record(kptfile_text)
    if new != kptfile_text:
        plan.writes.append(pkgio.Write("Kptfile", kptfile_text.encode("utf-8"), new.encode("utf-8")))
        plan.outcomes[:] = [lock_recorded(o) for o in plan.outcomes]  # its row says the file changes, as the files'


class UpdatePlanner:
    """One package's update as the change pipeline (:func:`krm_merge.change.pipeline.run`) runs it: the update
    command's and each package of a fleet update.

    ``versions`` says where the git versions come from (a fleet update's shared folders; default: this
    update's own fetch).  ``recovered`` receives what the package lock said of an interrupted write it found
    (finished, rolled back, or only said by a dry run), for a fleet update to say too.  Once planned,
    ``planned`` holds the plan (None when an error stopped it before: the error is in the report).
    """

    def __init__(self, request: UpdateRequest, *, versions: GitVersions | None = None,
                 recovered: list[str] | None = None) -> None:
        self.request = request
        self.versions = versions
        self.recovered = recovered
        self.planned: UpdatePlanned | None = None

    @contextmanager
    def plan(self, report: Report) -> Iterator[UpdatePlanned]:
        """Plan under the package lock, held for the ``with`` block (from the read to the write): a second writer
        is refused, not silently overwritten.  The plan's outcomes and changes are in ``report``."""
        request = self.request
        report.target = request.package
        report.subject = subject(request.package, request.ref)
        with txn.PackageLock(request.package, COMMAND, read_only=request.dry_run) as lock:
            report.extend(message(text, "warning") for text in lock.messages)
            if self.recovered is not None:
                self.recovered.extend(lock.messages)
            with collecting_duplicate_keys() as duplicates:
                try:
                    planned = _plan(request, self.versions)
                    recorded = _record_in_ledgers(Path(request.package), planned)  # the ledger's change joins the plan's
                finally:  # said before the error that stopped the plan, if one did
                    # Duplicate mapping keys in any of the three copies: read last-wins (as kubectl), said once each.
                    report.extend(message(text, "warning") for text in dict.fromkeys(dup.message() for dup in duplicates))
            report.extend(planned.outcomes)
            report.add_changes(planned.changes)
            self.planned = UpdatePlanned(Path(request.package), planned, request, report, recorded)
            yield self.planned


class UpdatePlanned:
    """A package's planned update, as the change pipeline takes it (:class:`krm_merge.change.pipeline.Planned`).

    ``recorded``: the conflicts the package's ledger holds once written (this update's markers and an earlier
    update's still there).  The change set is checked as the write checks it (:meth:`ChangeSet.validate`): a
    dry run refuses what the write would, and its diff is made file by file as it is printed.
    """

    __slots__ = ("local", "plan", "request", "report", "recorded")

    def __init__(self, local: Path, plan: UpdatePlan, request: UpdateRequest, report: Report, recorded: int) -> None:
        self.local = local
        self.plan = plan
        self.request = request
        self.report = report
        self.recorded = recorded

    @property
    def planned_writes(self) -> Sequence[pkgio.Write]:
        """The planned writes (package path, new bytes)."""
        return self.plan.changes.writes

    @property
    def stop(self) -> State | None:
        """A conflict not merged (``--conflicts fail``, a rule's fail): nothing is written."""
        return State.NOT_WRITTEN if any(o.severity == "error" for o in self.plan.outcomes) else None

    def check(self) -> None:
        """What the write checks, before it."""
        self.plan.changes.validate(self.local)

    def diff(self) -> Iterator[str]:
        """A dry run's unified diff (checked as the write would be)."""
        return self.plan.changes.diff(self.local)

    def write(self) -> None:
        """The plan written: one transaction."""
        apply_plan(self.local, self.plan)

    def left(self, *, on_branch: bool) -> list[Outcome]:
        """What the write leaves for a person: the markers written (a rule's upstream-wins under mark wrote none),
        the diff3 regions --files merge left (with or without mark), an earlier update's still there."""
        if not self.recorded:
            return []
        regions = sum(1 for entry in self.plan.marks if entry.kind == _ledger().TEXT)
        return [ConflictsLeft(str(self.local), self.recorded, regions, self.recorded - len(self.plan.marks),
                              on_branch=on_branch)]

    def written(self, package_name: str | None) -> Report:
        """The report as the write leaves it (a pull request's words: the package named by its repository path)."""
        if package_name is not None:
            self.report.subject = subject(package_name, self.request.ref)
        return self.report.as_written(*self.left(on_branch=package_name is not None))

    def done(self, *, on_branch: bool) -> None:
        """After the write: what it left, said."""
        self.report.extend(self.left(on_branch=on_branch))


def subject(package: str, ref: str | None) -> str:
    """What an update was asked for, for its title: ``apps/pkg to v2`` (no ref: the Kptfile's)."""
    return package + (f" to {ref}" if ref else "")


def _record_in_ledgers(root: Path, plan: UpdatePlan) -> int:
    """The ledgers' changes joined to the plan (:func:`krm_merge.update.ledger.record`); how many conflicts they
    then hold.

    An update that leaves no marker, in a package with no ledger at its root
    nor in any subpackage (the common case, a no-op among them), has nothing
    to record or keep, and never loads the ledger's module (the bindings and
    the marker engine behind it): ``record`` would read nothing and return 0.
    """
    if not plan.marks and not _any_ledger(root, plan.subpackages):
        return 0
    return _ledger().record(root, plan)


def _any_ledger(root: Path, subpackages: Sequence[str]) -> bool:
    """Whether a path of the ledger's name is at ``root`` or in a subpackage folder, as the ledger's reader looks:
    the root's by ``lstat`` (any error but "not there" is the reader's to name), each subpackage's if it exists."""
    try:
        os.lstat(root / pkgio.LEDGER_NAME)
    except (FileNotFoundError, NotADirectoryError):
        return any(os.path.lexists(root / folder / pkgio.LEDGER_NAME) for folder in subpackages)
    except OSError:
        pass  # unreadable: read_ledger says why in a warning
    return True


def _ledger() -> ModuleType:
    """:mod:`krm_merge.update.ledger`, loaded when a ledger is there or a marker is written."""
    from . import ledger  # start-up: see _record_in_ledgers

    return ledger


def _plan(request: UpdateRequest, versions: GitVersions | None) -> UpdatePlan:
    """The update's plan, from git or from the ``origin``/``upstream`` directories."""
    if request.origin is None or request.upstream is None:
        return plan_git_update(
            Path(request.package), request.ref, strategy=request.strategy, conflicts=request.conflicts,
            fallback_keys=request.fallback_keys, recursive=request.recursive, files_policy=request.files,
            versions=versions, accept_upstream_strategy=request.accept_upstream_strategy,
        )
    return _merge_planner()(
        Path(request.package), Path(request.origin), Path(request.upstream),
        strategy=request.strategy or Strategy.RESOURCE_MERGE, conflicts=request.conflicts,
        fallback_keys=request.fallback_keys, files_policy=request.files,
    )


__all__ = ["MAX_SUBPACKAGES", "MAX_SUBPACKAGE_DEPTH", "GitVersions", "Recursion", "Trees", "UpdatePlanned",
           "UpdatePlanner", "clean_directory", "plan_git_update", "subject"]
