"""The modes and commands krm-merge has, and the one place that imports them by name.

Each mode declares itself in its own module as one typed record, ``MODE =
Mode(...)``: its name (``data.mode`` of a ConfigMap), its kind (of a typed
functionConfig), its keys, how it parses its config and how it runs.  This
module holds the index of where each mode lives (name, kind, module), so a
functionConfig is routed without importing any mode, and only the mode that
runs is imported: the function path starts fast.  The commands of the
command line are loaded by name here too.

Layers: ``config`` routes through this module, which sits below it and
imports nothing of krm-merge's upper layers at the top.  The modes and the
commands sit above it; importing them by name in :func:`load_mode` and
:func:`load_command` is the one lazy edge of the import contract
(``[tool.importlinter]`` in pyproject.toml says so).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from krm_merge.errors import ConfigError
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # types only: the command line's start-up must not load the krm core, argparse or typing
    import argparse
    from typing import Any, Generic, Protocol, TypeVar

    from krm_merge.krm.resourcelist import ResourceList

    C = TypeVar("C")
else:  # only type checkers read the protocol and the generic base: plain classes at run time (issue 45)
    Protocol = object

    class Generic:
        """``Mode[C]`` is read by type checkers only."""

        def __class_getitem__(cls, params: object) -> type:
            return cls

    C = None

API_GROUP = "fn.krm-merge.dev"
API_VERSION = f"{API_GROUP}/v1alpha1"
API_VERSIONS = (API_VERSION,)  # every typed-config version this release understands


# The records below are not frozen dataclasses: every run of the command line and of the
# function builds these classes, and a frozen dataclass costs ~0.5-1 ms to create (generated
# code compiled at import) against ~0.1 ms for a NamedTuple; a generic NamedTuple (Mode) costs
# ~0.45 ms, a plain generic class with __slots__ ~0.03 ms (issue 24).


class Mode(Generic[C]):
    """A mode, as its module declares it (``MODE = Mode(...)``).

    ``name`` is what a ConfigMap's ``data.mode`` says, ``kind`` the kind of
    the typed form (every kind is of apiVersion :data:`API_VERSION`).
    ``keys`` is the one table of the keys the mode reads: the typed ``spec``
    takes all of them; a ConfigMap's ``data`` takes them as strings, except
    those a mode's ConfigMap parser leaves out because they need structure.
    ``from_configmap`` and ``from_typed`` turn the two forms into the mode's
    own config dataclass (``C``); ``run`` applies it to a ResourceList,
    editing the items and adding results.
    """

    __slots__ = ("name", "kind", "summary", "keys", "from_configmap", "from_typed", "run")

    def __init__(self, name: str, kind: str, summary: str, keys: tuple[str, ...],
                 from_configmap: Callable[[dict[str, str]], C], from_typed: Callable[[dict[str, Any]], C],
                 run: Callable[[ResourceList, C], None]) -> None:
        self.name = name
        self.kind = kind
        self.summary = summary
        self.keys = keys
        self.from_configmap = from_configmap
        self.from_typed = from_typed
        self.run = run

    def __repr__(self) -> str:
        return f"Mode(name={self.name!r}, kind={self.kind!r}, ...)"


class ModeEntry(Record):
    """Where a mode lives: what routing a functionConfig needs, known without importing the mode."""

    name: str
    kind: str
    module: str


MODES: dict[str, ModeEntry] = {
    entry.name: entry
    for entry in (
        ModeEntry("reorder-merge", "ReorderMerge", "krm_merge.modes.reorder_merge"),
        ModeEntry("pipeline-merge", "PipelineMerge", "krm_merge.modes.pipeline_merge"),
        ModeEntry("resource-merge", "ResourceMerge", "krm_merge.modes.resource_merge"),
        ModeEntry("promote", "Promote", "krm_merge.modes.promote"),
    )
}
KINDS: dict[str, ModeEntry] = {entry.kind: entry for entry in MODES.values()}


def load_mode(entry: ModeEntry) -> Mode[Any]:
    """The mode's record, importing its module (only the mode that runs is ever imported).

    Raises :class:`ConfigError` when the module is not in this build; a record
    that does not match its entry is a programming error (``TypeError``).
    """
    module = _import_own(entry.module)
    if module is None:
        raise ConfigError("mode", f"mode {entry.name!r} is not implemented in this version")
    mode = getattr(module, "MODE", None)
    if not isinstance(mode, Mode) or (mode.name, mode.kind) != (entry.name, entry.kind):
        raise TypeError(f"{entry.module}.MODE must be Mode(name={entry.name!r}, kind={entry.kind!r}, ...)")
    return mode


def all_modes() -> list[Mode[Any]]:
    """Every mode's record, in the registry's order (``--help`` lists them all)."""
    return [load_mode(entry) for entry in MODES.values()]


# --- commands -----------------------------------------------------------------------

COMMANDS = ("run", "diff", "update", "promote", "recover", "check", "conflicts", "resolve", "report")


class Command(Protocol):
    """A command module of the command line (``krm_merge.commands.<name>``)."""

    def main(self, argv: list[str]) -> int:
        """Run the command; the exit code."""

    def parser(self) -> argparse.ArgumentParser:
        """The command's argument parser (``--help`` shows it)."""


def load_command(name: str) -> Command | None:
    """The command module called ``name``; None when it is not in this build."""
    module: Command | None = _import_own(f"krm_merge.commands.{name}")
    return module


def _import_own(module_name: str) -> Any:
    """Import a module of krm-merge by name; None only when that very module is missing.

    A module that exists but fails to import (a missing dependency of it) is
    a broken install: the error propagates.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        return None
