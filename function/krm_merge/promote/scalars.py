"""Writing a string as a YAML scalar that reads back as exactly that string.

The rules are conservative on purpose: a value is left plain only when every common reader
(libyaml/PyYAML with YAML 1.1 resolution, go-yaml/kyaml with YAML 1.2 core resolution)
reads it back as the same *string*; otherwise it is quoted.  No tag is ever written.
"""

from __future__ import annotations

import re
from typing import Final

import yaml

PLAIN: Final = ""
SINGLE: Final = "'"
DOUBLE: Final = '"'
LITERAL: Final = "|"
FOLDED: Final = ">"

# Characters a YAML stream may hold verbatim (c-printable) minus every YAML 1.1 line break
# (\r, \n, NEL, LS, PS) and the BOM; anything else must be escaped in double quotes.
_ONE_LINE_PRINTABLE: Final = re.compile(
    "[\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)
_INDICATOR_START: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_PLAIN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]*")

# YAML 1.2 core / JSON schema and YAML 1.1 forms that PyYAML's resolver does not flag but
# go-yaml (kyaml, kubectl) or a YAML 1.1 reader would read as a non-string.
_NON_STRING_EXTRA: Final = re.compile(
    r"""^(?:
        [-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?   # ints, floats, 1e3
      | [-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
      | 0o[0-7_]+ | 0x[0-9a-fA-F_]+ | 0b[01_]+
      | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
      | y|Y|n|N|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF
      | true|True|TRUE|false|False|FALSE|null|Null|NULL|~
      | = | <<
      | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*                        # timestamps and dates
    )$""",
    re.VERBOSE,
)
_STR_TAG: Final = "tag:yaml.org,2002:str"
_resolver: Final = yaml.resolver.Resolver()


def resolves_as_string(value: str) -> bool:
    """True when ``value`` written as a plain scalar would be read as a string by every reader."""
    if value == "":
        return False
    if _NON_STRING_EXTRA.match(value):
        return False
    tag: str = _resolver.resolve(yaml.ScalarNode, value, (True, False))
    return tag == _STR_TAG


def is_one_line_printable(value: str) -> bool:
    """True when ``value`` holds no line break and no character that needs an escape."""
    return _ONE_LINE_PRINTABLE.fullmatch(value) is not None


def can_be_plain(value: str, *, in_flow: bool) -> bool:
    """True when ``value`` can be written as a plain scalar and reads back as the same string."""
    if not value or not is_one_line_printable(value):
        return False
    if "\t" in value or value[0] == " " or value[-1] == " ":
        return False  # some readers (pure-Python PyYAML) stop a plain scalar at a tab
    first = value[0]
    if first in _INDICATOR_START:
        # `-x`, `?x`, `:x` are plain in block context when a non-space follows.
        if in_flow or first not in "-?:" or len(value) == 1 or value[1] in " \t":
            return False
    if ": " in value or ":\t" in value or " #" in value or "\t#" in value or value.endswith(":"):
        return False
    if in_flow and not _FLOW_PLAIN.fullmatch(value):
        return False  # readers disagree on `?`, `:`, `#` inside flow collections: stay simple
    if value in ("---", "...") or value.startswith(("--- ", "... ")):
        return False
    return resolves_as_string(value)


def single_quoted(value: str) -> str | None:
    """``value`` as a one-line single-quoted scalar, or None if single quotes cannot hold it."""
    if not is_one_line_printable(value):
        return None
    return "'" + value.replace("'", "''") + "'"


_DOUBLE_ESCAPES: Final = {
    "\\": "\\\\",
    '"': '\\"',
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
_NEEDS_ESCAPE: Final = re.compile(
    '[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]'
)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    known = _DOUBLE_ESCAPES.get(char)
    if known is not None:
        return known
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        raise ValueError(f"value holds a lone surrogate U+{code:04X}, which no YAML file can hold")
    return f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}"


def double_quoted(value: str) -> str:
    """``value`` as a one-line double-quoted scalar; every string can be written this way."""
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


def literal_block_body(value: str, indent: str) -> tuple[str, list[str]] | None:
    """Chomping indicator and content lines for ``value`` as a literal block, or None.

    None when a literal block cannot hold the value without an indentation indicator or
    ``keep`` chomping (which would swallow blank lines that follow the block).
    """
    if value == "" or value.endswith("\n\n") or value == "\n":
        return None
    if any(not is_one_line_printable(line) for line in value.split("\n")):
        return None
    body = value[:-1] if value.endswith("\n") else value
    lines = body.split("\n")
    first_content = next((line for line in lines if line.strip(" ") != ""), None)
    if first_content is None or first_content[0] in " \t":
        return None
    if any(line.strip(" ") == "" and line != "" for line in lines):
        return None  # whitespace-only lines would be read as less-indented empty lines
    if lines[0] == "":
        return None  # leading empty line: keep the simple cases only
    chomp = "" if value.endswith("\n") else "-"
    return chomp, [indent + line if line else "" for line in lines]


def render_inline(value: str, style: str, *, in_flow: bool) -> str:
    """Render ``value`` on one line, keeping ``style`` (plain/single/double) when it can hold it."""
    if style == PLAIN and can_be_plain(value, in_flow=in_flow):
        return value
    if style == SINGLE:
        quoted = single_quoted(value)
        if quoted is not None:
            return quoted
    return double_quoted(value)
