"""PyYAML (libyaml) loader and dumper with Kubernetes' rules, imported on first use.

Kept apart from :mod:`krm_merge.krm.yamlio` so that a run whose items the fast
reader handles never pays PyYAML's import time.
"""

from __future__ import annotations

from typing import Any

import yaml

from krm_merge.yaml import scalars

__all__ = ["Dumper", "Loader", "yaml"]


class Loader(yaml.CSafeLoader):  # type: ignore[misc,name-defined]
    """libyaml-backed safe loader with Kubernetes' scalar types, minus timestamps."""


Loader.yaml_implicit_resolvers = scalars.without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


def _construct_untagged(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


# Unknown tags (`!Ref`, `!!python/object`) become plain data, never objects.
Loader.add_constructor(None, _construct_untagged)
Loader.add_constructor(scalars.TIMESTAMP_TAG, lambda loader, node: loader.construct_scalar(node))


class Dumper(yaml.CSafeDumper):  # type: ignore[misc,name-defined]
    """Compact sequences (kyaml's style) and kyaml's quoting of ambiguous strings."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if scalars.needs_double_quotes(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


Dumper.add_representer(str, _represent_str)
