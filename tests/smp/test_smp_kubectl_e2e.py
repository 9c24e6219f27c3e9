"""Differential tests against the real kubectl (marked ``e2e``; skipped without kubectl).

* apply: ``kubectl patch --local --type strategic`` vs :func:`apply_patch` on
  random Deployments and patches using every directive.  kubectl keeps nulls
  and directive keys inside newly added content (the API server drops them
  when decoding); both results are compared after removing those leftovers.
* 3-way creation: the PATCH the real ``kubectl apply`` sends to a fake API
  server vs :func:`kubectl_apply_patch`, with the live object drifting from
  the last-applied configuration.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from krm_merge.schema import builtin_schema
from krm_merge.smp.apply import apply_patch
from krm_merge.smp.errors import ConflictError, SmpError
from krm_merge.smp.kubectl_apply import kubectl_apply_patch, with_last_applied
from krm_merge.smp.values import clean_new_value, deep_copy, deep_equal

from .kubectl_capture.fake_apiserver import FakeCluster
from .random_docs import DocGenerator

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

SCHEMA = builtin_schema("apps/v1", "Deployment")


@pytest.fixture(scope="module")
def cluster() -> Any:
    with FakeCluster() as running:
        yield running


def _mine(live: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any] | str:
    try:
        return apply_patch(deep_copy(live), patch, SCHEMA)
    except SmpError as err:
        return str(err)


@pytest.mark.parametrize("seed", range(6))
def test_apply_matches_kubectl_patch_local(cluster: FakeCluster, seed: int) -> None:
    generator = DocGenerator(seed)
    for _ in range(15):
        live = generator.deployment()
        patch = generator.patch(live)
        theirs = cluster.patch_local(live, patch)
        mine = _mine(live, patch)
        assert isinstance(theirs, str) == isinstance(mine, str), (live, patch, theirs, mine)
        if not isinstance(theirs, str):
            assert deep_equal(clean_new_value(theirs), clean_new_value(mine)), (live, patch, theirs, mine)


@pytest.mark.parametrize("seed", range(6))
def test_three_way_patch_matches_kubectl_apply(cluster: FakeCluster, seed: int) -> None:
    generator = DocGenerator(1000 + seed)
    for _ in range(15):
        last = generator.deployment()
        desired = generator.add_config_directives(generator.deployment())
        live = with_last_applied(last)
        if generator.rng.random() < 0.7:
            live["spec"] = generator.deployment()["spec"]
        theirs = cluster.apply_patch(live, desired)
        if isinstance(theirs, str):
            # kubectl failed creating the patch (e.g. duplicate env names); so must we.
            assert "creating patch" in theirs
            with pytest.raises(SmpError) as info:
                kubectl_apply_patch(live, desired, SCHEMA)
            assert info.value.message.splitlines()[0] in theirs
            continue
        mine = kubectl_apply_patch(live, desired, SCHEMA)
        assert deep_equal(mine, theirs or {}), (live, desired, theirs, mine)


def test_create_annotation_matches_kubectl_apply(cluster: FakeCluster) -> None:
    generator = DocGenerator(7)
    for _ in range(5):
        desired = generator.deployment()
        desired["metadata"]["labels"] = {"q": "a&b<c>é"}
        assert cluster.apply_create(desired) == with_last_applied(desired)


def test_conflict_message_matches_kubectl(cluster: FakeCluster) -> None:
    generator = DocGenerator(99)
    compared = 0
    for _ in range(12):
        last, desired = generator.deployment(), generator.deployment()
        live = with_last_applied(last)
        live["spec"]["template"]["spec"]["containers"][0]["image"] = "drifted"
        theirs = cluster.apply_patch(live, desired, overwrite=False)
        try:
            kubectl_apply_patch(live, desired, SCHEMA, overwrite=False)
        except ConflictError as err:
            assert isinstance(theirs, str)
            # kubectl wraps the apimachinery message; the message itself must be identical.
            assert theirs[theirs.index("patch:\n", theirs.index("for:")) :].rstrip() == str(err).rstrip()
            compared += 1
        except SmpError as err:  # e.g. duplicate env names: kubectl fails the same way
            assert isinstance(theirs, str) and err.message.splitlines()[0] in theirs
        else:
            assert not isinstance(theirs, str)
    assert compared > 0
