"""Engine rules not pinned by the kyaml tables: conflicts, inference, styles, errors, scale."""

from __future__ import annotations

from typing import Any

import pytest

from krm_merge.merge3 import ConflictPolicy, Merge3Error, MergeOptions, merge3
from krm_merge.merge3.nodes import MISSING
from krm_merge.outcomes.kinds import Decision
from krm_merge.merge3.rules import ListRule, ListStrategy

from tests.helpers import count_calls

from .rt import dump, load, ordered
from .table_schema import schema_for_doc, table_resolver


def run(local: str, origin: str | None, upstream: str, **opts: object):  # type: ignore[no-untyped-def]
    l, o, u = load(local), load(origin), load(upstream)
    options = MergeOptions(resolver=table_resolver, **opts)  # type: ignore[arg-type]
    return merge3(l, o, u, schema_for_doc(u) or schema_for_doc(l), options)


def test_conflict_record_and_policies() -> None:
    base = "a: 1\nb: x\n"
    out = run("a: 2\nb: x\n", base, "a: 3\nb: y\n")
    assert ordered(out.result) == [("a", 3), ("b", "y")]
    (c,) = out.conflicts
    assert (c.path, c.origin, c.local, c.upstream, c.winner) == ("a", "1", "2", "3", Decision.UPSTREAM)
    out = run("a: 2\nb: x\n", base, "a: 3\nb: y\n", conflicts=ConflictPolicy.LOCAL_WINS)
    assert ordered(out.result) == [("a", 2), ("b", "y")]
    assert out.conflicts[0].winner is Decision.LOCAL


def test_same_change_on_both_sides_is_no_conflict() -> None:
    out = run("a: 2\n", "a: 1\n", "a: 2\n")
    assert ordered(out.result) == [("a", 2)] and not out.conflicts


def test_deleted_upstream_changed_locally_is_a_conflict() -> None:
    out = run("a: 2\nb: 1\n", "a: 1\nb: 1\n", "b: 1\n")
    assert ordered(out.result) == [("b", 1)]
    assert out.conflicts[0].upstream == "<absent>"
    out = run("a: 2\nb: 1\n", "a: 1\nb: 1\n", "b: 1\n", conflicts=ConflictPolicy.LOCAL_WINS)
    assert ordered(out.result) == [("a", 2), ("b", 1)]


def test_kind_change_on_one_side_is_an_ordinary_change() -> None:
    out = run("spec:\n  x: 1\n", "spec:\n  x: 1\n", "spec:\n  x:\n    y: 2\n")
    assert ordered(out.result) == [("spec", [("x", [("y", 2)])])]
    out = run("spec:\n  x: [1]\n", "spec:\n  x: 1\n", "spec:\n  x: 1\n")
    assert ordered(out.result) == [("spec", [("x", [1])])]


def test_local_quote_style_applied_to_upstream_value() -> None:
    out = run("a: 'x' # c\n", "a: 'x' # c\n", "a: y # c\n")
    assert dump(out.result) == "a: 'y' # c\n"


def test_wrong_node_kind_names_the_field() -> None:
    with pytest.raises(Merge3Error) as err:
        run("spec:\n  x: 2\n", "spec:\n  x: 1\n", "spec:\n  x:\n    y: 2\n")
    assert err.value.path == "spec.x" and "wrong node kind" in err.value.message


def test_fallback_keys_infer_associative_lists() -> None:
    local = "items:\n- mountPath: /a\n  ro: true\n- mountPath: /l\n"
    origin = "items:\n- mountPath: /a\n"
    upstream = "items:\n- mountPath: /a\n  size: 1\n- mountPath: /u\n"
    out = run(local, origin, upstream)
    assert ordered(out.result)[0][1] == [
        [("mountPath", "/a"), ("ro", True), ("size", 1)],
        [("mountPath", "/l")],
        [("mountPath", "/u")],
    ]
    plain = run(local, origin, upstream, fallback_keys=())
    assert ordered(plain.result)[0][1] == [[("mountPath", "/a"), ("size", 1)], [("mountPath", "/u")]]


