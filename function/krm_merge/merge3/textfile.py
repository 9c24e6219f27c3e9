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

The regions' grammar is :mod:`.diff3` (:func:`~.diff3.find_markers` finds them
in a text, for whoever lists what is left to resolve).  A binary file (a NUL byte, or not UTF-8) is
never merged: local's is kept (``FileMerge.kept`` says why, ``FileMerge.detail`` names the copies that are).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from krm_merge import files, gitexec
from krm_merge.krm.results import File
from krm_merge.outcomes.kinds import KeptReason

from .diff3 import LABELS, MARKER_SIZE, MarkerRegion, find_markers, region_sides

# A merge of two texts is bounded by git's own limits; this only guards against a hang.
GIT_MERGE_TIMEOUT = 120
# A region's markers are lines of 7 marker characters: a version can hold such lines as content (an
# upstream forging a conflict, an earlier conflict not yet decided), and they pass through the merge.
# Only the regions git itself leaves are conflicts of this update; to know them the merge is run again
# with markers of a length no version uses.  Bounded, so an upstream cannot make those markers huge.
MAX_MARKER_SIZE = 64


# A plain class, not a dataclass: creating dataclasses cost an update's start-up several milliseconds (issue 24).
class FileMerge:
    """What ``--files merge`` decided for one file changed on both sides."""

    __slots__ = ("path", "data", "merged", "conflicts", "kept", "detail")

    def __init__(self, path: str, data: bytes, merged: bool, conflicts: list[MarkerRegion] | None = None,
                 kept: KeptReason | None = None, detail: str = "") -> None:
        self.path = path
        self.data = data  # the file's new content (local's, when not merged)
        self.merged = merged  # False: local kept (``kept`` says why)
        self.conflicts: list[MarkerRegion] = [] if conflicts is None else conflicts
        self.kept = kept  # not merged: BINARY (``detail``: which copies are), MARKER_LINES (``detail``: up to what length)
        self.detail = detail

    def __repr__(self) -> str:
        return (f"FileMerge(path={self.path!r}, data={self.data!r}, merged={self.merged!r}, "
                f"conflicts={self.conflicts!r}, kept={self.kept!r}, detail={self.detail!r})")


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
        return FileMerge(path, local, False, kept=KeptReason.BINARY,
                         detail=f"NUL byte or not UTF-8 in {', '.join(binary)}")
    versions = [data.decode("utf-8") for data in (local, base, upstream)]
    size = _free_marker_size(versions)
    if size is None:
        return FileMerge(path, local, False, kept=KeptReason.MARKER_LINES, detail=str(MAX_MARKER_SIZE))
    text = merge_texts(local, base, upstream, path)
    return FileMerge(path, text, True, _regions_git_left(text.decode("utf-8"), versions, size, path))


def _free_marker_size(versions: list[str]) -> int | None:
    """:data:`MARKER_SIZE` when no version holds a marker-shaped line, else the shortest length above it no
    version's lines use (None: none up to :data:`MAX_MARKER_SIZE`)."""
    used = set()
    for text in versions:
        for line in text.splitlines():
            if line[:1] in ("<", "|", "=", ">"):
                run = len(line) - len(line.lstrip(line[0]))
                if run >= MARKER_SIZE and (run == len(line) or line[run] == " "):
                    used.add(run)
    if MARKER_SIZE not in used:
        return MARKER_SIZE
    return next((size for size in range(MARKER_SIZE + 1, MAX_MARKER_SIZE + 1) if size not in used), None)


def _regions_git_left(text: str, versions: list[str], size: int, what: str) -> list[MarkerRegion]:
    """The regions of the merged ``text`` git left (not those the versions held as content)."""
    found = find_markers(text)
    if size == MARKER_SIZE:
        return found  # no version holds a marker-shaped line: every region is git's
    local, base, upstream = (version.encode("utf-8") for version in versions)
    again = merge_texts(local, base, upstream, what, marker_size=size).decode("utf-8")
    again_lines, lines = again.splitlines(), text.splitlines()
    wanted: dict[tuple[str, str, str], int] = {}
    for region in find_markers(again, size):
        sides = region_sides(again_lines, region)
        wanted[sides] = wanted.get(sides, 0) + 1
    own = []
    for region in found:
        sides = region_sides(lines, region)
        if wanted.get(sides):
            wanted[sides] -= 1
            own.append(region)
    return own


def merge_texts(local: bytes, origin: bytes, upstream: bytes, what: str = "file", *,
                marker_size: int = MARKER_SIZE) -> bytes:
    """``git merge-file -p --diff3`` of three texts, labelled :data:`LABELS` (a KrmError if git fails)."""
    where = File(what)
    with files.removed_after(tempfile.mkdtemp(prefix="krm-merge-file-")) as tmp:
        # The scratch profile: no user or system git config, so a conflict style or attribute of the user's
        # cannot change the merge.
        git = gitexec.Git(gitexec.SCRATCH, f"{what}: update --files merge needs git on PATH (git merge-file merges "
                          "the file)", home=tmp, file=where)
        for label, data in zip(LABELS, (local, origin, upstream)):
            Path(tmp, label).write_bytes(data)  # each version in a file named by its label
        labels = [arg for label in LABELS for arg in ("-L", label)]
        # 0..127: merged with that many conflicts; anything else (255 = -1) is git refusing the merge.
        return git.run(["merge-file", "-p", "--diff3", f"--marker-size={marker_size}", *labels, *LABELS],
                       f"{what}: git merge-file failed", cwd=tmp, timeout=GIT_MERGE_TIMEOUT,
                       ok=lambda status: 0 <= status <= 127, file=where)


__all__ = ["LABELS", "FileMerge", "MarkerRegion", "find_markers", "is_binary", "merge_file", "merge_texts", "needs_merge"]
