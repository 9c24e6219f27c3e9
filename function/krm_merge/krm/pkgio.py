"""Package I/O: one lister of a package's files, one change set written as a transaction.

Modelled on kyaml's ``kio``: a reader lists and reads the files, filters
(promote's byte screen, the conflict finders, ``krm/package.read_package``)
sit on the listing, and every write is a :class:`ChangeSet` whose
:meth:`ChangeSet.apply` goes through :func:`krm_merge.txn.commit`.

The symbolic-link policy, the same for every command (docs/security.md):

* **reading**: a link to a file is listed and read wherever it points, as
  ``kpt fn source`` reads it; a link to a folder is not followed (listed in
  :attr:`Listing.linked_dirs`); a broken link is listed in
  :attr:`Listing.broken_links` and a reader refuses it, naming it
  (:func:`broken_link_error`), as ``kpt fn source`` does.  ``update`` skips
  the links of the local package, as ``kpt pkg update`` does.
* **writing**: a changed file reached through a link is written to the
  link's target when that target is a file inside the package (not under
  ``.git`` or krm-merge's reserved names), as ``kpt fn sink`` writes through
  links; a link leading out of the package is refused (kpt would write
  through it).  Deleting a link deletes the link, never its target.

Paths are strings: pathlib (with urllib.parse and ipaddress behind it) is
imported only to write, so a read-only command's start-up does not pay for it.
"""

from __future__ import annotations

import fnmatch
import io
import os
import unicodedata

from krm_merge import files, txn
from krm_merge.krm.results import File, KrmError
from krm_merge.records import Record
from krm_merge.yaml.load import check_size, max_input_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Collection, Iterable, Iterator, Sequence

YAML_SUFFIXES = (".yaml", ".yml")
KPTFILE = "Kptfile"

KIND_KRM = "krm"
"""A YAML file (``.yaml``/``.yml``): read as KRM documents."""
KIND_KPTFILE = "kptfile"
"""A ``Kptfile``: the package's own metadata, read as a KRM document too."""
KIND_OTHER = "other"
"""Any other file (README, scripts, ``Kustomization``): bytes only."""

LEDGER_NAME = files.LEDGER_NAME
"""krm-merge's record of the conflicts an update left marked (:mod:`krm_merge.update.ledger`)."""
# krm-merge's own state in a package: content from elsewhere never brings a file of these names.  Which
# names a listing leaves out is :func:`files.protected_name`'s to say (these, .git, and every other
# spelling a file system takes for one of them); this set is only their exact spelling.
OWN_NAMES = files.OWN_STATE_NAMES


def kind_of(name: str) -> str:
    """The kind of a file by its name (:data:`KIND_KRM`, :data:`KIND_KPTFILE` or :data:`KIND_OTHER`)."""
    if name == KPTFILE:
        return KIND_KPTFILE
    if name.endswith(YAML_SUFFIXES):
        return KIND_KRM
    return KIND_OTHER


def folders_of(rel: str) -> list[str]:
    """The folders a package-relative path lies in, outermost first (``a/b/c.yaml``: ``a``, ``a/b``).

    What a question "is this path inside one of these folders?" looks up, one
    set lookup a level, instead of comparing the path with every folder.
    """
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def is_krm_name(name: str) -> bool:
    """Whether ``kpt fn source`` reads a file of this name (a YAML file or a Kptfile)."""
    return name == KPTFILE or name.endswith(YAML_SUFFIXES)


class PackageFile(Record):
    """One file of a listing."""

    rel: str  # relative to the root, "/" separators
    path: str  # the root joined with rel (as reached: a link is not resolved)
    kind: str  # KIND_KRM, KIND_KPTFILE or KIND_OTHER
    is_link: bool  # a symbolic link to a file (read through it; see the module docstring)
    package: str  # the folder of the nearest Kptfile at or above it, relative ("" for the root)


# The records below are plain classes with __slots__, not dataclasses: every command that
# reads or writes a package loads this module, and creating dataclasses cost a small
# update's start-up several milliseconds (issue 24).


