"""``krm-merge update LOCAL --origin DIR --upstream DIR``: kpt pkg update on directories.

The whole update of a package copy: KRM resources through the 3-way package
merge (``krm_merge.merge3.package``), the Kptfile through the pipeline merge,
and every other file by kpt's rules — a local file that is new or differs
from origin is kept; an unmodified one is replaced by upstream's or deleted
with it; files added upstream are copied; directories emptied because
upstream removed them are removed.

Writes are all-or-nothing: every new file is first written to a temporary
file next to its target, and only when all were written are they renamed
into place.  Paths never leave the package and symlinks are never written
through.  Nothing is written with ``--dry-run`` or when a conflict is found
under ``--conflicts fail``.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.krm.results import KrmError

STRATEGIES = ("resource-merge", "fast-forward", "force-delete-replace")
POLICIES = ("upstream-wins", "local-wins", "fail")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"krm-merge update: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command's argument parser (also shown by `krm-merge --help`)."""
    p = _Parser(prog="krm-merge update", description="3-way update of a local package copy (kpt pkg update on directories).")
    p.add_argument("local", help="the local package directory (updated in place)")
    p.add_argument("--origin", required=True, metavar="DIR", help="the upstream version local was fetched from")
    p.add_argument("--upstream", required=True, metavar="DIR", help="the new upstream version")
    p.add_argument("--strategy", choices=STRATEGIES, default="resource-merge")
    p.add_argument("--conflicts", choices=POLICIES, default="upstream-wins", help="who wins a field changed on both sides")
    p.add_argument(
        "--fallback-keys",
        metavar="K1,K2",
        help="element keys for lists without schema (default: kpt's documented list; '' = none, like kpt)",
    )
    p.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
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


def main(argv: list[str]) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    try:
        plan = plan_update(
            Path(args.local), Path(args.origin), Path(args.upstream),
            strategy=args.strategy, conflicts=args.conflicts, fallback_keys=args.fallback_keys,
        )
    except KrmMergeError as err:
        sys.stderr.write(f"krm-merge update: error: {err.one_line()}\n")
        return 1
    for message in plan.messages:
        sys.stderr.write(message + "\n")
    if args.conflicts == "fail" and plan.conflicts:
        sys.stderr.write(f"krm-merge update: error: {plan.conflicts} conflicting field(s); nothing written\n")
        return 1
    if args.dry_run:
        sys.stdout.write(render_plan(plan))
        return 0
    try:
        apply_plan(Path(args.local), plan)
    except KrmMergeError as err:
        sys.stderr.write(f"krm-merge update: error: {err.one_line()}\n")
        return 1
    except OSError as err:
        sys.stderr.write(f"krm-merge update: error: {err}\n")
        return 1
    changed = sum(1 for w in plan.writes)
    sys.stdout.write(f"updated {args.local}: {changed} file(s) changed\n")
    return 0


# --- planning -------------------------------------------------------------------------


