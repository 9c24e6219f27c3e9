"""The diff a reviewer reads (issue 33): an update changes what upstream changed, in the package's own text.

Real packages (excerpts of the nephio catalog and kpt-samples at two
published versions, ``data/real/``, licence in its NOTICE.md) are fetched at
``v1`` with the real ``kpt pkg get`` (kpt re-prints every file: one-line
descriptions, its quoting, its markers) and updated to ``v2`` by kpt and by
``krm-merge update``.  The lines our update changes, kpt's bookkeeping aside
(``upstreamLock``, the identity markers of a renamed resource), are exactly
the lines upstream changed between the two versions; the result equals
kpt's as data.  Without the fix, a resource upstream changed was written as
upstream's whole text (nephio-operator's CRD: every wrapped description
re-wrapped, a line of two spaces).

The property tests check the text path against the data merge: whatever
the layout of local's text, the update's text reads as the data the 3-way
merge (``krm_merge.merge3`` on plain prints of the three versions) gives.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge import merge3
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError
from krm_merge.merge3.nodes import to_plain_data
from krm_merge.update import markers, planner
from krm_merge.update.resources import upstream_change
from tests.conftest import require_binary
from tests.helpers import without_nulls

from .world import World, read_tree

REAL = Path(__file__).parent / "data" / "real"
BOOKKEEPING = ("kpt-merge:", "internal.kpt.dev/upstream-identifier")


def version(name: str, tag: str) -> dict[str, str]:
    root = REAL / name / tag
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def line_changes(before: dict[str, str], after: dict[str, str], *, blank: bool = False) -> Counter[tuple[str, str]]:
    """The lines a line diff removes (``-``) and adds (``+``), file by file, stripped of indentation;
    whitespace-only lines left out unless ``blank`` (upstream's generator leaves a line of spaces)."""
    out: Counter[tuple[str, str]] = Counter()
    for rel in sorted(set(before) | set(after)):
        for line in difflib.ndiff((before.get(rel) or "").splitlines(), (after.get(rel) or "").splitlines()):
            if line[:2] in ("- ", "+ ") and (blank or line[2:].strip()):
                out[(line[0], line[2:].strip())] += 1
    return out


def files_of(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def without_bookkeeping(changes: Counter[tuple[str, str]]) -> Counter[tuple[str, str]]:
    return Counter({k: n for k, n in changes.items() if not any(mark in k[1] for mark in BOOKKEEPING)})


def updated_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                  edit: Callable[[Path], None] | None = None) -> tuple[World, dict[str, str]]:
    """The package fetched at v1 (``edit`` changes the fetched copy), updated to v2 by both tools; the files before."""
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    v1, v2 = version(name, "v1"), version(name, "v2")
    world.commit(v1, tag="v1")
    world.commit({**v2, **{rel: None for rel in v1 if rel not in v2}}, tag="v2")
    world.get("v1")
    if edit is not None:
        edit(world.kpt_pkg)
        edit(world.our_pkg)
    before = files_of(world.our_pkg)
    assert world.both("v2") == (0, 0)
    return world, before


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["nephio-operator", "gitea", "cert-manager-basic"])
def test_an_update_changes_exactly_the_lines_upstream_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              name: str) -> None:
    world, before = updated_world(tmp_path, monkeypatch, name)
    ours = files_of(world.our_pkg)
    upstream = line_changes(version(name, "v1"), version(name, "v2"))
    kptfile = line_changes({"Kptfile": before["Kptfile"]}, {"Kptfile": ours["Kptfile"]})
    assert {line.split(":")[0] for _, line in kptfile} <= {"ref", "commit"}  # the lock, as kpt records it
    changes = line_changes({k: v for k, v in before.items() if k != "Kptfile"},
                           {k: v for k, v in ours.items() if k != "Kptfile"})
    assert without_bookkeeping(changes) == upstream
    ours_all, theirs = line_changes(before, ours, blank=True), line_changes(before, files_of(world.kpt_pkg), blank=True)
    assert sum(ours_all.values()) <= sum(theirs.values())  # the review diff is never longer than kpt's
    assert without_nulls(read_tree(world.our_pkg)) == without_nulls(read_tree(world.kpt_pkg))


