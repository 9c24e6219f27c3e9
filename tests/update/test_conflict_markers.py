"""``--conflicts mark``, ``krm-merge conflicts`` and ``krm-merge resolve`` against a model of the rule.

The model: a field gets a marker exactly when local has it and local and
upstream both changed it from origin, to different values (absent counts
as a value: a field upstream deleted that local changed is marked), and the
update records each in the package's conflict ledger.  The marked package
holds local's values (it is the ``local-wins`` merge as data); ``resolve
--take upstream`` of every marker gives the ``upstream-wins`` merge (up to
maps left empty: :func:`without_empty_maps`), ``--take local`` the
``local-wins`` one byte for byte, and then ``conflicts`` lists nothing and
the ledger is gone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.merge3.conflicts import ConflictPolicy
from krm_merge.outcomes.kinds import ConflictOutcome
from krm_merge.commands import conflicts, resolve, update
from krm_merge.update import ledger, plan as update_plan, planner
from krm_merge.krm import yamlio
from krm_merge.krm.results import ResourceRef
from krm_merge.krm.snapshot import Snapshot
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import ABSENT_VALUE, parse_marker

from tests.helpers import LOCK_COMMIT, locked_kptfile

from .world import kptfile

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


# The user's Kptfile: the conflict ledger is bound to its upstreamLock commit (a package without one keeps none).
LOCKED = locked_kptfile()


def write_copies(tmp: Path, l: dict[str, Any], o: dict[str, Any], u: dict[str, Any]) -> None:
    for name, values in (("local", l), ("origin", o), ("upstream", u)):
        (tmp / name).mkdir()
        (tmp / name / "thing.yaml").write_text(yamlio.dump_data(build(values)))
    (tmp / "local" / "Kptfile").write_text(LOCKED)


def updated(tmp: Path, policy: str) -> tuple[Path, update_plan.UpdatePlan]:
    """A copy of local updated with ``policy``."""
    target = tmp / policy
    shutil.copytree(tmp / "local", target)
    plan = planner.plan_update(target, tmp / "origin", tmp / "upstream", conflicts=ConflictPolicy(policy))
    ledger.record(target, plan)  # as the command does: the markers' ledger, in the same write
    update_plan.apply_plan(target, plan)
    return target, plan


def data(pkg: Path) -> Any:
    return yamlio.load_data((pkg / "thing.yaml").read_text())


leaf_values = st.fixed_dictionaries({leaf: LISTS if leaf == "spec.b" else VALUES for leaf in LEAVES})


@settings(max_examples=examples(150), deadline=None)
@given(leaf_values, leaf_values, leaf_values)
def test_markers_are_exactly_the_fields_changed_differently_on_both_sides(l: Any, o: Any, u: Any) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        write_copies(tmp, l, o, u)
        marked, plan = updated(tmp, "mark")
        local_wins, _ = updated(tmp, "local-wins")
        upstream_wins, _ = updated(tmp, "upstream-wins")
        expected = model(l, o, u)

        assert sum(1 for o in plan.outcomes if isinstance(o, ConflictOutcome)) == len(expected) == len(plan.marks)
        found = conflicts.find_all(marked)
        assert {m.field for m in found} == expected
        assert all(m.resource == "Thing/t" and m.file == "thing.yaml" and m.recorded for m in found)
        assert same(data(marked), data(local_wins))  # markers are comments: the data is local's
        lines = (marked / "thing.yaml").read_text().split("\n")
        for marker in found:
            written = parse_marker(lines[marker.line - 1]) or (None, None)
            want_u, want_o = u[marker.field], o[marker.field]
            for value in (written[0], marker.upstream):  # the marker's text and the ledger agree
                assert value is ABSENT_VALUE if want_u is ABSENT else same(value, want_u)
            for value in (written[1], marker.origin):
                assert value is ABSENT_VALUE if want_o is ABSENT else same(value, want_o)
            assert same(marker.local, l[marker.field])

        taken_local = tmp / "taken-local"
        shutil.copytree(marked, taken_local)
        scanned = conflicts.scan(taken_local)
        resolve.write(taken_local, scanned, scanned.recorded, "local")
        assert conflicts.find_all(taken_local) == []
        assert (taken_local / "thing.yaml").read_text() == (local_wins / "thing.yaml").read_text()
        assert not (taken_local / ledger.LEDGER_NAME).exists()

        resolve.write(marked, conflicts.scan(marked), found, "upstream")
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
    (tmp / "local" / "Kptfile").write_text(LOCKED)
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
    # one space before a new comment, as kpt's printer writes it (kpt fn render leaves the line alone)
    assert "  replicas: 5 # krm-merge:conflict upstream=3 origin=2\n" in text
    assert '    image: app:9 # pinned # krm-merge:conflict upstream="app:2" origin="app:1"\n' in text
    assert '\n        args: [c] # krm-merge:conflict upstream=["b"] origin=["a"]\n' in text
    assert conflicts.main([str(pkg)]) == 3
    out = capsys.readouterr().out.splitlines()
    line = text.split("\n").index("  replicas: 5 # krm-merge:conflict upstream=3 origin=2") + 1
    assert out[0] == f"{pkg}/app.yaml:{line}: Deployment/shop/app spec.replicas: local=5 upstream=3 origin=2"
    assert len(out) == 3


def test_conflicts_json_gives_values_as_json_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: ``--output json`` wrote ``"local": "\\"payments\\""``; values are JSON values, a side without the
    field has no key."""
    pkg = package(tmp_path, ORIGIN.replace("app:1", "payments").replace("replicas: 2", "replicas: 5"),
                  ORIGIN.replace("app:1", "app:2").replace("  replicas: 2\n", ""))
    assert run_update(pkg, "--conflicts", "mark") == 3
    capsys.readouterr()
    assert conflicts.main([str(pkg), "--output", "json"]) == 3
    found = {m["field"]: m for m in json.loads(capsys.readouterr().out)}
    image = found["spec.template.spec.containers[name=app].image"]
    assert (image["local"], image["upstream"], image["origin"]) == ("payments", "app:2", "app:1")
    replicas = found["spec.replicas"]
    assert (replicas["local"], replicas["origin"], "upstream" in replicas) == (5, 2, False)


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


