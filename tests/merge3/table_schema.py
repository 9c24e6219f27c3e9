"""A merge schema built from the copied kyaml associative-list table (test data).

Only for the conformance tests: kyaml's Kubernetes v1.21.2 table is what
the kyaml/kpt expectations were computed with.  Paths: ``a.b`` field, ``[]``
inside list elements, ``*`` map values.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from krm_merge.merge3.rules import PLAIN_LIST, ListRule, ListStrategy, MergeSchema

TABLE = Path(__file__).parent / "data" / "openapi" / "k8s-v1.21.2-associative-lists.yaml"


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], dict[str, tuple[str, ...]]]:
    data = yaml.safe_load(TABLE.read_text())
    out: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}
    for res in data["resources"]:
        lists = {e["path"]: tuple(e.get("keys") or ()) for e in res["lists"] if not e.get("non_associative_in_kyaml")}
        out[(res["apiVersion"], res["kind"])] = lists
    return out


class TableSchema:
    """MergeSchema over one resource type's list table."""

    def __init__(self, lists: dict[str, tuple[str, ...]], prefix: str = "") -> None:
        self.lists = lists
        self.prefix = prefix

    def _path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def map_field(self, key: str) -> MergeSchema | None:
        return TableSchema(self.lists, self._path(key))

    def list_field(self, key: str) -> tuple[ListRule, MergeSchema | None]:
        path = self._path(key)
        elem = TableSchema(self.lists, path + "[]")
        if path in self.lists:
            return ListRule(ListStrategy.ASSOCIATIVE, self.lists[path]), elem
        return PLAIN_LIST, elem


def table_resolver(api_version: str, kind: str) -> MergeSchema | None:
    """Schema of a built-in kind, None for unknown kinds (kyaml: no schema)."""
    lists = _table().get((api_version, kind))
    return TableSchema(lists) if lists is not None else None


def schema_for_doc(doc: Any) -> MergeSchema | None:
    """Look the top-level schema up from a document's apiVersion/kind."""
    if isinstance(doc, dict):
        return table_resolver(str(doc.get("apiVersion", "")), str(doc.get("kind", "")))
    return None
