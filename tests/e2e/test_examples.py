"""Every example, through the real kpt (exec) and through ``krm-merge run``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_binary

from .catalog import ExampleConfig, check_example, discover, kpt_eval_command

EXAMPLES = [e for e in discover() if e.test_type == "eval"]
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")

pytestmark = pytest.mark.e2e


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not e.skip], ids=lambda e: e.name)
def test_example_through_kpt_exec(example: ExampleConfig, tmp_path: Path) -> None:
    require_binary("kpt")
    require_binary("git")

    def run(pkg: Path) -> subprocess.CompletedProcess[str]:
        cmd = kpt_eval_command(example, pkg, ["--exec", KRM_MERGE, "--truncate-output=false"])
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    check_example(example, tmp_path, run)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not e.skip], ids=lambda e: e.name)
def test_example_through_krm_merge_run(example: ExampleConfig, tmp_path: Path) -> None:
    require_binary("git")

    def run(pkg: Path) -> subprocess.CompletedProcess[str]:
        cmd = [KRM_MERGE, "run", str(pkg)]
        if example.fn_config:
            cmd += ["--fn-config", str(pkg / example.fn_config)]
        if example.args:
            cmd += ["--", *(f"{k}={v}" for k, v in example.args.items())]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    check_example(example, tmp_path, run)