class Listing:
    """What :func:`list_package` found below a root, every list in sorted order."""

    __slots__ = ("root", "files", "linked_dirs", "broken_links", "others", "subpackages", "dirs", "links", "own_names",
                 "git_names")

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: list[PackageFile] = []
        self.linked_dirs: list[str] = []  # links to folders: not followed
        self.broken_links: list[str] = []  # links whose target does not exist
        self.others: list[str] = []  # neither a file, a folder nor a link (FIFO, socket)
        self.subpackages: list[str] = []  # folders below the root holding a Kptfile
        self.dirs: list[str] = []  # every real folder below the root it reached (links: linked_dirs)
        self.links: list[str] = []  # nofollow/untrusted listings: every link, none followed
        self.own_names: list[str] = []  # untrusted listings: entries named as krm-merge's own state (left out)
        self.git_names: list[str] = []  # untrusted listings: entries that are .git in another spelling (left out)

    def rels(self) -> list[str]:
        """The relative paths of the files."""
        return [f.rel for f in self.files]


def list_package(
    root: str | os.PathLike[str],
    *,
    suffixes: tuple[str, ...] | None = None,
    names: Collection[str] = (),
    hidden: bool = False,
    krmignore: bool = True,
    subpackages: bool = True,
    nofollow: bool = False,
    untrusted: str | None = None,
    ignore: Sequence[str] | None = None,
) -> Listing:
    """The files below ``root``, with their kind, link status and package folder.

    Only files whose name ends with one of ``suffixes`` or is one of ``names``
    are listed; with neither, every file.  Names starting with
    ``.`` (files and folders) are left out unless ``hidden``; ``.git``,
    ``.krm-merge.lock``, ``.krm-merge.txn`` and ``.krm-merge.conflicts`` always are,
    in every spelling a file system takes for them (:func:`files.protected_name`:
    ``.GIT``, ``git~1``, ``.Krm-Merge.Lock``...; an untrusted listing names the last
    three in :attr:`Listing.own_names` and the other spellings of ``.git`` in
    :attr:`Listing.git_names`).  With ``krmignore``
    the patterns of the root's ``.krmignore`` leave out what they match, as
    ``kpt fn source`` does.  Without ``subpackages`` a folder holding a
    ``Kptfile`` (below the root) is not entered, only named in
    :attr:`Listing.subpackages`.  Links follow the module's policy; with
    ``nofollow`` none is followed (each in :attr:`Listing.links`) and
    folders are entered by descriptor, for :func:`files.read_beneath`.  ``untrusted``
    (a tree from elsewhere, named so in messages: ``"upstream"``) implies
    ``nofollow`` and refuses with ``files.UntrustedTreeError`` a name
    with a control character or a slash, two names one case-insensitive
    file system would merge, a file above the input size limit, and more
    than ``files.MAX_TREE_FILES`` files or ``files.MAX_TREE_BYTES`` bytes in
    all (of what the walk reaches: list with ``hidden`` and without
    ``krmignore`` to check the whole tree).  ``ignore`` gives the
    ``.krmignore`` patterns to apply instead of the root's own (``update``
    reads origin and upstream by local's: the user's package says what is
    KRM, not a copy from elsewhere).
    Raises ``OSError`` when a folder cannot be read.
    """
    root = os.fspath(root)
    listing = Listing(root)
    nofollow = nofollow or untrusted is not None
    if ignore is not None:
        patterns = list(ignore)
    else:
        patterns = (krmignore_beneath(root) if nofollow else read_krmignore(root)) if krmignore else []
    pending: list[tuple[str, str, str]] = [(root, "", "")]  # (folder, its rel prefix, package of its parent)
    listed, dirs = listing.files, listing.dirs
    protected = files.protected_name
    every = suffixes is None and not names
    suffixes = suffixes or ("\0",)  # no name ends with NUL: only ``names`` then
    if nofollow:
        _walk_beneath(listing, pending, patterns, every, suffixes, names, hidden, subpackages, untrusted)
        return _sorted(listing)
    new = tuple.__new__  # a NamedTuple built this way skips its __new__'s argument handling: 5,000 files a run
    # This loop runs once per entry of the tree and is most of promote's screen: kept flat, and
    # plain entries are told apart by their dirent type (no stat).
    while pending:
        directory, prefix, package = pending.pop()
        mark = (len(listed), len(pending))
        has_kptfile = False
        it = os.scandir(directory)
        try:
            for entry in it:
                name = entry.name
                if name == KPTFILE:
                    has_kptfile = True  # known only once the folder is read: its entries are re-tagged below
                lead = name[0]
                if lead == "." and not hidden:
                    continue
                # runs for every name of the tree: the call only for a name that may be a protected one (what
                # passes files.may_be_protected passes this test too)
                if (lead == "." or lead > "\x7f" or "~" in name) and protected(name) is not None:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    rel = prefix + name
                    if not (patterns and ignored(rel, patterns)):
                        pending.append((entry.path, rel + "/", package))
                        dirs.append(rel)
                elif every or name.endswith(suffixes) or name in names:
                    rel = prefix + name
                    if patterns and ignored(rel, patterns):
                        continue
                    if entry.is_file(follow_symlinks=False):
                        kind = (KIND_KRM if name.endswith(YAML_SUFFIXES) else KIND_KPTFILE if name == KPTFILE
                                else KIND_OTHER)
                        listed.append(new(PackageFile, (rel, entry.path, kind, False, package)))
                    else:
                        _list_other(listing, entry, rel, package)
                elif entry.is_symlink() and entry.is_dir():
                    rel = prefix + name
                    if not (patterns and ignored(rel, patterns)):
                        listing.linked_dirs.append(rel)
        finally:
            it.close()
        if has_kptfile and prefix:
            _subpackage(listing, pending, mark, prefix[:-1], subpackages)
    return _sorted(listing)


