"""Splitting a YAML stream at its ``---`` lines keeps every byte, whatever the text (issue 33's quick path).

A text with no ``---`` at a line start is one document, answered without the
line-by-line pattern; any other is split at exactly those lines.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm.package import split_documents

SEPARATOR_LINE = re.compile(r"---[ \t]*(?:#[^\n]*)?\n?|---[ \t]+\S[^\n]*\n?")


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.sampled_from(["---", "--- # c", "--- !x", "----", " ---", "a: 1", "- x", "#---", "", "...", "b: |"]),
                max_size=8).map("\n".join) | st.text(alphabet="-\n a:#", max_size=30))
def test_a_stream_is_split_at_its_separator_lines_and_nothing_is_lost(text: str) -> None:
    separators, docs = split_documents(text)
    assert len(separators) == len(docs) >= 1
    assert "".join(s + d for s, d in zip(separators, docs)) == text
    for sep in separators[1:]:
        assert SEPARATOR_LINE.fullmatch(sep), sep
    if separators[0]:
        assert SEPARATOR_LINE.fullmatch(separators[0])
    for doc in docs:  # no separator line is left inside a document
        assert not any(SEPARATOR_LINE.fullmatch(line + "\n") for line in doc.split("\n")), doc
