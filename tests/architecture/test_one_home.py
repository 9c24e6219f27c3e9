"""One concept, one home: no second field-path formatter, equality, resource label, layout detector,
comment finder, read-back check, YAML printer, YAML reader or git runner appears outside the module that owns it.

The scan reads every module of ``krm_merge`` with ``ast``.  A function whose
name says it is one of these concepts may live outside its home only as a
delegating wrapper (listed in ``WRAPPERS``; its body must call the home's
function) or as a listed exception with its reason (``EXCEPTIONS``).  Every
listed entry must still exist, and the scanner is shown a planted second copy
of each concept, so neither the lists nor the patterns can go stale silently.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import krm_merge

PACKAGE = Path(krm_merge.__file__).parent

# concept -> (pattern of function names, home module, the home's public functions)
CONCEPTS: dict[str, tuple[re.Pattern[str], str, frozenset[str]]] = {
    "field path": (re.compile(r"_?(?:(?:format|render|parse|split)_(?:field_)?path|format_key|escape_key)"),
                   "krm/values.py", frozenset({"format_path", "parse_path", "format_key"})),
    "deep equality": (re.compile(r"_?(?:deep_?equal|same|values?_equal|data_equal|equal_data)"),
                      "krm/values.py", frozenset({"deep_equal", "same"})),
    "resource label": (re.compile(r"_?resource_label"), "krm/values.py", frozenset({"resource_label"})),
    "layout detector": (re.compile(r"_?(?:layout_of|text_layout|detect_layout|\w*_layout_of)"),
                        "yaml/layout.py", frozenset({"layout_of"})),
    "comment finder": (re.compile(r"_?(?:dash_column|last_slot|tail_slot)"),
                       "krm/yamlio.py", frozenset({"dash_column", "last_slot"})),
    "read-back check": (re.compile(r"_?(?:reads?_back\w*|read_back\w*|verify\w*)"),
                        "krm/yamlio.py", frozenset({"read_back_error"})),
}

# (module, function) -> the home function its body calls: a second name, not a second implementation.
WRAPPERS: dict[tuple[str, str], str] = {
    ("merge3/conflicts.py", "split_path"): "parse_path",  # a rule's path: the one grammar, strict, with wildcards
    ("promote/strategies.py", "parse_field_path"): "parse_path",  # fieldPath errors as PromoteError
    ("merge3/nodes.py", "same"): "same",  # ruamel nodes to plain data, then the one equality
    ("merge3/plain.py", "_same"): "same",  # plain data's: absence first, then the one equality
}

# (module, function) -> why it is not the concept its name suggests.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("promote/edit.py", "_same"): "compares libyaml node trees (tags, and the spliced scalars' text), not data",
    ("promote/edit.py", "verify"): "promote's node-level check of a byte splice; kept beside _same (see docs/internals.md)",
    ("krm/yamlio.py", "_tail_slot"): "the home module's own helper",
    ("merge3/visit.py", "same"): "the Representation protocol's declaration (each representation's is a wrapper)",
}

# Calls that read or print YAML with a library, and where each may appear.
YAML_CONSTRUCTION_HOME = "yaml/load.py"  # YAML(...): the one ruamel instance factory
PRINT_HOMES = {"krm/yamlio.py": "the round-trip printer and dump_data",
               "smp/go_yaml.py": "go-yaml's text for kubectl's error messages (PyYAML emitter, not an item)",
               "testing.py": "prints results in an assertion message (owned by the registry task)"}
PARSE_CALLS = frozenset({"safe_load", "safe_load_all", "load", "load_all", "compose", "compose_all", "full_load"})
# Modules still calling PyYAML's parser directly, each with its reason (the list may only shrink).
PARSE_EXCEPTIONS: dict[str, str] = {}

# git is started by one module (found once, its environment set by profile, one error); any other module that
# starts a process is listed with what it starts, and may not start git.
GIT_HOME = "gitexec.py"
PROCESS_HOMES = {"testing.py": "kpt and the function under test, for a function's author (its git: gitexec)"}
_OS_PROCESS_CALLS = re.compile(r"system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*")


def _modules() -> dict[str, ast.Module]:
    return {p.relative_to(PACKAGE).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))}


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        names.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return names


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> imported name, for ``from x import y as z``."""
    return {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}


def second_homes(modules: dict[str, ast.Module]) -> list[str]:
    """Every function outside its concept's home that is neither a checked wrapper nor a listed exception."""
    found = []
    for rel, tree in modules.items():
        aliases = _import_aliases(tree)
        for fn in _functions(tree):
            for concept, (pattern, home, public) in CONCEPTS.items():
                if rel == home or not pattern.fullmatch(fn.name) or (rel, fn.name) in EXCEPTIONS:
                    continue
                wrapped = WRAPPERS.get((rel, fn.name))
                calls = {aliases.get(name, name) for name in _called_names(fn)}
                if wrapped is not None and wrapped in public and wrapped in calls:
                    continue
                found.append(f"{rel}:{fn.lineno} {fn.name} (a second {concept}; its home is {home})")
    return found


def yaml_library_calls(modules: dict[str, ast.Module]) -> list[str]:
    """``YAML(...)`` outside the factory, ``.dump(`` of a YAML library outside the printers, parses outside yaml/."""
    found = []
    for rel, tree in modules.items():
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            if name == "YAML" and rel != YAML_CONSTRUCTION_HOME:
                found.append(f"{rel}:{call.lineno} constructs YAML() (the factory is {YAML_CONSTRUCTION_HOME})")
            elif name in ("dump", "dump_all", "safe_dump") and owner in ("yaml", "rt", "ruamel") and rel not in PRINT_HOMES:
                found.append(f"{rel}:{call.lineno} prints YAML itself (the printer is krm/yamlio.py)")
            elif (name in PARSE_CALLS and owner == "yaml" and not rel.startswith("yaml/")
                  and rel not in PARSE_EXCEPTIONS):
                found.append(f"{rel}:{call.lineno} parses YAML outside yaml/load.py")
    return found


