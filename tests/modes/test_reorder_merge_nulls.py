"""Explicit nulls in an object reorder-merge patches stay as kubectl keeps them (issue 33).

``kubectl patch --local`` keeps ``metadata.annotations: null`` (and any
other null the patch does not touch) in the object it returns; the
reorder-merge mode of ``krm-merge run`` wrote ``annotations: {}`` there (the
reader's annotations, added and taken out again, left an empty mapping) and
re-printed the other nulls as empty values.  The result must equal kubectl's
as data, and the lines the patch did not touch must keep their bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from krm_merge.commands import run
from tests.smp_differential.smpdiff_kubectl import KUBECTL, canonical, kubectl_patch

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: null
spec:
  template:
    metadata:
      annotations: null
      labels: ~
    spec:
      containers:
      - name: app
        image: app:1
        args: null
"""

PATCHES = {
    "replicas": {"spec": {"replicas": 2}},
    "image": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}},
    "label": {"metadata": {"labels": {"team": "a"}}},
}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not found on PATH")
@pytest.mark.parametrize("name", sorted(PATCHES))
def test_nulls_the_patch_does_not_touch_stay_as_kubectl_keeps_them(tmp_path: Path, name: str) -> None:
    patch = {"apiVersion": "apps/v1", "kind": "Deployment", **PATCHES[name]}
    patch["metadata"] = {"name": "web", **PATCHES[name].get("metadata", {})}
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "web.yaml").write_text(DEPLOYMENT)
    config = tmp_path / "fn-config.yaml"
    config.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fc"},
                                      "data": {"mode": "reorder-merge", "patch": yaml.safe_dump(patch)}}))
    assert run.main([str(pkg), "--fn-config", str(config)]) == 0
    text = (pkg / "web.yaml").read_text()
    expected = kubectl_patch(yaml.safe_load(DEPLOYMENT), {k: v for k, v in patch.items() if k not in ("apiVersion", "kind")})
    assert expected.error is None
    assert canonical(yaml.safe_load(text)) == canonical(expected.obj), json.dumps(yaml.safe_load(text))
    for line in ("  annotations: null\n", "      annotations: null\n", "      labels: ~\n", "        args: null\n"):
        assert line in text, line  # untouched: its bytes
