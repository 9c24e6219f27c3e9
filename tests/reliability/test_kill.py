"""SIGKILL and SIGTERM at random instants during run, update and promote (fixed seeds; see killing.py)."""

from __future__ import annotations

import random
import signal
from pathlib import Path

import pytest

from .killing import Case, build_cases, trial

FILES = 1000
TRIALS = 3  # per command and signal: 6 a command; tools/kill_trials.py runs many more


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return {case.name: case for case in build_cases(tmp_path_factory.mktemp("kill"), FILES)}


@pytest.mark.parametrize("signo", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
@pytest.mark.parametrize("command", ["run", "update", "promote"])
def test_a_killed_command_leaves_the_package_before_or_after(
    cases: dict[str, Case], tmp_path: Path, command: str, signo: int
) -> None:
    rng = random.Random(f"{command}-{signo}")
    for _ in range(TRIALS):
        trial(cases[command], tmp_path, rng, signo)
