"""``--results`` of promote, diff, conflicts, resolve and update are renderings of their typed outcomes, not parsed stderr.

A stderr line (``PROG: LABEL: MESSAGE``) carries a message only; these results
carry what no line does (the resource reference, the field with its old and
new values, the file and document), and both are rendered from the same outcomes.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from krm_merge.commands import conflicts, diff, promote, resolve, update
from krm_merge.krm.results import File, KrmError, Result, failure
from krm_merge.outcomes import render
from krm_merge.outcomes.report import Report
from tests.helpers import LOCK_COMMIT, locked_kptfile

MARKED = ('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n---\n'
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n'
          'data:\n  prod: "1.0" # {"$promotion": "default:app:prod"}\n')
CONFLICT = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 5  # krm-merge:conflict upstream=3 origin=2\n"


def _call(main: Callable[[list[str]], int], argv: list[str], results: Path) -> tuple[int, list[dict[str, Any]], str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*argv, "--results", str(results)])
    return code, yaml.safe_load(results.read_text())["results"], err.getvalue()


def test_promote_results_name_the_resource_field_and_file_of_each_change(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.yaml").write_text(MARKED)
    code, results, _ = _call(promote.main, [str(tmp_path / "pkg"), "--set", "default:app:prod=2.0"], tmp_path / "r.yaml")
    assert code == 0
    assert results == [{
        "message": "a.yaml:12: data.prod: '1.0' -> '2.0' (set by {\"$promotion\": \"default:app:prod\"})",
        "severity": "info",
        "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "namespace": "ns"},
        "field": {"path": "data.prod", "currentValue": "1.0", "proposedValue": "2.0"},
        "file": {"path": "a.yaml", "index": 1}, "tags": {"kind": "fieldSet"},
    }]


def test_promote_warnings_carry_their_file_and_stderr_renders_the_same_list(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.yaml").write_bytes(b'a: "\xff" # "$promotion"\n')
    (tmp_path / "pkg" / "a.yaml").write_text(MARKED)
    code, results, err = _call(promote.main, [str(tmp_path / "pkg"), "--set", "default:app:prod=2.0", "--skip-unreadable"],
                               tmp_path / "r.yaml")
    assert code == 0
    warning = next(r for r in results if r["severity"] == "warning")
    assert warning["file"] == {"path": "bad.yaml"} and "not UTF-8" in warning["message"]
    assert f"krm-merge promote: warning: {warning['message']}\n" in err


def test_promote_failure_is_one_error_result_and_one_line(tmp_path: Path) -> None:
    code, results, err = _call(promote.main, [str(tmp_path / "missing"), "--set", "default:app:prod=2.0"],
                               tmp_path / "r.yaml")
    assert code == 1 and [r["severity"] for r in results] == ["error"]
    assert err == f"krm-merge promote: error: {results[0]['message']}\n"


def test_diff_conflict_result_names_resource_field_and_an_input_error_its_file(tmp_path: Path) -> None:
    obj = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: n\ndata:\n  k: {}\n"
    for name, value in (("o", "1"), ("m", "2"), ("c", "3")):
        (tmp_path / f"{name}.yaml").write_text(obj.format(value))
    code, results, err = _call(diff.main, [str(tmp_path / "o.yaml"), str(tmp_path / "m.yaml"), "--current",
                                           str(tmp_path / "c.yaml")], tmp_path / "r.yaml")
    assert code == 1 and len(results) == 1
    assert results[0]["resourceRef"] == {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "namespace": "n"}
    assert results[0]["field"] == {"path": "data.k"}
    assert err == f"krm-merge diff: error: {results[0]['message']}\n"
    code, results, _ = _call(diff.main, [str(tmp_path / "nope.yaml"), str(tmp_path / "m.yaml")], tmp_path / "r.yaml")
    assert code == 1 and results[0]["file"] == {"path": str(tmp_path / "nope.yaml")}


def test_conflicts_and_resolve_report_each_marker_with_resource_field_and_file(tmp_path: Path) -> None:
    from krm_merge.krm.results import ResourceRef
    from krm_merge.update import ledger

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "Kptfile").write_text(locked_kptfile("pkg"))
    (tmp_path / "pkg" / "d.yaml").write_text(CONFLICT)
    (tmp_path / "pkg" / ledger.LEDGER_NAME).write_bytes(ledger.encode([ledger.Entry(  # as the update records it
        "field", "d.yaml", ResourceRef("apps/v1", "Deployment", "d"), "spec.replicas", ("spec", "replicas"), 5, 3, 2)],
        LOCK_COMMIT))
    code, results, _ = _call(conflicts.main, [str(tmp_path / "pkg")], tmp_path / "r.yaml")
    assert code == conflicts.CONFLICTS_LEFT
    marker = results[0]
    assert marker["severity"] == "warning" and marker["file"] == {"path": "d.yaml"}
    assert marker["resourceRef"]["kind"] == "Deployment" and marker["resourceRef"]["name"] == "d"
    assert marker["field"] == {"path": "spec.replicas", "currentValue": "5", "proposedValue": "3"}
    code, results, _ = _call(resolve.main, [str(tmp_path / "pkg"), "--take", "upstream"], tmp_path / "r.yaml")
    assert code == 0 and results[0]["field"] == {"path": "spec.replicas"} and results[0]["file"] == {"path": "d.yaml"}
    assert "replicas: 3" in (tmp_path / "pkg" / "d.yaml").read_text()


def test_guard_turns_an_os_error_into_one_result_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    report = Report("test")

    def body() -> None:
        raise FileNotFoundError(2, "No such file or directory", "x.yaml")

    report.guard(body)
    assert render.finish(report) == 1
    assert render.results(report) == [Result("x.yaml: No such file or directory", "error", file=File("x.yaml"))]
    assert capsys.readouterr().err == "krm-merge test: error: x.yaml: No such file or directory\n"


def _update_copies(tmp_path: Path, values: dict[str, str], extra: dict[str, dict[str, str]] | None = None) -> list[str]:
    cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  k: "{}"\n'
    for name, value in values.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "cm.yaml").write_text(cm.format(value))
        for rel, text in (extra or {}).get(name, {}).items():
            (tmp_path / name / rel).write_text(text)
    return [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream")]


@pytest.mark.parametrize("policy, severity", [("upstream-wins", "warning"), ("local-wins", "info")])
def test_update_conflict_result_names_resource_field_values_and_file(tmp_path: Path, policy: str, severity: str) -> None:
    argv = _update_copies(tmp_path, {"origin": "1", "upstream": "2", "local": "3"})
    code, results, err = _call(update.main, [*argv, "--conflicts", policy], tmp_path / "r.yaml")
    assert code == 0
    [conflict] = results
    assert conflict["severity"] == severity and conflict["message"].startswith("cm.yaml: ConfigMap/ns/a: data.k:")
    assert conflict["resourceRef"] == {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "namespace": "ns"}
    assert conflict["field"] == {"path": "data.k", "currentValue": "3", "proposedValue": "2"}
    assert conflict["file"] == {"path": "cm.yaml"}
    assert err.splitlines()[0] == f"krm-merge update: conflict: {conflict['message']}"  # the same outcome rendered


def test_update_under_conflicts_fail_reports_errors_and_writes_nothing(tmp_path: Path) -> None:
    argv = _update_copies(tmp_path, {"origin": "1", "upstream": "2", "local": "3"})
    code, results, err = _call(update.main, [*argv, "--conflicts", "fail"], tmp_path / "r.yaml")
    assert code == 1 and [r["severity"] for r in results] == ["error"]
    assert results[0]["field"]["path"] == "data.k"
    assert err.splitlines() == [f"krm-merge update: conflict: {results[0]['message']}",
                                "krm-merge update: 1 conflicting field(s); nothing written"]
    assert 'k: "3"' in (tmp_path / "local" / "cm.yaml").read_text()


def test_update_file_results_carry_their_file_and_a_failure_is_one_error(tmp_path: Path) -> None:
    readme = {"origin": "a\nb\nc\nd\ne\n", "upstream": "a\nb\nc\nd\nE\n", "local": "A\nb\nc\nd\ne\n"}
    argv = _update_copies(tmp_path, {"origin": "1", "upstream": "1", "local": "1"},
                          {name: {"README.md": text} for name, text in readme.items()})
    code, results, err = _call(update.main, [*argv, "--files", "merge"], tmp_path / "r.yaml")
    assert code == 0 and [(r["severity"], r["file"]) for r in results] == [("info", {"path": "README.md"})]
    assert err.splitlines()[0] == f"krm-merge update: merged: {results[0]['message']}"
    assert results[0]["message"].startswith("README.md: changes of local and upstream combined")
    code, results, err = _call(update.main, [str(tmp_path / "nope"), "--origin", str(tmp_path / "origin"),
                                             "--upstream", str(tmp_path / "upstream")], tmp_path / "r.yaml")
    assert code == 1 and [r["severity"] for r in results] == ["error"]
    assert err == f"krm-merge update: error: {results[0]['message']}\n"


@pytest.mark.parametrize("error", [FileNotFoundError(2, "No such file or directory", "a.yaml"),
                                   KrmError("bad item", file=File("a.yaml"))])
def test_the_sdk_directory_run_words_what_stops_it_as_the_commands_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception) -> None:
    """One except block: the SDK's run of a directory and every command turn an error into the same line."""
    from krm_merge.krm import package
    from krm_merge.sdk._directory import run_directory

    def fail(*_args: object, **_kw: object) -> None:
        raise error

    monkeypatch.setattr(package, "read_package", fail)
    code = run_directory(lambda rl: None, str(tmp_path), name="fn", label="krm-merge run")
    expected = f"krm-merge run: error: {failure(error).message}"  # type: ignore[arg-type]
    assert code == 1 and capsys.readouterr().err == expected + "\n"


def test_update_kept_local_note_names_the_resource_and_its_file(tmp_path: Path) -> None:
    argv = _update_copies(tmp_path, {"origin": "1", "upstream": "1", "local": "1"},
                          {"origin": {"gone.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"},
                           "local": {"gone.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ntype: mine\n"}})
    code, results, err = _call(update.main, argv, tmp_path / "r.yaml")
    assert code == 0 and [r["severity"] for r in results] == ["warning"]
    assert results[0]["resourceRef"] == {"apiVersion": "v1", "kind": "Secret", "name": "s"}
    assert results[0]["file"] == {"path": "gone.yaml"} and "modified locally: kept" in results[0]["message"]
    assert err.splitlines()[0] == f"krm-merge update: warning: {results[0]['message']}"
