"""Patch metadata: the built-in Kubernetes table, CRD schemas and declared keys.

The built-in table is read on first use only.
"""

from .base import NO_META, OPEN_SCHEMA, PatchMeta, SchemaLookupError, SchemaNode
from .builtin import builtin_kubernetes_version, builtin_schema
from .crd import InvalidCrdError, crd_schemas, is_crd
from .registry import (
    KPT_DOCUMENTED_ASSOCIATIVE_KEYS,
    KYAML_INFERRED_KEY,
    DeclaredKey,
    DeclaredKeyError,
    SchemaRegistry,
    associative_key,
)

__all__ = [
    "KPT_DOCUMENTED_ASSOCIATIVE_KEYS",
    "KYAML_INFERRED_KEY",
    "NO_META",
    "OPEN_SCHEMA",
    "DeclaredKey",
    "DeclaredKeyError",
    "InvalidCrdError",
    "PatchMeta",
    "SchemaLookupError",
    "SchemaNode",
    "SchemaRegistry",
    "associative_key",
    "builtin_kubernetes_version",
    "builtin_schema",
    "crd_schemas",
    "is_crd",
]
