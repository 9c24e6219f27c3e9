"""The one renderer: every format a command's outcomes take, from the one list of them.

From a :class:`~krm_merge.outcomes.report.Report`:

* the **stderr lines** (:func:`lines`): ``PROG: LABEL: TEXT`` for each thing an
  outcome tells a person (``krm-merge update: conflict: cm.yaml: ConfigMap/a:
  data.k: ...``; info without a label; the words are
  :mod:`krm_merge.outcomes.words`), then the summary lines;
* the **KRM results** (:func:`results`; ``--results FILE`` in kpt's results
  format, :func:`write_results`): one result per stderr line of an outcome, with
  the same words, plus what no line carries (resource, field values, file);
* the **JSON report** (:func:`report_document`, ``--report json``): the versioned
  document ``docs/report.schema.json`` describes, every outcome with its kind
  and typed fields;
* the **Markdown report** (:func:`report_markdown`, ``--report markdown``, a
  pull request body);
* ``conflicts --output json|text`` (:func:`marker_list`, :func:`marker_lines`);
* the **exit code** (:func:`~krm_merge.outcomes.report.exit_code`, by kinds).

:func:`finish` writes them where they go: every human line on stderr, only
the document asked for on stdout (a report to ``-``; a dry run's diff only when
no report takes stdout).  No other module formats a result, a summary or a
report (``tests/architecture/test_one_renderer.py``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

from krm_merge import files
from krm_merge.errors import KrmMergeError
from krm_merge.krm import yamlio
from krm_merge.krm.display import escape_name
from krm_merge.krm.results import ResourceRef, Result, Results, failure

from .kinds import (
    PREVIEW_ACTIONS, ConflictOutcome, ConflictsLeft, Decision, FieldSet, FileChanged, FileKept,
    FileMerged, FileSkipped, FleetScope, ForgeRequests, FunctionResult, Kind, LinkRefused, MarkerOutcome, MarkerShaped, Message, Outcome,
    PackageStatus, PackageUpdate, PullRequestAction, PullRequestOutcome, Resolved, ResourceOutcome, UnrecordedMarker,
    Version,
)
from .report import Report, State, conflicts_found, files_changed, not_merged
from .words import (
    ACTION_WORDS, DECISION_WORDS, FILE_ACTION_WORDS, KEPT_HINTS, KEPT_WORDS, LOCAL_EDIT_WORDS, REASON_WORDS, SIDES,
    Said, current_text, forge_requests_text, local_edit_text, marker_text, published_text, said, text, value_text,
)
from .words import interrupted as words_interrupted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Sequence, TextIO, TypeAlias

REPORT_API_VERSION = "report.krm-merge.dev/v1"
"""The JSON report's ``apiVersion`` (its schema: ``docs/report.schema.json``); a new version for any change a reader could trip on."""
REPORT_KIND = "Report"
FORMATS = ("json", "markdown")
"""The ``--report FORMAT`` values."""
RESULTS_HELP = "also write the results as YAML to FILE (kpt's results format)"
"""Every command's ``--results FILE`` help."""
REPORT_HELP = "write a report: FORMAT json or markdown (FILE '-': stdout, and nothing else there)"
"""``--report FORMAT FILE`` help (update, promote)."""


# --- what a person is told: stderr lines and the KRM results of the same ----------------------


def line(prog: str | None, item: Said) -> str:
    """The stderr line of one thing said: ``PROG: LABEL: MESSAGE`` (no label for info; no ``PROG`` when None)."""
    label = f"{item.label}: " if item.label else ""
    words = f"{label}{item.shown or item.result.message}"
    return f"{prog}: {words}" if prog else words


QUIET_HELP = "say only errors and warnings on stderr: no progress, no summary (a function's results are still shown)"
"""Every command's ``--quiet`` help."""


def lines(report: Report, quiet: bool = False) -> list[str]:
    """Every stderr line of a report: one per thing its outcomes say, in order, then its summary lines.

    ``quiet`` (every command's ``--quiet``) keeps only what :func:`_shown` keeps, and the summary only of a run
    that refused to write.  Outcomes already said as they happened (:func:`say_now`) are not said again.
    """
    out = [line(report.prog, item) for o in report.outcomes[report.said:] if not undone(report, o)
           for item in said(o) if _shown(o, item, quiet)]
    if quiet and report.state is not State.NOT_WRITTEN:  # a refusal to write is said, quiet or not
        return out
    return out + [f"{report.prog}: {summary}" for summary in summary_lines(report)]


def _shown(outcome: Outcome, item: Said, quiet: bool) -> bool:
    """Whether a thing said gets a stderr line: not a results-only one; under ``--quiet`` only an error or warning,
    or a function's result (what ``run`` prints of its mode, as kpt prints it, quiet or not)."""
    if item.label is None:
        return False
    return not quiet or item.result.severity != "info" or isinstance(outcome, FunctionResult)


