"""Old and never-served API versions through reorder-merge, against real ``kubectl patch --local``.

issue #14 item 5: ``apps/v1beta1`` / ``extensions/v1beta1`` objects merge their
lists by key as kubectl does; a version no release served is merged with the
newest served version's schema and a warning (kubectl refuses: a documented
deviation); a list no schema describes is never replaced silently.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from krm_merge.runner import run_function
from tests.krm.helpers import resource_list

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not on PATH")

WORKLOAD = """\
apiVersion: {api_version}
kind: {kind}
metadata:
  name: web
spec:
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app # the main app
        image: app:1
        ports:
        - containerPort: 80
        env:
        - name: MODE
          value: prod
      - name: side
        image: side:1
      volumes:
      - name: data
        emptyDir: {{}}
"""
CRONJOB = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: web
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: app
            image: app:1
            args: [--once]
          restartPolicy: OnFailure
"""
WORKLOAD_PATCH = {
    "spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "app:2", "env": [{"name": "DEBUG", "value": "1"}]}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
    }}}
}
CRONJOB_PATCH = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {
    "containers": [{"name": "app", "image": "app:2"}],
}}}}}}

OLD_WORKLOADS = [
    ("apps/v1beta1", "Deployment"),
    ("apps/v1beta1", "StatefulSet"),
    ("apps/v1beta2", "Deployment"),
    ("apps/v1beta2", "DaemonSet"),
    ("apps/v1beta2", "ReplicaSet"),
    ("extensions/v1beta1", "Deployment"),
    ("extensions/v1beta1", "DaemonSet"),
    ("extensions/v1beta1", "ReplicaSet"),
]


def reorder_merge(doc: str, patch: dict) -> tuple[dict, list[dict], int]:
    config = yaml.safe_dump({
        "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "ReorderMerge", "metadata": {"name": "p"},
        "spec": {"patches": [{"target": {"name": "web"}, "patch": patch}]},
    })
    out, code = run_function(resource_list([doc], config))
    rl = yaml.safe_load(out)
    items = rl.get("items") or [{}]
    return items[0], rl.get("results") or [], code


def kubectl_patch(tmp_path: Path, doc: str, patch: dict) -> subprocess.CompletedProcess[str]:
    obj, patch_file = tmp_path / "obj.yaml", tmp_path / "patch.json"
    obj.write_text(doc)
    patch_file.write_text(json.dumps(patch))
    return subprocess.run(
        [KUBECTL or "kubectl", "patch", "--local", "-f", str(obj), "--type", "strategic",
         "--patch-file", str(patch_file), "-o", "json"],
        capture_output=True, text=True, timeout=60,
    )


def without_annotations(item: dict) -> dict:
    item = json.loads(json.dumps(item))
    item["metadata"].pop("annotations", None)
    return item


def containers(item: dict) -> list[dict]:
    return item["spec"]["template"]["spec"]["containers"]


@pytest.mark.parametrize(("api_version", "kind"), OLD_WORKLOADS, ids=lambda v: v)
def test_old_workload_versions_merge_containers_by_name(api_version, kind):
    item, results, code = reorder_merge(WORKLOAD.format(api_version=api_version, kind=kind), WORKLOAD_PATCH)
    assert code == 0 and results == []
    app, side = containers(item)
    # Merged by name: the image changed, the ports and the old env entry stayed
    # (the patch's new elements come first, as in kubectl: see test_old_versions_equal_kubectl).
    assert app == {"name": "app", "image": "app:2", "ports": [{"containerPort": 80}],
                   "env": [{"name": "DEBUG", "value": "1"}, {"name": "MODE", "value": "prod"}]}
    assert side == {"name": "side", "image": "side:1"}
    assert [v["name"] for v in item["spec"]["template"]["spec"]["volumes"]] == ["cache", "data"]


@needs_kubectl
@pytest.mark.parametrize(("api_version", "kind"), OLD_WORKLOADS[::3] + [("batch/v1beta1", "CronJob")],
                         ids=lambda v: v)
