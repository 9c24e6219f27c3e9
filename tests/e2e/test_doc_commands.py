"""The commands shown in README.md and docs/*.md run as written on what the project ships.

A newcomer copies them: a command that fails, or succeeds without doing what the page
says, is a bug of the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*/README.md"))]


def test_install_is_said_one_way_from_a_checkout() -> None:
    """krm-merge is not on PyPI: `pip install krm-merge` fails; every page installs from a checkout."""
    for page in PAGES:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            where = f"{page.relative_to(ROOT)}:{number}"
            assert not re.search(r"pip install\s+(-\S+\s+)*krm-merge\b", line), f"{where}: {line}"