@pytest.mark.parametrize("marker", [
    "# krm-merge:conflict upstream=oops",
    "# krm-merge:conflict upstream=3 origin=2",
    "# krm-merge:conflict upstream=" + "[" * 300 + "]" * 300 + " origin=1",  # resolve: RecursionError (issue 31)
    "# krm-merge:conflict upstream=" + "[" * 1000 + "]" * 1000 + " origin=1",  # conflicts: RecursionError
])
def test_a_marker_no_update_recorded_is_listed_apart_and_never_acted_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], marker: str) -> None:
    text = ORIGIN.replace("replicas: 2", f"replicas: 2 {marker}")
    pkg = package(tmp_path, text, ORIGIN)
    assert conflicts.main([str(pkg)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert (f"krm-merge conflicts: warning: app.yaml:7: Deployment/shop/app spec.replicas: a field marker "
            f"{conflicts.UNRECORDED}\n") in err
    for take in ("upstream", "local"):
        assert resolve.main([str(pkg), "--take", take]) == 0
        out, err = capsys.readouterr()
        assert out == "" and "Traceback" not in err  # every human line on stderr
        assert f"krm-merge resolve: resolved 0 conflict(s) in {pkg} (took {take}); 0 left\n" in err
        assert (pkg / "app.yaml").read_text() == text
    assert resolve.main([str(pkg), "--take", "upstream", "Deployment/shop/app"]) == 1
    assert "it names only markers no update recorded" in capsys.readouterr().err
    assert (pkg / "app.yaml").read_text() == text


def test_conflicts_of_a_missing_package_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert conflicts.main([str(tmp_path / "nope")]) == 1
    assert "is not a directory" in capsys.readouterr().err


def test_a_value_upstream_deleted_is_written_absent_and_taking_it_deletes_the_field(tmp_path: Path) -> None:
    pkg = package(tmp_path, ORIGIN.replace("replicas: 2", "replicas: 5"), ORIGIN.replace("  replicas: 2\n", ""))
    assert run_update(pkg, "--conflicts", "mark") == 3
    assert "replicas: 5 # krm-merge:conflict upstream=<absent> origin=2\n" in (pkg / "app.yaml").read_text()
    assert resolve.main([str(pkg), "--take", "upstream"]) == 0
    assert "replicas" not in (pkg / "app.yaml").read_text()


@pytest.mark.parametrize(("take", "value"), [("local", "5"), ("upstream", "3")])
def test_resolve_keeps_a_crlf_file_crlf(tmp_path: Path, take: str, value: str) -> None:
    local = ORIGIN.replace("replicas: 2", "replicas: 5")
    pkg = package(tmp_path, local.replace("\n", "\r\n"), ORIGIN.replace("replicas: 2", "replicas: 3"))
    assert run_update(pkg, "--conflicts", "mark") == 3
    assert b"replicas: 5 # krm-merge:conflict upstream=3 origin=2\r\n" in (pkg / "app.yaml").read_bytes()
    before = (pkg / "app.yaml").read_bytes().replace(b" # krm-merge:conflict upstream=3 origin=2", b"")
    assert [m.field for m in conflicts.find_all(pkg)] == ["spec.replicas"]
    assert resolve.main([str(pkg), "--take", take]) == 0
    assert (pkg / "app.yaml").read_bytes() == before.replace(b"replicas: 5", f"replicas: {value}".encode())


def test_a_further_kind_of_marker_is_one_register_call(tmp_path: Path) -> None:
    """The hook a new kind of conflict uses: its finder's markers, bound to the ledger's entries of its kind, are
    listed, and its resolver decides them."""
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    (pkg / "NOTES.md").write_text("a\n%%% mine=b theirs=c\n")
    lock, entries = ledger.decode((pkg / ledger.LEDGER_NAME).read_bytes(), ledger.LEDGER_NAME)
    sample = ledger.Entry("sample", "NOTES.md", None, "", (), "b", "c", "a")
    (pkg / ledger.LEDGER_NAME).write_bytes(ledger.encode([*entries, sample], lock))

    def find_sample(snapshot: Snapshot, recorded: list[ledger.Entry]) -> list[conflicts.Marker]:
        lines = snapshot.read_bytes("NOTES.md").decode().split("\n")  # the package's one listing, read through
        entry = next((e for e in recorded if e.file == "NOTES.md"), None)
        return [conflicts.Marker("sample", "NOTES.md", 2, "", "", "b", "c", "a", entry=entry)] if "%%%" in lines[1] else []

    def resolve_sample(rel: str, text: str, markers: list[conflicts.Marker], take: str) -> str:
        return "a\nb\n" if take == "local" else "a\nc\n"

    saved = dict(conflicts.FINDERS), dict(conflicts.RESOLVERS)
    conflicts.register("sample", find_sample, resolve_sample)
    try:
        found = conflicts.find_all(pkg)
        assert [(m.kind, m.file, m.line) for m in found if m.kind == "sample"] == [("sample", "NOTES.md", 2)]
        assert len(found) == 4 and all(m.recorded for m in found)
        assert resolve.main([str(pkg), "--take", "upstream"]) == 0
        assert (pkg / "NOTES.md").read_text() == "a\nc\n"
        assert conflicts.main([str(pkg)]) == 0
        assert not (pkg / ledger.LEDGER_NAME).exists()
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
    assert (marker.field, marker.local, marker.upstream) == ("data.script", "one\nlocal\n", "one\nupstream\n")
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
    assert "  replicas: 5 # krm-merge:conflict upstream=4 origin=3\n" in text  # replaced, not appended
    assert '# pinned # krm-merge:conflict upstream="app:2" origin="app:1"\n' in text  # not in conflict again: left
    assert text.count("krm-merge:conflict") == 3
    # the ledger: the new marker's values, the earlier update's entries whose markers are still there
    found = {m.field: m for m in conflicts.find_all(pkg)}
    assert len(found) == 3 and all(m.recorded for m in found.values())
    assert (found["spec.replicas"].upstream, found["spec.replicas"].origin) == (4, 3)
    assert found["spec.template.spec.containers[name=app].image"].upstream == "app:2"


def test_an_earlier_entry_whose_marker_was_deleted_by_hand_leaves_the_ledger(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = both_changed(tmp_path)
    assert run_update(pkg, "--conflicts", "mark") == 3
    path = pkg / "app.yaml"
    path.write_text(re.sub(r' # krm-merge:conflict upstream=\["b"\].*', "", path.read_text()))  # decided by hand
    assert len(conflicts.find_all(pkg)) == 2
    (tmp_path / "origin" / "app.yaml").write_text((tmp_path / "upstream" / "app.yaml").read_text())
    assert run_update(pkg, "--conflicts", "mark") == 3  # nothing new; the earlier markers are kept, recorded
    assert "2 conflict(s) left by an earlier update: list them" in capsys.readouterr().err
    lock, entries = ledger.decode((pkg / ledger.LEDGER_NAME).read_bytes(), ledger.LEDGER_NAME)
    assert sorted(e.field for e in entries) == ["spec.replicas", "spec.template.spec.containers[name=app].image"]


def test_a_plain_yaml_field_is_selected_by_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: a Helm values.yaml field resolved only as ``:replicaCount``; it is ``values.yaml:replicaCount``."""
    for name, count in (("origin", 1), ("local", 5), ("upstream", 3)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "values.yaml").write_text(f"replicaCount: {count}\nimage: web\n")
    pkg = tmp_path / "local"
    (pkg / "Kptfile").write_text(LOCKED)
    assert run_update(pkg, "--conflicts", "mark") == 3
    capsys.readouterr()
    assert conflicts.main([str(pkg)]) == 3
    assert capsys.readouterr().out == f"{pkg}/values.yaml:1: replicaCount: local=5 upstream=3 origin=1\n"
    assert resolve.main([str(pkg), "--take", "upstream", ":replicaCount"]) == 1
    assert "name the file of a plain YAML field (values.yaml:replicaCount)" in capsys.readouterr().err
    assert resolve.main([str(pkg), "--take", "upstream", "values.yaml:replicaCount"]) == 0
    assert (pkg / "values.yaml").read_text() == "replicaCount: 3\nimage: web\n"


def test_kind_is_matched_in_any_case_as_kubectl_does(tmp_path: Path) -> None:
    """Issue 34: ``deployment/shop/app`` matched nothing where ``Deployment/shop/app`` did."""
    pkg = both_changed(tmp_path)
    run_update(pkg, "--conflicts", "mark")
    assert resolve.main([str(pkg), "--take", "local", "deployment/shop/app:spec.replicas"]) == 3
    assert resolve.main([str(pkg), "--take", "local", "DEPLOYMENT/shop/app"]) == 0
    assert resolve.main([str(pkg), "--take", "local", "deployment/SHOP/app"]) == 1  # names are exact


def test_a_template_beside_a_marker_is_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31: resolve on a file holding ``name: {{ .Values.name }}`` crashed while building its error message."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    template = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\ndata:\n"
                "  a: \"1\" # krm-merge:conflict upstream=\"2\" origin=\"0\"\n")
    (pkg / "cm.yaml").write_text(template)
    assert conflicts.main([str(pkg)]) == 0
    assert f"cm.yaml:6: data.a: a field marker {conflicts.UNRECORDED}" in capsys.readouterr().err
    for take in ("upstream", "local"):
        assert resolve.main([str(pkg), "--take", take]) == 0
        assert "Traceback" not in capsys.readouterr().err
    assert (pkg / "cm.yaml").read_text() == template


def test_resolve_is_linear_in_the_number_of_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: resolve was quadratic (1,000 markers 2.2 s, 4,000 36 s): every document is parsed and printed once,
    whatever its number of markers, and the lines read grow with the markers, not with their square."""
    work: dict[str, int] = {}

    def counting(module: Any, name: str) -> None:
        real = getattr(module, name)

        def count(*args: Any, **kwargs: Any) -> Any:
            work[name] = work.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, count)

    from krm_merge.krm import kubeobject
    from krm_merge.update import conflicts as engine  # the marker engine behind the conflicts and resolve commands
    from krm_merge.update import ledger as ledger_module

    counting(engine.yamlio, "load_rt")
    counting(kubeobject.Item, "set_data")
    counting(engine, "find_marker")
    counting(ledger_module, "find_marker")
    counts = []
    for n in (50, 200):
        root = tmp_path / str(n)
        root.mkdir()
        for name, value in (("origin", "o"), ("local", "l"), ("upstream", "u")):
            (root / name).mkdir()
            docs = [f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{d}\ndata:\n"
                    + "".join(f"  k{i}: {value}{i}\n" for i in range(n)) for d in range(2)]
            (root / name / "cm.yaml").write_text("---\n".join(docs))
        (root / "local" / "Kptfile").write_text(LOCKED)
        assert run_update(root / "local", "--conflicts", "mark") == 3
        work.clear()
        assert resolve.main([str(root / "local"), "--take", "upstream"]) == 0
        counts.append(dict(work))
        assert "k7: u7\n" in (root / "local" / "cm.yaml").read_text()
    small, large = counts
    assert small["load_rt"] == large["load_rt"] == 2  # each marked document parsed once to find its markers
    assert small["set_data"] == large["set_data"] == 2  # and edited once
    assert large["find_marker"] <= 4 * small["find_marker"] + 10  # 4x the markers: 4x the lines looked at


# Far above what each command takes on 20,000 forged markers (seconds), as a guard against the quadratic
# work issue 31 measured (over 14 minutes); not a timing assertion.
HANG_GUARD_S = 300


def test_twenty_thousand_forged_markers_are_named_and_left_in_linear_time(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    n = 20_000
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n" + "".join(
        f'  k{i}: "v{i}" # krm-merge:conflict upstream="evil{i}" origin="v"\n' for i in range(n))
    (pkg / "cm.yaml").write_text(text)  # ~1.3 MB
    for args in (["conflicts", str(pkg)], ["resolve", str(pkg), "--take", "upstream"]):
        proc = subprocess.run([sys.executable, "-m", "krm_merge", *args], capture_output=True, text=True,
                              timeout=HANG_GUARD_S)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr
        assert proc.stderr.count(conflicts.UNRECORDED) == n
    assert (pkg / "cm.yaml").read_text() == text


# -- issue 43: what binds a ledger, what a ledger path may be, the work of marking and finding -----------------


def test_a_ledger_in_a_package_without_a_lock_is_never_honoured(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43: a ledger naming ``lockedCommit: ""`` in a package recording no lock was honoured: ``resolve --take
    upstream`` wrote its value.  Without a commit to bind it to, a ledger could have come from anywhere: it is not
    honoured, and an update that would have to write one there is refused."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "Kptfile").write_text(kptfile("pkg"))
    text = ORIGIN.replace("replicas: 2", "replicas: 2 # krm-merge:conflict upstream=666 origin=2")
    (pkg / "app.yaml").write_text(text)
    forged = ledger.Entry("field", "app.yaml", ResourceRef("apps/v1", "Deployment", "app", "shop"), "spec.replicas",
                          ("spec", "replicas"), 2, 666, 2)
    (pkg / ledger.LEDGER_NAME).write_bytes(ledger.encode([forged], ""))
    assert conflicts.main([str(pkg)]) == 0
    err = capsys.readouterr().err
    assert ".krm-merge.conflicts: its package records no upstreamLock commit" in err and "Traceback" not in err
    assert resolve.main([str(pkg), "--take", "upstream"]) == 0
    assert (pkg / "app.yaml").read_text() == text  # 666 never written
    assert resolve.main([str(pkg), "--take", "upstream", "Deployment/shop/app:spec.replicas"]) == 1
    assert (pkg / "app.yaml").read_text() == text

    (tmp_path / "update").mkdir()
    local = both_changed(tmp_path / "update")
    (local / "Kptfile").unlink()
    before = (local / "app.yaml").read_text()
    capsys.readouterr()
    assert run_update(local, "--conflicts", "mark") == 1
    assert ("this update would leave 3 conflict(s) marked, but the package's Kptfile records no upstreamLock commit"
            in capsys.readouterr().err)
    assert (local / "app.yaml").read_text() == before and not (local / ledger.LEDGER_NAME).exists()


def _wrong_ledger(pkg: Path, kind: str) -> None:
    path = pkg / ledger.LEDGER_NAME
    if kind == "folder":
        path.mkdir()
        (path / "x").write_text("{}")
    elif kind == "link":  # to a ledger that would be honoured, were it read through the link
        elsewhere = pkg.parent / "elsewhere.json"
        elsewhere.write_bytes(ledger.encode([], LOCK_COMMIT))
        path.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(path)  # opened for reading, it would block every command
    else:  # huge: sparse, past the 64 MB a ledger is read up to (ledger.MAX_LEDGER_BYTES)
        with open(path, "wb") as fh:
            fh.truncate(64 * 1024 * 1024 + 1)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "krm_merge", *args], capture_output=True, text=True, timeout=HANG_GUARD_S)


@pytest.mark.parametrize("kind", ["folder", "link", "fifo", "huge"])
def test_a_ledger_path_that_is_not_a_ledger_file_is_named_and_left_alone(tmp_path: Path, kind: str) -> None:
    """Issue 43: a ``.krm-merge.conflicts`` folder made every ``update`` and ``conflicts`` exit 1.  A ledger path
    that is not a regular file of a sane size is named in a warning and not read (nor followed, nor opened); only an
    update that has conflicts to record there stops, with an error naming it, and writes nothing."""
    pkg = package(tmp_path, ORIGIN, ORIGIN.replace("replicas: 2", "replicas: 3"))
    _wrong_ledger(pkg, kind)
    named = ".krm-merge.conflicts: " + {"folder": "a folder", "link": "a symbolic link", "fifo": "a FIFO",
                                        "huge": "a file of 64 MB (ledgers are read up to 64 MB)"}[kind]
    update_ = _cli("update", str(pkg), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream"))
    assert update_.returncode == 0, update_.stderr
    assert f"warning: {named}, not a conflict ledger krm-merge writes: not read; left as it is" in update_.stderr
    assert "replicas: 3\n" in (pkg / "app.yaml").read_text()
    listed = _cli("conflicts", str(pkg))
    assert listed.returncode == 0 and named in listed.stderr and "Traceback" not in listed.stderr
    assert _cli("resolve", str(pkg), "--take", "upstream").returncode == 0
    assert os.path.lexists(pkg / ledger.LEDGER_NAME)  # the user's own path, left as it is

    (tmp_path / "origin" / "app.yaml").write_text((tmp_path / "upstream" / "app.yaml").read_text())
    (tmp_path / "upstream" / "app.yaml").write_text(ORIGIN.replace("replicas: 2", "replicas: 4"))
    (pkg / "app.yaml").write_text((pkg / "app.yaml").read_text().replace("replicas: 3", "replicas: 5"))
    before = (pkg / "app.yaml").read_text()
    marked = _cli("update", str(pkg), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream"),
                  "--conflicts", "mark")
    assert marked.returncode == 1 and "Traceback" not in marked.stderr
    assert (f"error: {named}, not a conflict ledger krm-merge writes, and this update has 1 conflict(s) to record "
            "there: remove it and run the update again") in marked.stderr
    assert (pkg / "app.yaml").read_text() == before


def _many_documents(root: Path, n: int) -> Path:
    """``n`` ConfigMaps in one file, each with one field changed differently on both sides."""
    for name in ("origin", "local", "upstream"):
        (root / name).mkdir(parents=True)
        (root / name / "cm.yaml").write_text("---\n".join(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: {name}{i}\n  same: s\n"
            for i in range(n)))
    (root / "local" / "Kptfile").write_text(LOCKED)
    return root / "local"


def test_marking_is_linear_in_the_number_of_conflicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43: ``update --conflicts mark`` was quadratic (2.2 s at 2,500 conflicts, 50 s at 20,000): the ledger
    scanned each document's header once per conflict of its file.  Counted: the header scans at 4x the conflicts
    grow 4x."""
    from krm_merge.krm import kubeobject

    real, scans = kubeobject.scan_header, [0]

    def counting(text: str) -> Any:
        scans[0] += 1
        return real(text)

    monkeypatch.setattr(kubeobject, "scan_header", counting)
    counts = []
    for n in (20, 80):
        local = _many_documents(tmp_path / str(n), n)
        scans[0] = 0
        assert run_update(local, "--conflicts", "mark") == 3
        counts.append(scans[0])
        assert len(json.loads((local / ledger.LEDGER_NAME).read_text())["conflicts"]) == n
    small, large = counts
    assert large <= 4 * small + 20, counts


def _one_resource(root: Path, n: int) -> Path:
    """One ConfigMap of ``n`` fields, each changed on both sides (issue 43's 20,000-conflict shape, smaller)."""
    for name, value in (("origin", "o"), ("local", "l"), ("upstream", "u")):
        (root / name).mkdir(parents=True)
        (root / name / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n"
                                             + "".join(f"  k{i}: {value}{i}\n" for i in range(n)))
    (root / "local" / "Kptfile").write_text(LOCKED)
    return root / "local"


def test_marking_reads_the_resource_a_fixed_number_of_times_and_each_value_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43: marking 20,000 fields of one resource took 7 s; the work done once per field must be done once:
    each value written once as JSON for its marker and its ledger entry (it was twice), and the resource's text
    read a fixed number of times whatever its size: three versions, the ledger's check, the identifier's
    read-back (it was read eight times: the marked text again, the commented text twice)."""
    from krm_merge.krm import fastyaml, values
    from krm_merge.merge3 import conflicts as marks

    work = {"json": 0, "reads": 0}
    real_json, real_parse = values.value_json, fastyaml.parse

    def counting_json(*args: Any, **kwargs: Any) -> Any:
        work["json"] += 1
        return real_json(*args, **kwargs)

    def counting_parse(text: str) -> Any:
        work["reads"] += "name: big" in text  # the marked resource's text, not the Kptfile's
        return real_parse(text)

    monkeypatch.setattr(marks, "value_json", counting_json)
    monkeypatch.setattr(fastyaml, "parse", counting_parse)  # every reader calls it through the package
    counts = []
    for n in (50, 200):
        local = _one_resource(tmp_path / str(n), n)
        work.update(json=0, reads=0)
        assert run_update(local, "--conflicts", "mark") == 3
        counts.append(dict(work))
        text = (local / "cm.yaml").read_text()
        assert text.count("krm-merge:conflict") == n and f"  k7: l7 # krm-merge:conflict upstream=\"u7\" origin=\"o7\"\n" in text
        assert len(json.loads((local / ledger.LEDGER_NAME).read_text())["conflicts"]) == n
    small, large = counts
    assert small["json"] == 2 * 50 and large["json"] == 2 * 200, counts  # upstream's and origin's value, once each
    assert small["reads"] == large["reads"] <= 5, counts


def _nested(pkg: Path, depth: int) -> str:
    """A ConfigMap nested ``depth`` maps deep, block style, a marker no update recorded on its deepest field."""
    pkg.mkdir(parents=True)
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: c", "data:"]
    lines += [f"{'  ' * (level + 1)}k{level}:" for level in range(depth)]
    lines[-1] += ' v # krm-merge:conflict upstream="x" origin="y"'
    text = "\n".join(lines) + "\n"
    (pkg / "cm.yaml").write_text(text)
    return text


def test_conflicts_and_resolve_are_linear_in_nesting_depth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43: a marker at the bottom of a document nested 1k / 2k / 4k levels made ``conflicts`` and ``resolve``
    take 1.4 / 10 / 89.5 s: the marker's pattern, searched from the start of every line, tried each blank of its
    indentation to the end.  Counted: the characters the pattern is run over grow no faster than the depth, and the
    marker is still found as the pattern finds it; 4,000 levels end in the loader's error, no traceback."""
    from krm_merge.merge3 import conflicts as marks

    pattern, offered = marks._marker_at(), [0]
    lines = ["", "#", " # krm-merge:conflict", "a: 1 #  \tkrm-merge:conflict x", "x # krm-merge:conflicts",
             "# krm-merge:conflict# krm-merge:conflict", "a krm-merge:conflict # krm-merge:conflict_ #krm-merge:conflict",
             "\t" * 50 + "#" + " " * 50 + "krm-merge:conflict", "krm-merge:conflict", "#krm-merge:conflicté #krm-merge:conflict"]
    for line in lines:  # the one definition of a marker: where the pattern's search finds it
        found = pattern.search(line)
        assert marks.find_marker(line) == (found.start() if found else -1), line

    class Counting:
        def search(self, line: str, pos: int = 0) -> Any:
            offered[0] += len(line) - pos
            return pattern.search(line, pos)

        def match(self, line: str, pos: int = 0) -> Any:
            offered[0] += len(line) - pos
            return pattern.match(line, pos)

    monkeypatch.setattr(marks, "_marker_at", lambda: Counting())
    counts = []
    for depth in (40, 160):
        pkg = tmp_path / str(depth)
        text = _nested(pkg, depth)
        offered[0] = 0
        assert conflicts.main([str(pkg)]) == 0  # the marker is listed apart: no update recorded it
        assert resolve.main([str(pkg), "--take", "upstream"]) == 0
        counts.append(offered[0])
        assert (pkg / "cm.yaml").read_text() == text
    small, large = counts
    assert large <= 4 * small + 200, counts

    deep = tmp_path / "deep"
    text = _nested(deep, 4000)
    for args in (["conflicts", str(deep)], ["resolve", str(deep), "--take", "upstream"]):
        proc = _cli(*args)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
        assert "cm.yaml is nested deeper than 1000 levels" in proc.stderr, proc.stderr
    assert (deep / "cm.yaml").read_text() == text
