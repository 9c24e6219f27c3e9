"""The function's catalog examples, through real kpt (twice) and standalone."""

import sys
from pathlib import Path

from krm_merge.testing import catalog_tests

HERE = Path(__file__).parent

test_examples = catalog_tests([sys.executable, HERE / "label_deployments.py"], HERE / "examples")
