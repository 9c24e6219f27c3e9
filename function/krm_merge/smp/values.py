"""Go semantics for plain JSON-like Python values.

Kubernetes decodes JSON into ``map[string]interface{}`` / ``[]interface{}``
with ``int64`` for integral numbers and ``float64`` otherwise, and compares
list items with Go ``==`` (same dynamic type *and* value).  Python's
``True == 1 == 1.0`` must therefore never be used on document values: this
module provides the type-aware equivalents, Go's ``%v`` string form (used for
sorting), and the cleaning of newly added content.
"""

from __future__ import annotations

# SMP's public equality is the project's one; re-exported for smp's modules and its API.
from krm_merge.krm.values import deep_equal as deep_equal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Hashable

MAP = "map"
LIST = "list"
STRING = "string"
BOOL = "bool"
INT = "int"
FLOAT = "float"
NULL = "null"

_KINDS: dict[type, str] = {
    dict: MAP,
    list: LIST,
    str: STRING,
    bool: BOOL,
    int: INT,
    float: FLOAT,
    type(None): NULL,
}

DIRECTIVE_MARKER = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER_PREFIX = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST_PREFIX = "$deleteFromPrimitiveList"


def kind_of(value: Any) -> str:
    """The Go dynamic type of a decoded JSON value (``bool`` and ``int`` differ)."""
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    # Subclasses (e.g. loader-specific str/int/dict types) map to their base.
    if isinstance(value, bool):
        return BOOL
    for base, name in ((dict, MAP), (list, LIST), (str, STRING), (int, INT), (float, FLOAT)):
        if isinstance(value, base):
            return name
    return type(value).__name__


def identity(value: Any) -> Hashable:
    """A hashable key such that two values are Go ``==`` iff their keys are equal.

    Maps and lists are not comparable in Go; they are identified by object.
    Strings (the usual merge-key values) are their own key: every other kind
    is a tagged tuple, which never equals a string.
    """
    if type(value) is str:
        return value
    kind = kind_of(value)
    if kind == MAP or kind == LIST:
        return (kind, id(value))
    if kind == STRING:
        return str(value)  # a str subclass from a loader equals the plain string
    if kind == FLOAT and value != value:  # NaN is never equal to itself
        return (kind, id(value))
    return (kind, value)


def scalar_equal(left: Any, right: Any) -> bool:
    """Go ``==`` on two scalars (type-aware)."""
    return kind_of(left) == kind_of(right) and left == right


def _go_float(value: float) -> str:
    """``strconv.FormatFloat(v, 'g', -1, 64)`` as used by ``%v``."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    from decimal import Decimal  # rare path: the function path's patch engine must not pay for decimal

    sign, digits_t, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    # Position of the decimal point relative to the digit string.
    point = len(digits_t) + exponent
    exp10 = point - 1
    prefix = "-" if sign else ""
    if exp10 < -4 or exp10 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return f"{prefix}{digits[:point]}.{digits[point:]}"


def go_str(value: Any) -> str:
    """Go's ``fmt.Sprintf("%v", value)`` for decoded JSON."""
    if type(value) is str:
        return value
    kind = kind_of(value)
    if kind == STRING:
        return str(value)
    if kind == BOOL:
        return "true" if value else "false"
    if kind == INT:
        return str(int(value))
    if kind == FLOAT:
        return _go_float(float(value))
    if kind == NULL:
        return "<nil>"
    if kind == MAP:
        inner = " ".join(f"{k}:{go_str(value[k])}" for k in sorted(value))
        return f"map[{inner}]"
    if kind == LIST:
        return "[" + " ".join(go_str(v) for v in value) + "]"
    return str(value)


_GO_TYPE_NAMES = {
    MAP: "map[string]interface {}",
    LIST: "[]interface {}",
    STRING: "string",
    BOOL: "bool",
    INT: "int64",
    FLOAT: "float64",
    NULL: "<nil>",
}


def go_type_name(value: Any) -> str:
    """Go's ``reflect.TypeOf(value)`` string for a decoded JSON value."""
    kind = kind_of(value)
    return _GO_TYPE_NAMES.get(kind, kind)


