"""One package copy read once: one listing, bytes read when asked (once), items parsed when asked.

A command that needs a tree several times (``update`` asks for the local
copy's resources, its other files, its folders and its Kptfiles, and for
origin's and upstream's the same) takes one :class:`Snapshot` of it and
hands that to every step instead of listing the tree again.  The listing is
:func:`krm_merge.krm.pkgio.list_package`'s, made once with every name
(hidden ones included, no ``.krmignore``, no link followed; ``what`` a copy
from elsewhere, checked whole: names, NFC/NFD and case clashes, depth,
sizes, the tree's budget); each step's view (the resources ``kpt fn source``
would read under some ``.krmignore``, the other files, the folders) is a
filter on it.  A file's bytes are read in place with ``O_NOFOLLOW``
(:func:`krm_merge.files.read_beneath`, bounded for a copy from elsewhere)
the first time a step asks, and kept for the next one; items are parsed
only when the merge asks (``read_package(validate=False)``).

One listing means one view: a file swapped for a link after the listing is
still a file to every step, and its read refuses it
(``UntrustedTreeError``) instead of a later listing leaving it out.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from krm_merge import files
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError


class Snapshot:
    """One listing of a package copy and the bytes of its files, read once each when first asked."""

    __slots__ = ("root", "what", "listing", "_bytes")

    def __init__(self, listing: pkgio.Listing, what: str | None = None) -> None:
        self.root = listing.root
        self.what = what  # "origin", "upstream": a copy from elsewhere (reads bounded); None: the user's own
        self.listing = listing
        self._bytes: dict[str, bytes] = {}

    @classmethod
    def local(cls, root: str | os.PathLike[str]) -> Snapshot:
        """The user's own package copy, listed once (a folder that cannot be read: a KrmError naming it)."""
        try:
            listing = pkgio.list_package(root, hidden=True, krmignore=False, nofollow=True)
        except OSError as err:  # kpt fn source fails on it too
            raise KrmError(f"cannot read folder {err.filename}: {err.strerror or err}") from None
        return cls(listing)

    @classmethod
    def untrusted(cls, root: str | os.PathLike[str], what: str) -> Snapshot:
        """A copy from elsewhere, checked whole as it is listed (:func:`pkgio.check_untrusted`)."""
        return cls(pkgio.check_untrusted(root, what), what)

    @classmethod
    def pruned(cls, root: str | os.PathLike[str], what: str) -> Snapshot:
        """A copy krm-merge unpacked itself, checked whole and its links and special files deleted
        (:func:`pkgio.prune_untrusted`); the listing still names what was deleted."""
        return cls(pkgio.prune_untrusted(root, what), what)

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of regular file ``rel``, read in place following no link the first time, kept after."""
        data = self._bytes.get(rel)
        if data is None:
            data = self._bytes[rel] = files.read_beneath(self.root, rel, self.what)
        return data

    def read_text(self, rel: str) -> str:
        """File ``rel`` of a resource listing (:meth:`resources`) as UTF-8 text, as ``read_package`` reads it.

        The user's own copy: read as ``kpt fn source`` reads it (a link to a
        file followed, the input size limit applied); a copy from elsewhere:
        :meth:`read_bytes`.  Raises ``OSError``, ``UnicodeDecodeError`` or the
        loader's size error.
        """
        if self.what is None:
            return files.read_text(os.path.join(self.root, rel))
        return self.read_bytes(rel).decode("utf-8")

    def file(self, rel: str) -> SnapshotFile:
        """Regular file ``rel`` of this copy, its bytes read when asked."""
        return SnapshotFile(self, rel)

    def regular_files(self) -> list[pkgio.PackageFile]:
        """Every regular file (links are not files here), hidden ones included."""
        return self.listing.files

    def kptfiles(self) -> list[str]:
        """Every Kptfile of the tree that is a regular file (relative paths)."""
        return [f.rel for f in self.listing.files if f.kind == pkgio.KIND_KPTFILE]

    def subpackages(self) -> list[str]:
        """The folders below the root holding a Kptfile, outside hidden folders (as a plain listing finds them)."""
        return [rel for rel in self.listing.subpackages if not _hidden(rel)]

    def resources(self, patterns: list[str]) -> pkgio.Listing:
        """What ``kpt fn source`` reads of this copy under ``.krmignore`` ``patterns``: a listing for
        ``read_package``, filtered from the one listing.

        YAML files and Kptfiles outside hidden names and what ``patterns``
        leave out.  The user's own copy also has its links sorted as a
        following listing sorts them (one ``stat`` each, no listing): to a
        file (read through it), to a folder (not followed, named), broken
        (refused by the reader); a copy from elsewhere has none.
        """
        listing = pkgio.Listing(self.root)
        listing.files = [f for f in self.listing.files if pkgio.is_krm_name(f.rel.rpartition("/")[2])
                         and _visible(f.rel, patterns)]
        if self.what is None:
            for rel in self.listing.links:
                if _visible(rel, patterns):
                    _sort_link(listing, rel)
            listing.files.sort()
        return listing


class SnapshotFile(NamedTuple):
    """A regular file of a snapshot, read when asked (once: the snapshot keeps its bytes)."""

    snapshot: Snapshot
    rel: str

    def read_bytes(self) -> bytes:
        """The file's bytes (:meth:`Snapshot.read_bytes`)."""
        return self.snapshot.read_bytes(self.rel)


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _visible(rel: str, patterns: list[str]) -> bool:
    """Whether a listing without hidden names and under ``.krmignore`` ``patterns`` reaches ``rel``: no hidden
    name on its way, and no pattern matching it or a folder it lies in (that listing does not enter those)."""
    if _hidden(rel):
        return False
    return not patterns or not any(pkgio.ignored(path, patterns) for path in (*pkgio.folders_of(rel), rel))


def _sort_link(listing: pkgio.Listing, rel: str) -> None:
    """File a link of the user's copy as :func:`pkgio.list_package` files it when it follows links."""
    path = os.path.join(listing.root, rel)
    krm = pkgio.is_krm_name(rel.rpartition("/")[2])
    if os.path.isdir(path):
        listing.linked_dirs.append(rel)
    elif not krm:
        return
    elif os.path.isfile(path):
        # its package folder is left "": no reader of a resource listing asks for it
        listing.files.append(pkgio.PackageFile(rel, path, pkgio.kind_of(rel.rpartition("/")[2]), True, ""))
    elif not os.path.lexists(path) or not os.path.exists(path):
        listing.broken_links.append(rel)
    else:
        listing.others.append(rel)


__all__ = ["Snapshot", "SnapshotFile"]
