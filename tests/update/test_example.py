"""examples/update-from-local-git: setup.sh, then ``krm-merge update local@v2`` (and kpt's result, when kpt is there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_binary

from .world import read_tree

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "update-from-local-git"
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")

pytestmark = pytest.mark.e2e


def setup_world(dest: Path, env: dict[str, str]) -> None:
    subprocess.run(["sh", str(EXAMPLE / "setup.sh"), str(dest)], env=env, check=True, capture_output=True, timeout=60)


def expected(dest: Path, commit: str) -> dict[str, object]:
    tmp = dest / "expected"
    shutil.copytree(EXAMPLE / "expected", tmp)
    kptfile = tmp / "Kptfile"
    kptfile.write_text(kptfile.read_text().replace("file://DEST/upstream", f"file://{dest}/upstream").replace("COMMIT_OF_V2", commit))
    return read_tree(tmp)


def test_example_update_from_local_git(tmp_path: Path) -> None:
    require_binary("git")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), GIT_CONFIG_GLOBAL="/dev/null", HOME=str(tmp_path))
    dest = tmp_path / "demo"
    setup_world(dest, env)
    proc = subprocess.run([KRM_MERGE, "update", f"{dest}/local@v2"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    commit = subprocess.run(["git", "-C", str(dest / "upstream"), "rev-parse", "v2"], capture_output=True, text=True, check=True).stdout.strip()
    assert read_tree(dest / "local") == expected(dest, commit)
    # comments and layout of the untouched parts are the example's own
    assert (dest / "local" / "service.yaml").read_text() == (EXAMPLE / "expected" / "service.yaml").read_text()
    assert "# renamed locally" in (dest / "local" / "deployment.yaml").read_text()
    lock = yaml.safe_load((dest / "local" / "Kptfile").read_text())["upstreamLock"]["git"]
    assert lock["ref"] == "v2" and lock["commit"] == commit


def test_example_agrees_with_kpt(tmp_path: Path) -> None:
    require_binary("git")
    require_binary("kpt")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), GIT_CONFIG_GLOBAL="/dev/null",
               HOME=str(tmp_path), TMPDIR=str(tmp_path))
    dest = tmp_path / "demo"
    setup_world(dest, env)
    shutil.copytree(dest / "local", dest / "ours")
    kpt = subprocess.run(["kpt", "pkg", "update", "local@v2"], cwd=dest, env=env, capture_output=True, text=True, timeout=120)
    assert kpt.returncode == 0, kpt.stderr
    ours = subprocess.run([KRM_MERGE, "update", f"{dest}/ours@v2"], env=env, capture_output=True, text=True, timeout=60)
    assert ours.returncode == 0, ours.stderr
    theirs = read_tree(dest / "local")
    mine = read_tree(dest / "ours")
    # kpt re-serialises the Kptfile without comments; as data both are the same
    assert mine == theirs


@pytest.mark.parametrize("example", ["update-from-local-git", "update-conflicts-mark", "update-conflict-rules"])
def test_setup_builds_in_the_current_directory_and_never_over_a_world(tmp_path: Path, example: str) -> None:
    """Without DEST, setup.sh builds ./demo where it runs (not in the system temp directory, issue 34 item 7),
    prints its absolute path (the Kptfile's file:// URL needs one), and refuses a second run over it."""
    require_binary("git")
    script = EXAMPLE.parent / example / "setup.sh"
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", HOME=str(tmp_path), TMPDIR=str(tmp_path / "no-such-tmp"))
    first = subprocess.run(["sh", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == str(tmp_path / "demo")
    assert (tmp_path / "demo" / "local" / "Kptfile").is_file()
    assert f"repo: file://{tmp_path}/demo/upstream" in (tmp_path / "demo" / "local" / "Kptfile").read_text()
    before = read_tree(tmp_path / "demo" / "local")
    again = subprocess.run(["sh", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "demo is not empty" in again.stderr
    assert read_tree(tmp_path / "demo" / "local") == before


def test_each_update_example_runs_the_one_setup_template() -> None:
    """The update examples' setup.sh are copies of tools/templates/update-example-setup.sh (each example stays
    runnable when copied out on its own); tools/sync_examples.py --check fails on a copy edited by hand."""
    root = EXAMPLE.parents[1]
    check = subprocess.run([sys.executable, str(root / "tools" / "sync_examples.py"), "--check"],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    assert check.stderr == ""
