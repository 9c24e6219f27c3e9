"""ResourceList reading and writing: untouched items keep every byte."""

from __future__ import annotations

import pytest

from krm_merge.krm.resourcelist import read_resource_list, write_resource_list
from krm_merge.krm.results import KrmError

from .helpers import corpus_documents, resource_list

DOCS = corpus_documents()


def test_corpus_is_not_trivial() -> None:
    assert len(DOCS) >= 8


@pytest.mark.parametrize("name,doc", DOCS, ids=[n for n, _ in DOCS])
def test_untouched_item_round_trips_byte_for_byte(name: str, doc: str) -> None:
    text = resource_list([doc])
    rl = read_resource_list(text)
    assert len(rl.items) == 1
    assert rl.items[0].text == doc
    assert write_resource_list(rl) == text


def test_whole_corpus_list_round_trips() -> None:
    text = resource_list([d for _, d in DOCS])
    rl = read_resource_list(text)
    assert [o.text for o in rl.items] == [d for _, d in DOCS]
    assert write_resource_list(rl) == text


@pytest.mark.parametrize("name,doc", DOCS, ids=[n for n, _ in DOCS])
def test_general_reader_agrees_with_fast_reader(name: str, doc: str) -> None:
    """The ruamel-based fallback reads the same data as the fast line splitter."""
    from krm_merge.krm import resourcelist

    text = resource_list([doc])
    fast = resourcelist._read_fast(text)
    general = resourcelist._read_general(text)
    assert fast is not None
    assert fast.items[0].data == general.items[0].data


def test_general_reader_used_for_other_layouts() -> None:
    wide = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: a\n"
    )
    rl = read_resource_list(wide)
    assert rl.items[0].name == "a"
    as_json = '{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}]}'
    rl = read_resource_list(as_json)
    assert rl.items[0].name == "j"
    out = read_resource_list(write_resource_list(rl))
    assert out.items[0].data == rl.items[0].data


def test_legacy_v1_list_is_accepted() -> None:
    rl = read_resource_list("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n")
    assert rl.kind == "List" and rl.items[0].kind == "Secret"
    assert write_resource_list(rl).startswith("apiVersion: v1\nkind: List\n")


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("", "no input"),
        ("   \n", "no input"),
        ("items: [", "not valid YAML"),
        ("- a\n- b\n", "not a ResourceList"),
        ("apiVersion: v1\nkind: ConfigMap\n", "not a ResourceList"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n", "must be a list"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- just a string\n", "item 1"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- [1, 2]\n", "not an object"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: [1]\n", "functionConfig"),
    ],
)
def test_bad_input_is_a_clear_error(text: str, fragment: str) -> None:
    with pytest.raises(KrmError) as err:
        read_resource_list(text)
    assert fragment in err.value.message


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    bomb = "\n".join("    " + line for line in lines)
    text = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: bomb\n  data:\n" + bomb.replace("    ", "  ", 0) + "\n"
    )
    rl = read_resource_list(text)
    with pytest.raises(KrmError, match="aliases"):
        _ = rl.items[0].data


def test_results_and_exit_code_are_written() -> None:
    deployment = dict(DOCS)["deployment.yaml#0"]
    rl = read_resource_list(resource_list([deployment]))
    rl.results.error("bad thing", rl.items[0], field="spec.replicas", current=3, proposed=1)
    out = write_resource_list(rl)
    again = read_resource_list(out)
    assert again.items[0].text == deployment
    from krm_merge.krm import yamlio

    results = yamlio.load_data(out)["results"]
    assert results == [
        {
            "message": "bad thing",
            "severity": "error",
            "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"},
            "field": {"path": "spec.replicas", "currentValue": 3, "proposedValue": 1},
        }
    ]
    assert rl.results.exit_code() == 1


_HEAD = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"


@pytest.mark.parametrize("value", [
    '"a\non: v1 b"',                      # found by the fuzzer: a column-0 line read as a top-level key
    '"a\nresults:\n  b"',                 # a line shaped as the section the function replaces
    "'a\n- b'",                           # a line shaped as the next item
    '[a,\nfunctionConfig: {}]',           # a flow collection's lines
    '{a: "b",\n"c": d}',
])
def test_a_scalar_running_over_column_0_lines_is_read_whole(value: str) -> None:
    """libyaml does not ask a quoted scalar's or flow collection's lines to be indented, so a
    column-0 line inside one belongs to it: the item keeps it, and no line is lost on output."""
    import yaml

    text = _HEAD + "  metadata:\n    name: web\n  data:\n    k: " + value + "\n"
    expected = yaml.safe_load(text)["items"][0]
    rl = read_resource_list(text)
    assert len(rl.items) == 1 and rl.items[0].data == expected
    assert yaml.safe_load(write_resource_list(rl))["items"] == [expected]


@pytest.mark.parametrize("plain", ['x":"y: v1', 'note: say "hi', "it's: v1", 'k: a:"b"', "note: a 'b"])
def test_a_quote_in_a_plain_scalar_never_pairs_with_a_real_one(plain: str) -> None:
    """Found by the fuzzer: a quote inside a plain scalar (``apiVersio":"default: v1``) taken as opening one
    paired with the real quote of a scalar running over a column-0 line, which the fast reader then cut."""
    import yaml

    text = (_HEAD + "  " + plain + "\n  metadata:\n    name: web\n  data:\n    k: \"a\non: v1 b\"\n")
    expected = yaml.safe_load(text)["items"][0]
    rl = read_resource_list(text)
    assert len(rl.items) == 1 and rl.items[0].data == expected
    assert yaml.safe_load(write_resource_list(rl))["items"] == [expected]


@pytest.mark.parametrize("line", ['k: "a" # it\'s', "k: it's", "k: ['a', \"b\", {c: d}]", "k: 'it''s'",
                                  'k: "say \\"hi\\""', "k: a#[b"])
def test_closed_quotes_and_brackets_keep_the_fast_reader(line: str) -> None:
    from krm_merge.krm import resourcelist

    text = _HEAD + "  metadata:\n    name: web\n  data:\n    " + line + "\n"
    assert resourcelist._read_fast(text) is not None
