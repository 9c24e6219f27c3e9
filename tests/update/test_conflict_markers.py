"""``--conflicts mark``, ``krm-merge conflicts`` and ``krm-merge resolve`` against a model of the rule.

The model: a field gets a marker exactly when local has it and local and
upstream both changed it from origin, to different values (absent counts
as a value: a field upstream deleted that local changed is marked).  The
marked package holds local's values (it is the ``local-wins`` merge as
data); ``resolve --take upstream`` of every marker gives the
``upstream-wins`` merge, ``--take local`` the ``local-wins`` one, and then
``conflicts`` lists nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from krm_merge.commands import conflicts, resolve, update
from krm_merge.krm import yamlio
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import ABSENT_VALUE, parse_marker

ABSENT = object()
VALUES = st.sampled_from([1, 2, "1", "b", True, ABSENT])
LISTS = st.sampled_from([[1, 2], [2], ["1"], [], ABSENT])  # a plain list is one value (a kind change is an error)
LEAVES = ("spec.a", "spec.b", "spec.nested.c", "spec.nested.d", "spec.items[name=x].v", "spec.items[name=y].v")


def build(values: dict[str, Any]) -> dict[str, Any]:
    """A resource holding the given leaf values (ABSENT leaves left out, emptied maps too)."""
    spec: dict[str, Any] = {k: values[f"spec.{k}"] for k in ("a", "b") if values[f"spec.{k}"] is not ABSENT}
    nested = {k: values[f"spec.nested.{k}"] for k in ("c", "d") if values[f"spec.nested.{k}"] is not ABSENT}
    if nested:
        spec["nested"] = nested
    items = []
    for name in ("x", "y"):
        element: dict[str, Any] = {"name": name}
        if values[f"spec.items[name={name}].v"] is not ABSENT:
            element["v"] = values[f"spec.items[name={name}].v"]
        items.append(element)
    spec["items"] = items
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


def changed(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is not b
    return not same(a, b)


def model(l: dict[str, Any], o: dict[str, Any], u: dict[str, Any]) -> set[str]:
    """The fields that must carry a marker."""
    return {
        leaf for leaf in LEAVES
        if l[leaf] is not ABSENT and changed(l[leaf], o[leaf]) and changed(u[leaf], o[leaf]) and changed(l[leaf], u[leaf])
    }


def write_copies(tmp: Path, l: dict[str, Any], o: dict[str, Any], u: dict[str, Any]) -> None:
    for name, values in (("local", l), ("origin", o), ("upstream", u)):
        (tmp / name).mkdir()
        (tmp / name / "thing.yaml").write_text(yamlio.dump_data(build(values)))


def updated(tmp: Path, policy: str) -> tuple[Path, update.UpdatePlan]:
    """A copy of local updated with ``policy``."""
    target = tmp / policy
    shutil.copytree(tmp / "local", target)
    plan = update.plan_update(target, tmp / "origin", tmp / "upstream", conflicts=policy)
    update.apply_plan(target, plan)
    return target, plan


def data(pkg: Path) -> Any:
    return yamlio.load_data((pkg / "thing.yaml").read_text())


leaf_values = st.fixed_dictionaries({leaf: LISTS if leaf == "spec.b" else VALUES for leaf in LEAVES})


@settings(max_examples=40, deadline=None)
@given(leaf_values, leaf_values, leaf_values)
def test_markers_are_exactly_the_fields_changed_differently_on_both_sides(l: Any, o: Any, u: Any) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        write_copies(tmp, l, o, u)
        marked, plan = updated(tmp, "mark")
        local_wins, _ = updated(tmp, "local-wins")
        upstream_wins, _ = updated(tmp, "upstream-wins")
        expected = model(l, o, u)

        assert plan.conflicts == len(expected)
        found = conflicts.find_all(marked)
        assert {m.field for m in found} == expected
        assert all(m.resource == "Thing/t" and m.file == "thing.yaml" for m in found)
        assert same(data(marked), data(local_wins))  # markers are comments: the data is local's
        lines = (marked / "thing.yaml").read_text().split("\n")
        for marker in found:
            upstream_value, origin_value = parse_marker(lines[marker.line - 1]) or (None, None)
            want_u, want_o = u[marker.field], o[marker.field]
            assert upstream_value is ABSENT_VALUE if want_u is ABSENT else same(upstream_value, want_u)
            assert origin_value is ABSENT_VALUE if want_o is ABSENT else same(origin_value, want_o)

        taken_local = tmp / "taken-local"
        shutil.copytree(marked, taken_local)
        resolve.write(taken_local, conflicts.find_all(taken_local), "local")
        assert conflicts.find_all(taken_local) == []
        assert (taken_local / "thing.yaml").read_text() == (local_wins / "thing.yaml").read_text()

        resolve.write(marked, found, "upstream")
        assert conflicts.find_all(marked) == []
        assert same(data(marked), data(upstream_wins))
