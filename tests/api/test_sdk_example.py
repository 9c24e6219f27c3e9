"""The sample third-party function, tested the way its author would: ``pytest`` with the plugin.

``examples/sdk-label-deployments`` uses only ``krm_merge.sdk`` and
``krm_merge.testing``.  Its own test module runs its catalog examples through
the real ``kpt fn eval --exec`` (twice) and standalone; here that pytest run is
started as a separate process, so the ``pytest11`` entry point of the installed
package is what loads the plugin.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sdk-label-deployments"

pytestmark = pytest.mark.e2e


def test_sample_function_uses_only_the_public_api() -> None:
    tree = ast.parse((EXAMPLE / "label_deployments.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    krm = {name for name in imported if name and name.startswith("krm_merge")}
    assert krm == {"krm_merge.sdk"}


def test_sample_function_passes_its_catalog_tests_through_kpt(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run(
        # -n 0: one process; the suite around this test already uses every core (pyproject's addopts).
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-rs", "--rootdir", str(EXAMPLE),
         "--basetemp", str(tmp_path / "t"), str(EXAMPLE / "test_label_deployments.py")],
        capture_output=True, text=True, cwd=EXAMPLE, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout and "skipped" not in done.stdout, done.stdout
