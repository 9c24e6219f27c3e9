"""``krm-merge run`` reads a package as ``kpt fn source`` does (issue #14 item 7).

Top-level sequences (kustomize JSON6902 patches) are wrapped, symlinked files
are read, symlinked directories are not (and that is said), and writes go
through a link only when its target stays inside the package.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from krm_merge.commands import run
from krm_merge.krm.package import WRAPPING_KEY, read_package
from tests.conftest import require_binary

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1 # scaled by the patch below
"""
JSON6902 = """\
# kustomize JSON6902 patch: bump replicas
- op: replace
  path: /spec/replicas
  value: 3 # {"$promotion": "default:web:prod"}
-   op: add
    path: /metadata/labels/tier
    value: web
"""
FLOW6902 = """\
[{op: remove, path: /spec/paused}] # a flow sequence
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
data:
  a: b
"""
PATCH_DEPLOY = """\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: ReorderMerge
metadata: {name: p}
spec:
  patches:
  - patch: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 2}}
"""
PATCH_SHARED = """\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: ReorderMerge
metadata: {name: p}
spec:
  patches:
  - patch: {apiVersion: v1, kind: ConfigMap, metadata: {name: shared}, data: {c: d}}
"""


def make_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "patches").mkdir(parents=True)
    (pkg / "deploy.yaml").write_text(DEPLOY)
    (pkg / "patches" / "replicas.yaml").write_text(JSON6902)
    (pkg / "patches" / "flow.yaml").write_text(FLOW6902)
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "cm.yaml").write_text(CONFIGMAP)
    return pkg


