"""krm/splice: the kpt-shaped splices write exactly kpt's lines, or decline."""

from __future__ import annotations

from krm_merge.krm import splice

RESOURCE = """\
apiVersion: v1
kind: ConfigMap
metadata: # a user's comment
  name: app
  annotations:
    a: 'x'
data:
  k: v
"""


def test_an_annotation_goes_after_the_last_one_single_quoted() -> None:
    out = splice.with_annotations(RESOURCE, {"internal.kpt.dev/upstream-identifier": "|ConfigMap|default|app"})
    assert out == RESOURCE.replace(
        "    a: 'x'\n", "    a: 'x'\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|app'\n"
    )


def test_annotations_block_is_added_after_the_last_metadata_entry() -> None:
    text = "kind: A\nmetadata:\n    name: x\n    namespace: y\nspec: {}\n"
    out = splice.with_annotations(text, {"k": "v"})
    assert out == "kind: A\nmetadata:\n    name: x\n    namespace: y\n    annotations:\n      k: 'v'\nspec: {}\n"


def test_a_layout_it_does_not_know_is_declined() -> None:
    assert splice.with_annotations("kind: A\nmetadata: {name: x}\n", {"k": "v"}) is None
    assert splice.with_annotations("- a\n", {"k": "v"}) is None
    assert splice.with_annotations(RESOURCE, {"k": "a\nb"}) is None  # not on one single-quoted line


def test_a_key_comment_goes_on_a_bare_line_only() -> None:
    text = "kind: A\nmetadata:\n  name: x\n"
    assert splice.with_key_comment(text, "metadata", "kpt-merge: /x") == "kind: A\nmetadata: # kpt-merge: /x\n  name: x\n"
    assert splice.with_key_comment(RESOURCE, "metadata", "kpt-merge: /app") == RESOURCE
    assert splice.with_key_comment(text, "metadata", "bad\x00") == text
