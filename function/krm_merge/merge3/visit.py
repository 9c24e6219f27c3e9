"""The contract between the walker (traversal) and a visitor (merge rules).

As in kyaml's ``yaml/walk``: the :class:`~.walker.Walker` visits one node in
the three trees at once (:class:`Sources`) and asks a :class:`Visitor` what
to do with it.  The visitor never walks; it answers with a :class:`Decision`:

* ``KEEP`` — local's node stays as it is;
* ``REPLACE`` — the given node takes its place;
* ``DELETE`` — the field or element disappears;
* ``DESCEND`` — walk into the given sources (a map's fields, an associative
  list's elements) with ``sources.local`` as the destination container.

A new merge policy is a new visitor (e.g. the Kptfile pipeline rules in
:mod:`krm_merge.kptfile.merge`), not an edit of the walker.  A new node
representation is a new :class:`Representation` (the node operations both
ask for): ruamel's round-trip trees (:data:`.nodes.ROUND_TRIP`, comments
kept) or plain data (:data:`.plain.PLAIN_DATA`, the update's merge of what the
fast reader read).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from .nodes import MISSING

if TYPE_CHECKING:
    from .rules import ListRule, MergeSchema


@dataclass(frozen=True)
class Sources:
    """One position in the three trees (:data:`MISSING` where a tree lacks it)."""

    local: Any
    origin: Any
    upstream: Any
    path: tuple[Any, ...] = ()

    def with_local(self, node: Any) -> Sources:
        """The same position with another destination node."""
        # the constructor, not dataclasses.replace: once per map and list of every merge (a sixth of the walk)
        return Sources(node, self.origin, self.upstream, self.path)

    def with_upstream(self, node: Any) -> Sources:
        """The same position read with another upstream node."""
        return Sources(self.local, self.origin, node, self.path)


class Action(Enum):
    """What a visitor decided for one node."""

    KEEP = "keep"
    REPLACE = "replace"
    DELETE = "delete"
    DESCEND = "descend"


@dataclass(frozen=True)
class Decision:
    """A visitor's answer for one node.

    ``node``: the replacement (REPLACE).  ``sources``: what to walk into
    (DESCEND).  ``drop_if_empty``: after DESCEND, a container left empty
    disappears instead of staying as ``{}`` / ``[]``.  A field's key
    comments are decided apart from its value (``visit_key``).
    """

    action: Action
    node: Any = MISSING
    sources: Sources | None = None
    drop_if_empty: bool = False


KEEP = Decision(Action.KEEP)
DELETE = Decision(Action.DELETE)


def replace_with(node: Any) -> Decision:
    """Put ``node`` in local's place."""
    return Decision(Action.REPLACE, node=node)


def descend(sources: Sources, *, drop_if_empty: bool = False) -> Decision:
    """Walk into ``sources`` (``sources.local`` is the destination)."""
    return Decision(Action.DESCEND, sources=sources, drop_if_empty=drop_if_empty)


class Representation(Protocol):
    """How the trees of one merge hold their nodes: what the walker and the visitor ask of a node beyond its data.

    ``comments``: whether the nodes carry comments at all; when False the
    walker neither asks :meth:`Visitor.visit_key` nor calls the comment
    operations, and its markers are handed back (``Merger.pending``: a marker is a comment).
    """

    comments: bool

    def key_comment(self, container: Any, key: Any) -> Any:
        """Comparable text of the comments of ``container[key]``."""
        ...

    def save_key_comment(self, container: Any, key: Any) -> Any:
        """A snapshot of a key's comments, for :meth:`restore_key_comment`."""
        ...

    def restore_key_comment(self, container: Any, key: Any, saved: Any) -> None:
        """Put a snapshot back on ``container[key]``."""
        ...

    def copy_key_comment(self, dst: Any, dst_key: Any, src: Any, src_key: Any) -> None:
        """Make ``dst[dst_key]`` carry the comments ``src[src_key]`` has."""
        ...

    def drop_key_comment(self, container: Any, key: Any) -> None:
        """Forget the comments of a key being removed."""
        ...

    def add_line_comment(self, container: Any, key: Any, text: str, replacing: str | None = None) -> None:
        """End the line of ``container[key]`` with ``text``."""
        ...

    def new_map(self) -> Any:
        """An empty map of this representation."""
        ...

    def new_seq(self, items: list[Any] | None = None) -> Any:
        """A sequence of this representation holding ``items``."""
        ...

    def same(self, a: Any, b: Any) -> bool:
        """Equal as data (either may be MISSING): the project's one equality."""
        ...

    def restyle(self, new: Any, old: Any) -> Any:
        """An incoming scalar in the style of the local value it replaces."""
        ...

    def render(self, node: Any) -> str:
        """A node shown in a message (bounded)."""
        ...

    def to_plain_data(self, node: Any) -> Any:
        """The node as plain data."""
        ...

    def replace_items(self, seq: Any, items: list[Any], origins: list[int | None]) -> None:
        """Make ``seq`` hold ``items``; ``origins[i]``: the old index of ``items[i]`` (its comments go with it), or None."""
        ...


class Visitor(Protocol):
    """Merge rules, one method per node kind the walker meets."""

    def visit_map(self, nodes: Sources, schema: MergeSchema | None) -> Decision:
        """A map: DESCEND into a destination map, or KEEP / REPLACE / DELETE it whole."""
        ...

    def visit_list(self, nodes: Sources, rule: ListRule, elements: MergeSchema | None) -> Decision:
        """A list: plain lists are decided whole; associative ones usually DESCEND."""
        ...

    def visit_scalar(self, nodes: Sources) -> Decision:
        """A scalar (or a scalar member of a set)."""
        ...

    def visit_key(self, values: Sources, comments: Sources) -> Decision:
        """A map key's comments: REPLACE takes upstream's, KEEP leaves local's."""
        ...

    def visit_kind_change(self, nodes: Sources) -> Decision:
        """A node whose kind differs between the versions (raise when it cannot be merged)."""
        ...
