"""``krm-merge update PKG[@REF]``: ``kpt pkg update`` for packages fetched with ``kpt pkg get``.

The origin (``upstreamLock``'s commit) and upstream (``REF``, default
``upstream.git.ref``) versions are fetched with the user's git
(:mod:`krm_merge.upstream.git`); ``--origin DIR --upstream DIR`` gives them
as plain directories instead.  The whole update of the package copy then
runs on the three directories: KRM resources and Kptfiles through the
resource-merge mode's code path (:func:`krm_merge.modes.resource_merge.merge`,
which also applies kpt's subpackage rules), every other file by kpt's rules —
a local file that is new or differs from origin is kept; an unmodified one is
replaced by upstream's or deleted with it; files added upstream are copied;
directories emptied because upstream removed them are removed.  After a git
update the root Kptfile records the new ``upstream.git.ref`` and
``upstreamLock`` as kpt does.

Origin and upstream are content from elsewhere: they are taken through
:func:`krm_merge.files.prune_untrusted_tree` / :func:`~krm_merge.files.copy_untrusted_tree`
(no symbolic link followed, names and sizes checked), and remote subpackages
are followed with cycles refused and depth bounded (docs/security.md).

Writes are one transaction of :mod:`krm_merge.txn` under the package lock
(all-or-nothing even when the process is killed).  Paths never leave the
package and symlinks are never written through.  Nothing is written with ``--dry-run`` or when a conflict is found
under ``--conflicts fail``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from krm_merge import files
from krm_merge.commands.reporting import RESULTS_HELP, run_with_results
from krm_merge.krm import yamlio
from krm_merge.errors import KrmMergeError
from krm_merge.krm.results import File, KrmError

STRATEGIES = ("resource-merge", "fast-forward", "force-delete-replace")
POLICIES = ("upstream-wins", "local-wins", "fail", "mark")
FILE_POLICIES = ("keep-local", "merge")
CONFLICTS_LEFT = 3
"""Exit code of an update under ``--conflicts mark`` that wrote markers: merged, conflicts left to decide."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"krm-merge update: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog="krm-merge update", description="3-way update of a local package copy (kpt pkg update).")
    p.add_argument("package", metavar="PKG[@REF]",
                   help="the local package directory (updated in place); @REF: the upstream branch, tag or commit "
                        "(default: upstream.git.ref of its Kptfile)")
    p.add_argument("--origin", metavar="DIR", help="the upstream version local was fetched from (a directory; with --upstream)")
    p.add_argument("--upstream", metavar="DIR", help="the new upstream version (a directory; with --origin)")
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="default: upstream.updateStrategy of the Kptfile, else resource-merge")
    p.add_argument("--conflicts", choices=POLICIES, default="upstream-wins",
                   help="who wins a field changed on both sides (mark: local's value stays with a "
                        "'# krm-merge:conflict' comment; exit 3; see krm-merge conflicts/resolve)")
    p.add_argument("--files", choices=FILE_POLICIES, default="keep-local",
                   help="non-KRM files changed on both sides: keep local's (kpt) or merge them as git merge-file does "
                        "(diff3 markers where both changed the same lines; binary files: local kept)")
    p.add_argument(
        "--fallback-keys",
        metavar="K1,K2",
        help="element keys for lists without schema (default: kpt's documented list; '' = none, like kpt)",
    )
    p.add_argument("--no-recursive", action="store_true",
                   help="do not update remote subpackages (their own upstream.git) after the package (kpt always does)")
    p.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    p.add_argument("--results", metavar="FILE", help=RESULTS_HELP)
    p.add_argument("--report", nargs=2, metavar=("FORMAT", "FILE"),
                   help="write an update report: FORMAT json or markdown ('-' for stdout); also with --dry-run")
    return p


@dataclass
class FileWrite:
    """One planned change of a local file (``data is None`` = delete)."""

    path: str
    before: bytes | None
    data: bytes | None


