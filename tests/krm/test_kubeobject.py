"""KubeObject: the cheap header scan, and edits that keep comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.krm.kubeobject import KubeObject, scan_header
from krm_merge.krm.results import KrmError

from .helpers import corpus_documents

DOCS = corpus_documents()


@pytest.mark.parametrize("name,doc", DOCS, ids=[n for n, _ in DOCS])
def test_header_scan_agrees_with_full_parse(name: str, doc: str) -> None:
    obj = KubeObject(doc)
    scanned = scan_header(doc)
    full = obj._header_from_data()
    if scanned is not None:
        assert scanned == full
    assert obj.header == full


def test_header_scan_declines_what_it_cannot_read() -> None:
    assert scan_header("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n") is None
    assert scan_header("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &a x\n") is None
    assert scan_header("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    a: |\n      x\n") is None
    obj = KubeObject("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    a: |\n      x\n  name: n\n")
    assert obj.annotations == {"a": "x\n"} and obj.name == "n"


def test_header_scan_reads_past_a_compact_top_level_sequence() -> None:
    """kyaml prints a ClusterRole's ``rules`` compact (``- `` at column 0): no full parse for its header."""
    doc = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nrules:\n- apiGroups:\n  - ''\n  verbs:\n  - get\n"
           "-\n  resources: [a]\nmetadata: # kpt-merge: /r\n  name: r\n  labels:\n    a: b\n")
    scanned = scan_header(doc)
    assert scanned is not None and scanned == KubeObject(doc)._header_from_data()
    assert scan_header("apiVersion: v1\nkind: ConfigMap\n---\nmetadata:\n  name: x\n") is None


@pytest.mark.parametrize("blank", ["  ", "    ", " "])
def test_header_scan_reads_past_a_line_of_spaces_in_metadata(blank: str) -> None:
    """A field removed by hand can leave its indentation behind (nephio's CRDs at catalog v4): still blank, no full parse."""
    doc = (f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations:\n"
           f"    controller-gen.kubebuilder.io/version: v0.9.2\n{blank}\n  name: networks.config.nephio.org\n"
           f"  labels:\n    a: b\n{blank}\n    c: d\nspec:\n  group: config.nephio.org\n")
    scanned = scan_header(doc)
    assert scanned is not None and scanned == KubeObject(doc)._header_from_data()
    assert scanned.name == "networks.config.nephio.org" and scanned.labels == {"a": "b", "c": "d"}


DEPLOY = """\
# head comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # name comment
spec:
  replicas: 1 # one
  template:
    spec:
      containers:
      - name: a # first
        image: a:1
      - # about b
        name: b
        image: 'b:1'
"""


def test_set_keeps_comments_and_quote_style() -> None:
    obj = KubeObject(DEPLOY)
    obj.set("spec.template.spec.containers[1].image", "b:2")
    obj.set("spec.replicas", 2)
    text = obj.text
    assert "image: 'b:2'" in text
    assert "replicas: 2 # one" in text
    assert "# head comment" in text and "# name comment" in text and "- # about b" in text
    assert obj.changed


def test_moved_list_elements_keep_their_comments() -> None:
    obj = KubeObject(DEPLOY)
    data = obj.copy_data()
    containers = data["spec"]["template"]["spec"]["containers"]
    containers.reverse()
    containers[0]["image"] = "b:3"
    obj.set_data(data)
    text = obj.text
    assert text.index("name: b") < text.index("name: a # first")
    assert "- # about b\n        name: b\n        image: 'b:3'" in text


def test_new_values_use_kyaml_quoting() -> None:
    obj = KubeObject(DEPLOY)
    obj.set("metadata.labels", {"enabled": "yes", "n": "0123", "plain": "web", "multi": "a\nb"})
    data = KubeObject(obj.text).data
    assert data["metadata"]["labels"] == {"enabled": "yes", "n": "0123", "plain": "web", "multi": "a\nb"}
    # `n` is a bool to a YAML 1.1 reader, as a key too: quoted like a value would be
    assert 'enabled: "yes"' in obj.text and '"n": "0123"' in obj.text and "plain: web" in obj.text


def test_delete_and_unchanged_set_data() -> None:
    obj = KubeObject(DEPLOY)
    obj.set_data(obj.copy_data())
    assert not obj.changed and obj.text == DEPLOY
    assert obj.delete("spec.replicas")
    assert "replicas" not in obj.text and "# head comment" in obj.text
    assert not obj.delete("spec.nothing")


