"""Package-level 3-way merge: resources matched by identity, then merged field by field.

Resource level (kpt's rules, task spec):

==========  ========  =======  ==============================================
origin      upstream  local    result
==========  ========  =======  ==============================================
–           –         yes      keep local
–           yes       –        add upstream's
yes         –         yes      delete if local is unmodified, else keep + warning
yes         yes       –        stays deleted
any         yes       yes      field-level 3-way merge (origin may be absent)
==========  ========  =======  ==============================================

Package level (kpt's rules, checked against kpt 1.0.0-beta.56): a subpackage
(a directory below the root holding a Kptfile) is decided as a whole before
its resources are merged — deleted upstream: removed if unchanged locally,
else kept whole with a warning; deleted locally: stays deleted (upstream's
new files are not brought back); added on both sides: an error, as in kpt;
a remote subpackage (its Kptfile has its own ``upstream``) is merged with
the parent's upstream copy unless local re-pointed it (its upstream info
differs from origin's: then it is left alone), and only its Kptfile is
merged when upstream's copy is unfetched (``upstream`` without
``upstreamLock``); ``krm-merge update`` then updates it from its own
upstream, as ``kpt pkg update`` does.
The root Kptfile is never deleted: an origin or upstream without one
(``kpt pkg get`` generated local's) counts as kpt's default Kptfile.

Only resources that differ are parsed with ruamel: texts are compared first
(bookkeeping removed): local == origin -> upstream's; upstream == origin ->
local's.  Kptfiles go through the pipeline-aware Kptfile merge.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Callable

from krm_merge.kptfile.document import DEFAULT_KPTFILE, ROOT_KPTFILE, Strategy, is_kptfile, without_render_status
from krm_merge.kptfile.merge import merge_kptfile
from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import same
from krm_merge.merge3.conflicts import RULES_ANNOTATION, ConflictPolicy, FieldRule, FieldRules
from krm_merge.merge3.nodes import MISSING
from krm_merge.merge3.rules import MergeSchema, SchemaNodeAdapter
from krm_merge.merge3.text import dump_like
from krm_merge.merge3.walker import Merge3Error, MergeOptions, Merger

from .identity import Identity, content_text, identity_of, strip_bookkeeping
from .markers import add_identity_markers
from .resources import drop_bookkeeping, drop_nulls, is_crd, rules_of, same_content, take_upstream
from .result import (
    OUTCOME_ADDED, OUTCOME_DELETED, OUTCOME_KEPT, OUTCOME_MERGED, OUTCOME_TAKEN, OUTCOME_UNCHANGED,
    OtherFilesChanged, PackageMergeOptions, PackageMergeResult, RelPath,
)
from .subpackages import Subpackage, remote_decision


def merge_package(
    strategy: Strategy, conflicts: ConflictPolicy, fallback_keys: tuple[str, ...],
    local: list[KubeObject], origin: list[KubeObject], upstream: list[KubeObject], rel_path: RelPath,
    other_files_changed: OtherFilesChanged | None = None,
) -> PackageMergeResult:
    """kpt's package update of three copies, Kptfiles by the pipeline-aware Kptfile merge.

    The resource-merge mode and ``krm-merge update`` both run it;
    ``other_files_changed`` tells whether a subpackage directory's non-KRM
    files changed locally (the update knows them; a ResourceList has none).
    """
    options = PackageMergeOptions(strategy, conflicts, fallback_keys, kptfile_merge=merge_kptfile)
    return PackageMerger(options, rel_path, other_files_changed).merge(local, origin, upstream)


class PackageMerger:
    """Merges the three copies of a package (lists of items)."""

    def __init__(
        self, options: PackageMergeOptions, rel_path: RelPath, other_files_changed: OtherFilesChanged | None = None,
        root_dir: str = "",
    ) -> None:
        self.options = options
        self.root_dir = root_dir  # "" or the subpackage this merger handles on its own
        self.rel_path = rel_path
        self.other_files_changed = other_files_changed
        self._registry: Any = None
        self._crd_sources: list[KubeObject] = []
        self._package_dirs: set[str] = set()
        self._own_rules: dict[int, list[FieldRule]] = {}  # id(local item) -> its annotation's rules
        self._package_rules: dict[str, list[FieldRule]] = {}  # package directory -> its local Kptfile's

    # -- rules declared in the package -------------------------------------------

    def _read_rules(self, local: list[KubeObject]) -> None:
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

    def _rules_for(self, obj: KubeObject) -> FieldRules:
        if not self._own_rules and not self._package_rules:
            return FieldRules()
        return FieldRules.of(self._own_rules.get(id(obj), ()), self._package_rules.get(self._package_of(obj), ()), obj.kind)

    # -- identities ------------------------------------------------------------

    def _identity(self, obj: KubeObject) -> Identity:
        if is_kptfile(obj):
            rel = self.rel_path(obj)
            return Identity("kpt.dev", "Kptfile", "", rel.rpartition("/")[0])
        return identity_of(obj)

    def _package_of(self, obj: KubeObject) -> str:
        """The (sub)package directory a resource belongs to ("" = the root package)."""
        rel = self.rel_path(obj)
        best = ""
        for directory in self._package_dirs:
            if rel.startswith(directory + "/") and len(directory) > len(best):
                best = directory
        return best

    def _keyed(self, *sources: list[KubeObject]) -> list[dict[Any, KubeObject]]:
        """Index each source by identity; identities repeated in a source also use the path."""
        # A resource never matches one of another (sub)package: kpt merges package by package.
        ids = [[(self._package_of(o), self._identity(o)) for o in src] for src in sources]
        repeated = {i for per in ids for i, n in Counter(per).items() if n > 1}
        out = []
        for src, per in zip(sources, ids):
            index: dict[Any, KubeObject] = {}
            for obj, ident in zip(src, per):
                key = (ident, self.rel_path(obj)) if ident in repeated else ident
                if key in index:
                    raise KrmError(f"found duplicate resources {ident[1].display()} in {self.rel_path(obj)}", obj)
                index[key] = obj
            out.append(index)
        return out

    # -- entry point -----------------------------------------------------------

    def merge(self, local: list[KubeObject], origin: list[KubeObject], upstream: list[KubeObject]) -> PackageMergeResult:
        """Run the configured strategy."""
        self._crd_sources = [o for src in (local, origin, upstream) for o in src if is_crd(o)]
        self._package_dirs = set().union(*(self._subpackage_dirs(src) for src in (local, origin, upstream)))
        self._read_rules(local)
        if self.options.strategy is Strategy.FAST_FORWARD:
            self._check_fast_forward(local, origin)
        decided = PackageMergeResult()
        local, origin, upstream = self._decide_subpackages(local, origin, upstream, decided)
        li, oi, ui = self._keyed(local, origin, upstream)
        for key in self._package_kptfile_keys(li, ui):
            self._default_kptfile(key, li, oi, ui)
        if self.options.strategy is not Strategy.RESOURCE_MERGE:
            result = self._replace(li, ui)
        else:
            result = self._resource_merge(li, oi, ui)
        result.subpackages = decided.subpackages
        result.strategies = decided.strategies
        for name in ("items", "added", "deleted", "updated", "conflicts", "warnings", "moved_index", "moved_file", "outcomes"):
            setattr(result, name, getattr(decided, name) + getattr(result, name))
        if self.options.add_kpt_merge_comment:
            for obj in result.items:
                if not is_kptfile(obj):
                    add_identity_markers(obj)
        return result

    # -- package rules ---------------------------------------------------------------

    def _subpackage_dirs(self, items: list[KubeObject]) -> set[str]:
        dirs = set()
        for obj in items:
            if is_kptfile(obj):
                rel = self.rel_path(obj)
                directory = rel.rpartition("/")[0]
                if directory and directory != self.root_dir:
                    dirs.add(directory)
        return dirs

    def _decide_subpackages(
        self, local: list[KubeObject], origin: list[KubeObject], upstream: list[KubeObject], out: PackageMergeResult
    ) -> tuple[list[KubeObject], list[KubeObject], list[KubeObject]]:
        """kpt's per-subpackage rules; returns the items left for the resource merge.

        Items of a subpackage decided here leave the three lists: kept ones go
        straight to ``out.items``, removed ones to ``out.deleted``.
        """
        ld, od, ud = (self._subpackage_dirs(src) for src in (local, origin, upstream))
        infos = [self._upstream_infos(src) for src in (local, origin, upstream)]
        for directory in sorted(ld | od | ud, key=lambda d: (d.count("/"), d)):
            if any(directory.startswith(done + "/") for done in out.subpackages):
                continue  # inside a subpackage already decided as a whole
            if self.options.strategy is not Strategy.RESOURCE_MERGE and not any(directory in info for info in infos):
                continue  # fast-forward / replace: a local subpackage is replaced with the rest (kpt)
            # kpt asks whether the directory exists: a subpackage whose Kptfile alone was removed is still there
            present = [any(self._inside(directory)(o) for o in src) for src in (local, origin, upstream)]
            decision = self._decide(directory, *present, local, origin)
            if decision is Subpackage.MERGE and present[0] and present[2]:
                decision = remote_decision(*(info.get(directory) for info in infos))
                if decision is Subpackage.MERGE and directory in infos[0]:
                    decision = Subpackage.OWN
            if decision is Subpackage.MERGE:
                continue
            out.subpackages[directory] = decision
            inside = self._inside(directory)
            if decision is Subpackage.OWN:
                self._merge_own(directory, infos[0][directory][0], local, origin, upstream, out)
            if decision is Subpackage.UNFETCHED:  # the Kptfiles stay in the merge
                inside = (lambda test: lambda obj: test(obj) and not is_kptfile(obj))(inside)
            mine = [o for o in local if inside(o)]
            if decision is not Subpackage.OWN:
                outcome = OUTCOME_DELETED if decision is Subpackage.DELETE else OUTCOME_KEPT
                out.outcomes.extend((o, outcome, f"subpackage {directory}: {decision.value}") for o in mine)
            if decision is Subpackage.OWN:
                pass
            elif decision is Subpackage.DELETE:
                out.deleted.extend(mine)
            else:
                out.items.extend(mine)  # untouched (a local directory that lost its Kptfile stays too)
            if decision is Subpackage.KEEP:
                kptfile = next(o for o in mine if is_kptfile(o))
                out.warnings.append((kptfile, f"subpackage {directory} deleted upstream but modified locally: kept"))
            local = [o for o in local if not inside(o)]
            origin = [o for o in origin if not inside(o)]
            upstream = [o for o in upstream if not inside(o)]
        return local, origin, upstream

    def _merge_own(
        self, directory: str, upstream_info: Any, local: list[KubeObject], origin: list[KubeObject],
        upstream: list[KubeObject], out: PackageMergeResult,
    ) -> None:
        """kpt merges a remote subpackage with the parent's upstream copy using the subpackage's own strategy."""
        own = upstream_info.get("updateStrategy") if isinstance(upstream_info, dict) else None
        strategy = Strategy(own) if own in {s.value for s in Strategy} else Strategy.RESOURCE_MERGE
        options = PackageMergeOptions(strategy, self.options.conflicts, self.options.fallback_keys, self.options.add_kpt_merge_comment)
        sub = PackageMerger(options, self.rel_path, self.other_files_changed, root_dir=directory)
        inside = self._inside(directory)
        result = sub.merge([o for o in local if inside(o)], [o for o in origin if inside(o)], [o for o in upstream if inside(o)])
        for name in ("items", "added", "deleted", "updated", "conflicts", "warnings", "moved_index", "moved_file", "outcomes"):
            getattr(out, name).extend(getattr(result, name))
        out.subpackages.update(result.subpackages)
        out.strategies[directory] = strategy
        out.strategies.update(result.strategies)

    def _upstream_infos(self, items: list[KubeObject]) -> dict[str, tuple[Any, Any]]:
        """Subpackage directory -> its Kptfile's (upstream, upstreamLock), for remote subpackages."""
        out = {}
        for obj in items:
            rel = self.rel_path(obj)
            if is_kptfile(obj) and "/" in rel and isinstance(obj.data, dict) and obj.data.get("upstream"):
                out[rel.rpartition("/")[0]] = (obj.data.get("upstream"), obj.data.get("upstreamLock"))
        return out

    def _inside(self, directory: str) -> Callable[[KubeObject], bool]:
        prefix = directory + "/"
        return lambda obj: self.rel_path(obj).startswith(prefix)

    def _decide(
        self, directory: str, in_local: bool, in_origin: bool, in_upstream: bool,
        local: list[KubeObject], origin: list[KubeObject],
    ) -> Subpackage:
        if in_local and in_upstream and not in_origin:
            raise KrmError(f'subpackage "{directory}" added in both upstream and local')
        if in_origin and not in_local:
            return Subpackage.SKIP
        if in_origin and in_local and not in_upstream:
            return Subpackage.KEEP if self._subpackage_changed(directory, local, origin) else Subpackage.DELETE
        return Subpackage.MERGE

    def _subpackage_changed(self, directory: str, local: list[KubeObject], origin: list[KubeObject]) -> bool:
        inside = self._inside(directory)
        li, oi = self._keyed([o for o in local if inside(o)], [o for o in origin if inside(o)])
        if li.keys() != oi.keys():
            return True
        if any(not same_content(obj, oi[key], kptfile=is_kptfile(obj)) for key, obj in li.items()):
            return True
        return self.other_files_changed is not None and self.other_files_changed(directory)

    def _root_kptfile_key(self, li: dict[Any, KubeObject]) -> Any:
        for key, obj in li.items():
            if is_kptfile(obj) and self.rel_path(obj) == ROOT_KPTFILE:
                return key
        return None

    def _package_kptfile_keys(self, li: dict[Any, KubeObject], ui: dict[Any, KubeObject]) -> list[Any]:
        """Local Kptfiles that stand for a package upstream has too (its directory exists there).

        The root always; with resource-merge also subpackages (kpt merges a
        subpackage whose Kptfile alone was removed upstream against an empty
        Kptfile; replace and fast-forward replace subpackages wholesale).
        """
        keys = []
        root = self._root_kptfile_key(li)
        if root is not None:
            keys.append(root)
        if self.options.strategy is Strategy.RESOURCE_MERGE:
            up_dirs = {self.rel_path(o).rpartition("/")[0] for o in ui.values()}
            for key, obj in li.items():
                rel = self.rel_path(obj)
                if key != root and is_kptfile(obj) and any(d == rel.rpartition("/")[0] or d.startswith(rel.rpartition("/")[0] + "/") for d in up_dirs):
                    keys.append(key)
        return keys

    def _default_kptfile(self, key: Any, li: dict[Any, KubeObject], oi: dict[Any, KubeObject], ui: dict[Any, KubeObject]) -> None:
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
            oi[key] = KubeObject(default)
        if key not in ui:
            ui[key] = KubeObject(default) if self.options.strategy is Strategy.RESOURCE_MERGE else mine

    # -- strategies --------------------------------------------------------------

    def _check_fast_forward(self, local: list[KubeObject], origin: list[KubeObject]) -> None:
        """kpt's fast-forward check: the package and its local subpackages unchanged (remote ones are their own)."""
        remote = set(self._upstream_infos(local)) | set(self._upstream_infos(origin))
        outside = lambda obj: not any(self.rel_path(obj).startswith(d + "/") for d in remote)  # noqa: E731
        li, oi = self._keyed([o for o in local if outside(o)], [o for o in origin if outside(o)])
        root = self._root_kptfile_key(li)
        if root is not None and root not in oi:
            oi[root] = KubeObject(DEFAULT_KPTFILE.format(name="package"))
        self._check_unmodified(li, oi)

    def _check_unmodified(self, li: dict[Any, KubeObject], oi: dict[Any, KubeObject]) -> None:
        modified = []
        for key, obj in li.items():
            base = oi.get(key)
            if base is None or not same_content(obj, base, kptfile=is_kptfile(obj)):
                modified.append(self.rel_path(obj) + f" ({self._identity(obj).display()})")
        modified += [self.rel_path(o) + " (deleted)" for k, o in oi.items() if k not in li]
        if modified:
            raise KrmError(
                "local package files have been modified: [" + ", ".join(modified) + "]. use a different update --strategy"
            )

    def _replace(self, li: dict[Any, KubeObject], ui: dict[Any, KubeObject]) -> PackageMergeResult:
        """Upstream wins everything; local Kptfiles keep only upstream/upstreamLock/name."""
        result = PackageMergeResult()
        for key, obj in li.items():
            up = ui.get(key)
            if up is None:
                result.deleted.append(obj)
                result.outcomes.append((obj, OUTCOME_DELETED, f"not upstream ({self.options.strategy.value})"))
                continue
            result.outcomes.append((obj, OUTCOME_TAKEN, self.options.strategy.value))
            if up is obj:
                pass  # root Kptfile, none upstream: local's kept whole
            elif is_kptfile(obj) and self.rel_path(obj) == ROOT_KPTFILE:
                _set_kptfile_from_upstream(obj, up)
            elif is_kptfile(obj):
                take_upstream(obj, up)  # a subpackage is replaced whole, its upstream info too (kpt)
            else:
                take_upstream(obj, up)
            result.items.append(obj)
            if obj.changed:
                result.updated.append(obj)
        for key, up in ui.items():
            if key not in li:
                self._add(result, up)
        return result

    def _resource_merge(self, li: dict[Any, KubeObject], oi: dict[Any, KubeObject], ui: dict[Any, KubeObject]) -> PackageMergeResult:
        result = PackageMergeResult()
        for key, obj in li.items():
            base, up = oi.get(key), ui.get(key)
            if up is None:
                if base is not None and same_content(obj, base, kptfile=is_kptfile(obj)):
                    result.deleted.append(obj)
                    result.outcomes.append((obj, OUTCOME_DELETED, "deleted upstream, unchanged locally"))
                    continue
                if base is not None:
                    result.warnings.append((obj, "deleted upstream but modified locally: kept"))
                result.outcomes.append((obj, OUTCOME_KEPT, "local only" if base is None else "deleted upstream, changed locally"))
                result.items.append(obj)
                continue
            if not self._merge_into(obj, base, up, result):
                result.deleted.append(obj)
                result.outcomes.append((obj, OUTCOME_DELETED, "deleted by the merge"))
                continue
            self._merge_index(obj, base, up, result)
            result.items.append(obj)
            if obj.changed:
                result.updated.append(obj)
        for key, up in ui.items():
            if key not in li and key not in oi:
                self._add(result, up)
            elif key not in li:
                result.outcomes.append((up, OUTCOME_KEPT, "deleted locally"))
        return result

    def _merge_index(self, obj: KubeObject, base: KubeObject | None, up: KubeObject, result: PackageMergeResult) -> None:
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

    def _add(self, result: PackageMergeResult, up: KubeObject) -> None:
        new = KubeObject(up.text)
        drop_bookkeeping(new)
        result.items.append(new)
        result.added.append((new, up))
        result.outcomes.append((new, OUTCOME_ADDED, "added upstream"))

    # -- one resource ----------------------------------------------------------------

    def _merge_into(self, obj: KubeObject, base: KubeObject | None, up: KubeObject, result: PackageMergeResult) -> bool:
        """Merge into ``obj``; False when the merge deletes it."""
        if is_kptfile(obj):
            if self._kptfile_unchanged_upstream(obj, base, up):
                result.outcomes.append((obj, OUTCOME_KEPT, "unchanged upstream"))
            else:
                self._merge_kptfile(obj, base, up, result)
                result.outcomes.append((obj, OUTCOME_MERGED, "Kptfile"))
            return True
        lc, uc = content_text(obj.text), content_text(up.text)
        if lc == uc:
            result.outcomes.append((obj, OUTCOME_UNCHANGED, "local is upstream's"))
            return True
        if base is not None:
            oc = content_text(base.text)
            if lc == oc:
                take_upstream(obj, up)
                drop_nulls(obj)
                result.outcomes.append((obj, OUTCOME_TAKEN, "unchanged locally"))
                return True
            if uc == oc:
                result.outcomes.append((obj, OUTCOME_KEPT, "changed locally, unchanged upstream"))
                return True
        result.outcomes.append((obj, OUTCOME_MERGED, "changed on both sides"))
        return self._full_merge(obj, base, up, result)

    def _full_merge(self, obj: KubeObject, base: KubeObject | None, up: KubeObject, result: PackageMergeResult) -> bool:
        l_tree = yamlio.load_rt(obj.text, obj.display())
        unedited = copy.deepcopy(l_tree)  # ~5x cheaper than reading local's text again to compare the result
        o_tree = strip_bookkeeping(yamlio.load_rt(base.text, base.display())) if base is not None else MISSING
        u_tree = strip_bookkeeping(yamlio.load_rt(up.text, up.display()))
        options = MergeOptions(self.options.conflicts, self.options.fallback_keys, self._resolve, self._rules_for(obj))
        merger = Merger(options)
        try:
            merged = merger.merge_document(l_tree, o_tree, u_tree, self._resolve(up.api_version, up.kind))
        except Merge3Error as err:
            raise KrmError(err.message, obj, err.path or None) from None
        result.conflicts.extend((obj, c) for c in merger.conflicts)
        if merged is MISSING:
            return False
        obj.set_text(dump_like(merged, obj.text, unedited))
        return True

    def _kptfile_unchanged_upstream(self, obj: KubeObject, base: KubeObject | None, up: KubeObject) -> bool:
        """Upstream's Kptfile is origin's, so the merge is local's (a nested one also keeps its upstream info)."""
        if base is None or content_text(up.text) != content_text(base.text):
            return False
        if "/" not in self.rel_path(obj):
            return True
        mine, theirs = obj.data, up.data
        return isinstance(mine, dict) and isinstance(theirs, dict) and all(
            theirs.get(key) is None or same(mine.get(key), theirs.get(key)) for key in ("upstream", "upstreamLock")
        )

    def _merge_kptfile(self, obj: KubeObject, base: KubeObject | None, up: KubeObject, result: PackageMergeResult) -> None:
        merge_kptfile = self.options.kptfile_merge
        if merge_kptfile is None:
            self._full_merge(obj, base, up, result)
            return
        l_tree = yamlio.load_rt(obj.text, obj.display())
        unedited = copy.deepcopy(l_tree)
        o_tree = strip_bookkeeping(yamlio.load_rt(base.text, base.display())) if base is not None else MISSING
        u_tree = strip_bookkeeping(yamlio.load_rt(up.text, up.display()))
        nested = "/" in self.rel_path(obj)
        try:
            merged, conflicts = merge_kptfile(l_tree, o_tree, u_tree, update_upstream=nested, conflicts=self.options.conflicts)
        except Merge3Error as err:
            raise KrmError(err.message, obj, err.path or None) from None
        result.conflicts.extend((obj, c) for c in conflicts)
        obj.set_text(dump_like(merged, obj.text, unedited))

    # -- schemas -------------------------------------------------------------------

    def _resolve(self, api_version: str, kind: str) -> MergeSchema | None:
        if self._registry is None:
            from krm_merge.schema import SchemaRegistry

            crds = [o.data for o in self._crd_sources]
            try:
                self._registry = SchemaRegistry(crds=crds)
            except Exception as err:  # an invalid CRD must not stop the merge of other kinds
                self._registry = SchemaRegistry()
                raise KrmError(f"cannot use CRD schemas: {err}") from None
        return SchemaNodeAdapter(self._registry.for_object(api_version, kind))


def _set_kptfile_from_upstream(obj: KubeObject, up: KubeObject) -> None:
    """Upstream's Kptfile with local's name, upstream and upstreamLock."""
    mine = obj.data if isinstance(obj.data, dict) else {}
    keep = {k: mine[k] for k in ("upstream", "upstreamLock") if k in mine}
    name = (mine.get("metadata") or {}).get("name")
    take_upstream(obj, up)
    data = obj.copy_data()
    ordered: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("upstream", "upstreamLock"):
            continue
        ordered[key] = value
        if key == "metadata":  # kpt's field order: upstream info right after metadata
            ordered.update(keep)
    ordered.update({k: v for k, v in keep.items() if k not in ordered})
    if name is not None:
        ordered.setdefault("metadata", {})["name"] = name
    without_render_status(ordered)  # upstream's render is not this copy's (kpt clears it)
    obj.set_data(ordered)