@dataclass
class UpdatePlan:
    """Everything the update will do, computed before touching the disk."""

    writes: list[FileWrite] = field(default_factory=list)
    remove_dirs: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    conflicts: int = 0
    merged_files: list[Any] = field(default_factory=list)  # merge3.textfile.FileMerge, with --files merge
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # each resource and conflict: commands.outcomes


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    if (args.origin is None) != (args.upstream is None):
        sys.stderr.write("krm-merge update: error: --origin and --upstream go together\n")
        return 2
    if args.report and args.report[0] not in ("json", "markdown"):
        sys.stderr.write(f"krm-merge update: error: --report FORMAT must be json or markdown, got {args.report[0]!r}\n")
        return 2
    return run_with_results("krm-merge update", args.results, lambda: _locked_update(args))


def _locked_update(args: argparse.Namespace) -> int:
    from krm_merge import txn
    from krm_merge.upstream.git import split_package_ref

    try:
        package_dir = args.package if args.origin is not None else split_package_ref(args.package)[0]
        # Held from the read to the write: a second writer is refused, not silently overwritten.
        with txn.PackageLock(package_dir, "krm-merge update", read_only=args.dry_run) as lock:
            for message in lock.messages:
                sys.stderr.write(f"krm-merge update: warning: {message}\n")
            return _locked_main(args)
    except KrmMergeError as err:
        sys.stderr.write(f"krm-merge update: error: {err.one_line()}\n")
        return 1


def _locked_main(args: argparse.Namespace) -> int:
    from krm_merge.yaml.load import collecting_duplicate_keys

    with collecting_duplicate_keys() as duplicates:
        try:
            if args.origin is not None:
                local = Path(args.package)
                plan = plan_update(
                    local, Path(args.origin), Path(args.upstream),
                    strategy=args.strategy or "resource-merge", conflicts=args.conflicts, fallback_keys=args.fallback_keys,
                    files_policy=args.files,
                )
            else:
                from krm_merge.upstream.git import split_package_ref

                path, ref = split_package_ref(args.package)
                local = Path(path)
                plan = plan_git_update(
                    local, ref, strategy=args.strategy, conflicts=args.conflicts, fallback_keys=args.fallback_keys,
                    recursive=not args.no_recursive, files_policy=args.files,
                )
        except KrmMergeError as err:
            _warn_duplicates(duplicates)
            sys.stderr.write(f"krm-merge update: error: {err.one_line()}\n")
            return 1
    _warn_duplicates(duplicates)
    code = _finish(local, plan, args.conflicts, args.dry_run)
    if args.report:
        from krm_merge.commands.reporting import update_report, write_report

        write_report(args.report[0], args.report[1],
                     update_report(plan, policy=args.conflicts, dry_run=args.dry_run, code=code))
    return code


def _warn_duplicates(duplicates: list[Any]) -> None:
    """Duplicate mapping keys in any of the three copies: read last-wins (as kubectl), said once each."""
    for message in dict.fromkeys(dup.message() for dup in duplicates):
        sys.stderr.write(f"krm-merge update: warning: {message}\n")


def _finish(local: Path, plan: UpdatePlan, conflicts: str, dry_run: bool) -> int:
    for message in plan.messages:
        sys.stderr.write(message + "\n")
    for merged in plan.merged_files:  # said here, not in messages: a subpackage's are named by their full path
        for message in merged.messages():
            sys.stderr.write(message + "\n")
    from krm_merge.commands import outcomes

    failed = plan.conflicts if conflicts == "fail" else outcomes.decided(plan.outcomes, "none")  # a rule's fail
    if failed:
        sys.stderr.write(f"krm-merge update: error: {failed} conflicting field(s); nothing written\n")
        return 1
    if dry_run:
        sys.stdout.write(render_plan(plan))
        return 0
    try:
        apply_plan(local, plan)
    except KrmMergeError as err:
        sys.stderr.write(f"krm-merge update: error: {err.one_line()}\n")
        return 1
    except OSError as err:
        sys.stderr.write(f"krm-merge update: error: {err}\n")
        return 1
    sys.stdout.write(f"updated {local}: {len(plan.writes)} file(s) changed{_merged_summary(plan)}\n")
    if plan.outcomes:
        sys.stdout.write(outcomes.summary(plan.outcomes) + "\n")
    in_files = sum(len(m.conflicts) for m in plan.merged_files)  # --files merge's diff3 regions
    marked = plan.conflicts - in_files if conflicts == "mark" else outcomes.decided(plan.outcomes, "marked")  # by rules
    if (conflicts == "mark" and plan.conflicts) or marked:
        sys.stdout.write(f"{marked} conflict(s) marked '# krm-merge:conflict'"
                         + (f" and {in_files} diff3 region(s) left in merged files" if in_files else "")
                         + f": list them with krm-merge conflicts {local}, decide with krm-merge resolve\n")
        return CONFLICTS_LEFT
    return 0


