"""A fleet update's report: each package's outcome, and shard reports read back and merged into one.

Each package gets one :class:`~krm_merge.outcomes.kinds.PackageUpdate` with a
status (:func:`status_of`): ``updated`` (written, or with ``--dry-run`` would
be), ``current`` (nothing to change: already at the ref), ``conflicted``
(conflicts left marked, or refused under ``--conflicts fail``: its conflicts
are in its own update's report), or ``failed`` (its error).  The run is one
:class:`~krm_merge.outcomes.report.Report` whose ``fleet`` scope says which
upstream, ref, selection and shards it covers; the renderer writes it
(:func:`krm_merge.outcomes.render.fleet_document`, ``fleet_markdown``) and
its exit code is 1 when a package failed, else 3 when one conflicted, else 0.

``krm-merge report merge FILE...`` reads the JSON reports of the shards of
one fleet update back (:func:`read`, :func:`shard_of`) and merges them
(:func:`merge`), refusing reports that disagree (another upstream, ref or
selection), overlap, or are not fleet reports; :func:`missing` names the
shards and packages a merged report lacks.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.krm.results import ResourceRef
from krm_merge.outcomes.kinds import (
    LOCAL_EDIT_DECISIONS, ConflictOutcome, Decision, FleetScope, Outcome, PackageStatus, PackageUpdate, Version,
)
from krm_merge.outcomes.render import FLEET_KIND, REPORT_API_VERSION
from krm_merge.records import Record

CONFLICTED, FAILED = 3, 1  # exit codes, as a single update's


class ReportError(KrmMergeError):
    """Shard reports that cannot be merged, or a file that is not a fleet report."""


def status_of(code: int, *, changed: bool, refused: int) -> PackageStatus:
    """A package's status from its single update: its exit code, whether it changed files, and how many
    conflicting fields stopped it (``--conflicts fail``)."""
    if code == CONFLICTED or (code == FAILED and refused):
        return PackageStatus.CONFLICTED
    if code != 0:
        return PackageStatus.FAILED
    return PackageStatus.UPDATED if changed else PackageStatus.CURRENT


def local_edits(outcomes: Sequence[Outcome]) -> tuple[ConflictOutcome, ...]:
    """The local edits a package's update replaced with upstream's value or left marked, from its outcomes: what a
    fleet names apart (stderr, every report format) so that none is lost in silence."""
    return tuple(o for o in outcomes if isinstance(o, ConflictOutcome) and o.decision in LOCAL_EDIT_DECISIONS)


class Shard(Record):
    """One fleet report read back: its scope, whether it was a dry run, its packages."""

    scope: FleetScope
    dry_run: bool
    packages: list[PackageUpdate]


def read(path: str) -> dict[str, Any]:
    """A JSON document from ``path`` (read strictly: a regular file, size-bounded); a ReportError when it is not
    JSON (or not UTF-8)."""
    try:
        text = files.read_text(path)
    except UnicodeDecodeError as err:
        raise ReportError(f"{path}: not UTF-8 text (byte {err.start}), so not a fleet report", file=path) from None
    try:
        data: dict[str, Any] = json.loads(text)
    except ValueError as err:
        raise ReportError(f"{path}: not JSON ({err})", file=path) from None
    except RecursionError:
        raise ReportError(f"{path}: nested too deeply to be a fleet report", file=path) from None
    return data


def shard_of(name: str, doc: Any) -> Shard:
    """A fleet report (``doc``, read from ``name``) as typed outcomes; a ReportError naming what does not fit."""
    if not isinstance(doc, dict) or doc.get("kind") != FLEET_KIND or doc.get("apiVersion") != REPORT_API_VERSION:
        raise ReportError(f"{name}: not a krm-merge fleet update report (kind {FLEET_KIND}, apiVersion "
                          f"{REPORT_API_VERSION})")
    shards = doc.get("shards")
    packages = doc.get("packages")
    if not (isinstance(doc.get("upstream"), str) and isinstance(doc.get("ref"), str) and _count(doc.get("selected"))
            and isinstance(doc.get("dryRun"), bool) and isinstance(shards, dict) and _count(shards.get("count"))
            and isinstance(shards.get("reported"), list) and all(_count(i) for i in shards["reported"])
            and isinstance(packages, list)):
        raise ReportError(f"{name}: a fleet update report needs upstream, ref, dryRun, selected, shards (count, "
                          "reported) and packages")
    scope = FleetScope(doc["upstream"], doc["ref"], doc["selected"], shards["count"], tuple(shards["reported"]))
    return Shard(scope, doc["dryRun"], [_package(name, i, p) for i, p in enumerate(packages)])


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _package(name: str, index: int, data: Any) -> PackageUpdate:
    """One ``packages`` entry as an outcome (what the renderer wrote: ``outcome_document`` of a PackageUpdate)."""
    where = f"{name}: packages[{index}]"
    if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not isinstance(data.get("exitCode"), int):
        raise ReportError(f"{where}: expected a package entry with path, status and exitCode")
    try:
        status = PackageStatus(data.get("status"))
    except ValueError:
        raise ReportError(f"{where}: status must be one of {', '.join(s.value for s in PackageStatus)}") from None
    counts = [data.get(key, 0) for key in ("filesChanged", "conflicts")]
    update = data.get("update")
    if not all(_count(n) for n in counts) or not isinstance(data.get("error", ""), str) \
            or not isinstance(update, (dict, type(None))):
        raise ReportError(f"{where}: filesChanged, conflicts, error or update is not what a fleet report holds")
    edits = data.get("localEdits", [])  # absent from a report of a krm-merge before #46
    if not isinstance(edits, list):
        raise ReportError(f"{where}: localEdits is a list of conflicts")
    return PackageUpdate(data["path"], status, data["exitCode"], _version(where, data.get("from")),
                         _version(where, data.get("to")), data.get("error", ""), counts[0], counts[1], update,
                         tuple(_edit(f"{where}.localEdits[{n}]", e) for n, e in enumerate(edits)))


_EDIT_TEXTS = ("file", "field", "local", "upstream", "origin", "rule")


def _edit(where: str, data: Any) -> ConflictOutcome:
    """One ``localEdits`` entry as the conflict it is (what the renderer wrote: ``outcome_document``)."""
    if not isinstance(data, dict) or not all(isinstance(data.get(k, ""), str) for k in _EDIT_TEXTS):
        raise ReportError(f"{where}: expected a conflict with file, field, local, upstream and origin")
    try:
        decision = Decision(data.get("decision"))
    except ValueError:
        decision = None
    if decision is None or decision not in LOCAL_EDIT_DECISIONS:
        raise ReportError(f"{where}: decision must be upstream or marked")
    resource = data.get("resource")
    if resource is not None and not (isinstance(resource, dict) and all(
            isinstance(resource.get(k, ""), str) for k in ("apiVersion", "kind", "name", "namespace"))):
        raise ReportError(f"{where}: resource is apiVersion, kind, name and namespace")
    ref = None if resource is None else ResourceRef(resource.get("apiVersion", ""), resource.get("kind", ""),
                                                    resource.get("name", ""), resource.get("namespace", ""))
    return ConflictOutcome(ref, data.get("file", ""), 0, data.get("field", ""), data.get("local", ""),
                           data.get("upstream", ""), data.get("origin", ""), decision, data.get("rule", ""))


def _version(where: str, data: Any) -> Version | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ref"), str) or not isinstance(data.get("commit"), str):
        raise ReportError(f"{where}: from and to are a ref and a commit")
    return Version(data["ref"], data["commit"])


def merge(shards: Sequence[tuple[str, Shard]]) -> Shard:
    """One report from the shard reports ``(file, shard)`` of one fleet update; a ReportError when they do not fit."""
    if not shards:
        raise ReportError("no report to merge")
    first_file, first = shards[0]
    reported: dict[int, str] = {}
    paths: dict[str, str] = {}
    merged: list[PackageUpdate] = []
    for name, shard in shards:
        for key, value, expected in (("upstream", shard.scope.upstream, first.scope.upstream),
                                     ("ref", shard.scope.ref, first.scope.ref),
                                     ("dryRun", shard.dry_run, first.dry_run),
                                     ("selected", shard.scope.selected, first.scope.selected)):
            if value != expected:
                raise ReportError(f"{name}: {key} is {value!r} but {expected!r} in {first_file}: "
                                  "not shards of one fleet update")
        if shard.scope.count != first.scope.count:
            raise ReportError(f"{name}: {shard.scope.count} shards but {first.scope.count} in {first_file}")
        for index in shard.scope.reported:
            if index in reported:
                raise ReportError(f"{name}: shard {index} is reported in {reported[index]} too")
            reported[index] = name
        for package in shard.packages:
            if package.path in paths:
                raise ReportError(f"{name}: package {package.path} is in {paths[package.path]} too")
            paths[package.path] = name
            merged.append(package)
    scope = first.scope._replace(reported=tuple(sorted(reported)))
    return Shard(scope, first.dry_run, sorted(merged, key=lambda p: p.path))


def missing(shard: Shard) -> list[str]:
    """What a (merged) report lacks to cover its fleet update: shards not reported, packages not accounted for."""
    count = shard.scope.count
    gaps = [f"shard {i} of {count} not reported" for i in range(count) if i not in shard.scope.reported]
    if not gaps and len(shard.packages) != shard.scope.selected:
        gaps.append(f"{len(shard.packages)} package(s) reported but {shard.scope.selected} selected")
    return gaps


__all__ = ["ReportError", "Shard", "local_edits", "merge", "missing", "read", "shard_of", "status_of"]
