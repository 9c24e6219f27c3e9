"""Typed requests, parsed once (issue #44): below ``krm_merge/commands/`` no code takes an argparse namespace.

A command reads its command line and builds a typed request
(:class:`krm_merge.update.result.UpdateRequest`, its policies enums); every
module below the commands takes that request.  So no module outside
``krm_merge/commands/`` imports or uses ``argparse.Namespace`` or
``SimpleNamespace``, nor names ``Namespace`` in an annotation, and the update command's per-package path
neither imports the fleet command nor loads it by name: the fleet calls the
update's pipeline (:mod:`krm_merge.fleet.package`), not the other way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
COMMANDS = PACKAGE / "commands"


def _below_the_commands() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if COMMANDS not in p.parents]


def _namespace_uses(tree: ast.AST) -> list[str]:
    """Each import of a namespace class, each use of ``argparse.Namespace`` or ``types.SimpleNamespace``, and each
    annotation naming a Namespace, with its line (a parser of its own, ``import argparse``, is no namespace)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and {a.name for a in node.names} & {"Namespace", "SimpleNamespace"}:
            found.append(f"{node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Attribute) and node.attr in {"Namespace", "SimpleNamespace"}:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            annotations += [a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                                    *filter(None, [args.vararg, args.kwarg])]]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for annotation in filter(None, annotations):
            text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
            if "Namespace" in str(text):
                found.append(f"{annotation.lineno}: annotated {text}")
    return found


def test_no_module_below_the_commands_takes_an_argparse_namespace() -> None:
    found = {str(p.relative_to(PACKAGE)): uses for p in _below_the_commands()
             if (uses := _namespace_uses(ast.parse(p.read_text(), str(p))))}
    assert not found, f"argparse namespaces below krm_merge/commands/: {found}"


def _update_command() -> tuple[ast.Module, list[ast.FunctionDef]]:
    tree = ast.parse((COMMANDS / "update.py").read_text())
    return tree, [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def test_the_update_command_loads_the_fleet_command_for_the_fleet_form_alone() -> None:
    tree, functions = _update_command()
    # No import of the fleet command at the top, and no load by name (registry.load_command) anywhere.
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            assert "fleet" not in node.module and "fleet" not in {a.name for a in node.names}, ast.unparse(node)
    loads = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call) and "load_command" in ast.unparse(n.func)]
    assert not loads, f"the update command loads a command by name: {loads}"
    # The one import of the fleet command sits in main, under `if args.ref is not None` (the fleet form).
    holders = [f.name for f in functions for n in ast.walk(f)
               if isinstance(n, ast.ImportFrom) and "fleet" in {a.name for a in n.names} | {n.module or ""}]
    assert holders == ["main"], holders


def test_the_fleet_form_is_given_the_options_read_once() -> None:
    # The fleet command is called with the namespace the update command read, not with argv to read again.
    _, functions = _update_command()
    main = next(f for f in functions if f.name == "main")
    calls = [n for n in ast.walk(main) if isinstance(n, ast.Call) and ast.unparse(n.func).startswith("fleet.")]
    assert [ast.unparse(c) for c in calls] == ['fleet.run(args, request_from(args, package=\'\', ref=args.ref))']
