"""Differential test: ``krm-merge update`` vs the real ``kpt pkg get`` + ``kpt pkg update``.

Each case generates a small package (Deployments, Services, ConfigMaps, a
Kptfile pipeline), edits it locally and upstream with changes both tools
treat the same way (schema-associative lists, scalar changes on different
fields, added/deleted resources, non-KRM files), runs kpt on a throw-away git
repository (recipe: kpt-oracle notes) and our update on plain directories,
and compares every file (as data, after dropping kpt's bookkeeping).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from krm_merge.commands import update
from tests.conftest import require_binary

from .harness import normalise

pytestmark = pytest.mark.e2e

Files = dict[str, Any]  # path -> list of docs (KRM) or str (other files)


def generate(rng: random.Random) -> Files:
    """A package: a few apps (Deployment + Service + ConfigMap) and a Kptfile pipeline."""
    files: Files = {
        "Kptfile": [{"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "pkg"}, "pipeline": {"mutators": [
            {"image": "ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2", "configMap": {"tag": "1.0"}},
            {"image": "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.1", "configMap": {"app": "x"}},
        ]}}],
        "README.md": "# pkg\n",
    }
    for n in range(rng.randint(2, 4)):
        name = f"app{n}"
        env = [{"name": f"E{k}", "value": str(rng.randint(0, 9))} for k in range(rng.randint(1, 3))]
        files[f"{name}/deploy.yaml"] = [{
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": rng.randint(1, 3), "template": {"spec": {"containers": [
                {"name": "main", "image": f"img/{name}:1.{rng.randint(0, 9)}", "env": env,
                 "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]}}},
        }]
        files[f"{name}/svc-cm.yaml"] = [
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
             "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}]}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-cfg"}, "data": {"a": "1", "b": "2"}},
        ]
    return files


def _deploys(files: Files) -> list[dict[str, Any]]:
    return [d for p, docs in files.items() if p.endswith("deploy.yaml") for d in docs]


def edit_local(files: Files, rng: random.Random) -> None:
    """Changes only local makes."""
    for dep in _deploys(files):
        dep["spec"]["replicas"] = 5
        dep["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "LOCAL", "value": "l"})
    files["app0/svc-cm.yaml"][1]["data"]["local"] = "yes"
    files["Kptfile"][0]["pipeline"]["mutators"][0]["configMap"]["tag"] = "2.0"
    files["local.yaml"] = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine"}, "data": {"x": "1"}}]
    files["README.md"] = "# my pkg\n"
    files["notes.txt"] = "local notes\n"


def edit_upstream(files: Files, rng: random.Random) -> None:
    """Changes only upstream makes (on fields local does not touch)."""
    for dep in _deploys(files):
        container = dep["spec"]["template"]["spec"]["containers"][0]
        container["image"] = container["image"].rsplit(":", 1)[0] + ":2.0"
        container["env"].append({"name": "UP", "value": "u"})
        dep["metadata"]["labels"]["tier"] = "web"
    files["app0/svc-cm.yaml"][0]["spec"]["ports"][0]["targetPort"] = 9090
    files["app0/svc-cm.yaml"][1]["data"]["b"] = "3"
    last = max(p for p in files if p.endswith("deploy.yaml")).split("/")[0]
    del files[f"{last}/svc-cm.yaml"]  # unmodified locally -> deleted
    files["Kptfile"][0]["pipeline"]["mutators"].append({"image": "ghcr.io/kptdev/krm-functions-catalog/kubeval:v0.3"})
    files["Kptfile"][0]["pipeline"]["mutators"][1]["configMap"]["app"] = "y"
    files["up.yaml"] = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}]
    files["LICENSE"] = "upstream licence\n"


def write_files(root: Path, files: Files) -> None:
    if root.exists():
        for entry in root.iterdir():
            if entry.name != ".git":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content if isinstance(content, str) else yaml.safe_dump_all(content, sort_keys=False))


def read_files(root: Path) -> Files:
    out: Files = {}
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in names:
            rel = str((Path(dirpath) / name).relative_to(root))
            text = (Path(dirpath) / name).read_text()
            if rel.endswith((".yaml", ".yml")) or name == "Kptfile":
                out[rel] = [normalise(d) for d in yaml.safe_load_all(text) if d is not None]
            else:
                out[rel] = text
    return out


def load_files(root: Path) -> Files:
    """Files as editable data (kpt's additions kept)."""
    out: Files = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            rel = str((Path(dirpath) / name).relative_to(root))
            text = (Path(dirpath) / name).read_text()
            is_krm = rel.endswith((".yaml", ".yml")) or name == "Kptfile"
            out[rel] = [d for d in yaml.safe_load_all(text) if d is not None] if is_krm else text
    return out


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_update_agrees_with_kpt(tmp_path: Path, seed: int) -> None:
    require_binary("kpt")
    require_binary("git")
    env = dict(os.environ, HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e",
               GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
    for d in ("home", "tmp", "up/pkg", "ws", "origin", "upstream"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    original = generate(rng)
    updated = yaml.safe_load(yaml.safe_dump(original))  # deep copy through YAML
    updated["README.md"] = original["README.md"]
    edit_upstream(updated, rng)

    up = tmp_path / "up"
    write_files(up / "pkg", original)
    run(["git", "init", "-q", "-b", "main"], up, env)
    run(["git", "add", "-A"], up, env)
    run(["git", "commit", "-qm", "original"], up, env)
    ws = tmp_path / "ws"
    run(["kpt", "pkg", "get", f"file://{up}.git/pkg@main", "local"], ws, env)

    local_files = load_files(ws / "local")
    edit_local(local_files, rng)
    write_files(ws / "local", local_files)
    shutil.copytree(ws / "local", tmp_path / "ours")

    write_files(up / "pkg", updated)
    run(["git", "add", "-A"], up, env)
    run(["git", "commit", "-qm", "updated"], up, env)
    run(["kpt", "pkg", "update", "local"], ws, env)

    write_files(tmp_path / "origin", original)
    write_files(tmp_path / "upstream", updated)
    assert update.main([str(tmp_path / "ours"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream")]) == 0

    theirs, ours = read_files(ws / "local"), read_files(tmp_path / "ours")
    assert sorted(ours) == sorted(theirs)
    for path in theirs:
        assert ours[path] == theirs[path], path
    # the case really exercised both sides' changes
    env_names = [e["name"] for e in ours["app0/deploy.yaml"][0]["spec"]["template"]["spec"]["containers"][0]["env"]]
    assert env_names[-2:] == ["LOCAL", "UP"]
    assert ours["app0/deploy.yaml"][0]["spec"]["replicas"] == 5
    assert ours["app0/svc-cm.yaml"][0]["spec"]["ports"][0]["targetPort"] == 9090
    mutators = ours["Kptfile"][0]["pipeline"]["mutators"]
    assert mutators[0]["configMap"]["tag"] == "2.0" and mutators[1]["configMap"]["app"] == "y" and len(mutators) == 3
    assert "up.yaml" in ours and "local.yaml" in ours and ours["README.md"] == "# my pkg\n" and "LICENSE" in ours
    assert ours["app0/svc-cm.yaml"][1]["data"] == {"a": "1", "b": "3", "local": "yes"}
