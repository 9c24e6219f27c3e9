"""The fleet report: what happened to every package, with totals, as JSON or Markdown; shard reports merged.

Each package gets one :class:`Entry`: ``updated`` (written, or with
``--dry-run`` would be), ``current`` (nothing to change: already at the ref),
``conflicted`` (conflicts left marked, or refused under ``--conflicts
fail``: its conflicts are in its update's report), or ``failed`` (its error).
The entry keeps the single update's own report data (``update``: files,
resources, conflicts, warnings, as ``krm-merge update --report json`` writes
them) and exit code.  The exit code of the whole run: 1 when a package
failed, else 3 when one conflicted, else 0.

``krm-merge report merge FILE...`` (:func:`merge`) combines the reports of the
shards of one fleet update into one, and fails when they disagree (another
upstream, ref or selection), overlap, or do not cover every shard.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, NamedTuple, Sequence

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.registry import API_VERSION

KIND = "FleetUpdateReport"
STATUSES = ("updated", "current", "conflicted", "failed")
CONFLICTED, FAILED = 3, 1  # exit codes, as a single update's


class ReportError(KrmMergeError):
    """Shard reports that cannot be merged, or a file that is not a fleet report."""


class Entry(NamedTuple):
    """What the fleet update did to one package (small: it crosses from the worker process)."""

    path: str
    status: str  # one of STATUSES
    code: int  # the single update's exit code
    before: dict[str, str] | None  # upstreamLock's ref and commit before the update
    after: dict[str, str] | None  # the ref and commit it moves to
    error: str | None  # why it failed
    update: dict[str, Any] | None  # the single update's report data

    def as_data(self) -> dict[str, Any]:
        """The entry as the JSON report writes it."""
        data: dict[str, Any] = {"path": self.path, "status": self.status, "exitCode": self.code,
                                "from": self.before, "to": self.after}
        if self.error is not None:
            data["error"] = self.error
        if self.update is not None:
            data["update"] = self.update
        return data


def status_of(code: int, *, changed: bool, refused: int) -> str:
    """A package's status from its single update: its exit code, whether it changed files, and how many
    conflicting fields stopped it (``--conflicts fail``)."""
    if code == CONFLICTED or (code == FAILED and refused):
        return "conflicted"
    if code != 0:
        return "failed"
    return "updated" if changed else "current"


def exit_code(statuses: Iterable[str]) -> int:
    """1 when a package failed, else 3 when one conflicted, else 0."""
    found = set(statuses)
    return FAILED if "failed" in found else CONFLICTED if "conflicted" in found else 0


def build(entries: Sequence[Entry], *, upstream: str, ref: str, dry_run: bool, selected: int,
          shard: tuple[int, int] | None) -> dict[str, Any]:
    """The report of one run: ``selected`` packages under the roots, ``entries`` of this shard (``(index, count)``)."""
    index, count = shard if shard is not None else (0, 1)
    return _document(upstream, ref, dry_run, selected, count, [index], [e.as_data() for e in entries])


def _document(upstream: str, ref: str, dry_run: bool, selected: int, count: int, reported: list[int],
              packages: list[dict[str, Any]]) -> dict[str, Any]:
    totals = {status: sum(1 for p in packages if p["status"] == status) for status in STATUSES}
    return {
        "apiVersion": API_VERSION, "kind": KIND, "upstream": upstream, "ref": ref, "dryRun": dry_run,
        "selected": selected, "shards": {"count": count, "reported": sorted(reported)},
        "totals": {"packages": len(packages), **totals},
        "exitCode": exit_code(p["status"] for p in packages),
        "packages": packages,
    }


def merge(reports: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One report from the shard reports ``(file, report)`` of one fleet update; a ReportError when they do not fit."""
    if not reports:
        raise ReportError("no report to merge")
    first_file, first = reports[0]
    same = ("upstream", "ref", "dryRun", "selected")
    reported: dict[int, str] = {}
    packages: dict[str, str] = {}
    merged: list[dict[str, Any]] = []
    for name, report in reports:
        _check_kind(name, report)
        for key in same:
            if report[key] != first[key]:
                raise ReportError(f"{name}: {key} is {report[key]!r} but {first[key]!r} in {first_file}: "
                                  "not shards of one fleet update")
        if report["shards"]["count"] != first["shards"]["count"]:
            raise ReportError(f"{name}: {report['shards']['count']} shards but {first['shards']['count']} in {first_file}")
        for index in report["shards"]["reported"]:
            if index in reported:
                raise ReportError(f"{name}: shard {index} is reported in {reported[index]} too")
            reported[index] = name
        for package in report["packages"]:
            if package["path"] in packages:
                raise ReportError(f"{name}: package {package['path']} is in {packages[package['path']]} too")
            packages[package["path"]] = name
            merged.append(package)
    merged.sort(key=lambda p: p["path"])
    return _document(first["upstream"], first["ref"], first["dryRun"], first["selected"], first["shards"]["count"],
                     list(reported), merged)


