"""``--conflicts mark``, ``krm-merge conflicts`` and ``krm-merge resolve`` against a model of the rule.

The model: a field gets a marker exactly when local has it and local and
upstream both changed it from origin, to different values (absent counts
as a value: a field upstream deleted that local changed is marked).  The
marked package holds local's values (it is the ``local-wins`` merge as
data); ``resolve --take upstream`` of every marker gives the
``upstream-wins`` merge (up to maps left empty: :func:`without_empty_maps`),
``--take local`` the ``local-wins`` one byte for byte, and then
``conflicts`` lists nothing.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krm_merge.outcomes.kinds import ConflictOutcome
from krm_merge.commands import conflicts, resolve, update
from krm_merge.update import plan as update_plan, planner
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


def updated(tmp: Path, policy: str) -> tuple[Path, update_plan.UpdatePlan]:
    """A copy of local updated with ``policy``."""
    target = tmp / policy
    shutil.copytree(tmp / "local", target)
    plan = planner.plan_update(target, tmp / "origin", tmp / "upstream", conflicts=policy)
    update_plan.apply_plan(target, plan)
    return target, plan


def data(pkg: Path) -> Any:
    return yamlio.load_data((pkg / "thing.yaml").read_text())


leaf_values = st.fixed_dictionaries({leaf: LISTS if leaf == "spec.b" else VALUES for leaf in LEAVES})


@settings(max_examples=150, deadline=None)
@given(leaf_values, leaf_values, leaf_values)
def test_markers_are_exactly_the_fields_changed_differently_on_both_sides(l: Any, o: Any, u: Any) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        write_copies(tmp, l, o, u)
        marked, plan = updated(tmp, "mark")
        local_wins, _ = updated(tmp, "local-wins")
        upstream_wins, _ = updated(tmp, "upstream-wins")
        expected = model(l, o, u)

        assert sum(1 for o in plan.outcomes if isinstance(o, ConflictOutcome)) == len(expected)
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
        assert same(without_empty_maps(data(marked)), without_empty_maps(data(upstream_wins)))


def without_empty_maps(value: Any) -> Any:
    """Data with maps left empty removed: the merge keeps one ({}) when upstream still had it with fields
    local deleted, resolve cannot know that from the marker and removes every map a deletion empties."""
    if isinstance(value, dict):
        inner = {k: without_empty_maps(v) for k, v in value.items()}
        return {k: v for k, v in inner.items() if v != {}}
    if isinstance(value, list):
        return [without_empty_maps(v) for v in value]
    return value


# -- the commands, end to end ------------------------------------------------------------------

ORIGIN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: shop
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: app
        image: app:1 # pinned
        args: [a]
"""


def package(tmp: Path, local: str, upstream: str) -> Path:
    for name, text in (("origin", ORIGIN), ("local", local), ("upstream", upstream)):
        (tmp / name).mkdir()
        (tmp / name / "app.yaml").write_text(text)
    return tmp / "local"


def both_changed(tmp: Path) -> Path:
    local = ORIGIN.replace("replicas: 2", "replicas: 5").replace("app:1", "app:9").replace("[a]", "[c]")
    upstream = ORIGIN.replace("replicas: 2", "replicas: 3").replace("app:1", "app:2").replace("[a]", "[b]")
    return package(tmp, local, upstream)


def run_update(pkg: Path, *extra: str) -> int:
    return update.main([str(pkg), "--origin", str(pkg.parent / "origin"), "--upstream", str(pkg.parent / "upstream"), *extra])


def test_without_the_flag_nothing_changes(tmp_path: Path) -> None:
    pkg = both_changed(tmp_path)
    assert run_update(pkg) == 0
    text = (pkg / "app.yaml").read_text()
    assert "krm-merge:conflict" not in text and "replicas: 3" in text
    assert conflicts.main([str(pkg)]) == 0