def _sorted(listing: Listing) -> Listing:
    """The listing with every list sorted (files by rel: their first field, unique)."""
    for found in (listing.linked_dirs, listing.broken_links, listing.others, listing.subpackages, listing.dirs,
                  listing.links, listing.own_names, listing.git_names):
        found.sort()
    listing.files.sort()
    return listing


def _walk_beneath(listing: Listing, pending: list[tuple[str, str, str]], ignore: list[str], every: bool,
                  suffixes: tuple[str, ...], names: Collection[str], hidden: bool, subpackages: bool,
                  untrusted: str | None) -> None:
    """:func:`list_package`'s walk with ``nofollow``: each folder opened by descriptor, no link followed.

    The same filters as the walk above; a link (to anything) the filters keep
    goes to :attr:`Listing.links` and is never stat'ed through.  A folder
    swapped for a link after its parent was read is refused when entered
    (:func:`files.open_dir_beneath`).  With ``untrusted`` every entry's name,
    every folder's depth and every regular file's size are checked too, and
    charged to the tree's budget (see :func:`list_package`).
    """
    root = listing.root
    budget = files.tree_budget()
    limit = max_input_bytes()
    listed, dirs = listing.files, listing.dirs
    while pending:
        directory, prefix, package = pending.pop()
        mark = (len(listed), len(pending))
        has_kptfile = False
        seen: dict[str, str] = {}
        fd = files.open_dir_beneath(root, prefix[:-1])
        try:
            with os.scandir(fd) as it:
                entries = list(it)
            for entry in entries:
                name = entry.name
                rel = prefix + name
                if untrusted is not None:
                    _check_untrusted_entry(seen, prefix, name, untrusted)
                lead = name[0]
                if (lead == "." or lead > "\x7f" or "~" in name) and _left_out(listing, rel, name, untrusted):
                    continue  # (the test before the call: as in list_package's loop)
                if lead == "." and not hidden:
                    continue
                kept = (every or name.endswith(suffixes) or name in names) and not (ignore and ignored(rel, ignore))
                if entry.is_symlink():
                    if kept:
                        listing.links.append(rel)
                elif entry.is_dir(follow_symlinks=False):
                    if untrusted is not None:
                        files.check_untrusted_depth(rel, untrusted)
                    if not (ignore and ignored(rel, ignore)):
                        pending.append((os.path.join(directory, name), rel + "/", package))
                        dirs.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    has_kptfile = has_kptfile or name == KPTFILE
                    if untrusted is not None:
                        # the entry's lstat, made relative to the folder's descriptor (still open here)
                        size = entry.stat(follow_symlinks=False).st_size
                        if size > limit:
                            check_size(size, f"{untrusted}: {rel}")
                        budget.charge(size, untrusted)
                    if kept:
                        listed.append(PackageFile(rel, os.path.join(directory, name), kind_of(name), False, package))
                elif kept:
                    listing.others.append(rel)
        finally:
            os.close(fd)
        if has_kptfile and prefix:
            _subpackage(listing, pending, mark, prefix[:-1], subpackages)


