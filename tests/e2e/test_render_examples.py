"""The examples that declare krm-merge in their Kptfile pipeline, through ``kpt fn render``.

``testType: render`` examples with ``allowExec: true`` run here with ``--allow-exec`` and the
``krm-merge`` of this interpreter first on ``PATH``, twice (the second render must change
nothing), compared with ``.expected/diff.patch`` and ``results.yaml`` by
:func:`krm_merge.testing.check_example`.  Those naming the image in their Kptfile run in
``tests/e2e_image/test_examples.py`` (podman and the image needed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from krm_merge.testing import Example, Run, check_example, discover
from tests.conftest import require_binary

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.e2e


def _allows_exec(example: Example) -> bool:
    config = yaml.safe_load((example.expected / "config.yaml").read_text()) or {}
    return bool(config.get("allowExec"))


RENDER = [e for e in discover(EXAMPLES) if e.test_type == "render"]
EXEC = [e for e in RENDER if _allows_exec(e)]


def _render(example: Example, pkg: Path, scratch: Path) -> Run:
    results_dir = Path(tempfile.mkdtemp(prefix="results-", dir=scratch))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["kpt", "fn", "render", str(pkg), "--allow-exec", "--truncate-output=false",
                           "--results-dir", str(results_dir)], capture_output=True, text=True, env=env, timeout=300)
    results = yaml.safe_load((results_dir / "results.yaml").read_text()) if (results_dir / "results.yaml").exists() else {}
    return Run(done, [r for item in (results or {}).get("items") or [] for r in item.get("results") or []])


def test_the_pipeline_use_has_examples_for_exec_and_the_image() -> None:
    kptfiles = [(e.path / "Kptfile").read_text() for e in RENDER]
    assert any("- exec: krm-merge" in text for text in kptfiles)
    assert any("- image: localhost/krm-merge:" in text for text in kptfiles)
    modes = {yaml.safe_load((e.path / str(e.fn_config)).read_text())["data"]["mode"] for e in EXEC}
    assert modes >= {"reorder-merge", "promote"}


@pytest.mark.parametrize("example", EXEC, ids=[e.name for e in EXEC])
def test_render_with_exec(example: Example, tmp_path: Path) -> None:
    require_binary("kpt")
    require_binary("git")
    check_example(example, tmp_path, _render)
