"""merge3.textfile: git's merge of non-KRM files, the marker finder, binary detection.

The merge is ``git merge-file`` itself, so comparing its text with git's
would prove nothing; these tests pin what is ours around it: the labels and
marker style, the marker finder (checked against the conflicts git counts on
generated inputs), what counts as binary, and the edge cases of the bytes
handed to git (CRLF, no final newline, empty files, a file added on both sides).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.krm.results import KrmError
from krm_merge.merge3 import textfile
from krm_merge.outcomes.kinds import KeptReason

from tests.conftest import require_binary

pytestmark = pytest.mark.usefixtures("git")


@pytest.fixture(scope="module")
def git() -> None:
    require_binary("git")


def git_count(tmp: Path, local: bytes, origin: bytes, upstream: bytes) -> int:
    """The number of conflicts git merge-file reports for three texts (its exit status)."""
    for name, data in (("l", local), ("o", origin), ("u", upstream)):
        (tmp / name).write_bytes(data)
    proc = subprocess.run(["git", "merge-file", "-p", "--diff3", "l", "o", "u"], cwd=tmp, capture_output=True, timeout=60)
    assert 0 <= proc.returncode < 128, proc.stderr
    return proc.returncode


def test_same_lines_changed_leave_diff3_markers_labelled_local_origin_upstream() -> None:
    merged = textfile.merge_file("run.sh", b"a\nmine\nc\n", b"a\nb\nc\n", b"a\ntheirs\nc\n")
    assert merged.merged
    assert merged.data == (
        b"a\n<<<<<<< local\nmine\n||||||| origin\nb\n=======\ntheirs\n>>>>>>> upstream\nc\n"
    )
    assert merged.conflicts == [textfile.MarkerRegion(start=2, base=4, separator=6, end=8)]


def test_changes_in_different_places_are_combined() -> None:
    origin = b"".join(b"line %d\n" % i for i in range(10))
    local = origin.replace(b"line 1\n", b"LOCAL 1\n")
    upstream = origin.replace(b"line 8\n", b"UPSTREAM 8\n")
    merged = textfile.merge_file("README.md", local, origin, upstream)
    assert merged.data == origin.replace(b"line 1\n", b"LOCAL 1\n").replace(b"line 8\n", b"UPSTREAM 8\n")
    assert merged.conflicts == []


def test_the_users_git_config_does_not_change_the_marker_style(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[merge]\n\tconflictStyle = merge\n[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    merged = textfile.merge_file("f", b"mine\n", b"base\n", b"theirs\n")
    assert b"||||||| origin\nbase\n" in merged.data


def test_crlf_texts_get_crlf_markers_found_by_the_finder() -> None:
    merged = textfile.merge_file("notes.txt", b"a\r\nmine\r\n", b"a\r\nb\r\n", b"a\r\ntheirs\r\n")
    assert b"<<<<<<< local\r\n" in merged.data and b">>>>>>> upstream\r\n" in merged.data
    assert b"\n" not in merged.data.replace(b"\r\n", b"")
    assert len(merged.conflicts) == 1


def test_a_missing_final_newline_is_kept_where_git_keeps_it() -> None:
    merged = textfile.merge_file("f", b"A\nb\nc", b"a\nb\nc", b"a\nb\nC")
    assert merged.data == b"A\nb\nC"


def test_a_file_added_on_both_sides_is_merged_on_an_empty_base() -> None:
    same_start = textfile.merge_file("f", b"x\nmine\n", None, b"x\ntheirs\n")
    assert same_start.data.startswith(b"<<<<<<< local\n")
    assert b"||||||| origin\n=======\n" in same_start.data
    assert len(same_start.conflicts) == 1


def test_empty_files_merge() -> None:
    emptied_locally = textfile.merge_file("f", b"", b"a\n", b"a\nb\n")
    assert emptied_locally.data == b"<<<<<<< local\n||||||| origin\na\n=======\na\nb\n>>>>>>> upstream\n"
    assert emptied_locally.conflicts == [textfile.MarkerRegion(1, 2, 4, 7)]
    emptied_upstream = textfile.merge_file("f", b"a\nb\nc\nd\n", b"a\nb\nc\n", b"")
    assert emptied_upstream.conflicts  # local added a line to a file upstream emptied: git calls it a conflict


@pytest.mark.parametrize("data", [b"a\0b\n", b"caf\xe9\n", b"\xff\xfe"])
def test_binary_files_are_not_merged_local_is_kept_and_named(data: bytes) -> None:
    for local, origin, upstream in ((data, b"a\n", b"b\n"), (b"x\n", data, b"b\n"), (b"x\n", b"a\n", data)):
        merged = textfile.merge_file("logo.png", local, origin, upstream)
        assert not merged.merged and merged.data == local and merged.conflicts == []
        assert merged.kept is KeptReason.BINARY and merged.detail.startswith("NUL byte or not UTF-8 in ")


def test_is_binary_is_a_nul_byte_or_not_utf8() -> None:
    assert not textfile.is_binary("naïve ✓\n".encode())
    assert not textfile.is_binary(b"")
    assert textfile.is_binary(b"\0")
    assert textfile.is_binary(b"\xc3")


@pytest.mark.parametrize(
    ("local", "origin", "upstream", "expected"),
    [
        (b"l", b"o", b"u", True),
        (b"l", None, b"u", True),  # added on both sides, differently
        (b"same", None, b"same", False),
        (b"l", b"o", b"o", False),  # only local changed: kept
        (b"o", b"o", b"u", False),  # only upstream changed: kpt's rule takes it
        (b"l", b"o", None, False),  # deleted upstream, changed locally: kpt keeps local
        (None, b"o", b"u", False),  # deleted locally: stays deleted
        (b"l", b"o", b"l", False),
    ],
)
def test_needs_merge(local: bytes | None, origin: bytes | None, upstream: bytes | None, expected: bool) -> None:
    assert textfile.needs_merge(local, origin, upstream) is expected


def test_without_git_the_merge_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(KrmError, match="README.md: update --files merge needs git on PATH"):
        textfile.merge_file("README.md", b"l\n", b"o\n", b"u\n")


def test_find_markers_takes_any_labels_and_skips_incomplete_regions() -> None:
    text = (
        "a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> branch\n"  # merge style, no base
        "<<<<<<< only a start\n"
        "b\n<<<<<<<\nl\n|||||||\no\n=======\nu\n>>>>>>>\n"
        "======= not a separator\n"
    )
    assert textfile.find_markers(text) == [
        textfile.MarkerRegion(2, 0, 4, 6),
        textfile.MarkerRegion(9, 11, 13, 15),
    ]
    assert textfile.find_markers("<<<<<<<< eight\n========\n>>>>>>>> eight\n") == []


LINES = st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n", "x\n", "y\n", "\n"])
TEXTS = st.lists(LINES, max_size=12).map("".join)
CHANGE = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 3), st.lists(LINES, max_size=3)), max_size=3)


def edited(base: str, changes: list[tuple[int, int, list[str]]]) -> str:
    lines = base.splitlines(keepends=True)
    for at, cut, new in changes:
        at = min(at, len(lines))
        lines[at:at + cut] = new
    return "".join(lines)


@settings(max_examples=examples(150), deadline=None)
@given(base=TEXTS, ours=CHANGE, theirs=CHANGE, crlf=st.booleans(), chop=st.booleans())
def test_the_finder_sees_every_conflict_git_counts(
    tmp_path_factory: pytest.TempPathFactory, base: str, ours: list, theirs: list, crlf: bool, chop: bool,
) -> None:
    texts = [base, edited(base, ours), edited(base, theirs)]
    if chop:
        texts = [t.removesuffix("\n") for t in texts]
    if crlf:
        texts = [t.replace("\n", "\r\n") for t in texts]
    origin, local, upstream = (t.encode() for t in texts)
    merged = textfile.merge_file("f", local, origin, upstream)
    count = git_count(tmp_path_factory.mktemp("git"), local, origin, upstream)
    assert len(merged.conflicts) == count
    lines = merged.data.decode().splitlines()
    for region in merged.conflicts:
        assert lines[region.start - 1] == "<<<<<<< local"
        assert lines[region.base - 1] == "||||||| origin"
        assert lines[region.separator - 1] == "======="
        assert lines[region.end - 1] == ">>>>>>> upstream"