def undone(report: Report, outcome: Outcome) -> bool:
    """Whether ``outcome`` is a change the run stopped before its write (an error, a refused pull request, a
    signal): not said as if it were made (``promote``'s field sets, ``run``'s function results: its errors and
    warnings still are, unless a signal stopped it; the error or the interruption's line says nothing was written)."""
    if report.state is not State.FAILED:
        return False
    if isinstance(outcome, FunctionResult):
        return report.signal is not None or outcome.severity == "info"
    return isinstance(outcome, FieldSet)


def results(report: Report) -> Results:
    """The KRM results of a report: one per thing its outcomes say (``--results``)."""
    return function_results(report.outcomes)


def function_results(outcomes: Iterable[Outcome]) -> Results:
    """The KRM results of outcomes, one per thing each says (also what a mode reports in its ResourceList)."""
    return Results(item.result for o in outcomes for item in said(o))


def result_lines(found: Iterable[Result], prog: str | None = None) -> list[str]:
    """A KRM function's results shown as kpt shows them (``[severity] Kind/name field: message``)."""
    return [line(prog, Said("", r, r.display())) for r in found]


# --- summary lines -------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _resources_line(report: Report) -> list[str]:
    found = [o for o in report.outcomes if isinstance(o, ResourceOutcome)]
    conflicts = [o for o in report.outcomes if isinstance(o, ConflictOutcome)]
    if not found and not conflicts:
        return []
    counts = Counter(ACTION_WORDS[o.action] for o in found)
    parts = [f"{n} {words}" for words, n in sorted(counts.items())]
    if conflicts:
        decided = Counter(DECISION_WORDS[c.decision] for c in conflicts)
        parts.append(f"{len(conflicts)} conflict(s): " + ", ".join(f"{n} {d}" for d, n in sorted(decided.items())))
    return ["resources: " + ("; ".join(parts) if parts else "none")]


def _update_summary(report: Report) -> list[str]:
    if report.state is State.FAILED:
        return []  # the error says it
    changed = files_changed(report.outcomes)
    merged = [o for o in report.outcomes if isinstance(o, FileMerged)]
    files_merged = _files_merged(merged)
    if report.state is State.WRITTEN and not changed and not merged:  # already at the ref: nothing to write
        return [current_text(report.target, report.subject or report.target) + _published(report),
                *_resources_line(report)]
    if report.state is State.WRITTEN:
        return [f"updated {report.target}: {changed} file(s) changed{_on_branch(report)}{files_merged}"
                f"{_published(report, PULL_REQUEST_SAID)}", *_resources_line(report)]
    if report.state is State.DRY_RUN:
        return [f"dry run: {changed} file(s) of {report.target} would change{files_merged}; nothing written",
                *_resources_line(report)]
    failed = not_merged(report.outcomes)
    return [f"{failed} conflicting field(s); nothing written"] if failed else []


def _files_merged(merged: list[FileMerged]) -> str:
    """``, 2 non-KRM file(s) merged (1 with conflict markers left)``, or nothing."""
    if not merged:
        return ""
    marked = sum(1 for m in merged if m.regions)
    return f", {len(merged)} non-KRM file(s) merged" + (f" ({marked} with conflict markers left)" if marked else "")


def _promoted(report: Report) -> str:
    """What a promotion run did, in words: the promotions and how many fields in how many files."""
    fields = [o for o in report.outcomes if isinstance(o, FieldSet)]
    if not fields and _published(report):  # a rerun publishing the commit an earlier run kept: its files hold it
        return f"{report.subject}: no field left to set{_published(report)}"
    if not fields:
        return f"nothing to change ({report.subject})"
    changed = len({o.file for o in fields})
    return f"{report.subject} ({_count(len(fields), 'field')} in {_count(changed, 'file')})"


PULL_REQUEST_SAID = frozenset({PullRequestAction.OPENED, PullRequestAction.UPDATED, PullRequestAction.UNCHANGED})
"""What a summary of a change committed on a pull request's branch says the pull request got."""


def _published(report: Report, said: frozenset[PullRequestAction] = frozenset({
        PullRequestAction.OPENED, PullRequestAction.UPDATED})) -> str:
    """``; pull request #2 opened`` when the run opened or updated one (else nothing): a summary saying nothing
    changed locally still says what the run did.  ``said``: the actions worth a word."""
    done = [o for o in report.outcomes if isinstance(o, PullRequestOutcome) and o.action in said]
    return "".join(f"; {published_text(o)}" for o in done)


