"""Fields changed on both sides: the policy deciding them and their record."""

from __future__ import annotations

import json
import functools
import re
from enum import Enum
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from krm_merge.krm.values import Label, PathPart, format_path, parse_path, value_json, value_size


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


# NamedTuples, not dataclasses: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class Conflict(NamedTuple):
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
    rule: str = ""  # the package rule that decided it (``Kind:path: policy``); "" for the --conflicts policy


# --- the conflict marker ---------------------------------------------------------------

MARKER = "krm-merge:conflict"
"""What every marker holds: ``grep -rn 'krm-merge:conflict' PKG`` finds what is left to decide."""

ABSENT = "<absent>"
"""How a marker writes a value that is not there (no JSON text starts with ``<``)."""

# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs them does not pay for compiling them at start-up (issue 24).
@functools.cache
def _marker_at() -> re.Pattern[str]:
    return re.compile(r"[ \t]*#[ \t]*" + re.escape(MARKER) + r"\b")


class Absent:
    """The value of a side that does not have the field (``<absent>`` in a marker)."""

    def __repr__(self) -> str:
        return ABSENT


ABSENT_VALUE = Absent()


def marker_comment(upstream: Any, origin: Any, scalar: Callable[[Any], Any] | None = None) -> str:
    """``# krm-merge:conflict upstream=<v> origin=<v>``: values as compact JSON, or ``<absent>``.

    JSON keeps each value on the comment's one line (newlines are escaped)
    and tells ``3`` from ``"3"``, so ``resolve --take upstream`` can write
    upstream's value back exactly.  A value longer than
    :data:`~krm_merge.krm.values.RECORDED_VALUE_CHARS` is not written into
    the package (YAML aliases let a few bytes of upstream expand to
    gigabytes): the marker says ``<not recorded: about N characters>``, which
    ``resolve --take upstream`` refuses as unreadable.  ``scalar`` converts
    a reader's scalar type to plain data.
    """
    return f"# {MARKER} upstream={_marker_value(upstream, scalar)} origin={_marker_value(origin, scalar)}"


NOT_RECORDED = "<not recorded"
"""How a marker starts a value too large to carry (no JSON text starts with ``<``)."""


def _marker_value(value: Any, scalar: Callable[[Any], Any] | None) -> str:
    if value is ABSENT_VALUE:
        return ABSENT
    text = value_json(value, scalar=scalar)
    return text if text is not None else f"{NOT_RECORDED}: about {value_size(value)} characters>"


def find_marker(line: str) -> int:
    """Where the marker comment starts in ``line`` (its leading blanks included), or -1."""
    m = _marker_at().search(line)
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


# --- rules declared in the package -------------------------------------------------------

RULES_ANNOTATION = "krm-merge.dev/conflicts"
"""Annotation holding conflict rules: on a resource its own, on a Kptfile the package's."""

class FieldRule(NamedTuple):
    """``[Kind:]path: policy``: the policy deciding conflicts at ``path`` and below it.

    ``path`` is written as :func:`format_path` writes conflicts
    (``spec.template.spec.containers[name=app].image``); ``*`` stands for any
    one key, ``[*]`` for any one list element, and ``*`` alone for every field.
    """

    kind: str
    segments: tuple[PathPart, ...]
    policy: ConflictPolicy
    path: str = ""

    @property
    def text(self) -> str:
        """The rule as it is written in the annotation."""
        path = self.path or format_path(self.segments)
        return f"{self.kind + ':' if self.kind else ''}{path}: {self.policy.value}"

    def matches(self, segments: Sequence[PathPart]) -> bool:
        """The rule covers this field (it names it or one of its parents)."""
        want, got = _dotted(self.segments), _dotted(segments)
        if len(want) > len(got):
            return False
        return all(_segment_matches(w, g) for w, g in zip(want, got))

    @property
    def specificity(self) -> tuple[int, int]:
        """Longer paths first, then fewer wildcards."""
        segments = _dotted(self.segments)
        return len(segments), -sum(s in ("*", ANY_ELEMENT) for s in segments)


