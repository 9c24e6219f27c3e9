"""merge3's shape: the walker owns traversal, no cycles, nothing imported from above (kptfile, modes)."""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge.merge3 as merge3

PACKAGE = Path(merge3.__file__).parent


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at module level or inside functions (relative ones resolved)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = "krm_merge.merge3" if node.level == 1 else "krm_merge"
                out.add(f"{base}.{node.module}" if node.module else base)
            else:
                out.add(node.module or "")
    return out


GRAPH = {f"krm_merge.merge3.{p.stem}": imports_of(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}


def test_merge3_imports_nothing_from_above() -> None:
    for module, imported in GRAPH.items():
        above = [m for m in imported if m.startswith(("krm_merge.kptfile", "krm_merge.modes", "krm_merge.commands", "krm_merge.cli"))]
        assert not above, (module, above)


def test_associative_lists_do_not_walk() -> None:
    assert not GRAPH["krm_merge.merge3.assoc"] & {"krm_merge.merge3.walker", "krm_merge.merge3.visitor"}


def test_no_import_cycles_inside_merge3() -> None:
    def visit(module: str, stack: tuple[str, ...]) -> None:
        assert module not in stack, " -> ".join(stack + (module,))
        for dep in GRAPH.get(module, ()):
            if dep in GRAPH:
                visit(dep, stack + (module,))

    for module in GRAPH:
        visit(module, ())
