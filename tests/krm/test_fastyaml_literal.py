"""The fast editor rewrites a changed literal block only where it prints the round-trip editor's bytes (issue 33).

free5gc-cp's NRF ConfigMap (nephio catalog, v1 -> v2): upstream changed the
configuration file held in a ``|`` block and added the namespace, in a
resource kpt had only re-printed.  The fast editor declined every changed
block scalar, and upstream's changed lines could not be carried onto local's
text (kpt's ``upstream-identifier`` annotation sits where the namespace goes),
so the update imported ruamel.yaml for that one resource.  A literal block
written as the round-trip editor prints one (header ``|``/``|-``, its lines at
the key's column plus the text's mapping indent, empty lines empty) is now
rewritten by the fast editor; these tests compare its bytes with that
editor's, never its time.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm import fastyaml, rtedit, yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError

from .test_fastyaml import canon, ruamel_correct, ruamel_stable

NRF_V1 = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: nrf-configmap
  labels:
    app: free5gc
data:
  nrfcfg.yaml: |
    info:
      version: 1.0.1
{blank}
    configuration:
      sbi:
        registerIPv4: nrf-nnrf  # IP used to serve NFs
        tls:
          key: config/TLS/nrf.key
    logger:
      NRF:
        debugLevel: info
"""

# What upstream changed: the namespace, and inside the configuration file its version, a key, a new
# key and the logger (the blank-only line written empty now).
NRF_V2 = NRF_V1.replace("    app: free5gc\n", "    app: free5gc\n  namespace: free5gc-cp\n").replace(
    "1.0.1\n{blank}\n", "1.0.2\n\n").replace("config/TLS/nrf.key\n", "cert/nrf.key\n        oauth: true\n").replace(
    "      NRF:\n        debugLevel: info\n", "      enable: true\n      level: info\n")

# What `kpt pkg get` wrote: its annotation, and the blank line inside the block without its blanks (its
# `# kpt-merge` comment aside: a resource upstream renames loses it before the edit).
NRF_LOCAL = NRF_V1.replace("    app: free5gc\n", "    app: free5gc\n  annotations:\n"
                           "    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|nrf-configmap'\n").replace("{blank}", "")


