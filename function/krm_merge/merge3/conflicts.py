"""Fields changed on both sides: the policy deciding them and their record."""

from __future__ import annotations

import json
import functools
import re

from krm_merge.krm.values import Label, PathPart, format_path, parse_path, value_json, value_size
from krm_merge.krm.values import Path as DataPath
from krm_merge.outcomes.kinds import Decision
from krm_merge.records import Record

from .policy import POLICIES, ConflictPolicy
from .rules import FALLBACK_KEYS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Sequence, TypeAlias


# NamedTuples, not dataclasses: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class Conflict(Record):
    """One field changed on both sides.

    ``path`` is the field path inside the resource (``spec.replicas``,
    ``spec.containers[name=app].image``); values are short renderings
    (``<absent>`` for a deleted field); ``winner`` is how it was decided, the
    outcomes' :class:`~krm_merge.outcomes.kinds.Decision`: upstream's value,
    local's, local's kept with a marker, or not merged (``fail``).
    """

    path: str
    origin: str
    local: str
    upstream: str
    winner: Decision
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
    return marker_text(_marker_value(upstream, scalar), _marker_value(origin, scalar))


def marker_text(upstream: str, origin: str) -> str:
    """The marker comment of two values already written as a marker writes them (:func:`recorded`'s first)."""
    return f"# {MARKER} upstream={upstream} origin={origin}"


NOT_RECORDED = "<not recorded"
"""How a marker starts a value too large to carry (no JSON text starts with ``<``)."""


def _marker_value(value: Any, scalar: Callable[[Any], Any] | None) -> str:
    if value is ABSENT_VALUE:
        return ABSENT
    text = value_json(value, scalar=scalar)
    return text if text is not None else _not_recorded(value)


def _not_recorded(value: Any) -> str:
    return f"{NOT_RECORDED}: about {value_size(value)} characters>"


def recorded_value(value: Any, scalar: Callable[[Any], Any] | None = None) -> Any:
    """``value`` as the ledger records it: plain data when its JSON takes at most
    :data:`~krm_merge.krm.values.RECORDED_VALUE_CHARS`, else the marker's ``<not recorded: about N characters>``
    (:func:`is_not_recorded`; ``resolve --take upstream`` refuses it); :data:`ABSENT_VALUE` as it is."""
    if value is ABSENT_VALUE:
        return value
    text = value_json(value, scalar=scalar)
    return json.loads(text) if text is not None else _not_recorded(value)


def recorded(value: Any, scalar: Callable[[Any], Any] | None = None) -> tuple[str, Any]:
    """``value`` as a marker writes it (:func:`marker_comment`) and as the ledger records it
    (:func:`recorded_value`), its JSON built once for both."""
    if value is ABSENT_VALUE:
        return ABSENT, value
    text = value_json(value, scalar=scalar)
    if text is None:
        shown = _not_recorded(value)
        return shown, shown
    # a plain string without escapes, an int, a boolean, null: its JSON reads back as the value itself
    plain = type(value) in (int, bool) or value is None or (type(value) is str and "\\" not in text)
    return text, value if plain else json.loads(text)


def is_not_recorded(value: Any) -> bool:
    """Whether a recorded value stands for one too large to record (:func:`recorded_value`)."""
    return isinstance(value, str) and value.startswith(NOT_RECORDED) and value.endswith(" characters>")


def find_marker(line: str) -> int:
    """Where the marker comment starts in ``line`` (its leading blanks included), or -1.

    The answer of ``_marker_at().search(line)``, found in time linear in the
    line: searched from the start of every line, the pattern's leading
    ``[ \t]*`` tries each blank of an indentation to its end, which made a
    document nested 2,000 levels deep (its lines indented 4,000 blanks)
    cost ``conflicts`` minutes.  So the marker's text is found first
    (``str.find``), the blanks and ``#`` before it are walked back over, and
    the pattern is matched only from there.
    """
    at = line.find(MARKER)
    while at >= 0:
        start = _comment_start(line, at)
        if start >= 0 and _marker_at().match(line, start) is not None:
            return start
        at = line.find(MARKER, at + len(MARKER))  # the marker's text cannot overlap itself
    return -1


def _comment_start(line: str, at: int) -> int:
    """Where ``[ \t]*#[ \t]*`` ending at ``at`` starts (the leftmost such start), or -1 when ``#`` is not there."""
    i = at
    while i and line[i - 1] in " \t":
        i -= 1
    if not i or line[i - 1] != "#":
        return -1
    i -= 1
    while i and line[i - 1] in " \t":
        i -= 1
    return i


def parse_marker(line: str) -> tuple[Any, Any] | None:
    """(upstream, origin) of the marker on ``line`` (:data:`ABSENT_VALUE` for absent); None when unreadable.

    What a marker's text says is for reading only: ``conflicts``/``resolve``
    take the values from the update's ledger, never from here.  JSON nested
    deeper than Python's recursion allows is unreadable too, not an error.
    """
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
        except (ValueError, RecursionError):
            return None
    return values["upstream"], values["origin"]


