"""Remote subpackages: how deep and how wide an update may recurse, and which subpackages have their own upstream.

Remote subpackages name their own upstreams, so an upstream author decides
how deep and how wide the recursion goes: both are bounded here, and a cycle
is refused before any fetch (docs/security.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from krm_merge import files
from krm_merge.kptfile.document import Strategy
from krm_merge.krm import yamlio
from krm_merge.krm.results import File, KrmError



class Subpackage(Enum):
    """What the update does with a whole subpackage directory."""

    MERGE = "merge"  # present in local and upstream (or only on one side): resources decide
    DELETE = "delete"  # deleted upstream, unchanged locally: removed
    KEEP = "keep"  # deleted upstream, changed locally: kept whole, untouched
    SKIP = "skip"  # deleted locally: upstream's version is not brought back
    REMOTE = "remote"  # its own upstream, re-pointed locally (or local-only): not part of this update
    UNFETCHED = "unfetched"  # upstream's copy has an upstream but no lock: only its Kptfile is merged
    OWN = "own"  # a remote subpackage merged with the parent's upstream copy, by its own updateStrategy


# Remote subpackages name their own upstreams, so an upstream author decides how deep and
# how wide the recursion goes: both are bounded, and a cycle is refused before any fetch.
MAX_SUBPACKAGE_DEPTH = 16


MAX_SUBPACKAGES = 256


UpstreamKey = tuple[str, str, str]  # (repo, directory, ref): where a package's update comes from


@dataclass
class Recursion:
    """Where a recursive update is: the chain of upstreams above, and how many subpackages it has visited."""

    chain: tuple[UpstreamKey, ...] = ()
    visited: list[int] = field(default_factory=lambda: [0])  # shared by the whole walk

    def enter(self, key: UpstreamKey, where: str) -> Recursion:
        """The state one level down, or a KrmError for a cycle or a chain too deep."""
        names = " -> ".join(_describe(k) for k in (*self.chain, key))
        if key in self.chain:
            raise KrmError(f"{where}: remote subpackages form a cycle: {names}; refused", file=File(where))
        if len(self.chain) >= MAX_SUBPACKAGE_DEPTH:
            raise KrmError(f"{where}: remote subpackages nested more than {MAX_SUBPACKAGE_DEPTH} deep: {names}", file=File(where))
        return Recursion((*self.chain, key), self.visited)

    def count(self, where: str) -> None:
        """One more remote subpackage, or a KrmError past :data:`MAX_SUBPACKAGES`."""
        self.visited[0] += 1
        if self.visited[0] > MAX_SUBPACKAGES:
            raise KrmError(f"{where}: more than {MAX_SUBPACKAGES} remote subpackages in one update; refused", file=File(where))


def _describe(key: UpstreamKey) -> str:
    repo, directory, ref = key
    return f"{repo}{directory}@{ref}"


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


def remote_decision(local: tuple[Any, Any] | None, origin: tuple[Any, Any] | None, upstream: tuple[Any, Any] | None) -> Subpackage:
    """kpt's rules (``mergePackage``) for a subpackage present locally and upstream that has its own upstream."""
    if local is None and origin is None and upstream is None:
        return Subpackage.MERGE  # a local package (no upstream anywhere) of the parent
    if upstream is not None and not upstream[1]:
        return Subpackage.UNFETCHED  # kpt merges only the Kptfile (updateUpstream)
    if local is None or origin is None:
        return Subpackage.REMOTE
    if not origin[1]:
        raise KrmError("no origin available for package (its origin Kptfile has upstream but no upstreamLock)")
    own = local[0].get("updateStrategy") if isinstance(local[0], dict) else None
    if _git_of(local[0]) != _git_of(origin[0]) and own in (None, "", Strategy.RESOURCE_MERGE.value):
        return Subpackage.REMOTE  # re-pointed locally: kpt's resource-merge leaves it to its own update
    return Subpackage.MERGE


def _git_of(upstream: Any) -> Any:
    return upstream.get("git") if isinstance(upstream, dict) else None


__all__ = ["Subpackage", "remote_decision", "MAX_SUBPACKAGES", "MAX_SUBPACKAGE_DEPTH", "Recursion", "UpstreamKey", "remote_subpackages"]
