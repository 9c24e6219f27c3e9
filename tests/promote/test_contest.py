"""The race rule of ``promote --push``: which of two values set on one field at once stands."""

from __future__ import annotations

import pytest

from krm_merge.promote.contest import ours_prevails, version_key


@pytest.mark.parametrize(("ours", "theirs"), [
    ("1.10.0", "1.9.3"), ("v2.0.0", "1.99.99"), ("2.0.0", "2.0.0-rc.1"), ("2.0.0-rc.2", "2.0.0-rc.1"),
    ("2.0.0-rc.10", "2.0.0-rc.9"), ("ghcr.io/acme/app:1.3.0", "ghcr.io/acme/app:1.2.9"),
    ("localhost:5000/app:1.3", "localhost:5000/app:1.2@sha256:" + "a" * 64), ("1.2.1", "1.2"),
])
def test_the_higher_version_prevails_and_the_lower_does_not(ours: str, theirs: str) -> None:
    assert ours_prevails(ours, theirs)
    assert not ours_prevails(theirs, ours)


@pytest.mark.parametrize(("ours", "theirs"), [
    ("sha256:" + "b" * 64, "1.0.0"), ("1.0.0", "sha256:" + "b" * 64), ("latest", "1.0.0"), ("1.2", "1.2.0"),
    ("v1.2.0", "1.2.0"), ("1.0.0", "1.0.0"), ("localhost:5000/app", "1.0.0"),
])
def test_what_is_not_a_newer_version_never_replaces_the_value_standing(ours: str, theirs: str) -> None:
    assert not ours_prevails(ours, theirs)


def test_a_value_that_is_not_a_version_has_no_key() -> None:
    assert version_key("main") is None and version_key("sha256:" + "c" * 64) is None
    assert version_key("1.2.3+build.5") == version_key("1.2.3")
