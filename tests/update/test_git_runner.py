"""krm_merge.gitexec: the one runner of git, its profiles and its one error.

What git is run with is checked through git itself (what it reads of the
caller's configuration, what it says and exits with), not by reading the
runner's dictionaries back.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from krm_merge import gitexec, testing
from krm_merge.krm.results import KrmError

from tests.conftest import require_binary

pytestmark = pytest.mark.usefixtures("git")


@pytest.fixture(scope="module")
def git() -> None:
    require_binary("git")


def _repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True, timeout=60)
    return path


def _callers_config(monkeypatch: pytest.MonkeyPatch, key: str, value: str) -> None:
    """A setting in the caller's environment, as git reads it (GIT_CONFIG_COUNT: no file of the user's touched)."""
    for name, text in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", key), ("GIT_CONFIG_VALUE_0", value)):
        monkeypatch.setenv(name, text)


def test_a_failure_carries_the_exit_status_and_gits_own_words_escaped(tmp_path: Path) -> None:
    repo = str(_repo(tmp_path / "r"))
    git = gitexec.Git(gitexec.SCRATCH, "no git", home=repo)
    with pytest.raises(gitexec.GitError) as quiet:
        git.run(["rev-parse", "--verify", "--quiet", "main^{commit}"], "reading main", cwd=repo)
    assert quiet.value.status == 1 and not quiet.value.timed_out  # told by its exit status: nothing said
    assert quiet.value.message == "reading main: git exited with 1"
    said = tmp_path / "said"  # a git that relays a server's words (git cleans its own, not what it relays)
    said.write_text("#!/bin/sh\nprintf 'remote: \\033]0;title\\007 denied\\nfatal: gone\\n' >&2\nexit 3\n")
    said.chmod(0o755)
    with pytest.raises(gitexec.GitError) as loud:
        gitexec.Git(gitexec.USER, "no git", executable=str(said)).run(["fetch"], "fetching")
    assert loud.value.status == 3
    assert loud.value.message == "fetching: remote: \\x1b]0;title\\x07 denied; fatal: gone"
    assert isinstance(loud.value, KrmError)  # reported as every other error of krm-merge


def test_the_scratch_profile_reads_no_configuration_of_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = str(_repo(tmp_path / "r"))
    _callers_config(monkeypatch, "user.name", "mallory")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    scratch = gitexec.Git(gitexec.SCRATCH, "no git", home=repo).attempt(["config", "--get", "user.name"], cwd=repo)
    assert scratch.status == 1 and scratch.out == b""  # not set: neither the variable nor GIT_DIR reached git
    monkeypatch.delenv("GIT_DIR")
    user = gitexec.Git(gitexec.USER, "no git").attempt(["config", "--get", "user.name"], cwd=repo)
    assert user.status == 0 and user.out == b"mallory\n"  # the user's own repository: their configuration applies


def test_a_repository_named_by_upstream_content_gets_gits_rules_for_urls_not_from_the_user(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r").as_uri()
    named = gitexec.Git(gitexec.UPSTREAM, "no git").attempt(["ls-remote", repo])
    assert named.status == 0  # the user's own package names it: their rules (file:// allowed)
    with pytest.raises(gitexec.GitError) as refused:
        gitexec.Git(gitexec.UPSTREAM_CONTENT, "no git").run(["ls-remote", repo], "listing")
    assert gitexec.refused_transport(refused.value) and refused.value.status == 128


def test_the_refused_transport_is_told_whatever_language_the_user_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """git is translated (LANGUAGE=de: "Übertragungsart 'file' nicht erlaubt"); the words it is told by are git's
    English ones, so the profile that reads them runs git under LC_ALL=C."""
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    repo = _repo(tmp_path / "r").as_uri()
    with pytest.raises(gitexec.GitError) as refused:
        gitexec.Git(gitexec.UPSTREAM_CONTENT, "no git").run(["ls-remote", repo], "listing")
    assert gitexec.refused_transport(refused.value), refused.value.message


def test_no_git_on_path_is_the_callers_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(gitexec.GitError) as missing:
        gitexec.Git(gitexec.USER, "update needs git")
    assert missing.value.message == "update needs git" and missing.value.status is None


def test_a_catalog_example_leaves_the_repository_a_git_hook_points_at_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catalog tests run from a git hook (GIT_DIR and GIT_INDEX_FILE: the user's repository) build each example's
    repository in the scratch profile: nothing is staged or committed in the user's."""
    user = _repo(tmp_path / "user")
    example = tmp_path / "examples" / "ex"
    (example / ".expected").mkdir(parents=True)
    (example / ".expected" / "config.yaml").write_text("testType: eval\n")
    (example / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    monkeypatch.setenv("GIT_DIR", str(user / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user / ".git" / "index"))

    def unchanged(example: testing.Example, pkg: Path, scratch: Path) -> testing.Run:
        return testing.Run(subprocess.CompletedProcess([], 0, "", ""), None)

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    testing.check_example(testing.discover(tmp_path / "examples")[0], scratch, unchanged)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    head = subprocess.run(["git", "-C", str(user), "rev-parse", "--verify", "--quiet", "HEAD"], env=env,
                          capture_output=True, timeout=60)
    staged = subprocess.run(["git", "-C", str(user), "ls-files"], env=env, capture_output=True, text=True, timeout=60)
    assert head.returncode == 1 and staged.stdout == ""  # no commit, nothing staged
