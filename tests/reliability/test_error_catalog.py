"""The error table of docs/errors.md matches what the tool really says."""

from __future__ import annotations

import pytest

from .error_catalog import CASES
from .harness import ROOT

DOC = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.error_class)
def test_documented_message_is_real(case) -> None:  # type: ignore[no-untyped-def]
    message = case.run().replace("|", "\\|").replace("\n", " ")
    assert f"| {case.error_class} | {case.where} | {message} |" in DOC, (
        f"docs/errors.md is out of date for {case.error_class!r}; the tool now says:\n{message}\n"
        "(regenerate rows with: python -m tests.reliability.error_catalog)")
