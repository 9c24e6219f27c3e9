"""Every example, through the real kpt (exec, twice) and through ``krm-merge run``.

The runs are those of :mod:`krm_merge.testing` (the catalog convention this
project offers every Python function author); krm-merge is its first user.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from krm_merge.testing import catalog_tests, discover

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")

pytestmark = pytest.mark.e2e


def test_there_are_examples() -> None:
    assert len([e for e in discover(EXAMPLES) if e.test_type == "eval"]) >= 3


test_example = catalog_tests([KRM_MERGE], EXAMPLES, standalone=[KRM_MERGE, "run"])
