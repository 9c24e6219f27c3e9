"""Routing a functionConfig to a mode, and helpers for the modes' config parsers.

Two forms are accepted, as in the kpt-functions-catalog:

* a ConfigMap whose ``data`` holds strings (what ``kpt fn eval -- k=v`` and a
  Kptfile ``configMap:`` produce); ``data.mode`` names the mode;
* a typed resource ``apiVersion: fn.krm-merge.dev/v1alpha1`` whose kind names
  the mode (``ReorderMerge``, ``PipelineMerge``, ``ResourceMerge``,
  ``Promote``) and whose ``spec`` holds the same keys, typed.

:func:`route` is the one routing of either form to a mode of the registry
(:mod:`krm_merge.registry`); each mode's record then turns the values into
its own config record.
"""

from __future__ import annotations

from krm_merge.errors import ConfigError
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.records import Record
from krm_merge.registry import API_GROUP, API_VERSION, API_VERSIONS, KINDS, MODES, Mode, ModeEntry, load_mode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "API_GROUP", "API_VERSION", "API_VERSIONS", "MODES", "ConfigError", "Invocation", "Route",
    "check_keys", "mode_name", "parse_bool", "parse_choice", "resolve", "route",
]


class Route(Record):
    """Where a functionConfig goes: the mode and the values its parser reads.

    ``values`` is the ConfigMap's ``data`` as strings (``mode`` taken out)
    when ``typed`` is false, else the typed resource's ``spec``.
    """

    mode: ModeEntry
    typed: bool
    values: dict[str, Any]


class Invocation(Record):
    """The chosen mode and its parsed config."""

    mode: Mode[Any]
    config: Any


def route(function_config: Item | None) -> Route:
    """The mode a functionConfig asks for, with its values; :class:`ConfigError` naming the field if none."""
    data = function_config.data if function_config is not None else None
    if not data:
        raise ConfigError("", "no functionConfig given; " + _how_to_choose())
    if not isinstance(data, dict):
        raise ConfigError("", "must be an object")
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    if kind == "ConfigMap" and api_version == "v1":
        return _configmap_route(_as_strings(function_config.text, data) if function_config else data)
    group = api_version.rpartition("/")[0]
    if group == API_GROUP:
        if api_version not in API_VERSIONS:
            raise ConfigError(
                "apiVersion",
                f"unknown apiVersion {api_version!r} for kind {kind or '<no kind>'}; "
                f"valid: {', '.join(API_VERSIONS)}",
            )
        return _typed_route(kind, data)
    raise ConfigError(
        "kind",
        f"unsupported functionConfig {api_version or '<no apiVersion>'}/{kind or '<no kind>'}; "
        + _how_to_choose(),
    )


def resolve(function_config: Item | None) -> Invocation:
    """Route a functionConfig to its mode (imported only now) and parse its config."""
    found = route(function_config)
    mode = load_mode(found.mode)
    parse = mode.from_typed if found.typed else mode.from_configmap
    return Invocation(mode, parse(found.values))


def mode_name(function_config: Item | None) -> str | None:
    """The mode :func:`route` finds, without reading its config; None where it finds none.

    For callers that only need to know the mode (``krm-merge run`` treats a
    promote run's unreadable files as the command does).
    """
    try:
        return route(function_config).mode.name
    except ConfigError:
        return None


def _as_strings(text: str, typed: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap with every scalar as written: ``1.10`` stays ``"1.10"``, not ``1.1``.

    A ConfigMap holds strings; kpt passes the text of each value through, so
    resolving ``1.10`` as a number would change the user's value.
    """
    values = typed.get("data")
    if isinstance(values, dict) and all(isinstance(v, str) for v in values.values()):
        return typed  # already strings as written (kpt quotes what would read as another type)
    raw = yamlio.load_strings(text, "functionConfig")
    if isinstance(raw, dict) and isinstance(raw.get("data"), dict) and isinstance(typed.get("data"), dict):
        # Explicit nulls (`key:` or `key: null`) read as "" either way.
        data = {k: ("" if typed["data"].get(k) is None else v) for k, v in raw["data"].items()}
        return {**typed, "data": data}
    return typed


def _configmap_route(data: dict[str, Any]) -> Route:
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
    name = strings.pop("mode", None)
    if not name:
        raise ConfigError("data.mode", "missing; " + _how_to_choose())
    entry = MODES.get(name)
    if entry is None:
        raise ConfigError("data.mode", f"unknown mode {name!r}; valid modes: {', '.join(MODES)}")
    return Route(entry, False, strings)


def _typed_route(kind: str, data: dict[str, Any]) -> Route:
    entry = KINDS.get(kind)
    if entry is None:
        raise ConfigError("kind", f"unknown kind {kind!r} in {API_GROUP}; valid kinds: {', '.join(KINDS)}")
    spec = data.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ConfigError("spec", "must be an object")
    return Route(entry, True, spec)


def _scalar_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _how_to_choose() -> str:
    return (
        f"set `mode` in a ConfigMap (one of: {', '.join(MODES)}) "
        f"or use a typed config apiVersion {API_VERSION} with kind one of: {', '.join(KINDS)}"
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
