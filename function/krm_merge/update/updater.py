"""The update strategies, by kpt's names (``upstream.updateStrategy``, ``--strategy``)."""

from __future__ import annotations

from krm_merge.kptfile.document import STRATEGIES

__all__ = ["STRATEGIES"]