def _merged_summary(plan: UpdatePlan) -> str:
    merged = [m for m in plan.merged_files if m.merged]
    if not merged:
        return ""
    marked = sum(1 for m in merged if m.conflicts)
    return f", {len(merged)} non-KRM file(s) merged" + (f" ({marked} with conflict markers left)" if marked else "")


# --- git upstreams ----------------------------------------------------------------------


# Remote subpackages name their own upstreams, so an upstream author decides how deep and
# how wide the recursion goes: both are bounded, and a cycle is refused before any fetch.
MAX_SUBPACKAGE_DEPTH = 16
MAX_SUBPACKAGES = 256

UpstreamKey = tuple[str, str, str]  # (repo, directory, ref): where a package's update comes from


@dataclass
class _Recursion:
    """Where a recursive update is: the chain of upstreams above, and how many subpackages it has visited."""

    chain: tuple[UpstreamKey, ...] = ()
    visited: list[int] = field(default_factory=lambda: [0])  # shared by the whole walk

    def enter(self, key: UpstreamKey, where: str) -> _Recursion:
        """The state one level down, or a KrmError for a cycle or a chain too deep."""
        names = " -> ".join(_describe(k) for k in (*self.chain, key))
        if key in self.chain:
            raise KrmError(f"{where}: remote subpackages form a cycle: {names}; refused", file=File(where))
        if len(self.chain) >= MAX_SUBPACKAGE_DEPTH:
            raise KrmError(f"{where}: remote subpackages nested more than {MAX_SUBPACKAGE_DEPTH} deep: {names}", file=File(where))
        return _Recursion((*self.chain, key), self.visited)

    def count(self, where: str) -> None:
        """One more remote subpackage, or a KrmError past :data:`MAX_SUBPACKAGES`."""
        self.visited[0] += 1
        if self.visited[0] > MAX_SUBPACKAGES:
            raise KrmError(f"{where}: more than {MAX_SUBPACKAGES} remote subpackages in one update; refused", file=File(where))


def _describe(key: UpstreamKey) -> str:
    repo, directory, ref = key
    return f"{repo}{directory}@{ref}"


def plan_git_update(
    local: Path,
    ref: str | None,
    *,
    strategy: str | None = None,
    conflicts: str = "upstream-wins",
    fallback_keys: str | None = None,
    cache: Any = None,
    recursive: bool = True,
    files_policy: str = "keep-local",
) -> UpdatePlan:
    """Fetch origin and upstream of a ``kpt pkg get`` package with git and plan its update.

    The plan also rewrites the root Kptfile's ``upstream.git.ref``,
    ``upstream.updateStrategy`` and ``upstreamLock`` (repo, directory, ref,
    resolved commit), as ``kpt pkg update`` does.  With ``recursive`` (kpt's
    behaviour) every remote subpackage — a subpackage whose Kptfile has its
    own ``upstream.git`` — is then updated from its own upstream, parent
    first; it follows ``ref`` and ``strategy`` only when it tracks the same
    repository, directory tree and ref as the root (kpt's rule).  A cycle of
    remote subpackages, a chain deeper than :data:`MAX_SUBPACKAGE_DEPTH` or
    more than :data:`MAX_SUBPACKAGES` of them is refused.
    """
    from krm_merge.upstream.git import GitCache

    cache = cache or GitCache()
    cache.trust(_repos_named_by(local))  # the user's own package, as it is before the update
    return _plan_git_tree(local, ref, strategy, conflicts, fallback_keys, cache, recursive, _Recursion(), str(local / "Kptfile"),
                          files_policy)


