"""``krm-merge run DIR``: kpt fn source/sink without kpt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

KRM_MERGE = [sys.executable, "-m", "krm_merge", "run"]

MULTI = """\
# a file with three documents
apiVersion: v1
kind: ConfigMap
metadata:
  name: one
data:
  a: "1"
---   # second
apiVersion: v1
kind: ConfigMap
metadata:
  name: two # target
data:
  a: "2"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: three
"""
PATCH = "patch=apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata:\n  b: added\n"


def make_pkg(tmp: Path) -> Path:
    pkg = tmp / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "multi.yaml").write_text(MULTI)
    (pkg / "sub" / "crlf.yaml").write_bytes(b"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\n")
    (pkg / "notes.txt").write_text("not yaml: [")
    (pkg / ".hidden.yaml").write_text("not: [yaml")
    return pkg


def test_only_the_changed_document_changes(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    crlf_before = (pkg / "sub" / "crlf.yaml").read_bytes()
    mtime = os.stat(pkg / "sub" / "crlf.yaml").st_mtime_ns
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    after = (pkg / "multi.yaml").read_text()
    assert after == MULTI.replace('  a: "2"\n', '  a: "2"\n  b: added\n')
    assert (pkg / "sub" / "crlf.yaml").read_bytes() == crlf_before
    assert os.stat(pkg / "sub" / "crlf.yaml").st_mtime_ns == mtime


def test_crlf_file_keeps_crlf_when_changed(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    patch = "patch=apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: crlf\ndata:\n  k: v\n"
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", patch], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    raw = (pkg / "sub" / "crlf.yaml").read_bytes()
    assert raw == b"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  k: v\r\n"


def test_dry_run_prints_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--dry-run", "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "+  b: added" in proc.stdout and "--- a/multi.yaml" in proc.stdout
    assert (pkg / "multi.yaml").read_text() == MULTI


def test_errors_write_nothing_and_exit_1(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    bad = "patch=apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nope\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata:\n  b: x\n"
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", bad], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "matches no item" in proc.stderr and "Traceback" not in proc.stderr
    assert (pkg / "multi.yaml").read_text() == MULTI


def test_fn_config_file_and_results_file(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    cfg = tmp_path / "fn.yaml"
    cfg.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                   "data": {"mode": "reorder-merge", "patch": PATCH.split("=", 1)[1]}}))
    results = tmp_path / "results.yaml"
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--fn-config", str(cfg), "--results", str(results)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "b: added" in (pkg / "multi.yaml").read_text()
    assert yaml.safe_load(results.read_text()) == {"results": []}


def test_invalid_yaml_file_is_a_one_line_error(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    (pkg / "broken.yaml").write_text("a: [\n")
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "broken.yaml" in proc.stderr and "Traceback" not in proc.stderr
    assert (pkg / "multi.yaml").read_text() == MULTI


def test_broken_value_below_a_readable_header_is_refused(tmp_path: Path) -> None:
    """The header scan alone would pass this file on; the whole file must be valid YAML."""
    pkg = make_pkg(tmp_path)
    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a: [1, 2\n  b: x: y\n"
    (pkg / "sub" / "broken.yaml").write_text("# lead\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                             "  name: fine\n---\n" + broken)
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "error: sub/broken.yaml is not valid YAML at line 14" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (pkg / "multi.yaml").read_text() == MULTI


def test_a_successful_run_says_what_it_changed_in_one_line(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    (pkg / "list.yaml").write_text("- op: add\n  path: /x\n  value: 1\n")  # one info result, no warning
    args = [*KRM_MERGE, str(pkg)]
    dry = subprocess.run([*args, "--dry-run", "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines()[-1] == (
        "krm-merge run: 1 file would change (1 item), 0 warnings; nothing written (dry run)")
    proc = subprocess.run([*args, "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "krm-merge run: 1 file changed (1 item), 0 warnings"
    again = subprocess.run([*args, "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert again.stderr.splitlines()[-1] == "krm-merge run: 0 files changed (0 items), 0 warnings"
    quiet = subprocess.run([*args, "--quiet", "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert quiet.returncode == 0 and "files changed" not in quiet.stderr and "[info]" in quiet.stderr


def test_summary_counts_warnings(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    (pkg / "dup.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: x\n  a: y\n")
    patch = "patch=apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  b: z\n"
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", patch], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "[warning]" in proc.stderr and proc.stderr.splitlines()[-1].endswith("(1 item), 1 warning")


def test_dry_run_writes_the_results_file_as_its_help_says(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    results = tmp_path / "results.yaml"
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--dry-run", "--results", str(results), "--", "mode=reorder-merge",
                           PATCH], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (pkg / "multi.yaml").read_text() == MULTI and yaml.safe_load(results.read_text()) == {"results": []}
    helped = subprocess.run([*KRM_MERGE, "--help"], capture_output=True, text=True)
    assert "(a --results FILE is still written)" in " ".join(helped.stdout.split())


def test_content_after_a_separator_is_checked_too(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    (pkg / "sep.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sep\n--- {a: [}\n")
    proc = subprocess.run([*KRM_MERGE, str(pkg), "--", "mode=reorder-merge", PATCH], capture_output=True, text=True)
    assert proc.returncode == 1 and "sep.yaml is not valid YAML at line 5" in proc.stderr, proc.stderr


def test_small_valid_packages_are_checked_without_loading_pyyaml(tmp_path: Path) -> None:
    """PyYAML's import would cost a small run more than the check: the fast reader checks small files."""
    pkg = make_pkg(tmp_path)
    code = ("import sys\nfrom krm_merge.krm.package import read_package\n"
            f"read_package({str(pkg)!r})\nprint('yaml' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


def test_missing_directory_and_bad_args(tmp_path: Path) -> None:
    proc = subprocess.run([*KRM_MERGE, str(tmp_path / "nope"), "--", "mode=promote"], capture_output=True, text=True)
    assert proc.returncode == 1 and "not a directory" in proc.stderr
    proc = subprocess.run([*KRM_MERGE, str(tmp_path), "--", "novalue"], capture_output=True, text=True)
    assert proc.returncode == 1 and "key=value" in proc.stderr
