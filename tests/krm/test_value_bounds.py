"""The one size rule of a value krm-merge shows or records (``krm/values.py``): cut, counted, never expanded."""

from __future__ import annotations

import json
import re

import pytest

from krm_merge.krm.values import MESSAGE_VALUE_CHARS, render_value, resource_label, value_json
from krm_merge.merge3.nodes import render, to_plain_data
from krm_merge.yaml import load

from tests.helpers import count_calls


def deep(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"k": [value]}
    return value


def test_short_values_read_as_before() -> None:
    """Scalars as they are, collections as json.dumps writes them (what messages said before the bound)."""
    for value in ("text", 3, 1.5, True, None, {"a": [1, "é", None]}, [{"b": "c"}], {}):
        expected = "null" if value is None else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
        assert render_value(value) == expected
        assert value_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_a_long_value_is_cut_visibly_with_its_size() -> None:
    text = render_value("x" * 5000)
    assert text == "x" * MESSAGE_VALUE_CHARS + "\u2026 (cut: 1000 of about 5002 characters)"
    cut = render_value({"list": ["y" * 600, "z" * 600]}, 100)
    assert cut.startswith('{"list": ["yyy') and re.search("\u2026 \\(cut: 100 of about 12[0-9][0-9] characters\\)$", cut)
    assert value_json(["y" * 600], 100) is None and value_json(["y" * 60], 100) == '["' + "y" * 60 + '"]'


def test_a_thousand_aliases_of_a_large_string_cost_what_the_shown_part_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 aliases of one 1 MB string (1 GB once written out): a bounded rendering, counted in calls."""
    monkeypatch.setenv(load.MAX_ALIAS_ENV, "2000")  # the loader's own bound is not what is tested here
    big = "x" * 1_000_000
    data = load.load_data("base: &b " + big + "\nlist: [" + ", ".join(["*b"] * 1000) + "]\n")
    assert data["list"][0] is data["list"][999]  # the loader shares an aliased value
    out: list[object] = []
    calls = count_calls(lambda: out.extend((render_value(data), value_json(data))))
    shown, recorded = out
    assert len(shown) < 1100 and "of about 1001004" in shown and recorded is None
    assert calls < 20_000, calls  # the 1,000 list entries are counted once each (value_size), not rendered


def test_any_depth_the_loader_accepts_renders_converts_and_records() -> None:
    value = deep(load.MAX_DEPTH)
    assert render_value(value).endswith("characters)")
    recorded = value_json(value)
    assert recorded is not None and recorded.count("[") == load.MAX_DEPTH
    assert json.loads(value_json(deep(100))) == deep(100)  # (json's reader recurses: a shallower one read back)
    assert value_json(to_plain_data(value)) == recorded  # (== on the values would recurse)


def test_round_trip_trees_keep_what_aliases_share() -> None:
    """``to_plain_data`` of a ruamel tree: one plain string per aliased node, not a copy per alias."""
    tree = load.load_rt('base: &b "' + "x" * 1000 + '"\nlist: [' + ", ".join(["*b"] * 50) + "]\n")
    plain = to_plain_data(tree)
    assert all(item is plain["list"][0] for item in plain["list"]) and plain["base"] is plain["list"][0]
    assert type(plain["base"]) is str
    assert render(tree["list"]).endswith("characters)") and len(render(tree["list"])) < 1100


def test_a_resource_named_a_megabyte_long_is_named_in_253_characters() -> None:
    label = resource_label("ConfigMap", "n" * 1_000_000, "ns")
    assert label.startswith("ConfigMap/ns/" + "n" * 253 + "\u2026 (cut: 253 of about 1000002") and len(label) < 320
    assert resource_label("ConfigMap", "web", "ns") == "ConfigMap/ns/web"
