"""One package merge's context: which (sub)package and resource an item is, its rules, and the merge of one resource.

kpt's strategies (:mod:`.updater`) share it: they decide what happens to
each resource; the matching of the three copies by identity and the field
by field merge of one resource live here once.  Texts are compared first;
a resource changed on both sides is merged on the plain data the fast
reader read (issue 45), and on ruamel round-trip trees only where plain
data cannot carry the answer (:meth:`MergeContext.round_trip_reason`).
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Callable

from krm_merge import merge3
from krm_merge.kptfile.document import (
    DEFAULT_KPTFILE, ROOT_KPTFILE, Strategy, is_kptfile, only_local_owned_changed, unchanged_upstream_keeps_local,
    upstream_info, without_local_owned,
)
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item
from krm_merge.krm.pkgio import folders_of
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import RULES_ANNOTATION, ConflictPolicy, FieldMark, FieldRule, FieldRules
from krm_merge.merge3.rules import MergeSchema, SchemaNodeAdapter
from krm_merge.outcomes.kinds import Action, Reason

from .conflict_lines import with_markers
from .identity import Identity, content_text, identity_of, strip_bookkeeping
from .resources import (
    drop_bookkeeping, is_crd, rules_of, same_content, take_disjoint_changes, take_upstream_change, upstream_change,
)
from .result import OtherFilesChanged, PackageMergeOptions, PackageMergeResult, RelPath
from .unchanged import comments_of, same_as_fetched, without_bookkeeping


class MergeContext:
    """The three copies of one package being merged: options, identities, rules, schemas."""

    def __init__(
        self, options: PackageMergeOptions, rel_path: RelPath, other_files_changed: OtherFilesChanged | None = None,
        root_dir: str = "",
    ) -> None:
        self.options = options
        self.root_dir = root_dir  # "" or the subpackage this merger handles on its own
        self.rel_path = rel_path
        self.other_files_changed = other_files_changed
        self._registries: dict[str, Any] = {}  # API group -> its schema registry (SchemaRegistry), built on first use
        self._crds_read: dict[str, Any] = {}  # a CRD's text -> its data
        self._crd_sources: list[Item] = []
        self._package_dirs: set[str] = set()
        self._own_rules: dict[int, list[FieldRule]] = {}  # id(local item) -> its annotation's rules
        self._package_rules: dict[str, list[FieldRule]] = {}  # package directory -> its local Kptfile's

    def prepare(self, local: list[Item], origin: list[Item], upstream: list[Item]) -> None:
        """Note what the whole package decides: its CRDs, its subpackage directories, local's rules."""
        self._crd_sources = [o for src in (local, origin, upstream) for o in src if is_crd(o)]
        self._package_dirs = set().union(*(self.subpackage_dirs(src) for src in (local, origin, upstream)))
        self._read_rules(local)

    def _read_rules(self, local: list[Item]) -> None:
        """Local's conflict rules, all read (and checked) before anything is merged.

        Only local's copy counts: the package is the user's, and a rule
        upstream adds or changes must not decide over the user's changes.
        """
        for obj in local:
            if RULES_ANNOTATION not in obj.text or RULES_ANNOTATION not in obj.annotations:
                continue
            rules = rules_of(obj, kinds=is_kptfile(obj))
            if is_kptfile(obj):
                self._package_rules[self.rel_path(obj).rpartition("/")[0]] = rules
            else:
                self._own_rules[id(obj)] = rules

    def _rules_for(self, obj: Item) -> FieldRules:
        if not self._own_rules and not self._package_rules:
            return FieldRules()
        return FieldRules.of(self._own_rules.get(id(obj), ()), self._package_rules.get(self.package_of(obj), ()), obj.kind)

    def identity(self, obj: Item) -> Identity:
        """Who a resource is across the copies; a Kptfile is its package directory."""
        if is_kptfile(obj):
            rel = self.rel_path(obj)
            return Identity("kpt.dev", "Kptfile", "", rel.rpartition("/")[0])
        return identity_of(obj)

    def package_of(self, obj: Item) -> str:
        """The (sub)package directory a resource belongs to ("" = the root package)."""
        return next((folder for folder in reversed(folders_of(self.rel_path(obj))) if folder in self._package_dirs), "")

    def keyed(self, *sources: list[Item]) -> list[dict[Any, Item]]:
        """Index each source by identity; identities repeated in a source also use the path."""
        # A resource never matches one of another (sub)package: kpt merges package by package.
        ids = [[(self.package_of(o), self.identity(o)) for o in src] for src in sources]
        repeated = {i for per in ids for i, n in Counter(per).items() if n > 1}
        out = []
        for src, per in zip(sources, ids):
            index: dict[Any, Item] = {}
            for obj, ident in zip(src, per):
                key = (ident, self.rel_path(obj)) if ident in repeated else ident
                if key in index:
                    raise KrmError(f"found duplicate resources {ident[1].display()} in {self.rel_path(obj)}", obj)
                index[key] = obj
            out.append(index)
        return out

    def subpackage_dirs(self, items: list[Item]) -> set[str]:
        """The subpackage directories the items' Kptfiles stand for (this merger's own root left out)."""
        dirs = set()
        for obj in items:
            if is_kptfile(obj):
                rel = self.rel_path(obj)
                directory = rel.rpartition("/")[0]
                if directory and directory != self.root_dir:
                    dirs.add(directory)
        return dirs

    def upstream_infos(self, items: list[Item]) -> dict[str, tuple[Any, Any]]:
        """Subpackage directory -> its Kptfile's (upstream, upstreamLock), for remote subpackages."""
        out = {}
        for obj in items:
            rel = self.rel_path(obj)
            if is_kptfile(obj) and "/" in rel and (info := upstream_info(obj.data)) is not None:
                out[rel.rpartition("/")[0]] = info
        return out

    def inside(self, directory: str) -> Callable[[Item], bool]:
        """A test: whether an item is below ``directory``."""
        prefix = directory + "/"
        return lambda obj: self.rel_path(obj).startswith(prefix)

    def root_kptfile_key(self, li: dict[Any, Item]) -> Any:
        """The key of the root Kptfile among local's items, or None."""
        for key, obj in li.items():
            if is_kptfile(obj) and self.rel_path(obj) == ROOT_KPTFILE:
                return key
        return None

    def package_kptfile_keys(self, li: dict[Any, Item], ui: dict[Any, Item]) -> list[Any]:
        """Local Kptfiles that stand for a package upstream has too (its directory exists there).

        The root always; with resource-merge also subpackages (kpt merges a
        subpackage whose Kptfile alone was removed upstream against an empty
        Kptfile; replace and fast-forward replace subpackages wholesale).
        """
        keys = []
        root = self.root_kptfile_key(li)
        if root is not None:
            keys.append(root)
        if self.options.strategy is Strategy.RESOURCE_MERGE:
            # every folder upstream has something in, at any depth
            up_dirs = {folder for o in ui.values() for folder in folders_of(self.rel_path(o))}
            for key, obj in li.items():
                if key != root and is_kptfile(obj) and self.rel_path(obj).rpartition("/")[0] in up_dirs:
                    keys.append(key)
        return keys

    def default_kptfile(self, key: Any, li: dict[Any, Item], oi: dict[Any, Item], ui: dict[Any, Item]) -> None:
        """An origin/upstream package without a Kptfile has kpt's default one (never delete local's).

        fast-forward then ignores the Kptfile ``kpt pkg get`` generated;
        force-delete-replace keeps local's whole (as kpt does: there is no
        upstream Kptfile to replace it with); resource-merge removes what
        upstream removed together with its Kptfile, and keeps the rest.
        """
        mine = li[key]
        name = str((mine.data.get("metadata") or {}).get("name", "")) if isinstance(mine.data, dict) else ""
        default = DEFAULT_KPTFILE.format(name=name or "package")
        if key not in oi:
            oi[key] = Item(default)
        if key not in ui:
            ui[key] = Item(default) if self.options.strategy is Strategy.RESOURCE_MERGE else mine

    def merge_index(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> None:
        """Follow upstream's file layout where local kept origin's: another file, or another place in it.

        kpt keeps a resource local changed in local's file and adds
        upstream's copy in the new file (a duplicate); the place is 3-way
        merged like a field instead.
        """
        if base is None:
            return
        here, there = self.rel_path(obj), self.rel_path(up)
        if here == self.rel_path(base) and there != here and not is_kptfile(obj):
            result.moved_file.append((obj, up))
            return
        if obj.index != base.index or up.index == base.index:
            return
        if self.rel_path(obj) == self.rel_path(base) == self.rel_path(up):
            result.moved_index.append((obj, up.index))

    def renamed_upstream(self, li: dict[Any, Item], oi: dict[Any, Item], ui: dict[Any, Item]) -> dict[Any, Any]:
        """Local keys of resources upstream renamed in place -> the key of upstream's renamed resource.

        Renamed in place: gone from upstream, and a resource of the same
        group and kind new in upstream at origin's file and document index;
        local's copy must be origin's (else the rules for a deleted resource
        apply).  Kptfiles are packages, never renamed.
        """
        gone = {(self.rel_path(base), base.index, base.group, base.kind): key for key, base in oi.items()
                if key in li and key not in ui and not is_kptfile(base)}
        if not gone:
            return {}
        out = {}
        for key, up in ui.items():
            place = (self.rel_path(up), up.index, up.group, up.kind)
            if key in li or key in oi or place not in gone:
                continue
            mine = gone.pop(place)
            if same_content(li[mine], oi[mine]):
                out[mine] = key
        return out

    def take_renamed(self, obj: Item, base: Item, up: Item, result: PackageMergeResult) -> None:
        """Make ``obj`` (origin's) upstream's renamed resource: local's text with upstream's change, new markers."""
        take_upstream_change(obj, base, up, renamed=True)
        result.items.append(obj)
        if obj.changed:
            result.updated.append(obj)
        result.outcomes.append((obj, Action.TAKEN, Reason.RENAMED_UPSTREAM, ""))

    def add(self, result: PackageMergeResult, up: Item) -> None:
        """Add upstream's new resource to the result (its bookkeeping dropped)."""
        new = Item(up.text)
        drop_bookkeeping(new)
        result.items.append(new)
        result.added.append((new, up))
        result.outcomes.append((new, Action.ADDED, Reason.ADDED_UPSTREAM, ""))

    def merge_into(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> bool:
        """Merge into ``obj``; False when the merge deletes it."""
        if is_kptfile(obj):
            if self._kptfile_unchanged_upstream(obj, base, up):
                result.outcomes.append((obj, Action.KEPT, Reason.UNCHANGED_UPSTREAM, ""))
            else:
                self._merge_kptfile(obj, base, up, result)
                result.outcomes.append((obj, Action.MERGED, Reason.KPTFILE, ""))
            return True
        lc, uc = content_text(obj.text), content_text(up.text)
        if lc == uc:
            result.outcomes.append((obj, Action.UNCHANGED, Reason.SAME_AS_UPSTREAM, ""))
            return True
        if base is not None:
            oc = content_text(base.text)
            if uc == oc and lc != oc:
                result.outcomes.append((obj, Action.KEPT, Reason.CHANGED_LOCALLY, ""))
                return True
            if lc == oc or same_as_fetched(obj, base):  # as data: kpt's get re-prints what it fetches
                result.outcomes.append((obj, Action.TAKEN, Reason.UNCHANGED_LOCALLY, ""))
                if take_upstream_change(obj, base, up, comments=comments_of(oc) != comments_of(uc)):
                    return True
                # upstream changed comments where local's text is not origin's: the 3-way merge carries them
                return self._full_merge(obj, base, up, result)
        result.outcomes.append((obj, Action.MERGED, Reason.CHANGED_ON_BOTH_SIDES, ""))
        if base is not None and (self._took_reformatted(obj, base, up) or self._took_disjoint_changes(obj, base, up)):
            return True
        return self._full_merge(obj, base, up, result)

    def _took_reformatted(self, obj: Item, base: Item, up: Item) -> bool:
        """A resource local only re-formatted (origin's data, key order and comments aside: an editor or a
        formatter wrote it back) takes upstream's change in its own text, as one unchanged locally does
        (issue 45).  No field changed on both sides, so no merge rule can decide one.  False when local's
        data is not origin's, or when upstream's comment change cannot be carried onto the text (the merge
        carries it)."""
        try:
            if not isinstance(obj.data, dict) or not same(without_bookkeeping(obj.data), without_bookkeeping(base.data)):
                return False
        except KrmError:
            return False  # the merge reports it
        if comments_of(base.text) != comments_of(up.text):
            return take_upstream_change(obj, base, up, comments=True)
        return take_disjoint_changes(obj, base, up)

    def _took_disjoint_changes(self, obj: Item, base: Item, up: Item) -> bool:
        """Upstream's change applied as data where local changed other fields (issue 33: the 3-way merge reads
        three ruamel trees and, for a custom kind, every CRD of the package).  Not with merge rules (they may
        decide a field otherwise) nor when upstream changed comments (the merge carries them)."""
        if self._own_rules or self._package_rules or comments_of(base.text) != comments_of(up.text):
            return False
        return take_disjoint_changes(obj, base, up)

    def _full_merge(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> bool:
        """The 3-way merge of a resource changed on both sides; False when it deletes the resource."""
        if self.round_trip_reason(obj, base, up) is None:
            merged = self._merge_as_data(obj, base, up, result)
            if merged is not None:
                return merged
        return self._merge_round_trip(obj, base, up, result)

    def round_trip_reason(self, obj: Item, base: Item | None, up: Item) -> str | None:
        """Why the 3-way merge of this resource needs ruamel.yaml's round-trip trees, or None (plain data will do).

        Plain data has no comments: a merge that must carry upstream's comment changes needs the trees.  (Conflict
        markers are written onto the plain merge's text where that gives the trees' bytes, :mod:`.conflict_lines`;
        the trees place the others.)  So does a document whose data is not a
        tree of string keys: YAML anchors and aliases (one node in several places), keys that are not strings
        (the trees' equality reads keys as text), a document that is not a mapping.
        """
        if comments_of(base.text if base is not None else "") != comments_of(up.text):
            return "upstream changed comments"
        try:
            versions = [obj.data, up.data] + ([base.data] if base is not None else [])
        except KrmError:
            return "unreadable"  # the round-trip reader reports it
        for data in versions:
            reason = _not_a_plain_tree(data)
            if reason is not None:
                return reason
        return None

    def _merge_as_data(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> bool | None:
        """The merge on plain data, written into local's text by the editing layer (issue 45): the walker and the
        visitor of the round-trip merge, on what the fast reader read.  None (``obj`` untouched) when no editor
        prints the answer faithfully: the round-trip merge then decides."""
        MISSING, Merge3Error = merge3.MISSING, merge3.Merge3Error
        local = obj.copy_data()  # tracked: local's list elements keep their bytes wherever they go
        origin = without_bookkeeping(base.data) if base is not None else MISSING
        upstream = without_bookkeeping(up.copy_data())  # its nodes are moved into local's (and completed): a copy
        merger = merge3.Merger(self._merge_options(obj), representation=merge3.PLAIN_DATA)
        try:
            merged = merger.merge_document(local, origin, upstream, self._resolve(up.api_version, up.kind))
        except Merge3Error as err:
            raise KrmError(err.message, obj, err.path or None) from None
        if merged is not MISSING:
            before, change = obj.text, _change(base, up, merger.conflicts)
            try:
                obj.set_data(merged, change=change)
            except KrmError:
                obj.set_text(before)  # drops a round-trip tree the failed print left edited
                return None
            if change is not None and obj.text != before:
                self._prefer_upstreams_lines(obj, before, change)
            if merger.pending:
                marked = with_markers(obj.text, merger.pending, obj.parsed())  # the item's one read of its text
                if marked is None:
                    obj.set_text(before)  # a marker only the round-trip merge places as it always has
                    return None
                obj.set_commented_text(marked)  # comments after one-line scalars: the same data
            result.marks.extend((obj, mark) for mark in merger.marked)
        result.conflicts.extend((obj, c) for c in merger.conflicts)
        return merged is not MISSING

    @staticmethod
    def _prefer_upstreams_lines(obj: Item, before: str, change: tuple[str, str]) -> None:
        """The round-trip merge's printer rule (``yamlio.dump_like``), so that both merges write the same bytes:
        upstream's changed lines carried onto local's text (``before``) replace the editor's answer when they
        change no more of its lines (a tie goes to them: they are as upstream wrote them).  Carried, they change
        as many lines as upstream's own diff: an answer that changes fewer is kept without trying."""
        edited = yamlio.changed_lines(before, obj.text)
        if edited < yamlio.changed_lines(*change):
            return
        carried = yamlio.carried_edit(before, *change, obj.text_data)
        if carried is not None and yamlio.changed_lines(before, carried) <= edited:
            obj.set_text(carried)

    def _merge_options(self, obj: Item) -> merge3.MergeOptions:
        """The 3-way merge's options for ``obj`` (its conflict rules, the package's schemas)."""
        return merge3.MergeOptions(self.options.conflicts, self.options.fallback_keys, self._resolve, self._rules_for(obj),
                                   keep_unchanged_nulls=True)  # a null nobody changed is no change (docs/merge.md)

    def _merge_round_trip(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> bool:
        # merge3's names load the engine (and ruamel) on first use: only a resource changed on both sides pays.
        MISSING, Merge3Error = merge3.MISSING, merge3.Merge3Error
        l_tree = yamlio.load_rt(obj.text, obj.display())
        unedited = copy.deepcopy(l_tree)  # ~5x cheaper than reading local's text again to compare the result
        o_tree = strip_bookkeeping(yamlio.load_rt(base.text, base.display())) if base is not None else MISSING
        u_tree = strip_bookkeeping(yamlio.load_rt(up.text, up.display()))
        merger = merge3.Merger(self._merge_options(obj))
        try:
            merged = merger.merge_document(l_tree, o_tree, u_tree, self._resolve(up.api_version, up.kind))
        except Merge3Error as err:
            raise KrmError(err.message, obj, err.path or None) from None
        result.conflicts.extend((obj, c) for c in merger.conflicts)
        if merged is MISSING:
            return False
        result.marks.extend((obj, mark) for mark in merger.marked)
        obj.set_text(yamlio.dump_like(merged, obj.text, unedited, _change(base, up, merger.conflicts)))
        return True

    def _kptfile_unchanged_upstream(self, obj: Item, base: Item | None, up: Item) -> bool:
        """Upstream's Kptfile is origin's, so the merge is local's (a nested one also keeps its upstream info)."""
        if base is None or content_text(up.text) != content_text(base.text):
            return False
        return unchanged_upstream_keeps_local(obj.data, up.data, nested="/" in self.rel_path(obj))

    def _merge_kptfile(self, obj: Item, base: Item | None, up: Item, result: PackageMergeResult) -> None:
        nested = "/" in self.rel_path(obj)
        if base is not None and not nested and _took_upstream_kptfile_change(obj, base, up):
            return
        # The pipeline-aware merge loads the engine: only when a Kptfile changed on both sides (start-up time).
        from krm_merge.kptfile.merge import merge_kptfile

        MISSING, Merge3Error = merge3.MISSING, merge3.Merge3Error  # on first use, as in _full_merge
        l_tree = yamlio.load_rt(obj.text, obj.display())
        unedited = copy.deepcopy(l_tree)
        o_tree = strip_bookkeeping(yamlio.load_rt(base.text, base.display())) if base is not None else MISSING
        u_tree = strip_bookkeeping(yamlio.load_rt(up.text, up.display()))
        marked: list[FieldMark] = []
        try:
            merged, conflicts = merge_kptfile(l_tree, o_tree, u_tree, update_upstream=nested, conflicts=self.options.conflicts,
                                              marked=marked)
        except Merge3Error as err:
            raise KrmError(err.message, obj, err.path or None) from None
        result.conflicts.extend((obj, c) for c in conflicts)
        result.marks.extend((obj, mark) for mark in marked)
        obj.set_text(yamlio.dump_like(merged, obj.text, unedited, _change(base, up, conflicts)))

    def _resolve(self, api_version: str, kind: str) -> MergeSchema | None:
        """The schema of a kind (CRDs of the three copies included), built on first use for its API group."""
        group = api_version.rpartition("/")[0]
        registry = self._registries.get(group)
        if registry is None:
            # Only a resource changed on both sides asks for a schema: an update that merges
            # none never loads the registry and the built-in table's reader (issue 24).
            from krm_merge.schema.registry import SchemaRegistry

            # Only the CRDs that may define the group are read (issue 45: a Deployment merged in a package of
            # CRDs read them all, ~40 ms for porch's); a CRD upstream did not change is read once.
            crds = [self._crd_data(o) for o in self._crd_sources if _may_define(o.text, group)]
            try:
                registry = self._registries[group] = SchemaRegistry(crds=crds)
            except Exception as err:  # an invalid CRD must not stop the merge of other kinds
                self._registries[group] = SchemaRegistry()
                raise KrmError(f"cannot use CRD schemas: {err}") from None
        return SchemaNodeAdapter(registry.for_object(api_version, kind))

    def _crd_data(self, crd: Item) -> Any:
        """A CRD's data, read once per text (origin's and upstream's copies of a CRD upstream left alone are one)."""
        data = self._crds_read.get(crd.text)
        if data is None:
            data = self._crds_read[crd.text] = crd.data
        return data


def _may_define(text: str, group: str) -> bool:
    """Whether a CRD's text may define kinds of API ``group``: its ``spec.group`` is written in it, so a text
    without the group's name cannot.  None defines the core group: the API server refuses a CRD without a
    group (``spec.group: Required value``)."""
    return bool(group) and group in text


def _took_upstream_kptfile_change(obj: Item, base: Item, up: Item) -> bool:
    """A root Kptfile local left as origin's but for its own fields (kpt's get writes them): upstream's change
    applied to local's text as for a resource, without the engine and ruamel (issue 33: ~0.1 s of a small update).

    The merge's result as data: a copy's own fields are never merged and nothing changed on both sides.
    False (the merge runs) when upstream changed comments, which the data does not carry, or the editors decline.
    """
    if comments_of(base.text) != comments_of(up.text):
        return False
    try:
        local, origin, upstream = obj.data, base.data, up.data
    except KrmError:
        return False  # the merge reports it
    if not isinstance(upstream, dict) or not only_local_owned_changed(local, origin):
        return False
    before = obj.text
    try:
        obj.set_data(upstream_change(local, without_local_owned(origin), without_local_owned(upstream)),
                     change=(base.text, up.text))
    except KrmError:
        obj.set_text(before)  # drops a round-trip tree the failed print left edited
        return False
    return True


def _not_a_plain_tree(data: Any) -> str | None:
    """Why ``data`` cannot be merged as plain data (see :meth:`MergeContext.round_trip_reason`), or None."""
    if not isinstance(data, dict):
        return "not a mapping"
    seen: set[int] = set()
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return "anchors and aliases"  # one node in two places: a copy would expand what the alias shares
        seen.add(id(node))
        if isinstance(node, dict):
            if not all(type(key) is str for key in node):
                return "keys that are not strings"
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        else:
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return None


def _change(base: Item | None, up: Item, conflicts: list[Any]) -> tuple[str, str] | None:
    """Origin's and upstream's texts, whose changed lines the merged text may take as written (the printer
    proves the data); not when a conflict was decided (``--conflicts mark`` writes its markers into the tree)."""
    return None if base is None or conflicts else (base.text, up.text)


__all__ = ["MergeContext"]
