"""A SchemaNode for the OpenAPI-v3-like ``data/schema.yaml`` of the conformance cases.

Follows ``PatchMetaFromOpenAPIV3``: a field must be listed under
``properties`` (else ``unable to find api field "<k>"``); the patch extensions
are read from the property itself, then ``$ref`` is followed to the value's
schema; for arrays the ``items`` schema is the element schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from krm_merge.schema.base import PatchMeta, SchemaLookupError, SchemaNode

DATA = Path(__file__).parent / "data"


def load_yaml(name: str) -> Any:
    """Load a data file with a YAML 1.2 loader (plain dict/list/scalars)."""
    return YAML(typ="safe", pure=True).load((DATA / name).read_text())


class OpenApiV3Node:
    """One object schema of an OpenAPI v3 document."""

    def __init__(self, document: dict[str, Any], node: dict[str, Any]) -> None:
        self.document = document
        self.node = node

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node or ("allOf" in node and node["allOf"]):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                node = self.document["components"]["schemas"][name]
            else:
                node = node["allOf"][0]
        return node

    def _property(self, key: str) -> tuple[dict[str, Any], PatchMeta]:
        properties = self.node.get("properties")
        if not properties or key not in properties:
            raise SchemaLookupError(f'unable to find api field "{key}"')
        prop = properties[key]
        strategy = prop.get("x-kubernetes-patch-strategy")
        meta = PatchMeta(
            strategies=tuple(strategy.split(",")) if strategy else (),
            merge_key=prop.get("x-kubernetes-patch-merge-key"),
        )
        return self._resolve(prop), meta

    def lookup_struct(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        sub, meta = self._property(key)
        return OpenApiV3Node(self.document, sub), meta

    def lookup_slice(self, key: str) -> tuple[SchemaNode | None, PatchMeta]:
        sub, meta = self._property(key)
        if sub.get("type") == "array" and "items" in sub:
            sub = self._resolve(sub["items"])
        return OpenApiV3Node(self.document, sub), meta


def conformance_schema(reference: str) -> OpenApiV3Node:
    """The schema named by a data file's ``schema:`` field (``schema.yaml#/components/schemas/x``)."""
    file_name, _, pointer = reference.partition("#")
    document = load_yaml(file_name)
    node: Any = document
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return OpenApiV3Node(document, node)
