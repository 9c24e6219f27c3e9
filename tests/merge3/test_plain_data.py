"""The engine on plain data (issue 45) decides exactly what it decides on round-trip trees.

The update merges a resource changed on both sides on the fast reader's
plain data (``Merger(..., representation=PLAIN_DATA)``), with the same walker
and visitor: on every kyaml table case and on generated documents, the
merged data (key order and list order included) and the conflicts (paths,
values as shown, winners) are the round-trip merge's, and nothing of it
imports ruamel.yaml.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm.yamlio import dump_data
from krm_merge.merge3 import PLAIN_DATA, ConflictPolicy, Merge3Error, Merger, MergeOptions
from krm_merge.merge3.conflicts import FieldRules, parse_rules
from krm_merge.merge3.nodes import MISSING, to_plain_data

from .rt import load, ordered
from .table_schema import schema_for_doc, table_resolver
from .test_kyaml_tables import SCHEMA_COMMENT_CASES, _cases


def both_ways(local: Any, origin: Any, upstream: Any, schema: Any, options: MergeOptions) -> tuple[Any, Any]:
    """(round-trip result as plain data, conflicts), (plain-data result, conflicts) of one merge; an error as its words."""
    data = [MISSING if v is MISSING else to_plain_data(v) for v in (local, origin, upstream)]
    trees = [copy.deepcopy(v) for v in (local, origin, upstream)]
    return _merged(Merger(options), trees, schema), _merged(Merger(options, representation=PLAIN_DATA), data, schema)


def _merged(merger: Merger, versions: list[Any], schema: Any) -> Any:
    try:
        result = merger.merge_document(*versions, schema)
    except Merge3Error as err:
        return "error", str(err)
    return (MISSING if result is MISSING else ordered(to_plain_data(result))), merger.conflicts


@pytest.mark.parametrize("case", _cases())
@pytest.mark.parametrize("policy", [ConflictPolicy.UPSTREAM_WINS, ConflictPolicy.LOCAL_WINS])
def test_every_kyaml_table_case_merges_the_same_on_plain_data(case: dict, policy: ConflictPolicy) -> None:
    local, origin, updated = load(case["local"]), load(case["original"]), load(case["updated"])
    schema = None
    for doc in (local, origin, updated):
        schema = schema or schema_for_doc(doc)
    keys = None if case["id"] in SCHEMA_COMMENT_CASES else ("name",) if case["infer"] else ()
    options = MergeOptions(policy, resolver=table_resolver, keep_unchanged_nulls=True,
                           **({} if keys is None else {"fallback_keys": keys}))
    round_trip, plain = both_ways(local, origin, updated, schema, options)
    assert plain == round_trip


KEYS = st.sampled_from(["a", "b", "c", "name", "image"])
SCALARS = st.one_of(st.integers(-2, 2), st.sampled_from(["x", "y", "z", ""]), st.booleans(), st.none())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.fixed_dictionaries({"name": st.sampled_from(["n1", "n2", "n3"])}, optional={"image": inner, "a": inner}),
                 max_size=3),
        st.dictionaries(KEYS, inner, max_size=4),
    ),
    max_leaves=12,
)
DOCS = st.dictionaries(KEYS, VALUES, max_size=4)
RULES = FieldRules.of(parse_rules({"a": "local-wins", "b.*": "upstream-wins"}, kinds=False), (), "X")


@settings(max_examples=examples(300), deadline=None)
@given(DOCS, DOCS, DOCS, st.sampled_from(list(ConflictPolicy)[:3]), st.booleans(), st.booleans())
def test_generated_documents_merge_the_same_on_plain_data(local: dict, origin: dict, upstream: dict,
                                                          policy: ConflictPolicy, infer: bool, rules: bool) -> None:
    options = MergeOptions(policy, fallback_keys=("name",) if infer else (), rules=RULES if rules else FieldRules(),
                           keep_unchanged_nulls=rules)
    round_trip, plain = both_ways(load_rt(local), load_rt(origin), load_rt(upstream), None, options)
    assert plain == round_trip


def load_rt(data: dict) -> Any:
    """``data`` read back as a round-trip tree (what the round-trip merge is given)."""
    return load(dump_data(data))


def test_a_merge_of_plain_data_imports_no_ruamel() -> None:
    script = (
        "import sys\n"
        "from krm_merge.merge3 import PLAIN_DATA, ConflictPolicy, Merger, MergeOptions\n"
        "m = Merger(MergeOptions(ConflictPolicy.UPSTREAM_WINS), representation=PLAIN_DATA)\n"
        "r = m.merge_document({'a': 1, 'l': [{'name': 'x', 'v': 1}]}, {'a': 0, 'l': [{'name': 'x', 'v': 0}]},\n"
        "                     {'a': 2, 'b': 3, 'l': [{'name': 'x', 'v': 2}, {'name': 'y'}]}, None)\n"
        "print(r, [c.winner.value for c in m.conflicts], any(n.startswith('ruamel') for n in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "{'a': 2, 'l': [{'name': 'x', 'v': 2}, {'name': 'y'}], 'b': 3} ['upstream', 'upstream'] False"


def test_plain_data_hands_its_conflict_markers_back_with_their_paths() -> None:
    """Plain data holds no comment (issue 43): each marker comes back with its field's data path, for the caller to
    write onto the field's line; the data is local's and the ledger's records are the round-trip merge's."""
    merger = Merger(MergeOptions(ConflictPolicy.MARK), representation=PLAIN_DATA)
    local = {"a": 1, "s": {"l": [{"name": "x", "v": "l"}]}}
    merged = merger.merge_document(local, {"a": 0, "s": {"l": [{"name": "x", "v": "o"}]}},
                                   {"a": 2, "s": {"l": [{"name": "x", "v": "u"}]}}, None)
    assert merged == {"a": 1, "s": {"l": [{"name": "x", "v": "l"}]}}
    assert merger.pending == [(("a",), "# krm-merge:conflict upstream=2 origin=0"),
                              (("s", "l", 0, "v"), '# krm-merge:conflict upstream="u" origin="o"')]
    rt = Merger(MergeOptions(ConflictPolicy.MARK))
    rt.merge_document(load_rt(local), load_rt({"a": 0, "s": {"l": [{"name": "x", "v": "o"}]}}),
                      load_rt({"a": 2, "s": {"l": [{"name": "x", "v": "u"}]}}), None)
    assert merger.marked == rt.marked and rt.pending == []
