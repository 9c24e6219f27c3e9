"""Shared fixtures: paths and helpers to build ResourceLists."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "krm" / "corpus"


def require_binary(name: str) -> str:
    """The path of a real tool; e2e tests skip without it, except on CI where it must exist."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is required on CI but was not found on PATH")
        pytest.skip(f"{name} not found on PATH")
    return path


def _hypothesis_profiles() -> None:
    """On CI, property tests draw the same examples every run (derandomized).

    A red CI must mean a regression, not a new random draw; exploration with
    fresh examples happens on developer machines (the default profile).
    """
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    if os.environ.get("CI") == "true":
        settings.load_profile("ci")


_hypothesis_profiles()

EXAMPLES_SCALE = float(os.environ.get("KRM_MERGE_EXAMPLES_SCALE", "1"))
"""``KRM_MERGE_EXAMPLES_SCALE``: the share of each property test's examples drawn (``tools/check-deps.sh``: 0.2).

The whole suite draws every example once, on the locked dependencies; the runs on the lowest and the newest
dependencies ask the same questions of the YAML readers and printers with fewer draws each (issue 44: CI
within 30 minutes, the main run whole)."""


def examples(count: int) -> int:
    """A property test's ``max_examples``: ``count``, or its share under :data:`EXAMPLES_SCALE` (at least 10)."""
    if EXAMPLES_SCALE >= 1:
        return count
    return max(min(count, 10), round(count * EXAMPLES_SCALE))
