"""Turning a functionConfig into a mode and that mode's typed config.

Two forms are accepted, as in the kpt-functions-catalog:

* a ConfigMap whose ``data`` holds strings (what ``kpt fn eval -- k=v`` and a
  Kptfile ``configMap:`` produce); ``data.mode`` names the mode;
* a typed resource ``apiVersion: fn.krm-merge.dev/v1alpha1`` whose kind names
  the mode (``ReorderMerge``, ``PipelineMerge``, ``ResourceMerge``,
  ``Promote``) and whose ``spec`` holds the same keys, typed.

Each mode module turns either form into its own dataclass.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from krm_merge.errors import ConfigError
from krm_merge.krm.kubeobject import KubeObject

API_GROUP = "fn.krm-merge.dev"
API_VERSION = f"{API_GROUP}/v1alpha1"
API_VERSIONS = (API_VERSION,)  # every typed-config version this release understands


@dataclass(frozen=True)
class ModeInfo:
    name: str
    module: str
    kind: str
    summary: str


MODES: dict[str, ModeInfo] = {
    info.name: info
    for info in (
        ModeInfo("reorder-merge", "krm_merge.modes.reorder_merge", "ReorderMerge",
                 "apply Kubernetes strategic merge patches exactly as the API server does"),
        ModeInfo("pipeline-merge", "krm_merge.modes.pipeline_merge", "PipelineMerge",
                 "3-way merge of Kptfile pipelines (kpt's Pipeline Merge design)"),
        ModeInfo("resource-merge", "krm_merge.modes.resource_merge", "ResourceMerge",
                 "kpt pkg update's 3-way package merge"),
        ModeInfo("promote", "krm_merge.modes.promote", "Promote",
                 "set fields marked for GitOps promotion"),
    )
}
KIND_TO_MODE = {info.kind: info.name for info in MODES.values()}


@dataclass(frozen=True)
class Invocation:
    """The chosen mode, its module and its parsed config."""

    mode: ModeInfo
    module: ModuleType
    config: Any


def resolve(function_config: KubeObject | None) -> Invocation:
    """Find the mode a functionConfig asks for and parse its config."""
    data = function_config.data if function_config is not None else None
    if not data:
        raise ConfigError("", "no functionConfig given; " + _how_to_choose())
    if not isinstance(data, dict):
        raise ConfigError("", "must be an object")
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    if kind == "ConfigMap" and api_version == "v1":
        return _from_configmap(_as_strings(function_config.text, data) if function_config else data)
    group = api_version.rpartition("/")[0]
    if group == API_GROUP:
        if api_version not in API_VERSIONS:
            raise ConfigError(
                "apiVersion",
                f"unknown apiVersion {api_version!r} for kind {kind or '<no kind>'}; "
                f"valid: {', '.join(API_VERSIONS)}",
            )
        return _from_typed(kind, data)
    raise ConfigError(
        "kind",
        f"unsupported functionConfig {api_version or '<no apiVersion>'}/{kind or '<no kind>'}; "
        + _how_to_choose(),
    )


def mode_name(function_config: KubeObject | None) -> str | None:
    """The mode a functionConfig names, without reading its config (None if it names none).

    The same routing as :func:`resolve`, for callers that only need to know the mode
    (``krm-merge run`` treats a promote run's unreadable files as the command does).
    """
    data = function_config.data if function_config is not None else None
    if not isinstance(data, dict):
        return None
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    if kind == "ConfigMap" and api_version == "v1":
        values = data.get("data")
        name = values.get("mode") if isinstance(values, dict) else None
        return name if isinstance(name, str) and name in MODES else None
    if api_version in API_VERSIONS:
        return KIND_TO_MODE.get(kind)
    return None


def _as_strings(text: str, typed: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap with every scalar as written: ``1.10`` stays ``"1.10"``, not ``1.1``.

    A ConfigMap holds strings; kpt passes the text of each value through, so
    resolving ``1.10`` as a number would change the user's value.
    """
    from krm_merge.krm import yamlio

    values = typed.get("data")
    if isinstance(values, dict) and all(isinstance(v, str) for v in values.values()):
        return typed  # already strings as written (kpt quotes what would read as another type)
    raw = yamlio.load_strings(text, "functionConfig")
    if isinstance(raw, dict) and isinstance(raw.get("data"), dict) and isinstance(typed.get("data"), dict):
        # Explicit nulls (`key:` or `key: null`) read as "" either way.
        data = {k: ("" if typed["data"].get(k) is None else v) for k, v in raw["data"].items()}
        return {**typed, "data": data}
    return typed


def _from_configmap(data: dict[str, Any]) -> Invocation:
    values = data.get("data")
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigError("data", "must be a mapping of strings")
    strings: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, (dict, list)):
            raise ConfigError(f"data.{key}", "ConfigMap values must be strings")
        strings[str(key)] = "" if value is None else _scalar_str(value)
    mode_name = strings.pop("mode", None)
    if not mode_name:
        raise ConfigError("data.mode", "missing; " + _how_to_choose())
    mode = MODES.get(mode_name)
    if mode is None:
        raise ConfigError("data.mode", f"unknown mode {mode_name!r}; valid modes: {', '.join(MODES)}")
    module = load_mode(mode)
    return Invocation(mode, module, module.config_from_configmap(strings))


def _from_typed(kind: str, data: dict[str, Any]) -> Invocation:
    mode_name = KIND_TO_MODE.get(kind)
    if mode_name is None:
        raise ConfigError("kind", f"unknown kind {kind!r} in {API_GROUP}; valid kinds: {', '.join(KIND_TO_MODE)}")
    spec = data.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ConfigError("spec", "must be an object")
    mode = MODES[mode_name]
    module = load_mode(mode)
    return Invocation(mode, module, module.config_from_typed(spec))


def load_mode(mode: ModeInfo) -> ModuleType:
    """Import a mode's module (only the chosen mode is ever imported)."""
    try:
        return importlib.import_module(mode.module)
    except ModuleNotFoundError as err:
        if err.name != mode.module:
            raise
        raise ConfigError("mode", f"mode {mode.name!r} is not implemented in this version") from None


def _scalar_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _how_to_choose() -> str:
    return (
        f"set `mode` in a ConfigMap (one of: {', '.join(MODES)}) "
        f"or use a typed config apiVersion {API_VERSION} with kind one of: {', '.join(KIND_TO_MODE)}"
    )


# --- helpers for mode config parsers -----------------------------------------------


def check_keys(given: dict[str, Any], valid: tuple[str, ...], where: str = "data") -> None:
    """Reject unknown keys, listing the valid ones."""
    for key in given:
        if key not in valid:
            raise ConfigError(f"{where}.{key}", f"unknown key; valid keys: {', '.join(valid)}")


def parse_bool(value: Any, key: str) -> bool:
    """A boolean from a typed value or a ConfigMap string."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off", ""):
        return False
    raise ConfigError(key, f"must be true or false, got {value!r}")


def parse_choice(value: Any, key: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, or an error listing them."""
    text = str(value)
    if text not in choices:
        raise ConfigError(key, f"must be one of {', '.join(choices)}, got {text!r}")
    return text