def missing(report: dict[str, Any]) -> list[str]:
    """What a (merged) report lacks to cover its fleet update: shards not reported, packages not accounted for."""
    count = report["shards"]["count"]
    gaps = [f"shard {i} of {count} not reported" for i in range(count) if i not in report["shards"]["reported"]]
    if not gaps and report["totals"]["packages"] != report["selected"]:
        gaps.append(f"{report['totals']['packages']} package(s) reported but {report['selected']} selected")
    return gaps


def _check_kind(name: str, report: Any) -> None:
    if not isinstance(report, dict) or report.get("kind") != KIND or report.get("apiVersion") != API_VERSION:
        raise ReportError(f"{name}: not a krm-merge fleet update report (kind {KIND}, apiVersion {API_VERSION})")
    keys = ("upstream", "ref", "dryRun", "selected", "shards", "packages")
    if any(key not in report for key in keys) or not isinstance(report["packages"], list):
        raise ReportError(f"{name}: a fleet update report needs {', '.join(keys)}")


def read(path: str) -> dict[str, Any]:
    """A JSON fleet report from ``path`` (size-bounded read); a ReportError when it is not one."""
    text = files.read_text(path)  # size-bounded like every input
    try:
        report = json.loads(text)
    except ValueError as err:
        raise ReportError(f"{path}: not JSON ({err})", file=path) from None
    except RecursionError:
        raise ReportError(f"{path}: nested too deeply to be a fleet report", file=path) from None
    _check_kind(path, report)
    return report


def line(entry: Entry) -> str:
    """One line for a package as its update ends."""
    to = f" to {entry.after['ref']} ({entry.after['commit'][:12]})" if entry.after else ""
    update = entry.update or {}
    if entry.status == "updated":
        return f"{entry.path}: updated{to}: {len(update.get('changes', []))} file(s) changed"
    if entry.status == "current":
        return f"{entry.path}: current{to}"
    if entry.status == "conflicted":
        how = ("marked '# krm-merge:conflict', the rest written: see krm-merge conflicts" if entry.code == CONFLICTED
               else "nothing written")
        return f"{entry.path}: conflicted{to}: {len(update.get('conflicts', []))} conflict(s), {how}"
    return f"{entry.path}: failed: {entry.error}"


def totals_line(report: dict[str, Any]) -> str:
    """The run's totals in one line."""
    t = report["totals"]
    return (f"{t['packages']} package(s): " + ", ".join(f"{t[s]} {s}" for s in STATUSES)
            + (" (dry run: nothing written)" if report["dryRun"] else ""))


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown (a CI job summary, a pull request body)."""
    shards = report["shards"]
    lines = [f"## krm-merge fleet update: `{report['upstream']}` to `{report['ref']}`", "",
             totals_line(report) + (f"; shards {', '.join(map(str, shards['reported']))} of {shards['count']}"
                                    if shards["count"] > 1 else "") + ".", ""]
    lines += [f"- **{gap}**" for gap in missing(report)]
    if report["packages"]:
        lines += ["| package | status | from | to | files changed | conflicts |", "| --- | --- | --- | --- | --- | --- |"]
        lines += [_row(p) for p in report["packages"]]
        lines.append("")
    for package in report["packages"]:
        if package["status"] == "conflicted":
            lines += [f"### Conflicts in `{package['path']}`", ""]
            lines += [f"- {_cell(c['message'])}" for c in package["update"]["conflicts"]] + [""]
    failed = [p for p in report["packages"] if p["status"] == "failed"]
    if failed:
        lines += ["### Failed", ""] + [f"- `{p['path']}`: {_cell(p['error'])}" for p in failed] + [""]
    return "\n".join(lines)


def _row(package: dict[str, Any]) -> str:
    update = package.get("update") or {}
    before, after = package.get("from") or {}, package.get("to") or {}
    return (f"| `{package['path']}` | {package['status']} | {_cell(before.get('ref', ''))} | {_cell(after.get('ref', ''))} "
            f"| {len(update.get('changes', []))} | {len(update.get('conflicts', []))} |")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write(fmt: str, path: str, report: dict[str, Any], stdout: Any) -> None:
    """Write ``report`` as ``json`` or ``markdown`` to ``path`` ('-': ``stdout``)."""
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else markdown(report)
    if path == "-":
        stdout.write(text)
        return
    files.write_file_atomic(path, text)


__all__ = ["KIND", "STATUSES", "Entry", "ReportError", "build", "exit_code", "line", "markdown", "merge", "missing",
           "read", "status_of", "totals_line", "write"]