def _left_out(listing: Listing, rel: str, name: str, untrusted: str | None) -> bool:
    """Whether an entry is git's folder or krm-merge's own state in any spelling (:func:`files.protected_name`),
    never listed; an untrusted listing names it (:attr:`Listing.own_names`, :attr:`Listing.git_names`) unless
    it is ``.git`` as spelled, which a copy of a repository's work tree holds."""
    protected = files.protected_name(name)
    if protected is None:
        return False
    if untrusted is not None and name != files.GIT_FOLDER:
        (listing.git_names if protected == files.GIT_FOLDER else listing.own_names).append(rel)
    return True


def _check_untrusted_entry(seen: dict[str, str], prefix: str, name: str, what: str) -> None:
    """Check the name of an entry of one folder of a tree from elsewhere (``prefix``: that folder's, "a/b/"):
    the name itself (:func:`files.check_untrusted_name`), then against the folder's names ``seen`` so far
    (same-file key -> name), which it joins.  Two names one file system would merge are refused, and so is
    one name twice, which no folder on disk holds but a git tree object can (git fsck: duplicateEntries)."""
    rel = prefix + name
    files.check_untrusted_name(name, rel, what)
    key = _same_file_key(name)
    earlier = seen.get(key)
    if earlier is None:
        seen[key] = name
    elif earlier == name:
        raise files.UntrustedTreeError(f"{what}: {rel}: two entries of one folder have this name; refused", file=rel)
    else:
        _refuse_clash(what, prefix, earlier, name)


def _same_file_key(name: str) -> str:
    """What a case-insensitive, Unicode-normalising file system (macOS, Windows) keeps of a name.

    Canonical caseless matching (Unicode's D145): ``é`` written precomposed
    (NFC) or as ``e`` + combining accent (NFD) is one name there, as are
    ``Service`` and ``service``.
    """
    if name.isascii():
        return name.casefold()
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def _refuse_clash(what: str, prefix: str, earlier: str, name: str) -> None:
    """Refuse two names of one folder that are one file elsewhere, named in one order whatever the folder's."""
    first, second = sorted((earlier, name))
    if first.casefold() == second.casefold():
        why = "are the same file on a case-insensitive file system"
    else:
        why = (f"({ascii(first)}, {ascii(second)}) are the same file on a file system that normalises "
               "Unicode names (NFC/NFD, as macOS does)")
    raise files.UntrustedTreeError(f"{what}: {prefix + first} and {prefix + second} {why}; refused",
                                   file=prefix + second)


def krmignore_beneath(root: str) -> list[str]:
    """:func:`read_krmignore` for a nofollow listing: a ``.krmignore`` that is a link (or none) is no file."""
    try:
        data = files.read_beneath(root, ".krmignore")
    except (FileNotFoundError, files.UntrustedTreeError):
        return []
    return _krmignore_patterns(io.TextIOWrapper(io.BytesIO(data)).read())  # as open() reads the file


def _subpackage(listing: Listing, pending: list[tuple[str, str, str]], mark: tuple[int, int], package: str,
                enter: bool) -> None:
    """A folder just read holds a Kptfile: tag what it added with its package, or take it all back.

    ``mark`` is how many files and pending folders there were before the folder was read.
    """
    files_at, pending_at = mark
    listing.subpackages.append(package)
    if not enter:
        del listing.files[files_at:], pending[pending_at:]
        inside = package + "/"
        for found in (listing.linked_dirs, listing.broken_links, listing.others, listing.dirs, listing.links):
            found[:] = [rel for rel in found if not rel.startswith(inside)]
        return
    listing.files[files_at:] = [f._replace(package=package) for f in listing.files[files_at:]]
    pending[pending_at:] = [(directory, prefix, package) for directory, prefix, _ in pending[pending_at:]]


def _list_other(listing: Listing, entry: os.DirEntry[str], rel: str, package: str) -> None:
    """File an entry that is neither a folder nor a regular file: a link (followed once, by stat) or a special file.

    The caller passes only entries its name filter keeps, and links to folders.
    """
    if entry.is_symlink():
        file_link(listing, rel, entry.path, package)
    else:
        listing.others.append(rel)


