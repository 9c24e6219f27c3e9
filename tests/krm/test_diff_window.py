"""files.unified_diff on large files: diffed on the changed window, streamed file by file.

A dry run of one 60 MB file held two line lists of the whole file (1.2 GB peak against
0.65 GB for the write it previews).  The window must give the same diff as difflib on
the whole texts, and cost memory in proportion to the change, not the file.
"""

from __future__ import annotations

import difflib
import tracemalloc

import pytest

from krm_merge import files

BASE = "".join(f"  key{i}: value{i}\n" for i in range(60000))  # 1.3 MB: above the window threshold


def difflib_diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile="a/f.yaml", tofile="b/f.yaml")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@pytest.mark.parametrize(("before", "after"), [
    (BASE, BASE.replace("key30000: value30000", "key30000: changed")),
    (BASE, BASE.replace("key0: value0", "key0: first")),
    (BASE, BASE.replace("key59999: value59999", "last")),
    ("x\n" + BASE, BASE),
    (BASE, BASE + "added: at the end\n"),
    (BASE, BASE[:-1]),
    (BASE[:-1], BASE),
    (BASE, BASE.replace("  key30000: value30000\n", "")),
    (BASE, BASE.replace("  key20: value20\n", "  key20: a\n  inserted: b\n").replace("key40000: value40000", "c")),
    (BASE, BASE.replace("\n", "\r\n", 1)),
    (BASE, ""),
    ("", BASE),
], ids=["middle", "first", "last", "removed-first", "appended", "final-newline-dropped", "final-newline-added",
        "line-deleted", "two-hunks", "crlf", "emptied", "created"])
def test_window_gives_difflibs_diff(before: str, after: str) -> None:
    assert files.unified_diff([("f.yaml", before, after)]) == difflib_diff(before, after)


def test_a_text_with_other_line_breaks_is_diffed_whole() -> None:
    before = BASE.replace("key5: value5\n", "key5: value5\x0c\n")
    after = before.replace("key30000: value30000", "changed")
    assert files.unified_diff([("f.yaml", before, after)]) == difflib_diff(before, after)


def test_memory_follows_the_change_not_the_file() -> None:
    big = BASE * 4  # 5.3 MB, 240,000 lines: two line lists of it would take tens of MB
    after = big.replace("key30000: value30000", "key30000: changed", 1)
    tracemalloc.start()
    try:
        chunks = list(files.iter_unified_diff([("f.yaml", big, after)]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "".join(chunks) == difflib_diff(big, after)
    assert peak < 1_000_000, peak


def test_files_come_one_chunk_each() -> None:
    chunks = list(files.iter_unified_diff([("a.yaml", "x: 1\n", "x: 2\n"), ("b.yaml", None, "y: 1\n")]))
    assert len(chunks) == 2 and chunks[0].startswith("--- a/a.yaml") and chunks[1].startswith("--- /dev/null")
