"""Bring a ruamel round-trip tree to new plain data, keeping comments and styles.

This is the general (slow, always applicable) writer behind
``KubeObject.set_data``.  It walks three things in parallel: the round-trip
tree, the plain data it was read as (``old``) and the data wanted (``new``).
Comparing ``old`` with ``new`` — never the round-trip values, which ruamel
types by YAML 1.2 rules — guarantees that an untouched value keeps its bytes.
"""

from __future__ import annotations

import copy

from krm_merge.krm import yamlio
from krm_merge.krm.values import deep_equal
from krm_merge.yaml import load, scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeAlias

# Keys that identify list elements when no identity is known (kpt's
# documented fallback list plus the most common Kubernetes merge keys).
IDENTITY_KEYS = ("name", "mountPath", "devicePath", "containerPort", "port", "ip", "key", "type", "topologyKey")

Matcher: TypeAlias = "Callable[[list[Any], list[Any]], list[int | None]]"

# merge3/nodes.py imports it from here; the rule itself lives with the other scalar rules.
literal_can_hold = scalars.literal_can_hold


def to_rt(value: Any) -> Any:
    """Plain data → round-trip nodes with kyaml's styles for new scalars."""
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    if isinstance(value, dict):
        out = CommentedMap()
        for key, item in value.items():
            out[rt_key(key)] = to_rt(item)
        return out
    if isinstance(value, list):
        seq = CommentedSeq()
        seq.extend(to_rt(item) for item in value)
        return seq
    if isinstance(value, str):
        return _rt_string(value, None)
    return value


def rt_key(key: Any) -> Any:
    """A new mapping key: double-quoted when a YAML 1.1 reader would not read it back as this string."""
    ry = load.ruamel()
    DoubleQuotedScalarString = ry.scalarstring.DoubleQuotedScalarString

    if isinstance(key, str) and (scalars.needs_double_quotes(key) or not key.isprintable()):
        return DoubleQuotedScalarString(key)
    return key


def _rt_string(value: str, like: Any) -> Any:
    """A new string scalar; keeps the quote style of ``like`` when that can hold it."""
    ry = load.ruamel()
    strings = ry.scalarstring
    DoubleQuotedScalarString, LiteralScalarString = strings.DoubleQuotedScalarString, strings.LiteralScalarString
    SingleQuotedScalarString = strings.SingleQuotedScalarString

    if "\n" in value and scalars.literal_can_hold(value):
        return LiteralScalarString(value)
    if isinstance(like, SingleQuotedScalarString) and value.isprintable():
        return SingleQuotedScalarString(value)
    if isinstance(like, DoubleQuotedScalarString) or scalars.needs_double_quotes(value):
        return DoubleQuotedScalarString(value)
    return value


def apply_to_rt(rt: Any, old: Any, new: Any, match: Matcher | None = None) -> Any:
    """Return ``rt`` updated to hold ``new``; ``old`` is what ``rt`` holds now.

    Containers are updated in place (so their comments stay); the returned
    value must be stored by the caller for scalars and type changes.
    ``match`` pairs new list elements with old ones (default:
    :func:`match_elements`).

    A container shared through an anchor and its aliases is changed as
    kubectl's result means: the site the new data changes gets its own copy
    (the other sites keep the old value), and when every site ends up equal
    the copies are dropped again, so the anchor and its aliases stay.
    """
    edit = _Edit(match or match_elements, _shared_containers(rt))
    result = edit.apply(rt, old, new)
    if edit.copies:
        result = edit.reshare(result)
    return result


