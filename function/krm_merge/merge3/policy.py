"""Who wins a field changed on both sides: the policies, as the command line and the config spell them.

Apart from the conflicts' record (:mod:`krm_merge.merge3.conflicts`, which re-exports them) so that a command
parsing ``--conflicts`` (an update that turns out a no-op among them) loads nothing of the marker engine.
"""

from __future__ import annotations

from enum import Enum


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


__all__ = ["POLICIES", "ConflictPolicy"]
