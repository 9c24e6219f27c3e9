"""The lock files agree with the ranges pyproject.toml declares.

``tools/lock.sh`` writes them; these checks catch a range edited without
regenerating them (the lock would then install what the range forbids, or
the lowest check would test a floor nobody declared).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.M)


def _declared(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = project["dependencies"] + [dep for extra in extras for dep in project["optional-dependencies"][extra]]
    return [Requirement(text) for text in texts]


def _pins(name: str) -> dict[str, Version]:
    text = (REQUIREMENTS / name).read_text(encoding="utf-8")
    return {canonicalize_name(pkg): Version(version) for pkg, version in PIN.findall(text)}


def _floor(req: Requirement) -> Version:
    floors = [Version(spec.version) for spec in req.specifier if spec.operator == ">="]
    assert len(floors) == 1, f"{req}: declare one lower bound (>=), so that the lowest check has a floor to test"
    return floors[0]


@pytest.mark.parametrize(("lock", "extras"), [("lock.txt", ("test", "docs")), ("lock-runtime.txt", ())])
def test_the_lock_pins_every_declared_dependency_inside_its_range(lock: str, extras: tuple[str, ...]) -> None:
    pins = _pins(lock)
    for req in _declared(*extras):
        name = canonicalize_name(req.name)
        assert name in pins, f"{lock} does not pin {req.name}: run tools/lock.sh"
        assert req.specifier.contains(pins[name], prereleases=True), f"{lock}: {name}=={pins[name]} is outside {req}"


def test_the_runtime_lock_is_the_full_locks_runtime_part() -> None:
    full, runtime = _pins("lock.txt"), _pins("lock-runtime.txt")
    assert {name: full.get(name) for name in runtime} == runtime


def test_the_lowest_lock_pins_each_declared_floor() -> None:
    pins = _pins("lowest.txt")
    for req in _declared("test", "docs"):
        assert pins.get(canonicalize_name(req.name)) == _floor(req), f"lowest.txt: {req.name} is not at the floor of {req}"


@pytest.mark.parametrize("lock", ["lock.txt", "lock-runtime.txt", "lock-fuzz.txt", "lowest.txt"])
def test_every_pin_carries_its_hashes(lock: str) -> None:
    entries = re.split(r"\n(?=[A-Za-z0-9])", (REQUIREMENTS / lock).read_text(encoding="utf-8"))
    pinned = [entry for entry in entries if PIN.match(entry)]
    assert pinned, lock
    for entry in pinned:
        assert "--hash=sha256:" in entry, f"{lock}: {entry.splitlines()[0]} has no hash (pip --require-hashes refuses it)"