def edited(text: str, new: Any, change: tuple[str, str] | None, path: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``text`` set to ``new`` by one path: ``fast`` must not load a round-trip tree, ``slow`` must not use the fast editor."""
    obj = KubeObject(text)
    with monkeypatch.context() as m:
        if path == "fast":
            m.setattr(yamlio, "load_rt", lambda *a, **k: pytest.fail("the round-trip editor was used"))
        else:
            m.setattr(fastyaml, "edit", lambda *a, **k: None)
        obj.set_data(new, change=change)
    assert canon(yamlio.load_data(obj.text)) == canon(new)
    return obj.text


def test_a_changed_block_and_another_field_of_a_kpt_printed_configmap_take_the_fast_editor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The NRF ConfigMap's shape: the block, the new namespace and the dropped identifier annotation (a renamed
    resource's: the package merge writes the new one) in one edit, printed as the round-trip editor prints it."""
    origin, upstream = NRF_V1.replace("{blank}", "    "), NRF_V2
    new = yamlio.load_data(upstream)
    # upstream's changed lines cannot be carried: local's annotation is where the namespace goes
    assert yamlio.carried_edit(NRF_LOCAL, origin, upstream, new) is None
    fast = edited(NRF_LOCAL, new, (origin, upstream), "fast", monkeypatch)
    assert fast == edited(NRF_LOCAL, new, (origin, upstream), "slow", monkeypatch)
    assert fast == upstream


@pytest.mark.parametrize("text, path, value, fast", [
    ("data:\n  cfg: |\n    a\n    b\n\n  other: x\n", ("data", "cfg"), "a\nc\n", True),  # the blank line after it stays
    ("data:\n  cfg: |\n    a\n    b\n  # foot\n  other: x\n", ("data", "cfg"), "a\nc\n", True),
    ("data:\n  cfg: |  # c\n    a\n    b\n  other: x\n", ("data", "cfg"), "a\nc\n", True),  # the header's comment stays
    ("data:\n  cfg: |  # c\n    a\n    b\n  other: x\n", ("data", "cfg"), "a\nc", False),  # ... unless the chomping changes
    ("data:\n  cfg: |-\n    a\n    b\n  other: x\n", ("data", "cfg"), "a\nc\n\n  d", True),
    ("data:\n  cfg: |\n    a\n    b\n", ("data", "cfg"), "a\n", True),
    ("l:\n  - name: x\n    cfg: |\n      a\n      b\n  - name: y\n", ("l", 0, "cfg"), "a\nc\n", True),
    ("a:\n    cfg: |\n        a\n        b\n    z: 1\n", ("a", "cfg"), "a\nc\n", True),  # a 4-space layout
    ("a:\n  cfg: |\n      a\n      b\n  z: 1\n", ("a", "cfg"), "a\nc\n", False),  # indented otherwise than ruamel prints it
    ("a:\n  cfg: |\n    a\n    \n    b\n  z: 1\n", ("a", "cfg"), "a\n\nc\n", False),  # a line of blanks: ruamel's is empty
    ("a:\n  cfg: |\n    a\n    b\n  z: 1\n", ("a", "cfg"), "a", False),  # no line break: not a literal block
    ("a:\n  cfg: |\n    a\n    b\n  z: 1\n", ("a", "cfg"), "a  \nb\n", False),  # blanks ending a line: double-quoted
    ("a:\n  cfg: |\n    a\n    b\n  z: 1\n", ("a", "cfg"), " a\nb\n", False),  # an indentation indicator
    ("a:\n  cfg: |\n    a\n    b\n  z: 1\n", ("a", "cfg"), "a\nb\n\n", False),  # keep chomping
    ("a:\n  cfg: >\n    a b\n  z: 1\n", ("a", "cfg"), "a\nc\n", False),  # folded
    ("l:\n- |\n  a\n  b\n", ("l", 0), "a\nc\n", False),  # a sequence element: the sequence layout indents it
    ("l:\n- cfg: |\n    a\n    b\n  z: 1\n", ("l", 0, "cfg"), "a\nc\n", True),  # the first key of an element
    ("cfg: |\n  a\n  b\nz: 1\n", ("cfg",), "a\nc\n", True),
    ("z:\n    y: 1\ncfg: |\n  a\n  b\n", ("cfg",), "a\nc\n", False),  # the text's layout indents it by 4
    ("d:\n  cfg: |\n    a\n    b\n  o: x\n", ("d", "cfg"), "a\n# c\n  - x\n---\n...\n", True),  # text, not YAML
])
def test_a_changed_literal_block_is_rewritten_only_as_the_round_trip_editor_prints_it(
        text: str, path: tuple[Any, ...], value: str, fast: bool) -> None:
    results = []
    for force in (False, True):
        obj = KubeObject(text)
        if force:
            _ = obj.rt  # a round-trip tree already built forces the ruamel path
        data = obj.copy_data()
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
        obj.set_data(data)
        results.append((obj.text, obj.has_tree))
    (fast_text, tree), (slow_text, _) = results
    assert tree is not fast
    assert fast_text == slow_text


LINES = ["text", "key: value", "  indented", "", "# not a comment", "é", "---", "x  y", "- item"]


@st.composite
def literal_documents(draw: Any) -> tuple[str, Any]:
    """A kyaml-printed mapping with a literal block among other fields, and new data for it."""
    lines = draw(st.lists(st.sampled_from(LINES[:1] + LINES), min_size=1, max_size=5))
    old = "\n".join(["first"] + lines) + draw(st.sampled_from(["\n", ""]))
    data = {"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"cfg": old, "z": "1"}}
    text = yamlio.dump_rt(rtedit.to_rt(data))  # its multi-line strings as literal blocks, as kpt prints them
    new = {"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"z": "1"}}
    if draw(st.booleans()):
        new["metadata"]["namespace"] = "ns"
    if draw(st.booleans()):
        del new["metadata"]["labels"]
    new_lines = draw(st.lists(st.sampled_from(LINES + ["trailing  ", " lead"]), min_size=0, max_size=5))
    first = draw(st.sampled_from(["first", "", " lead", "changed"]))
    new["data"]["cfg"] = "\n".join([first] + new_lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    new["data"] = {"cfg": new["data"]["cfg"], "z": "1"}
    return text, new


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(literal_documents())
def test_a_fast_literal_rewrite_gives_the_round_trip_editors_bytes(document: tuple[str, Any]) -> None:
    text, new = document
    if not ruamel_stable(text):
        return
    fast = KubeObject(text)
    fast.set_data(new)
    assert canon(yamlio.load_data(fast.text)) == canon(new)
    slow = KubeObject(text)
    _ = slow.rt
    try:
        slow.set_data(new)
    except KrmError:
        return
    if not fast.has_tree and ruamel_correct(slow):
        assert fast.text == slow.text


def test_upstreams_lines_inside_a_changed_block_still_go_first_where_they_fit() -> None:
    """Given the change as two texts, upstream's changed lines are carried as upstream wrote them (a line of
    blanks kept, as before this fast rewrite existed); the fast editor prints the block only where they do
    not fit, and without the change texts."""
    local = "data:\n  cfg: |\n    a\n    b\n  z: 1\n"
    upstream = "data:\n  cfg: |\n    a\n    \n    B\n  z: 1\n"
    new = yamlio.load_data(upstream)
    carried, printed = KubeObject(local), KubeObject(local)
    carried.set_data(new, change=(local, upstream))
    printed.set_data(new)
    assert (carried.text, printed.text) == (upstream, upstream.replace("    \n", "\n"))
    assert not carried.has_tree and not printed.has_tree
