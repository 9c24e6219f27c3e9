"""Running ``krm-merge`` as a user would in the pull-request tests, and what to look at afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld

PROMOTE = ["--pipeline", "flux-system/podinfo", "--from-environment", "dev"]
BRANCH = "krm-merge/promote/flux-system-podinfo-prod"


def krm_merge(world: GitWorld, *args: str, env: dict[str, str] | None = None,
              cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m krm_merge ARGS`` in the world's work tree, with its isolated git (killed after ``timeout`` s)."""
    return subprocess.run([sys.executable, "-m", "krm_merge", *args], env={**world.env, **(env or {})},
                          capture_output=True, text=True, cwd=cwd or world.work, timeout=timeout)


def promote(world: GitWorld, forge: ForgeServer, value: str, *extra: str, token: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``promote apps/podinfo --pipeline ... --value VALUE --pull-request`` against ``forge``.

    Over file:// the repository on the forge cannot be read from the URL: ``--forge-repo`` names it.
    """
    local = world.git("remote", "get-url", "origin").startswith("file:")
    return krm_merge(world, "promote", str(world.package), *PROMOTE, "--value", value, "--pull-request",
                     "--forge", forge.api_kind, "--forge-api", forge.api,
                     *(["--forge-repo", forge.repo] if local else []), *extra,
                     env={**({"GITHUB_TOKEN": token or forge.token} if token != "" else {}), **(env or {})},
                     timeout=timeout)


def snapshot(world: GitWorld) -> dict[str, str]:
    """Everything a run could change locally or remotely: refs, index, objects, work tree status, files."""
    git_dir = world.work / ".git"
    files = {str(p.relative_to(world.work)): p.read_text() for p in world.work.rglob("*")
             if p.is_file() and ".git" not in p.parts}
    return {
        "refs": world.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "remote refs": world.remote_git("for-each-ref", "--format=%(refname) %(objectname)"),
        "index": (git_dir / "index").read_bytes().hex(),
        "objects": world.git("count-objects", "-v"),
        "remote objects": world.remote_git("count-objects", "-v"),
        "status": world.git("status", "--porcelain"),
        "HEAD": world.git("symbolic-ref", "HEAD"),
        "files": repr(sorted(files.items())),
        "git files": repr(sorted(str(p.relative_to(git_dir)) for p in git_dir.rglob("*"))),
    }
