"""The reorder-merge examples' expected diffs, checked against real ``kubectl patch``.

The catalog tests compare the product with ``.expected/diff.patch``; this test
keeps that file honest without the product: the committed diff, applied to
the example with ``git apply``, must give what ``kubectl patch --local --type
strategic`` gives for the example's own patch (as data, item by item).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, require_binary

pytestmark = pytest.mark.e2e

EXAMPLES = ROOT / "examples"


def _patches(example: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, name, patch) of each patch in the example's functionConfig."""
    config_file = yaml.safe_load((example / ".expected" / "config.yaml").read_text())["fnConfig"]
    config = yaml.safe_load((example / config_file).read_text())
    if config["kind"] == "ConfigMap":
        return [(p["kind"], p["metadata"]["name"], p) for p in yaml.safe_load_all(config["data"]["patch"]) if p]
    return [(p["target"]["kind"], p["target"]["name"], p["patch"]) for p in config["spec"]["patches"]]


def _objects(root: Path) -> dict[tuple[str, str], tuple[Path, dict[str, Any]]]:
    out = {}
    krmignore = root / ".krmignore"
    ignored = set(krmignore.read_text().split()) if krmignore.exists() else set()  # not package files
    for path in sorted(p for p in root.glob("*.yaml") if p.name not in ignored):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and "kind" in doc and doc.get("metadata", {}).get("name"):
                out[(doc["kind"], doc["metadata"]["name"])] = (path, doc)
    return out


def _kubectl_patch(kubectl: str, tmp: Path, obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    source, patch_file = tmp / "object.json", tmp / "patch.json"
    source.write_text(json.dumps(obj))
    patch_file.write_text(json.dumps(patch))
    proc = subprocess.run([kubectl, "patch", "--local", "-f", str(source), "--type", "strategic",
                           "--patch-file", str(patch_file), "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", ["reorder-merge-env-order", "reorder-merge-finalizers"])
def test_expected_diff_is_what_kubectl_patch_gives(name: str, tmp_path: Path) -> None:
    kubectl = require_binary("kubectl")
    git = require_binary("git")
    example = EXAMPLES / name
    work = tmp_path / "work"
    shutil.copytree(example, work)
    before = _objects(work)
    subprocess.run([git, "apply", str(example / ".expected" / "diff.patch")], cwd=work, check=True,
                   capture_output=True)
    after = _objects(work)
    patched = 0
    for kind, obj_name, patch in _patches(example):
        _, original = before[(kind, obj_name)]
        _, expected = after[(kind, obj_name)]
        assert expected == _kubectl_patch(kubectl, tmp_path, original, patch)
        patched += 1
    assert patched >= 1