def remove_patch_directives(value: Any) -> Any:
    """A copy without ``$patch`` content (Go ``removeDirectives``); nulls are kept.

    Maps holding ``$patch`` become :data:`DROPPED`; list elements holding it are removed.
    """
    kind = kind_of(value)
    if kind == MAP:
        if DIRECTIVE_MARKER in value:
            return DROPPED
        out: dict[str, Any] = {}
        for key, item in value.items():
            item = remove_patch_directives(item)
            if item is not DROPPED:
                out[key] = item
        return out
    if kind == LIST:
        kept = (remove_patch_directives(item) for item in value)
        return [item for item in kept if item is not DROPPED]
    return value


def is_directive_key(key: str) -> bool:
    """True for the keys that carry patch directives rather than data."""
    return key[:1] == "$" and (
        key == DIRECTIVE_MARKER
        or key == RETAIN_KEYS
        or key.startswith(SET_ELEMENT_ORDER_PREFIX)
        or key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
    )


class _Dropped:
    """Marker for content that cleaning removes entirely."""


DROPPED: Any = _Dropped()


def clean_new_value(value: Any) -> Any:
    """A fresh copy of patch content entering the document, as the API server stores it.

    Null map entries are removed (recursively, inside lists too), a map holding
    ``$patch`` is dropped (returns :data:`DROPPED`), list elements holding
    ``$patch`` are dropped, and leftover directive keys are removed.
    """
    kind = kind_of(value)
    if kind == MAP:
        if value.get(DIRECTIVE_MARKER) is not None:
            return DROPPED
        cleaned: dict[str, Any] = {}
        for key, item in value.items():
            if item is None or is_directive_key(key):
                continue
            item = clean_new_value(item)
            if item is not DROPPED:
                cleaned[key] = item
        return cleaned
    if kind == LIST:
        out = []
        for item in value:
            item = clean_new_value(item)
            if item is not DROPPED:
                out.append(item)
        return out
    return value


def deep_copy(value: Any) -> Any:
    """A copy of a JSON-like value (much faster than :func:`copy.deepcopy`)."""
    kind = kind_of(value)
    if kind == MAP:
        return {k: deep_copy(v) for k, v in value.items()}
    if kind == LIST:
        return [deep_copy(v) for v in value]
    return value


_GO_INSERTION_SORT_MAX = 12


def go_sort_by_string(values: list[Any], key: Callable[[Any], str]) -> list[Any]:
    """A sorted copy, as Go's ``sort.Sort`` with the upstream ``Less`` (``a <= b``).

    Go sorts up to 12 items by insertion sort; with a non-strict ``Less`` this
    reverses items whose strings are equal (duplicate merge keys), which
    decides which duplicate a diff compares.  Longer lists use pdqsort, whose
    order of equal items is not modelled (a stable sort is used).
    """
    keyed = [(key(v), v) for v in values]
    if len(keyed) > _GO_INSERTION_SORT_MAX:
        return [v for _, v in sorted(keyed, key=lambda p: p[0])]
    for i in range(1, len(keyed)):
        j = i
        while j > 0 and keyed[j][0] <= keyed[j - 1][0]:
            keyed[j], keyed[j - 1] = keyed[j - 1], keyed[j]
            j -= 1
    return [v for _, v in keyed]


def sort_scalars(values: list[Any]) -> list[Any]:
    """``sortScalars``: a sorted copy, ordered by Go ``%v`` string form."""
    return go_sort_by_string(values, go_str)


def deduplicate_scalars(values: list[Any]) -> list[Any]:
    """``deduplicateScalars``, including its order (a duplicate is replaced by the last item)."""
    items = list(values)
    identities = [identity(v) for v in items]
    if len(set(identities)) == len(items):
        return items  # nothing to remove: Go leaves the order alone too
    last = len(items) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if identities[i] == identities[j]:
                items[j] = items[last]
                identities[j] = identities[last]
                items.pop()
                identities.pop()
                last -= 1
                j -= 1
            j += 1
        i += 1
    return items
