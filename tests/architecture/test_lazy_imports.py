"""Imports inside functions are few, each listed with its reason; modules load by name in one place.

An import belongs at the top of its module, where the import contract
(``lint-imports``) and a reader see it.  One inside a function is allowed only
where start-up time needs it (a light command, or the function path, must not
load what it does not use) or to break a real cycle, and then it is listed in
``ALLOWED`` below with that reason.  The test fails on an unlisted one, and on
a listed one that is gone (so the list cannot go stale).

Rows whose reason starts with ``TO_HOIST`` belong to files other branches are
rewriting (issue #23): they are listed so that this branch passes, and the
merge removes each row as its import is hoisted.  The limit counts the rows
that stay.

Importing a module *by name* (``importlib.import_module``) hides an arrow from
the contract: only the registry (modes and commands), the one PEP 562 face
(``krm_merge.faces``, used by ``krm_merge.smp``, ``krm_merge.merge3`` and
``krm_merge.schema``) and merge3's engine door do it.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
LIMIT = 40
TO_HOIST = "owned by"


class Lazy(NamedTuple):
    module: str  # the module holding the import
    function: str  # the function it sits in
    imported: str  # the module it imports
    reason: str = ""


_START_UP = "start-up: "
ALLOWED: list[Lazy] = [
    # --- kept: start-up time needs them ---------------------------------------------------------------
    Lazy("krm_merge.files", "__enter__", "fcntl",
         _START_UP + "every path loads files; only the runs that take a lock (an update, the forge's pacing) need it"),
    Lazy("krm_merge.files", "_fold_name", "unicodedata",
         _START_UP + "every path loads files; only a name that is not ASCII is folded through Unicode's tables"),
    Lazy("krm_merge.update.context", "_merge_kptfile", "krm_merge.kptfile.merge",
         _START_UP + "the Kptfile merge loads the 3-way engine; an update or package merge that merges no Kptfile skips it"),
    Lazy("krm_merge.update.context", "_resolve", "krm_merge.schema.registry",
         _START_UP + "only a resource changed on both sides needs a schema (the registry and the table's reader, ~2 ms)"),
    Lazy("krm_merge.krm.itemviews", "_fastyaml", "krm_merge.krm.fastyaml",
         _START_UP + "the fast reader costs ~11 ms to import; only items read through it load it"),
    Lazy("krm_merge.krm.itemviews", "_rtedit", "krm_merge.krm.rtedit",
         _START_UP + "runs that change no item never load the round-trip editor (ruamel)"),
    Lazy("krm_merge.promote.engine", "_fullpath", "krm_merge.promote.fullpath",
         _START_UP + "runs on promote's fast path never load libyaml"),
    Lazy("krm_merge.yaml.load", "libyaml", "krm_merge.yaml.libyaml",
         _START_UP + "the one door to PyYAML: readers that never parse with it do not load it"),
    Lazy("krm_merge.yaml.load", "ruamel", "ruamel.yaml",
         _START_UP + "the one door to ruamel: only round-trip reads and prints load it"),
    Lazy("krm_merge.update.other_files", "plan_other_files", "krm_merge.merge3.textfile",
         _START_UP + "only --files merge merges text files"),
    Lazy("krm_merge.update.ledger", "_bind_document", "krm_merge.krm.fastyaml",
         _START_UP + "the fast reader costs ~11 ms to import; only an update checking markers of its ledger loads it"),
    Lazy("krm_merge.update.ledger", "_plain", "krm_merge.merge3.nodes",
         _START_UP + "merge3.nodes loads ruamel; only a round-trip tree (a document the fast reader cannot read, "
         "conflicts' own) is converted"),
    Lazy("krm_merge.commands.update", "parser", "krm_merge.commands.base",
         _START_UP + "the plain form `update PKG[@REF]` is read without the command base and argparse (~3.5 ms)"),
    Lazy("krm_merge.commands.update", "main", "krm_merge.commands.fleet",
         _START_UP + "the fleet form (--ref) and its worker pool, sharding and report: never on `update PKG[@REF]`"),
    Lazy("krm_merge.update.git", "_ledger", "krm_merge.update.ledger",
         _START_UP + "only an update that writes a marker, or finds a ledger in the package, loads the ledger's "
         "bindings and the marker engine (~6M instructions of a no-op update's start-up, issue 45)"),
    Lazy("krm_merge.update.git", "_merge_planner", "krm_merge.update.planner",
         _START_UP + "imported past the no-op check only (a no-op update never loads the merge), "
         "while git writes the archives"),
    Lazy("krm_merge.cli", "function_main", "krm_merge.runner",
         _START_UP + "--version and the commands that do not run a mode never load the runner and the krm core"),
    Lazy("krm_merge.cli", "_display", "krm_merge.krm.display",
         _START_UP + "--version and --help print no content, so they never load the escaping"),
    Lazy("krm_merge.change.stage", "_change", "krm_merge.change.publish",
         _START_UP + "only a run with --pull-request loads git's steps, the forges and urllib.request (~20 ms)"),
    Lazy("krm_merge.change.pipeline", "_stages", "krm_merge.change.stages",
         _START_UP + "a plain update or promote (no --pull-request, no --push) never loads the stages, their words, "
         "git's steps and the promote pipeline's reader"),
    Lazy("krm_merge.cli", "_say_interrupted", "krm_merge.outcomes.render",
         _START_UP + "only a run stopped by a signal outside any command's report says it here"),
    Lazy("krm_merge.cli", "usage", "krm_merge.usage",
         _START_UP + "only --help builds the whole parser (argparse, textwrap and every command's module)"),
    Lazy("krm_merge.modes.promote", "unread_file_warnings", "krm_merge.promote.files",
         _START_UP + "only `krm-merge run` calls it; the promote function path never reads files"),
    Lazy("krm_merge.modes.reorder_merge", "_apply_desired", "krm_merge.smp.kubectl_apply",
         _START_UP + "only `desired` needs the patch-creation engine; a patch run never loads it"),
    Lazy("krm_merge.sdk._main", "run", "krm_merge.sdk._directory",
         _START_UP + "only a function run on a directory loads the package reader, the writer, the renderer and argparse"),
    Lazy("krm_merge.smp", "_create", "krm_merge.smp.create",
         _START_UP + "a plain patch (the function path) never loads the patch-creation engine"),
    Lazy("krm_merge.smp", "offline_apply", "krm_merge.smp.kubectl_apply",
         _START_UP + "a plain patch (the function path) never loads the kubectl apply engine"),
    Lazy("krm_merge.smp.go_yaml", "to_yaml", "yaml", _START_UP + "PyYAML only for the (rare) conflict message"),
    Lazy("krm_merge.sdk._core", "call_reporting_errors", "traceback",
         _START_UP + "only a function's crash with KRM_FN_TRACEBACK=1 prints a traceback: every function run loaded "
         "traceback, textwrap, linecache and tokenize for it (~11M instructions, issue 45)"),
    Lazy("krm_merge.smp.values", "_go_float", "decimal", _START_UP + "the patch engine of the function path; decimal only for Go's float format"),
    # --- other branches' files (issue #23), to hoist there ------------------------------------------------
    Lazy("krm_merge.commands.diff", "pick_schema", "krm_merge.schema",
         "optional: a generated module that may be absent (ImportError fallback)"),
    Lazy("krm_merge.promote.filemode", "plan", "krm_merge.promote.engine",
         "start-up: a tree without marked files never loads the promote engine"),
    Lazy("krm_merge.commands.run", "after_read", "krm_merge.modes.promote",
         "start-up: only a promote-mode run loads that mode"),
    Lazy("krm_merge.files", "_tempfile", "tempfile",
         "start-up: write path and scratch folders only (a no-op update never loads it)"),
    Lazy("krm_merge.files", "_file_diff", "difflib",
         "start-up: only diffs the fast path cannot make"),
    Lazy("krm_merge.krm.yamlio", "_load_all_fast", "krm_merge.krm.fastyaml",
         _START_UP + "the fast reader costs ~11 ms to import"),
    Lazy("krm_merge.promote.engine", "promote_units", "krm_merge.promote.kustomize_images",
         _START_UP + "kustomize_images and strategies pull in PyYAML"),
    Lazy("krm_merge.promote.engine", "promote_units", "krm_merge.promote.strategies",
         _START_UP + "kustomize_images and strategies pull in PyYAML"),
    Lazy("krm_merge.promote.request", "resolve", "krm_merge.promote.strategies",
         _START_UP + "strategies pull in PyYAML"),
    Lazy("krm_merge.txn", "_linux_calls", "ctypes",
         "start-up: only a write loads it (syncfs from 256 files, renameat2 for each swap)"),
]
# The modules that import modules by name: the registry (modes, commands), the one PEP 562
# face (faces.lazy_names: smp, merge3 and schema load their modules on first use), and
# merge3's engine door (merge3.merge3 loads the walker on first use).
IMPORTS_BY_NAME = {"krm_merge.registry", "krm_merge.faces", "krm_merge.merge3"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (PACKAGE.parent / relative).with_suffix(".py").is_file() or (PACKAGE.parent / relative / "__init__.py").is_file()


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules a statement imports: ``from krm_merge import files`` imports ``krm_merge.files``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    names = [f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")]
    return names or [base]


def _lazy_in(module: str, is_package: bool, source: str) -> list[Lazy]:
    """Every import inside a function (or method, or nested function) of a module's source."""
    found: list[Lazy] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
            elif function is not None and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(Lazy(module, function, name) for name in _imported(module, is_package, child))
            else:
                visit(child, function)

    visit(ast.parse(source), None)
    return found


