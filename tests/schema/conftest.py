"""Shared fixtures for the schema tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from krm_merge.schema import PatchMeta, SchemaNode

Walk = Callable[[SchemaNode, str], tuple[SchemaNode | None, PatchMeta]]


def _walk(node: SchemaNode, path: str) -> tuple[SchemaNode | None, PatchMeta]:
    """Follow a dot path: ``x[]`` is a list lookup (elements), ``*`` a map value, else a map lookup."""
    sub: SchemaNode | None = node
    meta = PatchMeta()
    for segment in path.split("."):
        assert sub is not None, f"nothing below {path}"
        if segment.endswith("[]"):
            sub, meta = sub.lookup_slice(segment[:-2])
        elif segment == "*":
            sub, meta = sub.lookup_struct("any-key")
        else:
            sub, meta = sub.lookup_struct(segment)
    return sub, meta


@pytest.fixture
def walk() -> Walk:
    """The path walker (see :func:`_walk`)."""
    return _walk
