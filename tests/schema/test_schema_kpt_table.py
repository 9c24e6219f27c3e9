"""Our built-in table against kyaml's associative-list table (Kubernetes v1.21.2).

kpt 1.0.0-beta.56 decides which lists are associative from kyaml's embedded
v1.21.2 OpenAPI; our table is generated from a newer release.  Every list
path of every kind both have must agree (strategy and keys, by kyaml's rule,
which :func:`associative_key` implements); kinds we lack must be alpha/beta
API versions removed from Kubernetes since 1.21.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.schema import SchemaNode, associative_key, builtin_schema

TABLE = Path(__file__).parent / "data" / "k8s-v1.21.2-associative-lists.yaml"


def _load() -> dict[str, Any]:
    with TABLE.open() as stream:
        return yaml.safe_load(stream)


KPT = _load()


def _parent_and_field(root: SchemaNode, path: str) -> tuple[SchemaNode, str]:
    """Walk to the node owning the last field of a kpt table path."""
    *parents, last = path.split(".")
    node: SchemaNode | None = root
    for segment in parents:
        assert node is not None
        if segment.endswith("[]"):
            node, _ = node.lookup_slice(segment[:-2])
        elif segment == "*":
            node, _ = node.lookup_struct("any-key")
        else:
            node, _ = node.lookup_struct(segment)
    assert node is not None
    return node, last


def _resources_we_have() -> list[dict[str, Any]]:
    return [r for r in KPT["resources"] if builtin_schema(r["apiVersion"], r["kind"]) is not None]


def test_table_is_the_expected_upstream_data():
    assert KPT["kind"] == "AssociativeListTable"
    assert KPT["kubernetes_version"] == "v1.21.2"
    assert len(KPT["resources"]) == 165


def test_every_kind_of_kyamls_table_is_ours_but_kustomization():
    """Old group versions (extensions/v1beta1 Ingress, batch/v1beta1 CronJob, ...) are in
    our table too, from the Kubernetes releases that served them."""
    missing = [(r["apiVersion"], r["kind"]) for r in KPT["resources"]
               if builtin_schema(r["apiVersion"], r["kind"]) is None]
    assert missing == [("kustomize.config.k8s.io/v1beta1", "Kustomization")]


@pytest.mark.parametrize(
    "resource", _resources_we_have(), ids=lambda r: f"{r['apiVersion']}/{r['kind']}"
)
def test_associative_lists_agree_with_kyaml(resource):
    root = builtin_schema(resource["apiVersion"], resource["kind"])
    assert root is not None
    for entry in resource["lists"]:
        parent, field = _parent_and_field(root, entry["path"])
        keys = associative_key(parent, field)
        if entry.get("non_associative_in_kyaml"):
            assert keys is None, entry["path"]
            continue
        assert keys == tuple(entry["keys"]), entry["path"]
        _, meta = parent.lookup_slice(field)
        assert ",".join(meta.strategies) == entry["strategy"], entry["path"]


def test_enough_paths_are_compared():
    compared = sum(len(r["lists"]) for r in _resources_we_have())
    assert compared >= 840