def _dotted(segments: Sequence[PathPart]) -> tuple[PathPart, ...]:
    """Keys split at their dots, so a rule written before keys were quoted (``annotations.a.b/c``)
    still names the key ``a.b/c`` that conflicts now report as ``annotations["a.b/c"]``."""
    return tuple(p for s in segments for p in (s.split(".") if isinstance(s, str) and s != "*" else (s,)))


ANY_ELEMENT = Label("*")


def _segment_matches(want: PathPart, got: PathPart) -> bool:
    if want == ANY_ELEMENT:
        return not isinstance(got, str)
    if want == "*":
        return isinstance(got, str)
    return _element_text(want) == _element_text(got)


def _element_text(part: PathPart) -> PathPart:
    """An element written ``[3]`` is the same segment whether it was read as an index or a label."""
    return Label(str(part)) if isinstance(part, int) else part


def split_path(path: str) -> tuple[PathPart, ...]:
    """The segments of a path :func:`format_path` wrote; ValueError when it is not one."""
    try:
        segments = parse_path(path, labels=True, strict=True)
    except ValueError:
        segments = ()
    if not segments:
        raise ValueError(f"malformed field path {path!r}")
    return segments


def parse_rules(data: Any, *, kinds: bool) -> list[FieldRule]:
    """Rules from an annotation's parsed value (a map of path -> policy).

    ``kinds``: keys may be prefixed by a Kind (``Deployment:spec.replicas``),
    as on a Kptfile.  ValueError names the offending key.
    """
    if not isinstance(data, dict):
        raise ValueError("expected a map of field path -> policy")
    return [_parse_rule(str(key), value, kinds) for key, value in data.items()]


@functools.cache
def _kind_prefix() -> re.Pattern[str]:
    return re.compile(r"([A-Za-z][A-Za-z0-9]*):")


def _parse_rule(key: str, value: Any, kinds: bool) -> FieldRule:
    kind, path = "", key
    prefixed = _kind_prefix().match(key) if kinds else None
    if prefixed:
        kind, path = prefixed.group(1), key[prefixed.end():]
    try:
        if not isinstance(value, str):
            raise ValueError(f"invalid conflicts policy {value!r}: expected one of {', '.join(POLICIES)}")
        return FieldRule(kind, split_path(path), ConflictPolicy.parse(value), path)
    except ValueError as err:
        raise ValueError(f"rule {key!r}: {err}") from None


class FieldRules(NamedTuple):
    """The rules applying to one resource: its own first, then its package's for its Kind."""

    own: tuple[FieldRule, ...] = ()
    package: tuple[FieldRule, ...] = ()

    @classmethod
    def of(cls, own: Iterable[FieldRule], package: Iterable[FieldRule], kind: str) -> FieldRules:
        """The rules for a resource of ``kind`` (package rules naming another Kind dropped)."""
        return cls(tuple(own), tuple(r for r in package if r.kind in ("", kind)))

    def __bool__(self) -> bool:
        return bool(self.own or self.package)

    @property
    def marks(self) -> bool:
        """Some rule asks for markers."""
        return any(r.policy is ConflictPolicy.MARK for r in self.own + self.package)

    def find(self, path: str | Sequence[PathPart]) -> FieldRule | None:
        """The rule deciding the field at ``path``: the most specific of the resource's, else of the package's.

        A package rule naming the Kind beats one that does not, at equal specificity.
        """
        try:
            segments = parse_path(path, labels=True)
        except ValueError:
            return None  # not a path format_path writes: no rule names it
        for rules in (self.own, self.package):
            found = [r for r in rules if r.matches(segments)]
            if found:
                return max(found, key=lambda r: (r.specificity, bool(r.kind)))
        return None
