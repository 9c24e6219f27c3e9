"""The light paths load only what they use: no mode but the one that runs, no ruamel/pathlib where they were not.

Imports moved to module tops (tests/architecture/test_lazy_imports.py) must not
drag the heavy modules into a path that never used them; the registry keeps each
mode's and command's module out until it is used.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
"""
PATCH = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
RESOURCE_LIST = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data:
    x: "1"
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fc
  data:
    mode: promote
    pipeline: default/web
    environment: prod
    value: "2"
    allowNoMatch: "true"
"""
# Runs the command line in-process (no os._exit), then prints the modules it loaded.
_PROBE = ("import json, sys\nfrom krm_merge.cli import main\ncode = main(json.loads(sys.argv[1]))\n"
          "sys.stdout.flush()\nsys.stderr.write('\\nMODULES ' + json.dumps([code, sorted(sys.modules)]))\n")


def _loaded(args: list[str], cwd: Path, stdin: str = "") -> tuple[int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], input=stdin, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    code, modules = json.loads(proc.stderr.rpartition("MODULES ")[2])
    return code, set(modules)


def _ours(modules: set[str], prefix: str) -> set[str]:
    return {m for m in modules if m.startswith(prefix)}


@pytest.fixture()
def pkg(tmp_path: Path) -> Path:
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    return tmp_path


@pytest.mark.parametrize("config", [
    ["mode=reorder-merge", f"patch={PATCH}"],
    ["mode=promote", "pipeline=default/web", "environment=prod", "value=2", "allowNoMatch=true"],
])
def test_a_small_dry_run_loads_neither_ruamel_nor_pathlib(pkg: Path, config: list[str]) -> None:
    code, modules = _loaded(["run", str(pkg), "--dry-run", "--", *config], pkg)
    assert code == 0
    assert not _ours(modules, "ruamel") and "pathlib" not in modules
    mode = "krm_merge.modes." + config[0].removeprefix("mode=").replace("-", "_")
    assert _ours(modules, "krm_merge.modes.") == {mode}
    assert _ours(modules, "krm_merge.commands.") <= {"krm_merge.commands.run", "krm_merge.commands.reporting",
                                                     "krm_merge.commands.outcomes"}


def test_the_function_path_loads_only_the_mode_that_runs_and_no_command(tmp_path: Path) -> None:
    code, modules = _loaded([], tmp_path, RESOURCE_LIST)
    assert code == 0
    assert _ours(modules, "krm_merge.modes.") == {"krm_merge.modes.promote"}
    assert not _ours(modules, "krm_merge.commands") and "pathlib" not in modules and "argparse" not in modules


def test_version_loads_no_mode_no_runner_and_no_yaml(tmp_path: Path) -> None:
    code, modules = _loaded(["--version"], tmp_path)
    assert code == 0
    assert _ours(modules, "krm_merge.") <= {"krm_merge.cli", "krm_merge.registry", "krm_merge.errors"}
    assert not _ours(modules, "ruamel") and "yaml" not in modules