def _plan_git_tree(
    local: Path, ref: str | None, strategy: str | None, conflicts: str, fallback_keys: str | None,
    cache: Any, recursive: bool, walk: _Recursion, where: str, files_policy: str = "keep-local",
) -> UpdatePlan:
    kptfile_text, upstream, lock = _read_root_kptfile(local, where)
    walk = walk.enter((upstream.repo, _clean(upstream.directory), ref or upstream.ref), where)
    plan = _plan_one_git_package(local, kptfile_text, upstream, lock, ref, strategy, conflicts, fallback_keys, cache,
                                 files_policy)
    if not recursive or not _has_remote_subpackages(local, plan):
        return plan
    # kpt updates remote subpackages one after the other, each on the result of the
    # previous step; we do the same on a scratch copy and plan the difference, so
    # the update stays all-or-nothing (and --dry-run shows all of it).
    from krm_merge import txn

    with tempfile.TemporaryDirectory(prefix="krm-merge-update-") as tmp:
        scratch = Path(tmp) / "pkg"
        shutil.copytree(local, scratch, symlinks=True, ignore=shutil.ignore_patterns(".git", *txn.RESERVED_NAMES))
        apply_plan(scratch, plan)
        messages, conflicts_found = list(plan.messages), plan.conflicts
        merged_files, found = list(plan.merged_files), list(plan.outcomes)
        for sub in remote_subpackages(scratch):
            # Named where the user finds it, not in the scratch copy.
            sub_where = f"{where.removesuffix('Kptfile')}{sub}/Kptfile"
            walk.count(sub_where)
            _, sub_up, _ = _read_root_kptfile(scratch / sub, sub_where)
            follows = (
                sub_up.repo == upstream.repo and sub_up.ref == upstream.ref
                and _clean(sub_up.directory).startswith(_clean(upstream.directory))
            )
            sub_plan = _plan_git_tree(
                scratch / sub, ref if follows else None, strategy if follows else None,
                conflicts, fallback_keys, cache, True, walk, sub_where, files_policy,
            )
            apply_plan(scratch / sub, sub_plan)
            messages.extend(f"{sub}: {m}" for m in sub_plan.messages)
            conflicts_found += sub_plan.conflicts
            merged_files.extend(replace(m, path=f"{sub}/{m.path}") for m in sub_plan.merged_files)
            found.extend({**entry, "file": f"{sub}/{entry['file']}"} for entry in sub_plan.outcomes)
        final = diff_trees(local, scratch)
    final.messages, final.conflicts = messages, conflicts_found
    final.merged_files, final.outcomes = merged_files, found
    return final


def _repos_named_by(local: Path) -> set[str]:
    """Every repository the Kptfiles of the user's package name (upstream and lock)."""
    from krm_merge.kptfile.upstream import read_upstream

    repos: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(local):
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        kptfile = os.path.join(dirpath, "Kptfile")
        if "Kptfile" not in filenames or os.path.islink(kptfile):
            continue
        try:
            up, lock = read_upstream(yamlio.load_data(files.read_text(kptfile), kptfile), kptfile)
        except (KrmMergeError, OSError, UnicodeDecodeError):
            continue  # no upstream, or unreadable: the update reports it where it matters
        repos.add(up.repo)
        if lock is not None:
            repos.add(lock.repo)
    return repos


def _has_remote_subpackages(local: Path, plan: UpdatePlan) -> bool:
    if remote_subpackages(local):
        return True
    return any(w.path.endswith("/Kptfile") and w.data is not None and b"upstream:" in w.data for w in plan.writes)