def test_update_exits_3_and_conflicts_lists_file_line_and_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path)
    assert run_update(pkg, "--conflicts", "mark") == 3
    assert "3 conflict(s) marked" in capsys.readouterr().err
    text = (pkg / "app.yaml").read_text()
    assert "  replicas: 5  # krm-merge:conflict upstream=3 origin=2\n" in text
    assert '    image: app:9 # pinned # krm-merge:conflict upstream="app:2" origin="app:1"\n' in text
    assert re.search(r'\n        args: \[c\] +# krm-merge:conflict upstream=\["b"\] origin=\["a"\]\n', text)
    assert conflicts.main([str(pkg)]) == 3
    out = capsys.readouterr().out.splitlines()
    line = text.split("\n").index("  replicas: 5  # krm-merge:conflict upstream=3 origin=2") + 1
    assert out[0] == f"app.yaml:{line}: Deployment/shop/app spec.replicas: local=5 upstream=3 origin=2"
    assert len(out) == 3


def test_an_edit_by_hand_resolves(tmp_path: Path) -> None:
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    path = pkg / "app.yaml"
    lines = [line.split(" # krm-merge:conflict")[0].split("  # krm-merge:conflict")[0] for line in path.read_text().split("\n")]
    path.write_text("\n".join(lines).replace("replicas: 5", "replicas: 4"))
    assert conflicts.main([str(pkg)]) == 0


def test_resolve_by_resource_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    # the field as conflicts prints it, or with list indices
    assert resolve.main([str(pkg), "--take", "upstream", "Deployment/shop/app:spec.template.spec.containers[0].image"]) == 3
    assert resolve.main([str(pkg), "Deployment/shop/app:spec.template.spec.containers[name=app].args", "--take", "local"]) == 3
    text = (pkg / "app.yaml").read_text()
    assert "    image: app:2 # pinned\n" in text and "    args: [c]\n" in text, text
    assert [m.field for m in conflicts.find_all(pkg)] == ["spec.replicas"]
    assert resolve.main([str(pkg), "--take", "upstream", "Deployment/shop/app"]) == 0
    assert "  replicas: 3\n" in (pkg / "app.yaml").read_text()
    capsys.readouterr()


def test_a_selection_matching_nothing_is_an_error_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    before = (pkg / "app.yaml").read_text()
    assert resolve.main([str(pkg), "--take", "local", "Deployment/shop/app", "Deployment/app"]) == 1
    assert "no conflict marker matches 'Deployment/app'" in capsys.readouterr().err
    assert (pkg / "app.yaml").read_text() == before


def test_an_unreadable_marker_is_listed_and_only_take_local_removes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = package(tmp_path, ORIGIN.replace("replicas: 2", "replicas: 2 # krm-merge:conflict upstream=oops"), ORIGIN)
    assert conflicts.main([str(pkg)]) == 3
    assert "spec.replicas: local=2 upstream=? origin=?" in capsys.readouterr().out
    assert resolve.main([str(pkg), "--take", "upstream"]) == 1
    assert "no readable upstream value" in capsys.readouterr().err
    assert resolve.main([str(pkg), "--take", "local"]) == 0
    assert (pkg / "app.yaml").read_text() == ORIGIN


def test_conflicts_of_a_missing_package_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert conflicts.main([str(tmp_path / "nope")]) == 1
    assert "is not a directory" in capsys.readouterr().err


def test_a_value_upstream_deleted_is_written_absent_and_taking_it_deletes_the_field(tmp_path: Path) -> None:
    pkg = package(tmp_path, ORIGIN.replace("replicas: 2", "replicas: 5"), ORIGIN.replace("  replicas: 2\n", ""))
    assert run_update(pkg, "--conflicts", "mark") == 3
    assert "replicas: 5  # krm-merge:conflict upstream=<absent> origin=2\n" in (pkg / "app.yaml").read_text()
    assert resolve.main([str(pkg), "--take", "upstream"]) == 0
    assert "replicas" not in (pkg / "app.yaml").read_text()