def _lazy_in_file(path: Path) -> list[Lazy]:
    return _lazy_in(_module_name(path), path.name == "__init__.py", path.read_text(encoding="utf-8"))


def _found() -> Counter[tuple[str, str, str]]:
    return Counter(lazy[:3] for path in sorted(PACKAGE.rglob("*.py")) for lazy in _lazy_in_file(path))


def test_every_import_inside_a_function_is_listed_and_every_listed_one_exists() -> None:
    found, listed = _found(), Counter(lazy[:3] for lazy in ALLOWED)
    unlisted = sorted((found - listed).elements())
    gone = sorted((listed - found).elements())
    assert not unlisted, f"imports inside functions not in ALLOWED (hoist them, or list them with a reason): {unlisted}"
    assert not gone, f"ALLOWED lists imports that are no longer there (remove the rows): {gone}"


def test_every_listed_import_has_a_reason() -> None:
    assert all(lazy.reason.strip() for lazy in ALLOWED)
    assert all(lazy.reason.startswith((_START_UP, TO_HOIST, "the PEP 562", "optional: ")) for lazy in ALLOWED)


def test_at_most_forty_imports_stay_inside_functions() -> None:
    kept = [lazy for lazy in ALLOWED if not lazy.reason.startswith(TO_HOIST)]
    assert len(kept) <= LIMIT, f"{len(kept)} imports inside functions are kept; at most {LIMIT}"


def _imports_by_name(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                return True
    return False


def test_only_the_registry_and_the_smp_face_import_modules_by_name() -> None:
    by_name = {_module_name(path) for path in PACKAGE.rglob("*.py") if _imports_by_name(path)}
    assert by_name == IMPORTS_BY_NAME


def test_the_finder_sees_imports_in_functions_methods_and_nested_functions_only() -> None:
    source = ("import os\nif os.name:\n    import sys\nclass A:\n    import copy\n    def m(self):\n        import json\n"
              "def f():\n    def g():\n        from . import files\n    from .krm import values\n")
    assert _lazy_in("krm_merge.probe", False, source) == [
        Lazy("krm_merge.probe", "m", "json"),
        Lazy("krm_merge.probe", "g", "krm_merge.files"),
        Lazy("krm_merge.probe", "f", "krm_merge.krm.values"),
    ]