def diff_trees(before: Path, after: Path) -> UpdatePlan:
    """The plan that turns directory ``before`` into ``after`` (``.git`` ignored)."""
    plan = UpdatePlan()
    old, new = _all_files(before), _all_files(after)
    for rel in sorted(set(old) | set(new)):
        a = old[rel].read_bytes() if rel in old else None
        b = new[rel].read_bytes() if rel in new else None
        if a != b:
            plan.writes.append(FileWrite(rel, a, b))
    dirs_after = {os.path.relpath(d, after).replace(os.sep, "/") for d, _, _ in os.walk(after)}
    for dirpath, _, _ in os.walk(before, topdown=False):
        rel = os.path.relpath(dirpath, before).replace(os.sep, "/")
        if rel != "." and ".git" not in rel.split("/") and rel not in dirs_after:
            plan.remove_dirs.append(rel)
    return plan


def _all_files(root: Path) -> dict[str, Path]:
    from krm_merge.txn import RESERVED_NAMES

    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            if name in RESERVED_NAMES:
                continue
            full = Path(dirpath) / name
            if not full.is_symlink():
                out[full.relative_to(root).as_posix()] = full
    return out


def _clean(directory: str) -> str:
    return PurePosixPath("/" + directory.strip("/")).as_posix()


def _read_root_kptfile(local: Path, name: str | None = None) -> tuple[str, Any, Any]:
    """The Kptfile of ``local`` with its upstream and lock; ``name`` is how messages call it."""
    from krm_merge.kptfile.upstream import read_upstream

    kptfile = local / "Kptfile"
    if not local.is_dir():
        raise KrmError(f"package {local} is not a directory")
    if not kptfile.is_file():
        raise KrmError(f"{kptfile} not found: not a kpt package (fetch it with kpt pkg get, or give --origin/--upstream)")
    text = files.read_text(kptfile)
    name = name or str(kptfile)
    upstream, lock = read_upstream(yamlio.load_data(text, name), name)
    return text, upstream, lock


def _plan_one_git_package(
    local: Path, kptfile_text: str, upstream: Any, lock: Any, ref: str | None,
    strategy: str | None, conflicts: str, fallback_keys: str | None, cache: Any, files_policy: str = "keep-local",
) -> UpdatePlan:
    from krm_merge.kptfile.upstream import GitUpstream, record_lock

    target = GitUpstream(upstream.repo, upstream.directory, ref or upstream.ref)
    if not target.ref:
        raise KrmError(f"{local / 'Kptfile'}: upstream.git.ref is empty; give PKG@REF")
    effective = strategy or _kptfile_strategy(kptfile_text) or "resource-merge"
    lock_ref, commit = cache.resolve_package_ref(target.repo, target.directory, target.ref)
    if effective == "resource-merge" and _at_commit(lock, target, commit):
        # Origin and upstream are one tree: the merge gives local back, so only the ref is recorded.
        plan = UpdatePlan()
        _record_lock_in_plan(plan, kptfile_text, lambda text: record_lock(text, target, commit, strategy, lock_ref))
        return plan
    with tempfile.TemporaryDirectory(prefix="krm-merge-update-") as tmp:
        origin_dir, upstream_dir = Path(tmp) / "origin", Path(tmp) / "upstream"
        origin_dir.mkdir()
        if lock is not None:  # without a lock kpt's origin is empty: everything counts as added upstream
            cache.extract(lock.repo, lock.commit, lock.directory, origin_dir)
        cache.extract(target.repo, commit, target.directory, upstream_dir)
        # Our own extraction: links are deleted in place instead of copying the rest.
        files.prune_untrusted_tree(origin_dir, "origin")
        warnings = files.prune_untrusted_tree(upstream_dir, "upstream")
        plan = plan_update(local, origin_dir, upstream_dir, strategy=effective, conflicts=conflicts,
                           fallback_keys=fallback_keys, checked=True, files_policy=files_policy)
        plan.messages[:0] = warnings
    _record_lock_in_plan(plan, kptfile_text, lambda text: record_lock(text, target, commit, strategy, lock_ref))
    return plan


