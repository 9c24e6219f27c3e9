"""Marker grammar and placement rules (upstream's, see docs/promote.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.promote.document import parse_document
from krm_merge.promote.engine import promote_text
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.locate import find_marked_fields
from krm_merge.promote.markers import marker_value

KEY = "$promotion"


@pytest.mark.parametrize("comment", [
    '# {"$promotion": "a:b:c"}',
    '#{"$promotion": "a:b:c"}',
    '## {"$promotion": "a:b:c"}',
    '#   {  "$promotion"  :  "a:b:c"  }   ',
    '# {"$promotion": "a:b:c", "note": "x"}',
    '# {"$promotion": "x:y:z", "$promotion": "a:b:c"}',  # last duplicate wins (Go)
    '#\t{"$promotion":"a:b:c"}\t',
])
def test_valid_markers(comment: str) -> None:
    assert marker_value(comment, KEY) == "a:b:c"


@pytest.mark.parametrize("comment", [
    '# {"$promotion": "a:b:c", "n": 1}',  # non-string value anywhere
    '# {"$promotion": "a:b:c"} bump me',  # trailing text
    "# {'$promotion': 'a:b:c'}",  # single quotes
    '# {$promotion: "a:b:c"}',  # unquoted key
    '# {"$promotion": "a:b:c",}',  # trailing comma
    '# {"$Promotion": "a:b:c"}',  # key is case-sensitive
    '# ["$promotion", "a:b:c"]',
    '# {"$promotion": ["a:b:c"]}',
    '# {"$promotion": null}',
    '# note {"$promotion": "a:b:c"}',
    '# {"$promotion": {"v": "a:b:c"}}',
])
def test_invalid_markers(comment: str) -> None:
    assert marker_value(comment, KEY) is None


def _set(text: str, value: str = "NEW", marker: str = "a:b:c") -> str:
    return promote_text(text, KEY, {marker: value}).text


M = '# {"$promotion": "a:b:c"}'


def test_value_is_compared_exactly() -> None:
    text = f'a: 1 # {{"$promotion": "a:b:c "}}\nb: 2 # {{"$promotion": "a:B:c"}}\nc: 3 {M}\n'
    assert _set(text) == text.replace("c: 3", "c: NEW")


def test_line_comment_beats_head_comment() -> None:
    # A line comment that is a marker decides, even for another environment.
    text = f'{M}\nversion: 1.0 # {{"$promotion": "a:b:other"}}\n'
    assert _set(text) == text


def test_head_comment_used_when_line_comment_is_no_marker() -> None:
    text = f"{M}\nversion: 1.0 # pinned by hand\n"
    assert _set(text) == f"{M}\nversion: NEW # pinned by hand\n"


def test_multi_line_head_comment_is_no_marker() -> None:
    text = f"# set by the pipeline\n{M}\nversion: 1.0\n"
    assert _set(text) == text
    _, malformed = find_marked_fields(parse_document(text), KEY)
    assert [m.line for m in malformed] == [2] and "marks no field" in malformed[0].reason


def test_head_comment_deeper_than_next_line_is_a_foot_comment() -> None:
    text = f"a:\n  x: 1\n  {M}\nb: 2\n"
    assert _set(text) == text


def test_line_comment_of_an_item_hides_its_head_comment() -> None:
    # Upstream reads one comment per node, the line comment first.
    text = f"tags:\n  {M}\n  - 1.0 # pinned\n"
    assert _set(text) == text
    # A marker above a key belongs to the key, so the value's own line comment does not hide it.
    assert _set(f"{M}\nv: 1.0 # pinned\n") == f"{M}\nv: NEW # pinned\n"


def test_head_comment_on_sequence_item_and_value_line() -> None:
    text = f"tags:\n  {M}\n  - 1.0\n  - 2.0\nv:\n  {M}\n  3.0\n"
    assert _set(text) == f"tags:\n  {M}\n  - NEW\n  - 2.0\nv:\n  {M}\n  NEW\n"


def test_marker_in_block_scalar_content_is_text() -> None:
    text = f"script: |\n  echo hi {M}\n  {M}\nv: 1\n"
    assert _set(text) == text


def test_hash_inside_quotes_is_not_a_comment() -> None:
    text = f"a: 'x {M}'\nb: \"y # {{\\\"$promotion\\\": \\\"a:b:c\\\"}}\"\n"
    assert _set(text) == text


def test_empty_value_is_set() -> None:
    assert _set(f"version: {M}\nnext: 1\n") == f"version: NEW {M}\nnext: 1\n"
    assert _set(f"version:   {M}\n") == f"version: NEW   {M}\n"


def test_stale_tag_dropped_anchor_kept() -> None:
    text = f"a: &v !!float 1.9 {M}\nb: *v\n"
    assert _set(text, "1.10") == f'a: &v "1.10" {M}\nb: *v\n'


def test_every_marked_field_in_every_document_is_set() -> None:
    text = f"a: 1 {M}\n---\nb:\n- x {M}\n- y\n...\n---\nc: z\n"
    assert _set(text) == f"a: NEW {M}\n---\nb:\n- NEW {M}\n- y\n...\n---\nc: z\n"


@pytest.mark.parametrize("text,kind", [
    (f"tags: [a, b] {M}\n", "flow sequence"),
    (f"cfg: {{a: b}} {M}\n", "flow mapping"),
    (f"spec: {M}\n  a: b\n", "mapping"),
    (f"{M}\nspec:\n  - a\n", "sequence"),
    (f"items:\n{M}\n- name: x\n  image: y\n", "mapping"),
    (f"a: &x 1\nb: *x {M}\n", "alias"),
])
def test_marker_on_non_scalar_is_an_error(text: str, kind: str) -> None:
    with pytest.raises(PromoteError, match=f"on a {kind}"):
        _set(text)


def test_marker_on_non_scalar_for_other_environment_is_ignored() -> None:
    text = f'tags: [a, b] # {{"$promotion": "a:b:qa"}}\n'
    assert _set(text) == text


def test_list_items_are_edited_in_place() -> None:
    text = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n"
            f"    v: 1.0 {M}\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    v: 1.0\n")
    outcome = promote_text(text, KEY, {"a:b:c": "2.0.1"})
    assert outcome.text == text.replace(f"v: 1.0 {M}", f"v: 2.0.1 {M}")
    assert [c.path for c in outcome.changes] == ["items[0].data.v"]


def test_malformed_marker_reported_not_applied() -> None:
    doc = parse_document("a: 1 # {'$promotion': 'a:b:c'}\nb: 2 # {\"$promotion\": \"a:b:c\",}\n")
    found, malformed = find_marked_fields(doc, KEY)
    assert found == [] and [m.line for m in malformed] == [2]


def test_invalid_yaml_is_an_error_with_line() -> None:
    with pytest.raises(PromoteError, match="not valid YAML") as info:
        _set(f"a: 1 {M}\nb: [\n")
    assert info.value.line is not None


def test_already_current_value_is_matched_but_unchanged() -> None:
    outcome = promote_text(f"a: NEW {M}\n", KEY, {"a:b:c": "NEW"})
    assert outcome.matched == 1 and not outcome.changes


def test_crlf_and_templates_outside_the_line_untouched() -> None:
    text = ("# head\r\n---\r\nname: x\r\n\r\nlabels:\r\n  app: '{{ .Values.name }}'\r\n"
            f"v: 1.0 {M}\r\nscript: |\r\n  a\r\n\r\n  b\r\n")
    assert _set(text) == text.replace("v: 1.0", "v: NEW")


def test_block_scalar_target_keeps_block_style() -> None:
    text = f"notes: | {M}\n  old\n  text\nnext: 1\n"
    assert _set(text, "new\ntext\n") == f"notes: | {M}\n  new\n  text\nnext: 1\n"
    assert _set(text, "one line") == f"notes: |- {M}\n  one line\nnext: 1\n"
    # A value a literal block cannot hold becomes double-quoted, the comment stays on the line.
    assert _set(text, " lead\n") == f'notes: " lead\\n" {M}\nnext: 1\n'


@pytest.mark.parametrize("value,plain_out", [
    ("1.10", '"1.10"'), ("true", '"true"'), ("0123", '"0123"'), ("null", '"null"'), ("", '""'),
    ("#", '"#"'), ("a: b", '"a: b"'), (" x", '" x"'), ("6.3.0", "6.3.0"), ("v1", "v1"),
    ("a:b", "a:b"), ("x#y", "x#y"), ("-x", "-x"), ("it's", "it's"),
])
def test_plain_quoting(value: str, plain_out: str) -> None:
    assert _set(f"v: old {M}\n", value) == f"v: {plain_out} {M}\n"


@pytest.mark.parametrize("value,single_out", [
    ("it's", "'it''s'"), ("1.10", "'1.10'"), ("a\nb", '"a\\nb"'), ("", "''"),
])
def test_single_quoted_kept(value: str, single_out: str) -> None:
    assert _set(f"v: 'old' {M}\n", value) == f"v: {single_out} {M}\n"


def test_double_quoted_escapes() -> None:
    assert _set(f'v: "old" {M}\n', 'C:\\x "q"\n\u2028😀') == f'v: "C:\\\\x \\"q\\"\\n\\L😀" {M}\n'


def _json_reading(comment: str) -> dict[str, str] | None:
    """The marker grammar by json.loads alone: the reference the one-pair shortcut must match."""
    import json

    def strings_only(pairs: list[tuple[str, object]]) -> dict[str, str]:
        if not all(isinstance(v, str) for _, v in pairs):
            raise ValueError
        return dict(pairs)  # type: ignore[arg-type]

    try:
        parsed = json.loads(comment.lstrip("#"), object_pairs_hook=strings_only)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None



_pieces = st.sampled_from(['{', '}', '"', ':', ',', ' ', '\t', '\r', '\n', '#', '\\', '\\"', '\\u0041', '\x01',
                           '\x7f', '$promotion', 'ns:app:prod', 'é', '1', 'true', 'null', '[', ']', "'"])


@settings(max_examples=examples(2000), deadline=None)
@given(st.one_of(
    st.lists(_pieces, max_size=14).map("".join),
    st.tuples(st.sampled_from(["#", "# ", "##", "#\t"]), st.sampled_from(["", " ", "\t", "\n"]),
              st.text(max_size=12), st.text(max_size=12), st.sampled_from(["", " ", "\r", " x"])).map(
        lambda t: f'{t[0]}{t[1]}{{"{t[2]}": "{t[3]}"}}{t[4]}'),
))
def test_the_one_pair_shortcut_reads_markers_as_json_does(comment: str) -> None:
    from krm_merge.promote.markers import parse_marker_object

    assert parse_marker_object(comment) == _json_reading(comment)
