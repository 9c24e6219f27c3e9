"""A fleet update's share of the packages on one machine: ``--shard I/N``, deterministic, stable as packages come.

Each package goes to the shard that scores highest for it (rendezvous
hashing: SHA-256 of the shard's number and the package's path below its
root).  The answer depends on the package alone, never on which other
packages exist or in which order they were found: a package added to the
fleet leaves every other package in its shard, and N runs with I = 0 … N-1
together take every package exactly once.  Changing N moves only the share
that must move (about 1/N of the packages when a shard is added).

The index comes from ``--shard I/N``, else from ``JOB_COMPLETION_INDEX`` (set
by a Kubernetes Indexed Job in each pod) with N from ``--shard-count`` or
``KRM_MERGE_SHARDS``.  Indices start at 0, as ``JOB_COMPLETION_INDEX`` and a
GitHub Actions matrix's ``strategy.job-index`` do.
"""

from __future__ import annotations

import hashlib
from typing import Mapping

from krm_merge import numbers
from krm_merge.errors import KrmMergeError
from krm_merge.records import Record

INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
COUNT_VARIABLE = "KRM_MERGE_SHARDS"
MAX_SHARDS = 10_000


class ShardError(KrmMergeError):
    """A shard option or variable that cannot be read."""


class Shard(Record):
    """Share ``index`` (0 … ``count`` - 1) of ``count``."""

    index: int  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins
    count: int  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, key: str) -> bool:
        """Whether the package whose shard key is ``key`` belongs to this shard."""
        return owner(key, self.count) == self.index


def owner(key: str, count: int) -> int:
    """The shard (0 … ``count`` - 1) a package's ``key`` belongs to: the highest score of every shard."""
    data = key.encode("utf-8", "surrogateescape")
    return max(range(count), key=lambda i: hashlib.sha256(b"%d\0%s" % (i, data)).digest())


def parse(text: str, where: str = "--shard") -> Shard:
    """``I/N`` as a :class:`Shard`; a :class:`ShardError` naming ``where`` when it is not one."""
    index, slash, count = text.partition("/")
    value = numbers.shown(text)
    if not slash:
        raise ShardError(f"{where} {value}: expected I/N (I from 0 to N-1)")
    return _checked(Shard(_number(index, f"{where} {value}: I"), _count(count, f"{where} {value}: N")), where)


def from_options(option: str | None, count: int | None, environ: Mapping[str, str]) -> Shard | None:
    """The shard this run takes: ``--shard``, else ``JOB_COMPLETION_INDEX`` of N (``--shard-count`` or
    ``KRM_MERGE_SHARDS``); None: every package."""
    if option is not None:
        return parse(option)
    raw_index, raw_count = environ.get(INDEX_VARIABLE), environ.get(COUNT_VARIABLE)
    if count is None and raw_count is not None:
        count = _count(raw_count, COUNT_VARIABLE)
    if raw_index is None:
        if count is not None:
            raise ShardError(f"{count} shards but no index: give --shard I/N or set {INDEX_VARIABLE}")
        return None
    if count is None:
        # Every pod of an Indexed Job would otherwise update every package.
        raise ShardError(f"{INDEX_VARIABLE} is {numbers.shown(raw_index)} but the number of shards is not known: set "
                         f"{COUNT_VARIABLE} (the Job's completions) or give --shard-count N")
    return _checked(Shard(_number(raw_index, INDEX_VARIABLE), _count(str(count), "--shard-count")),
                    f"{INDEX_VARIABLE}={numbers.shown(raw_index)}")


def _number(text: str, where: str, low: int = 0) -> int:
    try:
        return numbers.whole(text, where, low=low, high=MAX_SHARDS if low else MAX_SHARDS - 1)
    except numbers.NumberError as err:  # a usage error of the fleet command, as every shard error
        raise ShardError(err.message) from None


def _count(text: str, where: str) -> int:
    return _number(text, where, low=1)


def _checked(shard: Shard, where: str) -> Shard:
    if shard.index >= shard.count:
        raise ShardError(f"{where}: shard index {shard.index} is not below the number of shards {shard.count} "
                         "(indices start at 0)")
    return shard


__all__ = ["COUNT_VARIABLE", "INDEX_VARIABLE", "MAX_SHARDS", "Shard", "ShardError", "from_options", "owner", "parse"]
