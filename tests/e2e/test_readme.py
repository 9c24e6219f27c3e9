"""README.md is the front door (issue 48): short, and every command on it prints what it shows.

A newcomer reads it in five minutes and copies its commands.  Each ```sh block whose commands
run here (``test_doc_commands.NOT_RUN`` says which do not: installs, the test suite) is followed
by a ```text block, the output it shows; the commands are run as ``test_doc_commands`` runs them
(a scratch copy of ``examples/`` as from the root of a checkout) and print that output, standard
output then standard error, kpt's timings aside.  The set-up and test-suite commands are the
ones CI runs (``.ci/run``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_binary

from .test_doc_commands import _blocks, _commands, _reason_not_run, changed_examples

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# kpt prints how long a function took: `[PASS] "krm-merge" in 300ms`
DURATION = re.compile(r"\bin \d+(?:\.\d+)?(?:ms|s|m\d+s)\b")


def shown_commands() -> list[tuple[int, list[str], str | None]]:
    """(line, the block's commands that run here, the output block after it or None) of each README sh block."""
    blocks = _blocks(README)
    found = []
    for i, (language, number, lines) in enumerate(blocks):
        if language != "sh":
            continue
        runnable = [c for c in _commands(lines) if _reason_not_run(c) is None]
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        text = README.read_text().splitlines()
        between = text[number + len(lines) + 1:after[1] - 1] if after else []  # the lines between the two fences
        output = "\n".join(after[2]) + "\n" if after and after[0] == "text" and not any(s.strip() for s in between) \
            else None
        found.append((number, runnable, output))
    return found


SHOWN = shown_commands()


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) < 200, len(lines)
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections[0] == "Start here" and sections[-1] == "Everything else", sections
    for job in ("Update a package", "Promote a release", "Run it as a KRM function", "Use the Python API"):
        assert any(s.startswith(job) for s in sections), job


def test_each_job_shows_a_command_with_its_output_and_links_its_doc() -> None:
    text = README.read_text()
    for section in re.split(r"^## ", text, flags=re.M)[2:-1]:  # the jobs: after "Start here", before the rest
        title = section.splitlines()[0]
        assert re.search(r"\]\(docs/[\w.-]+\.md\)", section), f"{title}: no link to its doc"
        assert "```sh\n" in section and "```text\n" in section, f"{title}: no command with its output"


def test_every_command_that_runs_here_shows_its_output() -> None:
    assert len([s for s in SHOWN if s[1]]) >= 5
    for number, runnable, output in SHOWN:
        assert not runnable or output is not None, f"README.md:{number}: a command without the output it prints"


@pytest.mark.e2e
@pytest.mark.parametrize(("number", "commands", "output"), [s for s in SHOWN if s[1]],
                         ids=[f"README.md:{s[0]}" for s in SHOWN if s[1]])
def test_the_command_prints_what_the_readme_shows(number: int, commands: list[str], output: str,
                                                 tmp_path: Path) -> None:
    if any(re.search(r"\bkpt\b", c) for c in commands):
        require_binary("kpt")
    require_binary("git")
    shutil.copytree(ROOT / "examples", tmp_path / "examples", symlinks=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "TMPDIR": str(tmp_path)}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(commands)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"README.md:{number}:\n{done.stdout}\n{done.stderr}"
    printed = done.stdout + done.stderr
    assert DURATION.sub("in …", printed) == DURATION.sub("in …", output), f"README.md:{number}"
    assert not changed_examples(tmp_path / "examples"), f"README.md:{number} changes the shipped examples"


def test_the_set_up_and_the_test_suite_are_what_ci_runs() -> None:
    """The two commands a contributor starts with, as .ci/run runs them (it also checks the quick start's output)."""
    ci = (ROOT / ".ci" / "run").read_text()
    start = next(lines for language, _, lines in _blocks(README) if language == "sh")
    setup, run = start
    assert "pip install -r requirements/lock-runtime.txt" in setup and run in ci.replace("\\\n   ", "")
    suite = next(lines for language, _, lines in _blocks(README) if language == "sh" and "pytest" in " ".join(lines))
    assert suite[0].endswith("python -m pytest") and "pip install -q -r requirements/lock.txt" in ci
    assert re.search(r"^python -m pytest -q -p no:cacheprovider$", ci, re.M)
    assert shlex.split(run)[0] == "krm-merge" and "--dry-run" in run  # the quick start changes nothing


def test_the_test_command_runs_on_every_core() -> None:
    """The README's `python -m pytest`, as typed, spreads the tests over worker processes (CI's 30 minutes)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST_"))}
    env["PYTEST_XDIST_AUTO_NUM_WORKERS"] = "2"  # what `-n auto` finds on CI's 2 cores, on any machine
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/packaging/test_locks.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^created: 2/2 workers$", done.stdout, re.M), done.stdout[-3000:]


def test_the_api_example_is_the_shipped_command() -> None:
    fragment = next("\n".join(lines) + "\n" for language, _, lines in _blocks(README) if language == "python")
    assert fragment in (ROOT / "examples" / "sdk-patch-file" / "patch_file.py").read_text()
