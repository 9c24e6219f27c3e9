"""YAML scalar rules: the only place that knows them.

Every reader, editor and printer of krm-merge asks this module

* how a plain scalar resolves (YAML 1.1 as Kubernetes reads it: ``sigs.k8s.io/yaml``
  is go-yaml v2, and PyYAML's safe loader resolves the same way; timestamps
  stay strings because Kubernetes objects hold none),
* when a string may be written plain and read back as the same string
  (kyaml's rule for new values, and the stricter rule promote uses for
  byte-exact splices that every reader must agree on),
* how to quote and escape a string, and how to read the escapes back.

Escapes follow go-yaml v3 (kyaml, kpt), which libyaml and ruamel.yaml share:
hexadecimal escapes in upper case, a no-break space (U+00A0) written as
itself (it is printable), only characters outside YAML's printable set
escaped.  One deliberate difference: characters beyond U+FFFF (emoji) are
written as themselves, as ruamel.yaml writes them; go-yaml and libyaml escape
them (``\\U0001F600``) only because their printable test stops at three UTF-8
bytes, and every reader reads both forms back alike.  A lone surrogate cannot
be written at all: go-yaml refuses the ``\\uD800`` escape ("invalid Unicode
character escape code"), so a file holding one could not be read by kpt or
kubectl.

No other module may define a YAML type table, a quoting rule or an escape
table: ``tests/krm/test_scalar_rules_home.py`` scans the sources for them.
"""

from __future__ import annotations

import functools
import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

# --- type resolution (YAML 1.1, Kubernetes' reading) -------------------------------

TIMESTAMP_TAG: Final = "tag:yaml.org,2002:timestamp"
STR_TAG: Final = "tag:yaml.org,2002:str"

# The plain words go-yaml v2 (and so Kubernetes) reads as booleans.  PyYAML's
# resolver knows all but the one-letter ones, which only go-yaml v2 reads.
YAML11_BOOLEAN_WORDS: Final = frozenset(
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF".split()
)

# PyYAML's implicit resolvers (its SafeLoader, so also the libyaml-backed loader),
# minus timestamps; anchored by ``fullmatch``.  tests/krm/test_fastyaml.py checks
# them against the loader.
BOOL_RX: Final = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")
FLOAT_RX: Final = re.compile(
    r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
INT_RX: Final = re.compile(
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
)
NULL_RX: Final = re.compile(r"~|null|Null|NULL|")
# PyYAML looks a resolver up by the scalar's first character.
_BOOL_FIRST: Final = frozenset("yYnNtTfFoO")
_NUMBER_FIRST: Final = frozenset("-+0123456789.")
_INT_FIRST: Final = frozenset("-+0123456789")
_BOOL: Final = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}

# The patterns below are compiled on first use (``functools.cache``): the
# resolvers above serve every run, these only some commands, and compiling all
# of them at import cost each command ~3 ms of start-up (the Unicode classes most).


