"""Regenerate ``tests/smp/data/kubectl-apply-cases.yaml`` from the real kubectl.

    python -m tests.smp.kubectl_capture.capture_apply_cases > tests/smp/data/kubectl-apply-cases.yaml

(run from the repository root, with ``kubectl`` on PATH).  For each case the
last-applied object is created with ``kubectl apply`` (the POST body is
recorded as ``created``), the live object is edited as a server or another
client would, ``kubectl apply`` of ``desired`` is run and its PATCH body
recorded as ``patch``, and ``kubectl patch --local`` of that patch gives
``result``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import yaml

from .fake_apiserver import FakeCluster


def env(names: list[str]) -> list[dict[str, str]]:
    return [{"name": n, "value": n.lower()} for n in names]


def deployment(names: list[str], **metadata: Any) -> dict[str, Any]:
    meta = {"name": "web", "namespace": "default", **metadata}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx", "env": env(names)}]}}},
    }


def capture(cluster: FakeCluster, description: str, last: dict[str, Any],
            edit_live: Callable[[dict[str, Any]], None], desired: dict[str, Any]) -> dict[str, Any]:
    created = cluster.apply_create(last)
    live = copy.deepcopy(created)
    edit_live(live)
    patch = cluster.apply_patch(live, desired)
    assert not isinstance(patch, str), patch
    result = cluster.patch_local(live, patch) if patch is not None else live
    assert not isinstance(result, str), result
    return {"description": description, "lastApplied": last, "created": created, "live": live,
            "desired": desired, "patch": patch, "result": result}


def cases(cluster: FakeCluster) -> list[dict[str, Any]]:
    def drift_env(live: dict[str, Any]) -> None:
        live["spec"]["template"]["spec"]["containers"][0]["env"] = env(["ENV2", "ENV5", "ENV1", "ENV3", "ENV4"])

    special = deployment(["A"], labels={"app": "a&b<c>", "uni": "é ü"}, annotations={"note": "x > y"})
    special["spec"]["replicas"] = 3
    special["spec"]["paused"] = False
    special["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 0.5, "memory": "64Mi"}}
    desired2 = copy.deepcopy(special)
    del desired2["metadata"]["labels"]["uni"]
    desired2["metadata"]["annotations"] = {}
    desired2["spec"]["replicas"] = 2

    def add_server_fields(live: dict[str, Any]) -> None:
        live["status"] = {"replicas": 3}
        live["metadata"]["uid"] = "1234"
        live["metadata"]["labels"]["server"] = "added"

    def add_finalizer(live: dict[str, Any]) -> None:
        live["metadata"]["finalizers"] = ["server/x", "a", "b"]

    with_resources = deployment(["A"], labels={"a": "1", "b": "2"})
    container = with_resources["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"limits": {"cpu": "1"}, "requests": {"cpu": "1", "memory": "1Gi"}}
    replacing = copy.deepcopy(with_resources)
    replacing["metadata"]["labels"] = {"$patch": "replace", "a": "1"}
    replacing["spec"]["template"]["spec"]["containers"][0]["resources"] = {"$patch": "replace", "limits": {"cpu": "2"}}

    def add_memory_limit(live: dict[str, Any]) -> None:
        live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "5Gi"

    return [
        capture(cluster, "$patch: replace in the configuration is dropped when the patches are merged",
                with_resources, add_memory_limit, replacing),
        capture(cluster, "design proposal env example: server added ENV4 and ENV5 and reordered",
                deployment(["ENV1", "ENV2", "ENV3"]), drift_env, deployment(["ENV1", "ENV2", "ENV6"])),
        capture(cluster, "escaping, numbers, removed label and annotation, server-side fields kept",
                special, add_server_fields, desired2),
        capture(cluster, "unchanged configuration sends no patch",
                deployment(["A", "B"]), lambda live: None, deployment(["A", "B"])),
        capture(cluster, "finalizers and env reordered by the user, server-added finalizer kept",
                deployment(["A", "B", "C"], finalizers=["a", "b"]), add_finalizer,
                deployment(["C", "A", "D"], finalizers=["b", "c"])),
    ]


def main() -> int:
    version_json = subprocess.run(["kubectl", "version", "--client", "-o", "json"], capture_output=True, text=True)
    version = json.loads(version_json.stdout)["clientVersion"]["gitVersion"]
    with FakeCluster() as cluster:
        data = {"kubectl": version, "cases": cases(cluster)}
    sys.stdout.write(
        f"# Captured from the real kubectl {version} by tests/smp/kubectl_capture/capture_apply_cases.py\n"
        "# ('kubectl apply' against a fake API server recording request bodies). Do not edit by hand.\n"
    )
    sys.stdout.write(yaml.safe_dump(data, sort_keys=False, width=1000, allow_unicode=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
