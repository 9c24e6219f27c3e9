"""What the reports of ``update`` and ``promote`` say, through the real command line (issue #32's first list).

Each test is one bug a new user met: a report that said "nothing written"
over a written package, a ``--report json -`` that was not JSON, a dry run
mixing its diff into the report on stdout, an upstream change dropped
without a word, a false reason, and a YAML file named by an empty identity.
The commands run as a user runs them (``python -m krm_merge``, its own
process); the documents are read back as a script would read them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.outcomes.schema_check import errors, load_schema
from tests.helpers import locked_kptfile

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: "{value}"\n'
M = '# {"$promotion": "default:podinfo:prod"}'


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "krm_merge", *argv], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def copies(tmp: Path, files: dict[str, tuple[str | None, str | None, str | None]]) -> list[str]:
    """origin/local/upstream folders from ``{rel: (origin, local, upstream)}`` (None: absent); update's arguments."""
    for n, side in enumerate(("origin", "local", "upstream")):
        (tmp / side).mkdir(parents=True)
        for rel, texts in files.items():
            if texts[n] is not None:
                (tmp / side / rel).parent.mkdir(parents=True, exist_ok=True)
                (tmp / side / rel).write_text(texts[n])
    return ["update", str(tmp / "local"), "--origin", str(tmp / "origin"), "--upstream", str(tmp / "upstream")]


def eight_files_one_conflict(tmp: Path) -> list[str]:
    """Seven resources upstream changed, one both changed (data.k): eight files to write, one conflict."""
    files: dict[str, tuple[str | None, str | None, str | None]] = {
        f"cm{i}.yaml": (CM.format(name=f"c{i}", value="1"), CM.format(name=f"c{i}", value="1"),
                        CM.format(name=f"c{i}", value="2")) for i in range(7)}
    files["both.yaml"] = (CM.format(name="both", value="1"), CM.format(name="both", value="5"),
                          CM.format(name="both", value="7"))
    return copies(tmp, files)


def test_a_mark_update_that_wrote_its_files_reports_written(tmp_path: Path) -> None:
    argv = eight_files_one_conflict(tmp_path / "md")
    (tmp_path / "md" / "local" / "Kptfile").write_text(locked_kptfile())  # what the conflict ledger is bound to
    done = cli(*argv, "--conflicts", "mark", "--report", "markdown", str(tmp_path / "r.md"))
    assert done.returncode == 3, done.stderr  # written, with a conflict left to decide
    assert "# krm-merge:conflict" in (tmp_path / "md" / "local" / "both.yaml").read_text()
    local = tmp_path / "md" / "local"
    # the title (a pull request's) names the package and counts (nine files: the eight, and the conflict ledger
    # recording the marker, .krm-merge.conflicts); under it only what the title does not say (issue 48); the
    # locked Kptfile the ledger is bound to counts as a resource kept local
    assert (tmp_path / "r.md").read_text().startswith(
        f"## krm-merge update {local}: 9 file(s) changed, 1 conflict(s)\n\nresources: 1 kept local; 1 merged; ")
    argv = eight_files_one_conflict(tmp_path / "json")
    (tmp_path / "json" / "local" / "Kptfile").write_text(locked_kptfile())
    done = cli(*argv, "--conflicts", "mark", "--report", "json", str(tmp_path / "r.json"))
    assert done.returncode == 3, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["status"], report["exitCode"]) == ("written", 3)
    written = [o["path"] for o in report["outcomes"] if o["kind"] == "fileChanged"]
    assert len(written) == 9 and ".krm-merge.conflicts" in written
    assert report["summary"][0].endswith(": 9 file(s) changed")


def test_report_json_to_stdout_is_only_the_document(tmp_path: Path) -> None:
    argv = eight_files_one_conflict(tmp_path)
    done = cli(*argv, "--report", "json", "-")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # nothing but the document on stdout
    assert errors(report, load_schema()) == []
    assert "updated " in done.stderr and "resources: " in done.stderr  # the person's lines: stderr
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "app.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: 6.2.0 {M}\n")
    done = cli("promote", str(pkg), "--set", "default:podinfo:prod=6.3.0", "--report", "json", "-")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert errors(report, load_schema()) == [] and report["title"].startswith("promote: default/podinfo prod=6.3.0")
    assert "app.yaml:6: data.v: '6.2.0' -> '6.3.0'" in done.stderr


