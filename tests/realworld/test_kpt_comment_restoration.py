"""What kpt's own comment restoration does to a reordered, marked list (issue #14 item 10).

Records real kpt 1.0.0-beta.56 behaviour: after reorder-merge moves a container
carrying a ``$promotion`` marker, kpt (eval and render alike) copies the
marker by *position* onto the container that took its place, although the
function's output already carries it on the right container only.  The next
promotion would then change two images.  ``krm-merge run`` writes the
function's output as is.  README and docs/promote.md warn about this; if kpt
ever stops doing it, these tests fail and the warnings can go.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from krm_merge.commands import run
from krm_merge.runner import run_function
from tests.conftest import require_binary
from tests.krm.helpers import resource_list

MARKER = '# {"$promotion": "default:web:prod"}'
DEPLOY = f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1.0 {MARKER}
      - name: sidecar
        image: proxy:2.0
"""
PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      $setElementOrder/containers:
      - name: sidecar
      - name: app
"""
CONFIG = yaml.safe_dump({
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "cfg", "annotations": {"config.kubernetes.io/local-config": "true"}},
    "data": {"mode": "reorder-merge", "patch": PATCH},
})
EXEC = f"{sys.executable} -m krm_merge"


def marked_images(text: str) -> list[str]:
    """The image lines that carry the marker."""
    return [line.split("#")[0].strip() for line in text.splitlines() if MARKER in line]


def package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "deploy.yaml").write_text(DEPLOY)
    return pkg


def test_the_function_output_keeps_the_marker_on_its_container():
    out, code = run_function(resource_list([DEPLOY], CONFIG))
    assert code == 0
    assert marked_images(out) == ["image: app:1.0"]
    item = yaml.safe_load(out)["items"][0]
    assert [c["name"] for c in item["spec"]["template"]["spec"]["containers"]] == ["sidecar", "app"]


def test_krm_merge_run_writes_the_marker_once(tmp_path, capsys):
    pkg = package(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG)
    assert run.main([str(pkg), "--fn-config", str(cfg)]) == 0, capsys.readouterr().err
    assert marked_images((pkg / "deploy.yaml").read_text()) == ["image: app:1.0"]


def test_kpt_fn_eval_copies_the_marker_onto_the_moved_in_container(tmp_path):
    kpt = require_binary("kpt")
    pkg = package(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG)
    proc = subprocess.run([kpt, "fn", "eval", str(pkg), "--exec", EXEC, "--fn-config", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # kpt's behaviour, not ours: the sidecar now carries the app's marker too.
    assert marked_images((pkg / "deploy.yaml").read_text()) == ["image: proxy:2.0", "image: app:1.0"]


def test_kpt_fn_render_does_the_same(tmp_path):
    kpt = require_binary("kpt")
    pkg = package(tmp_path)
    (pkg / "fn-config.yaml").write_text(CONFIG)
    (pkg / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n"
        f"  - exec: {EXEC}\n    configPath: fn-config.yaml\n"
    )
    proc = subprocess.run([kpt, "fn", "render", str(pkg), "--allow-exec"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert marked_images((pkg / "deploy.yaml").read_text()) == ["image: proxy:2.0", "image: app:1.0"]
