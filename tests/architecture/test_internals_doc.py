"""docs/internals.md is the map of the code: every module is on it, and every name on it exists.

Two checks keep the map and the house in step:

* every module path (``update/git.py``, ``krm_merge/txn.py``), dotted module
  name (``krm_merge.krm.values``, ``krm_merge.sdk.KubeObject``) and module
  member (``krm/values.deep_equal``) written in ``docs/*.md`` or README.md
  names something that exists, so a moved or deleted module cannot stay in the
  docs;
* every module of ``function/krm_merge`` is named in docs/internals.md at
  least once, so a new module has to be placed on the map.

Both are plain functions over text, so each is also run on a planted sample
that must fail.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import krm_merge

PACKAGE = Path(krm_merge.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[2]
INTERNALS = ROOT / "docs" / "internals.md"
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]

# `update/git.py`, `krm_merge/txn.py`, `tests/helpers.py`, `txn.py`: a Python file by its path.
PATH_REF = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.py)\b")
# `krm_merge.krm.values`, `krm_merge.sdk.KubeObject`: a module, then maybe names in it.
DOTTED_REF = re.compile(r"(?<![\w.])krm_merge(?:\.\w+)+")
# `krm/values.deep_equal`, `krm/pkgio.ChangeSet.apply`: a module by its path, then names in it
# (the whole dotted tail is taken, so a data file such as `schema/k8s_patchmeta.json.gz` is recognised as one).
MEMBER_REF = re.compile(r"(?<![\w./-])((?:\w+/)+\w+)((?:\.\w+)+)")

# The top-level folders of the package: a member reference is checked only
# when its path starts with one (``docs/merge.md`` is a file, not a member).
SUBPACKAGES = frozenset(p.parent.name for p in PACKAGE.glob("*/__init__.py"))

# Python files a doc names that are not krm-merge's: the reader's own files in examples.
NOT_OURS: dict[str, str] = {
    "fn.py": "the user's function file in the SDK examples (api.md, README.md)",
    "my_function.py": "the user's function file in api.md's example",
    "label_deployments.py": "the file the SDK tutorial writes",
    "set_team.py": "the user's function file in api.md's ten-line recipe",
}

# Modules that need no place of their own on the map.
OFF_THE_MAP: dict[str, str] = {
    "__main__.py": "`python -m krm_merge`: two lines calling cli.main",
}


def _module_of(parts: list[str]) -> tuple[Path, int] | None:
    """The longest prefix of ``parts`` (under krm_merge) that is a module, and its length."""
    for n in range(len(parts), 0, -1):
        base = PACKAGE.joinpath(*parts[:n])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path, n
    return None


def _missing_member(module_parts: list[str], names: list[str]) -> str | None:
    """The first of ``names`` (a chain of attributes) the module does not have, or None."""
    obj = importlib.import_module(".".join(["krm_merge", *module_parts]))
    for name in names:
        if not hasattr(obj, name):
            return name
        obj = getattr(obj, name)
    return None


def _package_relative(path: str) -> str:
    for prefix in ("function/krm_merge/", "krm_merge/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def stale_refs(text: str) -> list[str]:
    """Every module path, dotted name or module member in ``text`` that does not exist."""
    found = []
    for m in PATH_REF.finditer(text):
        ref = m.group(1).removeprefix("../")  # a link from a page of docs/ to the checkout's root
        if "/" not in ref:
            # a bare file name: it exists somewhere in the package, the tests or the examples
            if ref not in NOT_OURS and not any(any(where.rglob(ref)) for where in (PACKAGE, ROOT / "tests",
                                                                                   ROOT / "examples")):
                found.append(f"{ref}: no such file")
        elif not (ROOT / ref).is_file() and not (PACKAGE / _package_relative(ref)).is_file():
            found.append(f"{ref}: no such file")
    for m in DOTTED_REF.finditer(text):
        parts = m.group(0).split(".")[1:]
        module = _module_of(parts)
        if module is None:
            found.append(f"{m.group(0)}: no such module")
        elif module[1] < len(parts) and (name := _missing_member(parts[:module[1]], parts[module[1]:])):
            found.append(f"{m.group(0)}: no {name} in krm_merge.{'.'.join(parts[:module[1]])}")
    for m in MEMBER_REF.finditer(text):
        path, names = m.group(1), m.group(2).split(".")[1:]
        parts = _package_relative(path + "/").rstrip("/").split("/")
        if names[0] == "py" or parts[0] not in SUBPACKAGES or _is_file(m.group(0)):
            continue  # a Python file (PATH_REF's), a path outside the package (docs/merge.md), a data file
        module = _module_of(parts)
        if module is None or module[1] < len(parts):
            found.append(f"{m.group(0)}: no module {path}.py")
        elif name := _missing_member(parts, names):
            found.append(f"{m.group(0)}: no {name} in {path}.py")
    return found


def _is_file(ref: str) -> bool:
    """Whether ``ref`` names a file of the repository or the package (``schema/k8s_patchmeta.json.gz``)."""
    return (ROOT / ref).is_file() or (PACKAGE / _package_relative(ref)).is_file()


def named_modules(text: str) -> set[str]:
    """The package modules ``text`` names, as paths relative to krm_merge (``krm/values.py``)."""
    named = set()
    for m in PATH_REF.finditer(text):
        named.add(_package_relative(m.group(1)))
    for m in DOTTED_REF.finditer(text):
        module = _module_of(m.group(0).split(".")[1:])
        if module is not None:
            named.add(module[0].relative_to(PACKAGE).as_posix())
    for m in MEMBER_REF.finditer(text):
        parts = _package_relative(m.group(1) + "/").rstrip("/").split("/")
        module = _module_of(parts)
        if module is not None and module[1] == len(parts):
            named.add(module[0].relative_to(PACKAGE).as_posix())
    return named


def _is_bare_package(path: Path) -> bool:
    """An ``__init__.py`` holding only its docstring (or ``__version__``): the folder's name, not a module."""
    def bare(node: ast.stmt) -> bool:
        return ((isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
                or (isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__version__"]))

    return all(bare(node) for node in ast.parse(path.read_text(encoding="utf-8")).body)


def package_modules() -> list[str]:
    """Every module of krm_merge that must be on the map, relative to the package."""
    return sorted(rel for p in PACKAGE.rglob("*.py")
                  if (rel := p.relative_to(PACKAGE).as_posix()) not in OFF_THE_MAP
                  and not (p.name == "__init__.py" and _is_bare_package(p)))


def unplaced(modules: list[str], text: str) -> list[str]:
    """The modules ``text`` does not name."""
    named = named_modules(text)
    return [rel for rel in modules if rel not in named]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_module_a_doc_names_exists(doc: Path) -> None:
    assert stale_refs(doc.read_text(encoding="utf-8")) == []


def test_every_module_is_on_the_map() -> None:
    assert unplaced(package_modules(), INTERNALS.read_text(encoding="utf-8")) == [], (
        "place each new module in docs/internals.md (or list it in OFF_THE_MAP with why)")


def test_a_planted_stale_name_is_found() -> None:
    sample = ("`merge3/package.py` plans; `krm_merge.merge3.text` prints; `krm/values.no_such_name` "
              "formats; `krm_merge.krm.values.nope` compares; `text_layout.py` lays out")
    found = stale_refs(sample)
    assert [f.split(":")[0] for f in found] == [
        "merge3/package.py", "text_layout.py", "krm_merge.merge3.text", "krm_merge.krm.values.nope",
        "krm/values.no_such_name"]


def test_real_names_are_not_stale() -> None:
    sample = ("`krm_merge/txn.py`, `update/git.py`, `tests/helpers.py`, `krm_merge.krm.values.format_path`, "
              "`krm/values.deep_equal`, `krm_merge.sdk.KubeObject.path`, `docs/merge.md`, `fn.py`")
    assert stale_refs(sample) == []


def test_a_module_off_the_map_is_found() -> None:
    text = "`krm/values.py` and `krm_merge.txn`, `yaml/load.compose_all`"
    assert unplaced(["krm/values.py", "txn.py", "yaml/load.py", "update/new_strategy.py"], text) == [
        "update/new_strategy.py"]


@pytest.mark.parametrize("name", sorted(OFF_THE_MAP))
def test_every_module_off_the_map_still_exists(name: str) -> None:
    assert (PACKAGE / name).is_file(), f"{name} is gone: drop it from OFF_THE_MAP"
