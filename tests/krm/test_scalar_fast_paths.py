"""The ASCII fast paths of ``krm_merge.yaml.scalars`` agree with its patterns.

ASCII text skips the (lazily compiled) Unicode patterns.  Appending one
printable non-ASCII character (``é``, which needs no escape) sends the same
text through the pattern, so the two paths are compared without reaching
into the module.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.yaml import scalars

_ASCII = st.text(st.characters(max_codepoint=0x7F), max_size=30)
_NON_ASCII = "\u00e9"


def _yaml_one_line_printable(value: str) -> bool:
    return all(ch == "\t" or 0x20 <= ord(ch) <= 0x7E for ch in value)


@settings(max_examples=examples(500), deadline=None)
@given(_ASCII)
def test_one_line_printable_ascii_path_is_the_rule(value: str) -> None:
    assert scalars.is_one_line_printable(value) == _yaml_one_line_printable(value)
    assert scalars.is_one_line_printable(value + _NON_ASCII) == scalars.is_one_line_printable(value)


@settings(max_examples=examples(500), deadline=None)
@given(_ASCII)
def test_double_quoted_ascii_path_is_the_pattern_path(value: str) -> None:
    quoted = scalars.double_quoted(value)
    assert scalars.double_quoted(value + _NON_ASCII) == quoted[:-1] + _NON_ASCII + '"'
    assert scalars.unescape_double(quoted[1:-1]) == value


def test_the_fast_paths_answer_the_edge_cases() -> None:
    assert scalars.is_one_line_printable("")
    assert scalars.is_one_line_printable("a\tb")
    assert not scalars.is_one_line_printable("a\nb")
    assert not scalars.is_one_line_printable("a\x7fb")
    assert not scalars.is_one_line_printable("a\rb")
    assert scalars.double_quoted("plain text") == '"plain text"'
    assert scalars.double_quoted('say "hi"\\') == '"say \\"hi\\"\\\\"'
    assert scalars.double_quoted("tab\there") == '"tab\\there"'
    assert scalars.unescape_double("no escapes") == "no escapes"
