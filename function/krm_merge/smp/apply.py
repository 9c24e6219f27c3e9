"""Applying a strategic merge patch (the API server's ``StrategicMergePatch``).

The same engine, in *patch-merging* mode, folds two patches together for the
3-way patch creation (``mergeMap`` with ``MergeParallelList=false``); see
:mod:`krm_merge.smp.create`.

Differences from Go that are deliberate (see ``docs/smp.md``): map key order
is kept (live keys first, new keys appended in patch order); newly added
content is stored as the API server would after decoding it into typed
objects (no null entries, no directive keys) also inside appended list
elements and replacing values; the patch is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable

from ..records import Record
from ..schema.base import OPEN_SCHEMA, SchemaNode
from .errors import MissingMergeKeyError, SmpError
from .meta import MERGE_STRATEGY, REPLACE_STRATEGY, FieldMeta, lookup_list_field, lookup_map_field
from .order import (
    ServerOnlyPlacement,
    first_positions,
    missing_merge_key_error,
    normalize_element_order,
    not_a_map_error,
)
from .path import Path, child, element, render
from .values import (
    DELETE_FROM_PRIMITIVE_LIST_PREFIX,
    DIRECTIVE_MARKER,
    DROPPED,
    LIST,
    MAP,
    RETAIN_KEYS,
    SET_ELEMENT_ORDER_PREFIX,
    clean_new_value,
    deep_copy,
    deep_equal,
    go_str,
    go_type_name,
    identity,
    kind_of,
    remove_patch_directives,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class MergeOptions(Record):
    """``MergeOptions`` of apimachinery plus our layout choice.

    ``apply_mode`` true = server-side application (directives executed, nulls
    delete); false = merging two patches (directives and nulls are kept).
    """

    apply_mode: bool = True
    server_only_items: ServerOnlyPlacement = "interleave"
    # Told the path of each list no schema describes that the patch replaced
    # with different content (the caller warns: a merge may have been meant).
    on_schemaless_replace: Callable[[str], None] | None = None


APPLY = MergeOptions()
MERGE_PATCHES = MergeOptions(apply_mode=False)


def apply_patch(
    original: dict[str, Any],
    patch: dict[str, Any],
    schema: SchemaNode,
    *,
    server_only_items: ServerOnlyPlacement = "interleave",
    on_schemaless_replace: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Apply strategic merge patch ``patch`` to ``original`` as the API server does.

    Contract for callers that map the result back onto source text:

    * ``original`` is mutated in place and returned (a caller passes a copy it
      owns).  The only exception is a top-level ``$patch: replace|delete``,
      which returns a new map.
    * Maps keep their key order; keys new to a map are appended in patch order.
    * Every dict/list element of a list that comes from ``original`` keeps its
      Python identity: a merged list element is the same dict object, mutated.
      Lists themselves are rebuilt (new list objects), and values that come from
      the patch are always fresh copies: the result never aliases ``patch``,
      which is not modified.

    ``server_only_items="first"`` places list items that the patch's order list
    does not mention before the ordered ones (the design proposal's layout)
    instead of Go's interleaving.

    ``on_schemaless_replace`` is called with the path of every list that no
    schema describes (so it is replaced, as in a JSON merge patch) and that
    the patch changed, so the caller can warn that a merge may have been meant.

    Raises :class:`~krm_merge.smp.errors.SmpError` with the Kubernetes message
    and the field path.
    """
    if not isinstance(original, dict):
        raise SmpError(f"expected a map[string]interface {{}}, but received a {go_type_name(original)}")
    if not isinstance(patch, dict):
        raise SmpError(f"expected a map[string]interface {{}}, but received a {go_type_name(patch)}")
    if server_only_items not in ("interleave", "first"):
        raise ValueError(f"server_only_items must be 'interleave' or 'first', not {server_only_items!r}")
    options = MergeOptions(True, server_only_items, on_schemaless_replace)
    return _Merger(options).merge_map(original, patch, schema, None)


def merge_patches(first: dict[str, Any], second: dict[str, Any], schema: SchemaNode) -> dict[str, Any]:
    """Fold patch ``second`` into patch ``first`` (mutated and returned), keeping directives."""
    return _Merger(MERGE_PATCHES).merge_map(first, second, schema, None)