def _on_branch(report: Report) -> str:
    """`` on branch B`` when the change was committed on a pull request's branch, not written to the user's
    files (``--pull-request``): the files changed are the branch's."""
    branches = [o.branch for o in report.outcomes if isinstance(o, PullRequestOutcome)
                and o.action not in PREVIEW_ACTIONS and o.action is not PullRequestAction.NOTHING_TO_CHANGE
                and o.branch]
    return f" on branch {branches[-1]}" if branches else ""


def _promote_summary(report: Report) -> list[str]:
    if report.state is State.FAILED:
        return []
    if report.state is State.NOT_WRITTEN:
        return ["nothing written"]
    if not report.subject:
        return []  # no promotion was asked for (an event with nothing to promote): its own line says why
    done = _promoted(report)
    return [f"dry run: {done}; nothing written" if report.state is State.DRY_RUN else done]


def _run_summary(report: Report) -> list[str]:
    if report.state is State.FAILED:
        return []
    if report.state is State.NOT_WRITTEN:
        return ["errors reported; no file was changed"]
    changed = sum(1 for o in report.outcomes if isinstance(o, FileChanged))
    warnings = sum(1 for o in report.outcomes if o.severity == "warning")
    verb = "would change" if report.state is State.DRY_RUN else "changed"
    return [f"{_count(changed, 'file')} {verb} ({_count(report.items_changed, 'item')}), {_count(warnings, 'warning')}"
            + ("; nothing written (dry run)" if report.state is State.DRY_RUN else "")]


def _resolve_summary(report: Report) -> list[str]:
    if report.state is not State.WRITTEN:
        return []
    taken = [o for o in report.outcomes if isinstance(o, Resolved)]
    left = sum(o.count for o in report.outcomes if isinstance(o, ConflictsLeft))
    how = f" (took {report.subject})" if report.subject else ""  # the side asked for, even when nothing matched
    return [f"resolved {len(taken)} conflict(s) in {report.target}{how}; {left} left"]


def _recover_summary(report: Report) -> list[str]:
    if report.outcomes or report.state is State.FAILED:
        return []
    return [f"{report.target}: no interrupted write to recover"]


def _conflicts_summary(report: Report) -> list[str]:
    if report.exit_code == 1 or any(isinstance(o, ConflictsLeft) for o in report.outcomes):
        return []  # the error, or the line of the conflicts left, says it
    return [f"no conflict left in {report.target}"]


def _check_summary(report: Report) -> list[str]:
    if report.exit_code != 0:
        return []  # one error per package says it
    return [f"no interrupted or running write in {report.target}"]


SUMMARIES: dict[str, Callable[[Report], list[str]]] = {
    "update": _update_summary, "promote": _promote_summary, "run": _run_summary, "resolve": _resolve_summary,
    "recover": _recover_summary, "conflicts": _conflicts_summary, "check": _check_summary,
}
"""Each command's summary lines (the last stderr lines), from its report; commands not listed have none."""


def summary_lines(report: Report) -> list[str]:
    """The lines that end a command's stderr: what it did, in numbers."""
    if report.fleet is not None:
        return [*fleet_local_edits(report), fleet_totals(report)]
    summarize = SUMMARIES.get(report.command)
    return summarize(report) if summarize is not None else []


def _titled_by_what_it_did(report: Report) -> bool:
    """Whether the title is a commit message saying what the run did (promote's and update's that changed
    or would change files), which the first summary line says too."""
    return (report.fleet is None and report.command in ("promote", "update")
            and report.state in (State.WRITTEN, State.DRY_RUN))


def title(report: Report) -> str:
    """The report's one-line title: promote's and update's are commit messages (a pull request's title), the
    others name the command and status."""
    if report.fleet is not None:
        return f"krm-merge fleet update: {report.fleet.upstream} to {report.fleet.ref}"
    if _titled_by_what_it_did(report):
        if report.command == "promote":
            return f"promote: {_promoted(report)}"
        return f"krm-merge update {report.subject or report.target}: {_updated(report)}"
    return f"krm-merge {report.command}: {STATUS_WORDS[report.state]}"


def _under_title(report: Report) -> list[str]:
    """The summary lines a Markdown report shows under its title: not the one the title already says
    (a dry run says only that it was one)."""
    lines = summary_lines(report)
    if not _titled_by_what_it_did(report):
        return lines
    return (["Dry run: nothing written."] if report.state is State.DRY_RUN else []) + lines[1:]


def _updated(report: Report) -> str:
    """What an update changed, in numbers: ``3 file(s) changed, 1 conflict(s)`` (diff3 regions count as conflicts)."""
    conflicts = conflicts_found(report.outcomes)
    return f"{files_changed(report.outcomes)} file(s) changed" + (f", {conflicts} conflict(s)" if conflicts else "")


