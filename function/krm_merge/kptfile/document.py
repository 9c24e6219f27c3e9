"""What a Kptfile is to a package update: how it is recognised, kpt's default one, and its render status.

kpt keeps every Kptfile rule of its update in ``kptfileutil``; these are
the ones the package merge needs besides the pipeline merge (:mod:`.merge`)
and the upstream/lock fields (:mod:`.upstream`).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject


ROOT_KPTFILE = "Kptfile"
DEFAULT_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
RENDERED_CONDITION = "Rendered"


class Strategy(Enum):
    """How a package update treats local changes."""

    RESOURCE_MERGE = "resource-merge"
    FAST_FORWARD = "fast-forward"
    FORCE_DELETE_REPLACE = "force-delete-replace"


STRATEGIES = tuple(s.value for s in Strategy)
"""kpt's names of the strategies (``upstream.updateStrategy``, ``--strategy``)."""


def update_strategy(text: str) -> str | None:
    """A Kptfile's ``upstream.updateStrategy`` when it names one of kpt's strategies, else None."""
    data = yamlio.load_data(text, "Kptfile")
    value = ((data or {}).get("upstream") or {}).get("updateStrategy") if isinstance(data, dict) else None
    return value if value in STRATEGIES else None


def is_kptfile(obj: KubeObject) -> bool:
    """Whether the item is a Kptfile (kind Kptfile of group kpt.dev)."""
    return obj.kind == "Kptfile" and obj.group == "kpt.dev"


def without_render_status(kptfile: dict[str, Any]) -> None:
    """Drop what ``kpt fn render`` records in a Kptfile's ``status`` (it describes another copy's render).

    ``status.renderStatus`` and conditions of type ``Rendered`` go; other
    conditions stay; an emptied ``conditions`` or ``status`` goes too.
    """
    status = kptfile.get("status")
    if not isinstance(status, dict):
        return
    status.pop("renderStatus", None)
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        kept = [c for c in conditions if not (isinstance(c, dict) and c.get("type") == RENDERED_CONDITION)]
        if kept:
            status["conditions"] = kept
        else:
            status.pop("conditions")
    if not status:
        kptfile.pop("status")


__all__ = ["STRATEGIES", "Strategy", "update_strategy", "DEFAULT_KPTFILE", "RENDERED_CONDITION", "ROOT_KPTFILE", "is_kptfile", "without_render_status"]
