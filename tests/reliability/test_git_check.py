"""A write killed half-way cannot be committed by accident (issue #34.5), with a real git repository.

A promotion of many files is SIGKILLed during its swaps (some files new, some
old), in a package committed to git.  Then ``git add -A`` refuses (the
transaction folder looks like an embedded repository without a commit),
``krm-merge check`` exits 1 naming the package, the plain git hook of
docs/reliability.md refuses ``git commit -a``, and so does the command of the
shipped pre-commit hook (``.pre-commit-hooks.yaml``).  After ``krm-merge
recover`` every one of them passes and the commit holds the whole promotion.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_binary

from .harness import KRM_MERGE, ROOT
from .killing import VALUE, _deployments, strays, tree

FILES = 800
ATTEMPTS = 10  # kills until one lands during the swaps (retried: on a busy machine the timing shifts)


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(KRM_MERGE).parent}{os.pathsep}{os.environ['PATH']}",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "HOME": str(tmp)}


def _git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def _plain_hook() -> str:
    """The plain git hook exactly as docs/reliability.md gives it."""
    doc = (ROOT / "docs" / "reliability.md").read_text()
    blocks = re.findall(r"```text\n(.*?)```", doc, re.S)
    hooks = [textwrap.dedent(b) for b in blocks if ".git/hooks/pre-commit" in b]
    assert len(hooks) == 1, "docs/reliability.md gives one plain pre-commit hook"
    return hooks[0]


def _pre_commit_command() -> list[str]:
    """The command line the pre-commit framework runs for the shipped hook (no file names: pass_filenames false)."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "krm-merge-check")
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    return [*shlex.split(hook["entry"]), *hook.get("args", [])]