def process_starts(tree: ast.Module) -> list[ast.AST]:
    """Every import of ``subprocess`` and every call of ``os`` that starts or replaces a process."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "subprocess" for a in node.names):
            found.append(node)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "subprocess":
            found.append(node)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "os"
              and _OS_PROCESS_CALLS.fullmatch(node.func.attr)):
            found.append(node)
    return found


def _names_git(node: ast.AST) -> bool:
    """Whether a process call's arguments name git: the word ``git`` (or a path ending in it), or a variable or
    attribute called like it (``git``, ``self.git``, ``git_path``)."""
    for sub in ast.walk(node):
        word = (sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else None)
        if word is not None and (word == "git" or word.endswith("/git")):
            return True
        name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else ""
        if "git" in name.lower():
            return True
    return False


def git_starters(modules: dict[str, ast.Module]) -> list[str]:
    """Modules other than the git runner that start a process without being listed, or that start git."""
    found = []
    for rel, tree in modules.items():
        if rel == GIT_HOME:
            continue
        starts = process_starts(tree)
        if starts and rel not in PROCESS_HOMES:
            found.append(f"{rel}:{starts[0].lineno} starts a process (git is run by {GIT_HOME}; anything else: "
                         "list it in PROCESS_HOMES with its reason)")
            continue
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            func = call.func
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            if owner in ("subprocess", "os") and any(_names_git(arg) for arg in [*call.args, *call.keywords]):
                found.append(f"{rel}:{call.lineno} runs git itself (git is run by {GIT_HOME})")
    return found


def test_git_is_started_by_its_runner_only() -> None:
    modules = _modules()
    assert git_starters(modules) == []
    assert process_starts(modules[GIT_HOME]), f"{GIT_HOME} no longer starts git: move GIT_HOME to where it is started"


@pytest.mark.parametrize("rel", sorted(PROCESS_HOMES))
def test_every_listed_process_home_still_starts_one(rel: str) -> None:
    assert process_starts(_modules()[rel]), f"{rel} no longer starts a process: drop it from PROCESS_HOMES"


@pytest.mark.parametrize(("rel", "source"), [
    ("change/new.py", "import subprocess\nsubprocess.run(['git', 'status'])\n"),  # git, in a module not listed
    ("merge3/new.py", "from subprocess import run\nrun(['true'])\n"),  # any process, in a module not listed
    ("modes/new.py", "import os\nos.execvp('/usr/bin/git', ['git'])\n"),
    ("testing.py", "import subprocess\nsubprocess.run(['git', 'diff'], check=True)\n"),  # listed, but git
    ("testing.py", "import subprocess\nsubprocess.Popen([self.git, 'fetch'])\n"),
])
def test_a_planted_git_start_is_found(rel: str, source: str) -> None:
    assert len(git_starters({rel: ast.parse(source)})) == 1


def test_no_second_home_of_a_concept() -> None:
    assert second_homes(_modules()) == []


def test_yaml_is_constructed_printed_and_parsed_in_its_homes_only() -> None:
    assert yaml_library_calls(_modules()) == []


def test_every_home_defines_its_concept() -> None:
    modules = _modules()
    for concept, (_, home, public) in CONCEPTS.items():
        defined = {fn.name for fn in _functions(modules[home])} | {
            t.id for n in ast.walk(modules[home]) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        assert public <= defined, f"{home} no longer defines {sorted(public - defined)} ({concept})"


@pytest.mark.parametrize("entry", sorted(WRAPPERS) + sorted(EXCEPTIONS))
def test_every_listed_function_still_exists(entry: tuple[str, str]) -> None:
    rel, name = entry
    assert name in {fn.name for fn in _functions(_modules()[rel])}, f"{rel}:{name} is gone: drop it from the list"


@pytest.mark.parametrize("rel", sorted(PARSE_EXCEPTIONS) + sorted(PRINT_HOMES))
def test_every_listed_yaml_caller_still_calls_the_library(rel: str) -> None:
    tree = _modules()[rel]
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert calls & (PARSE_CALLS | {"dump", "dump_all", "safe_dump"}), f"{rel} no longer calls a YAML library: drop it from the list"


PLANTED = {
    "field path": "def render_path(parts):\n    return '.'.join(parts)\n",
    "deep equality": "def values_equal(a, b):\n    return a == b\n",
    "resource label": "def resource_label(kind, name):\n    return kind + '/' + name\n",
    "layout detector": "def text_layout(text):\n    return 2\n",
    "comment finder": "def dash_column(seq):\n    return seq.lc.col\n",
    "read-back check": "def reads_back(text, data):\n    return True\n",
}


@pytest.mark.parametrize("concept", sorted(PLANTED))
def test_a_planted_second_home_is_found(concept: str) -> None:
    found = second_homes({"modes/new.py": ast.parse(PLANTED[concept])})
    assert len(found) == 1 and concept in found[0]


def test_a_wrapper_that_stops_delegating_is_found() -> None:
    rogue = "def split_path(path):\n    return tuple(path.split('.'))\n"
    assert second_homes({"merge3/conflicts.py": ast.parse(rogue)})


@pytest.mark.parametrize("source", [
    "from ruamel.yaml import YAML\nrt = YAML()\n",
    "import yaml\nyaml.dump({}, None)\n",
    "import yaml\nyaml.safe_load('a: 1')\n",
])
def test_a_planted_yaml_library_call_is_found(source: str) -> None:
    assert len(yaml_library_calls({"modes/new.py": ast.parse(source)})) == 1
