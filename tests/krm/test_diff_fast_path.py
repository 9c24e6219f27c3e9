"""files.unified_diff: the same-length fast path is byte-identical to difflib's diff.

The reference is what ``files.unified_diff`` did before the fast path: every
file through :func:`difflib.unified_diff`.  The generated texts mix unique and
repeated lines (repeats are what can make SequenceMatcher pair lines other
than by index, where the fast path must give way to difflib), near the start
and end, adjacent, with or without a final newline, CRLF, and long enough for
SequenceMatcher's "popular line" heuristic (200 lines and more).
"""

from __future__ import annotations

import difflib

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge import files


def difflib_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


_POOL = ["", "---", "  labels:", "    app: web", "spec:", "x"]


@st.composite
def same_length_edits(draw: st.DrawFn) -> tuple[str, str]:
    size = draw(st.integers(1, 260))
    repeats = draw(st.sampled_from([0, 1, 3, 10]))  # in 10 lines: how many from the small pool
    line = st.integers(0, 9).flatmap(
        lambda w: st.sampled_from(_POOL) if w < repeats else st.integers(0, 10**6).map(lambda k: f"key{k}: value")
    )
    old = draw(st.lists(line, min_size=size, max_size=size))
    new = list(old)
    positions = st.one_of(
        st.integers(0, size - 1), st.sampled_from([0, size - 1]), st.integers(max(0, size - 4), size - 1)
    )
    for _ in range(draw(st.integers(1, 6))):
        at = draw(positions)
        width = draw(st.integers(1, 3))
        for i in range(at, min(size, at + width)):
            new[i] = draw(st.one_of(line, st.integers(0, 10**6).map(lambda k: f"new{k}: value")))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    final = draw(st.booleans())
    return end.join(old) + (end if final else ""), end.join(new) + (end if draw(st.booleans()) == final else "")


@settings(max_examples=examples(400), deadline=None)
@given(same_length_edits())
def test_same_length_diffs_are_difflibs(edit: tuple[str, str]) -> None:
    before, after = edit
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    fast = files._same_length_diff(old, new, "a/f.yaml", "b/f.yaml") is not None
    event("fast path" if fast else "difflib")
    assert files.unified_diff([("f.yaml", before, after)]) == difflib_diff("f.yaml", before, after)


def _text(lines: list[str], end: str = "\n", final: bool = True) -> str:
    return end.join(lines) + (end if final else "")


_BASE = [f"line{i}: v" for i in range(40)]


def _replaced(positions: list[int], base: list[str] = _BASE) -> list[str]:
    return [f"changed{i}: w" if i in positions else line for i, line in enumerate(base)]


@pytest.mark.parametrize(
    "positions",
    [[0], [39], [0, 39], [5, 6, 7], [10, 17], [10, 18], [10, 16], [2, 12, 13, 30, 37], list(range(40))],
    ids=lambda p: ",".join(map(str, p)) if len(p) < 10 else "all",
)
@pytest.mark.parametrize("end,final", [("\n", True), ("\n", False), ("\r\n", True), ("\r\n", False)])
def test_in_place_edits_skip_difflib(positions: list[int], end: str, final: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after = _text(_BASE, end, final), _text(_replaced(positions), end, final)
    expected = difflib_diff("f.yaml", before, after)
    monkeypatch.setattr(difflib, "unified_diff", None)  # the fast path must not need it
    assert files.unified_diff([("f.yaml", before, after)]) == expected


def test_long_files_with_popular_lines_skip_difflib(monkeypatch: pytest.MonkeyPatch) -> None:
    base = [line for i in range(100) for line in (f"name: item{i}", "  labels: {}")]  # 200 lines, half popular
    before, after = _text(base), _text(_replaced([0, 50, 196], base))
    expected = difflib_diff("f.yaml", before, after)
    monkeypatch.setattr(difflib, "unified_diff", None)
    assert files.unified_diff([("f.yaml", before, after)]) == expected


@pytest.mark.parametrize(
    "before,after",
    [
        ("A\nX\nA\nA\n", "A\nA\nA\nA\n"),  # SequenceMatcher pairs the As off the diagonal
        ("a\nb\n", "b\na\n"),  # swapped lines
        (_text(["p"] * 210 + ["q"]), _text(["p"] * 105 + ["r"] + ["p"] * 104 + ["q"])),  # autojunk
    ],
    ids=["repeated-lines", "swap", "popular-only-run"],
)
def test_edits_the_fast_path_cannot_pair_go_to_difflib(before: str, after: str) -> None:
    assert files.unified_diff([("f.yaml", before, after)]) == difflib_diff("f.yaml", before, after)
