"""The fast reader reads anchored block collections and their aliases (issue #14 item 6).

Edits beside anchors stay on the fast path (its comment handling); edits of an
anchored or aliased value, and moves or deletions of an anchor's line, are left
to the round-trip path, which edits shared collections as kubectl's expanded
result means (tests/krm/test_kubeobject.py).
"""

from __future__ import annotations

import pytest

from krm_merge.krm import fastyaml, yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError

SHARED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels
    app: web # the app
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      containers:
      - name: web
        args: &args
        - --port=80
      - name: sidecar
        args: *args
"""


def test_the_fast_reader_shares_aliased_values_like_libyaml() -> None:
    parsed = fastyaml.parse(SHARED)
    assert parsed is not None and parsed.aliases
    assert parsed.data == yamlio.load_data(SHARED)
    labels = parsed.data["metadata"]["labels"]
    assert parsed.data["spec"]["selector"]["matchLabels"] is labels


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n",  # anchored scalar
    "a:\n  b: *x\n",  # unknown anchor
    "a: &x\n  k: v\nb: &y\n  - *x\n  - *x\n",  # alias inside an anchored collection
    "a: &x\n  k: *x\n",  # recursive
    "a: &x: 1\n",  # libyaml and ruamel read this differently
])
def test_the_fast_reader_declines_other_anchors(text: str) -> None:
    assert fastyaml.parse(text) is None


def test_an_edit_beside_anchors_stays_on_the_fast_path() -> None:
    obj = KubeObject(SHARED)
    data = obj.copy_data()
    data["spec"]["replicas"] = 3
    obj.set_data(data)
    assert not obj.has_tree  # no round-trip tree was built
    assert obj.text.replace("  replicas: 3\n", "") == SHARED


def test_an_edit_of_an_anchored_value_is_left_to_the_round_trip() -> None:
    obj = KubeObject(SHARED)
    data = obj.copy_data()
    data["metadata"]["labels"]["tier"] = "front"
    obj.set_data(data)
    assert obj.has_tree
    after = yamlio.load_data(obj.text)
    assert after["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert after["spec"]["selector"]["matchLabels"] == {"app": "web"}


def test_moving_an_anchor_after_its_alias_is_left_to_the_round_trip() -> None:
    obj = KubeObject(SHARED)
    data = obj.copy_data()
    data["spec"]["template"]["spec"]["containers"].reverse()
    obj.set_data(data)
    assert obj.has_tree
    assert yamlio.load_data(obj.text) == data


def test_aliases_expanding_too_far_are_left_to_the_bounded_loader() -> None:
    keys = "".join(f"  k{n}: v\n" for n in range(1000))
    aliases = "".join(f"  a{n}: *big\n" for n in range(1001))
    text = f"big: &big\n{keys}uses:\n{aliases}"
    assert fastyaml.parse(text) is None  # 1,001 aliases of a 2,001-node map: over the fast bound
    with pytest.raises(KrmError, match="alias"):
        _ = KubeObject(text).data
    small = f"big: &big\n{keys}uses:\n" + "".join(f"  a{n}: *big\n" for n in range(10))
    assert fastyaml.parse(small) is not None


def test_the_stream_reader_leaves_aliases_to_the_loader() -> None:
    # Same data either way; the loader's bounds apply to every document read as a stream.
    assert yamlio.load_all_data(SHARED) == [yamlio.load_data(SHARED)]