STATUS_WORDS = {
    State.WRITTEN: "written", State.DRY_RUN: "dry run: nothing written", State.NOT_WRITTEN: "nothing written",
    State.FAILED: "failed, nothing written", State.READ_ONLY: "nothing to write",
}


# --- the JSON report -------------------------------------------------------------------------


def _ref(resource: ResourceRef | None) -> dict[str, str] | None:
    return resource.to_dict() if resource is not None else None


def _payload(o: Outcome) -> dict[str, Any]:
    """An outcome's typed fields in the JSON report (``kind``, ``severity`` and ``message`` are added to all)."""
    if isinstance(o, ResourceOutcome):
        return {"resource": _ref(o.resource), "file": o.file, "action": o.action.value, "reason": o.reason.value,
                "detail": o.detail}
    if isinstance(o, ConflictOutcome):
        return {"resource": _ref(o.resource), "file": o.file, "field": o.field, "local": o.local,
                "upstream": o.upstream, "origin": o.origin, "decision": o.decision.value, "rule": o.rule}
    if isinstance(o, FileChanged):
        return {"path": o.path, "action": o.action.value}
    if isinstance(o, FileMerged):
        return {"path": o.path, "regions": [{"line": r.line, "endLine": r.end_line} for r in o.regions],
                "decision": o.decision.value}
    if isinstance(o, FileKept):
        return {"path": o.path, "reason": o.reason.value, "hint": KEPT_HINTS[o.reason], "detail": o.detail}
    if isinstance(o, FileSkipped):
        return {"path": o.path, "reason": o.reason.value, "detail": o.detail}
    if isinstance(o, LinkRefused):
        return {"copy": o.copy, "path": o.path, "entry": o.entry.value}
    if isinstance(o, MarkerShaped):
        return {"copy": o.copy, "path": o.path, "line": o.line}
    if isinstance(o, FieldSet):
        return {"file": o.file, "line": o.line, "index": o.index, "resource": _ref(o.resource), "field": o.field,
                "old": o.old, "new": o.new, "source": o.source}
    if isinstance(o, MarkerOutcome):
        return _marker_fields(o)
    if isinstance(o, UnrecordedMarker):
        return {"marker": _marker_fields(o.marker)}
    if isinstance(o, Resolved):
        return {"take": o.take, "marker": _marker_fields(o.marker)}
    if isinstance(o, ConflictsLeft):
        return {"package": o.package, "count": o.count, "regions": o.regions, "earlier": o.earlier}
    if isinstance(o, PullRequestOutcome):
        return {**pull_request_entry(o), "files": o.files, "commitMessage": o.message}
    if isinstance(o, PackageUpdate):
        return {"path": o.path, "status": o.status.value, "exitCode": o.code, "from": _version(o.before),
                "to": _version(o.after), "filesChanged": o.files, "conflicts": o.conflicts, "error": o.error,
                "localEdits": [outcome_document(e) for e in o.edits], "update": o.report}
    if isinstance(o, ForgeRequests):
        return {"forge": o.forge, "host": o.host, "requests": o.requests, "waited": o.waited}
    return {"result": o.result.to_dict()}


def pull_request_entry(o: PullRequestOutcome) -> dict[str, Any]:
    """The report's ``pullRequest`` entry: what the step did and where, without the fields it has no value for."""
    found = {"action": o.action.value, "branch": o.branch, "base": o.base, "forge": o.forge, "repo": o.repo,
             "url": o.url, "number": o.number, "commit": o.commit, "notes": list(o.notes), "step": o.step,
             "error": o.error}
    return {k: v for k, v in found.items() if v not in (None, "", [])}


def _marker_fields(o: MarkerOutcome) -> dict[str, Any]:
    """A marker's fields: its values as JSON values, a side without the field left out."""
    return {"type": o.type, "file": o.file, "line": o.line, "resource": o.resource, "field": o.field,
            **{side: o.values[side] for side in SIDES if side in o.values}}


def outcome_document(outcome: Outcome) -> dict[str, Any]:
    """One outcome as the JSON report holds it."""
    return {"kind": outcome.kind.value, "severity": outcome.severity, "message": text(outcome), **_payload(outcome)}


def _version(version: Version | None) -> dict[str, str] | None:
    return {"ref": version.ref, "commit": version.commit} if version is not None else None