def test_untouched_yaml11_values_are_not_retyped() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: yes\n  b: 0123\n  c: x\n"
    obj = KubeObject(text)
    obj.set("data.c", "z")
    assert obj.text == text.replace("c: x", "c: z")


def test_set_on_missing_list_element_names_the_field() -> None:
    obj = KubeObject(DEPLOY)
    with pytest.raises(KrmError) as err:
        obj.set("spec.template.spec.containers[5].image", "x")
    assert err.value.field == "spec.template.spec.containers[5].image"


def test_set_path_writes_both_annotations() -> None:
    obj = KubeObject.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}, path="a/b.yaml", index=2)
    assert obj.path == "a/b.yaml" and obj.index == 2
    assert obj.annotations["config.kubernetes.io/path"] == "a/b.yaml"


def test_wide_sequences_stay_wide_when_the_item_changes() -> None:
    from .helpers import CORPUS

    text = (CORPUS / "service-wide.yaml").read_text()
    obj = KubeObject(text)
    # the ruamel path (the fast path may or may not take this edit; both must keep the style)
    data = obj.copy_data()
    data["spec"]["ports"][1]["port"] = 8443
    obj.set_data(data)
    assert obj.text == text.replace("port: 443", "port: 8443")
    rt_obj = KubeObject(text)
    rt_obj.rt["spec"]["ports"][0]["port"] = 81
    rt_obj.commit_rt()
    assert rt_obj.text == text.replace("port: 80\n", "port: 81\n")


def test_ruamel_path_never_writes_what_does_not_read_back() -> None:
    """Moving a `- # comment` element first used to print two keys on one line."""
    text = (
        "apiVersion: v1\nkind: X\nmetadata:\n  name: x\nspec:\n  containers:\n  # before first\n"
        "  - name: nginx\n    image: n\n  - # sidecar head\n    name: sidecar\n    image: busybox\n"
        "  - name: third\n    weird: {a: 1}\n"
    )
    obj = KubeObject(text)
    _ = obj.rt  # take the ruamel path
    data = obj.copy_data()
    containers = data["spec"]["containers"]
    containers[0], containers[1] = containers[1], containers[0]
    obj.set_data(data)
    from krm_merge.krm import yamlio

    assert yamlio.load_data(obj.text)["spec"]["containers"] == containers
    assert "# sidecar head" in obj.text and "# before first" in obj.text


def test_ruamel_path_keeps_timestamp_like_strings() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\ndata:\n  at: 2001-12-14t21:59:43.10-05:00\n  x: a\n"
    obj = KubeObject(text)
    _ = obj.rt
    obj.set("data.x", "b")
    assert obj.text == text.replace("x: a", "x: b")


def test_header_scan_reads_past_metadata_lists() -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  finalizers:\n  - a\n  ownerReferences:\n"
            "  - apiVersion: v1\n    kind: X\n  - apiVersion: v2\n    kind: Y\n  labels:\n    a: b\n")
    scanned = scan_header(text)
    assert scanned is not None and scanned == KubeObject(text)._header_from_data()


# --- the header scan reads any indentation (issue 14, item 4) ------------------------------

def _indented(width: int) -> str:
    p = " " * width
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n{p}name: web\n{p}namespace: prod\n{p}labels:\n"
            f"{p}{p}app: web\n{p}annotations:\n{p}{p}note: x\n{p}finalizers:\n{p}- a\nspec:\n{p}replicas: 1\n")


@pytest.mark.parametrize("width", [1, 2, 3, 4, 8])
def test_header_scan_reads_any_indentation(width: int) -> None:
    from krm_merge.krm.kubeobject import scan_header

    header = scan_header(_indented(width))
    assert header is not None
    assert (header.name, header.namespace, header.labels, header.annotations) == (
        "web", "prod", {"app": "web"}, {"note": "x"})