def file_link(listing: Listing, rel: str, path: str, package: str) -> None:
    """File a link (followed once, by stat): to a folder, to a file (read through it), broken, or to anything else.

    The one rule for where a listing puts a link: :func:`list_package` when it follows links, and a
    snapshot's resource view (:meth:`krm_merge.krm.snapshot.Snapshot.resources`) filtering its one listing.
    """
    if os.path.isdir(path):
        listing.linked_dirs.append(rel)
    elif os.path.isfile(path):
        listing.files.append(PackageFile(rel, path, kind_of(rel.rpartition("/")[2]), True, package))
    elif not os.path.exists(path):
        listing.broken_links.append(rel)
    else:
        listing.others.append(rel)


def check_untrusted(root: str | os.PathLike[str], what: str) -> Listing:
    """Check a whole tree from elsewhere (``what``: ``"origin"``, ``"upstream"``) before any of it is read.

    :func:`list_package` with ``untrusted``, hidden names included and no
    ``.krmignore``: raises ``files.UntrustedTreeError`` for a bad name, a
    folder nested too deep, a file above the size limit or too many files or
    bytes (see there); its links and special files (:attr:`Listing.links`,
    :attr:`Listing.others`) are never read, and a caller names each (kpt pkg
    update skips links silently).
    """
    return list_package(root, hidden=True, krmignore=False, untrusted=what)


ENTRY_DIR, ENTRY_FILE, ENTRY_LINK = "dir", "file", "link"  # what an entry of :func:`listing_of_entries` is


def listing_of_entries(root: str, entries: Iterable[tuple[str, str]], what: str) -> Listing:
    """The listing :func:`check_untrusted` would make of a tree from elsewhere held in memory (a git tree), from
    its entries ``(rel, kind)``, each folder before what it holds (kind :data:`ENTRY_DIR`, :data:`ENTRY_FILE`,
    :data:`ENTRY_LINK`).

    The same rules as the walk of a folder on disk: names checked
    (:func:`files.check_untrusted_name`), two names of one folder that one
    file system would merge refused, folders' depth checked, ``.git`` and
    krm-merge's own names left out in every spelling (named in
    :attr:`Listing.own_names` and :attr:`Listing.git_names` as :func:`list_package`
    names them, what is below them never listed), links named
    in :attr:`Listing.links`, subpackages found by their Kptfiles.  Sizes
    and the tree's budget are the reader's: it knows them before it reads.
    ``root`` only names the tree: nothing is looked up on disk.
    """
    listing = Listing(root)
    seen: dict[str, dict[str, str]] = {}  # folder -> same-file key -> the name that has it
    left_out: set[str] = set()  # folders not entered (.git, krm-merge's own names), and every folder below one
    for rel, kind in entries:
        folder, _, name = rel.rpartition("/")
        if folder in left_out:
            if kind == ENTRY_DIR:
                left_out.add(rel)
            continue
        _check_untrusted_entry(seen.setdefault(folder, {}), folder + "/" if folder else "", name, what)
        if _left_out(listing, rel, name, what):
            if kind == ENTRY_DIR:
                left_out.add(rel)
        elif kind == ENTRY_LINK:
            listing.links.append(rel)
        elif kind == ENTRY_DIR:
            files.check_untrusted_depth(rel, what)
            listing.dirs.append(rel)
        else:
            if name == KPTFILE and folder:
                listing.subpackages.append(folder)
            listing.files.append(PackageFile(rel, os.path.join(root, rel), kind_of(name), False, ""))
    inside = set(listing.subpackages)
    listing.files = [f._replace(package=_package_of(f.rel, inside)) for f in listing.files] if inside else listing.files
    return _sorted(listing)


def _package_of(rel: str, subpackages: set[str]) -> str:
    """The nearest folder above ``rel`` holding a Kptfile ("" for the root's package)."""
    folder = rel.rpartition("/")[0]
    while folder and folder not in subpackages:
        folder = folder.rpartition("/")[0]
    return folder


def prune_untrusted(root: str | os.PathLike[str], what: str) -> Listing:
    """Check a tree krm-merge unpacked itself (:func:`check_untrusted`) and delete every link and special file
    in it, so that later readers of that private folder cannot meet one; the listing names what was deleted."""
    listing = check_untrusted(root, what)
    for rel in listing.links + listing.others:
        files.unlink_beneath(listing.root, rel)
    return listing


