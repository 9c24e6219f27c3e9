"""The update report: every resource with its outcome and why, every conflict with its field, values and decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krm_merge.commands import update
from tests.outcomes.schema_check import errors, load_schema


def cm(name: str, **data: str) -> str:
    body = "".join(f"  {k}: \"{v}\"\n" for k, v in data.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{body}"


ORIGIN = {
    "taken.yaml": cm("taken", a="1"), "kept.yaml": cm("kept", a="1"), "merged.yaml": cm("merged", a="1", b="1"),
    "gone-locally.yaml": cm("gone-locally", a="1"), "gone-upstream.yaml": cm("gone-upstream", a="1"),
    "kept-deleted.yaml": cm("kept-deleted", a="1"), "same.yaml": cm("same", a="1"), "README.md": "v1\n",
}
LOCAL = {
    **ORIGIN, "kept.yaml": cm("kept", a="2"), "merged.yaml": cm("merged", a="2", b="5"),
    "kept-deleted.yaml": cm("kept-deleted", a="2"), "mine.yaml": cm("mine", a="1"),
}
del LOCAL["gone-locally.yaml"]
UPSTREAM = {
    **ORIGIN, "taken.yaml": cm("taken", a="2"), "merged.yaml": cm("merged", a="1", b="7"),
    "gone-locally.yaml": cm("gone-locally", a="2"), "new.yaml": cm("new", a="1"), "README.md": "v2\n",
}
del UPSTREAM["gone-upstream.yaml"], UPSTREAM["kept-deleted.yaml"]

EXPECTED = {
    ("ConfigMap/taken", "taken.yaml", "taken", "unchangedLocally"),
    ("ConfigMap/kept", "kept.yaml", "kept", "changedLocally"),
    ("ConfigMap/merged", "merged.yaml", "merged", "changedOnBothSides"),
    ("ConfigMap/gone-locally", "gone-locally.yaml", "kept", "deletedLocallyChangedUpstream"),
    ("ConfigMap/gone-upstream", "gone-upstream.yaml", "deleted", "deletedUpstream"),
    ("ConfigMap/kept-deleted", "kept-deleted.yaml", "kept", "deletedUpstreamChangedLocally"),
    ("ConfigMap/same", "same.yaml", "unchanged", "sameAsUpstream"),
    ("ConfigMap/mine", "mine.yaml", "kept", "localOnly"),
    ("ConfigMap/new", "new.yaml", "added", "addedUpstream"),
}


def world(tmp: Path) -> Path:
    for name, tree in (("origin", ORIGIN), ("local", LOCAL), ("upstream", UPSTREAM)):
        (tmp / name).mkdir()
        for rel, text in tree.items():
            (tmp / name / rel).write_text(text)
    return tmp / "local"


def args(tmp: Path, *extra: str) -> list[str]:
    return [str(tmp / "local"), "--origin", str(tmp / "origin"), "--upstream", str(tmp / "upstream"), *extra]


@pytest.mark.parametrize(("policy", "decision", "code"), [
    ("upstream-wins", "upstream", 0), ("local-wins", "local", 0), ("mark", "marked", 3),
])
def test_json_report_names_each_resource_outcome_and_conflict(tmp_path: Path, policy: str, decision: str, code: int,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    world(tmp_path)
    report_path = tmp_path / "report.json"
    assert update.main(args(tmp_path, "--conflicts", policy, "--report", "json", str(report_path))) == code
    report = json.loads(report_path.read_text())
    assert not errors(report, load_schema())
    assert (report["status"], report["exitCode"]) == ("written", code)
    outcomes = report["outcomes"]
    resources = {(f"{r['resource']['kind']}/{r['resource']['name']}", r["file"], r["action"], r["reason"])
                 for r in outcomes if r["kind"] == "resource"}
    assert resources == EXPECTED
    (conflict,) = [o for o in outcomes if o["kind"] == "conflict"]
    assert {k: v for k, v in conflict.items() if k not in ("message", "severity")} == {
        "kind": "conflict", "resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "merged"},
        "file": "merged.yaml", "field": "data.b", "local": "5", "upstream": "7", "origin": "1", "decision": decision,
        "rule": ""}
    assert {"kind": "fileChanged", "severity": "info", "message": "README.md: changed", "path": "README.md",
            "action": "changed"} in outcomes
    err = capsys.readouterr().err
    words = {"upstream": "upstream's value", "local": "local's value", "marked": "local's value, marked '# krm-merge:conflict'"}
    assert ("resources: 1 added; 1 deleted; 4 kept local; 1 merged; 1 taken from upstream; 1 unchanged; "
            f"1 conflict(s): 1 {words[decision]}") in err


def test_markdown_report_lists_the_resources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = world(tmp_path)
    assert update.main(args(tmp_path, "--dry-run", "--report", "markdown", "-")) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"## krm-merge update {pkg}: ")  # the title: the package, what would change
    assert "\n\nDry run: nothing written.\n" in out and "would change" not in out  # the title says the rest
    assert "| ConfigMap/gone-locally | `gone-locally.yaml` | kept local | deleted locally; upstream's change" in out
    assert "| ConfigMap/kept | `kept.yaml` | kept local | changed locally, unchanged upstream |" in out
    assert "--- a/" not in out  # the report took stdout: the dry run's diff is not mixed in
    assert (pkg / "kept.yaml").read_text() == LOCAL["kept.yaml"]  # dry run: nothing written
