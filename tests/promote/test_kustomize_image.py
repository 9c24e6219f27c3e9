"""The ``kustomize-image`` strategy, checked with the real kustomize (``kubectl kustomize``)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.commands.promote import main
from krm_merge.runner import run_function
from tests.conftest import require_binary

from .harness import resource_list

DIGEST = "sha256:" + "0f" * 32
BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: api
        image: api:1.0.0
      - name: worker
        image: worker
      - name: proxy
        image: envoyproxy/envoy:v1.30.0
"""
OVERLAY = """\
# production overlay
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base       # the shared base
namePrefix: prod-
images:
  - name: api # the API server
    newName: registry.example.net/api
    newTag: "1.0.0"

  # keep proxy pinned
  - {name: envoyproxy/envoy, newTag: v1.30.0}
"""
EXPECTED = OVERLAY.replace('newTag: "1.0.0"', 'newTag: "2.1.0"').replace(
    "    newTag: \"2.1.0\"\n", f"    newTag: \"2.1.0\"\n    digest: {DIGEST}\n").replace(
    "v1.30.0}\n", "v1.30.0}\n  - name: worker\n    newName: registry.example.net/worker\n    newTag: 0.9.1\n")


def _build(overlay: Path) -> list[dict[str, Any]]:
    done = subprocess.run(["kubectl", "kustomize", str(overlay)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def _tree(root: Path) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "base" / "deployment.yaml").write_text(BASE)
    (root / "base" / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    overlay = root / "overlays" / "prod"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(OVERLAY)
    return overlay


def test_kustomize_builds_the_new_images_and_nothing_else_changes(tmp_path: Path) -> None:
    require_binary("kubectl")
    overlay = _tree(tmp_path)
    before = _build(overlay)
    assert main([str(tmp_path), "--environment", "prod",
                 "--kustomize-image", f"overlays/{{environment.name}}:api=registry.example.net/api:2.1.0@{DIGEST}",
                 "--kustomize-image", "overlays/{environment.name}:worker=registry.example.net/worker:0.9.1"]) == 0
    assert (overlay / "kustomization.yaml").read_text() == EXPECTED
    after = _build(overlay)
    images = [c["image"] for c in after[0]["spec"]["template"]["spec"]["containers"]]
    assert images == [f"registry.example.net/api:2.1.0@{DIGEST}", "registry.example.net/worker:0.9.1",
                      "envoyproxy/envoy:v1.30.0"]
    for container in before[0]["spec"]["template"]["spec"]["containers"]:
        container.pop("image")
    for container in after[0]["spec"]["template"]["spec"]["containers"]:
        container.pop("image")
    assert after == before
    # Idempotent: a second run changes nothing.
    assert main([str(tmp_path), "--environment", "prod",
                 "--kustomize-image", f"overlays/prod:api=registry.example.net/api:2.1.0@{DIGEST}",
                 "--kustomize-image", "overlays/prod:worker=registry.example.net/worker:0.9.1"]) == 0
    assert (overlay / "kustomization.yaml").read_text() == EXPECTED


@pytest.mark.parametrize("original,expected", [
    # no images: list yet -> appended in the style of the document's other lists
    ("resources:\n  - ../base\n", "resources:\n  - ../base\nimages:\n  - name: app\n    newTag: v2\n"),
    ("resources:\n- ../base\n", "resources:\n- ../base\nimages:\n- name: app\n  newTag: v2\n"),
    # CR LF kept, a missing newline at the end handled
    ("resources:\r\n- ../base", "resources:\r\n- ../base\r\nimages:\r\n- name: app\r\n  newTag: v2\r\n"),
    # flow list and flow entry
    ("images: [{name: app, newTag: v1}]\n", "images: [{name: app, newTag: v2}]\n"),
    ("images: [{name: other}]\n", "images: [{name: other}, {name: app, newTag: v2}]\n"),
    ("images: []\n", "images: [{name: app, newTag: v2}]\n"),
    # a missing key goes under the entry's last key; an existing newName follows the reference
    ("images:\n- name: app   # ours\n  newName: x\n", "images:\n- name: app   # ours\n  newName: app\n  newTag: v2\n"),
    ("images:\n- name: app   # ours\n  digest: sha256:00\n", "images:\n- name: app   # ours\n  digest: sha256:00\n  newTag: v2\n"),
])
def test_entry_styles(tmp_path: Path, original: str, expected: str) -> None:
    (tmp_path / "o").mkdir()
    path = tmp_path / "o" / "kustomization.yaml"
    path.write_bytes(original.encode())
    assert main([str(tmp_path), "--kustomize-image", "o:app=app:v2"]) == 0
    assert path.read_bytes() == expected.encode()


def test_function_mode_promotions_list() -> None:
    items = [
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n  name: k\n  annotations:\n"
        "    config.kubernetes.io/path: overlays/prod/kustomization.yaml\nimages:\n- name: app\n  newTag: v1\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n"
        '  chart: 1.0.0 # {"$promotion": "default:app:prod"}\n  image: app:v1 # {"$imagepolicy": "flux:app"}\n',
    ]
    config = {"promotions": (
        "- {strategy: kustomize-image, image: app, pathTemplate: 'overlays/{environment.name}', "
        "environment: prod, value: 'app:v2'}\n"
        "- {pipeline: default/app, environment: prod, value: 1.10}\n"
        "- {imagePolicy: 'flux:app', value: 'ghcr.io/a/app:v2@sha256:ab'}\n")}
    out, code = run_function(resource_list(items, config))
    assert code == 0, out
    rl = yaml.safe_load(out)
    assert rl["items"][0]["images"] == [{"name": "app", "newTag": "v2"}]
    assert rl["items"][1]["data"] == {"chart": "1.10", "image": "ghcr.io/a/app:v2@sha256:ab"}
    assert sorted(r["field"]["path"] for r in rl["results"]) == ["data.chart", "data.image", "images[0].newTag"]
    assert all(r["severity"] == "info" for r in rl["results"])


@pytest.mark.parametrize("directory", ["../outside", "{environment.name}/../../outside"])
def test_kustomization_outside_the_root_is_refused(directory: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "outside").mkdir()
    outside = tmp_path / "outside" / "kustomization.yaml"
    outside.write_text("images:\n- name: app\n  newTag: v1\n")
    (tmp_path / "repo" / "prod").mkdir(parents=True)
    code = main([str(tmp_path / "repo"), "--environment", "prod", "--kustomize-image", f"{directory}:app=app:v2"])
    assert code == 1
    assert "leaves" in capsys.readouterr().err
    assert outside.read_text() == "images:\n- name: app\n  newTag: v1\n"


def test_kustomization_folder_leaving_the_root_is_refused_even_when_absent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Checked on the folder asked for, not on what a glob found: no file outside is needed to refuse it.
    (tmp_path / "repo" / "o").mkdir(parents=True)
    code = main([str(tmp_path / "repo"), "--kustomize-image", "../nothere:app=app:v2"])
    assert code == 1 and "refusing ../nothere: the kustomization path leaves" in capsys.readouterr().err


def test_kustomization_folders_are_found_on_the_package_listing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The kustomizations are the listed files (the one lister's rules): a hidden folder named is found, a
    symbolic link to a directory is not followed (as for marked files), so its kustomization is no match."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    original, changed = "images:\n- name: app\n  newTag: v1\n", "images:\n- name: app\n  newTag: v2\n"
    (repo / ".overlay").mkdir(parents=True)
    (repo / ".overlay" / "Kustomization").write_text(original)
    elsewhere.mkdir()
    (elsewhere / "kustomization.yaml").write_text(original)
    (repo / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert main([str(repo), "--kustomize-image", ".overlay:app=app:v2"]) == 0
    assert (repo / ".overlay" / "Kustomization").read_text() == changed
    assert main([str(repo), "--kustomize-image", "linked:app=app:v2"]) == 1
    assert "no field found for a kustomization in linked" in capsys.readouterr().err
    assert (elsewhere / "kustomization.yaml").read_text() == original