def broken_link_error(root: str, rel: str) -> KrmError:
    """The refusal of the broken link ``rel`` under ``root``, named with its target, as kpt fn source refuses it."""
    return KrmError(f"{rel} is a broken symbolic link (to {link_target(root, rel)})", file=File(rel))


def link_target(root: str, rel: str) -> str:
    """Where the listed link ``rel`` under ``root`` points, as written in the link (how messages name it)."""
    return os.readlink(os.path.join(root, rel))


def read_krmignore(root: str) -> list[str]:
    """The patterns of ``root/.krmignore`` (empty when there is none)."""
    path = os.path.join(root, ".krmignore")
    if not os.path.isfile(path):
        return []
    with open(path) as fh:  # as Path.read_text: the locale's encoding
        return _krmignore_patterns(fh.read())


def _krmignore_patterns(text: str) -> list[str]:
    """The patterns of a ``.krmignore`` text: its lines, stripped, but blank ones and comments."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def ignored(rel: str, patterns: list[str]) -> bool:
    """Whether a ``.krmignore`` pattern matches ``rel`` (its path, its name, or a folder above it)."""
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        pat = pattern.rstrip("/").lstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(name, pat) or rel.startswith(pat + "/"):
            return True
    return False


# --- the change set ---------------------------------------------------------------------


class Write:
    """One planned change of a package file: new bytes, or ``data is None`` to delete it.

    ``before`` holds the bytes the command read (None: the file did not
    exist); the transaction refuses to go on when the file no longer holds
    them.
    """

    __slots__ = ("path", "before", "data")

    def __init__(self, path: str, before: bytes | None, data: bytes | None) -> None:
        self.path = path
        self.before = before
        self.data = data

    def __repr__(self) -> str:
        return f"Write(path={self.path!r}, before={self.before!r}, data={self.data!r})"

    @property
    def text(self) -> str | None:
        """The new content as UTF-8 text (None for a deletion)."""
        return None if self.data is None else self.data.decode("utf-8")

    @property
    def before_text(self) -> str | None:
        """The content read as UTF-8 text (None for a new file)."""
        return None if self.before is None else self.before.decode("utf-8")


class ChangeSet:
    """Everything a command will change in a package: file writes and deletions, then folders to remove if empty."""

    __slots__ = ("writes", "remove_dirs")

    def __init__(self, writes: list[Write] | None = None, remove_dirs: list[str] | None = None) -> None:
        self.writes: list[Write] = [] if writes is None else writes
        self.remove_dirs: list[str] = [] if remove_dirs is None else remove_dirs

    def __len__(self) -> int:
        return len(self.writes)

    def __iter__(self) -> Iterator[Write]:
        return iter(self.writes)

    def __bool__(self) -> bool:
        return bool(self.writes or self.remove_dirs)

    def validate(self, root: str | os.PathLike[str]) -> list[txn.Change]:
        """Every refusal the write would make, made now; the transaction's changes (links replaced by their targets).

        The one check of a change set, made by :meth:`apply` and :meth:`diff`
        alike, so that a dry run refuses what the real run would: a path or
        link leading out of the package or into ``.git`` or krm-merge's
        reserved names (``files.UnsafePathError``), two links to one file
        with different new bytes, new files whose names one case-insensitive
        or Unicode-normalising file system would merge (``KrmError``), and
        the writer's own refusals (:func:`krm_merge.txn.check_changes`: a
        folder where a file goes, a file where a folder must be made).
        """
        real_root = os.path.realpath(root)
        planned = transaction_changes(real_root, self.writes)
        txn.check_changes(real_root, planned, self.remove_dirs)
        _check_new_names(real_root, planned)
        return planned

    def apply(self, root: str | os.PathLike[str], *, command: str) -> None:
        """Write the change set as one transaction under the package lock (:func:`krm_merge.txn.commit`).

        Links follow the module's policy.  Raises what :meth:`validate` raises,
        ``txn.ChangedUnderneathError`` for a file edited underneath, ``OSError``
        when staging fails: nothing is written in every case.
        """
        real_root = os.path.realpath(root)
        txn.commit(real_root, self.validate(real_root), remove_dirs=self.remove_dirs, command=command)

    def diff(self, root: str | os.PathLike[str]) -> Iterator[str]:
        """A unified diff, one file at a time (a dry run writes it as it is made), once :meth:`validate` passed.

        Raises what :meth:`validate` raises when it is called, before any line.
        A file that is not UTF-8 text on either side gets a one-line note, as
        does every folder to remove.
        """
        self.validate(root)
        return self._diff()

    def _diff(self) -> Iterator[str]:
        for write in self.writes:
            try:
                before, after = write.before_text, write.text
            except UnicodeDecodeError:
                yield f"Binary file {write.path} {'deleted' if write.data is None else 'changed'}\n"
                continue
            yield from files.iter_unified_diff([(write.path, before, after)])
        for rel in self.remove_dirs:
            yield f"directory {rel} removed\n"


def transaction_changes(root: str, writes: Sequence[Write]) -> list[txn.Change]:
    """The writes as the transaction's changes, each link replaced by its target (``root`` resolved)."""
    planned: list[txn.Change] = []
    by_target: dict[str, Write] = {}
    for write in writes:
        if write.data is None:  # deleting a link deletes the link, not its target
            planned.append(txn.Change(write.path, None, write.before))
            continue
        target = write_target(root, write.path)
        earlier = by_target.setdefault(target, write)
        if earlier is not write:
            if earlier.data != write.data:
                raise KrmError(f"refusing to write {write.path!r} and {earlier.path!r}: they are the same file "
                               "(a symbolic link) and the changes differ", file=File(write.path))
            continue
        planned.append(txn.Change(target, write.data, write.before))
    return planned


