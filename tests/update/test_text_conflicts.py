"""``conflicts``/``resolve`` on the diff3 regions ``update --files merge`` leaves in non-KRM files.

The regions are the ``text`` kind of marker (``commands.conflicts``): listed with
file and line, decided by ``resolve --take local|upstream`` with every other line
(and its line end) kept, and only regions labelled local/origin/upstream count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from krm_merge.commands import conflicts, resolve, update

from tests.conftest import require_binary
from tests.helpers import locked_kptfile

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '1'\n"
ORIGIN = "title\none\ntwo\nthree\nfour\nfive\n"
LOCAL = ORIGIN.replace("two", "local two").replace("five", "five and more")
UPSTREAM = ORIGIN.replace("two", "upstream two").replace("title", "Title")


@pytest.fixture(autouse=True)
def git() -> None:
    require_binary("git")


def package(tmp: Path, eol: str = "\n") -> Path:
    for name, text in (("origin", ORIGIN), ("local", LOCAL), ("upstream", UPSTREAM)):
        (tmp / name).mkdir()
        (tmp / name / "cm.yaml").write_text(CM)
        (tmp / name / "NOTES.txt").write_bytes(text.replace("\n", eol).encode())
    (tmp / "local" / "Kptfile").write_text(locked_kptfile())  # what the conflict ledger is bound to
    return tmp / "local"


def merged(tmp: Path, *extra: str, eol: str = "\n") -> Path:
    pkg = package(tmp, eol)
    code = update.main([str(pkg), "--origin", str(tmp / "origin"), "--upstream", str(tmp / "upstream"),
                        "--files", "merge", *extra])
    assert code in (0, 3)
    return pkg


def test_conflicts_lists_a_diff3_region_with_file_line_and_the_three_sides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = merged(tmp_path)
    text = (pkg / "NOTES.txt").read_text()
    assert "<<<<<<< local\n" in text and "Title\n" in text  # upstream's change elsewhere was combined
    capsys.readouterr()
    assert conflicts.main([str(pkg), "--output", "json"]) == 3
    (found,) = json.loads(capsys.readouterr().out)
    assert found["kind"] == "text" and found["file"] == "NOTES.txt"
    assert found["line"] == text.splitlines().index("<<<<<<< local") + 1
    assert (found["local"], found["origin"], found["upstream"]) == ("local two\n", "two\n", "upstream two\n")


@pytest.mark.parametrize("take, line", [("local", "local two"), ("upstream", "upstream two")])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_resolve_keeps_one_side_and_every_other_line(tmp_path: Path, take: str, line: str, eol: str) -> None:
    pkg = merged(tmp_path, eol=eol)
    assert resolve.main([str(pkg), "--take", take]) == 0
    expected = ORIGIN.replace("title", "Title").replace("two", line).replace("five", "five and more")
    assert (pkg / "NOTES.txt").read_bytes() == expected.replace("\n", eol).encode()
    assert conflicts.main([str(pkg)]) == 0


@pytest.mark.parametrize("policy", [[], ["--conflicts", "mark"], ["--conflicts", "local-wins"]])
def test_an_update_leaving_regions_exits_3_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        policy: list[str]) -> None:
    """Issue 34: ``--files merge`` without ``mark`` exited 0 with ``<<<<<<<`` left in files."""
    pkg = package(tmp_path)
    code = update.main([str(pkg), "--origin", str(tmp_path / "origin"), "--upstream", str(tmp_path / "upstream"),
                        "--files", "merge", *policy])
    assert code == 3
    assert "0 conflict(s) marked '# krm-merge:conflict' and 1 diff3 region(s) left in " in capsys.readouterr().err


def two_regions(tmp: Path) -> Path:
    """NOTES.txt with two regions left (its lines two and six changed on both sides)."""
    origin = "title\none\ntwo\nthree\nfour\nfive\nsix\n"
    for name, text in (("origin", origin), ("local", origin.replace("two", "L2").replace("six", "L6")),
                       ("upstream", origin.replace("two", "U2").replace("six", "U6"))):
        (tmp / name).mkdir()
        (tmp / name / "cm.yaml").write_text(CM)
        (tmp / name / "NOTES.txt").write_text(text)
    pkg = tmp / "local"
    (pkg / "Kptfile").write_text(locked_kptfile())
    assert update.main([str(pkg), "--origin", str(tmp / "origin"), "--upstream", str(tmp / "upstream"),
                        "--files", "merge"]) == 3
    return pkg


def test_regions_are_decided_one_file_or_one_line_at_a_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: ``conflicts`` listed ``README.md:11: (not on a field)`` but ``resolve README.md`` matched nothing."""
    pkg = two_regions(tmp_path)
    lines = (pkg / "NOTES.txt").read_text().splitlines()
    _, second = (n + 1 for n, line in enumerate(lines) if line == "<<<<<<< local")
    capsys.readouterr()
    assert resolve.main([str(pkg), "--take", "upstream", f"NOTES.txt:{second}"]) == 3
    assert "resolved 1 conflict(s)" in capsys.readouterr().err
    text = (pkg / "NOTES.txt").read_text()
    assert "U6\n" in text and "L6" not in text and "L2\n" in text and text.count("<<<<<<< local") == 1
    assert resolve.main([str(pkg), "--take", "local", f"NOTES.txt:{second}"]) == 1  # decided: no longer there
    assert resolve.main([str(pkg), "--take", "local", "NOTES.txt"]) == 0
    assert (pkg / "NOTES.txt").read_text() == "title\none\nL2\nthree\nfour\nfive\nU6\n"
    assert conflicts.main([str(pkg)]) == 0


def test_markers_with_other_labels_are_not_ours(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "cm.yaml").write_text(CM)
    (pkg / "GIT.md").write_text("<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n")
    assert conflicts.main([str(pkg)]) == 0
