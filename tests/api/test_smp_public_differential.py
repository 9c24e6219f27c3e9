"""The kubectl differential through the public ``smp.apply``.

Same generator as ``tests/smp_differential`` (every directive and oddity is a
focus): the public function must give exactly the engine's answer on many
examples (fast, no kubectl), and kubectl's answer on a smaller sample (one
kubectl process per example), leaving both inputs unmodified.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge import smp
from krm_merge.schema import builtin_schema
from krm_merge.smp.apply import apply_patch
from tests.smp_differential.smpdiff_kubectl import KUBECTL, canonical, kubectl_patch
from tests.smp_differential.smpdiff_model import FOCI, object_and_patch

SETTINGS = dict(
    deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def public(obj: dict[str, Any], patch: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """``smp.apply``'s answer or error, checking that neither input changed."""
    before = json.dumps([obj, patch])
    try:
        result: dict[str, Any] | None = smp.apply(obj, patch)
        error = None
    except smp.SmpError as err:
        result, error = None, str(err)
    assert json.dumps([obj, patch]) == before, "smp.apply modified an input"
    return result, error


def engine(obj: dict[str, Any], patch: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    schema = builtin_schema(obj["apiVersion"], obj["kind"])
    assert schema is not None
    try:
        return apply_patch(copy.deepcopy(obj), copy.deepcopy(patch), schema), None
    except smp.SmpError as err:
        return None, str(err)


@pytest.mark.parametrize("focus", FOCI, ids=lambda f: str(f))
@settings(max_examples=examples(25), **SETTINGS)
@given(data=st.data())
def test_public_apply_is_the_engine(focus: str | None, data: Any) -> None:
    obj, patch, _ = data.draw(object_and_patch(focus), label="case")
    assert public(obj, patch) == engine(obj, patch)


@pytest.mark.e2e
@pytest.mark.parametrize("focus", FOCI, ids=lambda f: str(f))
@settings(max_examples=examples(2), **SETTINGS)
@given(data=st.data())
def test_public_apply_matches_kubectl(focus: str | None, data: Any) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl not found on PATH")
    obj, patch, _ = data.draw(object_and_patch(focus), label="case")
    expected = kubectl_patch(obj, patch)
    got, error = public(obj, patch)
    assert (error is None) == (expected.error is None), f"kubectl: {expected.error!r}; ours: {error!r}"
    if error is None:
        assert canonical(got) == canonical(expected.obj)