def report_document(report: Report) -> dict[str, Any]:
    """The JSON report (``docs/report.schema.json``): what ran, its status and exit code, every outcome, and
    ``pullRequest`` (what ``--pull-request`` did) when one was asked for; a fleet update's is its own document
    (:func:`fleet_document`)."""
    if report.fleet is not None:
        return fleet_document(report, report.fleet)
    pull_requests = [o for o in report.outcomes if isinstance(o, PullRequestOutcome)]
    pull_request = {"pullRequest": pull_request_entry(pull_requests[-1])} if pull_requests else {}
    return {
        "apiVersion": REPORT_API_VERSION,
        "kind": REPORT_KIND,
        "command": report.command,
        "target": report.target,
        "status": report.state.value,
        "exitCode": report.exit_code,
        "title": title(report),
        "summary": summary_lines(report),
        "outcomes": [outcome_document(o) for o in report.outcomes],
        **pull_request,
    }


# --- a fleet update's report ---------------------------------------------------------------

FLEET_KIND = "FleetUpdateReport"
"""The fleet document's ``kind`` (its ``apiVersion`` is :data:`REPORT_API_VERSION`, its schema the same file's)."""


def _packages(report: Report) -> list[PackageUpdate]:
    return [o for o in report.outcomes if isinstance(o, PackageUpdate)]


def _totals(report: Report) -> dict[str, int]:
    packages = _packages(report)
    return {"packages": len(packages), **{s.value: sum(1 for p in packages if p.status is s) for s in PackageStatus}}


def fleet_totals(report: Report) -> str:
    """A fleet update's totals in one line (its last stderr line): ``6 package(s): 3 updated, 1 current, ...``,
    and what its pull requests asked of the forges: ``; 18 forge request(s), 6.2 s waited for ...``."""
    totals = _totals(report)
    asked = [o for o in report.outcomes if isinstance(o, ForgeRequests)]
    forges = (f"; {forge_requests_text(sum(o.requests for o in asked), sum(o.waited for o in asked))}"
              if asked else "")
    return (f"{totals['packages']} package(s): " + ", ".join(f"{totals[s.value]} {s.value}" for s in PackageStatus)
            + forges + (" (dry run: nothing written)" if report.state is State.DRY_RUN else ""))


LOCAL_EDITS_SHOWN = 20
"""The local edits a fleet update names on stderr (the report names every one)."""


def fleet_local_edits(report: Report) -> list[str]:
    """The stderr lines naming the local edits a fleet update's packages lost to upstream or left marked: a count,
    the first :data:`LOCAL_EDITS_SHOWN` with their three values, then how many more (none when there are none)."""
    edits = [(p.path, e) for p in _packages(report) for e in p.edits]
    if not edits:
        return []
    over = sum(1 for _, e in edits if e.decision is Decision.UPSTREAM)
    head = f"{over} local edit(s) overwritten by upstream, {len(edits) - over} left marked:"
    more = len(edits) - LOCAL_EDITS_SHOWN
    rest = [f"... and {more} more local edit(s): the report lists every one"] if more > 0 else []
    return [head, *(local_edit_text(path, e) for path, e in edits[:LOCAL_EDITS_SHOWN]), *rest]


def fleet_document(report: Report, scope: FleetScope) -> dict[str, Any]:
    """A fleet update's JSON report (``FleetUpdateReport`` in ``docs/report.schema.json``): its scope, totals and
    exit code, one entry per package (with that package's own report), and the run's own messages."""
    return {
        "apiVersion": REPORT_API_VERSION, "kind": FLEET_KIND, "upstream": scope.upstream, "ref": scope.ref,
        "dryRun": report.state is State.DRY_RUN, "selected": scope.selected,
        "shards": {"count": scope.count, "reported": sorted(scope.reported)},
        "totals": _totals(report), "exitCode": report.exit_code,
        "packages": [outcome_document(p) for p in _packages(report)],
        "messages": [outcome_document(o) for o in report.outcomes if not isinstance(o, PackageUpdate)],
    }


def report_json(report: Report) -> str:
    """The JSON report as text (a marker's value that is no JSON type, a YAML timestamp, as its text)."""
    return json.dumps(report_document(report), indent=2, ensure_ascii=False, default=str) + "\n"


# --- the Markdown report -------------------------------------------------------------------


