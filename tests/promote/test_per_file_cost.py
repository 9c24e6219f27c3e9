"""What a promote run pays per file (issue 45: promote over 5,000 files within 2x ``grep -rl``).

A file without a marker costs a read and one ``bytes.find`` per screening token, never
``bytes.__contains__``: CPython 3.11 and 3.12 read that operand as an integer first and
format and clear a TypeError before searching, which cost more than the search on each of
the thousands of files a large run passes by.  The tests run the real command in-process,
its reads handing out bytes that count how they are searched.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from krm_merge import cli
from krm_merge.commands import promote as promote_command
from krm_merge.krm import display
from krm_merge.promote import changes
from krm_merge.promote import files as promote_files
from krm_merge.yaml import load

from .test_entry_points import M, RELEASE

# the module (the package's name `parse` is its function)
parse = importlib.import_module("krm_merge.krm.fastyaml.parse")

SEARCHES: Counter[str] = Counter()


class CountedBytes(bytes):
    """The bytes of a file as the screen reads them, counting how they are searched."""

    def __contains__(self, token: Any) -> bool:
        SEARCHES["contains"] += 1
        return super().__contains__(token)

    def find(self, *args: Any) -> int:
        SEARCHES["find"] += 1
        return super().find(*args)


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    real = promote_files._read_fd
    monkeypatch.setattr(promote_files, "_read_fd", lambda fd: CountedBytes(real(fd)))
    SEARCHES.clear()
    return SEARCHES


def _tree(root: Path, plain: int) -> None:
    for n in range(plain):
        (root / f"cm-{n}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{n}\n")
    (root / "marked.yaml").write_text(RELEASE.format(name="a", m=M))


@pytest.mark.parametrize("plain", [3, 30])
def test_a_file_without_a_marker_costs_one_find_per_token(tmp_path: Path, counted: Counter[str], plain: int,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _tree(tmp_path, plain)
    assert promote_command.main([str(tmp_path), "--set", "default:podinfo:prod=6.3.0", "--dry-run"]) == 0
    assert "+      version: 6.3.0 # {" in capsys.readouterr().out  # it did find and promote the marked file
    assert counted["contains"] == 0
    # --set screens for the marker key and the Pipeline API group: two finds a plain file; the marked one holds
    # the key (one find), then the plan's test for the key and the Pipeline lookup's for the group
    assert counted["find"] == 2 * plain + 3


def test_holds_is_a_substring_test() -> None:
    assert promote_files.holds(b'x: 1 # {"$promotion": "a:b:c"}\n', (b"$imagepolicy", b"$promotion"))
    assert not promote_files.holds(b"x: 1\n", (b"$promotion",)) and not promote_files.holds(b"x", ())


class Spy:
    """A compiled pattern that counts the calls made on it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return method(*args, **kwargs)
        return counted


def test_a_small_marked_document_is_checked_without_a_pattern_tried_at_every_character(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The bounds' deep-line search, the stream split's marker search and the fast reader's control-character
    search each tried their pattern at every character of every marked document (~40M instructions of the
    bench's 200 documents); a document shorter than a deep line, holding no line that starts a marker, or ASCII
    is decided by string methods."""
    deep, markers, controls = Spy(load._deep_line()), Spy(changes._DOCUMENT_MARKER), Spy(parse._ASCII_CONTROL)
    monkeypatch.setattr(load, "_deep_line", lambda: deep)
    monkeypatch.setattr(changes, "_DOCUMENT_MARKER", markers)
    monkeypatch.setattr(parse, "_ASCII_CONTROL", controls)
    _tree(tmp_path, 3)
    assert promote_command.main([str(tmp_path), "--set", "default:podinfo:prod=6.3.0", "--dry-run"]) == 0
    assert "+      version: 6.3.0 # {" in capsys.readouterr().out
    assert (deep.calls, markers.calls, controls.calls) == (0, 0, 0)
    # a stream with a marker line, a long text and a text that is not ASCII still take the patterns
    assert changes.split_stream("a: 1\n---\nb: 2\n") == [(0, "a: 1\n"), (9, "b: 2\n")] and markers.calls == 1
    load.check_bounds("a: 1\n" * load.MAX_DEPTH, "t")
    assert deep.calls == 1
    assert parse.parse("a: caf\xe9\n") is not None and controls.calls == 1


@pytest.mark.parametrize("code", range(128))
def test_the_ascii_test_of_the_fast_reader_is_its_pattern(code: int) -> None:
    text = f"a: b{chr(code)}c\nd: e\n"
    assert parse._outside_charset(text) == bool(re.search("[\x00-\x09\x0b-\x1f\x7f]", text))


@pytest.mark.parametrize("text", ["a: 1\n", "a: x---y\nb: '...'\nc: 50%\n", "--- # c\na: 1\n", "a: 1\n...\n",
                                  "%YAML 1.2\n---\na: 1\n", "a: 1\n---x\n", "a: 1\r\n---\r\nb: 2\r\n", "", "...\n"])
def test_the_stream_split_skips_its_search_only_where_it_finds_nothing(text: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    markers = Spy(changes._DOCUMENT_MARKER)
    monkeypatch.setattr(changes, "_DOCUMENT_MARKER", markers)
    found = re.search(r"^(?:---|\.\.\.|%)", text, re.M) is not None
    chunks = changes.split_stream(text)
    assert markers.calls == found
    if not found:
        assert chunks == [(0, text)]


def test_a_dry_runs_ascii_output_is_printed_without_the_escapers_pattern(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every line a command prints passes through the one escaper (krm/display.py); its pattern, a Unicode class
    tried at every character, cost more than the diffs of the bench's 200 files (~26M instructions).  ASCII
    text holding no control character is printed as it is; a control character is still escaped."""
    controls = Spy(display._controls())
    monkeypatch.setattr(display, "_controls", lambda: controls)
    _tree(tmp_path, 3)
    assert cli.main(["promote", str(tmp_path), "--set", "default:podinfo:prod=6.3.0", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "+      version: 6.3.0 # {" in out and "6.3.0" in err
    assert controls.calls == 0
    (tmp_path / "evil\x1b[2J.yaml").write_text(RELEASE.format(name="e", m=M))  # a name holding a control sequence
    assert cli.main(["promote", str(tmp_path), "--set", "default:podinfo:prod=6.3.0", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "+++ b/evil\\x1b[2J.yaml" in out and "\x1b" not in out + err and controls.calls > 0


_ALPHABET = ["a", " ", "\n", "\r", "\t", "\x1b", "\x7f", "\x00", "\x0b", "\x85", "\u202e", "\u200b"]


def test_the_escapers_ascii_shortcut_is_its_pattern() -> None:
    def by_pattern(text: str) -> str:
        return display._controls().sub(display._escape_one, text)

    for size in range(1, 5):
        for letters in itertools.product(_ALPHABET, repeat=size):
            text = "".join(letters)
            assert display.escape_controls(text) == by_pattern(text), repr(text)
