"""Every property test's count of examples goes through ``tests.conftest.examples`` (issue 44).

The dependency runs of CI (``tools/check-deps.sh``) draw a share of each count; a literal
count written as a bare number would escape that and keep CI's whole run over its 30 minutes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import examples

TESTS = Path(__file__).resolve().parent.parent
LITERAL = re.compile(r"max_examples\s*=\s*\d")


def test_no_property_test_names_a_literal_count_of_examples() -> None:
    literal = [f"{path.relative_to(TESTS)}:{n}" for path in sorted(TESTS.rglob("*.py"))
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if LITERAL.search(line)]
    assert literal == [], f"write max_examples=examples(N) (tests/conftest.examples): {literal}"


@pytest.mark.parametrize(("scale", "count", "drawn"), [(1.0, 300, 300), (0.2, 300, 60), (0.2, 30, 10), (0.2, 2, 2)])
def test_the_share_of_examples_keeps_at_least_ten_and_never_adds(monkeypatch: pytest.MonkeyPatch, scale: float,
                                                                  count: int, drawn: int) -> None:
    import tests.conftest as conftest

    monkeypatch.setattr(conftest, "EXAMPLES_SCALE", scale)
    assert examples(count) == drawn
