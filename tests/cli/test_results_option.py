"""``--results FILE`` on every command: kpt's results YAML, the same facts as the stderr lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from krm_merge import cli

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
MARKED = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  prod: "1.0" # {"$promotion": "default:app:prod"}\n'


def _results(argv: list[str], out: Path) -> tuple[int, list[dict[str, object]], str]:
    proc = subprocess.run([KRM_MERGE, *argv, "--results", str(out)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr
    return proc.returncode, yaml.safe_load(out.read_text())["results"], proc.stderr


@pytest.mark.parametrize("name", cli.SUBCOMMANDS)
def test_every_command_has_the_option(name: str) -> None:
    import importlib

    parser = importlib.import_module(f"krm_merge.commands.{name}").parser()
    assert any("--results" in action.option_strings for action in parser._actions)


def test_promote_reports_a_promotion_that_found_nothing_as_an_error(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.yaml").write_text(MARKED)
    code, results, stderr = _results(["promote", str(tmp_path / "pkg"), "--set", "default:app:prod=2.0",
                                      "--set", "default:nope:prod=1"], tmp_path / "r.yaml")
    assert code == 1
    errors = [r for r in results if r["severity"] == "error"]
    assert len(errors) == 1 and "default:nope:prod" in errors[0]["message"] and errors[0]["message"] in stderr


def test_update_reports_conflicts_with_their_file(tmp_path: Path) -> None:
    cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "{}"\n'
    for name, value in (("origin", "1"), ("upstream", "2"), ("local", "3")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cm.yaml").write_text(cm.format(value))
    code, results, _ = _results(["update", str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
                                 "--upstream", str(tmp_path / "upstream")], tmp_path / "r.yaml")
    assert code == 0
    conflicts = [r for r in results if r.get("tags") == {"kind": "conflict"}]  # typed: no message is read
    assert conflicts and conflicts[0]["severity"] == "warning" and conflicts[0]["file"] == {"path": "cm.yaml"}


def test_diff_and_recover_report_errors(tmp_path: Path) -> None:
    code, results, _ = _results(["diff", str(tmp_path / "missing.yaml"), str(tmp_path / "x.yaml")], tmp_path / "d.yaml")
    assert code == 1 and [r["severity"] for r in results] == ["error"]
    code, results, _ = _results(["recover", str(tmp_path / "missing")], tmp_path / "r.yaml")
    assert code == 1 and [r["severity"] for r in results] == ["error"]


@pytest.mark.parametrize("dry_run", [False, True])
def test_update_report_names_every_change_and_conflict(tmp_path: Path, dry_run: bool) -> None:
    import json

    cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "{}"\n'
    for name, value in (("origin", "1"), ("upstream", "2"), ("local", "3")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cm.yaml").write_text(cm.format(value))
    (tmp_path / "upstream" / "new.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n")
    argv = [KRM_MERGE, "update", str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
            "--upstream", str(tmp_path / "upstream"), "--conflicts", "local-wins",
            "--report", "json", str(tmp_path / "r.json"), *(["--dry-run"] if dry_run else [])]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == ("dryRun" if dry_run else "written") and report["exitCode"] == 0
    changed = [o for o in report["outcomes"] if o["kind"] == "fileChanged"]
    assert {"path": "new.yaml", "action": "added"} in [{k: o[k] for k in ("path", "action")} for o in changed]
    [conflict] = [o for o in report["outcomes"] if o["kind"] == "conflict"]
    assert conflict["decision"] == "local" and conflict["field"] == "data.k" and "data.k" in conflict["message"]
    assert (tmp_path / "local" / "new.yaml").exists() is not dry_run
