"""Minimal reproducers of bugs found by the reliability fuzzers in modules
owned by others.  Each is a strict xfail naming the owner module: when the
bug is fixed the test passes, strict xfail turns that into a failure, and the
marker (and the matching entry of ``harness.KNOWN_BUGS``) must be removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .harness import check_function, configmap, resource_list, run_command, typed

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"


def _with_path(text: str, path: str) -> str:
    return text + f"  annotations:\n    internal.config.kubernetes.io/path: {path}\n    config.kubernetes.io/path: {path}\n"


def test_typed_patches_not_a_list() -> None:
    check_function(resource_list([CM], typed("ReorderMerge", {"patches": 5})))


def test_new_multiline_string_with_control_character() -> None:
    patch = yaml.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
                       "data": {"a": "line\n\x08bell"}})
    out = check_function(resource_list([CM], configmap({"mode": "reorder-merge", "patch": patch})))
    assert out.items[0]["data"]["a"] == "line\n\x08bell"


def test_kpt_merge_comment_with_newline_in_name() -> None:
    item = _with_path('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "a\\nb"\n', "local/0.yaml")
    out = check_function(resource_list([item], configmap({"mode": "resource-merge"})))
    assert out.items[0]["metadata"]["name"] == "a\nb"


def test_kpt_merge_comment_with_backslash_in_name() -> None:
    item = _with_path('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "a\\\\"\n', "local/0.yaml")
    out = check_function(resource_list([item], configmap({"mode": "resource-merge"})))
    assert out.items[0]["metadata"]["name"] == "a\\"


def test_update_scalar_document(tmp_path: Path) -> None:
    from krm_merge.commands import update

    for side in ("local", "origin", "upstream"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n")
    (tmp_path / "upstream" / "c.yaml").write_text("a\nb\n")
    code, _, err = run_command(update.main, [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
                                             "--upstream", str(tmp_path / "upstream")])
    assert code == 1 and "c.yaml" in err


def test_a_kept_subpackage_that_lost_its_kptfile_locally_is_still_said(tmp_path: Path) -> None:
    """The fuzzer's find (StopIteration in update/subpackages.py): origin had a subpackage ``sub`` (a Kptfile in
    sub/c.yaml), upstream deleted it, local changed it and has no Kptfile left there.  Kept whole, as kpt keeps
    a locally modified subpackage; the warning that says so hung on the local Kptfile and was lost without one."""
    from krm_merge.commands import update

    for side in ("local", "origin", "upstream"):
        (tmp_path / side).mkdir()
    (tmp_path / "local" / "sub").mkdir()
    (tmp_path / "local" / "a.yaml").write_text("")
    (tmp_path / "local" / "sub" / "c.yaml").write_text("a: b\n")
    (tmp_path / "origin" / "sub").mkdir()
    (tmp_path / "origin" / "sub" / "c.yaml").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n")
    code, _, err = run_command(update.main, [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
                                             "--upstream", str(tmp_path / "upstream")])
    assert code == 0, err
    assert "warning: sub/c.yaml: subpackage sub deleted upstream but modified locally: kept" in err
    assert (tmp_path / "local" / "sub" / "c.yaml").read_bytes() == b"a: b\n"
    assert (tmp_path / "local" / "a.yaml").read_bytes() == b""


def test_untouched_tagged_siblings_keep_their_bytes() -> None:
    """Fixed by issue 33: the round-trip editor carries only the lines its edit changed (yamlio.carry_edits)."""
    item = CM + "data:\n  c: !!binary aGVsbG8=\n  f: !!timestamp 2001-01-01\n  g: !!float 1\n"
    patch = yaml.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"b": "2"}})
    out = check_function(resource_list([item], configmap({"mode": "reorder-merge", "patch": patch})))
    text = out.text
    for line in ("  c: !!binary aGVsbG8=\n", "  f: !!timestamp 2001-01-01\n", "  g: !!float 1\n"):
        assert "  " + line in text, line


def test_new_key_yes_is_quoted() -> None:
    patch = yaml.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"yes": "v"}})
    out = check_function(resource_list([CM + "data:\n  a: b\n"], configmap({"mode": "reorder-merge", "patch": patch})))
    assert out.items[0]["data"] == {"a": "b", "yes": "v"}


def test_new_key_with_nel_reads_back() -> None:
    patch = yaml.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"a\x85b": "v"}})
    out = check_function(resource_list([CM + "data:\n  a: b\n"], configmap({"mode": "reorder-merge", "patch": patch})))
    assert out.items[0]["data"] == {"a": "b", "a\x85b": "v"}


@pytest.mark.parametrize("data", ["  ~: x\n", "  &b : x\n  ~: y\n", "  2: x\n"])
def test_patch_with_null_key(data: str) -> None:
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n" + data
    check_function(resource_list([CM + "data:\n  a: b\n"], configmap({"mode": "reorder-merge", "patch": patch})))
