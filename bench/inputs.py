"""Deterministic inputs for the benchmarks (no randomness: item ``n`` is always the same)."""

from __future__ import annotations

from pathlib import Path

# A Deployment as kyaml prints it: compact sequences, comments, quoted values,
# a literal block, a `- # comment` element.  About 1.2 KB.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{n} # the service name
  namespace: team-{team}
  labels:
    app.kubernetes.io/name: app-{n}
    tier: "{tier}"
    bench/group: g{group}
  annotations:
    deployment.kubernetes.io/revision: '3'
  finalizers:
  - a.example.com/one
  - b.example.com/two
  - c.example.com/three
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: app-{n}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-{n}
    spec:
      containers:
      # the application first
      - name: app
        image: "registry.example.net/app-{n}:1.0.{n}"
        args: ['--port', '8080']
        ports:
        - containerPort: 8080
          protocol: TCP
        env:
        - name: LOG_LEVEL
          value: info
        - name: FEATURE_X
          value: "yes"
        resources:
          limits:
            cpu: 500m
            memory: 128Mi
      - # log shipper
        name: sidecar
        image: busybox:1.36
        command:
        - sh
        - -c
        - |
          while true; do
            echo "tick {n}"
            sleep 5
          done
      - name: old-helper
        image: registry.example.net/helper:0.1
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{n}
  namespace: team-{team}
  labels:
    bench/group: g{group}
data:
  mode: "{tier}"
  retries: "3"
  endpoint: https://svc-{n}.example.net/api
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: svc-{n}
  namespace: team-{team}
  labels:
    bench/group: g{group}
spec:
  selector:
    app.kubernetes.io/name: app-{n}
  ports:
  - name: http
    port: 80
    targetPort: 8080
"""

# One patch exercising $setElementOrder, $deleteFromPrimitiveList and $patch: delete.
PATCH = """\
metadata:
  $deleteFromPrimitiveList/finalizers:
  - b.example.com/two
spec:
  template:
    spec:
      $setElementOrder/containers:
      - name: sidecar
      - name: app
      containers:
      - name: app
        image: registry.example.net/app:2.0.0
      - name: old-helper
        $patch: delete
"""


def deployment(n: int) -> str:
    """The ``n``-th Deployment."""
    return DEPLOYMENT.format(
        n=n, team=n % 20, tier="frontend" if n % 2 else "backend", replicas=1 + n % 5, group=n % 100
    )


def resource(n: int) -> str:
    """The ``n``-th resource of a mixed package (Deployments, ConfigMaps, Services)."""
    kind = n % 3
    if kind == 0:
        return deployment(n)
    template = CONFIGMAP if kind == 1 else SERVICE
    return template.format(n=n, team=n % 20, tier="frontend" if n % 2 else "backend", group=n % 100)


def indent_item(text: str) -> str:
    """A document as a ``- `` element of a column-0 sequence (kyaml's ResourceList shape)."""
    lines = text.rstrip("\n").split("\n")
    return "\n".join(["- " + lines[0]] + ["  " + line if line else line for line in lines[1:]]) + "\n"


def multi_doc(texts: list[str]) -> str:
    """Documents joined by ``---`` (what ``kubectl -f`` reads)."""
    return "---\n".join(texts)


def resource_list(texts: list[str], function_config: str) -> str:
    """A ResourceList holding ``texts`` with ``function_config``."""
    parts = ["apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"]
    parts.extend(indent_item(t) for t in texts)
    parts.append("functionConfig:\n")
    parts.append("".join("  " + line + "\n" if line else "\n" for line in function_config.rstrip("\n").split("\n")))
    return "".join(parts)


def reorder_merge_config(patch: str, target: str) -> str:
    """A typed ReorderMerge functionConfig applying ``patch`` to what ``target`` selects.

    ``target`` is one selector line, e.g. ``kind: Deployment`` or ``labelSelector: bench/group=g0``.
    """
    body = "".join("      " + line + "\n" for line in patch.rstrip("\n").split("\n"))
    return (
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: ReorderMerge\nmetadata:\n  name: bench\n"
        "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
        f"spec:\n  patches:\n  - target:\n      {target}\n    patch:\n{body}"
    )


def write_package(root: Path, count: int, per_file: int = 1) -> int:
    """A kpt package of ``count`` resources, ``per_file`` documents a file; returns bytes written."""
    root.mkdir(parents=True, exist_ok=True)
    total = 0
    for start in range(0, count, per_file):
        docs = [resource(n) for n in range(start, min(count, start + per_file))]
        text = multi_doc(docs)
        sub = root / f"team-{start % 20}"
        sub.mkdir(exist_ok=True)
        (sub / f"res-{start}.yaml").write_text(text)
        total += len(text)
    (root / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n"
        "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
    )
    return total


# A patch any kind accepts (the pass-through case touches 1% of a mixed package).
ANNOTATE_PATCH = """\
metadata:
  annotations:
    bench.example.com/touched: "true"
"""

def named_patch(n: int) -> str:
    """:data:`PATCH` naming its own target, Deployment ``n`` (kustomize's patchesStrategicMerge form)."""
    head = f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{n}\n  namespace: team-{n % 20}\n"
    return head + PATCH[len("metadata:\n"):]


def desired_object(n: int) -> str:
    """What a user wants Deployment ``n`` to be for offline apply: 9 replicas, a new image."""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{n}\n  namespace: team-{n % 20}\n"
        f"spec:\n  replicas: 9\n  template:\n    spec:\n      containers:\n      - name: app\n"
        f"        image: registry.example.net/app-{n}:3.0.0\n"
    )


DESIRED_IMAGE = "registry.example.net/app-{n}:3.0.0"


def configmap_config(key: str, documents: list[str]) -> str:
    """A ConfigMap functionConfig for reorder-merge with ``key`` (patch/desired) holding the documents."""
    body = "".join("    " + line + "\n" if line else "\n" for line in multi_doc(documents).rstrip("\n").split("\n"))
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench\n"
        "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
        f"data:\n  mode: reorder-merge\n  {key}: |\n{body}"
    )
