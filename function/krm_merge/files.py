"""File I/O of the package commands: bounded reads, safe paths, atomic writes, diffs.

The one place that knows how krm-merge touches files:

* reads refuse a file above the input size limit before reading it;
* a path written must stay inside the package (no absolute path, no ``..``,
  no folder that resolves outside the root, no symbolic link);
* several files are written all-or-nothing: each is staged as a temporary
  file in its own folder (a full disk or a read-only folder fails before
  anything is replaced), then all are renamed into place, and if a rename
  fails the files already replaced get their previous bytes back; modes are
  kept and a reader never sees half a file;
* ``--dry-run`` output is one unified diff format.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Iterable, Sequence

from krm_merge.errors import KrmMergeError
from krm_merge.yaml.load import check_size

if TYPE_CHECKING:
    from pathlib import Path

# pathlib is imported only by the functions that write (it pulls in urllib.parse and
# ipaddress: milliseconds every command would pay at start-up, dry runs included).


class UnsafePathError(KrmMergeError):
    """A write that would leave the package or follow a symbolic link."""


# --- reading ----------------------------------------------------------------------------


def read_text(path: str | os.PathLike[str]) -> str:
    """A file as UTF-8 text, CRLF line ends kept; a file above the size limit is refused.

    Raises ``OSError``, ``UnicodeDecodeError`` or the loader's size error.
    """
    check_size(os.stat(path).st_size, os.fspath(path))
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes; a file above the size limit is refused."""
    check_size(os.stat(path).st_size, os.fspath(path))
    with open(path, "rb") as fh:
        return fh.read()


# --- paths ------------------------------------------------------------------------------


def check_relative(rel: str) -> None:
    """Refuse a package-relative path that is empty, absolute or climbs out with ``..``."""
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        raise UnsafePathError(f"refusing to write {rel!r}: the path leaves the package", file=rel)


def check_target(root: str | os.PathLike[str], rel: str, *, through_links: bool = False) -> Path:
    """The file to write for ``rel`` under ``root``, after checking it stays inside.

    ``root`` must already be resolved; folders that do not exist yet are
    taken as written. A symbolic link is refused, or with ``through_links``
    (what ``kpt fn sink`` does) resolved to its target, which must itself be
    inside ``root``.
    """
    from pathlib import Path

    check_relative(rel)
    root = Path(root)
    target = root / rel
    parent = target.parent.resolve() if target.parent.exists() else target.parent
    if parent != root and root not in parent.parents:
        raise UnsafePathError(f"refusing to write {rel!r}: the path leaves the package", file=rel)
    if not target.is_symlink():
        return target
    if not through_links:
        raise UnsafePathError(f"refusing to write {rel!r}: it is a symbolic link", file=rel)
    real = target.resolve()
    if root not in real.parents:
        # kpt fn sink/eval write through such a link, changing a file outside the package.
        raise UnsafePathError(
            f"refusing to write {rel!r}: it is a symbolic link to {os.readlink(target)}, "
            "outside the package (kpt would write through it); edit the target's own package instead",
            file=rel,
        )
    return real


# --- writing ----------------------------------------------------------------------------


def write_files_atomic(writes: Sequence[tuple[str | os.PathLike[str], str | bytes]]) -> None:
    """Write several files all-or-nothing (see the module docstring).  Raises ``OSError``."""
    from pathlib import Path

    staged: list[tuple[str, Path]] = []
    try:
        for path, data in writes:
            staged.append((_stage(Path(path), data), Path(path)))
    except BaseException:
        for tmp, _ in staged:
            _unlink_quietly(tmp)
        raise
    originals: list[tuple[Path, bytes | None]] = []
    try:
        for tmp, path in staged:
            try:
                before: bytes | None = path.read_bytes()
            except FileNotFoundError:
                before = None
            os.replace(tmp, path)
            originals.append((path, before))
    except BaseException:
        for tmp, _ in staged[len(originals):]:
            _unlink_quietly(tmp)
        for path, before in reversed(originals):  # put the previous bytes back
            if before is None:
                _unlink_quietly(str(path))
            else:
                os.replace(_stage(path, before), path)
        raise


def write_file_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write one file through a temporary file in the same folder and a rename (mode kept)."""
    write_files_atomic([(path, data)])


def _stage(path: Path, data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    import tempfile  # only when writing files: keeps the function's start-up light

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, mode)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# --- diffs ------------------------------------------------------------------------------


def unified_diff(changes: Iterable[tuple[str, str | None, str | None]]) -> str:
    """``(path, before, after)`` changes as one unified diff, git's way.

    None on either side is a file that does not exist there (``/dev/null``);
    a last line without a newline is marked ``\\ No newline at end of file``.
    """
    import difflib  # only for --dry-run

    out: list[str] = []
    for path, before, after in changes:
        lines = difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if before is not None else "/dev/null",
            tofile=f"b/{path}" if after is not None else "/dev/null",
        )
        out.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return "".join(out)