def _cell(value: Any) -> str:
    """A table cell: ``|`` escaped, one line, code spans for values."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")


def _code(value: str | None) -> str:
    if value is None:
        return "*(added)*"
    return "`" + _cell(value).replace("`", "'") + "`"


def _label(resource: ResourceRef | None, file: str | None = None) -> str:
    """The resource as messages name it; one without a name (a kustomization) by its kind and file."""
    if resource is None:
        return "—"
    if not resource.name and resource.kind and file:
        return _cell(f"{resource.kind} ({file})")
    return _cell(resource.display())


Row: TypeAlias = "Callable[[Any], list[str]]"

PACKAGE_COLUMNS = ("package", "status", "from", "to", "files changed", "conflicts")


LOCAL_EDIT_COLUMNS = ("package", "resource", "file", "field", "origin", "local", "upstream", "decided")


def _package_row(p: PackageUpdate) -> list[str]:
    return [_code(p.path), p.status.value, _cell(p.before.ref if p.before else ""), _cell(p.after.ref if p.after else ""),
            str(p.files), str(p.conflicts)]


def _table(columns: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    """A Markdown table, then a blank line."""
    return ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns), *("| " + " | ".join(r) + " |" for r in rows),
            ""]

# (kind, section title, column headings, one row per outcome); kinds without a table are listed as bullets.
TABLES: list[tuple[Kind, str, tuple[str, ...], Row]] = [
    (Kind.FILE_CHANGED, "Files", ("file", "change"), lambda o: [_code(o.path), FILE_ACTION_WORDS[o.action]]),
    (Kind.RESOURCE, "Resources", ("resource", "file", "outcome", "why"),
     lambda o: [_label(o.resource, o.file), _code(o.file), ACTION_WORDS[o.action],
                _cell(REASON_WORDS[o.reason].format(detail=o.detail))]),
    (Kind.CONFLICT, "Conflicts", ("resource", "file", "field", "local", "upstream", "origin", "decided"),
     lambda o: [_label(o.resource, o.file), _code(o.file), _code(o.field), _code(o.local), _code(o.upstream),
                _code(o.origin),
                _cell(DECISION_WORDS[o.decision] + (f"; a rule: {o.rule}" if o.rule else ""))]),
    (Kind.FILE_MERGED, "Files merged", ("file", "diff3 regions left"),
     lambda o: [_code(o.path), ", ".join(f"lines {r.line}-{r.end_line}" for r in o.regions) or "none"]),
    (Kind.FILE_KEPT, "Upstream changes not taken", ("file", "why", "to take them"),
     lambda o: [_code(o.path), _cell(KEPT_WORDS[o.reason].format(detail=o.detail)), _cell(KEPT_HINTS[o.reason]) or "—"]),
    (Kind.FIELD_SET, "Fields set", ("file", "line", "resource", "field", "old", "new", "set by"),
     lambda o: [_cell(o.file), str(o.line or "-"), _label(o.resource, o.file), _code(o.field), _code(o.old), _code(o.new),
                _code(o.source) if o.source else "-"]),
    (Kind.MARKER, "Conflicts left", ("file", "line", "resource", "field", "local", "upstream", "origin"),
     lambda o: [_code(o.file), str(o.line), _cell(o.resource) or "—", _code(o.field) if o.field else "—",
                *(_code(value_text(o.values, side)) for side in SIDES)]),
    (Kind.RESOLVED, "Conflicts resolved", ("file", "line", "resource", "field", "took"),
     lambda o: [_code(o.marker.file), str(o.marker.line), _cell(o.marker.resource) or "—",
                _code(o.marker.field) if o.marker.field else "—", o.take]),
    (Kind.PACKAGE, "Packages", PACKAGE_COLUMNS, _package_row),
]
BULLETS: list[tuple[tuple[Kind, ...], str]] = [
    ((Kind.ERROR,), "Errors"),
    ((Kind.WARNING, Kind.FILE_SKIPPED, Kind.LINK_REFUSED, Kind.MARKER_SHAPED, Kind.UNRECORDED_MARKER), "Warnings"),
    ((Kind.RESULT,), "Results"),
    ((Kind.INFO, Kind.CONFLICTS_LEFT, Kind.FORGE_REQUESTS), "Notes"),
    ((Kind.PULL_REQUEST,), "Pull request"),
]


def fleet_markdown(report: Report, scope: FleetScope) -> str:
    """A fleet update's Markdown report (a CI job summary): totals, a row per package, each conflicted package's
    conflicts, each failed package's error, the run's own errors."""
    shards = f"; shards {', '.join(map(str, sorted(scope.reported)))} of {scope.count}" if scope.count > 1 else ""
    out = [f"## krm-merge fleet update: {_code(scope.upstream)} to {_code(scope.ref)}", "",
           _cell(fleet_totals(report)) + shards + ".", ""]
    out += [f"- **{_cell(text(o))}**" for o in report.outcomes if o.severity == "error" and not isinstance(o, PackageUpdate)]
    packages = _packages(report)
    if packages:
        out += _table(PACKAGE_COLUMNS, [_package_row(p) for p in packages])
    edits = [(p, e) for p in packages for e in p.edits]
    if edits:
        out += ["### Local edits overwritten or left marked", "", *_table(LOCAL_EDIT_COLUMNS, [
            [_code(p.path), _label(e.resource, e.file), _code(e.file), _code(e.field), _code(e.origin), _code(e.local),
             _code(e.upstream), LOCAL_EDIT_WORDS[e.decision]] for p, e in edits])]
    for p in packages:
        if p.status is PackageStatus.CONFLICTED and p.report is not None:
            said_there = [o.get("message", "") for o in p.report.get("outcomes", []) if o.get("kind") == "conflict"]
            out += [f"### Conflicts in {_code(p.path)}", "", *(f"- {_cell(m)}" for m in said_there), ""]
    failed = [p for p in packages if p.status is PackageStatus.FAILED]
    if failed:
        out += ["### Failed", "", *(f"- {_code(p.path)}: {_cell(p.error)}" for p in failed), ""]
    return "\n".join(out)


def report_markdown(report: Report) -> str:
    """The Markdown report (a pull request body): title, summary, a table per kind of outcome, then the messages;
    a fleet update's is its own (:func:`fleet_markdown`)."""
    if report.fleet is not None:
        return fleet_markdown(report, report.fleet)
    out = [f"## {_cell(title(report))}", ""]
    for summary in _under_title(report):
        out += [_cell(summary), ""]
    for kind, heading, columns, row in TABLES:
        found = report.of(kind)
        if found:
            out += [f"### {heading}", "", *_table(columns, [row(o) for o in found])]
    for kinds, heading in BULLETS:
        found = [o for o in report.outcomes if o.kind in kinds]
        if found:
            out += [f"### {heading}", "", *(f"- {_cell(text(o))}" for o in found), ""]
    return "\n".join(out)


