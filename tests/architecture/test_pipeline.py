"""The commands are the top of the change pipeline: the layers below never come back into ``commands/``.

``update``, ``promote``, ``resolve`` and a fleet update parse their options into a typed request and make one
call of the change pipeline (``change/pipeline.py``, ``fleet/update.py``); the pull-request stage, the
planners and the fleet's workers are below and receive values, never a function of a command.  Checked
three ways: no module below the commands imports them; each writing command's module holds no work of the
pipeline (no writer, no stage, no closure handed down); and a real run of each, ``--pull-request`` against
the forge stand-ins and a bare remote, traced call by call: no function of ``commands/`` is ever called from
a module below them (a callback handed down would be).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import krm_merge
from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import BRANCH, PROMOTE
from tests.change.test_fleet_pull_request import _fleet
from tests.change.test_update_pull_request import TOKEN as GITLAB_TOKEN
from tests.change.test_promote_push import RELEASE, commit_elsewhere
from tests.change.test_pull_request_race import run_commit_on
from tests.change.test_update_pull_request import _upstream
from tests.git_http import GitHttpServer

PACKAGE = Path(krm_merge.__file__).parent
COMMANDS = PACKAGE / "commands"
ABOVE_THE_COMMANDS = {
    "cli.py": "the command line: it dispatches to a command's main",
    "usage.py": "--help: it builds every command's parser (loaded by cli only for --help)",
}
WRITING_COMMANDS = ("update.py", "promote.py", "resolve.py", "fleet.py")
PIPELINE_ENTRIES = {"run_command", "run_fleet"}
# What a writing command must leave to the layers below it: the one writer, file writes, the change set, the
# pull-request stage and the git side, the fleet's workers, selection and per-package update, the ledger and
# the marker engine.  A command that imports one of them does part of the pipeline itself.
PIPELINE_WORK = ("krm_merge.txn", "krm_merge.files", "krm_merge.krm.pkgio", "krm_merge.change.stage",
                 "krm_merge.change.publish", "krm_merge.fleet.run", "krm_merge.fleet.select",
                 "krm_merge.fleet.versions", "krm_merge.fleet.package", "krm_merge.fleet.pull_requests",
                 "krm_merge.update.ledger", "krm_merge.update.conflicts", "krm_merge.promote.event")


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports (relative imports made absolute), at any depth of the module."""
    package = ".".join(("krm_merge", *path.relative_to(PACKAGE).parent.parts))
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def test_nothing_below_the_commands_imports_them() -> None:
    found = [f"{path.relative_to(PACKAGE)} imports {name}"
             for path in sorted(PACKAGE.rglob("*.py"))
             if COMMANDS not in path.parents and path.relative_to(PACKAGE).as_posix() not in ABOVE_THE_COMMANDS
             for name in _imports(path) if name == "krm_merge.commands" or name.startswith("krm_merge.commands.")]
    assert found == []


@pytest.mark.parametrize("name", WRITING_COMMANDS)
def test_a_writing_command_is_parsing_plus_one_call(name: str) -> None:
    """Its module imports none of the pipeline's work, hands no function of its own down (no lambda or nested
    function outside its parser's building), and calls the pipeline's entry."""
    path = COMMANDS / name
    tree = ast.parse(path.read_text(encoding="utf-8"))
    work = sorted({m for m in _imports(path) for w in PIPELINE_WORK if m == w or m.startswith(w + ".")})
    assert work == [], f"{name} does part of the pipeline itself"
    handed_down = []
    for top in tree.body:
        if not isinstance(top, ast.FunctionDef) or top.name in ("parser", "_arguments"):
            continue
        handed_down += [f"{top.name}:{node.lineno}" for node in ast.walk(top)
                        if node is not top and isinstance(node, (ast.Lambda, ast.FunctionDef))]
    assert handed_down == [], f"{name} makes functions to hand down"
    called = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
              for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert called & PIPELINE_ENTRIES, f"{name} does not call the pipeline"


# --- a real run, traced ----------------------------------------------------------------------------

_PROBE = """\
import os, sys, threading
import krm_merge
package = os.path.dirname(os.path.abspath(krm_merge.__file__)) + os.sep
commands = package + "commands" + os.sep
above = {package + name for name in sys.argv[1].split(",")}
log = os.environ["PIPELINE_TRACE"]

def profile(frame, event, arg):
    if event != "call" or not frame.f_code.co_filename.startswith(commands) or frame.f_back is None:
        return
    caller = frame.f_back.f_code
    where = caller.co_filename
    if where.startswith(package) and not where.startswith(commands) and where not in above:
        with open(log, "a") as out:
            out.write(f"{frame.f_code.co_name} ({frame.f_code.co_filename[len(package):]}) called from "
                      f"{caller.co_name} ({where[len(package):]})\\n")

sys.setprofile(profile)
threading.setprofile(profile)
from krm_merge.cli import main
code = main(sys.argv[2:])
sys.setprofile(None)
sys.exit(code)
"""


