"""The registry of modes and commands: each mode registered once, one keys table, one routing.

A functionConfig is routed to a mode by the registry's index alone; the mode's
module is imported only when that mode runs, by the registry and nowhere else.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from typing import Any

import pytest

import krm_merge.modes
from krm_merge import registry
from krm_merge.config import ConfigError, mode_name, resolve, route
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.registry import API_VERSION, COMMANDS, KINDS, MODES, Mode, ModeEntry, load_mode
from krm_merge.runner import run_function

MODE_MODULES = sorted(f"krm_merge.modes.{m.name}" for m in pkgutil.iter_modules(krm_merge.modes.__path__))
# The names the key tables had before the registry: one table, one name (`KEYS`) now.
OLD_TABLE_NAMES = ("TYPED_KEYS", "CONFIGMAP_KEYS", "CONFIG_KEYS")


def _configmap(data: dict[str, str]) -> KubeObject:
    return KubeObject.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fc"}, "data": data})


def _typed(kind: str, spec: dict[str, Any] | None = None) -> KubeObject:
    return KubeObject.from_data({"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": "fc"}, "spec": spec or {}})


def test_every_mode_module_is_registered_once() -> None:
    modules = [entry.module for entry in MODES.values()]
    assert sorted(modules) == MODE_MODULES
    assert len(set(modules)) == len(modules)
    assert len(KINDS) == len(MODES)  # no kind answers for two modes


@pytest.mark.parametrize("name", list(MODES))
def test_each_mode_declares_the_record_its_entry_names(name: str) -> None:
    entry = MODES[name]
    mode = load_mode(entry)
    assert isinstance(mode, Mode)
    assert (mode.name, mode.kind) == (entry.name, entry.kind)
    assert KINDS[mode.kind] is entry
    assert mode.summary


@pytest.mark.parametrize("name", list(MODES))
def test_one_keys_table_with_one_name(name: str) -> None:
    mode = load_mode(MODES[name])
    module = sys.modules[MODES[name].module]
    assert module.KEYS is mode.keys
    assert isinstance(mode.keys, tuple) and mode.keys and all(isinstance(k, str) and k for k in mode.keys)
    assert len(set(mode.keys)) == len(mode.keys)
    assert not [n for n in OLD_TABLE_NAMES if hasattr(module, n)]


@pytest.mark.parametrize("name", list(MODES))
def test_the_keys_table_is_the_one_the_parsers_check(name: str) -> None:
    """An unknown key is refused listing the valid ones: the typed spec's are the table, the ConfigMap's within it."""
    mode = load_mode(MODES[name])
    with pytest.raises(ConfigError) as typed:
        mode.from_typed({"noSuchKey": "x"})
    assert typed.value.key == "spec.noSuchKey"
    assert typed.value.message == f"unknown key; valid keys: {', '.join(mode.keys)}"
    with pytest.raises(ConfigError) as configmap:
        mode.from_configmap({"noSuchKey": "x"})
    assert configmap.value.key == "data.noSuchKey"
    listed = configmap.value.message.removeprefix("unknown key; valid keys: ").split(", ")
    assert listed and set(listed) <= set(mode.keys)


@pytest.mark.parametrize(("config", "field", "named"), [
    (_configmap({"mode": "merge"}), "data.mode", "'merge'"),
    (_typed("Merge"), "kind", "'Merge'"),
])
def test_an_unknown_mode_or_kind_names_the_functionconfig_and_the_field(config: KubeObject, field: str,
                                                                         named: str) -> None:
    with pytest.raises(ConfigError) as err:
        route(config)
    assert err.value.key == field
    assert str(err.value).startswith(f"functionConfig {field}: unknown ")
    assert named in str(err.value)
    valid = MODES if field == "data.mode" else KINDS
    assert all(name in str(err.value) for name in valid)
    assert mode_name(config) is None


def test_the_function_reports_an_unknown_mode_as_an_error_result() -> None:
    text = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
            "  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: fc}\n  data: {mode: merge}\n")
    out, code = run_function(text)
    assert code == 1
    assert "functionConfig data.mode: unknown mode 'merge'" in out and "key: data.mode" in out


@pytest.mark.parametrize("name", list(MODES))
def test_both_forms_route_to_the_same_mode(name: str) -> None:
    by_configmap, by_kind = route(_configmap({"mode": name})), route(_typed(MODES[name].kind))
    assert by_configmap.mode is by_kind.mode is MODES[name]
    assert (by_configmap.typed, by_kind.typed) == (False, True)
    assert mode_name(_configmap({"mode": name})) == name


def test_resolve_parses_with_the_record_of_the_routed_mode() -> None:
    invocation = resolve(_configmap({"mode": "promote", "pipeline": "a/b", "environment": "prod", "value": "1.10"}))
    assert invocation.mode is load_mode(MODES["promote"])
    assert invocation.config.value == "1.10"


def test_a_registered_mode_missing_from_the_build_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ghost = ModeEntry("promote", "Promote", "krm_merge.modes.no_such_module")
    with pytest.raises(ConfigError, match="mode 'promote' is not implemented in this version"):
        load_mode(ghost)
    monkeypatch.setitem(MODES, "promote", ghost)
    with pytest.raises(ConfigError, match="mode 'promote' is not implemented in this version"):
        resolve(_configmap({"mode": "promote"}))


def test_a_module_without_a_matching_record_is_refused() -> None:
    with pytest.raises(TypeError, match="MODE must be Mode"):
        load_mode(ModeEntry("promote", "Promote", "krm_merge.errors"))
    with pytest.raises(TypeError, match="MODE must be Mode"):
        load_mode(ModeEntry("promote", "NotPromote", "krm_merge.modes.promote"))


_ONLY_THE_MODE_THAT_RUNS = """
import sys
from krm_merge.config import resolve, route
from krm_merge.krm.kubeobject import KubeObject

def loaded():
    return sorted(m for m in sys.modules if m.startswith(("krm_merge.modes.", "krm_merge.commands")))

fc = KubeObject("apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: fc}\\ndata: {mode: reorder-merge, desired: '{}'}\\n")
route(fc)
print(loaded())
resolve(fc)
print(loaded())
"""


def test_routing_imports_no_mode_and_resolving_only_the_one_that_runs() -> None:
    proc = subprocess.run([sys.executable, "-c", _ONLY_THE_MODE_THAT_RUNS], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "['krm_merge.modes.reorder_merge']"]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_loads_by_name(name: str) -> None:
    command = registry.load_command(name)
    assert command is not None
    assert command.parser().prog.endswith(name) or name in command.parser().format_usage()
    assert callable(command.main)


def test_a_command_not_in_the_build_is_none() -> None:
    assert registry.load_command("no-such-command") is None
