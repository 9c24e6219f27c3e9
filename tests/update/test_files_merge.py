"""``update --files merge``: which non-KRM files are merged, against a small model of the rule.

The model: a file only local changed is kept, one only upstream changed is
taken (kpt's rules, as with the default ``--files keep-local``); one both
changed (or both added) differently is git's ``merge-file --diff3`` of the
three versions, run here directly; a binary one is local's, with a warning;
one deleted on a side and changed on the other follows kpt (local's change or
local's deletion is kept).  Resources are in every copy so that the
resource merge runs too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.commands import update
from krm_merge.outcomes.kinds import FileKept, FileMerged, KeptReason, Region
from krm_merge.update import git as update_git, plan as update_plan, planner
from krm_merge.update.result import FilesPolicy

from tests.conftest import require_binary
from tests.helpers import locked_kptfile

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '1'\n"
NAMES = ("README.md", "scripts/run.sh", "data.json", "logo.png")
ORIGIN_TEXT = "one\ntwo\nthree\nfour\nfive\nsix\n"
# Versions of a file: absent, the origin text, edits at the top / bottom / same middle line, CRLF,
# no final newline, empty, binary.
VERSIONS = st.sampled_from([
    None,
    ORIGIN_TEXT.encode(),
    ORIGIN_TEXT.replace("one", "ONE").encode(),
    ORIGIN_TEXT.replace("six", "SIX").encode(),
    ORIGIN_TEXT.replace("three", "local 3").encode(),
    ORIGIN_TEXT.replace("three", "upstream 3").encode(),
    ORIGIN_TEXT.replace("\n", "\r\n").encode(),
    ORIGIN_TEXT.removesuffix("\n").replace("five", "5").encode(),
    b"",
    b"\x89PNG\r\n\x1a\n\0\0",
    "café\n".encode("latin-1"),
])


@pytest.fixture(scope="module", autouse=True)
def git() -> None:
    require_binary("git")


def write(root: Path, contents: dict[str, bytes | None]) -> None:
    root.mkdir(parents=True)
    (root / "cm.yaml").write_text(CM)
    for rel, data in contents.items():
        if data is not None:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)


def git_merge(tmp: Path, local: bytes, origin: bytes, upstream: bytes) -> tuple[bytes, int]:
    for name, data in (("local", local), ("origin", origin), ("upstream", upstream)):
        (tmp / name).write_bytes(data)
    proc = subprocess.run(["git", "merge-file", "-p", "--diff3", "local", "origin", "upstream"],
                          cwd=tmp, capture_output=True, timeout=60)
    assert 0 <= proc.returncode < 128, proc.stderr
    return proc.stdout, proc.returncode


def binary(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return b"\0" in data


def model(tmp: Path, local: bytes | None, origin: bytes | None, upstream: bytes | None) -> tuple[bytes | None, int, bool]:
    """(the file after the update, conflicts left in it, whether a binary warning names it)."""
    if local is None:
        return (upstream if origin is None else None), 0, False
    if local == origin:
        return upstream, 0, False
    if upstream is None or upstream == origin or upstream == local:
        return local, 0, False
    if any(binary(d) for d in (local, origin or b"", upstream)):
        return local, 0, True
    scratch = tmp / "git"
    scratch.mkdir(exist_ok=True)
    merged, conflicts = git_merge(scratch, local, origin or b"", upstream)
    return merged, conflicts, False


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(VERSIONS, VERSIONS, VERSIONS), min_size=len(NAMES), max_size=len(NAMES)))
def test_merge_follows_the_model(tmp_path_factory: pytest.TempPathFactory, cases: list) -> None:
    tmp = tmp_path_factory.mktemp("files")
    for side, index in (("local", 0), ("origin", 1), ("upstream", 2)):
        write(tmp / side, {name: case[index] for name, case in zip(NAMES, cases)})
    plan = planner.plan_update(tmp / "local", tmp / "origin", tmp / "upstream", files_policy=FilesPolicy.MERGE)
    update_plan.apply_plan(tmp / "local", plan)
    conflicts, warned = 0, []
    for name, (local, origin, upstream) in zip(NAMES, cases):
        expected, count, warn = model(tmp, local, origin, upstream)
        path = tmp / "local" / name
        assert (path.read_bytes() if path.exists() else None) == expected, name
        conflicts += count
        if warn:
            warned.append(name)
    merged = [o for o in plan.outcomes if isinstance(o, FileMerged)]
    assert sum(len(m.regions) for m in merged) == conflicts
    binaries = [o.path for o in plan.outcomes if isinstance(o, FileKept) and o.reason is KeptReason.BINARY]
    assert sorted(binaries) == sorted(warned)


def test_default_keeps_a_locally_changed_file_whole_as_kpt(tmp_path: Path) -> None:
    write(tmp_path / "origin", {"README.md": b"a\nb\nc\n"})
    write(tmp_path / "upstream", {"README.md": b"a\nb\nC\n"})
    write(tmp_path / "local", {"README.md": b"A\nb\nc\n"})
    plan = planner.plan_update(tmp_path / "local", tmp_path / "origin", tmp_path / "upstream")
    assert [w.path for w in plan.writes if w.path == "README.md"] == []
    assert not [o for o in plan.outcomes if isinstance(o, FileMerged)]
    # kpt drops upstream's change without a word; the plan says so, and how to take it
    assert [o for o in plan.outcomes if isinstance(o, FileKept)] == [FileKept("README.md", KeptReason.CHANGED_LOCALLY)]


def test_command_merges_and_reports_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "origin", {"README.md": b"a\nb\nc\n", "run.sh": b"x\n", "logo.png": b"\0a"})
    write(tmp_path / "upstream", {"README.md": b"a\nb\nC\n", "run.sh": b"theirs\n", "logo.png": b"\0u"})
    write(tmp_path / "local", {"README.md": b"A\nb\nc\n", "run.sh": b"mine\n", "logo.png": b"\0l",
                               "Kptfile": locked_kptfile().encode()})  # what the conflict ledger is bound to
    args = [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream")]
    assert update.main([*args, "--files", "merge"]) == 3  # a diff3 region is left for a person, whatever --conflicts
    out, err = capsys.readouterr()
    assert out == ""  # every human line is on stderr
    assert "2 non-KRM file(s) merged (1 with conflict markers left)" in err
    assert "krm-merge update: merged: README.md: changes of local and upstream combined" in err
    assert "krm-merge update: conflict: run.sh:1: lines changed on both sides; diff3 markers left (lines 1-7)" in err
    assert "krm-merge update: kept local: logo.png: binary file" in err
    assert (tmp_path / "local" / "README.md").read_bytes() == b"A\nb\nC\n"
    assert (tmp_path / "local" / "run.sh").read_text().startswith("<<<<<<< local\nmine\n")
    assert (tmp_path / "local" / "logo.png").read_bytes() == b"\0l"


def test_results_and_report_name_each_merged_file_and_conflict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "origin", {"README.md": b"a\nb\nc\n", "bin/run.sh": b"x\n", "logo.png": b"\0a"})
    write(tmp_path / "upstream", {"README.md": b"a\nb\nC\n", "bin/run.sh": b"theirs\n", "logo.png": b"\0u"})
    write(tmp_path / "local", {"README.md": b"A\nb\nc\n", "bin/run.sh": b"mine\n", "logo.png": b"\0l",
                               "Kptfile": locked_kptfile().encode()})
    results, report = tmp_path / "results.yaml", tmp_path / "report.json"
    assert update.main([str(tmp_path / "local"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream"),
                        "--files", "merge", "--results", str(results), "--report", "json", str(report)]) == 3
    import yaml

    warnings = [r for r in yaml.safe_load(results.read_text())["results"] if r["severity"] == "warning"]
    assert [(r["file"], r["tags"], r["message"].split(": ")[0]) for r in warnings] == [
        ({"path": "bin/run.sh"}, {"kind": "fileMerged"}, "bin/run.sh:1"),
        ({"path": "logo.png"}, {"kind": "fileKept"}, "logo.png"),
    ]
    assert "binary file (NUL byte or not UTF-8 in local, origin, upstream) changed on both sides" in warnings[1]["message"]
    data = json.loads(report.read_text())
    merged = [(o["path"], o["regions"], o["decision"]) for o in data["outcomes"] if o["kind"] == "fileMerged"]
    assert merged == [("README.md", [], "marked"), ("bin/run.sh", [{"line": 1, "endLine": 7}], "marked")]
    [kept] = [o for o in data["outcomes"] if o["kind"] == "fileKept"]
    assert (kept["path"], kept["reason"], kept["severity"]) == ("logo.png", "binary", "warning")
    from krm_merge.outcomes import render
    from krm_merge.outcomes.report import Report

    report_of = Report("update", "local")
    report_of.extend([FileMerged("README.md"), FileMerged("bin/run.sh", (Region(1, 7),))])
    markdown = render.report_markdown(report_of)
    assert "| `README.md` | none |\n| `bin/run.sh` | lines 1-7 |\n" in markdown


def test_a_text_conflict_counts_under_conflicts_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "origin", {"run.sh": b"x\n"})
    write(tmp_path / "upstream", {"run.sh": b"theirs\n"})
    write(tmp_path / "local", {"run.sh": b"mine\n"})
    args = [str(tmp_path / "local"), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream")]
    assert update.main([*args, "--files", "merge", "--conflicts", "fail"]) == 1
    assert "1 conflicting field(s); nothing written" in capsys.readouterr().err
    assert (tmp_path / "local" / "run.sh").read_bytes() == b"mine\n"


@pytest.mark.e2e
def test_git_update_merges_what_kpt_keeps_and_agrees_on_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_binary("kpt")
    from .world import World, cm, read_tree

    world = World(tmp_path, monkeypatch)
    world.commit({"cm.yaml": cm("cm", "1"), "README.md": "# pkg\n\nintro\n\nusage\n", "run.sh": "echo 1\n"})
    world.get()
    world.commit({"cm.yaml": cm("cm", "2"), "README.md": "# pkg\n\nintro\n\nusage v2\n", "run.sh": "echo 2\n"})
    world.edit_local({"README.md": "# my pkg\n\nintro\n\nusage\n", "run.sh": "echo local\n"})
    assert world.update_kpt().returncode == 0
    assert world.update_ours(None, "resource-merge", "--files", "merge") == 3  # run.sh's region is left
    ours, kpts = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    assert ours.pop(".krm-merge.conflicts")  # the ledger recording it
    assert kpts["README.md"] == "# my pkg\n\nintro\n\nusage\n"  # kpt: local's whole, upstream's change dropped
    assert ours["README.md"] == "# my pkg\n\nintro\n\nusage v2\n"
    assert ours["run.sh"] == "<<<<<<< local\necho local\n||||||| origin\necho 1\n=======\necho 2\n>>>>>>> upstream\n"
    assert {k: v for k, v in ours.items() if k not in ("README.md", "run.sh")} == \
        {k: v for k, v in kpts.items() if k not in ("README.md", "run.sh")}
    # A package with markers left in a non-KRM file still renders.
    world.kpt("fn", "render", str(world.our_pkg))


@pytest.mark.e2e
def test_a_remote_subpackages_files_are_merged_and_named_in_the_user_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    require_binary("kpt")
    from .world import World, cm

    world = World(tmp_path, monkeypatch)
    world.commit({"cm.yaml": cm("cm", "1")})
    world.get()
    other = world.tmp / "other"
    (other / "pkg").mkdir(parents=True)
    world.git("init", "-q", "-b", "main", cwd=other)
    (other / "pkg" / "o.yaml").write_text(cm("o", "1"))
    (other / "pkg" / "notes.txt").write_text("a\nb\nc\nd\n")
    world.git("add", "-A", cwd=other)
    world.git("commit", "-qm", "o", cwd=other)
    world.kpt("pkg", "get", f"file://{other}.git/pkg@main", "remote", cwd=world.our_pkg)
    (other / "pkg" / "notes.txt").write_text("a\nb\nc\nD\n")
    world.git("commit", "-qam", "o2", cwd=other)
    world.commit({"cm.yaml": cm("cm", "2")})
    (world.our_pkg / "remote" / "notes.txt").write_text("A\nb\nc\nd\n")
    plan = update_git.plan_git_update(world.our_pkg, None, files_policy=FilesPolicy.MERGE)
    assert [o for o in plan.outcomes if isinstance(o, FileMerged)] == [FileMerged("remote/notes.txt")]
    update_plan.apply_plan(world.our_pkg, plan)
    assert (world.our_pkg / "remote" / "notes.txt").read_text() == "A\nb\nc\nD\n"


@pytest.mark.e2e
def test_plain_yaml_files_are_merged_as_data_with_comments_as_kpt_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A values.yaml or config file without apiVersion/kind is already merged by the resource merge (no flag needed)."""
    require_binary("kpt")
    from .world import World, cm

    world = World(tmp_path, monkeypatch)
    values = "# helm values\nreplicas: 1 # count\nimage:\n  tag: v1\n"
    world.commit({"cm.yaml": cm("cm", "1"), "values.yaml": values, "config.yaml": "a: 1\nb: 1\n"})
    world.get()
    world.commit({"values.yaml": values.replace("v1", "v2"), "config.yaml": "a: 1\nb: 2\n"})
    world.edit_local({"values.yaml": values.replace("1 #", "3 #"), "config.yaml": "a: 2\nb: 1\n"})
    assert world.update_kpt().returncode == 0
    assert world.update_ours(None, "resource-merge", "--files", "merge") == 0
    for pkg in (world.kpt_pkg, world.our_pkg):
        assert (pkg / "values.yaml").read_text() == "# helm values\nreplicas: 3 # count\nimage:\n  tag: v2\n"
        assert (pkg / "config.yaml").read_text() == "a: 2\nb: 2\n"