def _at_commit(lock: Any, target: Any, commit: str) -> bool:
    """Whether the package is already locked at ``commit`` of the same repository and directory."""
    return lock is not None and lock.commit == commit and lock.repo == target.repo and _clean(lock.directory) == _clean(target.directory)


def remote_subpackages(root: Path) -> list[str]:
    """Subpackages below ``root`` whose Kptfile has its own ``upstream.git`` (outermost ones only)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        if rel == "." or "Kptfile" not in filenames:
            continue
        try:
            data = yamlio.load_data(files.read_text(Path(dirpath) / "Kptfile"), f"{rel}/Kptfile")
        except KrmError:
            continue  # not a readable Kptfile: the parent's merge reports it
        up = data.get("upstream") if isinstance(data, dict) else None
        if isinstance(up, dict) and isinstance(up.get("git"), dict):
            found.append(rel)
            dirnames[:] = []  # its own subpackages are its business
    return found


def _kptfile_strategy(text: str) -> str | None:
    data = yamlio.load_data(text, "Kptfile")
    value = ((data or {}).get("upstream") or {}).get("updateStrategy") if isinstance(data, dict) else None
    return value if value in STRATEGIES else None


def _record_lock_in_plan(plan: UpdatePlan, kptfile_text: str, record: Any) -> None:
    for write in plan.writes:
        if write.path == "Kptfile" and write.data is not None:
            write.data = record(write.data.decode("utf-8")).encode("utf-8")
            return
    new = record(kptfile_text)
    if new != kptfile_text:
        plan.writes.append(FileWrite("Kptfile", kptfile_text.encode("utf-8"), new.encode("utf-8")))


# --- planning -------------------------------------------------------------------------


def plan_update(
    local: Path,
    origin: Path,
    upstream: Path,
    *,
    strategy: str = "resource-merge",
    conflicts: str = "upstream-wins",
    fallback_keys: str | None = None,
    checked: bool = False,
    files_policy: str = "keep-local",
) -> UpdatePlan:
    """Compute the update of ``local`` without writing anything.

    ``origin`` and ``upstream`` are content from elsewhere: unless ``checked``
    (they already went through :func:`files.prune_untrusted_tree`), they are
    first copied by :func:`files.copy_untrusted_tree`, so no link in them is
    followed and each one left out is named in a warning.  ``files_policy``
    ``"merge"`` merges non-KRM files changed on both sides
    (:mod:`krm_merge.merge3.textfile`) instead of keeping local's (kpt).
    """
    for label, root in (("local", local), ("origin", origin), ("upstream", upstream)):
        if not root.is_dir():
            raise KrmError(f"{label} package {root} is not a directory")
    if checked:
        return _plan_checked(local, origin, upstream, strategy, conflicts, fallback_keys, files_policy)
    with tempfile.TemporaryDirectory(prefix="krm-merge-update-") as tmp:
        files.copy_untrusted_tree(origin, Path(tmp) / "origin", "origin")
        warnings = files.copy_untrusted_tree(upstream, Path(tmp) / "upstream", "upstream")
        plan = _plan_checked(local, Path(tmp) / "origin", Path(tmp) / "upstream", strategy, conflicts, fallback_keys,
                             files_policy)
    plan.messages[:0] = warnings
    return plan


def _plan_checked(
    local: Path, origin: Path, upstream: Path, strategy: str, conflicts: str, fallback_keys: str | None,
    files_policy: str = "keep-local",
) -> UpdatePlan:
    from krm_merge.krm import package
    from krm_merge.merge3.conflicts import ConflictPolicy
    from krm_merge.update.package_merge import Strategy
    from krm_merge.modes import resource_merge

    lpkg, lrl = read_copy(local)
    opkg, orl = read_copy(origin)
    upkg, url = read_copy(upstream)
    config = resource_merge.Config(
        strategy=Strategy(strategy), conflicts=ConflictPolicy(conflicts),
        fallback_keys=resource_merge.parse_fallback_keys(fallback_keys, "--fallback-keys"),
    )
    krm_files = set(lpkg.files) | set(opkg.files) | set(upkg.files)
    if config.strategy is Strategy.FAST_FORWARD:
        _check_other_files_unmodified(local, origin, set(lpkg.files) | set(opkg.files))
    result = resource_merge.merge(
        config, lrl.items, orl.items, url.items, lambda obj: obj.file_path or "",
        other_files_changed=lambda directory: _other_files_differ(local, origin, krm_files, directory),
    )

    plan = UpdatePlan()
    for new, up in result.added:
        new.file_path, new.file_index = up.file_path, up.file_index
    for obj, index in result.moved_index:
        obj.file_index = index
    for obj, up in result.moved_file:
        obj.file_path, obj.file_index = up.file_path, up.file_index
    items = sorted(result.items, key=lambda o: o.file_index)
    lrl.items = items
    for change in package.plan_writes(lpkg, lrl):
        files.check_relative(change.path)
        plan.writes.append(FileWrite(change.path, _bytes(change.before), _bytes(change.text)))
    plan.writes.extend(_plan_other_files(local, origin, upstream, krm_files, config.strategy, result,
                                         plan.merged_files if files_policy == "merge" else None))
    from krm_merge.commands import outcomes

    plan.outcomes = outcomes.entries(result, lambda obj: obj.file_path or "")
    plan.remove_dirs = _emptied_dirs(local, origin, upstream, plan)
    for obj, conflict in result.conflicts:
        plan.messages.append(f"conflict: {obj.file_path}: {obj.display()}: {conflict.describe()}")
    plan.conflicts = len(result.conflicts)
    plan.conflicts += sum(len(merged.conflicts) for merged in plan.merged_files)
    for obj, message in result.warnings:
        plan.messages.append(f"warning: {obj.file_path}: {obj.display()}: {message}")
    return plan


def read_copy(root: Path) -> tuple[Any, Any]:
    """Read a package copy without parsing its documents.

    Only resources that differ between the copies are ever parsed (the merge
    compares texts first), which keeps a large update fast; a document that
    is not a mapping is still rejected when it has to be merged.
    """
    from krm_merge.krm import package

    return package.read_package(root, validate=False)


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def _other_files(root: Path, krm_files: set[str]) -> dict[str, Path]:
    """Regular files that are not KRM files of the package (``.git`` and krm-merge's lock excluded, symlinks ignored)."""
    from krm_merge.txn import RESERVED_NAMES

    out: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and d not in RESERVED_NAMES
                             and not os.path.islink(os.path.join(dirpath, d)))
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            if name in RESERVED_NAMES:
                continue
            full = Path(dirpath) / name
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if rel in krm_files or full.is_symlink() or not full.is_file():
                continue
            if _is_krm_name(rel):
                continue  # a KRM file another copy has (its merge decided it)
            out[rel] = full
    return out


