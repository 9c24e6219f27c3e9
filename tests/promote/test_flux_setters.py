"""Flux's own setter fixture (``flux/setters``, dangling ``test.yaml`` link included) through ``krm-merge promote``.

Flux's ``TestUpdateWithSetters`` skips the link to a missing file; a broken link holds no
marker, so promote warns about it and goes on (issue 34 item 2) instead of failing the release.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parent / "flux" / "setters"
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
# The ImagePolicies of Flux's test (their status.latestRef).
POLICIES = [
    "automation-ns:policy=index.repo.fake/updated:v1.0.1",
    "automation-ns:unchanged=image:v1.0.0",
    "automation-ns:policy-with-digest=image:v1.0.0@sha256:"
    "6745aaad46d795c9836632e1fb62f24b7e7f4c843144da8e47a5465c411a14be",
]


def _promote(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [KRM_MERGE, "promote", str(root), *extra]
    for policy in POLICIES:
        args += ["--image-policy", policy]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE / "original", root, symlinks=True)
    assert os.readlink(root / "test.yaml") == "testing.yaml" and not (root / "test.yaml").exists()
    return root


def test_flux_setters_fixture_is_promoted_past_its_dangling_link(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    done = _promote(root)
    assert done.returncode == 0, done.stderr
    assert "warning: test.yaml: a broken symbolic link (to testing.yaml); skipped" in done.stderr
    for expected in sorted((FIXTURE / "expected").iterdir()):
        assert (root / expected.name).read_bytes() == expected.read_bytes(), expected.name
    for untouched in ("otherns.yaml", "unmarked.yaml"):
        assert (root / untouched).read_bytes() == (FIXTURE / "original" / untouched).read_bytes()
    assert os.readlink(root / "test.yaml") == "testing.yaml", "the link is left as it was"


def test_a_dry_run_predicts_the_same(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    done = _promote(root, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "test.yaml: a broken symbolic link" in done.stderr
    assert "+++ b/marked.yaml" in done.stdout
    assert (root / "marked.yaml").read_bytes() == (FIXTURE / "original" / "marked.yaml").read_bytes()
