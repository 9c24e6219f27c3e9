"""krm/values: the one field path grammar, the one equality, the one resource label; yaml/layout; yamlio's read-back."""

from __future__ import annotations

import math
from typing import Any

import pytest

from krm_merge.krm import yamlio
from krm_merge.krm.values import Label, deep_equal, format_path, parse_path, resource_label
from krm_merge.merge3.conflicts import FieldRules, parse_rules, split_path
from krm_merge.promote.strategies import parse_field_path
from krm_merge.smp.path import ROOT, child, element, render
from krm_merge.yaml.layout import Layout, layout_of

PATHS: list[tuple[tuple[Any, ...], str]] = [
    (("spec", "containers", 0, "image"), "spec.containers[0].image"),
    (("metadata", "annotations", "a.b/c"), 'metadata.annotations["a.b/c"]'),
    (("data", 'say "hi"\\'), 'data["say \\"hi\\"\\\\"]'),
    (("spec", "containers", Label("name=app"), "image"), "spec.containers[name=app].image"),
    (("ключ", "$x", "a-b_c"), "ключ.$x.a-b_c"),
    ((), ""),
]


@pytest.mark.parametrize(("parts", "text"), PATHS)
def test_a_path_is_written_and_read_back_in_one_grammar(parts: tuple[Any, ...], text: str) -> None:
    assert format_path(parts) == text
    assert parse_path(text, labels=True, strict=True) == parts


@pytest.mark.parametrize("text", ["a..b", ".a", "a.", "a.[0]", "a[0]b", "a[", 'a["x]'])
def test_a_strict_parse_refuses_what_format_path_never_writes(text: str) -> None:
    with pytest.raises(ValueError):
        parse_path(text, labels=True, strict=True)


def test_a_lenient_parse_skips_stray_dots_and_refuses_labels_unless_asked() -> None:
    assert parse_path("a..b") == ("a", "b")
    with pytest.raises(ValueError, match="selector paths are not supported"):
        parse_path("a[name=x]")


def test_every_caller_uses_the_one_grammar() -> None:
    assert parse_field_path('metadata.annotations["a.b/c"]') == ("metadata", "annotations", "a.b/c")
    assert split_path("spec.containers[*].image") == ("spec", "containers", Label("*"), "image")
    path = element(child(child(ROOT, "metadata"), "annotations"), None, None, 3)
    assert render(child(path, "a.b")) == 'metadata.annotations[3]["a.b"]'


def test_a_conflict_rule_names_a_dotted_key_as_the_conflict_path_writes_it() -> None:
    rules = FieldRules.of(parse_rules({'metadata.annotations["a.b/c"]': "local-wins"}, kinds=False), (), "X")
    found = rules.find(format_path(("metadata", "annotations", "a.b/c")))
    assert found is not None and found.text == 'metadata.annotations["a.b/c"]: local-wins'
    assert rules.find(("metadata", "annotations", "a")) is None


@pytest.mark.parametrize(("a", "b"), [(1, 1.0), (True, 1), ("1", 1), ([1, 2], [2, 1]), ({"a": None}, {})])
def test_equality_is_type_aware(a: Any, b: Any) -> None:
    assert not deep_equal(a, b)


def test_nan_equals_nan_as_data() -> None:
    assert deep_equal({"x": [math.nan]}, {"x": [float("nan")]})
    assert not deep_equal(math.nan, 1.0)


def test_a_loader_subclass_is_its_base_kind() -> None:
    class Text(str):
        pass

    class Number(float):
        pass

    assert deep_equal(Text("a"), "a") and deep_equal(Number(1.5), 1.5) and not deep_equal(Number(1.0), 1)


@pytest.mark.parametrize(("parts", "label"), [
    (("Deployment", "app", "shop"), "Deployment/shop/app"), (("Deployment", "app", ""), "Deployment/app"),
    (("", "app", ""), "?/app"), (("", "", "ns"), ""),
])
def test_one_resource_label(parts: tuple[str, str, str], label: str) -> None:
    assert resource_label(*parts) == label


@pytest.mark.parametrize(("text", "layout"), [
    ("a:\n  b: 1\nl:\n- x\n", Layout(2, 2, 0, "\n")),
    ("a:\n    b: 1\nl:\n  -   x\n\n", Layout(4, 6, 2, "\n\n")),
    ("l:\n- # c\n  x: 1\nm:\n  - y\n", Layout(2, 4, 2, "\n")),  # a `- # c` shows no content column
])
def test_one_layout_detector(text: str, layout: Layout) -> None:
    assert layout_of(text) == layout


def test_the_printer_keeps_a_texts_layout() -> None:
    text = "a:\n    b: 1\nl:\n  -   x: 1\n      y: 2\n"
    assert yamlio.dump_like(yamlio.load_rt(text), None) != text
    assert yamlio.dump_in(yamlio.load_rt(text), layout_of(text)) == text


def test_the_read_back_check() -> None:
    assert yamlio.read_back_error("a: 1\n", {"a": 1}) is None
    assert yamlio.read_back_error("a: 1\n", {"a": 1.0}) == "does not read back as intended"
    assert yamlio.read_back_error("a: [\n", {"a": 1}).startswith("does not parse")
    assert yamlio.read_back_error("a: .nan\n---\nb: 1\n", [{"a": math.nan}, {"b": 1}], documents=True) is None


def test_the_comment_after_a_flow_collection_is_found_on_its_key() -> None:
    tree = yamlio.load_rt("a:\n- k: [x, y]  # eol\n# head of b\n- k: z\n")
    container, key, slot = yamlio.last_slot(tree["a"][0])
    assert (key, slot) == ("k", 2) and "# head of b" in container.ca.items[key][slot].value
    assert yamlio.dash_column(yamlio.load_rt("a:\n  -   x\n")["a"]) == 2


def test_a_rule_written_before_keys_were_quoted_still_matches() -> None:
    rules = FieldRules.of(parse_rules({"metadata.annotations.a.b/c": "local-wins"}, kinds=False), (), "X")
    assert rules.find(format_path(("metadata", "annotations", "a.b/c"))) is not None
