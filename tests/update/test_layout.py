"""The update keeps kpt's shape: the command only parses and renders, one plan type, one module per strategy.

kpt's ``internal/util/update`` is the model (an ``Updater`` interface, one
file per strategy); these checks read the source (AST), so a second plan
type, a tree walk or a file write in ``commands/update.py``, or a walk
outside ``update/tree.py`` fails here before it spreads.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge
from krm_merge.kptfile.document import STRATEGIES, Strategy
from krm_merge.update import updater

PACKAGE = Path(krm_merge.__file__).parent
UPDATE = PACKAGE / "update"

WALKS = {"walk", "rglob", "glob", "iterdir", "scandir", "listdir", "list_package", "copytree", "check_untrusted",
         "prune_untrusted"}
"""Calls that walk a directory tree."""
WRITES = {"write_text", "write_bytes", "commit", "replace", "rename", "unlink", "rmtree", "mkdir", "rmdir"}
"""Calls that change files (``open`` in a writing mode is checked apart)."""


def _called_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "")
    return names


def _opens_for_writing(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
            modes = [a for a in node.args[1:2]] + [k.value for k in node.keywords if k.arg == "mode"]
            if any(isinstance(m, ast.Constant) and set(str(m.value)) & set("wax+") for m in modes):
                return True
    return False


def command_logic(source: str) -> list[str]:
    """What a command module does beyond parsing and rendering: each walk or write, by function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            called = _called_names(node)
            found += [f"{node.name} walks ({name})" for name in sorted(called & WALKS)]
            found += [f"{node.name} writes ({name})" for name in sorted(called & WRITES)]
            if _opens_for_writing(node):
                found.append(f"{node.name} opens a file for writing")
    return found


def plan_types(source: str) -> list[str]:
    """Classes that hold planned file changes: named like a plan, or with a ``writes`` field."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            fields = {t.target.id for t in node.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}
            if node.name.endswith(("Plan", "Write", "ChangeSet")) or "writes" in fields:
                found.append(node.name)
    return found


def test_the_update_command_neither_walks_nor_writes() -> None:
    source = (PACKAGE / "commands" / "update.py").read_text(encoding="utf-8")
    assert command_logic(source) == []


def test_the_scan_sees_a_walk_and_a_write() -> None:
    sample = ("import os\ndef f(root):\n    for d in os.walk(root):\n        pass\n"
              "def g(p):\n    p.write_text('x')\n    open(p, 'w')\n")
    assert command_logic(sample) == ["f walks (walk)", "g writes (write_text)", "g opens a file for writing"]


def test_update_has_one_plan_type() -> None:
    found = {path.name: plan_types(path.read_text(encoding="utf-8")) for path in sorted(UPDATE.glob("*.py"))}
    assert {name: types for name, types in found.items() if types} == {"plan.py": ["UpdatePlan"]}


def test_the_scan_sees_a_second_plan_type() -> None:
    sample = "from dataclasses import dataclass\n@dataclass\nclass Other:\n    writes: list\n\nclass SubPlan:\n    pass\n"
    assert plan_types(sample) == ["Other", "SubPlan"]


def test_only_the_tree_module_lists_packages() -> None:
    """No module of update lists or copies a tree: each copy is listed once into its snapshot (krm/snapshot.py),
    which the steps filter, and a recursive update plans over an overlay of it in memory."""
    walkers = {path.name: sorted(_called_names(ast.parse(path.read_text(encoding="utf-8"))) & WALKS)
               for path in UPDATE.glob("*.py")}
    assert {name: found for name, found in walkers.items() if found} == {}


def test_each_strategy_has_its_updater_in_a_module_named_after_it() -> None:
    assert set(updater.UPDATERS) == set(Strategy)
    assert tuple(s.value for s in Strategy) == STRATEGIES
    for strategy, instance in updater.UPDATERS.items():
        assert type(instance).__module__ == f"krm_merge.update.{strategy.value.replace('-', '_')}"
        assert callable(instance.check) and callable(instance.update)
