"""Every ``examples/*/`` with ``.expected/config.yaml`` through real kpt and the image.

Parametrised over whatever examples exist at collection time; mode-specific
behaviour is checked only through these data-driven expectations.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .catalog import Example, ExampleRun, check_outcome, discover_examples, kptfile_function_images
from .tools import Orchestrators, run

pytestmark = pytest.mark.image

# KRM_MERGE_EXAMPLES_DIR points the suite at another examples tree (for
# checking new examples or this harness itself).
EXAMPLES_ROOT = Path(os.environ.get("KRM_MERGE_EXAMPLES_DIR")
                     or Path(__file__).resolve().parents[2] / "examples")
EXAMPLES = discover_examples(EXAMPLES_ROOT)


def _alias_image(tools: Orchestrators, image: str, refs: set[str]) -> list[str]:
    """Tag the image under test with the names a Kptfile uses; return the new tags."""
    added = []
    for ref in sorted(refs - {image}):
        if run([tools.podman, "image", "exists", ref]).returncode == 0:
            continue  # never shadow an image the user already has
        done = run([tools.podman, "tag", image, ref])
        assert done.returncode == 0, done.describe()
        added.append(ref)
    return added


@pytest.mark.skipif(not EXAMPLES, reason=f"no examples with .expected/config.yaml under {EXAMPLES_ROOT}")
# The aliases are podman tags, seen by every worker: on two workers, one example's untag would
# remove the name another example is rendering with.  One worker runs them all.
@pytest.mark.xdist_group("podman-image-aliases")
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_with_image(example: Example, image: str, orchestrators: Orchestrators,
                            host_function: Path, tmp_path: Path) -> None:
    """The example's catalog expectations hold under kpt with the image, twice in a row."""
    cfg = example.config
    if cfg.skip:
        pytest.skip(f"{example.name}: config.yaml says skip")
    if cfg.runtimes and "podman" not in cfg.runtimes:
        pytest.skip(f"{example.name}: runtimes {list(cfg.runtimes)} exclude podman")
    state = ExampleRun(example, orchestrators, image, tmp_path, host_function.parent)
    state.prepare()
    aliases = _alias_image(orchestrators, image, kptfile_function_images(state.pkg)) \
        if cfg.test_type == "render" else []
    try:
        for attempt in (1, 2):
            check_outcome(state, state.execute(), attempt)
    finally:
        for ref in aliases:
            run([orchestrators.podman, "untag", image, ref])
