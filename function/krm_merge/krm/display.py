"""What krm-merge prints for a person: content's terminal control characters escaped.

File content, file names and values come from the package and its upstream,
and a terminal obeys the control characters in them: ``ESC [ ... m``
recolours or hides text, ``ESC ] 52 ;`` (OSC 52) writes the user's
clipboard, a lone carriage return or a backspace overwrites what was
printed, and the Unicode bidirectional overrides reorder a line so that it
reads differently from what it holds.  Every line the commands write to
stdout and stderr goes through :class:`EscapingStream` (``cli.py`` wraps
both streams around a command, and the function's stderr log), so there is
no printing path that forgets it; the KRM function's ResourceList on stdout
is data for its orchestrator and is written as it is (YAML escapes what is
not printable in its double-quoted strings).

Escaped: C0 controls but tab and newline (a carriage return only when no
newline follows it: a CRLF line end is harmless), DEL, the C1 controls, and
the bidirectional marks, embeddings, overrides and isolates (U+061C,
U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).  Each becomes its escape as
Python and JSON write it (``\\x1b``, ``\\u202e``): visible, and the same
text to a reader of a diff or a JSON report.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


@functools.cache
def _controls() -> re.Pattern[str]:
    # Compiled on first use: a command that prints nothing of content does not pay for it.
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with every terminal control character of content written as its escape (see the module docstring)."""
    if text.isascii() and text.replace("\r\n", "").replace("\n", "").replace("\t", "").isprintable():
        # ASCII holding none of the pattern's characters (what is not printable but the tab, the newline and a
        # CR before one: a lone CR stays in the text tested and fails it): the text as it is.  The pattern's
        # Unicode class tried at every character of every diff a dry run prints cost more than the diffs.
        return text
    return _controls().sub(_escape_one, text)


@functools.cache
def _invisible() -> re.Pattern[str]:
    return re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2065\u206a-\u206f\ufeff]")


def escape_name(text: str) -> str:
    """A file name (or path) whose spelling matters, as a message shows it: :func:`escape_controls`, and the
    invisible code points too (zero-width joiners and spaces, word joiners, the byte-order mark, the soft
    hyphen), which print as nothing: ``.g\\u200cit`` is shown so, not as ``.git``.  Content keeps them
    (an emoji sequence joins with U+200D): only names that must read as what they hold are passed here."""
    return _invisible().sub(_escape_one, escape_controls(text))


class EscapingStream:
    """A text stream whose writes pass through :func:`escape_controls`; anything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


__all__ = ["EscapingStream", "escape_controls", "escape_name"]
