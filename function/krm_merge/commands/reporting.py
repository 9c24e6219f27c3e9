"""The commands' results: one list of KRM results, rendered on stderr and as ``--results FILE``.

A command collects what it has to say as :class:`~krm_merge.krm.results.Result`
objects (severity, message, resource, field, file) in a
:class:`~krm_merge.krm.results.Results` list; :func:`render_line` makes the
human line of one (``PROG: error: …``, ``PROG: warning: …``, ``PROG: …`` for
info), :func:`write_results` the ``--results`` file in kpt's results format,
and :func:`guarded` turns the error that stops a command (``KrmMergeError``,
``OSError``) into one error result, one line, exit 1.  Those three and
:func:`emit`/:func:`failure` live in :mod:`krm_merge.krm.results`, below the
SDK, whose directory run shares them.  ``update`` prints its plan's results without the program's name (``conflict: FILE: ...``,
:func:`krm_merge.krm.results.labelled_line`); they are the same results.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable

from krm_merge import files
from krm_merge.commands import outcomes
from krm_merge.krm import yamlio
from krm_merge.krm.results import CONFLICT, ResourceRef, Result, emit, failure, guarded, labelled_line, render_line

RESULTS_HELP = "also write the results as YAML to FILE (kpt's results format)"


def write_results(path: str | None, results: Iterable[Result]) -> None:
    """Write ``results`` to ``path`` in kpt's results format (nothing when ``path`` is empty)."""
    if not path:
        return
    files.write_file_atomic(path, yamlio.dump_data({"results": [r.to_dict() for r in results]}))


def resource_ref(label: str) -> ResourceRef | None:
    """A ``Kind/[namespace/]name`` label as a reference; its apiVersion is empty (a label does not carry one)."""
    parts = label.split("/")
    if len(parts) == 2 and all(parts):
        return ResourceRef("", parts[0], parts[1])
    if len(parts) == 3 and parts[0] and parts[2]:
        return ResourceRef("", parts[0], parts[2], parts[1])
    return None


def update_report(plan: Any, *, policy: str, dry_run: bool, code: int) -> dict[str, Any]:
    """What an update did, as data: every file changed, every conflict and how it was decided, the warnings."""
    changes = [
        {"path": w.path, "action": "added" if w.before is None else "deleted" if w.data is None else "changed"}
        for w in plan.writes
    ]
    conflicts = [labelled_line(r) for r in plan.results if r.message.startswith(CONFLICT)]
    text_conflicts = [labelled_line(r) for m in plan.merged_files for r in m.results() if r.message.startswith(CONFLICT)]
    text_warnings = [labelled_line(r) for m in plan.merged_files if m.warning is not None for r in m.results()]
    outcome = ("dry run: nothing written" if dry_run and code == 0 else "written" if code == 0
               else "nothing written")
    found = plan.outcomes
    # the same conflicts in the same order (both come from the merge's list): the fields join the messages
    fields = [{k: v for k, v in e.items() if k != "kind"} for e in found if e["kind"] == "conflict"]
    if len(fields) != len(conflicts):
        fields = [{} for _ in conflicts]
    return {
        "outcome": outcome,
        "changes": changes,
        "removedDirectories": list(plan.remove_dirs),
        "resources": [{k: v for k, v in e.items() if k != "kind"} for e in found if e["kind"] == "resource"],
        "conflicts": [{"message": m, "decided": policy, **f} for m, f in zip(conflicts, fields)]
        + [{"message": m, "decided": "diff3 markers left in the file"} for m in text_conflicts],
        "warnings": [labelled_line(r) for r in plan.results if not r.message.startswith(CONFLICT)] + text_warnings,
        # update --files merge: each non-KRM file merged 3-way, with the conflict regions left in it
        "mergedFiles": [
            {"path": m.path, "conflicts": [{"line": r.start, "endLine": r.end} for r in m.conflicts]}
            for m in plan.merged_files if m.merged
        ],
    }


def update_report_markdown(report: dict[str, Any]) -> str:
    """The update report as Markdown (a pull request body)."""
    lines = [f"## krm-merge update: {report['outcome']}", ""]
    lines += [f"{len(report['changes'])} file(s) changed, {len(report['conflicts'])} conflict(s).", ""]
    if report["changes"]:
        lines += ["| file | change |", "| --- | --- |"]
        lines += [f"| `{c['path']}` | {c['action']} |" for c in report["changes"]]
        lines.append("")
    lines += [f"- directory `{d}` removed" for d in report["removedDirectories"]]
    lines += outcomes.markdown(report.get("resources", []))
    if report["conflicts"]:
        lines += ["### Conflicts", ""]
        lines += [f"- {c['message']} ({_decided(c)})" for c in report["conflicts"]]
        lines.append("")
    if report.get("mergedFiles"):
        lines += ["### Files merged", ""]
        lines += [f"- `{m['path']}`" + (f": {len(m['conflicts'])} conflict(s) left as diff3 markers" if m["conflicts"] else "")
                  for m in report["mergedFiles"]]
        lines.append("")
    if report["warnings"]:
        lines += ["### Warnings", ""]
        lines += [f"- {w}" for w in report["warnings"]]
        lines.append("")
    return "\n".join(lines)


def _decided(conflict: dict[str, Any]) -> str:
    """How a conflict was decided: by the ``--conflicts`` policy, or by a rule of the package (named, with its value)."""
    if conflict.get("reason"):
        return f"decided: {conflict.get('decision', conflict['decided'])}; {conflict['reason']}"
    return f"decided: {conflict['decided']}"


def write_report(fmt: str, path: str, report: dict[str, Any]) -> None:
    """Write ``report`` as ``json`` or ``markdown`` to ``path`` ('-': stdout)."""
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else update_report_markdown(report)
    if path == "-":
        sys.stdout.write(text)
        return
    files.write_file_atomic(path, text)


__all__ = ["RESULTS_HELP", "emit", "failure", "guarded", "render_line", "resource_ref", "update_report",
           "update_report_markdown", "write_report", "write_results"]
