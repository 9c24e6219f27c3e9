"""Fields changed on both sides: the policy deciding them and their record."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class ConflictPolicy(Enum):
    """Who wins a field changed differently on both sides."""

    UPSTREAM_WINS = "upstream-wins"  # kpt's rule
    LOCAL_WINS = "local-wins"
    FAIL = "fail"  # upstream's value is computed, but the merge reports an error

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
    (``<absent>`` for a deleted field); ``winner`` is ``"upstream"`` or
    ``"local"``.
    """

    path: str
    origin: str
    local: str
    upstream: str
    winner: str

    def describe(self) -> str:
        """One-line human description."""
        outcome = "not merged (conflicts: fail)" if self.winner == "none" else f"{self.winner} wins"
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