def _check_new_names(root: str, planned: Sequence[txn.Change]) -> None:
    """Refuse a new file whose name, but for case or Unicode normalisation, is another file's of its folder.

    A case-insensitive file system (macOS, Windows) or one that normalises
    names would hold one file for both: there the write would find the new
    file "created by someone else", and a checkout of the package would lose
    one of them.
    """
    seen: dict[str, str] = {}
    listed: set[str] = set()
    for change in planned:
        if change.before is not None or change.data is None:
            continue
        folder = change.path.rpartition("/")[0]
        if folder not in listed:
            listed.add(folder)
            try:
                names = os.listdir(os.path.join(root, folder))
            except OSError:
                names = []  # a folder the write makes
            for name in names:
                rel = f"{folder}/{name}" if folder else name
                seen.setdefault(_folded(rel), rel)
        earlier = seen.setdefault(_folded(change.path), change.path)
        if earlier != change.path:
            raise KrmError(f"refusing to write {change.path!r}: {earlier!r} differs only in case or Unicode "
                           "normalisation, and a case-insensitive file system (macOS, Windows) holds one file "
                           "for both", file=File(change.path))


def _folded(rel: str) -> str:
    return unicodedata.normalize("NFC", rel).casefold()


def write_target(root: str, rel: str) -> str:
    """The package-relative file a write of ``rel`` changes: ``rel`` itself, or the target of a link inside.

    Raises ``files.UnsafePathError`` when the path or the link leads out of
    the package, or into ``.git`` or krm-merge's reserved names.
    """
    real = files.check_target(root, rel, through_links=True)
    # Not a link: the path itself, normalised as relpath would (without relpath's cost, per file written)
    target = os.path.normpath(rel) if real == os.path.join(root, rel) else os.path.relpath(real, root)
    target = target.replace(os.sep, "/")
    if target != rel and files.protected_name(target.split("/", 1)[0]) is not None:
        raise files.UnsafePathError(f"refusing to write {rel!r}: it is a symbolic link into {target.split('/', 1)[0]}",
                                    file=rel)
    return target


__all__ = [
    "ENTRY_DIR", "ENTRY_FILE", "ENTRY_LINK", "KIND_KPTFILE", "KIND_KRM", "KIND_OTHER", "KPTFILE", "LEDGER_NAME", "OWN_NAMES", "YAML_SUFFIXES",
    "ChangeSet", "Listing", "PackageFile", "Write", "broken_link_error", "check_untrusted", "file_link", "folders_of", "ignored",
    "is_krm_name", "kind_of", "list_package", "listing_of_entries",
    "prune_untrusted", "read_krmignore", "transaction_changes", "write_target",
]
