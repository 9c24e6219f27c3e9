"""A minimal fake kube-apiserver so the real ``kubectl apply`` can run offline.

It serves just enough discovery for Deployments, ConfigMaps and Services,
answers GET of the object with a stored live object (404 when none), and
records the bodies of POST (create) and PATCH requests instead of executing
them.  That exposes exactly what kubectl computes client-side: the
last-applied annotation and the 3-way strategic merge patch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]

DISCOVERY: dict[str, Any] = {
    "/api": {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
    },
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": "apps",
                "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
            }
        ],
    },
    "/api/v1": {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap", "verbs": _VERBS},
            {"name": "services", "singularName": "service", "namespaced": True, "kind": "Service", "verbs": _VERBS},
        ],
    },
    "/apis/apps/v1": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "apps/v1",
        "resources": [
            {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment", "verbs": _VERBS}
        ],
    },
}


class _Server(ThreadingHTTPServer):
    live: dict[str, Any] | None = None
    patches: list[str]
    posts: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, code: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> str:
        return self.rfile.read(int(self.headers["Content-Length"])).decode()

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        path = self.path.split("?")[0]
        if path in DISCOVERY:
            self._send(200, DISCOVERY[path])
        elif "/namespaces/" in path and self.server.live is not None:
            self._send(200, self.server.live)
        else:
            name = path.rsplit("/", 1)[-1]
            self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                             "code": 404, "message": "not found", "details": {"name": name}})

    def do_PATCH(self) -> None:  # noqa: N802
        self.server.patches.append(self._body())
        self._send(200, self.server.live)

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.posts.append(body)
        self._send(201, json.loads(body))


class FakeCluster:
    """Runs the fake server and the real kubectl against it (use as a context manager)."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.patches, self._server.posts = [], []
        self._dir = tempfile.mkdtemp(prefix="krm-merge-kubectl-")
        self._kubeconfig = os.path.join(self._dir, "kubeconfig")
        port = self._server.server_address[1]
        with open(self._kubeconfig, "w") as stream:
            stream.write(
                "apiVersion: v1\nkind: Config\n"
                f'clusters: [{{name: f, cluster: {{server: "http://127.0.0.1:{port}"}}}}]\n'
                "contexts: [{name: f, context: {cluster: f, namespace: default}}]\n"
                "current-context: f\nusers: [{name: u, user: {}}]\n"
            )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeCluster:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = ["kubectl", "--kubeconfig", self._kubeconfig, "--cache-dir", os.path.join(self._dir, "cache"), *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    def _write(self, name: str, obj: Any) -> str:
        path = os.path.join(self._dir, name)
        with open(path, "w") as stream:
            json.dump(obj, stream)
        return path

    def apply_create(self, desired: dict[str, Any]) -> dict[str, Any]:
        """What ``kubectl apply`` POSTs when the object does not exist."""
        self._server.live, self._server.posts = None, []
        self.kubectl("apply", "--validate=false", "-f", self._write("desired.json", desired))
        return json.loads(self._server.posts[0])

    def apply_patch(self, live: dict[str, Any], desired: dict[str, Any], *, overwrite: bool = True) -> dict[str, Any] | str | None:
        """The patch ``kubectl apply`` sends (``None`` when it sends none, the error text when it fails)."""
        self._server.live, self._server.patches = live, []
        flags = [] if overwrite else ["--overwrite=false"]
        result = self.kubectl("apply", "--validate=false", *flags, "-f", self._write("desired.json", desired), check=False)
        if result.returncode != 0:
            return result.stderr
        return json.loads(self._server.patches[0]) if self._server.patches else None

    def patch_local(self, live: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any] | str:
        """``kubectl patch --local --type strategic`` (the error text when it fails)."""
        result = subprocess.run(
            ["kubectl", "patch", "--local", "-f", self._write("live.json", live), "--type", "strategic",
             "-p", json.dumps(patch), "-o", "json"],
            capture_output=True, text=True, timeout=60,
        )
        return json.loads(result.stdout) if result.returncode == 0 else result.stderr
