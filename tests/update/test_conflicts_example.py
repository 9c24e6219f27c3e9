"""examples/update-conflicts-mark: a marked package goes through the real ``kpt fn render`` and a later update."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_binary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "update-conflicts-mark"
BIN = Path(sys.executable).parent
KRM_MERGE = str(BIN / "krm-merge")

pytestmark = pytest.mark.e2e

MARKED = {
    "spec.replicas": "replicas: 3 # sized for our traffic # krm-merge:conflict upstream=2 origin=1\n",
    "spec.template.spec.containers[name=web].image":
        'image: nginx:1.25-hardened # the web server # krm-merge:conflict upstream="nginx:1.27" origin="nginx:1.25"\n',
}


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def listed(dest: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    proc = run([KRM_MERGE, "conflicts", str(dest / "local")], env)
    return proc.returncode, proc.stdout.splitlines()


def deployment(dest: Path) -> str:
    return (dest / "local" / "deployment.yaml").read_text()


def test_marked_package_renders_updates_and_resolves(tmp_path: Path) -> None:
    require_binary("git")
    require_binary("kpt")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), GIT_CONFIG_GLOBAL="/dev/null", HOME=str(tmp_path),
               TMPDIR=str(tmp_path), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    dest = tmp_path / "demo"
    subprocess.run(["sh", str(EXAMPLE / "setup.sh"), str(dest)], env=env, check=True, capture_output=True, timeout=60)

    update = run([KRM_MERGE, "update", f"{dest}/local@v2", "--conflicts", "mark"], env)
    assert update.returncode == 3, update.stderr
    code, lines = listed(dest, env)
    assert code == 3
    assert [line.split(": ")[1].split(" ")[1] for line in lines] == list(MARKED)
    assert all(text in deployment(dest) for text in MARKED.values())
    assert "value: production" in deployment(dest)  # changed upstream only: merged as usual

    render = run(["kpt", "fn", "render", "local", "--allow-exec"], env, cwd=dest)
    assert render.returncode == 0, render.stderr
    assert "LOG_FORMAT" in deployment(dest)  # the function ran and the file was rewritten
    assert all(text in deployment(dest) for text in MARKED.values())
    assert listed(dest, env) == (code, lines)

    again = run([KRM_MERGE, "update", f"{dest}/local@v3", "--conflicts", "mark"], env)
    assert again.returncode == 3, again.stderr
    assert "2 conflict(s) left by an earlier update" in again.stderr
    assert "value: live" in deployment(dest)
    assert all(text in deployment(dest) for text in MARKED.values())
    assert listed(dest, env) == (code, lines)

    take = run([KRM_MERGE, "resolve", str(dest / "local"), "--take", "upstream", "deployment/web:spec.replicas"], env)
    assert take.returncode == 3, take.stderr  # one left
    keep = run([KRM_MERGE, "resolve", str(dest / "local"), "--take", "local"], env)
    assert keep.returncode == 0, keep.stderr
    assert listed(dest, env) == (0, [])
    assert not (dest / "local" / ".krm-merge.conflicts").exists()
    data = yaml.safe_load(deployment(dest))
    assert data["spec"]["replicas"] == 2
    assert data["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25-hardened"
    assert "# sized for our traffic\n" in deployment(dest) and "# the web server\n" in deployment(dest)
    assert run(["kpt", "fn", "render", "local", "--allow-exec"], env, cwd=dest).returncode == 0