def test_scalar_set_list() -> None:
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [{}]\n"
    out = run(doc.format("a, l"), doc.format("a, b"), doc.format("a, b, u"))
    assert ordered(out.result)[2][1] == [("finalizers", ["a", "l", "u"])]


def test_whole_element_rules_are_a_visitor() -> None:
    """The pipeline rules are a visitor handed to the walker, not code in it."""
    from krm_merge.kptfile.merge import PipelineVisitor, FunctionSchema
    from krm_merge.merge3 import Merger

    key = lambda e: ("name", e["name"]) if isinstance(e, dict) and "name" in e else None  # noqa: E731
    rule = ListRule(ListStrategy.ASSOCIATIVE, key_fn=key)

    class Schema:
        def map_field(self, k: str) -> None:
            return None

        def list_field(self, k: str):  # type: ignore[no-untyped-def]
            return rule, FunctionSchema()

    def merge(merger: Merger) -> object:
        local = load("fns:\n- name: a\n  v: 2\n- name: c\n  v: 1\n")
        origin = load("fns:\n- name: a\n  v: 1\n- name: b\n  v: 1\n- name: c\n  v: 1\n")
        upstream = load("fns:\n- name: b\n  v: 2\n- name: d\n  z: 1\n  v: 1\n")
        return ordered(merger.merge_document(local, origin, upstream, Schema()))

    # a: deleted upstream, changed locally -> kept; b: deleted locally -> stays deleted;
    # c: deleted upstream, unchanged -> deleted; d: added upstream -> appended as written
    assert merge(Merger(visitor=PipelineVisitor())) == [("fns", [[("name", "a"), ("v", 2)], [("name", "d"), ("z", 1), ("v", 1)]])]
    # the same walk with kyaml's visitor: a goes (upstream wins its deleted fields), b comes
    # back as a fragment holding upstream's change (kpt's E4), d's fields are sorted
    assert merge(Merger()) == [("fns", [[("v", 2)], [("name", "d"), ("v", 1), ("z", 1)]])]


def test_merge_is_linear_in_list_size() -> None:
    """Work grows linearly with the list: counted in function calls (deterministic), not timed."""

    def doc(n: int, tag: str) -> str:
        env = "".join(f"          - name: E{i}\n            value: '{tag}{i}'\n" for i in range(n))
        return ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
                "      - name: c\n        env:\n" + env)

    def calls(n: int) -> int:
        texts = doc(n, "l"), doc(n, "o"), doc(n, "o").replace("'o1'", "'u1'")
        l, o, u = (load(t) for t in texts)
        schema = schema_for_doc(l)
        outcome: list[Any] = []
        count = count_calls(lambda: outcome.append(merge3(l, o, u, schema, MergeOptions(resolver=table_resolver))))
        assert outcome[0].result is not MISSING
        return count

    calls(10)  # warm-up: schema table loading
    small, large = calls(50), calls(400)
    assert large < small * 8 * 1.25, (small, large)  # 8x the input: at most 10x the calls (quadratic would be ~64x)


def test_unchanged_means_equal_as_data() -> None:
    """Key order, flow/block layout, quoting and comments are not changes; types are."""
    from krm_merge.merge3.nodes import same

    a = load("x:\n  b: 1   # c\n  a: 'q'\n  l: [1, 2]\n")["x"]
    b = load("x: {a: q, l: [1, 2], b: 1}\n")["x"]
    assert same(a, b)
    assert not same(load("x: 1\n")["x"], load("x: 1.0\n")["x"])
    assert not same(load("x: 1\n")["x"], load("x: '1'\n")["x"])
    assert not same(load("x: true\n")["x"], load("x: 1\n")["x"])
    assert not same(load("x: [1, 2]\n")["x"], load("x: [2, 1]\n")["x"])  # list order is data


def test_plain_list_reformatted_upstream_keeps_local_change() -> None:
    """Upstream re-ordering keys inside a plain list is no change: local's edit stays."""
    origin = "items:\n- id: a\n  n: 1\n"
    upstream = "items:\n- {n: 1, id: a}\n"
    out = run("items:\n- id: a\n  n: 2\n", origin, upstream, fallback_keys=())
    assert ordered(out.result) == [("items", [[("id", "a"), ("n", 2)]])] and not out.conflicts
