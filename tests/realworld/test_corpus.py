"""Real-world-style files through every mode (issue #14, "Tests that must exist").

The corpus (``corpus/``, written for this test, modelled on kubernetes/examples,
Flux, Argo CD, GKE samples and microservices-demo) has 1- and 4-space
indentation, head comments on list elements, a flow sequence with comments,
region comments (``# [START x]``/``# [END x]``), an anchor shared between an
edited and untouched fields, an old API version, top-level sequences and
(made at test time) a symbolic link.  Each edit checks:

* untouched lines come back byte-identical (same text at the same field path),
* every comment is kept and stays attached to the same element or key
  (``locate.comments``: counted and located by field path),
* for strategic merge patches, the data equals real ``kubectl patch --local``.

Cases that depend on fixes helper "core"/"merge3" makes in parallel are
``xfail(strict=True)`` with the issue item: they fail today and turn green when
those land (then the marker must go).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.commands import promote as promote_command
from krm_merge.commands import run, update
from krm_merge.krm.package import split_documents
from krm_merge.krm.resourcelist import read_resource_list
from krm_merge.runner import run_function
from tests.conftest import require_binary
from tests.krm.helpers import resource_list
from tests.realworld.locate import comments, under, untouched_lines

CORPUS = Path(__file__).parent / "corpus"


@dataclass(frozen=True)
class SmpCase:
    """One strategic merge patch on one corpus file."""

    id: str
    file: str
    patch: dict[str, Any]
    touched: tuple[str, ...]  # field paths whose lines may change (see locate.py)
    xfail: str | None = None
    last_line: str | None = None  # a region comment that must stay the document's last line
    expect_warnings: int = 0
    replaced: tuple[str, ...] = ()  # lists the patch replaces whole (no schema): their comments go
    # kubectl refuses strategic merge for kinds it has no Go type for; we behave as a JSON merge patch.
    kubectl_type: str = "strategic"

    @property
    def param(self) -> Any:
        marks = [pytest.mark.xfail(strict=True, reason=self.xfail)] if self.xfail else []
        return pytest.param(self, id=self.id, marks=marks)


def _deploy(name: str, spec: dict[str, Any], api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"template": {"spec": spec}}


CONTAINERS = "doc0.spec.template.spec.containers"
SMP_CASES = [
    SmpCase(
        "4space-image", "guestbook-4space.yaml",
        _deploy("guestbook", _pod({"containers": [{"name": "guestbook", "image": "registry.k8s.io/guestbook:v4"}]})),
        (f"{CONTAINERS}[name=guestbook].image",),
    ),
    SmpCase(
        "1space-memory", "redis-1space.yaml",
        _deploy("redis-leader", _pod({"containers": [{"name": "leader", "resources": {"requests": {"memory": "200Mi"}}}]})),
        (f"{CONTAINERS}[name=leader].resources.requests.memory",),
    ),
    SmpCase(
        "old-api-env", "frontend-extensions-v1beta1.yaml",
        _deploy("frontend", _pod({"containers": [{"name": "php-redis", "env": [{"name": "DEBUG", "value": "1"}]}]}),
                "extensions/v1beta1"),
        (f"{CONTAINERS}[name=php-redis].env",),
    ),
    SmpCase(
        "region-add-replicas", "hello-app-regions.yaml",
        _deploy("hello-app", {"replicas": 3}),
        ("doc0.spec.replicas",), last_line="# [END gke_hello_app_deployment]",
    ),
    SmpCase(
        "region-flow-reorder", "hello-app-regions.yaml",
        _deploy("hello-app", _pod({"$setElementOrder/containers": [{"name": "istio-proxy"}, {"name": "hello-app"}]})),
        (), last_line="# [END gke_hello_app_deployment]",
    ),
    SmpCase(
        "anchor-labels", "argocd-guestbook-anchors.yaml",
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "guestbook-ui", "labels": {"tier": "frontend"}}},
        ("doc0.metadata.labels", "doc0.spec.selector.matchLabels", "doc0.spec.template.metadata.labels"),
    ),
    SmpCase(
        "anchor-untouched-replicas", "argocd-guestbook-anchors.yaml",
        _deploy("guestbook-ui", {"replicas": 2}), ("doc0.spec.replicas",),
    ),
    SmpCase(
        "head-comments-reorder", "microservices-frontend.yaml",
        _deploy("frontend", _pod({
            "$setElementOrder/containers": [{"name": "proxy"}, {"name": "server"}],
            "containers": [{"name": "server", "$setElementOrder/env": [
                {"name": "CURRENCY_SERVICE_ADDR"}, {"name": "PRODUCT_CATALOG_SERVICE_ADDR"}]}],
        })),
        (),
    ),
    SmpCase(
        "port-added-in-front", "microservices-frontend.yaml",
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "frontend"},
         "spec": {"$setElementOrder/ports": [{"port": 443}, {"port": 80}],
                  "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}},
        ("doc1.spec.ports[name=https]",),
    ),
    SmpCase(
        "head-comments-image", "microservices-frontend.yaml",
        _deploy("frontend", _pod({"containers": [{"name": "proxy", "image": "envoyproxy/envoy:v1.29.0"}]})),
        (f"{CONTAINERS}[name=proxy].image",),
    ),
    SmpCase(
        "crd-less-list-replaced", "flux-app/helmrelease.yaml",
        {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
         "metadata": {"name": "podinfo", "namespace": "podinfo"},
         "spec": {"interval": "10m", "values": {"ingress": {"hosts": [{"host": "podinfo.example"}]}}}},
        ("doc0.spec.interval", "doc0.spec.values.ingress.hosts"), expect_warnings=1,
        replaced=("doc0.spec.values.ingress.hosts",), kubectl_type="merge",
    ),
]


def _documents(text: str) -> list[str]:
    return [doc for doc in split_documents(text)[1] if doc.strip(" \n#") or "kind:" in doc]


def _target_index(text: str, patch: dict[str, Any]) -> int:
    for n, doc in enumerate(_documents(text)):
        data = yaml.safe_load(doc)
        if data.get("kind") == patch["kind"] and data["metadata"]["name"] == patch["metadata"]["name"]:
            return n
    raise AssertionError(f"no document for {patch['kind']}/{patch['metadata']['name']}")


def check_edit(before: str, after: str, touched: tuple[str, ...], last_line: str | None = None,
               replaced: tuple[str, ...] = ()) -> None:
    """Untouched lines byte-identical, every comment kept where it was attached.

    Comments inside ``replaced`` (lists a patch replaced whole) go with the old elements.
    """
    assert untouched_lines(after, touched) == untouched_lines(before, touched)

    def kept(counter: Counter[tuple[str, str]]) -> Counter[tuple[str, str]]:
        return Counter({k: v for k, v in counter.items() if not under(k[0], replaced)})

    assert kept(comments(after)) == kept(comments(before))
    if last_line is not None:
        assert [line for line in after.splitlines() if line.strip()][-1] == last_line


def kubectl_result(tmp_path: Path, doc: str, patch: dict[str, Any], patch_type: str = "strategic") -> dict[str, Any]:
    kubectl = require_binary("kubectl")
    obj, patch_file = tmp_path / "kubectl-obj.yaml", tmp_path / "kubectl-patch.json"
    obj.write_text(doc)
    patch_file.write_text(json.dumps(patch))
    proc = subprocess.run([kubectl, "patch", "--local", "-f", str(obj), "--type", patch_type,
                           "--patch-file", str(patch_file), "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _config(patch: dict[str, Any]) -> str:
    return yaml.safe_dump({"apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "ReorderMerge",
                           "metadata": {"name": "corpus"}, "spec": {"patches": [{"patch": patch}]}})


@pytest.mark.parametrize("case", [c.param for c in SMP_CASES])
def test_reorder_merge_through_run(case: SmpCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = CORPUS / case.file
    pkg = tmp_path / "pkg"
    shutil.copytree(source.parent, pkg)
    before = source.read_text()
    config = tmp_path / "fn-config.yaml"
    config.write_text(_config(case.patch))
    code = run.main([str(pkg), "--fn-config", str(config)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("[warning]") == case.expect_warnings, err
    after = (pkg / source.relative_to(source.parent)).read_text()
    check_edit(before, after, case.touched, case.last_line, case.replaced)
    index = _target_index(before, case.patch)
    theirs = kubectl_result(tmp_path, _documents(before)[index], case.patch, case.kubectl_type)
    assert yaml.safe_load(_documents(after)[index]) == theirs


@pytest.mark.parametrize("case", [c.param for c in SMP_CASES])
def test_reorder_merge_as_a_function(case: SmpCase) -> None:
    before = (CORPUS / case.file).read_text()
    docs = _documents(before)
    out, code = run_function(resource_list(docs, _config(case.patch)))
    assert code == 0, out
    items = read_resource_list(out).items
    index = _target_index(before, case.patch)
    for n, (doc, item) in enumerate(zip(docs, items)):
        if n != index:
            assert item.text == doc  # untargeted items byte-identical
    # Compare the edited item alone, with the document's own path prefix.
    doc_prefix = f"doc{index}"
    touched = tuple(t.replace(doc_prefix, "doc0", 1) for t in case.touched if t.startswith(doc_prefix + "."))
    replaced = tuple(t.replace(doc_prefix, "doc0", 1) for t in case.replaced if t.startswith(doc_prefix + "."))
    check_edit(docs[index], items[index].text, touched, case.last_line, replaced)


# --- a symbolic link inside the package ------------------------------------------------


def test_a_patch_through_a_symlinked_file_edits_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "shared").mkdir(parents=True)
    shutil.copy(CORPUS / "frontend-extensions-v1beta1.yaml", pkg / "shared" / "frontend.yaml")
    (pkg / ".krmignore").write_text("shared/\n")
    (pkg / "frontend.yaml").symlink_to("shared/frontend.yaml")
    case = next(c for c in SMP_CASES if c.id == "old-api-env")
    config = tmp_path / "fn-config.yaml"
    config.write_text(_config(case.patch))
    assert run.main([str(pkg), "--fn-config", str(config)]) == 0, capsys.readouterr().err
    assert (pkg / "frontend.yaml").is_symlink()
    before = (CORPUS / "frontend-extensions-v1beta1.yaml").read_text()
    check_edit(before, (pkg / "shared" / "frontend.yaml").read_text(), case.touched)


# --- promote ---------------------------------------------------------------------------

PROMOTED = ("doc0.spec.chart.spec.version",)


def _flux_copy(tmp_path: Path) -> Path:
    pkg = tmp_path / "flux-app"
    shutil.copytree(CORPUS / "flux-app", pkg)
    return pkg


def _check_promoted(pkg: Path) -> None:
    before = (CORPUS / "flux-app" / "helmrelease.yaml").read_text()
    after = (pkg / "helmrelease.yaml").read_text()
    check_edit(before, after, PROMOTED)
    assert yaml.safe_load(after)["spec"]["chart"]["spec"]["version"] == "6.6.0"
    assert after == before.replace('"6.5.0"', '"6.6.0"')
    for name in ("patches/replicas.yaml", "kustomization.yaml"):
        assert (pkg / name).read_bytes() == (CORPUS / "flux-app" / name).read_bytes()


def test_promote_through_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _flux_copy(tmp_path)
    code = run.main([str(pkg), "--", "mode=promote", "pipeline=flux-system/podinfo",
                     "environment=prod", "value=6.6.0"])
    err = capsys.readouterr().err
    assert code == 0, err
    _check_promoted(pkg)


def test_promote_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _flux_copy(tmp_path)
    code = promote_command.main([str(pkg), "--pipeline", "flux-system/podinfo", "--environment", "prod",
                                 "--value", "6.6.0"])
    assert code == 0, capsys.readouterr().err
    _check_promoted(pkg)


# --- resource-merge and pipeline-merge (krm-merge update) -------------------------------


@dataclass(frozen=True)
class UpdateCase:
    """local = origin = the corpus file; upstream changes it by text replacement."""

    id: str
    file: str
    old: str
    new: str
    touched: tuple[str, ...]
    name: str = ""
    xfail: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def param(self) -> Any:
        marks = [pytest.mark.xfail(strict=True, reason=self.xfail)] if self.xfail else []
        return pytest.param(self, id=self.id, marks=marks)


NEW_FUNCTION = """\
        # finally, validate
        -   image: gcr.io/kpt-fn/kubeval:v0.3.0
