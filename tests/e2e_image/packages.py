"""Tiny kpt packages and kustomizations written by the tests themselves."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import yaml

# A Deployment with comments and quoting that any round trip must keep.
DEPLOYMENT = """\
# Header comment for the deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # trailing comment on name
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      # comment before the first container
      - name: nginx
        image: "nginx:1.25" # double-quoted image
        args: ['--port', '8080']
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  count: "3"
"""


def write_resources(pkg: Path) -> None:
    """The resources shared by every test package."""
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "deployment.yaml").write_text(DEPLOYMENT)
    (pkg / "configmap.yaml").write_text(CONFIGMAP)


def write_kpt_package(pkg: Path, step: Mapping[str, object]) -> None:
    """A kpt package whose Kptfile pipeline has one mutator ``step``."""
    write_resources(pkg)
    kptfile = {
        "apiVersion": "kpt.dev/v1",
        "kind": "Kptfile",
        "metadata": {"name": pkg.name, "annotations": {"config.kubernetes.io/local-config": "true"}},
        "pipeline": {"mutators": [dict(step)]},
    }
    (pkg / "Kptfile").write_text(yaml.safe_dump(kptfile, sort_keys=False))


def write_kustomization(directory: Path, function_annotation: Mapping[str, object],
                        data: Mapping[str, str]) -> None:
    """A kustomization with one transformer: a ConfigMap naming the function."""
    write_resources(directory)
    transformer = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "krm-merge-config",
            "annotations": {
                "config.kubernetes.io/function": yaml.safe_dump(dict(function_annotation), sort_keys=False),
            },
        },
        "data": dict(data),
    }
    (directory / "fn.yaml").write_text(yaml.safe_dump(transformer, sort_keys=False))
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["deployment.yaml", "configmap.yaml"],
        "transformers": ["fn.yaml"],
    }
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
