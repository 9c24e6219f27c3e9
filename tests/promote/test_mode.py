"""The promote mode as a KRM function: config, resolution, strategies, results."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from krm_merge.config import ConfigError
from krm_merge.krm.resourcelist import read_resource_list
from krm_merge.modes import promote as mode
from krm_merge.runner import run_function

from .harness import annotation_lines, resource_list

M = '# {"$promotion": "default:podinfo:prod"}'
PIPELINE = """apiVersion: pipelines.weave.works/v1alpha1
kind: Pipeline
metadata:
  name: podinfo
  namespace: default
spec:
  appRef:
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    name: podinfo
  environments:
  - name: dev
  - name: staging
  - name: prod
"""


def release(env: str, version: str = "6.2.0", marker: bool = True, path: str | None = None) -> str:
    comment = f' # {{"$promotion": "default:podinfo:{env}"}}' if marker else ""
    annotations = annotation_lines(path, 0) if path else ""
    return (f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n{annotations}"
            f"  name: podinfo\n  namespace: {env}\n  labels:\n    env: {env}\n"
            f"spec:\n  chart:\n    spec:\n      chart: podinfo\n      version: {version}{comment}\n")


def run(items: list[str], **config: str) -> tuple[list[str], list[dict[str, Any]], int]:
    out, code = run_function(resource_list(items, config))
    results = yaml.safe_load(out).get("results") or []
    return [o.text for o in read_resource_list(out).items], results, code


def test_target_environment() -> None:
    items, results, code = run([release("prod"), release("staging")], pipeline="default/podinfo",
                               environment="prod", value="6.3.0")
    assert code == 0
    assert items == [release("prod", "6.3.0"), release("staging")]
    [info] = results
    assert info["severity"] == "info"
    assert info["field"] == {"path": "spec.chart.spec.version", "currentValue": "6.2.0", "proposedValue": "6.3.0"}
    assert info["resourceRef"]["namespace"] == "prod"


def test_pipeline_colon_form_and_from_environment() -> None:
    items, _, code = run([PIPELINE, release("staging"), release("prod")], pipeline="default:podinfo",
                         fromEnvironment="staging", value="6.3.0")
    assert code == 0
    assert items == [PIPELINE, release("staging"), release("prod", "6.3.0")]


@pytest.mark.parametrize("config,message", [
    ({"fromEnvironment": "prod"}, "cannot promote beyond last environment prod"),
    ({"fromEnvironment": "qa"}, "app default/podinfo has no environment qa defined"),
    ({"environment": "qa"}, "app default/podinfo has no environment qa defined"),
])
def test_pipeline_errors(config: dict[str, str], message: str) -> None:
    items, results, code = run([PIPELINE, release("prod")], pipeline="default/podinfo", value="7", **config)
    assert code == 1
    assert items == [PIPELINE, release("prod")]
    assert [r["message"] for r in results if r["severity"] == "error"] == [message]


def test_pipeline_not_found() -> None:
    _, results, code = run([release("prod")], pipeline="default/other", fromEnvironment="dev", value="7")
    assert code == 1 and "Pipeline default/other not found" in results[0]["message"]


def test_no_match_is_an_error_unless_allowed() -> None:
    items, results, code = run([release("staging")], pipeline="default/podinfo", environment="prod", value="7")
    assert code == 1 and "no field found" in results[0]["message"]
    items, results, code = run([release("staging")], pipeline="default/podinfo", environment="prod", value="7",
                               allowNoMatch="true")
    assert code == 0 and results[0]["severity"] == "warning" and items == [release("staging")]


def test_error_in_one_item_changes_no_item() -> None:
    bad = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: b} # {"$promotion": "default:podinfo:prod"}\n'
    items, results, code = run([release("prod"), bad], pipeline="default/podinfo", environment="prod", value="7.0.0")
    assert code == 1
    assert items == [release("prod"), bad]
    [error] = [r for r in results if r["severity"] == "error"]
    assert "flow mapping" in error["message"] and error["field"]["path"] == "data"


def test_value_is_always_a_string() -> None:
    items, _, _ = run([release("prod")], pipeline="default/podinfo", environment="prod", value="1.10")
    assert yaml.safe_load(items[0])["spec"]["chart"]["spec"]["version"] == "1.10"


def test_typed_config() -> None:
    rl = resource_list([release("prod")], {}).split("functionConfig:")[0] + (
        "functionConfig:\n  apiVersion: fn.krm-merge.dev/v1alpha1\n  kind: Promote\n  metadata:\n    name: p\n"
        "  spec:\n    pipeline: default/podinfo\n    environment: prod\n    value: 6.3.0\n    allowNoMatch: false\n")
    out, code = run_function(rl)
    assert code == 0
    assert read_resource_list(out).items[0].text == release("prod", "6.3.0")


@pytest.mark.parametrize("data,key", [
    ({"pipeline": "default/podinfo", "environment": "prod"}, "data.value"),
    ({"pipeline": "default/podinfo", "value": "1"}, "data.environment"),
    ({"pipeline": "podinfo", "environment": "prod", "value": "1"}, "data.pipeline"),
    ({"pipeline": "a/b", "environment": "x", "fromEnvironment": "y", "value": "1"}, "data.fromEnvironment"),
    ({"environment": "prod", "value": "1"}, "data.pipeline"),
    ({"pipeline": "a/b", "environment": "x", "value": "1", "colour": "red"}, "data.colour"),
    ({"imagePolicy": "ns:p", "environment": "x", "value": "img:1"}, "data.imagePolicy"),
    ({"pipeline": "a/b", "environment": "x", "value": "1", "strategy": "guess"}, "data.strategy"),
    ({"pipeline": "a/b", "environment": "x", "value": "1", "strategy": "labels"}, "data.labelSelector"),
    ({"pipeline": "a/b", "environment": "x", "value": "1", "allowNoMatch": "maybe"}, "data.allowNoMatch"),
])
def test_config_errors_name_the_key(data: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        mode.config_from_configmap(data)
    assert info.value.key == key


def test_image_policy_forms() -> None:
    item = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: app\n"
            '  newName: old # {"$imagepolicy": "flux-system:app:name"}\n'
            '  newTag: v1 # {"$imagepolicy": "flux-system:app:tag"}\n'
            '  digest: sha256:00 # {"$imagepolicy": "flux-system:app:digest"}\n'
            'full: old:v1 # {"$imagepolicy": "flux-system:app"}\n')
    ref = "ghcr.io/acme/app:v2@sha256:ab12"
    items, results, code = run([item], imagePolicy="flux-system/app", value=ref)
    assert code == 0, results
    data = yaml.safe_load(items[0])
    assert data["images"][0] == {"name": "app", "newName": "ghcr.io/acme/app", "newTag": "v2", "digest": "sha256:ab12"}
    assert data["full"] == ref
    # Without a digest in the value, a :digest marker cannot be served.
    _, results, code = run([item], imagePolicy="flux-system:app", value="ghcr.io/acme/app:v2")
    assert code == 1 and "does not have" in results[0]["message"]


def test_path_strategy_known_kind_and_field_path() -> None:
    apps = [release("dev", path="apps/dev/podinfo/release.yaml"),
            release("prod", marker=False, path="apps/prod/podinfo/release.yaml"),
            release("prod", marker=False, path="apps/prod/other/release.yaml")]
    items, results, code = run([PIPELINE, *apps], pipeline="default/podinfo", fromEnvironment="staging",
                               strategy="path", pathTemplate="apps/{environment.name}/{application.name}",
                               value="6.3.0")
    assert code == 0, results
    assert items[1:] == [apps[0], apps[1].replace("version: 6.2.0", "version: 6.3.0"), apps[2]]
    [info] = results
    assert info["file"]["path"] == "apps/prod/podinfo/release.yaml"
    assert info["field"]["path"] == "spec.chart.spec.version"
    items, results, code = run(apps, pipeline="default/podinfo", environment="dev", strategy="path",
                               pathTemplate="apps/{environment.name}/*", fieldPath="spec.chart.spec.chart",
                               value="podinfo-next")
    assert code == 0 and items[0] == apps[0].replace("chart: podinfo", "chart: podinfo-next")


def test_labels_strategy() -> None:
    apps = [release("dev", marker=False), release("prod", marker=False)]
    items, results, code = run(apps, pipeline="default/podinfo", environment="prod", strategy="labels",
                               labelSelector="env={environment.name}", value="6.3.0")
    assert code == 0, results
    assert items == [apps[0], apps[1].replace("6.2.0", "6.3.0")]
    _, results, code = run(apps, pipeline="default/podinfo", environment="qa", strategy="labels",
                           labelSelector="env={environment.name}", value="6.3.0")
    assert code == 1 and "no field found" in results[0]["message"]


def test_unknown_template_placeholder() -> None:
    _, results, code = run([release("prod")], pipeline="default/podinfo", environment="prod",
                           strategy="path", pathTemplate="apps/{env}", value="1")
    assert code == 1 and "unknown placeholder {env}" in results[0]["message"]


def test_malformed_marker_is_a_warning() -> None:
    item = release("prod").replace("spec:\n  chart", "spec:\n  extra: 1 # {\"$promotion\": \"default:podinfo:prod\",}\n  chart")
    _, results, code = run([item], pipeline="default/podinfo", environment="prod", value="6.3.0")
    assert code == 0
    assert [r["severity"] for r in results] == ["warning", "info"]


@pytest.mark.parametrize("written", ["1.10", "0123", "true", "1e3"])
def test_unquoted_config_value_is_taken_as_written(written: str) -> None:
    # ConfigMap data are strings: `value: 1.10` is the version "1.10", not the float 1.1.
    rl = resource_list([release("prod")], {}).split("functionConfig:")[0] + (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: p\n  data:\n"
        f"    mode: promote\n    pipeline: default/podinfo\n    environment: prod\n    value: {written}\n")
    out, code = run_function(rl)
    assert code == 0
    item = read_resource_list(out).items[0].text
    assert yaml.safe_load(item)["spec"]["chart"]["spec"]["version"] == written
    typed = rl.split("functionConfig:")[0] + (
        "functionConfig:\n  apiVersion: fn.krm-merge.dev/v1alpha1\n  kind: Promote\n  metadata:\n    name: p\n"
        f"  spec:\n    pipeline: default/podinfo\n    environment: prod\n    value: {written}\n")
    out, code = run_function(typed)
    assert code == 0
    assert yaml.safe_load(read_resource_list(out).items[0].text)["spec"]["chart"]["spec"]["version"] == written


_CONFIGS = [  # (a functionConfig, whether the fast reader reads it)
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: promote\n  value: 1.10\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: 1.10 # pinned\n  other: x\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: '1.10'\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: \"1.10\"\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value:\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: ~\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: [1.10]\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: |\n    1.10\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  promotions: |\n    - value: 1.10\n", True),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec:\n  promotions:\n  - pipeline: a/b\n"
     "    value: 0123\n  - value: 'x'\n  - value: true\n", True),
    ("kind: Promote\n", True),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec:\n  promotions:\n  - value: 1.10\n"
     "  - {pipeline: ns/app, value: 0123}\n", False),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec: {value: 1.10}\n", False),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec:\n  promotions: [{value: 1.10}]\n", False),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: {a: 1.10}\n", True),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: 1.10\n    continued\n", False),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  value: \"1.10\n    continued\"\n", False),
    ("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Promote\nspec:\n  value: &v 1e3\n  other: *v\n", False),
    ("kind: Promote\nspec:\n  value: 1.10\n  value: 2.0\n", False),
    ("- a\n", False),
]


@pytest.mark.parametrize(("text", "fast_reads"), _CONFIGS)
def test_the_values_as_written_are_read_without_pyyaml_as_pyyaml_reads_them(text: str, fast_reads: bool) -> None:
    """Issue 45: a promote function run read its functionConfig's values with PyYAML's composer (~100M
    instructions to import); the fast reader reads them wherever it reads the text, as the composer does."""
    fast = mode._written_fast(text)
    assert (fast is not None) is fast_reads
    if fast is not None:
        assert fast == mode._written_composed(text)
