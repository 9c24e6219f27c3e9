"""Grouping items into local/origin/upstream by path prefix, and prefixes that match nothing (#14 item 8)."""

from __future__ import annotations

import pytest

from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.krm.results import KrmError
from krm_merge.modes import pipeline_merge, resource_merge

KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '1'\n"


def items(*folders: str) -> list[KubeObject]:
    out = []
    for folder in folders:
        out.append(KubeObject.from_text(KPTFILE, path=f"{folder}/Kptfile"))
        out.append(KubeObject.from_text(CM, path=f"{folder}/cm.yaml"))
    return out


MODES = {
    "resource-merge": (resource_merge.config_from_configmap, resource_merge.run),
    "pipeline-merge": (pipeline_merge.config_from_configmap, pipeline_merge.run),
}


def run(mode: str, folders: tuple[str, ...], **config: str) -> ResourceList:
    parse, run_mode = MODES[mode]
    rl = ResourceList()
    rl.items = items(*folders)
    run_mode(rl, parse(config))
    return rl


@pytest.mark.parametrize("mode", MODES)
def test_configured_prefix_matching_nothing_is_an_error_listing_the_folders(mode: str) -> None:
    with pytest.raises(KrmError) as err:
        run(mode, ("local", "origin", "upstream"), localPrefix="locl")
    assert "localPrefix 'locl' matches no item" in err.value.message
    assert "local/, origin/, upstream/" in err.value.message


@pytest.mark.parametrize("mode", MODES)
def test_default_prefix_missing_while_a_folder_is_unclaimed_is_an_error(mode: str) -> None:
    with pytest.raises(KrmError, match=r"localPrefix 'local' matches no item; the items' top folders are: loc/, origin/, upstream/"):
        run(mode, ("loc", "origin", "upstream"))
    rl = run(mode, ("loc", "origin", "upstream"), localPrefix="loc")  # named: fine
    assert any((o.path or "").startswith("loc/") for o in rl.items)


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_default_copy_is_not_an_error(mode: str) -> None:
    """No origin at all (a package added on both sides) is a legitimate empty copy."""
    rl = run(mode, ("local", "upstream"))
    assert not [r for r in rl.results if r.severity == "error"]


def test_runner_reports_the_typo_as_an_error_result() -> None:
    from krm_merge.runner import process

    rl = ResourceList()
    rl.items = items("local", "origin", "upstream")
    rl.function_config = KubeObject.from_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  mode: resource-merge\n  localPrefix: locl\n"
    )
    process(rl)
    (result,) = [r for r in rl.results if r.severity == "error"]
    assert "localPrefix 'locl' matches no item" in result.message
    assert not any((o.path or "").startswith("locl/") for o in rl.items)


def test_resource_deleted_upstream_goes_when_local_only_reformatted() -> None:
    """#11 item 4 at resource level: re-ordered keys, flow style and comments are not local changes."""
    rl = ResourceList()
    reformatted = "kind: ConfigMap\napiVersion: v1\n# mine\ndata: {a: '1'}\nmetadata: {name: cm}\n"
    rl.items = [
        KubeObject.from_text(KPTFILE, path="local/Kptfile"),
        KubeObject.from_text(reformatted, path="local/cm.yaml"),
        KubeObject.from_text(KPTFILE, path="origin/Kptfile"),
        KubeObject.from_text(CM, path="origin/cm.yaml"),
        KubeObject.from_text(KPTFILE, path="upstream/Kptfile"),
    ]
    resource_merge.run(rl, resource_merge.config_from_configmap({}))
    assert [o.path for o in rl.items if (o.path or "").startswith("local/")] == ["local/Kptfile"]
    assert not [r for r in rl.results if r.severity in ("error", "warning")]