@pytest.mark.e2e
def test_local_comments_quoting_and_wrapping_survive_upstreams_change(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A resource changed on both sides: local's comment, quoting and wrapped string stay; upstream's change arrives."""
    rel = "app/controller/deployment-token-controller.yaml"
    edited: list[str] = []

    def edit(pkg: Path) -> None:
        text = (pkg / rel).read_text()
        assert "  replicas: 1\n" in text and "- --leader-elect\n" in text
        text = text.replace("  replicas: 1\n", "  replicas: 1 # mine: one is enough\n").replace(
            "- --leader-elect\n", "- '--leader-elect'\n").replace(
            "  namespace: nephio-system\n", "  namespace: nephio-system\n  labels:\n    note: a note wrapped\n"
            "      over two lines\n", 1)
        (pkg / rel).write_text(text)
        edited.append(text)

    world, _ = updated_world(tmp_path, monkeypatch, "nephio-operator", edit)
    ours = (world.our_pkg / rel).read_text()
    expected = [line for line in edited[0].replace("nephio-operator:v3.0.0", "nephio-operator:v4.0.0").splitlines()
                if line.strip() != "creationTimestamp: null"]  # upstream's change: the image, the nulls gone
    assert ours.splitlines() == expected
    assert yaml.safe_load(ours)["metadata"]["labels"]["note"] == "a note wrapped over two lines"


@pytest.mark.e2e
def test_an_explicit_null_nobody_changed_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gitea's memcached Deployment holds ``annotations:`` and affinities with empty (null) values; upstream
    changes its image only: the nulls stay (kpt drops them), on the merged path too (a local edit)."""
    world, before = updated_world(tmp_path, monkeypatch, "gitea", None)
    ours = (world.our_pkg / "deployment-memcached.yaml").read_text()
    assert [line for line in ours.splitlines() if line.strip() in ("annotations:", "podAffinity:", "nodeAffinity:")]
    assert line_changes({"d": before["deployment-memcached.yaml"]}, {"d": ours}) == Counter({
        ("-", "image: docker.io/bitnami/memcached:1.6.19-debian-11-r7"): 1,
        ("+", "image: docker.io/bitnamilegacy/memcached:1.6.19-debian-11-r7"): 1})


def test_a_changed_line_inside_a_literal_block_is_that_line() -> None:
    """The fast editor does not edit block scalars: upstream's changed lines are carried (was: upstream's text)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for tag, target in (("v1", "origin"), ("v2", "upstream"), ("v1", "local")):
            shutil.copytree(REAL / "gitea" / tag, root / target)
        local = root / "local" / "secret-gitea-init.yaml"
        fetched = KubeObject(local.read_text().replace("  name: gitea-init\n", '  name: "gitea-init"\n'))
        markers.add_identity_markers(fetched)  # kpt's markers, as a fetched copy has them; and local's quoting
        old = fetched.text
        local.write_text(old)
        plan = update_plan_of(root)
        new = {w.path: (w.data or b"").decode() for w in plan.writes}["secret-gitea-init.yaml"]
        assert line_changes({"s": old}, {"s": new}, blank=True) == Counter({("+", ""): 1})  # the blank line upstream added
        assert yaml.safe_load(new)["stringData"] == yaml.safe_load(
            (root / "upstream" / "secret-gitea-init.yaml").read_text())["stringData"]


@pytest.mark.parametrize("local, origin, upstream, expected", [
    # a key upstream added goes after its upstream predecessor; local's own keys stay
    ({"a": 1, "b": 2, "mine": 0}, {"a": 1, "b": 2}, {"a": 1, "new": 5, "b": 3},
     {"a": 1, "new": 5, "b": 3, "mine": 0}),
    # a null nobody changed stays; a null upstream writes deletes; a null inside new content goes
    ({"n": None, "x": 1, "y": 1}, {"n": None, "x": 1, "y": 1}, {"n": None, "x": None, "y": 2, "z": {"k": None}},
     {"n": None, "y": 2, "z": {}}),
    # list elements: equal ones stay local's objects, one changed in place is edited field by field
    ({"l": [{"name": "a", "v": 1}, {"name": "b"}]}, {"l": [{"name": "a", "v": 1}, {"name": "b"}]},
     {"l": [{"name": "b"}, {"name": "a", "v": 2}]}, {"l": [{"name": "b"}, {"name": "a", "v": 2}]}),
])
def test_upstream_change_as_data(local: Any, origin: Any, upstream: Any, expected: Any) -> None:
    got = upstream_change(local, origin, upstream)
    assert got == expected and list(got) == list(expected)
    if "l" in local:
        assert got["l"][0] is local["l"][1]  # the same element, so the editor keeps its text


def update_plan_of(root: Path) -> Any:
    return planner.plan_update(root / "local", root / "origin", root / "upstream")


# --- property: the text path gives the data merge's answer ---------------------------------------

KEYS = ["a", "b", "c", "d", "e", "f"]
SCALARS = st.one_of(
    st.sampled_from(["x", "y z", "1", "true", "#not a comment", "a: b", "", "0x10", "null", "~", "- item"]),
    st.integers(-3, 300), st.booleans(),
)
LEAF_MAP = st.dictionaries(st.sampled_from(KEYS), SCALARS, min_size=1, max_size=4)
ELEMENTS = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["n1", "n2", "n3", "n4"])},
                                          optional={"v": SCALARS, "w": SCALARS}),
                    min_size=1, max_size=4, unique_by=lambda e: e["name"])
VALUES = st.one_of(SCALARS, LEAF_MAP, st.lists(SCALARS, min_size=1, max_size=4), ELEMENTS)


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    spec = draw(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=5))
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


@st.composite
def changed(draw: Any, doc: dict[str, Any], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``doc`` with a few of its spec's fields changed, deleted or added (never those in ``keep``)."""
    out = yaml.safe_load(yaml.safe_dump(doc))
    spec = out["spec"]
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(KEYS))
        if key in keep:
            continue
        action = draw(st.sampled_from(["set", "delete", "edit"]))
        if action == "delete" and len(spec) > 1:
            spec.pop(key, None)
        elif action == "edit" and isinstance(spec.get(key), dict):
            spec[key][draw(st.sampled_from(KEYS))] = draw(SCALARS)
        elif action == "edit" and isinstance(spec.get(key), list) and spec[key] and isinstance(spec[key][0], dict):
            spec[key][draw(st.integers(0, len(spec[key]) - 1))]["v"] = draw(SCALARS)
        else:
            spec[key] = draw(VALUES)
    return out


