"""krm_merge.files: the one module for package file I/O."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from krm_merge import files
from krm_merge.yaml.load import YamlError


def test_unified_diff_marks_missing_files_and_final_newlines() -> None:
    out = files.unified_diff([("a.yaml", "x: 1\n", "x: 2"), ("new.yaml", None, "y: 1\n"), ("gone.yaml", "z\n", None)])
    assert "--- a/a.yaml\n+++ b/a.yaml\n" in out
    assert "+x: 2\n\\ No newline at end of file\n" in out
    assert "--- /dev/null\n+++ b/new.yaml\n" in out and "--- a/gone.yaml\n+++ /dev/null\n" in out


@pytest.mark.parametrize("rel", ["", "/etc/passwd", "../x.yaml", "a/../../x.yaml"])
def test_paths_leaving_the_package_are_refused(rel: str, tmp_path: Path) -> None:
    with pytest.raises(files.UnsafePathError, match="leaves the package"):
        files.check_target(tmp_path.resolve(), rel)


def test_symlinks_are_refused(tmp_path: Path) -> None:
    (tmp_path / "out.yaml").write_text("a: 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "link.yaml").symlink_to(tmp_path / "out.yaml")
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    with pytest.raises(files.UnsafePathError, match="symbolic link"):
        files.check_target((tmp_path / "pkg").resolve(), "link.yaml")
    with pytest.raises(files.UnsafePathError, match="leaves the package"):
        files.check_target((tmp_path / "pkg").resolve(), "up/out.yaml")


@pytest.mark.parametrize("folder", ["", ".", "a", "a/b", "a/./b/", "a//b", "in", "in/b", "out", "out/x", "broken",
                                    "broken/x", "chain", "chain/b", "missing", "missing/deeper", "a/file.yaml",
                                    "a/file.yaml/x", "self/a/self/a"])
def test_real_beneath_a_resolved_root_is_its_realpath(tmp_path: Path, folder: str) -> None:
    root = (tmp_path / "pkg").resolve()
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "file.yaml").write_text("a: 1\n")
    (tmp_path / "elsewhere" / "x").mkdir(parents=True)
    os.symlink("a", root / "in")  # links inside, out, broken, to a link, to the root itself
    os.symlink(tmp_path / "elsewhere", root / "out")
    os.symlink("nowhere", root / "broken")
    os.symlink("in", root / "chain")
    os.symlink(".", root / "self")
    assert os.path.normpath(files.real_beneath(str(root), folder)) == os.path.realpath(root / folder)


def test_atomic_writes_keep_mode_and_roll_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old a")
    os.chmod(a, 0o600)
    files.write_files_atomic([(a, "new a"), (b, b"new b")])
    assert a.read_text() == "new a" and b.read_bytes() == b"new b" and os.stat(a).st_mode & 0o777 == 0o600
    real, calls = os.replace, []

    def fail_second(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", fail_second)
    with pytest.raises(OSError):
        files.write_files_atomic([(a, "newer a"), (b, "newer b")])
    monkeypatch.setattr(os, "replace", real)
    assert a.read_text() == "new a" and b.read_bytes() == b"new b"
    assert not list(tmp_path.glob("*.tmp"))


def test_reads_refuse_files_above_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 2_000_000 + "\n")
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "1")
    with pytest.raises(YamlError, match="too large"):
        files.read_text(big)
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "4")
    assert files.read_text(big).startswith("a: x")


def test_a_file_that_yields_more_than_its_size_said_is_read_no_further_than_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose size says less than it holds (a ``/proc`` file says 0; a log grows while it is read) was checked
    by its size, then read to its end; now it is read to the limit and one byte more, then refused."""
    grown = tmp_path / "grown.yaml"
    grown.write_bytes(b"a: " + b"x" * 3_000_000 + b"\n")
    monkeypatch.setenv("KRM_MERGE_MAX_INPUT_MB", "1")

    def sized_zero(real: Callable[..., os.stat_result]) -> Callable[..., os.stat_result]:
        def call(*args: Any, **kwargs: Any) -> os.stat_result:
            found = real(*args, **kwargs)
            return os.stat_result((*found[:6], 0, *found[7:10]))  # st_size 0, as /proc says

        return call

    monkeypatch.setattr(os, "stat", sized_zero(os.stat))
    monkeypatch.setattr(os, "fstat", sized_zero(os.fstat))
    real_read = os.read
    yielded: list[int] = []

    def counted(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        yielded.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counted)
    with pytest.raises(YamlError, match="too large"):
        files.read_bytes(grown)
    assert sum(yielded) == (1 << 20) + 1  # the limit and one byte: never the file's 3 MB
