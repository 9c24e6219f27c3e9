"""Items read from a directory know their file only through kpt's reader annotations (issue #22, point 1).

The reader gives each item exactly the annotations ``kpt fn source`` gives
it (checked against the real kpt), holds them beside the item's text, and
the writer never puts them into a file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from krm_merge.krm import package
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.package import plan_changes, read_package, seq_indent
from krm_merge.krm.resourcelist import read_resource_list, write_resource_list
from tests.conftest import require_binary

READER_KEYS = {
    "config.kubernetes.io/index", "config.kubernetes.io/path", "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/path", "internal.config.kubernetes.io/seqindent",
}

# Several files, multi-document files (a leading `---`, a comment-only document that is not an
# item, CRLF line ends), a subdirectory, a Kptfile, wide and compact sequences (one under a
# comment line, one only inside a block scalar), existing annotations, a top-level sequence.
FILES = {
    "Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
    "multi.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    team: x\ndata:\n  k: v\n"
        "---\n# only a comment\n"
        "---\napiVersion: v1\nkind: List\nmetadata:\n  name: w\nitems:\n  # first\n  - a\n"
        "---\napiVersion: v1\nkind: X\nmetadata:\n  name: z\nspec:\n  s: |\n    - x\n  l:\n  - q\n"
    ),
    "sub/lead.yaml": "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  replicas: 1\n",
    "sub/deeper/crlf.yaml": "apiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: s\r\nspec:\r\n  ports:\r\n    - port: 80\r\n",
    "patches/p.yaml": "- op: add\n  path: /x\n  value: 1\n",
}


def _make(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return root


def _key(data: dict) -> tuple[str, str]:
    ann = data["metadata"]["annotations"]
    return ann["internal.config.kubernetes.io/path"], ann["internal.config.kubernetes.io/index"]


def test_items_carry_exactly_the_annotations_kpt_fn_source_gives(tmp_path: Path) -> None:
    kpt = require_binary("kpt")
    pkg = _make(tmp_path / "pkg")
    out = subprocess.run([kpt, "fn", "source", str(pkg)], capture_output=True, text=True, check=True).stdout
    theirs = {_key(item): item for item in yaml.safe_load(out)["items"]}
    _, rl = read_package(pkg)
    ours = {_key(item.data): item for item in rl.items}
    assert set(ours) == set(theirs)
    assert len(ours) == 7
    for key, item in ours.items():
        want = theirs[key]
        assert item.annotations == want["metadata"]["annotations"], key
        assert item.data == want, key  # the whole item, as a mode or an SDK function sees it
        assert (item.path, str(item.index)) == key
    # Both seqindent values occur, so the comparison above covers the derivation.
    assert {i.annotations["internal.config.kubernetes.io/seqindent"] for i in rl.items} == {"wide", "compact"}


def test_the_text_stays_the_files_and_the_slots_are_gone(tmp_path: Path) -> None:
    pkg = _make(tmp_path / "pkg")
    _, rl = read_package(pkg)
    dep = next(item for item in rl.items if item.kind == "Deployment")
    assert not hasattr(dep, "file_path") and not hasattr(dep, "file_index")
    assert dep.text == FILES["sub/lead.yaml"].removeprefix("---\n")
    assert dep.reader_annotations["config.kubernetes.io/path"] == "sub/lead.yaml"
    assert dep.text_annotations == {}
    assert not dep.changed


def test_a_resource_list_printed_from_a_directory_carries_them_as_kpt_prints_them(tmp_path: Path) -> None:
    pkg = _make(tmp_path / "pkg", {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"})
    _, rl = read_package(pkg)
    text = write_resource_list(rl)
    assert (
        "  metadata:\n    name: a\n    annotations:\n"
        "      config.kubernetes.io/index: '0'\n      config.kubernetes.io/path: 'a.yaml'\n"
        "      internal.config.kubernetes.io/index: '0'\n      internal.config.kubernetes.io/path: 'a.yaml'\n"
        "      internal.config.kubernetes.io/seqindent: 'compact'\n  data:\n"
    ) in text
    again = read_resource_list(text).items[0]
    assert again.annotations == rl.items[0].annotations


def test_edits_through_data_never_write_the_annotations(tmp_path: Path) -> None:
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # keep\ndata:\n  k: v\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
    pkg = _make(tmp_path / "pkg", {"a.yaml": original})
    src, rl = read_package(pkg)
    first = rl.items[0]
    data = first.copy_data()  # holds the reader's annotations, as under kpt
    assert data["metadata"]["annotations"]["config.kubernetes.io/path"] == "a.yaml"
    data["data"]["k"] = "w"
    first.set_data(data)
    first.set_annotation("team", "x")
    edited = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # keep\n  annotations:\n    team: x\ndata:\n  k: w\n"
    assert first.text == edited
    assert first.annotations["team"] == "x" and first.path == "a.yaml"
    package.apply_writes(pkg, plan_changes(src, rl))
    assert (pkg / "a.yaml").read_text() == edited + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"


def test_an_unchanged_package_is_not_written(tmp_path: Path) -> None:
    pkg = _make(tmp_path / "pkg")
    src, rl = read_package(pkg)
    for item in rl.items:
        item.copy_data()
        item.set_data(item.copy_data())  # the same item, annotations included: no edit
    assert not any(item.changed for item in rl.items)
    assert list(plan_changes(src, rl)) == []


def test_moving_an_item_by_its_path_annotation_moves_it_between_files(tmp_path: Path) -> None:
    pkg = _make(tmp_path / "pkg", {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"})
    src, rl = read_package(pkg)
    rl.items[1].set_path("b.yaml", 0)  # as a function under kpt would move it
    assert rl.items[1].text == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
    assert (rl.items[1].path, rl.items[1].index) == ("b.yaml", 0)
    package.apply_writes(pkg, plan_changes(src, rl))
    assert (pkg / "a.yaml").read_text() == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    assert (pkg / "b.yaml").read_text() == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"


def test_place_sets_the_annotations_beside_the_text() -> None:
    obj = KubeObject("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    assert obj.path is None and obj.index == 0
    obj.place("x/y.yaml", 3)
    assert (obj.path, obj.index) == ("x/y.yaml", 3)
    assert obj.annotations["config.kubernetes.io/index"] == "3"
    assert obj.text == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" and not obj.changed


@pytest.mark.parametrize(("doc", "style"), [
    # kyaml's own DeriveSeqIndentStyle cases, and the edges of its rule.
    ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  - foo\n  - bar\n", "wide"),
    ("apiVersion: apps/v1\nkind: Deployment\nspec:\n- foo\n- bar\n", "compact"),
    ("spec:\n  - foo\nenv:\n- f\n", "wide"),
    ("spec:\n- foo\nenv:\n  - f\n", "compact"),
    ("a: 1\n", "compact"),
    ("items:\n  # a comment line between\n  - a\n", "wide"),
    ("s: |\n  - not a sequence\nl:\n- q\n", "compact"),
    ("- top\n- level\n", "compact"),
    ("a:\n    - four in\nb:\n  - two in\n", "wide"),
])
def test_seq_indent_follows_kyaml(doc: str, style: str) -> None:
    assert seq_indent(doc) == style


def test_an_sdk_function_sees_the_same_items_standalone_as_under_kpt(tmp_path: Path) -> None:
    """``run(fn)`` on a directory and ``kpt fn source | fn``: the function sees the same annotations."""
    from krm_merge import sdk

    kpt = require_binary("kpt")
    pkg = _make(tmp_path / "pkg")
    seen: list[list[dict[str, str]]] = []

    def fn(rl: sdk.ResourceList) -> None:
        seen.append(sorted((dict(item.annotations) for item in rl.items), key=repr))
        for item in rl.items:
            if item.kind == "ConfigMap":
                item.set_label("seen", "yes")

    source = subprocess.run([kpt, "fn", "source", str(pkg)], capture_output=True, check=True).stdout
    sdk.run_text(fn, source)
    with pytest.raises(SystemExit) as done:
        sdk.run(fn, [str(pkg)])
    assert done.value.code == 0
    assert seen[0] == seen[1] and len(seen[1]) == 7
    # Only the edit (a new metadata key goes after the last one); no reader annotation in any file.
    assert (pkg / "multi.yaml").read_text() == FILES["multi.yaml"].replace(
        "    team: x\n", "    team: x\n  labels:\n    seen: \"yes\"\n", 1)
    assert "config.kubernetes.io" not in "".join(p.read_text() for p in pkg.rglob("*.yaml"))


def test_a_path_annotation_written_in_a_file_is_the_readers_as_kpts(tmp_path: Path) -> None:
    """kpt fn source overwrites a path annotation a file holds with the file's own path; so do we."""
    kpt = require_binary("kpt")
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
            "    config.kubernetes.io/path: '../escaped.yaml'\n    internal.config.kubernetes.io/path: '../escaped.yaml'\n")
    pkg = _make(tmp_path / "pkg", {"a.yaml": text})
    out = subprocess.run([kpt, "fn", "source", str(pkg)], capture_output=True, text=True, check=True).stdout
    theirs = yaml.safe_load(out)["items"][0]["metadata"]["annotations"]
    _, rl = read_package(pkg)
    assert rl.items[0].annotations == theirs and rl.items[0].path == "a.yaml"
