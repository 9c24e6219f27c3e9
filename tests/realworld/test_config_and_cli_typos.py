"""Typos a new user makes (issue #14 items 8 and 9): each is an error that says what was meant."""

from __future__ import annotations

import pytest
import yaml

from krm_merge.commands import run
from krm_merge.config import API_VERSION, ConfigError, resolve
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.runner import run_function
from tests.krm.helpers import resource_list

PATCH = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "2"}}
ITEM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '1'\n"


def typed(api_version: str) -> str:
    return yaml.safe_dump({"apiVersion": api_version, "kind": "ReorderMerge", "metadata": {"name": "x"},
                           "spec": {"patch": PATCH}})


@pytest.mark.parametrize("api_version", ["fn.krm-merge.dev/v1alpha2", "fn.krm-merge.dev/v1", "fn.krm-merge.dev/"])
def test_an_unknown_typed_config_version_is_an_error_listing_the_valid_one(api_version):
    with pytest.raises(ConfigError) as caught:
        resolve(KubeObject(typed(api_version)))
    assert caught.value.key == "apiVersion"
    assert repr(api_version) in caught.value.message and API_VERSION in caught.value.message


def test_the_function_rejects_it_without_changing_anything():
    out, code = run_function(resource_list([ITEM], typed("fn.krm-merge.dev/v1alpha2")))
    rl = yaml.safe_load(out)
    assert code == 1
    (result,) = rl["results"]
    assert result["severity"] == "error"
    assert "unknown apiVersion 'fn.krm-merge.dev/v1alpha2'" in result["message"]
    assert "valid: fn.krm-merge.dev/v1alpha1" in result["message"]
    assert rl["items"][0]["data"] == {"a": "1"}


def test_the_valid_version_still_works():
    out, code = run_function(resource_list([ITEM], typed(API_VERSION)))
    assert code == 0
    assert yaml.safe_load(out)["items"][0]["data"] == {"a": "2"}


def test_run_without_the_double_dash_hints_at_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        run.main([str(tmp_path), "mode=promote", "value=1"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "unexpected argument 'mode=promote'" in err
    assert f"go after `--` (krm-merge run {tmp_path} -- mode=promote value=1)" in err


def test_other_unknown_options_get_no_such_hint(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run.main([str(tmp_path), "--bogus"])
    assert "`--`" not in capsys.readouterr().err


@pytest.mark.parametrize(("config_text", "expected"), [
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: promote\n", "promote"),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: reorder-merge\n", "reorder-merge"),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: promotion\n", None),  # a typo names no mode
    ("apiVersion: v1\nkind: ConfigMap\n", None),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec: {}\n", "promote"),
    ("apiVersion: fn.krm-merge.dev/v9\nkind: Promote\n", None),  # resolve refuses the version too
    ("apiVersion: example.com/v1\nkind: Promote\n", None),  # another group's Promote is not ours
])
def test_mode_name_routes_as_resolve_does(config_text: str, expected: str | None) -> None:
    from krm_merge.config import ConfigError, mode_name, resolve
    from krm_merge.krm.kubeobject import KubeObject

    config = KubeObject(config_text)
    assert mode_name(config) == expected
    if expected is not None:
        try:
            assert resolve(config).mode.name == expected
        except ConfigError as err:  # a config resolve refuses for its content still names the mode
            assert "data.mode" not in str(err) and "unknown" not in str(err)