def run_in(pkg: Path, config: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    cfg = pkg.parent / "fn-config.yaml"
    cfg.write_text(config)
    code = run.main([str(pkg), "--fn-config", str(cfg), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_top_level_sequences_are_wrapped_like_kpt_fn_source(tmp_path):
    kpt = require_binary("kpt")
    pkg = make_package(tmp_path)
    theirs = yaml.safe_load(subprocess.run([kpt, "fn", "source", str(pkg)], capture_output=True,
                                           text=True, check=True).stdout)["items"]
    _, rl = read_package(pkg)
    ours = [item.data for item in rl.items]
    # Whole items, kpt's path/index/seqindent annotations included (kpt adds metadata to a wrapped
    # sequence only to carry them, and so do we).
    assert sorted(map(repr, ours)) == sorted(map(repr, theirs))
    assert {item.path for item in rl.items} == {"deploy.yaml", "patches/replicas.yaml", "patches/flow.yaml"}
    wrapped = [r for r in rl.results if WRAPPING_KEY in r.message]
    assert sorted(r.file.path for r in wrapped) == ["patches/flow.yaml", "patches/replicas.yaml"]
    assert all(r.severity == "info" for r in wrapped)


def test_kpt_fn_eval_refuses_the_package_we_accept(tmp_path):
    """Why we say so in a result: kpt's own eval rejects such a package as a whole."""
    kpt = require_binary("kpt")
    pkg = make_package(tmp_path)
    proc = subprocess.run([kpt, "fn", "eval", str(pkg), "--exec", "cat"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "resource must have `apiVersion`" in proc.stderr


def test_run_edits_the_package_and_leaves_sequences_byte_identical(tmp_path, capsys):
    pkg = make_package(tmp_path)
    code, _, err = run_in(pkg, PATCH_DEPLOY, capsys)
    assert code == 0, err
    assert (pkg / "deploy.yaml").read_text() == DEPLOY.replace("replicas: 1", "replicas: 2")
    assert (pkg / "patches" / "replicas.yaml").read_text() == JSON6902
    assert (pkg / "patches" / "flow.yaml").read_text() == FLOW6902
    assert "[info]" in err and "patches/replicas.yaml" in err and WRAPPING_KEY in err


def test_promote_edits_a_marker_inside_a_json6902_patch(tmp_path, capsys):
    pkg = make_package(tmp_path)
    code = run.main([str(pkg), "--", "mode=promote", "pipeline=default/web", "environment=prod", "value=5"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (pkg / "patches" / "replicas.yaml").read_text() == JSON6902.replace("value: 3 #", "value: \"5\" #")  # promote writes strings
    assert (pkg / "patches" / "flow.yaml").read_text() == FLOW6902


def test_a_changed_indented_or_flow_sequence_goes_back_unwrapped(tmp_path):
    from krm_merge.krm.package import plan_changes

    pkg = make_package(tmp_path)
    (pkg / "patches" / "indented.yaml").write_text("  - op: remove # keep\n    path: /a\n")
    source, rl = read_package(pkg)
    for item in rl.items:
        if item.path in ("patches/indented.yaml", "patches/flow.yaml"):
            data = item.copy_data()
            data[WRAPPING_KEY][0]["path"] = "/b"
            item.set_data(data)
    written = {w.path: w.text for w in plan_changes(source, rl).writes}
    assert set(written) == {"patches/indented.yaml", "patches/flow.yaml"}
    assert yaml.safe_load(written["patches/indented.yaml"]) == [{"op": "remove", "path": "/b"}]
    assert "# keep" in written["patches/indented.yaml"]
    assert yaml.safe_load(written["patches/flow.yaml"]) == [{"op": "remove", "path": "/b"}]


def test_symlinked_files_are_read_like_kpt(tmp_path):
    kpt = require_binary("kpt")
    pkg = make_package(tmp_path)
    (pkg / "shared.yaml").symlink_to("../base/cm.yaml")
    (pkg / "alias.yaml").symlink_to("deploy.yaml")
    (pkg / "linked-dir").symlink_to("../base", target_is_directory=True)
    out = subprocess.run([kpt, "fn", "source", str(pkg)], capture_output=True, text=True, check=True).stdout
    theirs = sorted(i["metadata"]["annotations"]["internal.config.kubernetes.io/path"]
                    for i in yaml.safe_load(out)["items"])
    _, rl = read_package(pkg)
    assert sorted(item.path for item in rl.items) == theirs
    assert "shared.yaml" in theirs and "alias.yaml" in theirs
    assert not any(p.startswith("linked-dir/") for p in theirs)
    (skipped,) = [r for r in rl.results if r.file and r.file.path == "linked-dir"]
    assert skipped.severity == "info" and "not read" in skipped.message


def test_writes_go_through_a_link_inside_the_package(tmp_path, capsys):
    pkg = make_package(tmp_path)
    (pkg / "alias.yaml").symlink_to("deploy.yaml")
    code, _, err = run_in(pkg, PATCH_DEPLOY, capsys)  # patches both items: they are one file
    assert code == 0, err
    assert (pkg / "alias.yaml").is_symlink()
    assert (pkg / "deploy.yaml").read_text() == DEPLOY.replace("replicas: 1", "replicas: 2")


def test_writes_never_go_through_a_link_leaving_the_package(tmp_path, capsys):
    """kpt fn eval writes through such a link (verified); we refuse and change nothing."""
    pkg = make_package(tmp_path)
    (pkg / "shared.yaml").symlink_to("../base/cm.yaml")
    code, _, err = run_in(pkg, PATCH_SHARED, capsys)
    assert code == 1
    assert "symbolic link to ../base/cm.yaml, outside the package" in err
    assert (tmp_path / "base" / "cm.yaml").read_text() == CONFIGMAP
    assert (pkg / "shared.yaml").is_symlink()


def test_a_broken_link_is_an_error_like_kpt(tmp_path, capsys):
    pkg = make_package(tmp_path)
    (pkg / "gone.yaml").symlink_to("nothing-here.yaml")
    code, _, err = run_in(pkg, PATCH_DEPLOY, capsys)
    assert code == 1
    assert "gone.yaml is a broken symbolic link" in err
    assert (pkg / "deploy.yaml").read_text() == DEPLOY


def test_the_function_passes_kpt_wrapped_sequences_through(tmp_path):
    """`kpt fn source PKG | krm-merge | kpt fn sink`: the wrapped item comes back as it went in."""
    from krm_merge.krm.resourcelist import read_resource_list
    from krm_merge.runner import run_function

    kpt = require_binary("kpt")
    pkg = make_package(tmp_path)
    cfg = tmp_path / "fn-config.yaml"
    cfg.write_text(PATCH_DEPLOY)
    source = subprocess.run([kpt, "fn", "source", str(pkg), "--fn-config", str(cfg)],
                            capture_output=True, text=True, check=True).stdout
    out, code = run_function(source)
    assert code == 0, out
    before = {i.path: i.text for i in read_resource_list(source).items}
    after = {i.path: i.text for i in read_resource_list(out).items}
    assert after["patches/replicas.yaml"] == before["patches/replicas.yaml"]
    assert after["patches/flow.yaml"] == before["patches/flow.yaml"]
    sunk = tmp_path / "sunk"
    subprocess.run([kpt, "fn", "sink", str(sunk)], input=out, capture_output=True, text=True, check=True)
    # kpt's sink re-indents the `-   op:` element (run keeps its bytes: see above); the data is the same.
    assert yaml.safe_load((sunk / "patches" / "replicas.yaml").read_text()) == yaml.safe_load(JSON6902)
    assert yaml.safe_load((sunk / "deploy.yaml").read_text())["spec"]["replicas"] == 2