def _is_krm_name(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (name.endswith((".yaml", ".yml")) or name == "Kptfile") and not any(p.startswith(".") for p in rel.split("/"))


def _plan_other_files(
    local: Path, origin: Path, upstream: Path, krm_files: set[str], strategy: Any, result: Any,
    merged_files: list[Any] | None = None,
) -> list[FileWrite]:
    """kpt's rules for non-KRM files (fast-forward / force-delete-replace: local copy = upstream's files).

    Files of a subpackage decided as a whole follow that decision (kept or
    deleted with it; a subpackage deleted locally gets nothing back).  Given
    ``merged_files`` (``--files merge``), a file local and upstream both
    changed is merged instead of kept, and the merge is appended there.
    """
    from krm_merge.merge3 import textfile
    from krm_merge.update.package_merge import Strategy, Subpackage

    lf, of, uf = (_other_files(r, krm_files) for r in (local, origin, upstream))
    writes: list[FileWrite] = []
    for rel in sorted(set(lf) | set(uf)):
        files.check_relative(rel)
        mine = lf[rel].read_bytes() if rel in lf else None
        theirs = uf[rel].read_bytes() if rel in uf else None
        base = of[rel].read_bytes() if rel in of else None
        decision = result.subpackage_of(rel)
        if decision is not Subpackage.MERGE:
            wanted = None if decision is Subpackage.DELETE else mine
        elif result.strategy_of(rel, strategy) is not Strategy.RESOURCE_MERGE:
            wanted = theirs
        elif mine is None:
            wanted = theirs if base is None else None  # added upstream -> copy; deleted locally -> stays deleted
        elif base is not None and mine == base:
            wanted = theirs  # unmodified locally: upstream's version, or deleted with it
        elif merged_files is not None and textfile.needs_merge(mine, base, theirs):
            assert theirs is not None  # needs_merge: both sides have the file
            merged = textfile.merge_file(rel, mine, base, theirs)
            merged_files.append(merged)
            wanted = merged.data
        else:
            wanted = mine  # new or modified locally: kept
        if wanted != mine:
            writes.append(FileWrite(rel, mine, wanted))
    return writes


def _other_files_differ(local: Path, origin: Path, krm_files: set[str], directory: str) -> bool:
    """Whether the non-KRM files under ``directory`` differ between local and origin."""
    prefix = directory + "/"
    lf = {r: p for r, p in _other_files(local, krm_files).items() if r.startswith(prefix)}
    of = {r: p for r, p in _other_files(origin, krm_files).items() if r.startswith(prefix)}
    return lf.keys() != of.keys() or any(lf[r].read_bytes() != of[r].read_bytes() for r in lf)


def _check_other_files_unmodified(local: Path, origin: Path, krm_files: set[str]) -> None:
    lf, of = _other_files(local, krm_files), _other_files(origin, krm_files)
    modified = [rel for rel in sorted(set(lf) | set(of)) if rel not in lf or rel not in of or lf[rel].read_bytes() != of[rel].read_bytes()]
    if modified:
        raise KrmError(f"local package files have been modified: [{', '.join(modified)}]. use a different update --strategy")


def _emptied_dirs(local: Path, origin: Path, upstream: Path, plan: UpdatePlan) -> list[str]:
    """Local directories left empty that origin has and upstream does not."""
    deleted = {w.path for w in plan.writes if w.data is None}
    added = {w.path for w in plan.writes if w.data is not None}
    out = []
    for dirpath, dirnames, filenames in os.walk(local, topdown=False):
        rel = os.path.relpath(dirpath, local).replace(os.sep, "/")
        if rel == "." or ".git" in rel.split("/"):
            continue
        if not (origin / rel).is_dir() or (upstream / rel).is_dir():
            continue
        remaining = [f"{rel}/{n}" for n in filenames if f"{rel}/{n}" not in deleted]
        subdirs = [d for d in dirnames if f"{rel}/{d}" not in out]
        if not remaining and not subdirs and not any(a.startswith(rel + "/") for a in added):
            out.append(rel)
    return out


# --- writing --------------------------------------------------------------------------


def apply_plan(root: Path, plan: UpdatePlan) -> None:
    """Write the plan as one transaction (:mod:`krm_merge.txn`): files, deletions, emptied folders.

    Every file must still hold the bytes the plan was made from; symlinks are never written through.
    """
    from krm_merge import txn

    changes = [txn.Change(w.path, w.data, w.before) for w in plan.writes]
    txn.commit(root, changes, remove_dirs=plan.remove_dirs, command="krm-merge update")


def render_plan(plan: UpdatePlan) -> str:
    """Unified diff of text files; a one-line note for binary files and removed directories."""
    out: list[str] = []
    for write in plan.writes:
        try:
            before = write.before.decode("utf-8") if write.before is not None else None
            after = write.data.decode("utf-8") if write.data is not None else None
        except UnicodeDecodeError:
            out.append(f"Binary file {write.path} {'deleted' if write.data is None else 'changed'}\n")
            continue
        out.append(files.unified_diff([(write.path, before, after)]))
    out.extend(f"directory {rel} removed\n" for rel in plan.remove_dirs)
    return "".join(out)


__all__ = ["UpdatePlan", "apply_plan", "main", "plan_git_update", "plan_update", "remote_subpackages", "read_copy", "render_plan"]