# --- conflicts --output -----------------------------------------------------------------------


def marker_list(markers: Iterable[MarkerOutcome]) -> str:
    """``conflicts --output json``: a JSON list, one object per marker (``kind`` is the marker's type)."""
    rows = [{"kind": m.type, **{k: v for k, v in _marker_fields(m).items() if k != "type"}} for m in markers]
    return json.dumps(rows, indent=2, ensure_ascii=False, default=str) + "\n"


def marker_lines(markers: Iterable[MarkerOutcome], package: str = "") -> str:
    """``conflicts --output text``: one line per marker (:func:`marker_text`), its file under ``package`` as the
    user named it (``--output json`` keeps each file relative to the package, as the report schema says)."""
    return "".join(marker_text(m, package) + "\n" for m in markers)


# --- the pull request on stdout ----------------------------------------------------------------


def pull_request_lines(report: Report) -> list[str]:
    """What ``--pull-request`` adds to stdout after the command's document: the pull request's URL (the last
    line, for a CI job to read), or a dry run's preview (what it would open, and the commit message)."""
    out: list[str] = []
    for o in report.outcomes:
        if not isinstance(o, PullRequestOutcome):
            continue
        if o.action in PREVIEW_ACTIONS:
            out += [text(o), "commit message:", *(f"    {part}".rstrip() for part in o.message.split("\n"))]
        elif o.url and o.action is not PullRequestAction.FAILED:
            out.append(o.url)
    return out


# --- where it all goes -----------------------------------------------------------------------


def results_yaml(found: Iterable[Result]) -> str:
    """Results in kpt's results format (``results:`` and the list), as ``--results FILE`` holds them."""
    return yamlio.dump_results(found)


class DestinationError(KrmMergeError):
    """A ``--results`` or ``--report`` file cannot be written: named as the user typed it."""


def _destinations(results_file: str | None, report_to: Sequence[str] | None) -> list[tuple[str, str]]:
    """The option and the path of each file the command's results and report go to (not stdout)."""
    found = [("--results", results_file)] if results_file else []
    if report_to and report_to[1] != "-":
        found.append(("--report", report_to[1]))
    return found


def check_destination(option: str, path: str) -> None:
    """Refuse a ``--results``/``--report`` file that cannot be written, before the command writes anything.

    Its folder must exist (krm-merge creates none: a mistyped path is an error, not a new folder) and be
    writable, and the path must not be a folder:
    a DestinationError naming the path as typed, ending in "nothing written".
    """
    shown = escape_name(path)
    folder = os.path.dirname(path) or "."
    why = None
    if os.path.isdir(path):
        why = "it is a folder"
    elif not os.path.exists(folder):
        why = f"the folder {escape_name(folder)} does not exist (krm-merge creates none)"
    elif not os.path.isdir(folder):
        why = f"{escape_name(folder)} is not a folder"
    elif not os.access(folder, os.W_OK | os.X_OK):
        why = f"the folder {escape_name(folder)} is not writable"
    if why is not None:
        raise DestinationError(f"cannot write {option} {shown}: {why}; nothing written")


