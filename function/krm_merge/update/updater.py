"""The update strategies, by kpt's names (``upstream.updateStrategy``, ``--strategy``)."""

from __future__ import annotations

STRATEGIES = ("resource-merge", "fast-forward", "force-delete-replace")

__all__ = ["STRATEGIES"]
