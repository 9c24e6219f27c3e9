"""The fleet image (``Dockerfile --target fleet``) runs a fleet update as the Kubernetes Job does.

A real upstream repository and a monorepo of consumers fetched with the real ``kpt pkg get``, mounted
into the container at the same path (the Kptfiles name the upstream by its ``file://`` path); the
container runs ``krm-merge update ROOT --upstream file://... --ref REF`` as ``nobody`` without a
network, fetching with the image's own git.  Its result is byte for byte the host's fleet update's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fleet.world import Fleet, spread, tree

from .tools import Orchestrators, run

NOBODY = 65534


def _give_to_nobody(root: Path) -> None:
    """The container runs as nobody: the mounted folders must be its to write (and, for git, to own)."""
    for folder, dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            if os.geteuid() == 0:
                os.lchown(name, NOBODY, NOBODY)
            elif not os.path.islink(name):
                os.chmod(name, os.stat(name).st_mode | 0o777)


def test_the_fleet_image_updates_a_fleet_with_its_own_git(fleet_image: str, orchestrators: Orchestrators,
                                                           tmp_path: Path) -> None:
    fleet = spread(Fleet(tmp_path), ["east", "west", "north"])
    host = fleet.copy("host")
    expected = fleet.fleet("--report", "json", str(host / "report.json"), cwd=host)
    assert expected.returncode == 0, expected.stderr
    _give_to_nobody(tmp_path)
    done = run([orchestrators.podman, "run", "--rm", "--network", "none", "--user", "nobody", "--pull", "never",
                "--security-opt=no-new-privileges", "-v", f"{tmp_path}:{tmp_path}", "-w", str(tmp_path),
                "-e", f"XDG_CACHE_HOME={tmp_path}/image-cache", fleet_image,
                "update", "mono", "--upstream", fleet.spec, "--ref", "v3", "--report", "json", "-"])
    assert done.returncode == 0, done.describe()
    report = json.loads(done.stdout)
    assert {p["path"]: p["status"] for p in report["packages"]} == {
        f"mono/clusters/{name}": "updated" for name in ("east", "west", "north")}
    assert tree(tmp_path / "mono") == tree(host / "mono")  # the host's fleet update, byte for byte


def test_the_function_image_has_no_git(image: str, orchestrators: Orchestrators) -> None:
    """The KRM function image stays as it was: git is the fleet image's alone."""
    done = run([orchestrators.podman, "run", "--rm", "--network", "none", "--pull", "never", "--entrypoint", "sh",
                image, "-c", "command -v git || echo none"])
    assert done.stdout.strip() == "none", done.describe()
