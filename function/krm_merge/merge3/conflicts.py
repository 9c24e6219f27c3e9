"""Fields changed on both sides: the policy deciding them and their record."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any


class ConflictPolicy(Enum):
    """Who wins a field changed differently on both sides."""

    UPSTREAM_WINS = "upstream-wins"  # kpt's rule
    LOCAL_WINS = "local-wins"
    FAIL = "fail"  # upstream's value is computed, but the merge reports an error
    MARK = "mark"  # local's value stays, with a marker comment naming upstream's and origin's

    @classmethod
    def parse(cls, text: str) -> ConflictPolicy:
        """Policy from its config spelling; ValueError lists the valid ones."""
        for policy in cls:
            if policy.value == text:
                return policy
        valid = ", ".join(p.value for p in cls)
        raise ValueError(f"invalid conflicts policy {text!r}: expected one of {valid}")


POLICIES = tuple(p.value for p in ConflictPolicy)
"""The config spellings of the policies."""


@dataclass(frozen=True)
class Conflict:
    """One field changed on both sides.

    ``path`` is the field path inside the resource (``spec.replicas``,
    ``spec.containers[name=app].image``); values are short renderings
    (``<absent>`` for a deleted field); ``winner`` is ``"upstream"``,
    ``"local"``, ``"marked"`` (local's value kept with a marker) or ``"none"``.
    """

    path: str
    origin: str
    local: str
    upstream: str
    winner: str

    def describe(self) -> str:
        """One-line human description."""
        outcomes = {"none": "not merged (conflicts: fail)", "marked": f"local kept, marked '# {MARKER}'"}
        outcome = outcomes.get(self.winner, f"{self.winner} wins")
        return (
            f"{self.path}: changed locally ({self.origin} -> {self.local}) and upstream "
            f"({self.origin} -> {self.upstream}); {outcome}"
        )


def format_path(path: tuple[Any, ...]) -> str:
    """Render a field path tuple; list elements are ``[key=value]`` labels."""
    out = ""
    for part in path:
        if isinstance(part, str) and part.startswith("["):
            out += part
        else:
            out += ("." if out else "") + str(part)
    return out


# --- the conflict marker ---------------------------------------------------------------

MARKER = "krm-merge:conflict"
"""What every marker holds: ``grep -rn 'krm-merge:conflict' PKG`` finds what is left to decide."""

ABSENT = "<absent>"
"""How a marker writes a value that is not there (no JSON text starts with ``<``)."""

_MARKER_AT = re.compile(r"[ \t]*#[ \t]*" + re.escape(MARKER) + r"\b")


class Absent:
    """The value of a side that does not have the field (``<absent>`` in a marker)."""

    def __repr__(self) -> str:
        return ABSENT


ABSENT_VALUE = Absent()


def marker_comment(upstream: Any, origin: Any) -> str:
    """``# krm-merge:conflict upstream=<v> origin=<v>``: values as compact JSON, or ``<absent>``.

    JSON keeps each value on the comment's one line (newlines are escaped)
    and tells ``3`` from ``"3"``, so ``resolve --take upstream`` can write
    upstream's value back exactly.
    """
    return f"# {MARKER} upstream={_marker_value(upstream)} origin={_marker_value(origin)}"


def _marker_value(value: Any) -> str:
    if value is ABSENT_VALUE:
        return ABSENT
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def find_marker(line: str) -> int:
    """Where the marker comment starts in ``line`` (its leading blanks included), or -1."""
    m = _MARKER_AT.search(line)
    return -1 if m is None else m.start()


def parse_marker(line: str) -> tuple[Any, Any] | None:
    """(upstream, origin) of the marker on ``line`` (:data:`ABSENT_VALUE` for absent); None when unreadable."""
    start = find_marker(line)
    if start < 0:
        return None
    rest = line[start:].split(MARKER, 1)[1]
    values: dict[str, Any] = {}
    pos = 0
    decoder = json.JSONDecoder()
    for name in ("upstream", "origin"):
        m = re.compile(r"\s*" + name + "=").match(rest, pos)
        if m is None:
            return None
        pos = m.end()
        if rest.startswith(ABSENT, pos):
            values[name], pos = ABSENT_VALUE, pos + len(ABSENT)
            continue
        try:
            values[name], pos = decoder.raw_decode(rest, pos)
        except ValueError:
            return None
    return values["upstream"], values["origin"]
