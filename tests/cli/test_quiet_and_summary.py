"""``--quiet`` on every command and the one summary line each command ends its stderr with, through the real
``krm-merge`` executable (issue 32, "one command base").

``--quiet`` keeps only errors and warnings on stderr (and ``run``'s function results, as kpt shows them);
without it, every command's last stderr line says what it did.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge import cli
from tests.helpers import locked_kptfile

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "{k}"\n  j: "{j}"\n'
IMAGE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  image: app:1 # {"$imagepolicy": "ns:app"}\n'


def krm_merge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], capture_output=True, text=True, timeout=120)


def _packages(tmp_path: Path, local_k: str) -> tuple[Path, Path, Path]:
    """origin, upstream (k changed to 9) and a local copy (k set to ``local_k``, j changed)."""
    for name, k, j in (("origin", "1", "1"), ("upstream", "9", "1"), ("local", local_k, "x")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cm.yaml").write_text(CM.format(k=k, j=j))
    (tmp_path / "local" / "Kptfile").write_text(locked_kptfile())  # what a conflict ledger is bound to
    return tmp_path / "origin", tmp_path / "upstream", tmp_path / "local"


@pytest.mark.parametrize("command", [c for c in cli.SUBCOMMANDS if c != "fleet"])  # fleet: update's form
def test_every_command_takes_quiet(command: str) -> None:
    done = krm_merge(command, "--help")
    assert done.returncode == 0 and "--quiet" in done.stdout and "-q" in done.stdout, done.stdout


def test_a_quiet_update_says_nothing_but_its_conflicts(tmp_path: Path) -> None:
    origin, upstream, local = _packages(tmp_path, "1")
    loud = krm_merge("update", str(local), "--origin", str(origin), "--upstream", str(upstream), "--dry-run")
    assert loud.returncode == 0 and "dry run: 1 file(s) of" in loud.stderr, loud.stderr
    quiet = krm_merge("update", str(local), "--origin", str(origin), "--upstream", str(upstream), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert 'k: "9"' in (local / "cm.yaml").read_text()
    other = tmp_path / "other"
    other.mkdir()
    (other / "cm.yaml").write_text(CM.format(k="L", j="1"))
    (other / "Kptfile").write_text(locked_kptfile())
    marked = krm_merge("update", str(other), "--origin", str(origin), "--upstream", str(upstream),
                       "--conflicts", "mark", "-q")
    assert marked.returncode == 3
    assert marked.stderr.splitlines() == [
        "krm-merge update: conflict: cm.yaml: ConfigMap/a: data.k: changed locally (1 -> L) and upstream (1 -> 9); "
        "decided: local's value, marked '# krm-merge:conflict'"], marked.stderr


def test_conflicts_and_resolve_end_with_a_summary_unless_quiet(tmp_path: Path) -> None:
    origin, upstream, local = _packages(tmp_path, "L")
    assert krm_merge("update", str(local), "--origin", str(origin), "--upstream", str(upstream),
                     "--conflicts", "mark").returncode == 3
    listed = krm_merge("conflicts", str(local), "--quiet")
    assert listed.returncode == 3 and listed.stderr == "" and "data.k" in listed.stdout, listed.stderr
    resolved = krm_merge("resolve", str(local), "--take", "upstream", "--quiet")
    assert resolved.returncode == 0 and resolved.stderr == "", resolved.stderr
    assert 'k: "9"' in (local / "cm.yaml").read_text()
    none = krm_merge("conflicts", str(local))
    assert none.returncode == 0 and none.stdout == ""
    assert none.stderr.splitlines()[-1] == f"krm-merge conflicts: no conflict left in {local}", none.stderr
    assert krm_merge("conflicts", str(local), "-q").stderr == ""


def test_check_says_nothing_is_pending_in_one_line_unless_quiet(tmp_path: Path) -> None:
    done = krm_merge("check", str(tmp_path))
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == f"krm-merge check: no interrupted or running write in {tmp_path}\n", done.stderr
    quiet = krm_merge("check", "--quiet", str(tmp_path))
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    missing = krm_merge("check", "--quiet", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "is not a directory" in missing.stderr  # errors are said, quiet or not


def test_quiet_promote_and_recover_say_nothing(tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text(IMAGE)
    loud = krm_merge("promote", str(tmp_path), "--image-policy", "ns:app=app:2", "--dry-run")
    assert "krm-merge promote: dry run: image policy ns:app=app:2" in loud.stderr, loud.stderr
    quiet = krm_merge("promote", str(tmp_path), "--image-policy", "ns:app=app:2", "-q")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "app:2" in (tmp_path / "cm.yaml").read_text()
    recovered = krm_merge("recover", str(tmp_path), "--quiet")
    assert recovered.returncode == 0 and recovered.stderr == "", recovered.stderr
    unmatched = krm_merge("promote", str(tmp_path), "--image-policy", "ns:other=app:3", "--quiet")
    assert unmatched.returncode == 1 and "error" in unmatched.stderr, unmatched.stderr
