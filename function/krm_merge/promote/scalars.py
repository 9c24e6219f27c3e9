"""Writing a string as a YAML scalar that reads back as exactly that string.

The rules live in :mod:`krm_merge.yaml.scalars` (the one home of YAML scalar
rules); this module keeps promote's names for them and adds the style choice
of a byte-exact splice.  A value is left plain only when every common reader
(libyaml/PyYAML with YAML 1.1 resolution, go-yaml/kyaml with YAML 1.2 core
resolution) reads it back as the same *string*; otherwise it is quoted.  No
tag is ever written.
"""

from __future__ import annotations

from krm_merge.yaml.scalars import (
    can_be_plain,
    double_quoted,
    is_one_line_printable,
    literal_block_body,
    resolves_as_string,
    single_quoted,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "DOUBLE", "FOLDED", "LITERAL", "PLAIN", "SINGLE", "can_be_plain", "double_quoted", "is_one_line_printable",
    "literal_block_body", "render_inline", "resolves_as_string", "single_quoted",
]

PLAIN: Final = ""
SINGLE: Final = "'"
DOUBLE: Final = '"'
LITERAL: Final = "|"
FOLDED: Final = ">"


def render_inline(value: str, style: str, *, in_flow: bool) -> str:
    """Render ``value`` on one line, keeping ``style`` (plain/single/double) when it can hold it."""
    if style == PLAIN and can_be_plain(value, in_flow=in_flow):
        return value
    if style == SINGLE:
        quoted = single_quoted(value)
        if quoted is not None:
            return quoted
    return double_quoted(value)
