"""examples/promote-flux-event: the GitHub Actions job that Flux's ``githubdispatch`` provider starts, replayed.

The workflow's ``run:`` step runs as GitHub's runner would run it (bash, the step's
environment with ``${{ ... }}`` filled in, ``$GITHUB_EVENT_PATH`` the recorded event file,
``$GITHUB_API_URL`` the API), in a clone of the example's repository, against a local git
server and a GitHub-shaped forge.  The one change to the example: the Pipeline's ``url``
names the local server instead of github.com (it must be the remote's repository).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.git_http import GitHttpServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "promote-flux-event"
WORKFLOW = EXAMPLE / "ci" / "github-actions.yaml"
TOKEN = "ghs_ActionsJobToken0042"
BRANCH = "krm-merge/promote/flux-system-podinfo-prod"


def _repo_files() -> dict[str, str]:
    return {str(p.relative_to(EXAMPLE / "repo")): p.read_text() for p in sorted((EXAMPLE / "repo").rglob("*.yaml"))}


@pytest.fixture()
def deploy(tmp_path: Path) -> tuple[GitWorld, GitHttpServer, ForgeServer]:
    world = GitWorld(tmp_path, files=_repo_files())
    server = GitHttpServer(tmp_path / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    pipeline = world.work / "pipelines" / "podinfo.yaml"
    pipeline.write_text(pipeline.read_text().replace("https://github.com/acme/deploy", server.url("acme/deploy")))
    world.git("commit", "--quiet", "-am", "the Pipeline names the local server")
    world.git("push", "--quiet", "origin", "HEAD:main")
    forge = ForgeServer("github", TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    yield world, server, forge
    forge.close()
    server.close()


def _substitute(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        assert match.group(1) in context, f"the replay does not know ${{{{ {match.group(1)} }}}}"
        return context[match.group(1)]
    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, text)


def _replay(world: GitWorld, forge: ForgeServer, event: Path) -> subprocess.CompletedProcess[str]:
    """The job's steps: checkout is the world's clone, setup-python and the pip install are this interpreter's."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    [job] = workflow["jobs"].values()
    context = {"secrets.GITHUB_TOKEN": TOKEN}
    done: subprocess.CompletedProcess[str] | None = None
    for step in job["steps"]:
        if "uses" in step:
            assert step["uses"].split("@")[0] in ("actions/checkout", "actions/setup-python"), step
            continue
        if step["run"].startswith("python -m pip install"):
            continue  # krm-merge is installed here already (this checkout)
        env = {**world.env, "PATH": f"{Path(sys.executable).parent}:{world.env.get('PATH', '')}",
               "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "repository_dispatch", "GITHUB_EVENT_PATH": str(event),
               "GITHUB_API_URL": forge.api, "GITHUB_WORKSPACE": str(world.work),
               **{k: _substitute(v, context) for k, v in step.get("env", {}).items()}}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               _substitute(step["run"], context)],
                              cwd=world.work, env=env, capture_output=True, text=True, timeout=300)
    assert done is not None, "the workflow has no krm-merge step"
    return done


def _dispatch_types() -> list[str]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    on: dict[str, Any] = workflow.get("on", workflow.get(True))  # PyYAML reads the key `on` as True
    return list(on["repository_dispatch"]["types"])


def test_the_recorded_dispatch_starts_the_job_and_it_opens_the_pull_request(
        deploy: tuple[GitWorld, GitHttpServer, ForgeServer]) -> None:
    world, server, forge = deploy
    event = EXAMPLE / "github-event.json"
    assert json.loads(event.read_text())["action"] in _dispatch_types()  # the job runs on this dispatch
    before = (world.work / "apps" / "prod" / "podinfo.yaml").read_bytes()
    done = _replay(world, forge, event)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/pull/1"
    [pull] = forge.pulls
    assert (pull["head"], pull["base"]) == (BRANCH, "main") and pull["labels"] == ["promotion"]
    assert world.remote_git("diff", "--name-only", "main", BRANCH) == "apps/prod/podinfo.yaml"
    after = world.remote_git("show", f"{BRANCH}:apps/prod/podinfo.yaml") + "\n"
    assert after.encode() == before.replace(b"version: 6.4.0 #", b"version: 6.5.4 #")
    assert json.loads((world.work / "promotion.json").read_text())["status"] == "written"
    assert forge.violations == [] and TOKEN not in done.stdout + done.stderr


def test_a_failed_upgrade_passes_the_job_with_nothing_pushed(
        deploy: tuple[GitWorld, GitHttpServer, ForgeServer], tmp_path: Path) -> None:
    world, server, forge = deploy
    body = json.loads((EXAMPLE / "github-event.json").read_text())
    body["client_payload"].update(severity="error", reason="UpgradeFailed")
    event = tmp_path / "event.json"
    event.write_text(json.dumps(body))
    done = _replay(world, forge, event)
    assert done.returncode == 0, done.stderr
    assert "nothing to promote: not a successful upgrade (severity error, reason UpgradeFailed)" in done.stderr
    assert forge.exchanges == [] and world.remote_branch(BRANCH) is None
    assert world.git("status", "--porcelain", "--untracked-files=no") == ""