def _promote(pkg: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([KRM_MERGE, "promote", str(pkg), "--set", f"default:pipe-0:prod={VALUE}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _kill_during_the_swaps(pkg: Path, env: dict[str, str], before: dict[str, bytes]) -> int:
    """SIGKILL a promotion once some of its files are swapped; how many files changed (0 < n < all)."""
    journal = pkg / ".krm-merge.txn" / "journal"
    first = pkg / sorted(before)[0]  # the transaction swaps in path order
    for _ in range(ATTEMPTS):
        proc = _promote(pkg, env)
        while proc.poll() is None and not (journal.exists() and first.read_bytes() != before[sorted(before)[0]]):
            time.sleep(0.0005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        state = tree(pkg)
        changed = sum(1 for rel, data in before.items() if state.get(rel) != data)
        if journal.exists() and 0 < changed < len(before):
            return changed
        subprocess.run([KRM_MERGE, "recover", str(pkg)], env=env, capture_output=True, timeout=120)
        for rel, data in before.items():  # put the old package back and try again
            (pkg / rel).write_bytes(data)
    pytest.fail(f"no kill of {ATTEMPTS} landed during the swaps")


def test_a_killed_promotion_cannot_be_committed_until_it_is_recovered(tmp_path: Path) -> None:
    require_binary("git")
    env = _env(tmp_path)
    repo = tmp_path / "repo"
    pkg = repo / "apps"
    _deployments(pkg, FILES, marked=True)
    assert _git(repo, env, "init", "-q", ".").returncode == 0
    _git(repo, env, "add", "-A")
    assert _git(repo, env, "commit", "-qm", "apps").returncode == 0
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(_plain_hook())
    hook.chmod(0o755)
    before = tree(pkg)
    head = _git(repo, env, "rev-parse", "HEAD").stdout

    changed = _kill_during_the_swaps(pkg, env, before)
    assert strays(tree(pkg)), "the killed write left its transaction"

    added = _git(repo, env, "add", "-A")
    assert added.returncode != 0 and "does not have a commit checked out" in added.stderr, added.stderr
    assert _git(repo, env, "diff", "--cached", "--name-only").stdout == "", "git staged part of the write"
    checked = subprocess.run([KRM_MERGE, "check", str(repo)], env=env, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 1 and f"{repo}/apps: a write of {FILES} file(s) was interrupted past its commit point" \
        in checked.stderr and f"krm-merge recover {repo}/apps" in checked.stderr, checked.stderr
    committed = _git(repo, env, "commit", "-qam", f"half a promotion ({changed} files)")
    assert committed.returncode != 0 and "was interrupted past its commit point" in committed.stderr, committed.stderr
    assert _git(repo, env, "rev-parse", "HEAD").stdout == head
    framework = subprocess.run(_pre_commit_command(), cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert framework.returncode == 1 and "apps: a write of" in framework.stderr, framework.stderr

    recovered = subprocess.run([KRM_MERGE, "recover", str(pkg)], env=env, capture_output=True, text=True, timeout=120)
    assert recovered.returncode == 0 and "finished an interrupted write" in recovered.stderr, recovered.stderr
    assert not strays(tree(pkg))
    for argv in ([KRM_MERGE, "check", "--quiet", str(repo)], _pre_commit_command()):  # the hooks run it quiet
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout == done.stderr == "", done.stderr
    assert _git(repo, env, "add", "-A").returncode == 0
    assert _git(repo, env, "commit", "-qm", "promotion").returncode == 0  # through the hook
    files = _git(repo, env, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert len(files) == FILES and not [f for f in files if ".krm-merge" in f]
    assert all(VALUE.encode() in data for data in tree(pkg).values())
    assert _git(repo, env, "status", "--porcelain").stdout == ""


def test_a_normal_run_leaves_git_nothing_to_see_but_its_changes(tmp_path: Path) -> None:
    """The lock file and the transaction folder exist only while a command runs (and a dry run makes neither)."""
    require_binary("git")
    env = _env(tmp_path)
    repo = tmp_path / "repo"
    _deployments(repo / "apps", 3, marked=True)
    _git(repo, env, "init", "-q", ".")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-qm", "apps")
    for extra in (["--dry-run"], []):
        done = subprocess.run([KRM_MERGE, "promote", str(repo / "apps"), "--set", f"default:pipe-0:prod={VALUE}",
                               *extra], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        status = _git(repo, env, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()
        assert all(line.startswith(" M ") for line in status) and len(status) == (3 if not extra else 0), status
    assert subprocess.run([KRM_MERGE, "check", str(repo)], env=env, capture_output=True, timeout=60).returncode == 0


def test_check_names_a_command_still_writing_and_a_lock_left_by_a_killed_one(tmp_path: Path) -> None:
    from krm_merge import txn

    pkg = tmp_path / "pkg"
    _deployments(pkg, 2, marked=True)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom krm_merge import txn\n"
                               "with txn.PackageLock(sys.argv[1], 'krm-merge promote'):\n"
                               "    print('locked', flush=True)\n    time.sleep(60)\n", str(pkg)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        running = subprocess.run([KRM_MERGE, "check", str(tmp_path)], capture_output=True, text=True, timeout=60)
        assert running.returncode == 1 and "a krm-merge command is writing it now" in running.stderr
        assert f"process {holder.pid}" in running.stderr
    finally:
        holder.kill()
        holder.wait(timeout=10)
    left = subprocess.run([KRM_MERGE, "check", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert left.returncode == 1 and f"{txn.LOCK_NAME} was left by a krm-merge command that was killed" in left.stderr
    assert subprocess.run([KRM_MERGE, "recover", str(pkg)], capture_output=True, timeout=60).returncode == 0
    assert subprocess.run([KRM_MERGE, "check", str(tmp_path)], capture_output=True, timeout=60).returncode == 0
    missing = subprocess.run([KRM_MERGE, "check", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "is not a directory" in missing.stderr and "Traceback" not in missing.stderr


def test_check_does_not_follow_a_link_out_of_the_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".krm-merge.txn").mkdir(parents=True)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "linked").symlink_to(elsewhere, target_is_directory=True)
    done = subprocess.run([KRM_MERGE, "check", str(repo)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(elsewhere)
