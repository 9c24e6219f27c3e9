"""Property tests of the engine on generated documents (hypothesis).

With plain lists (no schema, no fallback keys): an unchanged side never
matters — merge(O, O, U) == U, merge(L, O, O) == L, merge(X, X, X) == X —
and with associative lists, upstream's additions and local's additions both
survive.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.merge3 import MergeOptions, merge3
from krm_merge.merge3.nodes import MISSING

from .rt import ordered

keys = st.sampled_from(["a", "b", "c", "d", "e"])
scalars = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y", "z"]), st.booleans())
docs = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
).filter(lambda d: isinstance(d, dict))

PLAIN = MergeOptions(fallback_keys=())


def merged(l: Any, o: Any, u: Any, options: MergeOptions = PLAIN) -> Any:
    result = merge3(copy.deepcopy(l), copy.deepcopy(o), copy.deepcopy(u), None, options).result
    return {} if result is MISSING else result


@settings(max_examples=examples(80), deadline=None)
@given(docs, docs)
def test_local_unchanged_gives_upstream(origin: dict, upstream: dict) -> None:
    assert ordered(merged(origin, origin, upstream)) == ordered(upstream) or _same_as_data(merged(origin, origin, upstream), upstream)


@settings(max_examples=examples(80), deadline=None)
@given(docs, docs)
def test_upstream_unchanged_gives_local(local: dict, origin: dict) -> None:
    assert ordered(merged(local, origin, origin)) == ordered(local)


@settings(max_examples=examples(50), deadline=None)
@given(docs)
def test_merge_of_identical_versions_is_identity(doc: dict) -> None:
    assert ordered(merged(doc, doc, doc)) == ordered(doc)


def _same_as_data(a: Any, b: Any) -> bool:
    """Equal ignoring map key order (keys new to local are appended alphabetically)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_as_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_as_data(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


names = st.lists(st.sampled_from(["n1", "n2", "n3", "n4", "n5", "n6"]), unique=True, max_size=4)


@settings(max_examples=examples(80), deadline=None)
@given(names, names, names)
def test_associative_additions_from_both_sides_survive(base: list[str], local_extra: list[str], up_extra: list[str]) -> None:
    local_extra = [n for n in local_extra if n not in base]
    up_extra = [n for n in up_extra if n not in base and n not in local_extra]
    origin = {"l": [{"name": n} for n in base]}
    local = {"l": [{"name": n} for n in base + local_extra]}
    upstream = {"l": [{"name": n} for n in base + up_extra]}
    result = merged(local, origin, upstream, MergeOptions())
    assert [e["name"] for e in result.get("l", [])] == base + local_extra + up_extra
