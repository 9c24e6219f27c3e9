"""Patch metadata: the built-in Kubernetes table, CRD schemas and declared keys.

The built-in table is read on first use only.
"""

from __future__ import annotations

from krm_merge.faces import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
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

# Where each public name lives.  They are imported on first use (PEP 562): importing any
# schema module runs this file first, and an update whose resources need no schema (most
# of a kpt-fetched package's: the 3-way merge only asks for one when both sides changed a
# resource) only needs ``base``, not the built-in table's reader, the CRD reader or the
# registry (~2 ms of its start-up, issue 24).
_HOMES = {
    "NO_META": ".base", "OPEN_SCHEMA": ".base", "PatchMeta": ".base", "SchemaLookupError": ".base",
    "SchemaNode": ".base",
    "builtin_kubernetes_version": ".builtin", "builtin_schema": ".builtin",
    "InvalidCrdError": ".crd", "crd_schemas": ".crd", "is_crd": ".crd",
    "KPT_DOCUMENTED_ASSOCIATIVE_KEYS": ".registry", "KYAML_INFERRED_KEY": ".registry", "DeclaredKey": ".registry",
    "DeclaredKeyError": ".registry", "SchemaRegistry": ".registry", "associative_key": ".registry",
}


__getattr__ = lazy_names(__name__, _HOMES, globals())


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