def plan_update(
    local: Path,
    origin: Path,
    upstream: Path,
    *,
    strategy: str = "resource-merge",
    conflicts: str = "upstream-wins",
    fallback_keys: str | None = None,
) -> UpdatePlan:
    """Compute the update of ``local`` without writing anything."""
    from krm_merge.krm import package
    from krm_merge.merge3.conflicts import ConflictPolicy
    from krm_merge.merge3.package import PackageMergeOptions, PackageMerger, Strategy
    from krm_merge.merge3.rules import FALLBACK_KEYS

    for label, root in (("local", local), ("origin", origin), ("upstream", upstream)):
        if not root.is_dir():
            raise KrmError(f"{label} package {root} is not a directory")
    lpkg, lrl = read_copy(local)
    opkg, orl = read_copy(origin)
    upkg, url = read_copy(upstream)
    keys = FALLBACK_KEYS if fallback_keys is None else tuple(k.strip() for k in fallback_keys.split(",") if k.strip())
    options = PackageMergeOptions(Strategy(strategy), ConflictPolicy(conflicts), keys)
    merger = PackageMerger(options, lambda obj: obj.file_path or "")
    if options.strategy is Strategy.FAST_FORWARD:
        _check_other_files_unmodified(local, origin, set(lpkg.files) | set(opkg.files))
    result = merger.merge(lrl.items, orl.items, url.items)

    plan = UpdatePlan()
    for new, up in result.added:
        new.file_path, new.file_index = up.file_path, up.file_index
    for obj, index in result.moved_index:
        obj.file_index = index
    items = sorted(result.items, key=lambda o: o.file_index)
    lrl.items = items
    for change in package.plan_writes(lpkg, lrl):
        files.check_relative(change.path)
        plan.writes.append(FileWrite(change.path, _bytes(change.before), _bytes(change.text)))
    krm_files = set(lpkg.files) | set(opkg.files) | set(upkg.files)
    plan.writes.extend(_plan_other_files(local, origin, upstream, krm_files, options.strategy is not Strategy.RESOURCE_MERGE))
    plan.remove_dirs = _emptied_dirs(local, origin, upstream, plan)
    for obj, conflict in result.conflicts:
        plan.messages.append(f"conflict: {obj.file_path}: {obj.display()}: {conflict.describe()}")
    plan.conflicts = len(result.conflicts)
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
    """Regular files that are not KRM files of the package (``.git`` excluded, symlinks ignored)."""
    out: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d)))
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
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


def _plan_other_files(local: Path, origin: Path, upstream: Path, krm_files: set[str], replace: bool) -> list[FileWrite]:
    """kpt's rules for non-KRM files (``replace``: local copy = upstream's files)."""
    lf, of, uf = (_other_files(r, krm_files) for r in (local, origin, upstream))
    writes: list[FileWrite] = []
    for rel in sorted(set(lf) | set(uf)):
        files.check_relative(rel)
        mine = lf[rel].read_bytes() if rel in lf else None
        theirs = uf[rel].read_bytes() if rel in uf else None
        base = of[rel].read_bytes() if rel in of else None
        if replace:
            wanted = theirs
        elif mine is None:
            wanted = theirs if base is None else None  # added upstream -> copy; deleted locally -> stays deleted
        elif base is not None and mine == base:
            wanted = theirs  # unmodified locally: upstream's version, or deleted with it
        else:
            wanted = mine  # new or modified locally: kept
        if wanted != mine:
            writes.append(FileWrite(rel, mine, wanted))
    return writes


def _check_other_files_unmodified(local: Path, origin: Path, krm_files: set[str]) -> None:
    lf, of = _other_files(local, krm_files), _other_files(origin, krm_files)
    modified = [rel for rel in sorted(set(lf) | set(of)) if rel not in lf or rel not in of or lf[rel].read_bytes() != of[rel].read_bytes()]
    if modified:
        raise KrmError(f"local package files have been modified: [{', '.join(modified)}]. use a different update strategy")


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
    """Write the plan all-or-nothing (stage every file, then rename; then delete)."""
    root = root.resolve()
    for write in plan.writes:
        _check_target(root, write.path)
    writes: list[tuple[Path, bytes]] = []
    for write in plan.writes:
        if write.data is None:
            continue
        target = root / write.path
        target.parent.mkdir(parents=True, exist_ok=True)
        _check_target(root, write.path)
        writes.append((target, write.data))
    # Staged then renamed, with the previous bytes restored if a rename fails.
    files.write_files_atomic(writes)
    for write in plan.writes:
        if write.data is None:
            (root / write.path).unlink(missing_ok=True)
    for rel in plan.remove_dirs:
        try:
            (root / rel).rmdir()
        except OSError:
            pass  # not empty after all (e.g. ignored files): keep it


def _check_target(root: Path, rel: str) -> None:
    files.check_target(root, rel)


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


__all__ = ["UpdatePlan", "apply_plan", "main", "plan_update", "read_copy", "render_plan"]
