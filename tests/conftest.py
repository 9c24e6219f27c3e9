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
