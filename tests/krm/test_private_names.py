"""No private name crosses a module boundary inside krm_merge.

A leading underscore means "only this module uses it": importing such a
name, or reaching it through an imported module (``yamlio._helper``), is what
made one rule grow several homes.  The scan reads every module's AST.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).parent


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _crossings(text: str, where: str) -> list[str]:
    tree = ast.parse(text)
    modules: set[str] = set()  # local names bound to krm_merge modules
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("krm_merge") or (
            isinstance(node, ast.ImportFrom) and node.level
        ):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno} imports {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("krm_merge"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name):
            if node.value.id in modules:
                found.append(f"{where}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


def test_no_private_name_crosses_a_module() -> None:
    crossings = [
        c for path in sorted(PACKAGE.rglob("*.py"))
        for c in _crossings(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert not crossings, crossings


def test_the_scan_sees_a_crossing() -> None:
    sample = ("from krm_merge.krm import yamlio\nfrom krm_merge.yaml.load import _note_duplicates\n"
              "x = yamlio._load_all_fast\ny = yamlio.load_data\n")
    assert _crossings(sample, "probe.py") == [
        "probe.py:2 imports _note_duplicates", "probe.py:3 uses yamlio._load_all_fast"]
