"""Fixtures for the image end-to-end tests (real podman, kpt and kubectl).

The image under test comes from ``KRM_MERGE_IMAGE`` (default
``localhost/krm-merge:dev``, as built by ``tools/build-image.sh dev``), the
fleet image (the same plus git) from ``KRM_MERGE_FLEET_IMAGE`` (default
``localhost/krm-merge-fleet:dev``, built beside it).
Tests are skipped only when podman is absent *and* ``CI`` is not ``true``;
on CI a missing tool or image is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .tools import Orchestrators, ToolMissing, find_orchestrators, image_exists

DEFAULT_IMAGE = "localhost/krm-merge:dev"
DEFAULT_FLEET_IMAGE = "localhost/krm-merge-fleet:dev"


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def image_ref() -> str:
    """The image under test, from KRM_MERGE_IMAGE."""
    return os.environ.get("KRM_MERGE_IMAGE", DEFAULT_IMAGE)


@pytest.fixture(scope="session")
def orchestrators() -> Orchestrators:
    """Paths of podman, kpt, kubectl and git; skips locally without podman."""
    if shutil.which("podman") is None and not _on_ci():
        pytest.skip("podman is not installed (run .ci/setup-podman.sh); "
                    "these tests always run when CI=true")
    try:
        return find_orchestrators()
    except ToolMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def image(image_ref: str, orchestrators: Orchestrators) -> str:
    """The image reference, after checking podman has it locally."""
    return _present(orchestrators, image_ref, "KRM_MERGE_IMAGE")


@pytest.fixture(scope="session")
def fleet_image(orchestrators: Orchestrators) -> str:
    """The fleet image (``--target fleet``: the function image plus git), from KRM_MERGE_FLEET_IMAGE."""
    return _present(orchestrators, os.environ.get("KRM_MERGE_FLEET_IMAGE", DEFAULT_FLEET_IMAGE),
                    "KRM_MERGE_FLEET_IMAGE")


def _present(orchestrators: Orchestrators, image_ref: str, variable: str) -> str:
    if not image_exists(orchestrators, image_ref):
        pytest.fail(
            f"image {image_ref} is not in podman's local storage; build it with "
            f"`tools/build-image.sh {image_ref.rsplit(':', 1)[-1]}` or set {variable}",
            pytrace=False,
        )
    return image_ref


@pytest.fixture(scope="session")
def host_function() -> Path:
    """The ``krm-merge`` console script of the interpreter running the tests."""
    script = Path(os.sys.executable).parent / "krm-merge"
    found = script if script.exists() else shutil.which("krm-merge")
    if found is None:
        pytest.fail("krm-merge is not installed in the test environment "
                    "(pip install -e .)", pytrace=False)
    return Path(found)


@pytest.fixture(scope="session")
def host_help(host_function: Path) -> str:
    """What ``krm-merge --help`` prints on the host."""
    done = subprocess.run([str(host_function), "--help"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, f"krm-merge --help failed on the host: {done.stderr}"
    return done.stdout
