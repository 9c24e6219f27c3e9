"""The public API: exactly the committed names, each documented; ``py.typed`` shipped.

``public_names.txt`` is the semver promise in machine-readable form (README,
"What is public").  Removing or renaming a public name is a breaking change:
this test fails until the list is edited on purpose (and the major version
bumped).  Adding a name also needs the list updated, so every addition is a
deliberate one.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

import krm_merge

HERE = Path(__file__).parent
PUBLIC_MODULES = ("krm_merge.smp", "krm_merge.sdk", "krm_merge.testing")
COMMITTED = [line.strip() for line in (HERE / "public_names.txt").read_text().splitlines() if line.strip()]


def _all_names() -> list[str]:
    return sorted(f"{m}.{n}" for m in PUBLIC_MODULES for n in importlib.import_module(m).__all__)


def test_all_matches_the_committed_list() -> None:
    actual = set(_all_names())
    removed = sorted(set(COMMITTED) - actual)
    added = sorted(actual - set(COMMITTED))
    assert not removed, f"public names removed from __all__ (a breaking change): {removed}"
    assert not added, f"new public names: add them to tests/api/public_names.txt on purpose: {added}"


def _variable_docstrings(module: ModuleType) -> dict[str, str]:
    """Docstrings of module-level assignments (a string literal right after them, as pdoc reads them).

    A package's (``krm_merge.sdk``) are those of its own modules too: it re-exports their names.
    """
    sources = [Path(inspect.getfile(module))]
    if hasattr(module, "__path__"):
        sources = sorted(Path(inspect.getfile(module)).parent.glob("*.py"))
    out: dict[str, str] = {}
    for source in sources:
        out.update(_assignment_docstrings(source.read_text()))
    return out


def _assignment_docstrings(source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    body = ast.parse(source).body
    for node, following in zip(body, body[1:]):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and isinstance(following, ast.Expr) and isinstance(
                following.value, ast.Constant) and isinstance(following.value.value, str):
            out[target.id] = following.value.value
    return out


@pytest.mark.parametrize("qualified", COMMITTED)
def test_every_public_name_exists_and_has_a_docstring(qualified: str) -> None:
    module_name, _, name = qualified.rpartition(".")
    module = importlib.import_module(module_name)
    assert hasattr(module, name), f"{qualified} does not exist"
    value = getattr(module, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        doc = inspect.getdoc(value) if inspect.isclass(value) else value.__doc__
        assert doc and doc.strip(), f"{qualified} has no docstring"
    else:
        assert _variable_docstrings(module).get(name, "").strip(), f"{qualified} has no docstring"


def _own_public_methods() -> list[str]:
    out = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            # its own classes, and a package's (krm_merge.sdk re-exports those of its modules)
            if inspect.isclass(value) and (value.__module__ == module_name
                                           or value.__module__.startswith(f"{module_name}._")):
                out += [f"{module_name}.{name}.{attr}" for attr, member in vars(value).items()
                        if not attr.startswith("_") and callable(getattr(member, "__func__", member))]
    return out


@pytest.mark.parametrize("qualified", _own_public_methods())
def test_methods_of_public_classes_have_docstrings(qualified: str) -> None:
    module_name, class_name, attr = qualified.rsplit(".", 2)
    member = getattr(getattr(importlib.import_module(module_name), class_name), attr)
    assert (member.__doc__ or "").strip(), f"{qualified} has no docstring"


def test_public_modules_have_docstrings() -> None:
    for module_name in PUBLIC_MODULES:
        assert (importlib.import_module(module_name).__doc__ or "").strip(), module_name


def test_package_is_typed() -> None:
    assert (Path(krm_merge.__file__).parent / "py.typed").is_file()


def test_the_documented_entry_points_work() -> None:
    # "pip install krm-merge; from krm_merge import smp; smp.apply(live, patch)".
    from krm_merge import sdk, smp, testing  # noqa: F401

    assert callable(smp.apply) and callable(sdk.run) and callable(testing.catalog_tests)


def test_the_sdk_binds_exactly_its_public_names() -> None:
    # The SDK's internals (the directory engine, the run sequence the CLI shares) live in its private
    # modules: `from krm_merge.sdk import run_directory` must fail, not quietly bind an unstable name.
    from krm_merge import sdk

    bound = {name for name, value in vars(sdk).items()
             if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"}
    assert bound == set(sdk.__all__)


@pytest.mark.parametrize("internal", ["run_directory", "function_config_from_args", "call_reporting_errors",
                                      "read_input", "run_resource_list", "run_text_with_results"])
def test_the_sdk_does_not_export_its_internals(internal: str) -> None:
    with pytest.raises(ImportError):
        exec(f"from krm_merge.sdk import {internal}", {})
