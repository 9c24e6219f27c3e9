"""An edit changes only its own lines of an item's text, also where ruamel prints the text differently (issue 33).

ruamel.yaml joins a long plain scalar wrapped over lines and prints an
explicit null as an empty value; the round-trip editor and the 3-way
merge's printer (``dump_like``) printed the whole item again, so one changed
field re-wrapped every long description of a CRD.  ``yamlio.carry_edits``
carries the lines an edit changed in ruamel's print onto the text, aligned
by ``yamlio.matching_lines``; the result is proven by reading it back.
"""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject

WRAPPED = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tokens.infra.nephio.org
  creationTimestamp: null
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        description: 'APIVersion defines the versioned schema of this representation
          of an object. Servers should convert recognized schemas to the latest
          internal value.'
        type: object
    served: true   
"""


def test_a_round_trip_edit_keeps_wrapped_strings_and_written_nulls() -> None:
    obj = KubeObject(WRAPPED)
    _ = obj.rt  # a round-trip tree already built: ruamel edits (the fast editor reads such scalars since issue 33)
    data = obj.copy_data()
    data["spec"]["versions"][0]["served"] = False
    data["metadata"]["labels"] = {"team": "a"}
    obj.set_data(data)
    assert obj.text == WRAPPED.replace("served: true   ", "served: false").replace(
        "  creationTimestamp: null\n", "  creationTimestamp: null\n  labels:\n    team: a\n")
    again = obj.copy_data()  # the tree kept for the next edit carries that one the same way
    again["spec"]["versions"][0]["name"] = "v1"
    obj.set_data(again)
    assert obj.text.count("\n          of an object.") == 1 and "  - name: v1\n" in obj.text


def test_the_merge_printer_keeps_wrapped_strings() -> None:
    tree = yamlio.load_rt(WRAPPED)
    unedited = copy.deepcopy(tree)
    tree["spec"]["versions"][0]["served"] = False
    assert yamlio.dump_like(tree, WRAPPED, unedited) == WRAPPED.replace("served: true   ", "served: false")


def test_the_merge_printer_takes_the_smallest_faithful_answer() -> None:
    """Upstream's lines (origin -> upstream) against ruamel's: a deleted null is one line, not a line of spaces."""
    origin = "kind: A\nmetadata:\n  name: a\n  creationTimestamp: null\nspec:\n  x: 1\n"
    upstream = "kind: A\nmetadata:\n  name: a\n  \nspec:\n  x: 2\n"
    local = "kind: A\nmetadata:\n  name: a\n  creationTimestamp: null\nspec:\n  x: 1\n  mine: yes\n"
    tree = yamlio.load_rt(local)
    unedited = copy.deepcopy(tree)
    del tree["metadata"]["creationTimestamp"]
    tree["spec"]["x"] = 2
    out = yamlio.dump_like(tree, local, unedited, (origin, upstream))
    assert out == "kind: A\nmetadata:\n  name: a\nspec:\n  x: 2\n  mine: yes\n"


def test_changed_lines_the_text_writes_differently_are_refused() -> None:
    text = "a: 1\nb: long\n  wrapped\nc: 3\n"
    before = "a: 1\nb: long wrapped\nc: 3\n"
    assert yamlio.carry_edits(text, before, "a: 2\nb: long wrapped\nc: 3\n") == "a: 2\nb: long\n  wrapped\nc: 3\n"
    assert yamlio.carry_edits(text, before, "a: 1\nb: other\nc: 3\n") is None  # that line is written otherwise
    assert yamlio.carry_edits(text, before, "a: 1\nb: long wrapped\nq: 0\nc: 3\n") == "a: 1\nb: long\n  wrapped\nq: 0\nc: 3\n"
    assert yamlio.carry_edits("a: 1\nb: 2", "a: 1\nb: 2\n", "a: 1\nb: 3\n") == "a: 1\nb: 3"  # its own final newline


LINES = st.lists(st.sampled_from(["a: 1", "b: 2", "  - x", "  - y", "c:", "# note", "", "d: |", "    text"]),
                 max_size=30)


@settings(max_examples=examples(300), deadline=None)
@given(LINES, st.integers(0, 10_000))
def test_matching_lines_pairs_equal_lines_in_order(lines: list[str], seed: int) -> None:
    rng = random.Random(seed)
    other = list(lines)
    for _ in range(rng.randint(0, 5)):
        at = rng.randint(0, len(other))
        if rng.random() < 0.5 and other:
            del other[min(at, len(other) - 1)]
        else:
            other.insert(at, rng.choice(["a: 1", "z: 9", "  - x", ""]))
    pairs = yamlio.matching_lines(lines, other)
    assert all(lines[i] == other[j] for i, j in pairs)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(pairs, pairs[1:]))
    assert yamlio.matching_lines(lines, list(lines)) == [(i, i) for i in range(len(lines))]


@settings(max_examples=examples(300), deadline=None)
@given(LINES, LINES)
def test_carrying_onto_the_printed_text_itself_gives_the_edit(before: list[str], after: list[str]) -> None:
    text, edited = "\n".join(before) + "\n", "\n".join(after) + "\n"
    assert yamlio.carry_edits(text, text, edited) == edited


def test_the_alignment_work_is_bounded_for_a_hostile_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """An upstream version that reverses the other's lines would make the anchor search quadratic: it stops."""
    scanned = [0]
    real = yamlio._unique_anchors

    def counting(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int) -> list[tuple[int, int]]:
        scanned[0] += (ahi - alo) + (bhi - blo)
        return real(a, alo, ahi, b, blo, bhi)

    monkeypatch.setattr(yamlio, "_unique_anchors", counting)
    lines = [f"k{i}: {i}" for i in range(5000)]
    pairs = yamlio.matching_lines(lines, lines[::-1])
    assert len(pairs) >= 1 and all(lines[i] == lines[::-1][j] for i, j in pairs)
    assert scanned[0] <= (yamlio.ALIGNMENT_WORK + 1) * 2 * len(lines) + 1000
