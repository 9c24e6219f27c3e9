"""One renderer: only ``outcomes/render.py`` prints, dumps results or formats a report.

Issue #32: results were typed but their meaning travelled in strings, the
results YAML was dumped in three places and about eleven one-line and report
formats lived in the commands.  Every command now builds one report of typed
outcomes and ``krm_merge.outcomes.render`` renders it.  This scans every
module with ``ast`` and fails when a second renderer appears:

* a reference to ``sys.stdout``/``sys.stderr`` or a ``print`` call (a line
  written outside the renderer);
* a ``{"results": ...}`` dict (kpt's results document built by hand);
* ``json.dumps(..., indent=...)`` (a JSON document) or a Markdown table rule
  (``| --- |``) in a string.

The few places that may are listed in ``ALLOWED`` with their reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
RENDERER = "krm_merge.outcomes.render"

# (module, function) -> why it may print or dump outside the renderer.
ALLOWED = {
    ("krm_merge.cli", "main"): "--help, --version and an unknown command: before any command runs",
    ("krm_merge.cli", "entry"): "flushes the streams before the process exits",
    ("krm_merge.cli", "_exit_status"): "a SystemExit carrying a message, printed as the interpreter would print it",
    ("krm_merge.fleet.run", "_start"): "flushes the streams before a worker is forked (else it writes them twice)",
    ("krm_merge.cli", "function_main"): "the function protocol: the ResourceList on stdout, LOG_TO_STDERR's stream",
    ("krm_merge.cli", "_subcommand"): "a command missing from this build: no command runs",
    ("krm_merge.sdk._main", "run"): "an SDK function's protocol: the ResourceList on stdout",
    ("krm_merge.sdk._core", "call_reporting_errors"): "the author's traceback, only with KRM_FN_TRACEBACK=1",
    ("krm_merge.krm.yamlio", "dump_results"): "the one home of the results wire format (the renderer's, the ResourceList's)",
    ("krm_merge.testing", "check_example"): "the example harness rewrites an example's expected results only when asked",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_stream(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def _renders(node: ast.AST) -> str | None:
    """What ``node`` renders outside the renderer, or None."""
    if _is_stream(node):
        return "writes to a standard stream"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
        return "prints"
    if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "results"
                                          and not isinstance(v, ast.Constant) for k, v in zip(node.keys, node.values)):
        return "builds a results document"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dumps"
            and any(k.arg == "indent" for k in node.keywords)):
        return "formats a JSON document"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and ("| ---" in node.value or "--- |" in node.value):
        return "formats a Markdown table"
    return None


def renderings_in(source: str) -> list[tuple[str, int, str]]:
    """(enclosing function, line, what) of everything ``source`` renders itself."""
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                continue  # a docstring may show a table
            inside = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            what = _renders(child)
            if what is not None:
                found.append((inside, getattr(child, "lineno", 0), what))
            visit(child, inside)

    visit(ast.parse(source), "<module>")
    return found


def test_only_the_renderer_prints_dumps_results_or_formats_a_report() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == RENDERER:
            continue
        for function, line, what in renderings_in(path.read_text(encoding="utf-8")):
            if (module, function) not in ALLOWED:
                offenders.append(f"{module}.{function} (line {line}) {what}")
    assert not offenders, "render through krm_merge.outcomes.render instead:\n" + "\n".join(offenders)


def test_every_allowed_place_still_renders() -> None:
    """A listed place that no longer prints or dumps is dropped from the list, so it cannot go stale."""
    found = {(_module_name(path), function)
             for path in PACKAGE.rglob("*.py") for function, _, _ in renderings_in(path.read_text(encoding="utf-8"))}
    assert set(ALLOWED) <= found, set(ALLOWED) - found


def test_the_scan_catches_each_kind_of_rendering() -> None:
    source = (
        "import sys, json\n"
        "def a():\n    sys.stderr.write('x')\n"
        "def b():\n    print('x')\n"
        "def c(r):\n    return {'results': r}\n"
        "def d(r):\n    return json.dumps(r, indent=2)\n"
        "def e():\n    return '| a |\\n| --- |'\n"
        "def ok(r):\n    '| a |  | --- |'\n    return json.dumps(r) + str({'items': r, 'results': None})\n"
    )
    assert [(f, what) for f, _, what in renderings_in(source)] == [
        ("a", "writes to a standard stream"), ("b", "prints"), ("c", "builds a results document"),
        ("d", "formats a JSON document"), ("e", "formats a Markdown table"),
    ]
