"""The PEP 562 face of a package: public names imported from their modules on first use.

A package whose modules are costly to import (the merge engine pulls in
ruamel.yaml, the schema package the built-in table's reader) lists where each
public name lives; importing the package, or any module in it, then costs
nothing until a name is used, and a short run (a small ``update``, the
function path) never pays for modules it does not use (issue 24).  Type
checkers and readers see the names through the package's ``TYPE_CHECKING``
imports.  This module imports nothing of krm-merge.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def lazy_names(package: str, homes: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps a public name to its module
    (relative, e.g. ``".walker"``); the name is imported on first use and kept in
    ``namespace`` (the package's ``globals()``), so later uses are plain lookups."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value
        return value

    return __getattr__


__all__ = ["lazy_names"]