def refuse_destinations(report: Report, results_file: str | None, report_to: Sequence[str] | None,
                        stderr: TextIO | None = None, quiet: bool = False) -> int | None:
    """Check every ``--results``/``--report`` file (:func:`check_destination`) before a command writes anything,
    dry runs alike: on a refusal, its one error line said and exit code 1; None when all can be written."""
    for option, path in _destinations(results_file, report_to):
        try:
            check_destination(option, path)
        except DestinationError as err:
            report.add(Message(failure(err)))
            report.state = State.FAILED
            emit(report, stderr, quiet)
            return report.exit_code
    return None


def _write_file(option: str, path: str, data: str) -> None:
    """Write a results or report file in one piece; a failure names ``path`` as typed (never the temporary file)."""
    try:
        files.write_file_atomic(path, data)  # a reader of the report never sees half of it
    except OSError as err:
        raise DestinationError(f"cannot write {option} {escape_name(path)}: {err.strerror or err}") from None


def write_results(path: str | None, report: Report) -> None:
    """Write the report's results to ``path`` in kpt's results format (nothing when ``path`` is empty)."""
    if path:
        _write_file("--results", path, results_yaml(results(report)))


def write_report(fmt: str, path: str, report: Report, stdout: TextIO | None = None) -> None:
    """Write the report as ``json`` or ``markdown`` to ``path`` (``-``: stdout), in one piece."""
    data = report_json(report) if fmt == "json" else report_markdown(report)
    if path == "-":
        (stdout or sys.stdout).write(data)
        return
    _write_file("--report", path, data)


def say_now(report: Report, stderr: TextIO | None = None, quiet: bool = False) -> None:
    """Say the outcomes not said yet on stderr, now (a long run's progress: a fleet update's package lines as each
    package's update ends); :func:`lines` then leaves them out.  ``quiet``: as :func:`lines`."""
    out = stderr or sys.stderr
    for o in report.outcomes[report.said:]:
        for item in said(o):
            if _shown(o, item, quiet):
                out.write(line(report.prog, item) + "\n")
    out.flush()
    report.said = len(report.outcomes)


def emit(report: Report, stderr: TextIO | None = None, quiet: bool = False) -> None:
    """Write the report's stderr lines (:func:`lines`)."""
    out = stderr or sys.stderr
    for text_line in lines(report, quiet):
        out.write(text_line + "\n")


def finish(report: Report, *, results_file: str | None = None, report_to: tuple[str, str] | None = None,
           document: Iterable[str] = (), stdout: TextIO | None = None, stderr: TextIO | None = None,
           quiet: bool = False) -> int:
    """Render a finished command: its lines on stderr, ``--results``, ``--report``, its document on stdout.

    ``document`` is what the command prints on stdout when no report takes it
    (a dry run's diff, a patch, a list), written piece by piece as it is made,
    followed by the pull request's URL or preview (:func:`pull_request_lines`).
    ``quiet``: only errors and warnings, no summary (:func:`lines`).  Returns the exit code.
    """
    out = stdout or sys.stdout
    try:
        write_results(results_file, report)
        if report_to is not None:
            write_report(report_to[0], report_to[1], report, out)
    except (KrmMergeError, OSError) as err:  # the results or the report could not be written: said last
        report.add(Message(failure(err)))
    emit(report, stderr, quiet)
    if report_to is None or report_to[1] != "-":
        for chunk in document:
            out.write(chunk)
        for text_line in pull_request_lines(report):
            out.write(text_line + "\n")
    return report.exit_code


def interrupted(prog: str, signo: int, written: bool, stderr: TextIO | None = None) -> None:
    """The line of a termination signal that came outside any command's report (``cli.entry`` says it)."""
    for item in said(words_interrupted(signo, written)):
        (stderr or sys.stderr).write(line(prog, item) + "\n")


def usage_error(prog: str, message: str) -> int:
    """Bad usage found after parsing (options that do not fit together): one line, exit code 2."""
    sys.stderr.write(f"{prog}: error: {message}\n")
    return 2


__all__ = [
    "BULLETS", "DestinationError", "check_destination", "refuse_destinations", "FORMATS", "QUIET_HELP", "REPORT_API_VERSION", "REPORT_HELP", "REPORT_KIND", "RESULTS_HELP", "SUMMARIES", "TABLES",
    "emit", "finish", "function_results", "interrupted", "line", "lines", "marker_lines", "marker_list", "outcome_document",
    "pull_request_entry", "pull_request_lines", "FLEET_KIND", "LOCAL_EDITS_SHOWN", "fleet_document",
    "fleet_local_edits", "fleet_markdown", "fleet_totals",
    "report_document", "report_json", "report_markdown", "result_lines", "results", "results_yaml", "say_now",
    "summary_lines", "title", "undone", "usage_error", "write_report", "write_results",
]
