"""Every outcome kind renders in every format, and the exit code follows the kinds (a property test).

For any outcome of any kind, in any command's report and any state: each
thing it says is one stderr line (``PROG: LABEL: MESSAGE``) and one KRM result
with the same texts, and the results YAML reads back as those results; the
JSON report validates against the published ``docs/report.schema.json``
(``tests/outcomes/schema_check.py``, the subset the schema uses) and carries
the outcome with its kind; the Markdown report lists it under its section;
the exit code is 1 when any outcome is an error, 3 when conflicts are left,
else 0.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.fleet.report import shard_of
from krm_merge.krm.results import Field, File, ResourceRef, Result
from krm_merge.outcomes import render, words
from krm_merge.outcomes.kinds import (
    Action, ConflictOutcome, ConflictsLeft, Decision, FieldSet, FileAction, FileChanged, FileKept, FileMerged,
    FileSkipped, FleetScope, ForgeRequests, FunctionResult, KeptReason, Kind, LinkRefused, MarkerOutcome, MarkerShaped, Message,
    Outcome, PackageStatus, PackageUpdate, PullRequestAction, PullRequestOutcome, Reason, RefusedEntry, Region, Resolved, ResourceOutcome, SkipReason,
    LOCAL_EDIT_DECISIONS, UnrecordedMarker, Version,
)
from krm_merge.outcomes.report import CONFLICTS_LEFT, NOTHING_SELECTED, Report, State

from .schema_check import errors, load_schema

SCHEMA = load_schema()
COMMANDS = ("update", "promote", "run", "conflicts", "resolve", "recover", "diff")

# Words as hostile as the content they come from: table and line separators, quotes, unicode, control characters.
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
paths = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), min_size=1, max_size=20)
counts = st.integers(min_value=0, max_value=10_000)
refs = st.builds(ResourceRef, texts, texts, texts, texts)
maybe_refs = st.none() | refs
severities = st.sampled_from(["error", "warning", "info"])
results = st.builds(
    Result, texts, severities, maybe_refs,
    st.none() | st.builds(Field, texts, st.none() | texts | st.integers(), st.none() | texts),
    st.none() | st.builds(File, paths, counts),
    st.dictionaries(texts, texts, max_size=2),
)
# A marker's values are data (JSON values), a side without the field left out.
json_values = st.recursive(st.none() | st.booleans() | st.integers() | texts,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                           max_leaves=6)
sides = st.dictionaries(st.sampled_from(["local", "upstream", "origin"]), json_values)
markers = st.builds(MarkerOutcome, st.sampled_from(["field", "text"]), paths, counts, paths, paths, sides)

KINDS: dict[Kind, st.SearchStrategy[Outcome]] = {
    Kind.RESOURCE: st.builds(ResourceOutcome, maybe_refs, paths, st.sampled_from(Action), st.sampled_from(Reason), texts),
    Kind.CONFLICT: st.builds(ConflictOutcome, maybe_refs, paths, counts, texts, texts, texts, texts,
                             st.sampled_from(Decision), texts),
    Kind.FILE_CHANGED: st.builds(FileChanged, paths, st.sampled_from(FileAction)),
    Kind.FILE_MERGED: st.builds(FileMerged, paths, st.lists(st.builds(Region, counts, counts), max_size=3).map(tuple),
                                st.sampled_from([Decision.MARKED, Decision.NOT_MERGED])),
    Kind.FILE_KEPT: st.builds(FileKept, paths, st.sampled_from(KeptReason), texts),
    Kind.FILE_SKIPPED: st.builds(FileSkipped, paths, st.sampled_from(SkipReason), texts),
    Kind.LINK_REFUSED: st.builds(LinkRefused, st.sampled_from(["origin", "upstream"]), paths,
                                 st.sampled_from(RefusedEntry)),
    Kind.MARKER_SHAPED: st.builds(MarkerShaped, st.just("upstream"), paths, counts),
    Kind.FIELD_SET: st.builds(FieldSet, paths, counts, counts, maybe_refs, texts, st.none() | texts, texts, texts),
    Kind.MARKER: markers,
    Kind.UNRECORDED_MARKER: st.builds(UnrecordedMarker, markers),
    Kind.RESOLVED: st.builds(Resolved, markers, st.sampled_from(["local", "upstream"])),
    Kind.CONFLICTS_LEFT: st.builds(ConflictsLeft, paths, counts, counts, counts),
    Kind.PULL_REQUEST: st.builds(
        PullRequestOutcome, st.sampled_from(PullRequestAction), texts, texts, texts, texts, st.none() | texts,
        st.none() | counts, st.none() | texts, st.lists(texts, max_size=2).map(tuple), counts, texts,
        st.sampled_from(["", "work tree", "remote", "base", "branch", "commit", "push", "pull request"]), texts),
    Kind.PACKAGE: st.builds(
        PackageUpdate, paths, st.sampled_from(PackageStatus), st.sampled_from([0, 1, 3]),
        st.none() | st.builds(Version, texts, texts), st.none() | st.builds(Version, texts, texts), texts, counts,
        counts, st.none() | st.just(render.report_document(Report("update", "pkg", State.WRITTEN))),
        st.lists(st.builds(ConflictOutcome, maybe_refs, paths, st.just(0), texts, texts, texts, texts,
                           st.sampled_from(sorted(LOCAL_EDIT_DECISIONS, key=lambda d: d.value)), texts),
                 max_size=3).map(tuple)),
    Kind.FORGE_REQUESTS: st.builds(ForgeRequests, texts, texts, counts,
                                   st.floats(0, 1e6, allow_nan=False).map(lambda s: round(s, 1))),
    Kind.RESULT: st.builds(FunctionResult, results),
}
messages = st.builds(Message, results)
outcomes = st.one_of(*KINDS.values(), messages)


def test_every_kind_has_a_generator() -> None:
    """A new kind fails here until the property below renders it too."""
    assert set(KINDS) | {Kind.ERROR, Kind.WARNING, Kind.INFO} == set(Kind)


def reports(items: st.SearchStrategy[list[Outcome]]) -> st.SearchStrategy[Report]:
    def build(command: str, target: str, state: State, found: list[Outcome], subject: str) -> Report:
        report = Report(command, target, state)
        report.extend(found)
        report.subject = subject
        return report

    return st.builds(build, st.sampled_from(COMMANDS), paths, st.sampled_from(State), items, texts)


def expected_exit_code(found: list[Outcome]) -> int:
    if any(o.severity == "error" for o in found):
        return 1
    left = any(isinstance(o, ConflictsLeft) and o.count or isinstance(o, PackageUpdate)
               and (o.status is PackageStatus.CONFLICTED  # a fleet's package conflicted, or lost a local edit
                    or any(e.decision is Decision.UPSTREAM for e in o.edits)) for o in found)
    return CONFLICTS_LEFT if left else 0


@settings(max_examples=examples(400), deadline=None)
@given(reports(st.lists(outcomes, min_size=1, max_size=4)))
def test_every_outcome_renders_in_every_format(report: Report) -> None:
    # stderr: one line per thing said, in order, each naming the program and carrying the result's words
    said = [item for o in report.outcomes for item in words.said(o)]
    lines = render.lines(report)
    # a change the run stopped before its write (a failed run's field sets) is not said as made
    shown = [item for o in report.outcomes if not render.undone(report, o) for item in words.said(o)
             if item.label is not None]
    assert len(lines) == len(shown) + len(render.summary_lines(report))
    for text, item in zip(lines, shown):
        assert text.startswith(f"{report.prog}: ")
        assert (item.shown or item.result.message) in text
    # --results: the same results, and the YAML reads back as them
    found = render.results(report)
    assert found == [item.result for item in said]
    back = yaml.safe_load(render.results_yaml(found)) or {}
    assert back.get("results", []) == [r.to_dict() for r in found]
    # --report json: valid against the published schema, every outcome there with its kind
    document = json.loads(render.report_json(report))
    assert errors(document, SCHEMA) == []
    assert [o["kind"] for o in document["outcomes"]] == [o.kind.value for o in report.outcomes]
    assert document["exitCode"] == report.exit_code == expected_exit_code(report.outcomes)
    # --report markdown: a heading, and each kind under its section
    markdown = render.report_markdown(report)
    assert markdown.startswith("## ")
    for o in report.outcomes:
        assert f"### {_section(o.kind)}\n" in markdown


def _section(kind: Kind) -> str:
    for table_kind, heading, _, _ in render.TABLES:
        if table_kind is kind:
            return heading
    return next(heading for kinds, heading in render.BULLETS if kind in kinds)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(outcomes, max_size=6))
def test_the_exit_code_follows_the_kinds_never_the_words(found: list[Outcome]) -> None:
    """Errors fail (1); conflicts left for a person give 3; the words of a message change nothing."""
    report = Report("update")
    report.extend(found)
    assert report.exit_code == expected_exit_code(found)
    reworded = [o._replace(result=o.result._replace(message="nothing written; error")) if isinstance(o, Message) else o
                for o in found]
    assert Report.exit_code.fget(_with(reworded)) == report.exit_code  # type: ignore[attr-defined]


def _with(found: list[Outcome]) -> Report:
    report = Report("update")
    report.extend(found)
    return report


@given(markers.map(lambda m: [m]) | st.lists(markers, max_size=3))
def test_conflicts_output_json_lists_each_marker(found: list[MarkerOutcome]) -> None:
    listed: list[dict[str, Any]] = json.loads(render.marker_list(found))
    assert [(m["kind"], m["file"], m["line"]) for m in listed] == [(m.type, m.file, m.line) for m in found]
    # values as JSON values (3 is not "3"), a side without the field left out
    assert [{k: v for k, v in m.items() if k in ("local", "upstream", "origin")} for m in listed] == \
        [m.values for m in found]
    assert render.marker_lines(found).count("\n") == len(found)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(KINDS[Kind.PACKAGE] | KINDS[Kind.PULL_REQUEST] | KINDS[Kind.FORGE_REQUESTS] | messages, max_size=5),
       st.builds(FleetScope, texts, texts, counts, st.integers(1, 64), st.just((0,))),
       st.sampled_from([State.WRITTEN, State.DRY_RUN]))
def test_a_fleet_report_renders_as_its_own_document(found: list[Outcome], scope: FleetScope, state: State) -> None:
    """A fleet update's report: the FleetUpdateReport document (valid against the same schema: its pull requests
    and what they asked of the forges among its messages), its totals and exit code from its packages, a Markdown
    row per package, its totals as the last stderr line (with the forge requests and waits, summed)."""
    report = Report("update", "roots", state)
    report.fleet = scope
    report.extend(found)
    document = json.loads(render.report_json(report))
    assert errors(document, SCHEMA) == []
    packages = [o for o in found if isinstance(o, PackageUpdate)]
    assert [p["path"] for p in document["packages"]] == [p.path for p in packages]
    assert document["totals"]["packages"] == len(packages) == sum(document["totals"][s.value] for s in PackageStatus)
    # a run that selected nothing exits 4, unless something else failed (an error of its own: exit 1)
    expected = expected_exit_code(found) or NOTHING_SELECTED if scope.selected == 0 else expected_exit_code(found)
    assert document["exitCode"] == expected and document["dryRun"] is (state is State.DRY_RUN)
    edits = [e for p in packages for e in p.edits]
    assert render.report_markdown(report).count("\n| `") >= len(packages) + len(edits)
    assert render.lines(report)[-1] == f"{report.prog}: {render.fleet_totals(report)}"
    # every local edit lost to upstream or left marked: in the JSON (read back by report merge as it was), and on
    # stderr, the first LOCAL_EDITS_SHOWN of them
    assert [p.edits for p in shard_of("r.json", document).packages] == [p.edits for p in packages]
    named = render.fleet_local_edits(report)
    assert named[1:1 + render.LOCAL_EDITS_SHOWN] == [words.local_edit_text(p.path, e) for p in packages
                                                      for e in p.edits][:render.LOCAL_EDITS_SHOWN]
    assert len(named) == (0 if not edits else 1 + min(len(edits), render.LOCAL_EDITS_SHOWN)
                          + (len(edits) > render.LOCAL_EDITS_SHOWN))
    asked = [o for o in found if isinstance(o, ForgeRequests)]
    if asked:
        assert (f"; {sum(o.requests for o in asked)} forge request(s), {sum(o.waited for o in asked):.1f} s waited "
                "for the forge's request budget") in render.fleet_totals(report)
        assert [m["requests"] for m in document["messages"] if m["kind"] == "forgeRequests"] == \
            [o.requests for o in asked]
    else:
        assert "forge request" not in render.fleet_totals(report)
