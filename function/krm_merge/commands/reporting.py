"""``--results FILE`` for the commands that report on stderr (update, promote, diff).

Those commands say what happened in one-line messages on stderr
(``PROG: error: …``, ``PROG: warning: …``, update's ``conflict: PATH: …``).
While a command runs, :func:`results_file` copies each such line into a KRM
result (severity, message, file when the line names one) and writes them,
in kpt's results format, to FILE at the end — the lines on stderr stay as
they were.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Callable, TextIO

from krm_merge.krm.results import File, Results

RESULTS_HELP = "also write the results as YAML to FILE (kpt's results format)"


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
    from krm_merge import files
    from krm_merge.krm import yamlio

    results = Results()
    real = sys.stderr
    sys.stderr = _Tee(real, lambda line: result_of_line(prog, line, results))  # type: ignore[assignment]
    try:
        code = main()
    finally:
        sys.stderr = real
    files.write_file_atomic(path, yamlio.dump_data({"results": [r.to_dict() for r in results]}))
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
    from krm_merge.commands import outcomes

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
    import json

    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else update_report_markdown(report)
    if path == "-":
        sys.stdout.write(text)
        return
    from krm_merge import files

    files.write_file_atomic(path, text)
