"""Differential property test: ``krm_merge.smp.apply_patch`` against real kubectl.

For generated Deployments, Services and Pods and generated patches using every
SMP directive, our result must equal ``kubectl patch --local --type strategic``
as data: list order included, map key order ignored, JSON types exact
(``1`` vs ``true`` vs ``"1"``).  kubectl fails exactly when we raise.

Runs 200 examples by default, split evenly over the directives and oddities
each example focuses on (about 30 s; kubectl is one process per example).
``KRM_MERGE_SMPDIFF_EXAMPLES=N`` changes the count and
``KRM_MERGE_SMPDIFF_RANDOM=1`` explores new examples instead of the fixed,
derandomised set CI uses.
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from krm_merge.schema import builtin_schema
try:
    from krm_merge.smp import apply_patch
except ImportError:  # the package re-export may not exist yet
    from krm_merge.smp.apply import apply_patch
from krm_merge.smp.errors import SmpError

from .smpdiff_kubectl import KUBECTL, canonical, kubectl_patch
from .smpdiff_model import FOCI, object_and_patch

EXAMPLES = int(os.environ.get("KRM_MERGE_SMPDIFF_EXAMPLES", "200"))
RANDOM = os.environ.get("KRM_MERGE_SMPDIFF_RANDOM") == "1"

if KUBECTL is None:
    if os.environ.get("CI") == "true":
        pytest.fail("kubectl is required on CI for the SMP differential test", pytrace=False)
    pytest.skip("kubectl not found on PATH", allow_module_level=True)

# The last test reads what the examples counted in this process: under pytest-xdist a module's tests
# run on one worker (pyproject's --dist loadfile), or the count would be split across workers.
FOCI_RUN: Counter[str | None] = Counter()  # examples run per focus
USED: dict[str | None, Counter[str]] = {}  # directives used, per focus


def ours(obj: dict[str, Any], patch: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    schema = builtin_schema(obj["apiVersion"], obj["kind"])
    assert schema is not None
    try:
        return apply_patch(copy.deepcopy(obj), copy.deepcopy(patch), schema), None
    except SmpError as err:
        return None, str(err)


# Every directive and oddity is the focus of its share of the examples, so each
# is exercised whatever hypothesis's seed does to the other draws.
@pytest.mark.parametrize("focus", FOCI, ids=lambda f: str(f))
@settings(
    max_examples=max(1, -(-EXAMPLES // len(FOCI))),
    deadline=None,
    derandomize=not RANDOM,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_apply_patch_matches_kubectl(focus, data):
    obj, patch, directives = data.draw(object_and_patch(focus), label="case")
    FOCI_RUN[focus] += 1
    USED.setdefault(focus, Counter()).update(directives)
    note(f"object: {json.dumps(obj)}")
    note(f"patch:  {json.dumps(patch)}")
    expected = kubectl_patch(obj, patch)
    got, error = ours(obj, patch)
    note(f"kubectl: {json.dumps(expected.obj) if expected.error is None else 'error ' + expected.error}")
    note(f"ours:    {json.dumps(got) if error is None else 'error ' + error}")
    assert (error is None) == (expected.error is None), (
        f"kubectl error: {expected.error!r}; our error: {error!r}"
    )
    if error is None:
        assert canonical(got) == canonical(expected.obj)


def test_every_directive_was_exercised():
    """Guard against a generator that silently stops producing some directive or oddity."""
    if sum(FOCI_RUN.values()) < 100:
        pytest.skip("needs a full run of test_apply_patch_matches_kubectl")
    used: Counter[str] = Counter()
    for counter in USED.values():
        used.update(counter)
    for focus in FOCI:
        if focus is not None:
            assert used[focus] >= 3, f"{focus!r} used in only {used[focus]} examples: {dict(used)}"
