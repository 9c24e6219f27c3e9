"""The sample SDK function (``examples/sdk-label-deployments``) packaged as an image, under kpt.

A function author's image is the krm-merge image plus their script: the test
builds exactly that (``FROM`` the image under test, offline), then runs the
function's catalog examples through ``kpt fn eval --image`` with the checks of
:mod:`krm_merge.testing` (diff, results, exit code; the second run changes
nothing).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from krm_merge.testing import Example, check_example, discover, kpt_image_runner

from .tools import Orchestrators, kpt_env, run

pytestmark = pytest.mark.image

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sdk-label-deployments"
EXAMPLES = [e for e in discover(SAMPLE / "examples") if e.test_type == "eval" and not e.skip]


@pytest.fixture(scope="module")
def sample_image(image: str, orchestrators: Orchestrators, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``FROM`` the image under test, with the sample function as its entrypoint."""
    context = tmp_path_factory.mktemp("sample-image")
    (context / "label_deployments.py").write_bytes((SAMPLE / "label_deployments.py").read_bytes())
    (context / "Containerfile").write_text(
        f"FROM {image}\n"
        "COPY label_deployments.py /opt/fn/label_deployments.py\n"
        'ENTRYPOINT ["/opt/krm-merge/bin/python", "/opt/fn/label_deployments.py"]\n'
    )
    ref = f"localhost/krm-merge-sdk-sample:{uuid.uuid4().hex[:12]}"
    built = run([orchestrators.podman, "build", "--network", "none", "-q", "-t", ref, str(context)])
    assert built.returncode == 0, built.describe()
    try:
        yield ref
    finally:
        run([orchestrators.podman, "rmi", "-f", ref])


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_sample_function_image_under_kpt(example: Example, sample_image: str, orchestrators: Orchestrators,
                                         tmp_path: Path) -> None:
    check_example(example, tmp_path, kpt_image_runner(sample_image, env=kpt_env()))