# --- where a marked field is: a path that survives edits around it ------------------------

LOCATOR_KEYS = ("name", *(k for k in FALLBACK_KEYS if k != "name"))
"""The fields naming a list element in a :data:`Locator` (and in ``conflicts``' field paths), first present wins."""

ElementKey: TypeAlias = "tuple[str, Any]"
"""A list element named by one of its fields: (``name``, ``"app"``)."""
LocatorPart: TypeAlias = "str | int | ElementKey"
Locator: TypeAlias = "tuple[LocatorPart, ...]"
"""Where a field is in a document: map keys, and list elements by :data:`ElementKey` (by index when none
names them).  Unlike a data path it still finds the field after lines or list elements were added around it."""


def element_key(element: Any, avoid: Any = None) -> ElementKey | None:
    """The first of :data:`LOCATOR_KEYS` but ``avoid`` an element (a map) holds as a scalar, with its value."""
    if isinstance(element, dict):
        for key in LOCATOR_KEYS:
            value = element.get(key) if key != avoid else None
            if value is not None and not isinstance(value, (dict, list)):
                return key, value
    return None


Lookups: TypeAlias = "dict[tuple[int, Any], dict[Any, Any]]"
"""Indexes built on first use by :func:`locator_of` and :func:`locate` over one unchanged tree: pass the same
dict to every call on that tree, so that finding N fields of a list of N elements is N lookups, not N scans."""


def locator_of(tree: Any, path: DataPath, lookups: Lookups | None = None) -> Locator | None:
    """The locator of the field at data path ``path`` (keys and indices) of ``tree``; None when it is not there.

    An element is named by its :func:`element_key` when no earlier element of
    its list has the same one, else by its index; never by the field itself
    (a conflict on a port's ``name`` names the port by its ``containerPort``),
    so that editing the value by hand keeps the marker found.
    """
    lookups = {} if lookups is None else lookups
    node, out = tree, []
    for at, part in enumerate(path):
        if isinstance(node, dict) and part in node:
            out.append(str(part))  # keys as the data reads them (to_plain_data): a key 1 is "1"
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            named = element_key(node[part], path[-1] if at == len(path) - 2 else None)
            first = _element_named(node, named, lookups) if named is not None else None
            out.append(named if first == part else part)  # type: ignore[arg-type]
            node = node[part]
        else:
            return None
    return tuple(out)


def locate(tree: Any, locator: Locator, lookups: Lookups | None = None) -> DataPath | None:
    """The data path (keys and indices) the locator names in ``tree`` now; None when it names nothing."""
    lookups = {} if lookups is None else lookups
    node, out = tree, []
    for part in locator:
        if isinstance(node, dict) and isinstance(part, str):
            key = part if part in node else _keys_as_text(node, lookups).get(part, _NOWHERE)
            if key is _NOWHERE:
                return None
            out.append(key)
            node = node[key]
        elif isinstance(node, list) and isinstance(part, int) and not isinstance(part, bool):
            if not 0 <= part < len(node):
                return None
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, tuple):
            index = _element_named(node, part, lookups)
            if index is None:
                return None
            out.append(index)
            node = node[index]
        else:
            return None
    return tuple(out)


_NOWHERE = object()


def _keys_as_text(node: dict[Any, Any], lookups: Lookups) -> dict[str, Any]:
    """A map's keys by their text (a YAML key ``1`` is named ``"1"``), the first of each."""
    found = lookups.get((id(node), None))
    if found is None:
        found = lookups[(id(node), None)] = {}
        for key in node:
            found.setdefault(str(key), key)
    return found


def _element_named(elements: list[Any], named: ElementKey, lookups: Lookups) -> int | None:
    """The index of the first element whose field ``named[0]`` is ``named[1]`` (as data: ``1`` is not ``"1"``)."""
    field, value = named
    index = lookups.get((id(elements), field))
    if index is None:
        index = lookups[(id(elements), field)] = {}
        for i, element in enumerate(elements):
            key = _scalar(element.get(field)) if isinstance(element, dict) else None
            if key is not None:
                index.setdefault(key, i)
    return index.get(_scalar(value))


def _scalar(value: Any) -> tuple[str, Any] | None:
    """A scalar as a key that tells its kind (``True``, ``1``, ``1.0`` and ``"1"`` differ, as in deep_equal)."""
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind.__name__, kind(value)
    return None


class FieldMark(Record):
    """One marker an update wrote, as its ledger records it (values as data, :data:`ABSENT_VALUE` when absent).

    ``locator`` finds the field in the merged document, ``field`` is its path
    as the update printed the conflict (``spec.containers[name=app].image``).
    """

    locator: Locator
    field: str
    local: Any
    upstream: Any
    origin: Any


# --- rules declared in the package -------------------------------------------------------

RULES_ANNOTATION = "krm-merge.dev/conflicts"
"""Annotation holding conflict rules: on a resource its own, on a Kptfile the package's."""

class FieldRule(Record):
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


class FieldRules(Record):
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
