"""The function protocol end to end: stdin → stdout, results, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.krm.helpers import corpus_documents, resource_list

KRM_MERGE = [sys.executable, "-m", "krm_merge"]
DOCS = dict(corpus_documents())

NOOP_CONFIG = """\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: ReorderMerge
metadata:
  name: noop
spec:
  patches:
  - optional: true
    target: {kind: NothingLikeThis}
    patch: {metadata: {labels: {x: y}}}
"""


def run(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KRM_MERGE, *args], input=stdin, capture_output=True, text=True, timeout=60)


def results_of(out: str) -> list[dict]:
    return yaml.safe_load(out).get("results") or []


def test_help_and_version() -> None:
    help_run = subprocess.run([*KRM_MERGE, "--help"], capture_output=True, text=True)
    assert help_run.returncode == 0 and "reorder-merge" in help_run.stdout and "promote" in help_run.stdout
    version = subprocess.run([*KRM_MERGE, "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("krm-merge ")


def test_pass_through_keeps_every_byte_and_warns() -> None:
    text = resource_list(list(DOCS.values()), NOOP_CONFIG)
    proc = run(text)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    head, _, _ = text.partition("functionConfig:\n")
    assert proc.stdout.startswith(head)
    [warning] = results_of(proc.stdout)
    assert warning["severity"] == "warning" and "matches no item" in warning["message"]


@pytest.mark.parametrize(
    "stdin,fragment",
    [
        ("not: [valid", "not valid YAML"),
        ("apiVersion: v1\nkind: Pod\n", "not a ResourceList"),
        (resource_list([]), "no functionConfig"),
        (resource_list([], "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {}"), "data.mode"),
        (resource_list([], "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {mode: frobnicate}"),
         "valid modes: reorder-merge, pipeline-merge, resource-merge, promote"),
        (resource_list([], "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {mode: reorder-merge, pach: x}"),
         "data.pach: unknown key; valid keys: patch"),
        (resource_list([], "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Frob\nmetadata: {name: x}"), "valid kinds"),
        (resource_list([], "apiVersion: example.com/v1\nkind: Other\nmetadata: {name: x}"), "unsupported functionConfig"),
    ],
)
def test_bad_input_is_one_error_result_and_exit_1(stdin: str, fragment: str) -> None:
    proc = run(stdin)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    [error] = results_of(proc.stdout)
    assert error["severity"] == "error"
    assert fragment in error["message"]


def test_non_utf8_input_is_an_error_result() -> None:
    proc = subprocess.run(KRM_MERGE, input=b"\xff\xfe\x00garbage", capture_output=True, timeout=60)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"not UTF-8" in proc.stdout


def test_error_result_names_resource_and_field() -> None:
    deployment = DOCS["deployment.yaml#0"]
    config = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data:
  mode: reorder-merge
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        spec:
          containers:
          - image: no-name-here
"""
    proc = run(resource_list([deployment], config))
    assert proc.returncode == 1
    [error] = results_of(proc.stdout)
    assert error["resourceRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
    assert "merge key" in error["message"]
    assert error["field"]["path"].startswith("spec.template.spec.containers")
    # the items are still written, unchanged
    assert yaml.safe_load(proc.stdout)["items"][0]["metadata"]["name"] == "web"


def test_results_go_to_stderr_for_kustomize() -> None:
    """kustomize sets LOG_TO_STDERR=true and shows its users only stderr."""
    import os

    proc = subprocess.run(KRM_MERGE, input="not: [valid", capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, LOG_TO_STDERR="true"))
    assert proc.returncode == 1
    assert proc.stderr.startswith("[error]: the input is not valid YAML")
    quiet = run("not: [valid")
    assert quiet.stderr == ""


def test_configmap_values_are_taken_as_written() -> None:
    """`value: 1.10` in a ConfigMap is the string "1.10", not the number 1.1."""
    from krm_merge.config import resolve
    from krm_merge.krm.kubeobject import KubeObject

    fc = KubeObject("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
                    "data: {mode: promote, pipeline: default/p, environment: prod, value: 1.10}\n")
    invocation = resolve(fc)
    assert invocation.config.value == "1.10"