# Plain scalars that are not strings for *some* reader: YAML 1.2 core/JSON
# numbers (go-yaml v3, kyaml), YAML 1.1 words (go-yaml v2), the merge key and
# the value indicator, dates and timestamps.
@functools.cache
def _non_string_any_reader() -> re.Pattern[str]:
    return re.compile(
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


# Strings kyaml double-quotes when it writes them as new values: what a YAML
# 1.1 reader (Kubernetes, go-yaml v2) would not read back as a string.
@functools.cache
def _kyaml_non_string() -> re.Pattern[str]:
    return re.compile(
        r"""^(?:
            y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
          | ~|null|Null|NULL|
          | [-+]?0b[0-1_]+
          | [-+]?0o?[0-7_]+
          | [-+]?(?:0|[1-9][0-9_]*)
          | [-+]?0x[0-9a-fA-F_]+
          | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
          | [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
          | [-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)
          | [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
          | \d{4}-\d{1,2}-\d{1,2}(?:[Tt ].*)?
        )$""",
        re.X,
    )


class UnsupportedScalar(ValueError):
    """A plain scalar the product reads only through a full YAML library (``<<``, ``=``, ``1:20.5``)."""


@functools.lru_cache(maxsize=8192)  # scalars repeat across items (keys, images, labels)
def resolve_plain(text: str) -> Any:
    """The value of a plain scalar as the libyaml-backed loader builds it (timestamps stay strings).

    Raises :class:`UnsupportedScalar` for the merge key, the value indicator and
    sexagesimal floats, which only the full loaders handle.
    """
    first = text[:1]
    if first in _BOOL_FIRST and BOOL_RX.fullmatch(text):
        return _BOOL[text.lower()]
    if first in _NUMBER_FIRST and first:
        if FLOAT_RX.fullmatch(text):
            return _construct_float(text)
        if INT_RX.fullmatch(text):
            return _construct_int(text)
    if (first in "~nN" or not text) and NULL_RX.fullmatch(text):
        return None
    if text in ("<<", "="):
        raise UnsupportedScalar("merge key or value tag")
    return text


def _construct_int(text: str) -> int:
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        return sign * _sexagesimal(value)
    return sign * int(value)


def _construct_float(text: str) -> float:
    value = text.replace("_", "").lower()
    sign = -1.0 if value[0] == "-" else 1.0
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        raise UnsupportedScalar("sexagesimal float")
    return sign * float(value)


def _sexagesimal(value: str) -> int:
    total = 0
    for part in value.split(":"):
        total = total * 60 + int(part)
    return total


def _yaml11_is_string(value: str) -> bool:
    """True when PyYAML's resolver (timestamps aside) types the plain ``value`` as a string."""
    first = value[:1]
    if first in _BOOL_FIRST and BOOL_RX.fullmatch(value):
        return False
    if first in _NUMBER_FIRST and first and FLOAT_RX.fullmatch(value):
        return False
    if first in _INT_FIRST and first and INT_RX.fullmatch(value):
        return False
    if (first in "~nN" or not value) and NULL_RX.fullmatch(value):
        return False
    return value not in ("<<", "=")


def resolves_as_string(value: str) -> bool:
    """True when ``value`` written as a plain scalar would be read as a string by every reader."""
    if value == "":
        return False
    if _non_string_any_reader().match(value):
        return False
    return _yaml11_is_string(value)


def without_timestamps(table: dict[Any, list[tuple[str, Any]]]) -> dict[Any, list[tuple[str, Any]]]:
    """A library's implicit-resolver table (PyYAML's or ruamel's) minus the timestamp resolver.

    Kubernetes objects hold no timestamps, only strings that look like them;
    a constructed timestamp would also be re-printed differently.
    """
    return {first: [(tag, rx) for tag, rx in entries if tag != TIMESTAMP_TAG] for first, entries in table.items()}


# --- when a string may be written plain -------------------------------------------

# Characters that cannot start a plain scalar (YAML's indicators).
INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
# ... of which `-x`, `?x`, `:x` are still plain in block context.
PLAIN_BAD_FIRST: Final = INDICATORS - {"-", "?", ":"}
_INDICATOR_ONLY: Final = frozenset("-?:")


# Flow-context plain scalars every reader agrees on.
@functools.cache
def _flow_plain() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]*")

# Strings every emitter (ruamel.yaml, libyaml, go-yaml) prints plain when they
# are not another type: what a text editor may write without asking an emitter.
# A `-` first is plain when another character of the set follows (`--v=2`; `-` alone and
# `---...` are quoted); after the first character none of these is an indicator in a block
# context (a container's `args: ["--ns=$(POD_NAMESPACE)"]` is plain to all three).
SIMPLE_PLAIN_VALUE: Final = re.compile(
    r"(?!---)(?:[A-Za-z0-9_/.$]|-(?=[A-Za-z0-9_/.$-]))[A-Za-z0-9_./:=+@$,()~^;*%<>!&?-]*")


# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def simple_plain_key() -> re.Pattern[str]:
    """Keys the fast editor writes plain when it adds them (the rest goes to the round-trip editor)."""
    return re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\/-]*")


# Characters a YAML stream may hold verbatim (c-printable) minus every YAML 1.1
# line break (\r, \n, NEL, LS, PS) and the BOM; anything else must be escaped.
# The slowest pattern of the module to compile (1.5 ms): ASCII text never needs it.
@functools.cache
def _one_line_printable() -> re.Pattern[str]:
    return re.compile(
        "[\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
    )


def needs_double_quotes(value: str) -> bool:
    """True when kyaml would double-quote a new string value (it would read as another type, or plain cannot hold it)."""
    if value == "" or _kyaml_non_string().match(value):
        return True
    return not plain_is_safe(value)


def plain_is_safe(value: str) -> bool:
    """Whether ``value`` can be written as a plain block scalar that reads back as itself (types aside)."""
    if value != value.strip() or "\n" in value or "\t" in value:
        return False
    if value in _INDICATOR_ONLY:
        return False
    first = value[0]
    if first in INDICATORS:
        # `-x`, `?x`, `:x` are fine when not followed by a space.
        if not (first in _INDICATOR_ONLY and len(value) > 1 and value[1] not in " \t"):
            return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    return all(ch.isprintable() for ch in value)


def is_one_line_printable(value: str) -> bool:
    """True when ``value`` holds no line break and no character that needs an escape."""
    if value.isascii():  # ASCII's printable characters are exactly 0x20-0x7e; tabs are allowed
        return value.isprintable() or value.replace("\t", " ").isprintable()
    return _one_line_printable().fullmatch(value) is not None