@pytest.mark.parametrize("width", [1, 4])
def test_run_finds_the_patch_target_in_a_file_of_any_indentation(width: int, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from krm_merge.commands import run

    (tmp_path / "web.yaml").write_text(_indented(width) + "---\n" + _indented(width).replace("web", "api"))
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\nspec:\n  replicas: 3\n"
    code = run.main([str(tmp_path), "--", "mode=reorder-merge", f"patch={patch}"])
    assert code == 0, capsys.readouterr().err
    assert " " * width + "replicas: 3\n" in (tmp_path / "web.yaml").read_text()


# --- the round-trip path keeps trailing whitespace of untouched lines (issue 14, item 2) ---------

def test_round_trip_edit_keeps_trailing_whitespace_of_untouched_lines() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web   \ndata:\n  a: &x '1'  \n  b: *x\n"
    obj = KubeObject(text)  # the anchor sends the edit through ruamel.yaml
    data = obj.copy_data()
    data["data"]["c"] = "new"
    obj.set_data(data)
    assert obj.has_tree
    assert obj.text == text + "  c: new\n"


def test_trailing_spaces_that_are_data_follow_the_new_value() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: &x '1'\n  b: *x\n  s: |\n    keep  \n"
    obj = KubeObject(text)
    data = obj.copy_data()
    data["data"]["s"] = "keep\n"
    obj.set_data(data)
    assert obj.data["data"]["s"] == "keep\n"
    assert "keep  " not in obj.text


# --- shared anchors: what kubectl's result means (issue 14, item 6) ------------------------------

SHARED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels
    app: web
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
"""


def _edit_labels(where: list[tuple[str, ...]]) -> KubeObject:
    obj = KubeObject(SHARED)
    data = obj.copy_data()
    for path in where:
        node = data
        for key in path:
            node = node[key]
        node["tier"] = "front"
    obj.set_data(data)
    return obj


LABELS = ("metadata", "labels")
SELECTOR = ("spec", "selector", "matchLabels")
TEMPLATE = ("spec", "template", "metadata", "labels")


@pytest.mark.parametrize("where", [[LABELS], [SELECTOR], [TEMPLATE], [LABELS, TEMPLATE]])
def test_editing_one_site_of_a_shared_anchor_keeps_the_others(where: list[tuple[str, ...]]) -> None:
    obj = _edit_labels(where)
    for path in (LABELS, SELECTOR, TEMPLATE):
        node = obj.data
        for key in path:
            node = node[key]
        assert node == ({"app": "web", "tier": "front"} if path in where else {"app": "web"}), path
    if len(where) == 1:  # the two untouched sites still share one node: anchor and alias
        assert "&labels" in obj.text and "*labels" in obj.text


def test_editing_every_site_alike_keeps_the_anchor() -> None:
    obj = _edit_labels([LABELS, SELECTOR, TEMPLATE])
    assert obj.text == SHARED.replace("    app: web\n", "    app: web\n    tier: front\n")


# --- closing region comments stay at the end (issue 14, item 2) -----------------------------------

REGION = """# [START gke_web]
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
# [END gke_web]
"""


@pytest.mark.parametrize("slow", [False, True])
def test_a_key_added_at_the_end_goes_above_a_closing_region_comment(slow: bool) -> None:
    obj = KubeObject(REGION)
    if slow:
        _ = obj.rt  # force the ruamel.yaml path
    data = obj.copy_data()
    data["spec"]["replicas"] = 3
    obj.set_data(data)
    assert obj.text == REGION.replace("# [END", "  replicas: 3\n# [END")
    assert obj.has_tree == slow


def test_closing_comments_survive_the_deletion_of_the_last_entry() -> None:
    obj = KubeObject(REGION)
    data = obj.copy_data()
    del data["spec"]
    obj.set_data(data)
    assert obj.text.endswith("  name: web\n# [END gke_web]\n")


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Pod\nmetadata:\n    name: p\nspec:\n    containers:\n        -   name: a\n"
    "            image: a:1 # pinned\n            ports:\n                -   containerPort: 80\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n name: p\nspec:\n containers:\n - name: a\n   image: a:1 # pinned\n",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: a:1 # pinned\n",
])
def test_the_round_trip_printer_keeps_the_files_indentation(text: str) -> None:
    obj = KubeObject(text)
    _ = obj.rt  # a round-trip tree already built: the edit goes through ruamel
    data = obj.copy_data()
    data["spec"]["containers"][0]["image"] = "a:2"
    obj.set_data(data)
    assert obj.has_tree
    assert obj.text == text.replace("a:1", "a:2")
