"""New values as text, exactly as the round-trip (ruamel.yaml) path prints them."""

from __future__ import annotations

from krm_merge.krm.fastyaml.nodes import Unsupported
from krm_merge.yaml import scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# New plain keys and values the editor writes itself; anything else goes to the fallback.
_SAFE_NEW_PLAIN = scalars.SIMPLE_PLAIN_VALUE


def scalar_text(value: Any, like: str) -> str:
    """A new scalar's text; strings keep the old quote style when it can hold them."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise Unsupported("new float")
    if like == "double" and "\n" in value and not scalars.literal_can_hold(value):
        # the round-trip editor keeps such a string double-quoted, its line breaks escaped on one line (kpt's
        # print of a block scalar with trailing blanks); one it can print as a literal block it does so
        text = value.replace("\n", "")
        if text.isascii() and text.isprintable():
            return scalars.double_quoted(value)
    if "\n" in value or not value.isascii() or not value.isprintable():
        raise Unsupported("string needs care")
    if like == "single":
        return "'" + value.replace("'", "''") + "'"
    if like == "double" or scalars.needs_double_quotes(value):
        return scalars.double_quoted(value)
    if not _SAFE_NEW_PLAIN.fullmatch(value):
        raise Unsupported("plain string the emitter may quote")
    return value


def literal_block(value: Any, pad: str) -> list[str] | None:
    """``value`` as the round-trip editor prints a literal block: its header (``|`` or ``|-``), then its lines.

    The lines are at ``pad``, empty lines empty.  None when that editor would
    not print ``value`` as a plain literal block: not a string with a line
    break a literal can hold (:func:`krm_merge.yaml.scalars.literal_can_hold`),
    or one that needs an indentation indicator or ``keep`` chomping
    (:func:`krm_merge.yaml.scalars.literal_block_body`).
    """
    if not isinstance(value, str) or "\n" not in value or not scalars.literal_can_hold(value):
        return None
    body = scalars.literal_block_body(value, pad)
    if body is None:
        return None
    chomp, lines = body
    return ["|" + chomp] + lines


def _key_text(key: Any) -> str:
    if not isinstance(key, str) or not scalars.simple_plain_key().fullmatch(key) or scalars.needs_double_quotes(key):
        raise Unsupported("key needs quoting")
    return key


def render_entry(key: Any, value: Any, indent: int) -> list[str]:
    pad = " " * indent
    head = pad + _key_text(key) + ":"
    if isinstance(value, (dict, list)):
        if not value:
            return [head + (" {}" if isinstance(value, dict) else " []")]
        return [head] + render_block(value, indent)
    if isinstance(value, str) and _plain_literal(value):
        # kubectl's last-applied-configuration: one JSON line and a newline.
        # The ruamel path writes such strings as a `|` block at indent + 2.
        return [head + " |"] + [pad + "  " + line for line in value[:-1].split("\n")]
    text = scalar_text(value, "plain")
    return [head + " " + text if text else head]


def _plain_literal(value: str) -> bool:
    """A string a `|` block (clip chomping, no indicator) holds line for line."""
    if not value.endswith("\n") or not value.isascii():
        return False
    lines = value[:-1].split("\n")
    return all(line and line.isprintable() and line == line.strip() for line in lines)


def render_block(value: Any, key_col: int) -> list[str]:
    """A non-empty container as the value of a key at column ``key_col``."""
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            out.extend(render_entry(k, v, key_col + 2))
        return out
    out = []
    for item in value:
        out.extend(render_item(item, key_col))
    return out


def render_item(value: Any, dash_col: int) -> list[str]:
    pad = " " * dash_col
    if isinstance(value, dict):
        if not value:
            return [pad + "- {}"]
        lines: list[str] = []
        for k, v in value.items():
            lines.extend(render_entry(k, v, dash_col + 2))
        lines[0] = pad + "- " + lines[0][dash_col + 2 :]
        return lines
    if isinstance(value, list):
        raise Unsupported("list in list")
    if value is None:
        raise Unsupported("null element")
    return [pad + "- " + scalar_text(value, "plain")]