def slice_element_kind(path: Path, *lists: list[Any]) -> str:
    """``sliceElementType``: the one element type of the given lists."""
    found: str | None = None
    for items in lists:
        for item in items:
            kind = kind_of(item)
            if found is None:
                if kind == LIST:
                    raise SmpError("lists of lists are not supported", render(path))
                found = kind
            elif kind != found:
                shown = "[" + " ".join(go_str(list(x)) for x in lists) + "]"
                raise SmpError(f"list element types are not identical: {shown}", render(path))
    if found is None:
        raise SmpError("no elements in any of the given slices", render(path))
    return found


def no_merge_key_error(field: str, why: str, path: Path) -> MissingMergeKeyError:
    """A directive needs a merge key that the schema does not declare."""
    return MissingMergeKeyError(
        f"no merge key is known for list field {field!r}: {why} needs "
        "x-kubernetes-patch-merge-key in the schema",
        render(path),
        field,
    )


def _extract_key(key: str, prefix: str, error: str, path: Path) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise SmpError(error, render(path))
    return rest


class _Merger:
    """One merge run; holds only the (immutable) options."""

    def __init__(self, options: MergeOptions) -> None:
        self.options = options
        self.apply_mode = options.apply_mode

    # -- values entering the document -------------------------------------------------

    def new_value(self, value: Any) -> Any:
        """Patch content stored under a key the live map lacks (or holds another type).

        Go drops ``$patch`` content here in both modes (a map holding ``$patch``
        is not stored at all) and, when applying, null entries too.
        """
        return clean_new_value(value) if self.apply_mode else remove_patch_directives(value)

    def new_element(self, value: Any) -> Any:
        """A patch element appended to a merge list (Go appends it verbatim)."""
        return clean_new_value(value) if self.apply_mode else deep_copy(value)

    def replacement(self, value: Any) -> Any:
        """Patch content that replaces a live value wholesale (strategy replace)."""
        if not self.apply_mode:
            return deep_copy(value)
        if isinstance(value, dict) and DIRECTIVE_MARKER in value:
            value = {k: v for k, v in value.items() if k != DIRECTIVE_MARKER}
        cleaned = clean_new_value(value)
        return {} if cleaned is DROPPED else cleaned

    # -- maps -------------------------------------------------------------------------

    def merge_map(
        self, original: dict[str, Any] | None, patch: dict[str, Any], schema: SchemaNode, path: Path
    ) -> dict[str, Any]:
        """``mergeMap``: merge ``patch`` into ``original`` (mutated and returned)."""
        if DIRECTIVE_MARKER in patch:
            return self.map_directive(patch, path)
        if original is None:
            original = {}
        handled: set[str] = set()
        self.apply_retain_keys(original, patch, handled, path)
        self.apply_set_element_orders(original, patch, schema, handled, path)
        deletion_lists: list[tuple[str, Any]] = []
        for key, value in patch.items():
            if key in handled:
                continue
            if key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX):
                if not self.apply_mode:
                    original[key] = deep_copy(value)
                    continue
                field = _extract_key(
                    key, DELETE_FROM_PRIMITIVE_LIST_PREFIX, "invalid patch format of primitive list", path
                )
                deletion_lists.append((field, value))
                continue
            self.merge_key_value(original, key, value, schema, False, path)
        # Deletions run after additions (Go's map order is random here; this is
        # the order that makes adding and deleting the same value well defined).
        for field, value in deletion_lists:
            self.merge_key_value(original, field, value, schema, True, path)
        return original

    def map_directive(self, patch: dict[str, Any], path: Path) -> dict[str, Any]:
        """``handleDirectiveInMergeMap``: ``$patch: replace|delete`` on a whole map."""
        directive = patch[DIRECTIVE_MARKER]
        if directive == "replace" and isinstance(directive, str):
            # Go returns the patch minus the directive, in both modes.
            content = {k: v for k, v in patch.items() if k != DIRECTIVE_MARKER}
            replaced: dict[str, Any] = self.replacement(content)
            return replaced
        if directive == "delete" and isinstance(directive, str):
            return {}
        raise SmpError(f"unknown patch type: {go_str(directive)} in map: {go_str(patch)}", render(path))

    def merge_key_value(
        self,
        original: dict[str, Any],
        key: str,
        value: Any,
        schema: SchemaNode,
        is_delete_list: bool,
        path: Path,
    ) -> None:
        """One key of the ordinary loop of ``mergeMap``."""
        if value is None:
            original.pop(key, None)
            if self.apply_mode:
                return
        if key not in original:
            if is_delete_list:
                return
            stored = self.new_value(value)
            if stored is not DROPPED:
                original[key] = stored
            return
        live = original[key]
        live_kind, patch_kind = kind_of(live), kind_of(value)
        if live_kind != patch_kind:
            if is_delete_list:
                return
            stored = self.new_value(value)
            if stored is DROPPED:
                del original[key]
            else:
                original[key] = stored
            return
        sub_path = child(path, key)
        if live_kind == MAP:
            meta = lookup_map_field(schema, key, sub_path)
            if meta.strategy == REPLACE_STRATEGY:
                original[key] = self.replacement(value)
            else:
                original[key] = self.merge_map(live, value, meta.schema, sub_path)
        elif live_kind == LIST:
            meta = lookup_list_field(schema, key, sub_path)
            original[key] = self.merge_list_field(live, value, meta, key, is_delete_list, sub_path)[0]
        else:
            original[key] = value

    # -- $retainKeys ------------------------------------------------------------------

    def apply_retain_keys(
        self, original: dict[str, Any], patch: dict[str, Any], handled: set[str], path: Path
    ) -> None:
        """``applyRetainKeysDirective``: clear live keys the directive does not list."""
        if RETAIN_KEYS not in patch:
            return
        handled.add(RETAIN_KEYS)
        retain = patch[RETAIN_KEYS]
        if not self.apply_mode:
            if RETAIN_KEYS in original:
                if not deep_equal(original[RETAIN_KEYS], retain):
                    raise SmpError(
                        f"{go_str(original[RETAIN_KEYS])} and {go_str(retain)} are not deep equal: "
                        "this may happen when calculating the 3-way diff patch",
                        render(path),
                    )
            else:
                original[RETAIN_KEYS] = deep_copy(retain)
            return
        if not isinstance(retain, list):
            raise SmpError("invalid patch format of retainKeys", render(path))
        kept = {identity(k) for k in retain}
        for key, value in patch.items():
            if value is None or key == RETAIN_KEYS or key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX):
                continue
            if key.startswith(SET_ELEMENT_ORDER_PREFIX):
                continue
            if identity(key) not in kept:
                raise SmpError("invalid patch format of retainKeys", render(path))
        for key in [k for k in original if identity(k) not in kept]:
            del original[key]

    # -- $setElementOrder -------------------------------------------------------------

    def apply_set_element_orders(
        self,
        original: dict[str, Any],
        patch: dict[str, Any],
        schema: SchemaNode,
        handled: set[str],
        path: Path,
    ) -> None:
        """``mergePatchIntoOriginal``: merge each ordered list, then enforce its order."""
        for key, order in patch.items():
            if not key.startswith(SET_ELEMENT_ORDER_PREFIX):
                continue
            handled.add(key)
            if not self.apply_mode:
                if key in original:
                    if not deep_equal(original[key], order):
                        raise SmpError("invalid patch format of setElementOrder list", render(path))
                else:
                    original[key] = deep_copy(order)
            if not isinstance(order, list):
                raise SmpError(
                    f"expected a []interface {{}}, but received a {go_type_name(order)}", render(path)
                )
            field = _extract_key(
                key, SET_ELEMENT_ORDER_PREFIX, "invalid patch format of setElementOrder list", path
            )
            sub_path = child(path, field)
            found_live, found_patch = field in original, field in patch
            live_list = original.get(field)
            patch_list = patch.get(field)
            if found_live and not isinstance(live_list, list):
                raise SmpError(
                    f"expected a []interface {{}}, but received a {go_type_name(live_list)}", render(sub_path)
                )
            if found_patch and not isinstance(patch_list, list):
                raise SmpError(
                    f"expected a []interface {{}}, but received a {go_type_name(patch_list)}", render(sub_path)
                )
            meta = lookup_list_field(schema, field, sub_path)
            live_items: list[Any] = live_list if isinstance(live_list, list) else []
            patch_items: list[Any] = patch_list if isinstance(patch_list, list) else []
            self.validate_order(patch_items, order, meta, key, field, sub_path)
            if found_live and not found_patch:
                merged, server_view = live_items, live_items
            elif found_patch and not found_live:
                merged = self.added_list(patch_items)
                server_view = live_items
            elif found_live and found_patch:
                merged, server_view = self.merge_list_field(
                    live_items, patch_items, meta, field, False, sub_path
                )
            else:
                continue
            handled.add(field)
            element_kind = slice_element_kind(sub_path, live_items, patch_items)
            if element_kind == MAP and not meta.merge_key:
                raise no_merge_key_error(field, key, sub_path)
            original[field] = normalize_element_order(
                merged,
                order,
                server_view,
                meta.merge_key,
                element_kind == MAP,
                sub_path,
                self.options.server_only_items,
            )

    def added_list(self, patch_items: list[Any]) -> list[Any]:
        """A list that only the patch has, under ``$setElementOrder``."""
        if self.apply_mode:
            return clean_new_value(patch_items)
        return remove_patch_directives(patch_items)

    def validate_order(
        self, patch_items: list[Any], order: list[Any], meta: FieldMeta, directive: str, field: str, path: Path
    ) -> None:
        """``validatePatchWithSetOrderList``: patch items must be a subsequence of the order."""
        if not order or not patch_items:
            return
        merge_key = meta.merge_key
        items = patch_items
        if merge_key:
            for item in patch_items:
                if not isinstance(item, dict):
                    raise not_a_map_error(item, path)
            items = [i for i in patch_items if not (i.get(DIRECTIVE_MARKER) == "delete")]
        elif any(isinstance(i, dict) for i in patch_items) or any(isinstance(i, dict) for i in order):
            raise no_merge_key_error(field, directive, path)
        i = j = 0
        while i < len(items) and j < len(order):
            item = items[i]
            if isinstance(item, dict) and DIRECTIVE_MARKER in item:
                i += 1
                continue
            if self.same_identity(item, order[j], merge_key, path):
                i += 1
            j += 1
        if i < len(items) and j >= len(order):
            raise SmpError(
                f"The order in patch list:\n{go_str(patch_items)}\n doesn't match "
                f"{SET_ELEMENT_ORDER_PREFIX} list:\n{go_str(order)}\n",
                render(path),
            )

    @staticmethod
    def same_identity(left: Any, right: Any, merge_key: str, path: Path) -> bool:
        """``mergeKeyValueEqual``."""
        if not merge_key:
            return identity(left) == identity(right)
        for item in (left, right):
            if not isinstance(item, dict):
                raise not_a_map_error(item, path)
            if merge_key not in item:
                raise missing_merge_key_error(item, merge_key, path)
        return identity(left[merge_key]) == identity(right[merge_key])

    # -- lists ------------------------------------------------------------------------

    def merge_list_field(
        self,
        live: list[Any],
        patch: list[Any],
        meta: FieldMeta,
        field: str,
        is_delete_list: bool,
        path: Path,
    ) -> tuple[list[Any], list[Any]]:
        """``mergeSliceHandler``: returns (merged list, Go's view of the live list afterwards).

        The second value is what apimachinery's later ``$setElementOrder`` step
        sees as the server order (see :meth:`merge_map_list`).
        """
        if meta.strategy == MERGE_STRATEGY or is_delete_list:
            return self.merge_slice(live, patch, meta, field, is_delete_list, path)
        if self.apply_mode and not meta.merge_key:
            for item in patch:
                if isinstance(item, dict) and DIRECTIVE_MARKER in item:
                    raise no_merge_key_error(field, f"element {go_str(item)} with {DIRECTIVE_MARKER}", path)
        replaced = self.replacement(patch)
        hook = self.options.on_schemaless_replace
        if hook is not None and meta.schema is OPEN_SCHEMA and not meta.strategy and not deep_equal(live, replaced):
            hook(render(path))
        return replaced, live

    def merge_slice(
        self,
        live: list[Any],
        patch: list[Any],
        meta: FieldMeta,
        field: str,
        is_delete_list: bool,
        path: Path,
    ) -> tuple[list[Any], list[Any]]:
        """``mergeSlice``: merge two lists with strategy ``merge``."""
        if not live and not patch:
            return live, live
        element_kind = slice_element_kind(path, live, patch)
        if element_kind != MAP:
            if self.apply_mode and is_delete_list:
                doomed = {identity(v) for v in patch}
                return [v for v in live if identity(v) not in doomed], live
            merged, seen = [], set()
            for value in (*live, *patch):
                ident = identity(value)
                if ident not in seen:
                    seen.add(ident)
                    merged.append(value)
            ordered = normalize_element_order(
                merged, patch, live, "", False, path, self.options.server_only_items
            )
            return ordered, live
        if not meta.merge_key:
            raise MissingMergeKeyError(
                "cannot merge lists without merge key for type map "
                f"(no merge key is known for list field {field!r})",
                render(path),
                field,
            )
        return self.merge_map_list(live, patch, meta, path)

    def merge_map_list(
        self, live: list[Any], patch: list[Any], meta: FieldMeta, path: Path
    ) -> tuple[list[Any], list[Any]]:
        """Merge a list of maps by merge key, then run the ordering step.

        Go deletes ``$patch: delete`` matches from the live slice in place and
        then appends new elements to the shortened slice, i.e. into the freed
        slots of the same backing array.  A caller still holding the live slice
        (``$setElementOrder`` processing) therefore sees the remaining live
        elements followed by the first appended ones, truncated to the old
        length; that view is returned as the second value.
        """
        merge_key = meta.merge_key
        remaining, rest, replaced = self.special_elements(live, patch, merge_key, path)
        merged = self.merge_elements(remaining, rest, meta, path)
        deleted = len(live) - len(remaining)
        if replaced:
            server_view = live
        elif deleted > 0:
            server_view = merged[: len(live)]
        else:
            server_view = live
        ordered = normalize_element_order(
            merged, rest, remaining, merge_key, True, path, self.options.server_only_items
        )
        return ordered, server_view

    def special_elements(
        self, live: list[Any], patch: list[Any], merge_key: str, path: Path
    ) -> tuple[list[Any], list[Any], bool]:
        """``mergeSliceWithSpecialElements``: execute ``$patch`` list elements.

        Returns (live after deletions, patch without special elements, replaced).
        """
        rest: list[Any] = []
        replace = False
        doomed: set[Any] = set()
        for item in patch:
            if DIRECTIVE_MARKER not in item:
                rest.append(item)
                continue
            directive = item[DIRECTIVE_MARKER]
            if directive == "delete" and isinstance(directive, str):
                if merge_key not in item:
                    raise missing_merge_key_error(item, merge_key, path)
                doomed.add(identity(item[merge_key]))
            elif directive == "replace" and isinstance(directive, str):
                replace = True
            elif directive == "merge" and isinstance(directive, str):
                raise SmpError("merging lists cannot yet be specified in the patch", render(path))
            else:
                raise SmpError(
                    f"unknown patch type: {go_str(directive)} in map: {go_str(item)}", render(path)
                )
        if replace:
            return [self.new_element(i) for i in rest], [], True
        if not doomed:
            return live, rest, False
        # All deletions run before any merge, whatever their position in the patch.
        remaining = [e for e in live if not (merge_key in e and identity(e[merge_key]) in doomed)]
        return remaining, rest, False

    def merge_elements(
        self, remaining: list[Any], patch: list[Any], meta: FieldMeta, path: Path
    ) -> list[Any]:
        """``mergeSliceWithoutSpecialElements``: merge by key into the first match, else append."""
        merge_key = meta.merge_key
        merged = list(remaining)
        positions = first_positions(merged, merge_key)
        for item in patch:
            if merge_key not in item:
                raise missing_merge_key_error(item, merge_key, path)
            ident = identity(item[merge_key])
            index = positions.get(ident)
            if index is None:
                positions[ident] = len(merged)
                merged.append(self.new_element(item))
            else:
                target = merged[index]
                merged[index] = self.merge_map(
                    target, item, meta.schema, element(path, merge_key, target, index)
                )
        return merged
