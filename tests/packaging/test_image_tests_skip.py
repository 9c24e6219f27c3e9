"""The README's test command passes where podman is installed and the image was never built (issue 48).

A fake ``podman`` (and kpt, kubectl) first on PATH answers ``podman image exists`` with "no":
outside CI the image tests are skipped, with the reason printed in the summary; with
``CI=true`` (what ``.ci/run`` exports) the same run fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e_image.conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
MISSING = "image localhost/krm-merge:dev is not in podman's local storage"


def _fake_tools(folder: Path) -> Path:
    """podman that has no image (``image exists`` exits 1), and kpt and kubectl that do nothing."""
    folder.mkdir()
    for name, body in (("podman", 'if [ "$1 $2" = "image exists" ]; then exit 1; fi\necho "fake podman $*"\n'),
                       ("kpt", "exit 0\n"), ("kubectl", "exit 0\n")):
        script = folder / name
        script.write_text(f"#!/bin/sh\n{body}")
        script.chmod(0o755)
    return folder


def _image_tests(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "KRM_MERGE_IMAGE", "KRM_MERGE_FLEET_IMAGE")}
    env["PATH"] = f"{_fake_tools(tmp_path / 'bin')}{os.pathsep}{env.get('PATH', '')}"
    if ci is not None:
        env["CI"] = ci
    # -n 0: one process; the suite around this test already uses every core (pyproject's addopts).
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "tests/e2e_image/test_image_properties.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_without_the_image_the_image_tests_skip_with_the_reason_shown(tmp_path: Path) -> None:
    done = _image_tests(tmp_path, ci=None)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " skipped" in done.stdout and " passed" not in done.stdout and " error" not in done.stdout
    assert re.search(rf"^image tests: \d+ skipped: {re.escape(MISSING)}", done.stdout, re.M), done.stdout[-3000:]


def test_without_the_image_the_image_tests_fail_on_ci(tmp_path: Path) -> None:
    done = _image_tests(tmp_path, ci="true")
    assert done.returncode == 1, done.stdout[-3000:]
    assert MISSING in done.stdout and "CI=true" in done.stdout


@pytest.mark.parametrize(("on_ci", "fail"), [(False, False), (True, True)])
def test_the_decision_is_skip_locally_and_fail_on_ci(on_ci: bool, fail: bool) -> None:
    decision = unavailable("kpt is not on PATH", on_ci=on_ci)
    assert decision.fail is fail and decision.reason.startswith("kpt is not on PATH")
