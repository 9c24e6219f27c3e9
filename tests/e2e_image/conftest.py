"""Fixtures for the image end-to-end tests (real podman, kpt and kubectl).

The image under test comes from ``KRM_MERGE_IMAGE`` (default
``localhost/krm-merge:dev``, as built by ``tools/build-image.sh dev``), the
fleet image (the same plus git) from ``KRM_MERGE_FLEET_IMAGE`` (default
``localhost/krm-merge-fleet:dev``, built beside it).
What happens when they cannot run is one decision, :func:`unavailable`: on a
contributor's machine (``CI`` not ``true``) a missing podman, kpt, kubectl, git
or image skips them with the reason (the README's test command passes where
podman is installed and the image was never built); where ``CI=true`` (``.ci/run``
exports it) the same absence fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from .tools import Orchestrators, ToolMissing, find_orchestrators, image_exists

DEFAULT_IMAGE = "localhost/krm-merge:dev"
DEFAULT_FLEET_IMAGE = "localhost/krm-merge-fleet:dev"


@dataclass(frozen=True)
class Unavailable:
    """What the image tests do when something they need is absent: skip or fail, and why."""

    fail: bool
    reason: str


def unavailable(problem: str, *, on_ci: bool) -> Unavailable:
    """The decision for ``problem`` (a missing tool or image): fail on CI, skip anywhere else."""
    if on_ci:
        return Unavailable(True, f"{problem} (CI=true: the image tests must run)")
    return Unavailable(False, f"{problem}; the image tests run where it is present and always when CI=true")


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def _give_up(problem: str) -> NoReturn:
    decision = unavailable(problem, on_ci=_on_ci())
    if decision.fail:
        pytest.fail(decision.reason, pytrace=False)
    pytest.skip(decision.reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder is an image test (``-m "not image"`` deselects them all)."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.image)


@pytest.fixture(scope="session")
def image_ref() -> str:
    """The image under test, from KRM_MERGE_IMAGE."""
    return os.environ.get("KRM_MERGE_IMAGE", DEFAULT_IMAGE)


@pytest.fixture(scope="session")
def orchestrators() -> Orchestrators:
    """Paths of podman, kpt, kubectl and git (a missing one: :func:`unavailable`)."""
    if shutil.which("podman") is None:
        _give_up("podman is not installed (.ci/setup-podman.sh installs it)")
    try:
        return find_orchestrators()
    except ToolMissing as exc:
        _give_up(str(exc))


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
        _give_up(f"image {image_ref} is not in podman's local storage (build it with "
                 f"`tools/build-image.sh {image_ref.rsplit(':', 1)[-1]}` or set {variable})")
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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say once, in the summary, why the image tests were skipped (``-q`` shows only a count)."""
    here = Path(__file__).parent.name
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if f"/{here}/" in f"/{report.nodeid}" and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2]).removeprefix("Skipped: ")
            reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"image tests: {count} skipped: {reason}")