def can_be_plain(value: str, *, in_flow: bool) -> bool:
    """True when every reader reads ``value`` written plain back as the same string.

    Stricter than :func:`needs_double_quotes`: used where the text is spliced
    byte-exactly and read again by libyaml, go-yaml v2 and v3 alike.
    """
    if not value or not is_one_line_printable(value):
        return False
    if "\t" in value or value[0] == " " or value[-1] == " ":
        return False  # some readers (pure-Python PyYAML) stop a plain scalar at a tab
    first = value[0]
    if first in INDICATORS:
        if in_flow or first not in _INDICATOR_ONLY or len(value) == 1 or value[1] in " \t":
            return False
    if ": " in value or ":\t" in value or " #" in value or "\t#" in value or value.endswith(":"):
        return False
    if in_flow and not _flow_plain().fullmatch(value):
        return False  # readers disagree on `?`, `:`, `#` inside flow collections: stay simple
    if value in ("---", "...") or value.startswith(("--- ", "... ")):
        return False
    return resolves_as_string(value)


def dumper_writes_plain(value: str) -> bool:
    """True when the libyaml dumper (:class:`krm_merge.yaml.libyaml.Dumper`) writes ``value`` as a plain scalar.

    The dumper double-quotes what :func:`needs_double_quotes` says; of the rest, this accepts
    what every reader reads plain as itself (:func:`can_be_plain`) and starts with no document
    marker (libyaml quotes ``---x``) and no character beyond U+FFFF (libyaml's printable test
    stops at three UTF-8 bytes: it double-quotes and escapes an emoji).  Stricter than the
    emitter: a string it would still write plain may be refused here, never the other way round.
    """
    return (not needs_double_quotes(value) and can_be_plain(value, in_flow=False)
            and not value.startswith(("---", "...")) and (value.isascii() or max(value) <= "\uffff"))


def literal_can_hold(value: str) -> bool:
    """A literal block holds only printable text, and cannot start with a space or end lines in spaces."""
    lines = value.split("\n")
    return (
        all(line.isprintable() for line in lines)
        and not value.startswith((" ", "\t"))
        and not any(line.endswith((" ", "\t")) for line in lines)
    )


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


# --- quoting and escaping ------------------------------------------------------------

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


# What go-yaml escapes: quotes, backslashes, and everything outside YAML's
# printable set (C0/C1 controls, DEL, line separators, BOM, surrogates, non-characters).
@functools.cache
def _needs_escape() -> re.Pattern[str]:
    return re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]')


# The reading side: every escape YAML 1.1/1.2 defines.
_UNESCAPES: Final = {
    "0": "\0", "a": "\x07", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\x0b",
    "f": "\x0c", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
    "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}


@functools.cache
def _escape_rx() -> re.Pattern[str]:
    return re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


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
    """``value`` as a one-line double-quoted scalar (go-yaml's escapes); ValueError for a lone surrogate."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'  # nothing to escape (the usual case), no pattern needed
    return '"' + _needs_escape().sub(_escape_char, value) + '"'


def single_quoted(value: str) -> str | None:
    """``value`` as a one-line single-quoted scalar, or None if single quotes cannot hold it."""
    if not is_one_line_printable(value):
        return None
    return "'" + value.replace("'", "''") + "'"


def unescape_double(inner: str) -> str:
    """The string a one-line double-quoted scalar's inside (without the quotes) holds."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in _HEX_ESCAPES and len(code) > 1:
            return chr(int(code[1:], 16))
        if code in _UNESCAPES:
            return _UNESCAPES[code]
        raise UnsupportedScalar(f"unknown escape \\{code}")

    if "\\" not in inner:
        return inner
    return _escape_rx().sub(one, inner)


# A quoted scalar that opens and closes on one line, as a regular expression
# (double-quoted without escapes, or single-quoted without a doubled quote).
ONE_LINE_QUOTED = r"""(?:"[^"\\\n]*"|'[^'\n]*')"""


def closing_quote(text: str, start: int, quote: str) -> int:
    """The column of the ``quote`` (``'`` or ``"``) that closes a quoted scalar whose text goes on at
    ``text[start]``; -1 when it goes on past ``text`` (a scalar over several lines).

    Inside single quotes ``''`` is a quote; inside double quotes a quote after an odd run of
    backslashes is escaped.
    """
    at = start
    while True:
        k = text.find(quote, at)
        if k < 0:
            return -1
        if quote == "'":
            if text.startswith("'", k + 1):
                at = k + 2
                continue
            return k
        backslashes = k - at - len(text[at:k].rstrip("\\"))
        if backslashes % 2 == 0:
            return k
        at = k + 1