def test_a_dry_run_with_a_markdown_report_on_stdout_prints_the_report_alone(tmp_path: Path) -> None:
    argv = eight_files_one_conflict(tmp_path)
    done = cli(*argv, "--dry-run", "--report", "markdown", "-")
    assert done.returncode == 0, done.stderr
    local = tmp_path / "local"
    assert done.stdout.startswith(f"## krm-merge update {local}: 8 file(s) changed, 1 conflict(s)\n\n"
                                  "Dry run: nothing written.\n\nresources: 1 merged; ")
    assert "--- a/" not in done.stdout and "@@" not in done.stdout  # no diff mixed in
    plain = cli(*argv, "--dry-run")
    assert plain.stdout.startswith("--- a/")  # without a report on stdout the diff is stdout's document
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "app.yaml").write_text(f"v: 6.2.0 {M}\n")
    done = cli("promote", str(pkg), "--set", "default:podinfo:prod=6.3.0", "--dry-run", "--report", "markdown", "-")
    assert done.returncode == 0 and done.stdout.startswith("## promote: ") and "--- a/" not in done.stdout


def test_an_upstream_edit_to_a_file_local_changed_is_named_with_the_flag_that_takes_it(tmp_path: Path) -> None:
    argv = copies(tmp_path, {"cm.yaml": (CM.format(name="a", value="1"),) * 3,
                             "README.md": ("# pkg\n", "# my pkg\n", "# pkg v2\n")})
    done = cli(*argv, "--report", "json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "local" / "README.md").read_text() == "# my pkg\n"  # kpt's rule: local's kept
    assert "kept local: README.md: changed locally and upstream" in done.stderr and "--files merge" in done.stderr
    [kept] = [o for o in json.loads((tmp_path / "r.json").read_text())["outcomes"] if o["kind"] == "fileKept"]
    assert (kept["path"], kept["reason"]) == ("README.md", "changedLocally") and "--files merge" in kept["hint"]


def test_a_krmignored_file_upstream_changed_is_said_ignored_not_deleted_locally(tmp_path: Path) -> None:
    argv = copies(tmp_path, {"cm.yaml": (CM.format(name="a", value="1"),) * 3,
                             "values.yaml": ("replicaCount: 1\n", "replicaCount: 1\n", "replicaCount: 3\n"),
                             ".krmignore": (None, "values.yaml\n", None)})
    done = cli(*argv, "--report", "json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "local" / "values.yaml").read_text() == "replicaCount: 1\n"
    assert "values.yaml: named in local's .krmignore" in done.stderr and "deleted locally" not in done.stderr
    outcomes = json.loads((tmp_path / "r.json").read_text())["outcomes"]
    assert not [o for o in outcomes if o.get("reason") in ("deletedLocally", "deletedLocallyChangedUpstream")]
    [kept] = [o for o in outcomes if o["kind"] == "fileKept"]
    assert (kept["path"], kept["reason"]) == ("values.yaml", "krmignored")


def test_a_yaml_file_that_is_no_resource_is_named_by_its_file(tmp_path: Path) -> None:
    argv = copies(tmp_path, {"values.yaml": ("replicaCount: 1\n", "replicaCount: 5\n", "replicaCount: 3\n")})
    done = cli(*argv, "--report", "json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert ("krm-merge update: conflict: values.yaml: replicaCount: changed locally (1 -> 5) and upstream (1 -> 3)"
            in done.stderr)
    assert "  (" not in done.stderr and ": :" not in done.stderr
    outcomes = json.loads((tmp_path / "r.json").read_text())["outcomes"]
    assert [(o["resource"], o["file"]) for o in outcomes if o["kind"] in ("resource", "conflict")] == [
        (None, "values.yaml"), (None, "values.yaml")]
