"""Loops an upstream author drives grow linearly: work counted in function calls, not timed.

An upstream decides how many subpackages, folders, files, duplicate keys,
conflicts and changed lines an update goes through.  Each shape below is
planned at two sizes, eight times apart, with every Python and C function
call counted (``sys.setprofile``: deterministic, unlike a clock); a loop
over one of them nested in a loop over another (quadratic) would multiply
the calls by about 64, a linear one by 8.  docs/reliability.md lists these
with the bounds.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Callable

import pytest

from krm_merge.merge3.conflicts import ConflictPolicy
from krm_merge import files
from krm_merge.krm import pkgio
from krm_merge.outcomes import render
from krm_merge.outcomes.report import Report, State
from krm_merge.update.plan import UpdatePlan
from krm_merge.update.planner import plan_update
from krm_merge.krm.snapshot import Snapshot
from krm_merge.update.tree import remote_subpackages
from krm_merge.yaml.load import collecting_duplicate_keys

from tests.helpers import count_calls

from .world import cm, kptfile, write_tree

SMALL, LARGE = 60, 480
LINEAR = 8 * 1.3  # 8x the input: at most ~10x the calls (quadratic would be ~64x)

Copies = tuple[Path, Path, Path]


def copies(root: Path) -> Copies:
    local, origin, upstream = (root / name for name in ("local", "origin", "upstream"))
    for copy in (local, origin, upstream):
        write_tree(copy, {"Kptfile": kptfile("p")})
    return local, origin, upstream


def subpackages_changed(n: int, root: Path) -> Copies:
    """``n`` subpackages, each resource changed upstream."""
    local, origin, upstream = copies(root)
    for i in range(n):
        same = {f"s{i}/Kptfile": kptfile(f"s{i}"), f"s{i}/cm.yaml": cm(f"c{i}", "1")}
        write_tree(local, same)
        write_tree(origin, same)
        write_tree(upstream, {**same, f"s{i}/cm.yaml": cm(f"c{i}", "2")})
    return local, origin, upstream


def subpackages_deleted(n: int, root: Path) -> Copies:
    """``n`` subpackages with a non-KRM file each, all deleted upstream (each asks whether local changed it)."""
    local, origin, upstream = copies(root)
    for i in range(n):
        same = {f"s{i}/Kptfile": kptfile(f"s{i}"), f"s{i}/cm.yaml": cm(f"c{i}", "1"), f"s{i}/notes.txt": "x\n"}
        write_tree(local, same)
        write_tree(origin, same)
    return local, origin, upstream


def folders_emptied(n: int, root: Path) -> Copies:
    """``n`` folders deleted upstream while upstream adds ``n`` others."""
    local, origin, upstream = copies(root)
    for i in range(n):
        write_tree(local, {f"d{i}/f.txt": "x\n"})
        write_tree(origin, {f"d{i}/f.txt": "x\n"})
        write_tree(upstream, {f"new{i}/g.txt": "y\n"})
    return local, origin, upstream


def conflicts(n: int, root: Path) -> Copies:
    """``n`` resources in one file, each changed on both sides (conflicts marked)."""
    local, origin, upstream = copies(root)
    for copy, value in ((local, "l"), (origin, "o"), (upstream, "u")):
        write_tree(copy, {"cm.yaml": "---\n".join(cm(f"c{i}", value) for i in range(n))})
    return local, origin, upstream


def duplicate_keys(n: int, root: Path) -> Copies:
    """One upstream resource whose keys are each written twice, ``n`` of them."""
    local, origin, upstream = copies(root)
    for copy in (local, origin):
        write_tree(copy, {"cm.yaml": cm("c", "1")})
    repeated = "".join(f"  k{i}: a\n  k{i}: b\n" for i in range(n))
    write_tree(upstream, {"cm.yaml": cm("c", "2").replace("data:\n", "data:\n" + repeated)})
    return local, origin, upstream


def plan(shape: Callable[[int, Path], Copies], n: int, root: Path) -> Callable[[], object]:
    local, origin, upstream = shape(n, root)

    def run() -> object:
        with collecting_duplicate_keys():
            return dry_run(local, plan_update(local, origin, upstream, conflicts=ConflictPolicy.MARK))

    return run


def scalable_diff(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` with the dry run's diff made as a large file's is (``files.MAX_DIFF_WORK``): below that bound the
    diff is difflib's own, exactly, and difflib's matching grows faster than the lines (by design, capped there),
    so a linearity count at test sizes would measure difflib rather than the update."""
    def scaled() -> object:
        bound, files.MAX_DIFF_WORK = files.MAX_DIFF_WORK, 0
        try:
            return run()
        finally:
            files.MAX_DIFF_WORK = bound

    return scaled


def dry_run(local: Path, plan: UpdatePlan) -> str:
    """What ``update --dry-run`` prints of a plan: the diff (checked as the write checks it), then the
    renderer's line for each outcome."""
    report = Report("update", "pkg", State.DRY_RUN)
    report.extend(plan.outcomes)
    report.add_changes(plan.changes)
    return "".join(plan.changes.diff(local)) + "\n".join(render.lines(report))


