"""PyYAML (libyaml) loader and dumper with Kubernetes' rules, imported on first use.

Kept apart from :mod:`krm_merge.yaml.load` so that a run whose items the fast
reader handles never pays PyYAML's import time.  Use it through that module:
it bounds what it reads.
"""

from __future__ import annotations

import yaml

from krm_merge.yaml import scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Dumper", "Loader", "StringLoader", "yaml"]


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _NotesDuplicates:
    """A key written twice in one mapping is read last-wins, as kubectl reads it;
    each repeat is noted in ``duplicates`` as (key, 1-based line)."""

    def __init__(self, stream: Any) -> None:
        # a mixin: the super() is the libyaml loader it is mixed into, which takes the stream
        super().__init__(stream)  # type: ignore[call-arg]
        self.duplicates: list[tuple[str, int]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            self.note_duplicates(node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

    def note_duplicates(self, node: yaml.MappingNode) -> None:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            ident = (key_node.tag, key_node.value)
            if ident in seen:
                self.duplicates.append((key_node.value, key_node.start_mark.line + 1))
            seen.add(ident)


class Loader(_NotesDuplicates, yaml.CSafeLoader):
    """libyaml-backed safe loader with Kubernetes' scalar types, minus timestamps."""


class StringLoader(_NotesDuplicates, yaml.CBaseLoader):
    """libyaml-backed loader keeping every scalar as the string written (no type resolution)."""


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


class Dumper(yaml.CSafeDumper):
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
