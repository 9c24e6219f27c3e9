"""Which value stands when two promotions set the same field at once: the race rule of ``promote --push``.

A promotion whose push lost a race plans again on the new head (:mod:`krm_merge.change.race`).
When the other writer set a field this promotion sets, to a different value, the higher
version stands: the values are compared as versions (``1.10.0`` after ``1.9.3``, ``v`` prefix
ignored, a pre-release such as ``2.0.0-rc.1`` before ``2.0.0``, an image reference by its tag).
When either value is not a version (a digest, a name), or both are the same version written
differently, the value already on the branch stands: a promotion never overwrites another's
without a rule that says it is newer.  Promotions are always a step forward, so whichever
order the writers land in, the branch ends at the highest version any of them promoted.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")

RULE = "the higher version stands; a value that is not a version never replaces another"
"""The rule in one line, as reports and docs say it."""


def version_key(value: str) -> tuple[tuple[int, ...], int, tuple[tuple[int, int | str], ...]] | None:
    """A sort key of ``value`` as a version (an image reference by its tag), or None when it is not one."""
    text = value.strip().split("@", 1)[0]
    if "/" in text or ":" in text:  # an image reference: its tag, after the last ':' of the last path part
        last = text.rsplit("/", 1)[-1]
        if ":" not in last:
            return None
        text = last.rsplit(":", 1)[1]
    found = _VERSION.match(text)
    if found is None:
        return None
    numbers = tuple(int(part) for part in found.group(1).split("."))
    numbers = numbers + (0,) * (3 - len(numbers)) if len(numbers) < 3 else numbers
    pre = found.group(2)
    if pre is None:
        return numbers, 1, ()
    parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split("."))
    return numbers, 0, parts


def ours_prevails(ours: str, theirs: str) -> bool:
    """True when our value replaces ``theirs``, set meanwhile by another writer (:data:`RULE`)."""
    mine, other = version_key(ours), version_key(theirs)
    return mine is not None and other is not None and mine > other


__all__ = ["RULE", "ours_prevails", "version_key"]