class _Edit:
    """One :func:`apply_to_rt` call: the matcher and the copy-on-write state of shared containers."""

    def __init__(self, match: Matcher, shared: set[int]) -> None:
        self.match = match
        self.shared = shared
        self.copies: dict[int, Any] = {}  # id(copy) -> the shared original

    def apply(self, rt: Any, old: Any, new: Any) -> Any:
        ry = load.ruamel()
        CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

        if deep_equal(old, new):
            return rt
        if isinstance(new, dict) and isinstance(old, dict) and isinstance(rt, CommentedMap):
            rt = self._own(rt)
            self._apply_map(rt, old, new)
            return rt
        if isinstance(new, list) and isinstance(old, list) and isinstance(rt, CommentedSeq):
            rt = self._own(rt)
            self._apply_seq(rt, old, new)
            return rt
        if isinstance(new, str):
            return _rt_string(new, rt)
        return to_rt(new)

    def _own(self, node: Any) -> Any:
        """``node``, or a private copy of it when an anchor shares it with other sites."""
        if id(node) not in self.shared:
            return node
        private = copy.deepcopy(node)
        private.anchor.value = None
        self.copies[id(private)] = node
        return private

    def _apply_map(self, rt: Any, old: dict, new: dict) -> None:
        # Comments closing the map stay at its end when keys are added after its last one.
        last = next(reversed(rt), None) if len(rt) else None
        appends = last is not None and last in new and any(k not in rt for k in list(new)[list(new).index(last) + 1 :])
        foot = yamlio.detach_foot(rt) if appends else []
        for key in [k for k in rt if k not in new]:
            del rt[key]
        previous: Any = None
        for key, value in new.items():
            if key in rt and key in old:
                updated = self.apply(rt[key], old[key], value)
                if updated is not rt[key]:
                    rt[key] = updated
            elif key in rt:
                rt[key] = to_rt(value)
            else:
                position = 0 if previous is None else list(rt).index(previous) + 1
                rt.insert(position, rt_key(key), to_rt(value))
            previous = key
        if foot:
            yamlio.attach_foot(rt, foot)

    def _apply_seq(self, rt: Any, old: list, new: list) -> None:
        pairs = self.match(old, new)
        moves = pairs != list(range(len(old)))
        # Comments closing the list stay at its end, whichever element ends up last.
        foot = yamlio.detach_foot(rt) if moves and len(rt) else []
        old_comments = dict(rt.ca.items)
        items: list[Any] = []
        comments: dict[int, Any] = {}
        for new_index, (value, old_index) in enumerate(zip(new, pairs)):
            if old_index is None:
                items.append(to_rt(value))
                continue
            items.append(self.apply(rt[old_index], old[old_index], value))
            if old_index in old_comments:
                comments[new_index] = old_comments[old_index]
        del rt[:]
        rt.extend(items)
        rt.ca.items.clear()
        rt.ca.items.update(comments)
        if foot:
            yamlio.attach_foot(rt, foot)

    def reshare(self, root: Any) -> Any:
        """Share again what every site of an anchor ended up equal in: one node, the anchor kept."""
        sites: dict[int, list[Any]] = {}  # id(original) -> the nodes now at its sites
        for node in _containers(root):
            original = self.copies.get(id(node), node if id(node) in self.shared else None)
            if original is not None:
                sites.setdefault(id(original), []).append(node)
        replace: dict[int, Any] = {}
        for nodes in sites.values():
            first = nodes[0]
            if len(nodes) < 2 or not all(deep_equal(first, other) for other in nodes[1:]):
                continue
            original = self.copies.get(id(first), first)
            keep = next((n for n in nodes if n is original), first)
            if keep is not original:
                keep.yaml_set_anchor(original.anchor.value)
            replace.update({id(n): keep for n in nodes if n is not keep})
        return _replace_nodes(root, replace) if replace else root


def _containers(root: Any) -> list[Any]:
    """Every container of the tree, each occurrence once, in document order."""
    out: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(node)
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            out.append(node)
            stack.extend(reversed(node))
    return out


def _replace_nodes(node: Any, replace: dict[int, Any]) -> Any:
    if id(node) in replace:
        return replace[id(node)]
    if isinstance(node, dict):
        for key in list(node):
            child = _replace_nodes(node[key], replace)
            if child is not node[key]:
                node[key] = child
    elif isinstance(node, list):
        for i, item in enumerate(node):
            child = _replace_nodes(item, replace)
            if child is not item:
                node[i] = child
    return node


def _shared_containers(rt: Any) -> set[int]:
    """ids of the containers that occur more than once in the tree (an anchor and its aliases)."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [rt]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        stack.extend(node.values() if isinstance(node, dict) else node)
    return shared


def match_elements(
    old: list[Any], new: list[Any], origin: dict[int, Any] | None = None
) -> list[int | None]:
    """For each new element, the index of the old element it continues (or None).

    Pairs by object identity first (``origin`` maps ``id()`` of an element of a
    copy to the element of ``old`` it was copied from), then by
    equal value, then by an identity key such as ``name``, then leftover
    elements of the same kind at the same position.
    """
    taken: set[int] = set()
    result: list[int | None] = [None] * len(new)
    by_id = {id(item): i for i, item in enumerate(old) if isinstance(item, (dict, list))}

    def claim(new_index: int, old_index: int | None) -> None:
        if old_index is not None and old_index not in taken:
            taken.add(old_index)
            result[new_index] = old_index

    for i, item in enumerate(new):
        if isinstance(item, (dict, list)):
            source = origin.get(id(item), item) if origin else item
            claim(i, by_id.get(id(source)))
    for i, item in enumerate(new):
        if result[i] is None:
            claim(i, next((j for j, o in enumerate(old) if j not in taken and deep_equal(o, item)), None))
    for i, item in enumerate(new):
        if result[i] is None and isinstance(item, dict):
            claim(i, _match_by_key(item, old, taken))
    for i, item in enumerate(new):
        if result[i] is None and i < len(old) and i not in taken:
            if isinstance(item, dict) and isinstance(old[i], dict):
                claim(i, i)
    return result


def _match_by_key(item: dict, old: list[Any], taken: set[int]) -> int | None:
    for key in IDENTITY_KEYS:
        if key not in item:
            continue
        for j, candidate in enumerate(old):
            if j not in taken and isinstance(candidate, dict) and key in candidate:
                if deep_equal(candidate[key], item[key]):
                    return j
        return None
    return None