STYLES = {
    # how the local copy's text may be laid out: kpt's re-print (wide sequences), a plain print, 4-space maps
    "wide": lambda data: yamlio.dump_rt(yamlio.load_rt(yamlio.dump_data(data)), True),
    "plain": yamlio.dump_data,
    "four": lambda data: yaml.safe_dump(data, indent=4, sort_keys=False, width=2**20),
}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_the_update_text_reads_as_the_data_merge(data: st.DataObject) -> None:
    origin = data.draw(documents(), "origin")
    upstream = data.draw(changed(origin), "upstream")
    style = data.draw(st.sampled_from(sorted(STYLES)), "local style")
    edited = data.draw(st.booleans(), "edited locally")
    local = origin
    if edited:  # a local change on a field upstream may or may not touch: both paths of the update
        local = data.draw(changed(origin), "local")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, doc, text in (("origin", origin, None), ("upstream", upstream, None),
                                ("local", local, STYLES[style](local) + ("# a local note\n" if edited else ""))):
            (root / name).mkdir()
            (root / name / "w.yaml").write_text(text if text is not None else yamlio.dump_data(doc))
        try:
            plan = update_plan_of(root)
        except KrmError:  # the data merge must refuse the same inputs (a field whose kind both sides changed)
            with pytest.raises(merge3.Merge3Error):
                reference(local, origin, upstream)
            return
        written = {w.path: (w.data or b"").decode() for w in plan.writes}
        text = written.get("w.yaml", (root / "local" / "w.yaml").read_text())
        got = yaml.safe_load(text)
        got["metadata"].pop("annotations", None)  # kpt's identifier
        # Unchanged locally, the update takes upstream's data (kpt does too: with upstream's list order,
        # where the 3-way data merge would keep local's order for an element upstream inserted first).
        assert got == (upstream if not edited else reference(local, origin, upstream))


def reference(local: Any, origin: Any, upstream: Any) -> Any:
    """The 3-way merge of the three versions' data (plain prints: no layout, no comments)."""
    trees = [yamlio.load_rt(yamlio.dump_data(d)) for d in (local, origin, upstream)]
    outcome = merge3.merge3(*trees, None, merge3.MergeOptions())
    return yaml.safe_load(yamlio.dump_data(to_plain_data(outcome.result)))

