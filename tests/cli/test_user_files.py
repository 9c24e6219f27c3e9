"""What the user hands a command is read strictly (issue 43), through the real executable.

A size limit in the environment that is no number is refused by name.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
HANG_GUARD_S = 60  # each run takes well under a second; a FIFO read used to wait forever
MEMORY_CEILING = 1536 << 20  # address space of each child: far above what it takes, far below the machine's
CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "1"\n'
REPORT = {"apiVersion": "report.krm-merge.dev/v1", "kind": "FleetUpdateReport", "upstream": "u", "ref": "v1",
          "selected": 0, "dryRun": False, "shards": {"count": 1, "reported": [0]}, "packages": []}


def _ceiling() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))


def krm_merge(*args: str, cwd: Path, stdin: int | None = None, env: dict[str, str] | None = None,
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], cwd=cwd, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=HANG_GUARD_S, preexec_fn=_ceiling,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A package ``pkg/`` (one ConfigMap), a fleet report ``ok.json``, a FIFO ``fifo``, a link ``zero`` to
    ``/dev/zero`` and an empty folder ``folder``."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "cm.yaml").write_text(CM)
    (tmp_path / "cm.yaml").write_text(CM)
    (tmp_path / "ok.json").write_text(json.dumps(REPORT))
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "folder").mkdir()
    return tmp_path


@pytest.mark.parametrize("variable", ["KRM_MERGE_MAX_INPUT_MB", "KRM_MERGE_MAX_ALIAS_MB"])
@pytest.mark.parametrize("value", ["1e400", "abc", "\u0665", "-1", " 1", "9" * 5000])
def test_a_size_limit_that_is_not_a_number_is_refused_by_name(files: Path, variable: str, value: str) -> None:
    """A limit set to something that is no number was silently the default (or an OverflowError); now one error
    naming the variable and the value (cut when long)."""
    (files / "aliased.yaml").write_text(CM + "  y: &v value\n  z: *v\n")  # the alias bound is read with an alias
    done = krm_merge("diff", "aliased.yaml", "cm.yaml", cwd=files, env={variable: value})
    assert done.returncode == 1, done.stderr
    assert f"{variable}: expected a number such as 64 or 0.5" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr) < 1000, done.stderr
