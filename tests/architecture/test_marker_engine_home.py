"""The conflict-marker engine has one home, below the commands (issue 44, point 2).

``krm-merge conflicts`` and ``resolve`` parse their arguments and call the
engine in ``update/conflicts.py`` (the ``Marker`` record, the finders
and resolvers by kind, ``register``, ``scan``); ``update``, ``check`` and the
fleet report what it finds.  Checked with ``ast``: no module under
``commands/`` defines a name of the engine, and ``commands/conflicts.py``
defines nothing public but ``parser`` and ``main``.  Each check is also run
on a planted sample that must fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge
from krm_merge.update import conflicts as engine

PACKAGE = Path(krm_merge.__file__).resolve().parent
COMMANDS = PACKAGE / "commands"
# The engine's names: the record, the registry and what a kind registers, the scans.
ENGINE = {name for name in engine.__all__} | {"_doc_markers", "_field_lines", "_resolve_doc", "_take"}
COMMAND_NAMES = {"parser", "main"}


def defined(tree: ast.Module) -> set[str]:
    """The functions and classes a module defines at its top level."""
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def engine_in_commands(modules: dict[str, ast.Module]) -> list[str]:
    """``module: name`` for each engine name a command module defines."""
    return sorted(f"{rel}: {name}" for rel, tree in modules.items() for name in defined(tree) & ENGINE)


def public_beyond_the_command(tree: ast.Module) -> set[str]:
    """What the conflicts command defines that is public and not its parser or entry point."""
    return {name for name in defined(tree) if not name.startswith("_")} - COMMAND_NAMES


def _commands() -> dict[str, ast.Module]:
    return {path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text()) for path in sorted(COMMANDS.glob("*.py"))}


def test_no_command_module_defines_the_marker_engine() -> None:
    assert engine_in_commands(_commands()) == []


def test_the_conflicts_command_is_its_parser_and_its_entry_point() -> None:
    assert public_beyond_the_command(_commands()["commands/conflicts.py"]) == set()


def test_a_planted_engine_in_a_command_is_found() -> None:
    rogue = ast.parse("def scan(root):\n    return []\n\nclass Marker:\n    pass\n\ndef parser():\n    pass\n")
    assert engine_in_commands({"commands/rogue.py": rogue}) == ["commands/rogue.py: Marker", "commands/rogue.py: scan"]
    assert public_beyond_the_command(rogue) == {"scan", "Marker"}
