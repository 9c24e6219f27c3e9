"""The commands' results: one list of KRM results, rendered on stderr and as ``--results FILE``.

A command collects what it has to say as :class:`~krm_merge.krm.results.Result`
objects (severity, message, resource, field, file) in a
:class:`~krm_merge.krm.results.Results` list; :func:`render_line` makes the
human line of one (``PROG: error: …``, ``PROG: warning: …``, ``PROG: …`` for
info), :func:`write_results` the ``--results`` file in kpt's results format,
and :func:`guarded` turns the error that stops a command (``KrmMergeError``,
``OSError``) into one error result, one line, exit 1.

``update`` still says what happened in stderr lines; :func:`run_with_results`
copies each such line into a result while it runs (until it reports natively).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Callable, Iterable, TextIO

from krm_merge import files
from krm_merge.commands import outcomes
from krm_merge.errors import KrmMergeError
from krm_merge.krm import yamlio
from krm_merge.krm.results import File, ResourceRef, Result, Results, result_of

RESULTS_HELP = "also write the results as YAML to FILE (kpt's results format)"


def render_line(prog: str, result: Result) -> str:
    """The stderr line of a result: ``PROG: error: MESSAGE``, ``PROG: warning: MESSAGE``, ``PROG: MESSAGE`` (info)."""
    if result.severity == "info":
        return f"{prog}: {result.message}"
    return f"{prog}: {result.severity}: {result.message}"


def emit(prog: str, results: Iterable[Result], stream: TextIO | None = None) -> None:
    """Write each result's line (:func:`render_line`) to ``stream`` (default: stderr)."""
    out = stream or sys.stderr
    for result in results:
        out.write(render_line(prog, result) + "\n")


def write_results(path: str | None, results: Iterable[Result]) -> None:
    """Write ``results`` to ``path`` in kpt's results format (nothing when ``path`` is empty)."""
    if not path:
        return
    files.write_file_atomic(path, yamlio.dump_data({"results": [r.to_dict() for r in results]}))


def failure(err: KrmMergeError | OSError, describe: Callable[[KrmMergeError], str] | None = None) -> Result:
    """The error result of what stopped a command: the error's one line, its resource, field and file kept."""
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        return Result(f"{where}{err.strerror or err}", "error", file=File(str(err.filename)) if err.filename else None)
    found = result_of(err)
    message = describe(err) if describe is not None else err.one_line()
    return Result(message, "error", found.resource_ref, found.field, found.file, found.tags)


def resource_ref(label: str) -> ResourceRef | None:
    """A ``Kind/[namespace/]name`` label as a reference; its apiVersion is empty (a label does not carry one)."""
    parts = label.split("/")
    if len(parts) == 2 and all(parts):
        return ResourceRef("", parts[0], parts[1])
    if len(parts) == 3 and parts[0] and parts[2]:
        return ResourceRef("", parts[0], parts[2], parts[1])
    return None


def guarded(prog: str, body: Callable[[], int], results: Results,
            describe: Callable[[KrmMergeError], str] | None = None) -> int:
    """Run ``body``; a ``KrmMergeError`` or ``OSError`` it raises becomes one error result and line, exit 1.

    The line is written at once (stderr), the result appended to ``results``
    for ``--results``.  ``describe`` words a ``KrmMergeError`` (default: its
    ``one_line()``).
    """
    try:
        return body()
    except (KrmMergeError, OSError) as err:
        result = failure(err, describe)
        results.append(result)
        emit(prog, [result])
        return 1


class _Tee:
    """A text stream that passes every write on and keeps the complete lines."""

    def __init__(self, stream: TextIO, on_line: Callable[[str], None]) -> None:
        self._stream, self._on_line, self._partial = stream, on_line, ""

    def write(self, text: str) -> int:
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self._on_line(line)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def result_of_line(prog: str, line: str, results: Results) -> None:
    """The result one stderr line of ``prog`` stands for (lines of no known form are info)."""
    if not line.strip():
        return
    for severity in ("error", "warning"):
        for prefix in (f"{prog}: {severity}: ", f"{severity}: "):
            if line.startswith(prefix):
                getattr(results, severity)(line[len(prefix):], **_file_of(line[len(prefix):]))
                return
    if line.startswith("conflict: "):
        results.warning(line, **_file_of(line[len("conflict: "):]))
        return
    results.info(line.removeprefix(f"{prog}: "))


_TEXT_FILE_HEAD = re.compile(r"([^\s:/][^\s:]*)(:\d+)?")  # a relative path, maybe with a line


def _file_of(message: str) -> dict[str, File]:
    head = message.split(": ", 1)[0]
    if head.endswith((".yaml", ".yml", "Kptfile")) and " " not in head:
        return {"file": File(head)}
    # update --files merge names a non-KRM file as PATH:LINE (a conflict) or PATH (a binary file kept)
    position = _TEXT_FILE_HEAD.fullmatch(head)
    if position and (position.group(2) or message.startswith(f"{head}: binary file")):
        return {"file": File(position.group(1))}
    return {}


def run_with_results(prog: str, path: str | None, main: Callable[[], int]) -> int:
    """Run ``main``; with ``path``, also write what it said on stderr as results to ``path``."""
    if not path:
        return main()
    results = Results()
    real = sys.stderr
    sys.stderr = _Tee(real, lambda line: result_of_line(prog, line, results))  # type: ignore[assignment]
    try:
        code = main()
    finally:
        sys.stderr = real
    write_results(path, results)
    return code


def update_report(plan: Any, *, policy: str, dry_run: bool, code: int) -> dict[str, Any]:
    """What an update did, as data: every file changed, every conflict and how it was decided, the warnings."""
    changes = [
        {"path": w.path, "action": "added" if w.before is None else "deleted" if w.data is None else "changed"}
        for w in plan.writes
    ]
    conflicts = [m for m in plan.messages if m.split(": ", 1)[-1].startswith("conflict: ") or m.startswith("conflict: ")]
    text_conflicts = [line for m in plan.merged_files for line in m.messages() if line.startswith("conflict: ")]
    text_warnings = [line for m in plan.merged_files if m.warning is not None for line in m.messages()]
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
        "warnings": [m for m in plan.messages if m not in conflicts] + text_warnings,
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
        lines += [f"- {c['message']} (decided: {c['decided']})" for c in report["conflicts"]]
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


def write_report(fmt: str, path: str, report: dict[str, Any]) -> None:
    """Write ``report`` as ``json`` or ``markdown`` to ``path`` ('-': stdout)."""
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else update_report_markdown(report)
    if path == "-":
        sys.stdout.write(text)
        return
    files.write_file_atomic(path, text)
