"""3-way merge of a package's non-KRM files (README, scripts, JSON, templates): ``update --files merge``.

kpt keeps a locally modified non-KRM file whole and drops upstream's change
to it without a word; ``--files merge`` merges such a file as git does.  The
merge itself is ``git merge-file --diff3`` rather than a diff3 of our own:
git's result depends on its diff (Myers with its own heuristics) and its
merge rules in detail, and "merged like git merges it" is only certain if it
is git's code that merges.  git is already what ``update`` fetches git
upstreams with; only ``--files merge`` with ``--origin/--upstream DIR`` adds
the need for it.

Edits of the same lines leave diff3 conflict markers in the file, exactly as
``git merge-file --diff3`` writes them, labelled :data:`LABELS`::

    <<<<<<< local
    local's lines
    ||||||| origin
    origin's lines
    =======
    upstream's lines
    >>>>>>> upstream

:func:`find_markers` finds such regions (any labels) in a text, for whoever
lists what is left to resolve.  A binary file (a NUL byte, or not UTF-8) is
never merged: local's is kept (``FileMerge.binary`` names the copies that are).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from krm_merge import files
from krm_merge.krm.results import File, KrmError

# local = the user's copy (git's "ours"), origin = the version it was fetched from (the base),
# upstream = the new version ("theirs"): the names the rest of update uses for the three copies.
LABELS = ("local", "origin", "upstream")
MARKER_SIZE = 7  # git's default conflict-marker-size
# A merge of two texts is bounded by git's own limits; this only guards against a hang.
GIT_MERGE_TIMEOUT = 120


# A NamedTuple and a plain class, not dataclasses: ``update`` loads this module on every run,
# and creating dataclasses cost its start-up several milliseconds (issue 24).


class MarkerRegion(NamedTuple):
    """One diff3 conflict region of a text; lines are 1-based, ``base`` is 0 when the region has none."""

    start: int  # the ``<<<<<<<`` line
    base: int  # the ``|||||||`` line
    separator: int  # the ``=======`` line
    end: int  # the ``>>>>>>>`` line


class FileMerge:
    """What ``--files merge`` decided for one file changed on both sides."""

    __slots__ = ("path", "data", "merged", "conflicts", "binary")

    def __init__(self, path: str, data: bytes, merged: bool, conflicts: list[MarkerRegion] | None = None,
                 binary: str = "") -> None:
        self.path = path
        self.data = data  # the file's new content (local's, when not merged)
        self.merged = merged  # False: local kept (a binary file)
        self.conflicts: list[MarkerRegion] = [] if conflicts is None else conflicts
        self.binary = binary  # not merged: which copies are binary ("NUL byte or not UTF-8 in local, upstream")

    def __repr__(self) -> str:
        return (f"FileMerge(path={self.path!r}, data={self.data!r}, merged={self.merged!r}, "
                f"conflicts={self.conflicts!r}, binary={self.binary!r})")


def is_binary(data: bytes) -> bool:
    """Whether a file is not merged as text: it holds a NUL byte or is not UTF-8."""
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def needs_merge(local: bytes | None, origin: bytes | None, upstream: bytes | None) -> bool:
    """Whether local and upstream both changed a file (or both added it) and differ: only then is it merged.

    A file one side deleted and the other changed is not merged: kpt's rule
    decides it (local's deletion or local's change is kept).
    """
    if local is None or upstream is None or local == upstream:
        return False
    return local != origin and upstream != origin


def merge_file(path: str, local: bytes, origin: bytes | None, upstream: bytes) -> FileMerge:
    """Merge one file changed on both sides (``origin is None``: added on both sides, merged on an empty base)."""
    base = origin if origin is not None else b""
    binary = [label for label, data in zip(LABELS, (local, base, upstream)) if is_binary(data)]
    if binary:
        return FileMerge(path, local, False, binary=f"NUL byte or not UTF-8 in {', '.join(binary)}")
    text = merge_texts(local, base, upstream, path)
    return FileMerge(path, text, True, find_markers(text.decode("utf-8")))


def merge_texts(local: bytes, origin: bytes, upstream: bytes, what: str = "file") -> bytes:
    """``git merge-file -p --diff3`` of three texts, labelled :data:`LABELS` (a KrmError if git fails)."""
    git = shutil.which("git")
    if git is None:
        raise KrmError(f"{what}: update --files merge needs git on PATH (git merge-file merges the file)", file=File(what))
    with files.removed_after(tempfile.mkdtemp(prefix="krm-merge-file-")) as tmp:
        for label, data in zip(LABELS, (local, origin, upstream)):
            Path(tmp, label).write_bytes(data)  # each version in a file named by its label
        labels = [arg for label in LABELS for arg in ("-L", label)]
        cmd = [git, "merge-file", "-p", "--diff3", f"--marker-size={MARKER_SIZE}", *labels, *LABELS]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, stdin=subprocess.DEVNULL,
                                  env=_isolated_env(tmp), timeout=GIT_MERGE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise KrmError(f"{what}: git merge-file took longer than {GIT_MERGE_TIMEOUT}s", file=File(what)) from None
    # 0..127: merged with that many conflicts; anything else (255 = -1) is git refusing the merge.
    if not 0 <= proc.returncode <= 127:
        detail = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
        raise KrmError(f"{what}: git merge-file failed: {detail}", file=File(what))
    return proc.stdout


def _isolated_env(home: str) -> dict[str, str]:
    """No user or system git config: a conflict style or attribute of the user's must not change the merge."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=home, GIT_CEILING_DIRECTORIES=home)
    return env


def find_markers(text: str, marker_size: int = MARKER_SIZE) -> list[MarkerRegion]:
    """Every complete diff3 conflict region in ``text`` (``<<<<<<<`` … ``>>>>>>>``, any labels, LF or CRLF).

    A marker is ``marker_size`` marker characters alone or followed by a
    space and a label, as git writes them; a region missing its ``=======``
    or ``>>>>>>>`` line is not counted (it is not a conflict git left).
    """
    regions: list[MarkerRegion] = []
    start = base = separator = 0
    for number, line in enumerate(text.splitlines(), start=1):
        kind = _marker_kind(line, marker_size)
        if kind == "<":
            start, base, separator = number, 0, 0
        elif kind == "|" and start and not separator:
            base = number
        elif kind == "=" and start and not separator:
            separator = number
        elif kind == ">" and start and separator:
            regions.append(MarkerRegion(start, base, separator, number))
            start = base = separator = 0
    return regions


def _marker_kind(line: str, size: int) -> str | None:
    for char in "<|=>":
        marker = char * size
        if line == marker or (char != "=" and line.startswith(marker + " ")):
            return char
    return None


__all__ = ["LABELS", "FileMerge", "MarkerRegion", "find_markers", "is_binary", "merge_file", "merge_texts", "needs_merge"]
