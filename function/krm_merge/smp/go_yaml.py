"""YAML output as Kubernetes prints it (``sigs.k8s.io/yaml``, i.e. go-yaml v2)."""

from __future__ import annotations

from typing import Any

from krm_merge.yaml import scalars


def to_yaml(value: Any) -> str:
    """YAML as ``sigs.k8s.io/yaml`` (go-yaml v2) prints it in Kubernetes messages.

    Sorted keys, block style, double quotes where quoting is needed (also for
    YAML 1.1 booleans such as ``y``), literal blocks for multi-line strings.
    """
    import yaml  # only needed for the (rare) conflict message

    class GoYamlEmitterStyle(yaml.SafeDumper):
        def choose_scalar_style(self) -> Any:
            style = super().choose_scalar_style()
            return '"' if style == "'" else style

    def represent_str(dumper: yaml.SafeDumper, text: str) -> Any:
        if "\n" in text:
            return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
        if text in scalars.YAML11_BOOLEAN_WORDS:
            return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
        return dumper.represent_str(text)

    GoYamlEmitterStyle.add_representer(str, represent_str)
    return str(
        yaml.dump(
            value, Dumper=GoYamlEmitterStyle, sort_keys=True, default_flow_style=False,
            allow_unicode=True, width=1 << 30,
        )
    )
