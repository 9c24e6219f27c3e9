"""Kptfile helpers: function identities, the 3-way Kptfile (pipeline) merge, upstream and lock.

The package's face is lazy (PEP 562): ``update``'s no-op path reads a
Kptfile's upstream through :mod:`.upstream` and must not pay for the merge's
ruamel import that :mod:`.merge` brings.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "function_identity": "functions", "image_without_tag": "functions",
    "KptfileMergeResult": "merge", "merge_kptfile": "merge", "merge_kptfile_text": "merge",
}


def __getattr__(name: str) -> Any:
    """The public names of the submodules, imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = ["KptfileMergeResult", "function_identity", "image_without_tag", "merge_kptfile", "merge_kptfile_text"]