"""
UPDATE_CASES = [
    UpdateCase("2space-image", "microservices-frontend.yaml", "envoy:v1.28.0", "envoy:v1.29.0",
               (f"{CONTAINERS}[name=proxy].image",)),
    UpdateCase("2space-env-value", "microservices-frontend.yaml", '"currencyservice:7000"', '"currencyservice:7001"',
               (f"{CONTAINERS}[name=server].env[name=CURRENCY_SERVICE_ADDR].value",)),
    UpdateCase("4space-multidoc-image", "guestbook-4space.yaml", "guestbook:v3", "guestbook:v4",
               (f"{CONTAINERS}[name=guestbook].image",)),
    UpdateCase("4space-configmaps-value", "configmaps-4space.yaml", "LOG_LEVEL: info", "LOG_LEVEL: debug",
               ("doc1.data.LOG_LEVEL",)),
    UpdateCase("old-api-image", "frontend-extensions-v1beta1.yaml", "gb-frontend:v4", "gb-frontend:v5",
               (f"{CONTAINERS}[name=php-redis].image",)),
    UpdateCase("kptfile-4space-function-added", "Kptfile-4space", "app: wordpress\n",
               "app: wordpress\n" + NEW_FUNCTION, ("doc0.pipeline.mutators[image=gcr.io/kpt-fn/kubeval:v0.3.0]",),
               name="Kptfile"),
    UpdateCase("kptfile-4space-unchanged-upstream-description", "Kptfile-4space", "wordpress package",
               "the wordpress package", ("doc0.info.description",), name="Kptfile"),
]


def without_kpt_markers(written: str) -> tuple[str, int]:
    """``written`` without kpt's identity markers, and how many resources carry both."""
    after, commented = re.subn(r"^(metadata:) # kpt-merge: [^\n]*$", r"\1", written, flags=re.M)
    after, annotated = re.subn(r"^ +internal\.kpt\.dev/upstream-identifier: [^\n]*\n", "", after, flags=re.M)
    after = re.sub(r"^( +)annotations:\n(?!\1 )", "", after, flags=re.M)  # the block only the marker was in
    return after, min(commented, annotated)


