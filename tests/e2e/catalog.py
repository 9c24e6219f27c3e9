"""The kpt-functions-catalog example convention, driven by real tools.

An example is ``examples/<name>/``: a package plus ``.expected/config.yaml``
(``testType``, ``args``, ``fnConfig``, ``exitCode``), ``.expected/diff.patch``
(the expected ``git diff`` after the run) and optionally
``.expected/results.yaml``.  Like kpt's own runner, the package is copied to
a fresh git repository, the command runs twice, and both diffs must equal
the expected one.  ``KPT_E2E_UPDATE_EXPECTED=true`` rewrites ``diff.patch``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@dataclass
class ExampleConfig:
    """``.expected/config.yaml`` of one example."""

    name: str
    path: Path
    test_type: str = "eval"
    args: dict[str, str] = field(default_factory=dict)
    fn_config: str | None = None
    exit_code: int = 0
    skip: bool = False
    raw: dict[str, Any] = field(default_factory=dict)


def discover() -> list[ExampleConfig]:
    """Every example with an ``.expected/config.yaml``."""
    out = []
    for cfg_path in sorted(EXAMPLES.glob("*/.expected/config.yaml")):
        raw = yaml.safe_load(cfg_path.read_text()) or {}
        example = cfg_path.parent.parent
        out.append(
            ExampleConfig(
                name=example.name,
                path=example,
                test_type=raw.get("testType", "eval"),
                args={str(k): str(v) for k, v in (raw.get("args") or {}).items()},
                fn_config=raw.get("fnConfig"),
                exit_code=int(raw.get("exitCode", 0)),
                skip=bool(raw.get("skip", False)),
                raw=raw,
            )
        )
    return out


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def prepare(example: ExampleConfig, tmp: Path) -> Path:
    """Copy the example (without .expected) into a fresh git repository."""
    pkg = tmp / example.name
    shutil.copytree(example.path, pkg, ignore=shutil.ignore_patterns(".expected"))
    git(pkg, "init", "-q")
    git(pkg, "add", "--all")
    git(pkg, "commit", "-q", "-m", "start", "--allow-empty")
    return pkg


def diff_after(pkg: Path) -> str:
    """The change the run made, as ``git diff`` prints it (then committed)."""
    git(pkg, "add", "--all")
    out = git(pkg, "diff", "--cached")
    git(pkg, "commit", "-q", "-m", "run", "--allow-empty")
    return out


def check_example(
    example: ExampleConfig, tmp: Path, run: Callable[[Path], subprocess.CompletedProcess[str]]
) -> None:
    """Run twice; the exit code and the diff must match the expectation both times."""
    pkg = prepare(example, tmp)
    expected_path = example.path / ".expected" / "diff.patch"
    expected = expected_path.read_text() if expected_path.exists() else ""
    first = run(pkg)
    assert first.returncode == example.exit_code, (
        f"exit code {first.returncode}, expected {example.exit_code}\n"
        f"stdout:\n{first.stdout}\nstderr:\n{first.stderr}"
    )
    diff = diff_after(pkg)
    if os.environ.get("KPT_E2E_UPDATE_EXPECTED") == "true":
        if diff:
            expected_path.write_text(diff)
        elif expected_path.exists():
            expected_path.unlink()
        expected = diff
    assert diff == expected, f"first run diff differs:\n{diff}"
    second = run(pkg)
    assert second.returncode == example.exit_code, second.stderr
    again = git(pkg, "diff", "HEAD~1", "HEAD") if diff else ""
    assert again == diff
    assert diff_after(pkg) == "", "second run changed the package again (not idempotent)"


def kpt_eval_command(example: ExampleConfig, pkg: Path, fn: list[str]) -> list[str]:
    """``kpt fn eval`` with this example's config; ``fn`` selects exec or image."""
    cmd = ["kpt", "fn", "eval", str(pkg), *fn]
    if example.fn_config:
        cmd += ["--fn-config", str(pkg / example.fn_config)]
    if example.args:
        cmd += ["--", *(f"{k}={v}" for k, v in example.args.items())]
    return cmd