@pytest.mark.parametrize(("take", "value"), [("local", "5"), ("upstream", "3")])
def test_resolve_keeps_a_crlf_file_crlf(tmp_path: Path, take: str, value: str) -> None:
    marked = ORIGIN.replace("replicas: 2", "replicas: 5 # krm-merge:conflict upstream=3 origin=2")
    pkg = package(tmp_path, marked.replace("\n", "\r\n"), ORIGIN)
    assert [m.field for m in conflicts.find_all(pkg)] == ["spec.replicas"]
    assert resolve.main([str(pkg), "--take", take]) == 0
    assert (pkg / "app.yaml").read_bytes() == ORIGIN.replace("replicas: 2", f"replicas: {value}").replace("\n", "\r\n").encode()


def test_a_further_kind_of_marker_is_one_register_call(tmp_path: Path) -> None:
    """The hook a new kind of conflict uses: its finder's markers are listed and its resolver decides them."""
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    (pkg / "NOTES.md").write_text("a\n%%% mine=b theirs=c\n")

    def find_sample(root: Path) -> list[conflicts.Marker]:
        lines = (root / "NOTES.md").read_text().split("\n")
        return [conflicts.Marker("sample", "NOTES.md", 2, "", "", "b", "c", "a")] if "%%%" in lines[1] else []

    def resolve_sample(rel: str, text: str, markers: list[conflicts.Marker], take: str) -> str:
        return "a\nb\n" if take == "local" else "a\nc\n"

    saved = dict(conflicts.FINDERS), dict(conflicts.RESOLVERS)
    conflicts.register("sample", find_sample, resolve_sample)
    try:
        found = conflicts.find_all(pkg)
        assert [(m.kind, m.file, m.line) for m in found if m.kind == "sample"] == [("sample", "NOTES.md", 2)]
        assert len(found) == 4
        assert resolve.main([str(pkg), "--take", "upstream"]) == 0
        assert (pkg / "NOTES.md").read_text() == "a\nc\n"
        assert conflicts.main([str(pkg)]) == 0
    finally:
        conflicts.FINDERS.clear(), conflicts.RESOLVERS.clear()
        conflicts.FINDERS.update(saved[0]), conflicts.RESOLVERS.update(saved[1])


@pytest.mark.parametrize("header", ["", " # the script"])
def test_a_block_scalar_is_marked_on_its_key_line(tmp_path: Path, header: str) -> None:
    origin = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  script: |{}\n    one\n    two\n  other: x\n"
    pkg = package(tmp_path, origin.format(header).replace("two", "local"), origin.format("").replace("two", "upstream"))
    (tmp_path / "origin" / "app.yaml").write_text(origin.format(""))
    assert run_update(pkg, "--conflicts", "mark") == 3
    text = (pkg / "app.yaml").read_text()
    assert f'  script: |{header} # krm-merge:conflict upstream="one\\nupstream\\n" origin="one\\ntwo\\n"\n    one\n    local\n' in text
    (marker,) = conflicts.find_all(pkg)
    assert (marker.field, marker.local) == ("data.script", '"one\\nlocal\\n"')
    assert resolve.main([str(pkg), "--take", "upstream"]) == 0
    assert f"  script: |{header}\n    one\n    upstream\n  other: x\n" in (pkg / "app.yaml").read_text()


def test_a_second_update_replaces_the_marker_of_a_field_still_in_conflict(tmp_path: Path) -> None:
    pkg = both_changed(tmp_path)
    assert run_update(pkg, "--conflicts", "mark") == 3
    (tmp_path / "origin" / "app.yaml").write_text((tmp_path / "upstream" / "app.yaml").read_text())
    (tmp_path / "upstream" / "app.yaml").write_text(ORIGIN.replace("replicas: 2", "replicas: 4").replace("app:1", "app:2")
                                                    .replace("[a]", "[b]"))
    assert run_update(pkg, "--conflicts", "mark") == 3
    text = (pkg / "app.yaml").read_text()
    assert "  replicas: 5  # krm-merge:conflict upstream=4 origin=3\n" in text  # replaced, not appended
    assert '# pinned # krm-merge:conflict upstream="app:2" origin="app:1"\n' in text  # not in conflict again: left
    assert text.count("krm-merge:conflict") == 3
