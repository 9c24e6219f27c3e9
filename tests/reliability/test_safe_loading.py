"""Safe loading: no YAML tag ever constructs a Python object or runs code.

Each hostile tag is fed through every reader (plain data, round trip, the
ResourceList readers, a patch, a Kptfile, a promotion file, a package on
disk).  A sentinel file proves nothing ran; values read back are plain data
(unknown tags are kept as data, the output keeps the tag text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError

from .harness import check_function, configmap, resource_list, run_command

HOSTILE_TAGS = [
    "!!python/object/apply:os.system [{cmd}]",
    "!!python/object/apply:subprocess.check_output [[sh, -c, {cmd}]]",
    "!!python/object/new:os.system [{cmd}]",
    "!!python/object:os.system {{}}",
    "!!python/name:os.system",
    "!!python/module:os",
    "!<tag:yaml.org,2002:python/object/apply:os.system> [{cmd}]",
    "!!python/tuple [1, 2]",
    "!Ref {cmd}",
    "!!binary aGVsbG8=",
    "!!set {{a, b}}",
]
PLAIN = (str, int, float, bool, type(None), list, dict, bytes, set)  # !!binary, !!set: safe builtins


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return type(value) in PLAIN


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


def _doc(tag: str, sentinel: Path) -> str:
    value = tag.format(cmd=f"'touch {sentinel}'")
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  evil: {value}\n"


@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_plain_data_loader(tag: str, sentinel: Path) -> None:
    text = _doc(tag, sentinel)
    data = yamlio.load_data(text)
    assert _plain(data), data
    assert _plain(yamlio.load_all_data(text + "---\n" + text))
    assert _plain(KubeObject(text).data)
    assert not sentinel.exists()


@pytest.mark.parametrize("tag", HOSTILE_TAGS)
def test_round_trip_loader_keeps_tag_as_data(tag: str, sentinel: Path) -> None:
    text = _doc(tag, sentinel)
    try:
        rt = yamlio.load_rt(text)
    except KrmError:
        return  # refusing is allowed; running is not
    assert not sentinel.exists()
    assert "!" in yamlio.dump_rt(rt)
    assert not sentinel.exists()


@pytest.mark.parametrize("tag", HOSTILE_TAGS)
@pytest.mark.parametrize("place", ["targeted item", "other item", "patch", "functionConfig", "json list"])
def test_function_never_runs_tags(tag: str, place: str, sentinel: Path) -> None:
    doc = _doc(tag, sentinel)
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  added: x\n"
    if place == "targeted item":
        text = resource_list([doc], configmap({"mode": "reorder-merge", "patch": patch}))
    elif place == "other item":
        text = resource_list([doc.replace("name: web", "name: other"), doc.split("data:")[0]],
                             configmap({"mode": "reorder-merge", "patch": patch}))
    elif place == "patch":
        text = resource_list([doc.split("data:")[0]], configmap({"mode": "reorder-merge", "patch": doc}))
    elif place == "functionConfig":
        text = resource_list([doc], "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: " + tag.format(
            cmd=f"'touch {sentinel}'") + "\n")
    else:
        text = ('{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"a": '
                + tag.format(cmd=f"'touch {sentinel}'") + "}]}\n")
    out = check_function(text)
    assert not sentinel.exists()
    if place in ("targeted item", "other item") and out.code == 0:
        assert "evil: !" in out.text  # the tag is kept as written


def test_pipeline_merge_kptfile_with_python_tag(sentinel: Path) -> None:
    kptfile = ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n"
               f"  - image: !!python/object/apply:os.system ['touch {sentinel}']\n")
    check_function(resource_list([kptfile], configmap({"mode": "pipeline-merge", "origin": kptfile,
                                                        "upstream": kptfile})))
    assert not sentinel.exists()


def test_commands_on_a_package_with_python_tags(tmp_path: Path, sentinel: Path) -> None:
    from krm_merge.commands import promote, run

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "cm.yaml").write_text(
        _doc(HOSTILE_TAGS[0], sentinel)
        + '  version: "1" # {"$promotion": "default:podinfo:prod"}\n')
    (pkg / "pipeline.yaml").write_text(yaml.safe_dump({
        "apiVersion": "pipelines.weave.works/v1alpha1", "kind": "Pipeline",
        "metadata": {"name": "podinfo", "namespace": "default"},
        "spec": {"environments": [{"name": "dev"}, {"name": "prod"}],
                 "appRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "web"}}}))
    run_command(run.main, [str(pkg), "--", "mode=promote", "pipeline=default/podinfo", "environment=prod",
                           "value=2"])
    run_command(promote.main, [str(pkg), "--pipeline", "default/podinfo", "--environment", "prod", "--value", "3"])
    assert not sentinel.exists()
    text = (pkg / "cm.yaml").read_text()
    assert "!!python/object/apply:os.system" in text
