"""What the user hands a command is read strictly (issue 43), through the real executable.

A size limit in the environment that is no number is refused by name.  A
FIFO where a file is expected hung the command (its open waits for a writer,
or it was read to its end); a link to ``/dev/zero`` was read until
``MemoryError``.  Each command now refuses anything but a regular file with
one error naming it, exit code 1, and reads standard input no further than
the input size limit (a file: ``tests/krm/test_files.py``).  Each child runs
under an address-space ceiling, so the code before the change fails these
tests quickly instead of taking the machine's memory; the timeout is the
hang guard.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
HANG_GUARD_S = 60  # each run takes well under a second; a FIFO read used to wait forever
MEMORY_CEILING = 1536 << 20  # address space of each child: far above what it takes, far below the machine's
CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "1"\n'
REPORT = {"apiVersion": "report.krm-merge.dev/v1", "kind": "FleetUpdateReport", "upstream": "u", "ref": "v1",
          "selected": 0, "dryRun": False, "shards": {"count": 1, "reported": [0]}, "packages": []}


def _ceiling() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))


def krm_merge(*args: str, cwd: Path, stdin: int | None = None, env: dict[str, str] | None = None,
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], cwd=cwd, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=HANG_GUARD_S, preexec_fn=_ceiling,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A package ``pkg/`` (one ConfigMap), a fleet report ``ok.json``, a FIFO ``fifo``, a link ``zero`` to
    ``/dev/zero`` and an empty folder ``folder``."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "cm.yaml").write_text(CM)
    (tmp_path / "cm.yaml").write_text(CM)
    (tmp_path / "ok.json").write_text(json.dumps(REPORT))
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "folder").mkdir()
    return tmp_path


# Each command line naming a file the user gives (X: the file under test), and what the command reads it as.
COMMANDS = {
    "run --fn-config": ["run", "pkg", "--fn-config", "X"],
    "diff ORIGINAL": ["diff", "X", "cm.yaml"],
    "diff MODIFIED": ["diff", "cm.yaml", "X"],
    "diff --current": ["diff", "cm.yaml", "cm.yaml", "--current", "X"],
    # report merge FILE: tests/fleet/test_report.py
    # destinations: the file a write replaces is read first (to put it back if the write fails)
    "--results": ["diff", "cm.yaml", "cm.yaml", "--results", "X"],
    "report merge --report": ["report", "merge", "ok.json", "--report", "json", "X"],
    "update --report": ["update", "pkg", "--origin", "pkg", "--upstream", "pkg", "--report", "json", "X"],
}
KINDS = {"fifo": "a FIFO (named pipe), not a regular file", "zero": "a character device, not a regular file",
         "folder": "a folder, not a regular file"}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_where_a_file_is_read_is_refused_by_name(files: Path, command: str) -> None:
    done = krm_merge(*["fifo" if a == "X" else a for a in COMMANDS[command]], cwd=files)
    assert done.returncode == 1, done.stderr
    assert f"error: fifo: {KINDS['fifo']}; not read" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert (files / "fifo").is_fifo()  # a destination was not replaced either


@pytest.mark.parametrize("kind", ["zero", "folder"])
@pytest.mark.parametrize("command", ["run --fn-config", "diff ORIGINAL", "--results"])
def test_a_device_or_a_folder_where_a_file_is_read_is_refused_by_name(files: Path, command: str, kind: str) -> None:
    done = krm_merge(*[kind if a == "X" else a for a in COMMANDS[command]], cwd=files)
    assert done.returncode == 1, done.stderr
    assert f"error: {kind}: {KINDS[kind]}; not read" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_function_config_that_is_not_utf8_is_refused_by_name(files: Path) -> None:
    """Its error named the file as a bare string where a File belongs: the error line's rendering raised."""
    (files / "latin1.yaml").write_bytes(b"data:\n  x: caf\xe9\n")
    done = krm_merge("run", "pkg", "--fn-config", "latin1.yaml", cwd=files)
    assert done.returncode == 1, done.stderr
    assert "error: latin1.yaml is not UTF-8 text (byte 14)" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_standard_input_is_read_no_further_than_the_input_limit(files: Path) -> None:
    """The function's ResourceList on standard input: ``krm-merge < /dev/zero`` is one error result, bounded."""
    with open("/dev/zero", "rb") as zero:
        done = krm_merge(cwd=files, stdin=zero.fileno(), env={"KRM_MERGE_MAX_INPUT_MB": "1"})
    assert done.returncode == 1, done.stderr
    assert "message: the input is too large" in done.stdout and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("variable", ["KRM_MERGE_MAX_INPUT_MB", "KRM_MERGE_MAX_ALIAS_MB"])
@pytest.mark.parametrize("value", ["1e400", "abc", "\u0665", "-1", " 1", "9" * 5000])
def test_a_size_limit_that_is_not_a_number_is_refused_by_name(files: Path, variable: str, value: str) -> None:
    """A limit set to something that is no number was silently the default (or an OverflowError); now one error
    naming the variable and the value (cut when long)."""
    (files / "aliased.yaml").write_text(CM + "  y: &v value\n  z: *v\n")  # the alias bound is read with an alias
    done = krm_merge("diff", "aliased.yaml", "cm.yaml", cwd=files, env={variable: value})
    assert done.returncode == 1, done.stderr
    assert f"{variable}: expected a number such as 64 or 0.5" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr) < 1000, done.stderr