def test_old_versions_equal_kubectl(tmp_path, api_version, kind):
    if kind == "CronJob":
        doc, patch = CRONJOB, CRONJOB_PATCH
    else:
        doc, patch = WORKLOAD.format(api_version=api_version, kind=kind), WORKLOAD_PATCH
    ours, results, code = reorder_merge(doc, patch)
    assert code == 0 and results == []
    theirs = kubectl_patch(tmp_path, doc, patch)
    assert theirs.returncode == 0, theirs.stderr
    assert without_annotations(ours) == json.loads(theirs.stdout)


def test_a_never_served_version_merges_like_the_newest_with_a_warning(tmp_path):
    doc = WORKLOAD.format(api_version="apps/v1alpha1", kind="Deployment")
    item, results, code = reorder_merge(doc, WORKLOAD_PATCH)
    assert code == 0
    served, _, _ = reorder_merge(WORKLOAD.format(api_version="apps/v1", kind="Deployment"), WORKLOAD_PATCH)
    assert containers(item) == containers(served)
    assert len(results) == 1
    warning = results[0]
    assert warning["severity"] == "warning"
    assert warning["resourceRef"] == {"apiVersion": "apps/v1alpha1", "kind": "Deployment", "name": "web"}
    assert warning["field"] == {"path": "apiVersion"}
    assert "apps/v1alpha1 Deployment" in warning["message"] and "apps/v1 Deployment" in warning["message"]
    assert "strategic merge patch is not supported" in warning["message"]


@needs_kubectl
def test_kubectl_refuses_a_never_served_version(tmp_path):
    """The deviation documented in docs/schema.md: kubectl errors where we warn."""
    doc = WORKLOAD.format(api_version="apps/v1alpha1", kind="Deployment")
    theirs = kubectl_patch(tmp_path, doc, WORKLOAD_PATCH)
    assert theirs.returncode != 0
    assert "strategic merge patch is not supported for apps/v1alpha1, Kind=Deployment" in theirs.stderr


WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: web
spec:
  backends:
  - name: a
    port: 80
  - name: b
    port: 81
  groups:
  - name: g
    members: [x, y]
"""


def test_a_list_no_schema_describes_is_replaced_with_a_warning_naming_it():
    item, results, code = reorder_merge(WIDGET, {"spec": {
        "backends": [{"name": "a", "port": 8080}],
        "groups": [{"name": "g", "members": ["x", "y"]}],  # same content: nothing to report
    }})
    assert code == 0
    assert item["spec"]["backends"] == [{"name": "a", "port": 8080}]  # JSON merge patch: replaced
    assert [r["field"]["path"] for r in results] == ["spec.backends"]
    (warning,) = results
    assert warning["severity"] == "warning"
    assert warning["resourceRef"]["kind"] == "Widget"
    assert "replaced it whole" in warning["message"]
    assert "path: spec.backends, key: name" in warning["message"]


def test_declared_merge_keys_silence_the_warning():
    config = yaml.safe_dump({
        "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "ReorderMerge", "metadata": {"name": "p"},
        "spec": {
            "mergeKeys": [{"kind": "Widget", "path": "spec.backends", "key": "name"}],
            "patches": [{"target": {"name": "web"}, "patch": {"spec": {"backends": [{"name": "a", "port": 8080}]}}}],
        },
    })
    out, code = run_function(resource_list([WIDGET], config))
    rl = yaml.safe_load(out)
    assert code == 0 and not rl.get("results")
    assert rl["items"][0]["spec"]["backends"] == [{"name": "a", "port": 8080}, {"name": "b", "port": 81}]


def test_lists_the_schema_declares_atomic_are_replaced_without_a_warning():
    doc = WORKLOAD.format(api_version="apps/v1", kind="Deployment")
    item, results, code = reorder_merge(doc, {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "args": ["--a"]}]}}}})
    assert code == 0 and results == []
