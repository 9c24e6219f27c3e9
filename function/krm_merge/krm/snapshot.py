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

A recursive update lays each level's plan over the local snapshot
(:meth:`Snapshot.overlaid`) and plans the next level on that overlay's view
of the subpackage (:meth:`Snapshot.below`): nothing is written, copied or
listed again before the one transaction.

One listing means one view: a file swapped for a link after the listing is
still a file to every step, and its read refuses it
(``UntrustedTreeError``) instead of a later listing leaving it out.
"""

from __future__ import annotations

import os

from krm_merge import files
from krm_merge.krm import pkgio
from krm_merge.krm.results import KrmError
from krm_merge.records import Record
from krm_merge.yaml.load import check_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable


class Snapshot:
    """One listing of a package copy and the bytes of its files, read once each when first asked."""

    __slots__ = ("root", "what", "listing", "_bytes", "_base", "_prefix", "_written", "_held")

    def __init__(self, listing: pkgio.Listing, what: str | None = None, *, base: Snapshot | None = None,
                 prefix: str = "", written: dict[str, bytes | None] | None = None) -> None:
        self.root = listing.root
        self.what = what  # "origin", "upstream": a copy from elsewhere (reads bounded); None: the user's own
        self.listing = listing
        self._bytes: dict[str, bytes] = {}
        # An overlay (:meth:`overlaid`) or a folder's view (:meth:`below`) reads what it does not hold from its
        # base: the one snapshot read from disk (a view: at ``prefix`` in it).
        self._base = base
        self._prefix = prefix
        self._written = written if written is not None else {}  # an overlay's planned bytes (None: deleted)
        self._held = False  # every file's bytes are in _bytes: there is no folder to read (:meth:`held`)

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
    def held(cls, listing: pkgio.Listing, what: str, contents: dict[str, bytes]) -> Snapshot:
        """A copy from elsewhere read into memory, never from disk: ``listing`` of it
        (:func:`pkgio.listing_of_entries`) and the bytes of each of its files (``contents``, by rel)."""
        snapshot = cls(listing, what)
        snapshot._bytes = contents
        snapshot._held = True
        return snapshot

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of regular file ``rel``, read in place following no link the first time, kept after."""
        data = self._written.get(rel)
        if data is not None:
            return data
        if self._base is not None:
            return self._base.read_bytes(self._prefix + rel)
        data = self._bytes.get(rel)
        if data is None:
            if self._held:  # what a folder would answer for a file it does not have
                raise FileNotFoundError(2, "No such file in the tree read from git", rel)
            data = self._bytes[rel] = files.read_beneath(self.root, rel, self.what)
        return data

    def read_text(self, rel: str) -> str:
        """File ``rel`` of a resource listing (:meth:`resources`) as UTF-8 text, as ``read_package`` reads it.

        The user's own copy: read as ``kpt fn source`` reads it (a link to a
        file followed, the input size limit applied); a copy from elsewhere:
        :meth:`read_bytes`.  Raises ``OSError``, ``UnicodeDecodeError`` or the
        loader's size error.
        """
        data = self._written.get(rel)
        if data is not None:  # planned bytes, bounded as a file of the user's would be
            check_size(len(data), os.path.join(self.root, rel))
            return data.decode("utf-8")
        if self._base is not None:
            return self._base.read_text(self._prefix + rel)
        if self.what is None:
            return files.read_text(os.path.join(self.root, rel))
        return self.read_bytes(rel).decode("utf-8")

    def overlaid(self, writes: Iterable[pkgio.Write], remove_dirs: Iterable[str], under: str = "") -> Snapshot:
        """This copy with a plan's ``writes`` and ``remove_dirs`` (relative to folder ``under``, "" for the
        root) laid over it, in memory: listed and read as the copy would be once the plan were written.

        What a recursive update plans over: each remote subpackage is planned
        on its parent's planned bytes, and nothing is written before the
        one transaction.  Folders a new file lies in appear; folders the plan
        removes go.
        """
        base, written = (self._base, dict(self._written)) if self._written else (self, {})
        assert base is not None and not self._prefix, "an overlay is laid over a whole copy, not a folder's view"
        listed = {f.rel: f for f in self.listing.files}
        for write in writes:
            rel = under + write.path
            written[rel] = write.data
            if write.data is None:
                listed.pop(rel, None)
            elif rel not in listed:
                name = rel.rpartition("/")[2]
                listed[rel] = pkgio.PackageFile(rel, os.path.join(self.root, rel), pkgio.kind_of(name), False, "")
        gone = {under + rel for rel in remove_dirs}
        listing = pkgio.Listing(self.root)
        listing.files = sorted(listed.values())
        listing.dirs = sorted({rel for rel in self.listing.dirs if rel not in gone}
                              | {folder for rel in listed for folder in pkgio.folders_of(rel)})
        for name in ("links", "linked_dirs", "broken_links", "others"):
            setattr(listing, name, list(getattr(self.listing, name)))
        listing.subpackages = sorted(rel.rpartition("/")[0] for rel in listed
                                     if "/" in rel and rel.rpartition("/")[2] == pkgio.KPTFILE)
        return Snapshot(listing, self.what, base=base, written=written)

    def below(self, folder: str) -> Snapshot:
        """The view of ``folder`` (relative, "" for this copy itself) as a copy of its own: its entries, read
        through this snapshot (an overlay's planned bytes included)."""
        if not folder:
            return self
        inside = folder.rstrip("/") + "/"
        cut = len(inside)
        listing = pkgio.Listing(os.path.join(self.root, inside[:-1]))
        listing.files = [f._replace(rel=f.rel[cut:]) for f in self.listing.files if f.rel.startswith(inside)]
        for name in ("dirs", "links", "linked_dirs", "broken_links", "others", "subpackages"):
            setattr(listing, name, [rel[cut:] for rel in getattr(self.listing, name) if rel.startswith(inside)])
        return Snapshot(listing, self.what, base=self, prefix=inside)

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
        return [rel for rel in self.listing.subpackages if not is_hidden(rel)]

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


class SnapshotFile(Record):
    """A regular file of a snapshot, read when asked (once: the snapshot keeps its bytes)."""

    snapshot: Snapshot
    rel: str

    def read_bytes(self) -> bytes:
        """The file's bytes (:meth:`Snapshot.read_bytes`)."""
        return self.snapshot.read_bytes(self.rel)


def is_hidden(rel: str) -> bool:
    """Whether a package-relative path has a hidden part (kpt's readers skip such names)."""
    return any(part.startswith(".") for part in rel.split("/"))


def _visible(rel: str, patterns: list[str]) -> bool:
    """Whether a listing without hidden names and under ``.krmignore`` ``patterns`` reaches ``rel``: no hidden
    name on its way, and no pattern matching it or a folder it lies in (that listing does not enter those)."""
    if is_hidden(rel):
        return False
    return not patterns or not any(pkgio.ignored(path, patterns) for path in (*pkgio.folders_of(rel), rel))


def _sort_link(listing: pkgio.Listing, rel: str) -> None:
    """File a link of the user's copy as :func:`pkgio.list_package` files it when it follows links: its name
    filter keeps resource names and links to folders."""
    path = os.path.join(listing.root, rel)
    if pkgio.is_krm_name(rel.rpartition("/")[2]) or os.path.isdir(path):
        # its package folder is left "": no reader of a resource listing asks for it
        pkgio.file_link(listing, rel, path, "")


__all__ = ["Snapshot", "SnapshotFile", "is_hidden"]
