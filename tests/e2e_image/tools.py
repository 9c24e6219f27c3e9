"""Thin wrappers around the real binaries the image tests drive."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

# kpt's own per-function timeout is 5 minutes; stay a little above it.
COMMAND_TIMEOUT_S = 330


class ToolMissing(RuntimeError):
    """A binary the image tests need is not on PATH."""


@dataclass(frozen=True)
class Orchestrators:
    """Absolute paths of the external tools."""

    podman: str
    kpt: str
    kubectl: str
    git: str


@dataclass(frozen=True)
class Completed:
    """Outcome of one external command."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """Command, exit code and output, for assertion messages."""
        return (f"$ {' '.join(self.argv)}\nexit {self.returncode}\n"
                f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}")


def find_orchestrators() -> Orchestrators:
    """Locate podman, kpt, kubectl and git or raise ToolMissing."""
    found: dict[str, str] = {}
    for name in ("podman", "kpt", "kubectl", "git"):
        path = shutil.which(name)
        if path is None:
            raise ToolMissing(f"{name} is not on PATH")
        found[name] = path
    return Orchestrators(**found)


def run(argv: Sequence[str], *, cwd: Path | None = None,
        env: Mapping[str, str] | None = None, stdin: str | None = None) -> Completed:
    """Run a command to completion, capturing text output."""
    # Never inherit the terminal: `podman run -i` would wait on it.
    feed = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
    done = subprocess.run(list(argv), cwd=cwd, env=dict(env) if env is not None else None,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                          check=False, **feed)
    return Completed(tuple(argv), done.returncode, done.stdout, done.stderr)


def image_exists(tools: Orchestrators, image: str) -> bool:
    """True when podman has the image locally."""
    return run([tools.podman, "image", "exists", image]).returncode == 0


def kpt_env(extra: Mapping[str, str] | None = None,
            path_prefix: Sequence[Path] = ()) -> dict[str, str]:
    """Environment for kpt: podman runtime, optional PATH prefix and extras."""
    env = dict(os.environ)
    env["KPT_FN_RUNTIME"] = "podman"
    if path_prefix:
        env["PATH"] = os.pathsep.join([*map(str, path_prefix), env.get("PATH", "")])
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class DockerShim:
    """A ``docker`` that forwards to podman and records what ``docker run`` saw."""

    directory: Path
    calls: Path
    stdin_copy: Path
    stdout_copy: Path


def write_docker_shim(directory: Path, podman: str) -> DockerShim:
    """Create ``directory/docker``: logs its arguments, tees run's stdin/stdout, execs podman.

    kustomize always calls ``docker``; there is no Docker engine here.
    """
    directory.mkdir(parents=True, exist_ok=True)
    shim = DockerShim(directory, directory / "calls.log", directory / "stdin.yaml",
                      directory / "stdout.yaml")
    script = directory / "docker"
    script.write_text(
        "#!/bin/bash\n"
        f"printf '%s\\n' \"$*\" >> '{shim.calls}'\n"
        'if [ "$1" = run ]; then\n'
        f"  tee '{shim.stdin_copy}' | '{podman}' \"$@\" | tee '{shim.stdout_copy}'\n"
        "  exit \"${PIPESTATUS[1]}\"\n"
        "fi\n"
        f"exec '{podman}' \"$@\"\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return shim


def git(tools: Orchestrators, repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; return stdout or raise."""
    argv = [tools.git, "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid",
            "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args]
    env = dict(os.environ)
    env["GIT_DIFF_OPTS"] = ""  # the catalog runner clears it for `git diff`
    done = run(argv, cwd=repo, env=env)
    if done.returncode != 0:
        raise RuntimeError(done.describe())
    return done.stdout


def snapshot_package(tools: Orchestrators, pkg: Path) -> str:
    """``git init`` + commit everything; return the commit id."""
    git(tools, pkg, "init", "--quiet")
    git(tools, pkg, "add", "--all")
    git(tools, pkg, "commit", "--quiet", "--allow-empty", "-m", "first")
    return git(tools, pkg, "rev-parse", "HEAD").strip()


def diff_since(tools: Orchestrators, pkg: Path, commit: str) -> str:
    """Commit the working tree and return ``git diff COMMIT HEAD`` (trimmed)."""
    git(tools, pkg, "add", "--all")
    git(tools, pkg, "commit", "--quiet", "--allow-empty", "-m", "after")
    return git(tools, pkg, "diff", commit, "HEAD").strip()
