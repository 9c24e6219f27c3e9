"""Numbers from the user, read strictly: the one home of every option's and environment variable's number.

A number an option (``--jobs``, ``--shard I/N``) or an environment variable
(``JOB_COMPLETION_INDEX``, ``KRM_MERGE_SHARDS``, ``KRM_MERGE_MAX_*_MB``)
gives is ASCII digits and nothing else, at most :data:`MAX_DIGITS` of them.
``str.isdigit`` alone takes ``'²'``, which ``int()`` then refuses with a
``ValueError``; ``int()`` alone takes ``'١٢'`` (Arabic-Indic digits), ``'1_000'``,
``' 7 '`` and ``'+7'``, and refuses more than 4,300 digits with a ``ValueError``
(CPython's limit on integer-string conversion).  Here each of them is one
:class:`NumberError` naming the option or variable and the value (cut when
long), never a traceback and never a silent default.

This module imports nothing of krm-merge but the error base class, so every
layer may read its numbers through it (the YAML loader reads its size limits here).
"""

from __future__ import annotations

import os

from krm_merge.errors import KrmMergeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

MAX_DIGITS = 9
"""Digits a number may have (below a billion: every count and size krm-merge takes fits, a typo does not)."""
_SHOWN = 40  # characters of a refused value a message shows


class NumberError(KrmMergeError):
    """An option's or an environment variable's value that is not the number it must be."""


def shown(text: str) -> str:
    """A value from the user as a message shows it: quoted (``repr``), cut after a few dozen characters."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text)} characters)"


def _digits(text: str) -> bool:
    # isascii first: '²' and '١' are digits to str.isdigit
    return 0 < len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


def whole(text: str, name: str, *, low: int = 0, high: int | None = None) -> int:
    """``text`` as a whole number from ``low`` to ``high`` (None: no upper bound but :data:`MAX_DIGITS`).

    ``name`` says where the value came from (``--jobs``, ``JOB_COMPLETION_INDEX``):
    a :class:`NumberError` names it and the value.
    """
    number = int(text) if _digits(text) else None
    if number is None or number < low or (high is not None and number > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise NumberError(f"{name}: expected a whole number {span} (ASCII digits), got {shown(text)}")
    return number


def decimal(text: str, name: str) -> float:
    """``text`` as a non-negative decimal number (``12``, ``0.5``: ASCII digits, at most one point, at most
    :data:`MAX_DIGITS` digits on each side of it); a :class:`NumberError` naming ``name`` and the value."""
    units, point, fraction = text.partition(".")
    if not _digits(units) or (point and not _digits(fraction)):
        raise NumberError(f"{name}: expected a number such as 64 or 0.5 (ASCII digits, at most one '.'), "
                          f"got {shown(text)}")
    return float(text)


def megabytes(variable: str, default: float, environ: Mapping[str, str] | None = None) -> int:
    """The bytes of a size limit given in megabytes by environment ``variable`` (unset or empty: ``default``)."""
    raw = (os.environ if environ is None else environ).get(variable, "")
    return int((decimal(raw, variable) if raw else default) * 1024 * 1024)


__all__ = ["MAX_DIGITS", "NumberError", "decimal", "megabytes", "shown", "whole"]
