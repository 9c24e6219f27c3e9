"""The commands shown in README.md and docs/*.md run as written on what the project ships.

A newcomer copies them: a command that fails, or names a file the project does not ship,
is a bug of the docs.  Every ```sh block is read; each command in it either runs (from a
scratch copy of ``examples/``, as from the root of a checkout, exit code 0, no traceback,
and the shipped examples left as they are) or matches one entry of :data:`NOT_RUN`, which
says why.  What the README's commands print is checked in ``test_readme.py``.  Synopses with
placeholders are ```text blocks, and an unlabelled block may not hold a command.
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

import krm_merge
from tests.conftest import require_binary

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
ALL_PAGES = [*PAGES, *sorted((ROOT / "examples").glob("*/README.md"))]
FENCE = re.compile(r"^ *```([a-z]*)\s*$")
COMMAND_NAMES = ("krm-merge", "kpt", "kubectl", "kustomize", "pip", "python", "python3", "pytest", "podman", "git")

# (pattern searched in a command, why the test does not run it)
NOT_RUN: list[tuple[str, str]] = [
    (r"^python3 -m venv|^pip (install|download)", "installs software (CI's setup does: .ci/run)"),
    (r"^(python -m )?pytest\b", "runs a test suite (this suite)"),
    (r"setup-podman|build-image", "installs podman or builds the image (CI does: .ci/run)"),
    (r"^(docker|podman) build\b", "pulls a base image from a registry (CI builds the same Dockerfile the plain way through a local index: INSTALL_FROM=lock tools/build-image.sh)"),
    (r"\bIMAGE\b|podman run|kpt fn doc", "a placeholder for the image or a container run (tests/e2e_image runs these)"),
    (r"^pdoc ", "builds the API reference (tests/api/test_docs.py does, warnings as errors)"),
    (r"^python bench/", "benchmarks take minutes (bench/README.md)"),
    (r"^python tools/gen_schema\.py", "needs the schema wheels downloaded first (network)"),
    (r"https://", "needs the network"),
    (r"git clone --bare \.|file:///tmp/krm-merge\.git", "needs the git checkout itself (a repository with main)"),
    (r"^(kubectl kustomize|kustomize build|PATH=~/bin)", "kustomize's function runner starts containers"),
    (r"^KRM_MERGE_SMPDIFF_RANDOM", "a long randomized differential run"),
]


def _blocks(page: Path) -> list[tuple[str, int, list[str]]]:
    """(language, first line number, lines) of each fenced block of a page."""
    blocks: list[tuple[str, int, list[str]]] = []
    current: tuple[str, int, list[str]] | None = None
    for number, line in enumerate(page.read_text().splitlines(), 1):
        fence = FENCE.match(line)
        if fence is None:
            if current is not None:
                current[2].append(line)
        elif current is None:
            current = (fence.group(1), number, [])
        else:
            blocks.append(current)
            current = None
    return blocks


def _commands(lines: list[str]) -> list[str]:
    """The logical commands of a sh block: continuations joined, comment lines dropped."""
    commands: list[str] = []
    pending = ""
    for line in lines:
        text = line.strip()
        if not pending and (not text or text.startswith("#")):
            continue
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        commands.append(pending + text)
        pending = ""
    return commands


IMAGE = f"localhost/krm-merge:{krm_merge.__version__}"  # the name the docs use; tools/build-image.sh tags it
NEEDS_IMAGE = (r"podman|--image\b", f"needs podman and the image {IMAGE} (tools/build-image.sh)")


def _image_available() -> bool:
    podman = shutil.which("podman")
    if podman is None:
        return False
    return subprocess.run([podman, "image", "exists", IMAGE], capture_output=True, timeout=60).returncode == 0


def _reason_not_run(command: str) -> str | None:
    for pattern, reason in NOT_RUN:
        if re.search(pattern, command):
            return reason
    if re.search(NEEDS_IMAGE[0], command) and not IMAGE_AVAILABLE:
        return NEEDS_IMAGE[1]
    return None


def _sh_blocks() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        for language, number, lines in _blocks(page):
            if language == "sh":
                found.append((f"{page.relative_to(ROOT)}:{number}", _commands(lines)))
    return found


SH_BLOCKS = _sh_blocks()
IMAGE_AVAILABLE = _image_available()


def test_install_is_said_one_way_from_a_checkout() -> None:
    """krm-merge is not on PyPI: `pip install krm-merge` fails; every page installs from a checkout."""
    for page in ALL_PAGES:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            where = f"{page.relative_to(ROOT)}:{number}"
            assert not re.search(r"pip install\s+(-\S+\s+)*krm-merge\b", line), f"{where}: {line}"


def test_commands_are_in_sh_blocks_and_synopses_in_text_blocks() -> None:
    """An unlabelled block holding a command would escape the run below."""
    for page in PAGES:
        for language, number, lines in _blocks(page):
            if language:
                continue
            for line in lines:
                first = line.strip().split(" ", 1)[0]
                assert first not in COMMAND_NAMES, (
                    f"{page.relative_to(ROOT)}:{number}: {line.strip()!r} is a command in an unlabelled block: "
                    "label it sh (run by this test) or text (a synopsis with placeholders)")


def test_every_skipped_command_has_a_reason_that_is_used() -> None:
    commands = [c for _, block in SH_BLOCKS for c in block]
    assert len(commands) >= 20
    for pattern, reason in NOT_RUN:
        assert any(re.search(pattern, c) for c in commands), f"unused exclusion {pattern!r} ({reason})"


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "commands"), SH_BLOCKS, ids=[w for w, _ in SH_BLOCKS])
def test_documented_commands_run_as_written(where: str, commands: list[str], tmp_path: Path) -> None:
    runnable = [c for c in commands if _reason_not_run(c) is None]
    if not runnable:
        pytest.skip("; ".join(sorted({str(_reason_not_run(c)) for c in commands})))
    if any(re.search(r"\bkpt\b", c) for c in runnable):
        require_binary("kpt")
    shutil.copytree(ROOT / "examples", tmp_path / "examples", symlinks=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # One shell per block, in order: a block may `cd` or build on its previous command.
    script = "\n".join(f"echo '$ '{shlex.quote(c)} >&2\n{c}" for c in runnable)
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{where}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, f"{where}:\n{proc.stderr}"
    changed = changed_examples(tmp_path / "examples")
    assert not changed, f"{where} changes the shipped examples (work on a copy, or --dry-run): {changed}"


def changed_examples(copy: Path) -> list[str]:
    """The shipped examples' files that differ in ``copy`` (of ``examples/``) or are gone from it (issue 48:
    a reader who runs the docs' commands in a checkout must not find its examples edited)."""
    shipped = ROOT / "examples"
    return sorted(str(path.relative_to(shipped)) for path in shipped.rglob("*")
                  if path.is_file() and not path.is_symlink() and path.parts[-2] != "__pycache__"
                  and (not (copy / path.relative_to(shipped)).is_file()
                       or (copy / path.relative_to(shipped)).read_bytes() != path.read_bytes()))


def test_no_page_points_to_a_file_outside_the_project() -> None:
    """A newcomer cannot open a maintainer's notes: a page names files of the checkout or links (issue 34)."""
    outside = re.compile(r"`(/[^`\s]+\.md)`")
    found = [(page.name, path) for page in ALL_PAGES for path in outside.findall(page.read_text())]
    assert not found, found