def _traced(world: GitWorld, *args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``krm-merge ARGS`` in the world's work tree, every call into ``commands/`` from below it written down."""
    trace = world.tmp / "trace.txt"
    trace.unlink(missing_ok=True)
    result = subprocess.run([sys.executable, "-c", _PROBE, ",".join(ABOVE_THE_COMMANDS), *args],
                            env={**world.env, **env, "PIPELINE_TRACE": str(trace)}, capture_output=True, text=True,
                            cwd=world.work, timeout=600)
    return result, sorted(set(trace.read_text().splitlines())) if trace.exists() else []


@pytest.fixture()
def world(tmp_path: Path) -> GitWorld:
    return GitWorld(tmp_path)


def _gitlab(world: GitWorld) -> tuple[ForgeServer, list[str], dict[str, str]]:
    forge = ForgeServer("gitlab", GITLAB_TOKEN, branch_exists=lambda b: world.remote_branch(b) is not None)
    options = ["--pull-request", "--forge", "gitlab", "--forge-api", forge.api, "--forge-repo", "acme/deploy"]
    return forge, options, {"GITLAB_TOKEN": GITLAB_TOKEN, "XDG_CACHE_HOME": str(world.tmp / "cache")}


def test_update_with_a_pull_request_never_calls_back_into_the_command(world: GitWorld) -> None:
    _upstream(world)
    forge, options, env = _gitlab(world)
    try:
        result, calls = _traced(world, "update", "apps/pkg@v2", "--conflicts", "mark", *options, env=env)
        assert result.returncode == 3, result.stderr  # opened, with the conflict marked
        assert [p["head"] for p in forge.pulls] == ["krm-merge/update/apps/pkg"]
        assert calls == []
        # and the conflict decided on the pull request's branch
        resolved, calls = _traced(world, "resolve", "apps/pkg", "--take", "upstream", *options, env=env)
        assert resolved.returncode == 0, resolved.stderr
        assert forge.pulls[0]["body"].startswith("**No conflict is left**")
        assert calls == []
    finally:
        forge.close()


def test_promote_with_a_pull_request_never_calls_back_into_the_command(world: GitWorld) -> None:
    forge = ForgeServer("github", "ghp_PipelineTraceT0ken000000000",
                        branch_exists=lambda b: world.remote_branch(b) is not None)
    try:
        result, calls = _traced(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                                "--forge", forge.api_kind, "--forge-api", forge.api, "--forge-repo", forge.repo,
                                env={"GITHUB_TOKEN": forge.token, "XDG_CACHE_HOME": str(world.tmp / "cache")})
        assert result.returncode == 0, result.stderr
        assert len(forge.pulls) == 1
        assert calls == []
    finally:
        forge.close()


def test_promote_with_a_push_that_loses_a_race_never_calls_back_into_the_command(world: GitWorld) -> None:
    """``--push`` is a stage of the pipeline too: its commit, its push and the re-plan on the head another writer
    pushed first (the same field, a higher version: the contest said) all run below the command."""
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    server.before_push = lambda: commit_elsewhere(world, RELEASE, world.remote_file("main", RELEASE).replace(
        "6.2.0", "6.2.5") + "\n")
    try:
        result, calls = _traced(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--push", env={})
        assert result.returncode == 0, result.stderr
        assert "6.3.0 stands over 6.2.5 (ours" in result.stderr and "(2 push(es))" in result.stderr
        assert calls == []
    finally:
        server.close()


def test_promote_with_a_pull_request_that_loses_a_race_never_calls_back_into_the_command(world: GitWorld) -> None:
    """The pull request's branch moved under the push (another run's commit): the re-plan on its new head runs
    below the command too, with the plan's own replanner."""
    server = GitHttpServer(world.tmp / "repos", world.env)
    world.git("remote", "set-url", "origin", server.url("acme/deploy.git"))
    forge = ForgeServer("github", "ghp_PipelineTraceT0ken000000000",
                        branch_exists=lambda b: world.remote_branch(b) is not None)
    server.before_push = lambda: run_commit_on(world, BRANCH, "other.txt")
    try:
        result, calls = _traced(world, "promote", str(world.package), *PROMOTE, "--value", "6.3.0", "--pull-request",
                                "--forge", forge.api_kind, "--forge-api", forge.api,
                                env={"GITHUB_TOKEN": forge.token, "XDG_CACHE_HOME": str(world.tmp / "cache")})
        assert result.returncode == 0, result.stderr
        assert "after planning again on 1 newer head(s)" in result.stderr and len(forge.pulls) == 1
        assert calls == []
    finally:
        forge.close()
        server.close()


def test_a_fleet_update_with_pull_requests_never_calls_back_into_the_command(world: GitWorld) -> None:
    spec = _fleet(world)
    forge, options, env = _gitlab(world)
    try:  # two workers: the calls the forked workers make are traced too
        result, calls = _traced(world, "update", "clusters", "--upstream", spec, "--ref", "v2", "--jobs", "2",
                                *options, "--pull-request-per", "package", env=env)
        assert result.returncode == 1, result.stderr  # the broken package failed, the others were put up
        assert len(forge.pulls) == 3
        assert calls == []
    finally:
        forge.close()
