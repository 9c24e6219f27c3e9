"""One writer: files change only through ``files.py`` (single files, atomically) and ``txn.py`` (packages).

Issue #23 asks for a check that fails when a second writer appears.  This
scans every module with ``ast`` for the calls that create, replace or remove
files and folders, and allows them only in the two homes and in the places
listed in ``SCRATCH``: each of those writes into a folder of its own (a git
cache under its flock, a temporary directory), never into the user's package
or a file the user named.
"""

from __future__ import annotations

import ast
from pathlib import Path

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
HOMES = {"krm_merge.files", "krm_merge.txn"}

# Calls that write, by attribute name (os.replace, Path.write_text, shutil.rmtree, ...).
WRITING_ATTRIBUTES = {
    "replace", "rename", "renames", "unlink", "remove", "rmdir", "removedirs", "rmtree", "move",
    "copy", "copy2", "copyfile", "copytree", "write_text", "write_bytes", "symlink", "link", "truncate",
}
WRITING_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}

# (module, function) -> why it may write outside the two homes.
SCRATCH = {
    ("krm_merge.upstream.git", "_repo_dir"): "the git mirror cache: cloned aside and renamed in, under its flock",
    ("krm_merge.upstream.git", "_init_bare"): "the git cache: an empty repository, in _repo_dir's folder aside",
    ("krm_merge.upstream.gitread", "write_entries"): "a version read from the git cache, into a fresh temporary directory",
    ("krm_merge.upstream.gitread", "_write_blob"): "one file of that version, O_EXCL|O_NOFOLLOW, in that directory",
    ("krm_merge.merge3.textfile", "merge_texts"): "git merge-file's three inputs, in a temporary directory",
    ("krm_merge.testing", "_prepare"): "the example harness copies an example into pytest's tmp_path",
    ("krm_merge.testing", "check_example"): "the example harness rewrites its expected results only when asked (update)",
    ("krm_merge.testing", "_update"): "the example harness rewrites its expected diff only when asked (update)",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_write(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        return _opens_for_writing(call)
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "open" and isinstance(func.value, ast.Name) and func.value.id == "os":
        return any(isinstance(n, ast.Attribute) and n.attr in WRITING_FLAGS for a in call.args for n in ast.walk(a))
    if func.attr == "open":
        return _opens_for_writing(call)
    if func.attr not in WRITING_ATTRIBUTES:
        return False
    receiver = func.value
    if isinstance(receiver, ast.Constant):
        return False
    if func.attr in {"replace", "remove", "copy", "move", "link", "truncate"}:
        # Only the os/shutil module functions of these names touch files; str.replace, list.remove... do not.
        return isinstance(receiver, ast.Name) and receiver.id in {"os", "shutil"}
    return True


def _opens_for_writing(call: ast.Call) -> bool:
    modes = list(call.args[1:2]) + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+") for m in modes)


def writes_in(source: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of every file system write in ``source``."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call) and _is_write(child):
                found.append((function, child.lineno))
            visit(child, name)

    visit(ast.parse(source), "<module>")
    return found


def _all_writes() -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module in HOMES:
            continue
        for function, line in writes_in(path.read_text(encoding="utf-8")):
            out.setdefault((module, function), []).append(line)
    return out


def test_files_are_written_only_by_files_and_txn_or_a_listed_scratch_place() -> None:
    unlisted = {where: lines for where, lines in _all_writes().items() if where not in SCRATCH}
    assert not unlisted, f"a second writer (write through krm_merge.files or krm_merge.txn, or list why not): {unlisted}"


def test_every_listed_scratch_place_still_writes() -> None:
    stale = sorted(set(SCRATCH) - set(_all_writes()))
    assert not stale, f"SCRATCH lists places that no longer write (remove them): {stale}"


def test_the_scan_sees_the_ways_a_file_is_written() -> None:
    sample = '''
import os, shutil
from pathlib import Path
def a(p): open(p, "w").write("x")
def b(p): os.replace(p, p + ".bak")
def c(p): Path(p).write_bytes(b"")
def d(p): shutil.rmtree(p)
def e(p): os.open(p, os.O_WRONLY | os.O_CREAT)
def f(p): p.unlink()
def g(p): open(p, mode="a")
def quiet(p, text, items):
    open(p).read(); open(p, "rb").read(); text.replace("a", "b"); items.remove(1); os.open(p, os.O_RDONLY)
'''
    assert [function for function, _ in writes_in(sample)] == ["a", "b", "c", "d", "e", "f", "g"]