def grows_linearly(make: Callable[[int, Path], Callable[[], object]], tmp_path: Path) -> None:
    make(SMALL, tmp_path / "warm-up")()  # imports, schema tables
    small = count_calls(make(SMALL, tmp_path / "small"))
    large = count_calls(make(LARGE, tmp_path / "large"))
    assert large < small * LINEAR, (small, large, large / small)


@pytest.mark.parametrize("shape", [subpackages_changed, subpackages_deleted, folders_emptied, conflicts,
                                   duplicate_keys], ids=lambda shape: shape.__name__)
def test_an_update_grows_linearly_with_what_upstream_multiplies(
    shape: Callable[[int, Path], Copies], tmp_path: Path,
) -> None:
    grows_linearly(lambda n, root: scalable_diff(plan(shape, n, root)), tmp_path)


def test_finding_remote_subpackages_grows_linearly(tmp_path: Path) -> None:
    def make(n: int, root: Path) -> Callable[[], object]:
        remote = "upstream:\n  type: git\n  git:\n    repo: https://example.com/r\n    directory: /x\n    ref: v1\n"
        write_tree(root, {"Kptfile": kptfile("p"), **{f"s{i}/Kptfile": kptfile(f"s{i}", remote) for i in range(n)}})
        return lambda: remote_subpackages(Snapshot.local(root))  # the listing and the Kptfiles' reads

    grows_linearly(make, tmp_path)


def test_checking_names_grows_linearly(tmp_path: Path) -> None:
    """The case and Unicode-normalisation clash check of an untrusted tree: one lookup per name."""
    def make(n: int, root: Path) -> Callable[[], object]:
        write_tree(root, {f"d{i % 7}/f\u00e9{i}.txt": "x" for i in range(n * 4)})
        return lambda: pkgio.check_untrusted(root, "upstream")

    grows_linearly(make, tmp_path)


def few_distinct_lines(n: int) -> tuple[str, str]:
    """Few distinct lines, shuffled: no line is unique, every match is ambiguous."""
    shuffle = random.Random(n)
    old, new = ("".join(f"line {shuffle.randrange(300)}\n" for _ in range(n)) for _ in range(2))
    return old, new


def every_other_line_changed(n: int) -> tuple[str, str]:
    """Unique lines, a new one after each: difflib's matching recursed once per line (two minutes at 20,000)."""
    return "".join(f"a{i}\n" for i in range(n)), "".join(f"a{i}\nx{i}\n" for i in range(n))


@pytest.mark.parametrize("shape", [few_distinct_lines, every_other_line_changed], ids=lambda shape: shape.__name__)
def test_a_dry_run_diff_of_a_large_rewritten_file_grows_linearly(shape: Callable[[int], tuple[str, str]]) -> None:
    """Past ``files.MAX_DIFF_WORK`` line pairs a changed region is matched on the lines unique to both sides
    (O(n log n)), not by difflib; the diff still turns the old text into the new one."""
    sizes = (SMALL * 200, LARGE * 200)
    assert sizes[0] ** 2 > files.MAX_DIFF_WORK  # both sizes are past the bound
    texts = {n: shape(n) for n in sizes}
    files.unified_diff([("big.txt", *texts[sizes[0]])])
    small, large = (count_calls(lambda n=n: files.unified_diff([("big.txt", *texts[n])])) for n in sizes)  # type: ignore[misc]
    assert large < small * LINEAR, (small, large, large / small)
    old, new = texts[sizes[0]]
    assert applied(old, files.unified_diff([("big.txt", old, new)])) == new


def applied(old: str, diff: str) -> str:
    """``old`` with a one-file unified diff applied (as ``patch`` would)."""
    lines, out, at = old.splitlines(keepends=True), [], 0
    header = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", re.M)
    parts = header.split(diff)
    for first, count, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        start = int(first) if count == "0" else int(first) - 1  # an empty range names the line before
        out += lines[at:start]
        at = start
        for line in body.splitlines(keepends=True):
            if line[0] in " -":
                at += 1
            if line[0] in " +":
                out.append(line[1:])
    return "".join(out + lines[at:])


def test_duplicate_keys_are_noted_in_linear_time() -> None:
    """Each repeat is kept once, looked up in a set beside the list: the list alone made 100,000 repeats
    ~10^10 comparisons (in C, so not seen as calls: CPU time of 4x the repeats, as test_bounds.py checks)."""
    from krm_merge.yaml import load

    def cpu(n: int) -> float:
        text = "a:\n" + "".join(f"  k{i}: 1\n  k{i}: 2\n" for i in range(n))
        start = time.process_time()
        with collecting_duplicate_keys() as found:
            load.load_data(text, "up.yaml")
            load.load_data(text, "up.yaml")  # read twice: noted once
        assert len(found) == n
        return time.process_time() - start

    small, large = cpu(20_000), cpu(80_000)
    assert large < 8 * max(small, 0.2), (small, large)  # 4x the repeats: 4x the time, not 16x
