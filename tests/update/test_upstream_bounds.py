"""A hostile upstream against the bounds of an update: depth, names, sizes, fan-out, strategies, terminals.

Each test commits what an attacker would to a real git upstream (``World``:
``kpt pkg get``, then ``krm-merge update PKG@v2``), runs the update as a
real process where memory, leftovers or printed bytes are what is measured
(``resource.getrusage(RUSAGE_CHILDREN)`` of that child alone), and checks
that the run ends with a clear result, never a traceback.
docs/security.md and docs/reliability.md name these tests as the pins of
their rows.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import NamedTuple

import pytest

from krm_merge import files

from tests.conftest import require_binary

from .world import World, cm

pytestmark = pytest.mark.e2e

# Far above what each update takes here (a few seconds), as a guard against a hang.
HANG_GUARD_S = 120
# Address space of every child run: far above what each takes (< 300 MB resident), a guard for the machine.
MEMORY_CEILING_MB = 4096


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    require_binary("kpt")
    require_binary("git")
    return World(tmp_path, monkeypatch)


class Run(NamedTuple):
    code: int
    stdout: str
    stderr: str
    max_rss_mb: float  # the child's peak resident memory


def run_child(world: World, *argv: str, prelude: str = "", env: dict[str, str] | None = None) -> Run:
    """``krm-merge ARGV`` in a fresh process (TMPDIR the world's own), with its peak resident memory.

    ``prelude`` runs in the child first (a bound lowered on the module).  The
    memory is the child's alone: ``getrusage(RUSAGE_CHILDREN)`` of a grandchild
    that only starts and waits for it.
    """
    code = (f"import sys\n{prelude}\nfrom krm_merge.cli import main\nsys.stdout.flush()\n"
            "code = main(sys.argv[1:])\nsys.stdout.flush()\nsys.stderr.flush()\nsys.exit(code)\n")
    waiter = ("import json, resource, subprocess, sys\n"
              # a run that would take the machine's memory (main took 13 GB on one probe) fails instead
              f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CEILING_MB << 20}, {MEMORY_CEILING_MB << 20}))\n"
              "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
              "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
              "sys.stdout.write(json.dumps([p.returncode, p.stdout.decode('utf-8', 'replace'), "
              "p.stderr.decode('utf-8', 'replace'), peak / 1024]))\n")
    proc = subprocess.run([sys.executable, "-c", waiter, sys.executable, "-c", code, *argv],
                          env={**world.env, **(env or {})}, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr
    rc, out, err, peak = json.loads(proc.stdout)
    return Run(rc, out, err, peak)


def package_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- deep folders ------------------------------------------------------------------------------------


def nested(depth: int, leaf: str = "f.txt") -> str:
    return "/".join(["d"] * depth) + "/" + leaf


def remove_deep(root: Path) -> None:
    """Remove a tree however deep, independently of the code under test (pytest's own clean-up of old
    temporary folders recurses, and would fail on a later run)."""
    folders, stack = [], [str(root)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)


@pytest.fixture
def deep_cleanup(world: World):  # type: ignore[no-untyped-def]
    """Whatever deep tree a test leaves in its world (upstream's work tree, a scratch folder) is removed after it."""
    yield
    for root in (world.up / "pkg", world.tmp / "tmp", world.tmp / "ours", world.tmp / "kpt"):
        if root.exists():
            remove_deep(root)


def make_nested(root: Path, depth: int, text: str) -> None:
    """``d/d/.../f.txt``, ``depth`` folders deep, made one level at a time (``mkdir(parents=True)`` recurses)."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("f.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as fh:
        fh.write(text)
    os.close(fd)


def test_a_deep_upstream_tree_is_refused_without_a_traceback_or_a_leftover_temp_folder(
    world: World, deep_cleanup: None,
) -> None:
    """~990 nested folders: refused early (the untrusted listing), every scratch folder removed."""
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    make_nested(world.up / "pkg", 990, "deep\n")
    world.commit({}, tag="v2")
    before = package_bytes(world.our_pkg)
    tmpdir = Path(world.env["TMPDIR"])
    leftover = set(os.listdir(tmpdir))
    run = run_child(world, "update", f"{world.our_pkg}@v2")
    assert run.code == 1, run.stderr
    assert f"folders nested more than {files.MAX_TREE_DEPTH} deep; refused" in run.stderr
    assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr
    assert set(os.listdir(tmpdir)) == leftover, "a scratch folder was left in TMPDIR"
    assert package_bytes(world.our_pkg) == before


def test_a_tree_as_deep_as_the_bound_is_updated_and_nothing_is_left_in_tmp(world: World) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({nested(files.MAX_TREE_DEPTH): "deep\n", "cm.yaml": cm("cm", "2")}, tag="v2")
    tmpdir = Path(world.env["TMPDIR"])
    leftover = set(os.listdir(tmpdir))
    run = run_child(world, "update", f"{world.our_pkg}@v2", "--files", "merge")
    assert run.code == 0, run.stderr
    assert (world.our_pkg / nested(files.MAX_TREE_DEPTH)).read_text() == "deep\n"
    assert set(os.listdir(tmpdir)) == leftover


def test_remove_tree_removes_a_tree_deeper_than_the_recursion_limit_and_path_max(tmp_path: Path) -> None:
    """3,000 levels of 40-character names: 120 KB paths, far past PATH_MAX and Python's recursion limit."""
    assert hasattr(files, "remove_tree")  # else the tree below would be left for pytest's clean-up
    root = tmp_path / "scratch"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    name = "n" * 40
    for level in range(3000):
        os.mkdir(name, dir_fd=fd)
        with open(os.open("file", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as fh:
            fh.write(str(level))
        os.symlink("/etc/passwd", "link", dir_fd=fd)  # removed, never followed
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    files.remove_tree(root)
    assert not root.exists() and os.listdir(tmp_path) == []
    assert Path("/etc/passwd").exists()


# -- names one file system would merge ---------------------------------------------------------------


@pytest.mark.parametrize("names", [
    [unicodedata.normalize("NFC", "é.yaml"), unicodedata.normalize("NFD", "é.yaml")],
    ["dir/" + unicodedata.normalize("NFC", "Å.txt"), "dir/" + unicodedata.normalize("NFD", "å.txt")],
])
def test_names_equal_once_unicode_normalised_are_refused_like_case_clashes(
    world: World, names: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    world.commit({"cm.yaml": cm("cm", "1")}, tag="v1")
    world.get("v1")
    world.commit({name: cm("x", str(i)) for i, name in enumerate(names)}, tag="v2")
    assert len(set(world.git("ls-files", "-z", "pkg").split("\0")) - {""}) == 3  # git holds both names
    before = package_bytes(world.our_pkg)
    assert world.update_ours("v2") == 1
    err = capsys.readouterr().err
    assert "normalises Unicode names (NFC/NFD" in err and "Traceback" not in err, err
    assert package_bytes(world.our_pkg) == before


# -- YAML aliases: bytes after expansion, and every message and marker that shows a value ---------------


def aliased(value: str, size: int, aliases: int) -> str:
    """A ConfigMap whose list holds ``aliases`` aliases of one ``size``-character string, after ``value``."""
    items = "".join("  - *b\n" for _ in range(aliases))
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nbase: &b \"{'x' * size}\"\n"
            f"list:\n  - {value}\n{items}")


def alias_world(world: World, size: int, aliases: int) -> None:
    """Origin and local hold one alias; upstream a thousand: the list changed on both sides (a conflict)."""
    world.commit({"cm.yaml": aliased("origin", size, 1)}, tag="v1")
    world.get("v1")
    world.edit_local({"cm.yaml": aliased("local", size, 1)})
    world.commit({"cm.yaml": aliased("upstream", size, aliases)}, tag="v2")


@pytest.mark.parametrize("policy", ["mark", "local-wins"])
def test_aliases_are_bounded_in_bytes_not_only_in_nodes(world: World, policy: str) -> None:
    """A 100 KB string aliased 1,000 times (100 MB once expanded, 1,002 nodes): refused, naming the file."""
    alias_world(world, 100_000, 1_000)
    before = package_bytes(world.our_pkg)
    run = run_child(world, "update", f"{world.our_pkg}@v2", "--conflicts", policy)
    assert run.code == 1, run.stderr[:2000]
    assert "cm.yaml uses YAML aliases that expand to more than 16 MB of values" in run.stderr
    assert "KRM_MERGE_MAX_ALIAS_MB" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr) < 1_000 and run.max_rss_mb < 250, (len(run.stderr), run.max_rss_mb)
    assert package_bytes(world.our_pkg) == before


def test_an_expansion_allowed_by_the_user_still_costs_what_the_text_costs(world: World) -> None:
    """With the limit raised (2 GB of values through aliases), memory, messages and the marker stay small."""
    alias_world(world, 100_000, 20_000)
    run = run_child(world, "update", f"{world.our_pkg}@v2", "--conflicts", "mark",
                    env={"KRM_MERGE_MAX_ALIAS_MB": "4096"})
    assert run.code == 3, run.stderr[:2000]
    assert run.max_rss_mb < 250 and len(run.stderr) < 10_000, (run.max_rss_mb, len(run.stderr))
    assert os.path.getsize(world.our_pkg / "cm.yaml") < 2_100_000  # the 20,000 aliases, no expanded marker


def test_values_in_messages_and_markers_are_cut_or_not_recorded(world: World) -> None:
    """Under the alias limit (10 MB of values): the conflict line shows 1,000 characters and says it was cut;
    the marker records no 10 MB value in the package; ``conflicts`` lists it; ``resolve`` says what to do."""
    alias_world(world, 100_000, 100)
    run = run_child(world, "update", f"{world.our_pkg}@v2", "--conflicts", "mark")
    assert run.code == 3, run.stderr[:2000]
    assert len(run.stderr) < 10_000 and "\u2026 (cut: 1000 of about" in run.stderr
    text = (world.our_pkg / "cm.yaml").read_text()
    assert len(text) < 200_000 and "# krm-merge:conflict upstream=<not recorded: about 1" in text
    listed = run_child(world, "conflicts", str(world.our_pkg))
    assert listed.code != 0 and "list" in listed.stdout and len(listed.stdout) < 10_000, listed
    taken = run_child(world, "resolve", str(world.our_pkg), "--take", "upstream")
    assert taken.code == 1 and "no readable upstream value" in taken.stderr and "Traceback" not in taken.stderr
    assert run_child(world, "resolve", str(world.our_pkg), "--take", "local").code == 0
    assert "krm-merge:conflict" not in (world.our_pkg / "cm.yaml").read_text()


# -- terminal control characters from content --------------------------------------------------------

# What a terminal obeys: C0 but tab and newline (a CR only when it is not a line end), DEL, C1, bidi controls.
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes the clipboard
CSI = "\x1b[2J\x1b[31m"  # clears the screen, turns red
BIDI = "\u202e"  # right-to-left override: `pwned.txt` reads as something else
HOSTILE_TEXT = f"harmless line\n{OSC52}{CSI}clipboard\nsafe\rHIDDEN\n{BIDI}txt.hs\n"


def hostile_cm(value: str) -> str:
    """A ConfigMap whose value holds ESC (YAML's \\e escape), a C1 control and a bidi override."""
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
            f'data:\n  a: "{value}\\e]52;c;cHduZWQ=\\a\\e[2J\\x9b{BIDI}"\n')


def test_no_command_prints_a_terminal_control_character_of_content(world: World, tmp_path: Path) -> None:
    """ESC, OSC 52, CSI, CR, C1 and bidi characters in upstream file content, names and values: every command
    prints them escaped (``\\x1b``, ``\\u202e``), never raw."""
    world.commit({"cm.yaml": hostile_cm("origin"), "notes.txt": "plain\n"}, tag="v1")
    world.get("v1")
    world.edit_local({"cm.yaml": hostile_cm("local"), "notes.txt": "plain, mine\n"})
    world.commit({"cm.yaml": hostile_cm("upstream"), "notes.txt": HOSTILE_TEXT,
                  f"evil{BIDI}lmay.yaml": hostile_cm("named")}, tag="v2")
    pkg = str(world.our_pkg)
    other = tmp_path / "b.yaml"
    other.write_text(hostile_cm("other"))
    marked = tmp_path / "promoted"
    marked.mkdir()
    (marked / "cm.yaml").write_text('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n'
                                   f'data:\n  prod: "1.0{BIDI}" # {{"$promotion": "default:app:prod"}}\n')
    runs = {
        "update --dry-run": run_child(world, "update", f"{pkg}@v2", "--dry-run", "--files", "merge",
                                      "--report", "markdown", "-"),
        # a fleet update (the package's folder as its root), its per-package lines and dry-run diffs
        "update fleet --dry-run": run_child(world, "update", pkg, "--upstream", f"file://{world.up}", "--ref", "v2",
                                            "--dry-run", "--files", "merge"),
        "update": run_child(world, "update", f"{pkg}@v2", "--conflicts", "mark", "--files", "merge",
                            "--report", "json", "-"),
        "conflicts": run_child(world, "conflicts", pkg),
        "conflicts json": run_child(world, "conflicts", pkg, "--output", "json"),
        "resolve": run_child(world, "resolve", pkg, "--take", "upstream", "ConfigMap/cm"),
        "run": run_child(world, "run", pkg, "--dry-run", "--", "mode=reorder-merge",
                         "patch=apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  b: x\n"),
        "diff": run_child(world, "diff", str(world.our_pkg / "cm.yaml"), str(other)),
        "promote": run_child(world, "promote", str(marked), "--set", f"default:app:prod=2.0{BIDI}", "--dry-run"),
        "recover": run_child(world, "recover", pkg),
    }
    for name, run in runs.items():
        for stream, text in (("stdout", run.stdout), ("stderr", run.stderr)):
            found = TERMINAL_CONTROL.search(text)
            assert found is None, f"{name} printed {found.group()!r} on {stream}: {text[max(0, found.start() - 80):found.end() + 80]!r}"
    # the content was printed, escaped: the test would see a raw one
    assert "\\x1b]52;c;" in runs["update --dry-run"].stdout and "\\u202e" in runs["update --dry-run"].stdout
    assert "\\x1b" in runs["update"].stderr + runs["update --dry-run"].stdout
    assert "\\u202e" in runs["diff"].stdout and "\\u202e" in runs["promote"].stdout
    assert "\\x1b]52;c;" in runs["update fleet --dry-run"].stdout, runs["update fleet --dry-run"]


# -- local decides how local is updated ------------------------------------------------------------


def strategy_world(world: World) -> None:
    """A package whose subpackage ``sub`` is a remote package (``/leaf`` of the same repository, resource-merge);
    the user edits a resource in it and adds a file; v2 changes only the subpackage's updateStrategy."""
    def sub_kptfile(strategy: str) -> str:
        return ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\nupstream:\n  type: git\n  git:\n"
                f"    repo: file://{world.up}\n    directory: /leaf\n    ref: leaf1\n  updateStrategy: {strategy}\n")

    (world.up / "leaf").mkdir()
    (world.up / "leaf" / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: leaf\n")
    (world.up / "leaf" / "cm.yaml").write_text(cm("leaf", "1"))
    world.commit({"cm.yaml": cm("cm", "1")}, tag="leaf1")
    world.commit({"sub/Kptfile": sub_kptfile("resource-merge"), "sub/cm.yaml": cm("leaf", "1")}, tag="v1")
    world.get("v1")
    world.edit_local({"sub/cm.yaml": cm("leaf", "mine"), "sub/mine.yaml": cm("mine", "m")})
    world.commit({"sub/Kptfile": sub_kptfile("force-delete-replace"), "cm.yaml": cm("cm", "2")}, tag="v2")


def test_a_strategy_arriving_from_upstream_does_not_apply_to_the_update_that_brings_it(
    world: World, capsys: pytest.CaptureFixture[str],
) -> None:
    """kpt applies upstream's new force-delete-replace at once: the user's edit and file are gone, exit 0.
    krm-merge updates by the user's own strategy, keeps it in the Kptfile, and says what upstream proposes."""
    strategy_world(world)
    assert world.update_kpt("v2").returncode == 0
    assert '"1"' in (world.kpt_pkg / "sub" / "cm.yaml").read_text() and not (world.kpt_pkg / "sub" / "mine.yaml").exists()

    assert world.update_ours("v2") == 0
    err = capsys.readouterr().err
    assert ("warning: sub/Kptfile: upstream changes updateStrategy from resource-merge to force-delete-replace; "
            "not applied") in err and "--accept-upstream-strategy" in err, err
    assert '"mine"' in (world.our_pkg / "sub" / "cm.yaml").read_text()
    assert 'a: "m"' in (world.our_pkg / "sub" / "mine.yaml").read_text()
    assert "updateStrategy: resource-merge" in (world.our_pkg / "sub" / "Kptfile").read_text()
    assert '"2"' in (world.our_pkg / "cm.yaml").read_text()  # the rest of the update is done
    # the next update still uses the user's strategy: it was not recorded
    assert world.update_ours("v2") == 0
    assert (world.our_pkg / "sub" / "mine.yaml").exists() and '"mine"' in (world.our_pkg / "sub" / "cm.yaml").read_text()


def test_the_user_can_take_the_strategy_upstream_proposes(world: World) -> None:
    strategy_world(world)
    assert world.update_ours("v2", "resource-merge", "--accept-upstream-strategy") == 0
    assert "updateStrategy: force-delete-replace" in (world.our_pkg / "sub" / "Kptfile").read_text()
    assert not (world.our_pkg / "sub" / "mine.yaml").exists()  # as kpt: the user asked for it
    assert '"1"' in (world.our_pkg / "sub" / "cm.yaml").read_text()


# -- a fan-out of remote subpackages ---------------------------------------------------------------


def fan_out(world: World, levels: int, size: int) -> None:
    """Tags t1..tN of one repository: at tK the package holds ``size`` bytes and two remote subpackages
    following ``/pkg`` at tK+1 (no cycle: each level names another tag), 2 + 4 + ... of them in all."""
    def sub(ref: str) -> str:
        return ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: s\nupstream:\n  type: git\n  git:\n"
                f"    repo: file://{world.up}\n    directory: /pkg\n    ref: {ref}\n")

    world.commit({"cm.yaml": cm("cm", "0")}, tag="t0")
    world.get("t0")
    for level in range(1, levels + 1):
        content: dict[str, str | None] = {"data.txt": "x" * size + str(level)}
        if level < levels:
            content.update({"s0/Kptfile": sub(f"t{level + 1}"), "s1/Kptfile": sub(f"t{level + 1}")})
        else:
            content.update({"s0": None, "s1": None})
        world.commit(content, tag=f"t{level}")


FILE_TRANSPORT = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always"}


def test_the_subpackages_of_one_update_share_one_byte_budget(world: World) -> None:
    """30 subpackages of 200 KB each (6 MB in all, every tree far under the bounds): with the bounds lowered
    to 1 MB the update is refused once they are spent, before the later subpackages are fetched."""
    fan_out(world, 5, 200_000)
    before = package_bytes(world.our_pkg)
    run = run_child(world, "update", f"{world.our_pkg}@t1", env=FILE_TRANSPORT,
                    prelude="import krm_merge.files as f\nf.MAX_TREE_BYTES = 1_000_000")
    assert run.code == 1, run.stderr
    assert "more than 1000000 bytes in all in one update (every version of every subpackage counted); refused" \
        in run.stderr and "Traceback" not in run.stderr, run.stderr
    # refused at the fifth 200 KB tree: inside the first subpackages, not after all 30
    assert run.stderr.count("s0/") + run.stderr.count("s1/") <= 3, run.stderr
    assert package_bytes(world.our_pkg) == before


def test_a_fan_out_of_subpackages_costs_what_it_brings(world: World) -> None:
    """62 subpackages of 300 KB (19 MB in the package at the end): resident memory stays a small multiple of it
    (each level once: no copy of the tree per subpackage)."""
    fan_out(world, 6, 300_000)
    run = run_child(world, "update", f"{world.our_pkg}@t1", env=FILE_TRANSPORT)
    assert run.code == 0, run.stderr
    written = sum(len(data) for data in package_bytes(world.our_pkg).values())
    assert 63 * 300_000 < written < 63 * 300_000 + 1_000_000
    assert run.max_rss_mb < 150 + 2 * written / 2**20, (run.max_rss_mb, written)


def test_a_fan_out_that_would_write_gigabytes_is_refused_in_bounded_memory(world: World) -> None:
    """The security review's case: 254 remote subpackages of 8 MB each (7 levels) from a repository of under a
    megabyte (git stores the one 8 MB text once a level) wrote 2.0 GB, exit 0, within the 2 GiB read budget (each
    version is read once a level; the plan holds every copy).  The bytes planned are bounded as each
    subpackage's plan joins them: refused at the write limit (256 MB), naming the chain, memory bounded by it,
    nothing written."""
    fan_out(world, 7, 8_000_000)
    before = package_bytes(world.our_pkg)
    run = run_child(world, "update", f"{world.our_pkg}@t1", env=FILE_TRANSPORT)
    assert run.code == 1, run.stderr[-2000:]
    assert re.search(r"s[01]/Kptfile: the update would write [\d,]+ bytes, more than the 256 MB one update may "
                     r"write \(remote subpackages: file://\S+/pkg@t1 -> file://\S+/pkg@t2 -> ", run.stderr), run.stderr
    assert "KRM_MERGE_MAX_WRITE_MB" in run.stderr and "Traceback" not in run.stderr
    assert package_bytes(world.our_pkg) == before
    assert run.max_rss_mb < 256 + 300, run.max_rss_mb  # before: ~1 GB resident here, 2 GB written


def test_the_write_limit_is_the_users_to_move(world: World) -> None:
    """``KRM_MERGE_MAX_WRITE_MB`` lowers (or raises) the limit; a value that is not a number is refused by name."""
    fan_out(world, 2, 400_000)  # the package and two subpackages: 1.2 MB written
    before = package_bytes(world.our_pkg)
    run = run_child(world, "update", f"{world.our_pkg}@t1", env={**FILE_TRANSPORT, "KRM_MERGE_MAX_WRITE_MB": "1"})
    assert run.code == 1 and "more than the 1 MB one update may write" in run.stderr, run.stderr
    assert package_bytes(world.our_pkg) == before
    run = run_child(world, "update", f"{world.our_pkg}@t1", env={**FILE_TRANSPORT, "KRM_MERGE_MAX_WRITE_MB": "1e3"})
    assert run.code == 1 and "KRM_MERGE_MAX_WRITE_MB: expected a number" in run.stderr and "'1e3'" in run.stderr
    assert "Traceback" not in run.stderr and package_bytes(world.our_pkg) == before
    run = run_child(world, "update", f"{world.our_pkg}@t1", env={**FILE_TRANSPORT, "KRM_MERGE_MAX_WRITE_MB": "1.5"})
    assert run.code == 0, run.stderr
    assert (world.our_pkg / "s0" / "data.txt").read_text().endswith("2")
