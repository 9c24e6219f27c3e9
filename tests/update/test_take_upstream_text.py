"""Taking upstream's resource keeps local's kpt bookkeeping annotation by adding lines (no YAML round trip)."""

from __future__ import annotations

import pytest
import yaml

from krm_merge.krm.splice import with_annotations

KEY = "internal.kpt.dev/upstream-identifier"


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: '1' # keep me\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /a\n  name: a\n  annotations:\n    other: o\ndata:\n  x: '1'\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a\n    annotations:\n        other: o\ndata: {x: '1'}\n",
])
def test_annotation_added_as_lines(text: str) -> None:
    out = with_annotations(text, {KEY: "|ConfigMap|default|a"})
    assert out is not None
    before, after = yaml.safe_load(text), yaml.safe_load(out)
    assert after["metadata"]["annotations"][KEY] == "|ConfigMap|default|a"
    del after["metadata"]["annotations"][KEY]
    if not after["metadata"]["annotations"]:
        del after["metadata"]["annotations"]
    assert after == before
    added = out.splitlines()
    for line in text.splitlines():  # every original line is still there, in order, with its bytes
        added = added[added.index(line) + 1:] if line in added else ["<missing>"]
        assert added != ["<missing>"], line
    assert len(out.splitlines()) - len(text.splitlines()) == (1 if "annotations:" in text else 2)
    assert "# keep me" in out or "keep me" not in text


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",  # flow style: the round trip handles it
    "apiVersion: v1\nkind: ConfigMap\n",
])
def test_unusual_layouts_fall_back(text: str) -> None:
    assert with_annotations(text, {KEY: "x"}) is None
