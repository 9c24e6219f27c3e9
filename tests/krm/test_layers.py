"""The package's layers hold: the import-linter contract, and no import cycles.

The contract lives in pyproject.toml (``[tool.importlinter]``); grimp, the
graph builder under import-linter, sees imports inside functions and under
``TYPE_CHECKING`` too, so a cycle cannot hide behind a function-level import.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Known cycles, each with the change that removes it.
KNOWN_CYCLES = {
    # removed by the merge3 split (the walker owns all traversal; assoc only decides)
    frozenset({"krm_merge.merge3.assoc", "krm_merge.merge3.walker"}),
}


def test_import_linter_contract_is_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint_imports), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


def _import_graph() -> dict[str, list[str]]:
    import grimp

    graph = grimp.build_graph("krm_merge", cache_dir=None)
    return {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}


def _cycles(edges: dict[str, list[str]]) -> list[frozenset[str]]:
    """Strongly connected groups of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_cycles() -> None:
    unexpected = [sorted(c) for c in _cycles(_import_graph()) if c not in KNOWN_CYCLES]
    assert not unexpected, unexpected


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["f"], "f": ["e"], "g": ["g2"], "g2": []}
    assert sorted(map(sorted, _cycles(edges))) == [["a", "b", "c"], ["e", "f"]]