@pytest.mark.parametrize("case", [c.param for c in UPDATE_CASES])
def test_update(case: UpdateCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (CORPUS / case.file).read_text()
    upstream_text = before.replace(case.old, case.new)
    assert upstream_text != before
    name = case.name or case.file
    dirs = {}
    for side, text in (("local", before), ("origin", before), ("upstream", upstream_text)):
        dirs[side] = tmp_path / side
        dirs[side].mkdir()
        (dirs[side] / name).write_text(text)
    code = update.main([str(dirs["local"]), "--origin", str(dirs["origin"]), "--upstream", str(dirs["upstream"])])
    err = capsys.readouterr().err
    assert code == 0, err
    written = (dirs["local"] / name).read_text()
    # kpt pkg update marks every resulting resource `metadata: # kpt-merge: ns/name` and with its
    # upstream-identifier annotation (docs/merge.md).
    after, marked = without_kpt_markers(written)
    if name != "Kptfile":
        assert marked == len(_documents(before)), written
    # Untouched lines are local's; comments are upstream's (a function it added brings its own).
    assert untouched_lines(after, case.touched) == untouched_lines(before, case.touched)
    assert comments(after) == comments(upstream_text)
    assert list(yaml.safe_load_all(after)) == list(yaml.safe_load_all(upstream_text))
    assert after == upstream_text  # local had no change of its own: upstream's bytes (and layout)


# --- the merge modes as functions, through run on a folder holding the three copies -----


def _workdir(tmp_path: Path) -> Path:
    """local = origin = the corpus files; upstream adds a function and bumps an image."""
    work = tmp_path / "work"
    kptfile = (CORPUS / "Kptfile-4space").read_text()
    app = (CORPUS / "microservices-frontend.yaml").read_text()
    for side in ("local", "origin", "upstream"):
        (work / side).mkdir(parents=True)
        upstream = side == "upstream"
        (work / side / "Kptfile").write_text(kptfile.replace("app: wordpress\n", "app: wordpress\n" + NEW_FUNCTION)
                                             if upstream else kptfile)
        (work / side / "app.yaml").write_text(app.replace("envoy:v1.28.0", "envoy:v1.29.0") if upstream else app)
    return work


def test_pipeline_merge_through_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = _workdir(tmp_path)
    assert run.main([str(work), "--", "mode=pipeline-merge"]) == 0, capsys.readouterr().err
    before = (CORPUS / "Kptfile-4space").read_text()
    after = (work / "local" / "Kptfile").read_text()
    upstream = (work / "upstream" / "Kptfile").read_text()
    touched = ("doc0.pipeline.mutators[image=gcr.io/kpt-fn/kubeval:v0.3.0]",)
    assert untouched_lines(after, touched) == untouched_lines(before, touched)
    assert comments(after) == comments(upstream)  # the added function brings its comment
    assert after == upstream


def test_resource_merge_through_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = _workdir(tmp_path)
    assert run.main([str(work), "--", "mode=resource-merge"]) == 0, capsys.readouterr().err
    before = (CORPUS / "microservices-frontend.yaml").read_text()
    written = (work / "local" / "app.yaml").read_text()
    after, marked = without_kpt_markers(written)
    assert marked == 2
    check_edit(before, after, (f"{CONTAINERS}[name=proxy].image",))
    assert after == (work / "upstream" / "app.yaml").read_text()
