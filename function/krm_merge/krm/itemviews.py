"""An item's text and every view derived from it, cached and dropped together.

``Item`` (and its public face ``KubeObject``) is what modes use; this class owns the state behind it
(see docs/internals.md, "The representations of an item"):

* the text, and the exact input bytes while the text is unchanged;
* the header (identity fields), the plain data, the fast parser's positions,
  the ruamel round-trip tree: each built on first use from the current text;
* the editors: a new value goes through the fast line splicer when it is sure
  of the result, else through the round-trip tree, whose print must read
  back as the new value.

Any change of the text forgets every view of the old one (:meth:`mark_changed`).
"""

from __future__ import annotations

import functools
import re

from krm_merge.krm import yamlio
from krm_merge.krm.results import KrmError
from krm_merge.krm.values import deep_equal
from krm_merge.yaml.layout import COMPACT, Layout, layout_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


class _Unset:
    pass


UNSET: Any = _Unset()


class PendingReader:
    """The reader annotations of document ``index`` (text ``doc``) of file ``path``, built on first use.

    ``builder(path, index, doc)`` builds them; ``path`` and ``index`` are known at once.
    """

    __slots__ = ("path", "index", "doc", "builder")

    def __init__(self, path: str, index: int, doc: str, builder: Callable[[str, int, str], dict[str, str]]) -> None:
        self.path = path
        self.index = index
        self.doc = doc  # the text as read (the same string as the item's until it changes)
        self.builder = builder

    def build(self) -> dict[str, str]:
        """The annotations."""
        return self.builder(self.path, self.index, self.doc)


class ItemViews:
    """The text of one item and its cached views; ``owner`` names the item in errors."""

    __slots__ = (
        "text", "changed", "input_bytes", "header", "composed_header", "_reader", "_pending_reader", "_data",
        "_reader_data", "_fast", "_rt", "_layout", "_copy_origin", "rt_repaired", "owner",
    )

    def __init__(self, text: str, input_bytes: str | None, owner: Any) -> None:
        self.text = text
        self.changed = False
        self.input_bytes = input_bytes  # the exact block the item had in its input
        self.header: Any = None  # the text's own header
        self.composed_header: Any = None  # the header with the reader's annotations (cached)
        # kpt's reader annotations (path, index, seqindent), held beside the text rather than
        # printed into it: the file's bytes stay the bytes read, and no writer has to strip them.
        self._reader: dict[str, str] | None = None
        # Or the function that builds them, run on first use: a run that never looks at an
        # item's annotations and never changes it does not pay for them (issue #22's 5% budget).
        self._pending_reader: PendingReader | None = None
        self._data: Any = UNSET
        self._reader_data: tuple[Any, Any] | None = None  # (plain data, the same with the reader's annotations)
        self._fast: Any = None  # the fast parser's result for the current text
        self._rt: Any = None
        self._layout: Layout = COMPACT  # the text's own indentation, which the round-trip printer follows
        self._copy_origin: dict[int, Any] | None = None
        self.rt_repaired = False  # the ruamel printer needed the comment repair (for tests)
        self.owner = owner

    # --- the text --------------------------------------------------------------------

    def set_text(self, new_text: str) -> None:
        """Replace the whole text (for modes that edit bytes directly)."""
        if new_text != self.text:
            self.text = new_text
            self.mark_changed()

    def set_commented_text(self, new_text: str) -> None:
        """Replace the text by one that reads as the same data (comments added at line ends): the data and the
        header stay read."""
        data, header, composed = self._data, self.header, self.composed_header
        self.set_text(new_text)
        self._data, self.header, self.composed_header = data, header, composed  # the header is read from the data

    def mark_changed(self, rt: Any = None) -> None:
        """Forget every view of the old text; ``rt`` is the new text's tree, if known."""
        if self._pending_reader is not None:
            self.reader  # noqa: B018 - built now: the builder holds the text as read, released here
        self.changed = True
        self.input_bytes = None  # never written once the item changed: one copy of the item in memory
        self.header = None
        self.composed_header = None
        self._data = UNSET
        self._reader_data = None
        self._fast = None
        self._copy_origin = None
        self._rt = rt

    def forget_data(self) -> None:
        """Drop the parsed views (data, positions) while no round-trip tree holds edits."""
        if self._rt is None:
            self._data = UNSET
            self._fast = None
            self._copy_origin = None

    @property
    def has_tree(self) -> bool:
        """True once a round-trip tree exists for the current text."""
        return self._rt is not None

    # --- plain data ----------------------------------------------------------------------

    @property
    def data(self) -> Any:
        """The text as plain data: by the fast parser when it can, else through the bounded loader."""
        if self._data is UNSET:
            fast = self._fast = _fastyaml().parse(self.text)
            self._data = fast.data if fast is not None else yamlio.load_data(self.text, self.owner.what)
        return self._data

    def parsed(self) -> Any:
        """The fast reader's parse of the current text (plain data and each node's position), or None where it
        cannot read it: read once per text and kept with the other views, so that a caller placing lines by the
        positions (conflict markers) does not read the text again."""
        fast = self._fast
        if fast is None or fast.text is not self.text:
            fast = _fastyaml().parse(self.text)
            if fast is None:
                return None
            self._fast = fast  # the current text's, whatever edit set _data: _set_data_fast checks fast.data first
            if self._data is UNSET:
                self._data = fast.data
        return fast

    @property
    def item_data(self) -> Any:
        """:attr:`data` with the reader's annotations, as ``kpt fn source`` gives the item."""
        data = self.data
        reader = self.reader
        if reader is None:
            return data
        cached = self._reader_data
        if cached is None or cached[0] is not data:
            cached = self._reader_data = (data, with_reader_annotations(data, reader))
        return cached[1]

    @property
    def reader(self) -> dict[str, str] | None:
        """kpt's reader annotations held beside the text (None: the item has none)."""
        if self._pending_reader is not None:
            self._reader, self._pending_reader = self._pending_reader.build(), None
        return self._reader

    def location(self) -> tuple[str, int] | None:
        """The reader's path and index without building its annotations (None: no reader annotations)."""
        pending = self._pending_reader
        if pending is not None:
            return pending.path, pending.index
        return None

    def set_reader(self, reader: dict[str, str] | PendingReader | None) -> None:
        """Hold ``reader`` (or a :class:`PendingReader`) as the reader annotations; views with them are recomposed."""
        if isinstance(reader, PendingReader):
            self._reader, self._pending_reader = None, reader
        else:
            self._reader, self._pending_reader = reader, None
        self.composed_header = None
        self._reader_data = None

    def copy_data(self) -> Any:
        """A deep copy of :attr:`item_data` that remembers which original element each list element is."""
        origin: dict[int, Any] = {}
        copy = _copy_tracking(self.item_data, origin)
        self._copy_origin = origin
        origin[-1] = copy  # keep the copy alive so the ids recorded above cannot be reused
        return copy

    def set_data(self, new: Any, change: tuple[str, str] | None = None) -> None:
        """Make the text hold ``new``, changing as few bytes as possible.

        ``change``: two texts whose difference is the change (origin's and
        upstream's version of a resource): when the fast editor declines,
        their changed lines are carried onto the text before the round trip
        is tried (:meth:`_carry`; e.g. lines changed inside a literal block).
        """
        rtedit = _rtedit()
        if self.reader is not None:
            new = self._take_reader(new)
        old = self.data
        if deep_equal(old, new):
            return
        if not isinstance(new, dict):
            raise KrmError("an item must be a mapping", self.owner)
        origin = self._copy_origin
        before = self.text
        # Given the change as two texts, upstream's lines inside a changed literal block go first (kept as
        # upstream wrote them); the fast editor prints the block as the round-trip editor would where they
        # do not fit (another field changed beside it, issue 33).
        if self._set_data_fast(old, new, origin, literal_blocks=change is None):
            return
        if change is not None and self._rt is None and (
                self._carry(before, *change, new) or self._set_data_fast(old, new, origin, literal_blocks=True)):
            return
        rt = self.rt
        unedited = yamlio.dump_rt(rt, self._layout)
        repaired = self.rt_repaired
        rtedit.apply_to_rt(rt, old, new, lambda o, n: rtedit.match_elements(o, n, origin))
        printed = self._print_rt_checked(rt, new)
        if unedited != before and self.rt_repaired == repaired and self._carry(before, unedited, printed, new):
            return
        kept = keep_trailing_space(before, printed)
        printed = kept if kept != printed and yamlio.read_back_error(kept, new) is None else printed
        self.text = keep_closing_comments(before, printed)
        self.mark_changed(rt)  # the tree still matches the new text: later edits reuse it
        self._data = new

    def _take_reader(self, new: Any) -> Any:
        """``new`` without the reader's annotations, which stay beside the text.

        A reader annotation given another value moves the item (``set_path``,
        or a mode editing the annotation as it would under kpt); one left out
        keeps its value, as the slots it replaced did.  An ``annotations`` (or
        ``metadata``) mapping left empty is dropped when the text had none,
        and is the explicit null again when the text had that (kubectl keeps
        ``annotations: null`` in an object it patches).
        """
        reader = self.reader
        assert reader is not None
        meta = new.get("metadata") if isinstance(new, dict) else None
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(ann, dict) or not any(key in ann for key in reader):
            return new
        moved = {key: str(ann[key]) for key in reader if key in ann and str(ann[key]) != reader[key]}
        if moved:
            self.set_reader({**reader, **moved})
        base = self.data
        base_meta = base.get("metadata") if isinstance(base, dict) else None
        meta = _emptied(dict(meta), "annotations", {k: v for k, v in ann.items() if k not in reader}, base_meta)
        return _emptied(dict(new), "metadata", meta, base)

    def _set_data_fast(self, old: Any, new: dict, origin: dict[int, Any] | None, literal_blocks: bool) -> bool:
        """Splice the text directly when the fast editor is sure of the result (``literal_blocks``: :func:`fastyaml.edit`'s)."""
        fastyaml, rtedit = _fastyaml(), _rtedit()
        if self._rt is not None:
            return False
        fast = self._fast
        if fast is None or fast.data is not old:
            # After an earlier edit the positions are gone: re-read the text.
            fast = fastyaml.parse(self.text)
            if fast is None or not deep_equal(fast.data, old):
                return False
        new_text = fastyaml.edit(fast, old, new, lambda o, n: rtedit.match_elements(o, n, origin), literal_blocks=literal_blocks)
        if new_text is None:
            return False
        self.text = keep_closing_comments(self.text, new_text)
        self.mark_changed()
        self._data = new
        return True

    def _carry(self, before: str, unedited: str, edited: str, new: Any) -> bool:
        """Change only the text's lines that ``unedited`` -> ``edited`` changes, if that reads back as ``new``.

        Two uses.  ruamel joins a long plain scalar wrapped over lines and
        normalises spacing, and an untouched field must keep its bytes: the
        lines the edit changed in ruamel's print are carried onto the text
        (:func:`yamlio.carry_edits`) instead of the whole print.  And a caller
        that has the change as two texts (:meth:`set_data`'s ``change``).
        An edited tree is kept for later edits: it holds the new data, and
        the next edit carries its own changed lines the same way.
        """
        carried = yamlio.carried_edit(before, unedited, edited, new)
        if carried is None:
            return False
        self.text = keep_closing_comments(before, carried)
        self.mark_changed(self._rt)
        self._data = new
        return True

    def _print_rt_checked(self, rt: Any, new: Any) -> str:
        """Print the edited tree, and prove it reads back as ``new``.

        ruamel.yaml can mis-print a moved ``- # comment`` element (two keys on
        one line); then the comment goes back to ruamel's own slot (printed
        above the dash) and the tree is printed again.  Output that still does
        not read back is refused rather than written.
        """
        text = yamlio.dump_rt(rt, self._layout)
        if yamlio.read_back_error(text, new) is None:
            return text
        yamlio.restore_seq_item_comments(rt)
        self.rt_repaired = True
        text = yamlio.dump_rt(rt, self._layout)
        if yamlio.read_back_error(text, new) is None:
            return text
        anchors = sorted(set(_anchor().findall(self.text)))
        uses = f" (it uses the anchors {', '.join('&' + a for a in anchors)})" if anchors else ""
        raise KrmError(
            f"cannot print the edited item faithfully (ruamel.yaml round trip){uses}; "
            "please report this input to the krm-merge maintainers", self.owner,
        )

    # --- the round-trip tree ----------------------------------------------------------------

    @property
    def rt(self) -> Any:
        """The round-trip tree of the current text (comments kept)."""
        if self._rt is None:
            self._rt = yamlio.load_rt(self.text, self.owner.what, heads_on_elements=True)
            self._layout = layout_of(self.text)
        return self._rt

    def commit_rt(self) -> None:
        """Re-print the text from its (edited) round-trip tree."""
        if self._rt is None:
            return
        rt = self._rt
        new_text = yamlio.dump_rt(rt, self._layout)
        kept = keep_trailing_space(self.text, new_text)
        if kept != new_text and yamlio.read_back_error(kept, yamlio.load_data(new_text)) is None:
            new_text = kept
        if new_text != self.text:
            self.text = new_text
            self.mark_changed(rt)


def _emptied(parent: dict, key: str, value: dict, base: Any) -> dict:
    """``parent`` with ``key`` set to ``value``; an empty ``value`` is what ``base`` had there (absent, or null)."""
    had = base if isinstance(base, dict) else {}
    if value or (key in had and had[key] is not None):
        parent[key] = value
    elif key in had:
        parent[key] = None
    else:
        del parent[key]
    return parent


def with_reader_annotations(data: Any, reader: dict[str, str]) -> Any:
    """``data`` with ``reader`` added to ``metadata.annotations`` (after the others, as kyaml adds them).

    Only the mappings on the way are copied: lists stay the same objects, so
    :meth:`ItemViews.copy_data`'s element tracking still finds them.  A
    ``metadata`` or ``annotations`` that is not a mapping is left alone.
    """
    if not isinstance(data, dict):
        return data
    meta = data.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return data
    ann = meta.get("annotations")
    if ann is None:
        ann = {}
    if not isinstance(ann, dict):
        return data
    out = dict(data)
    out["metadata"] = {**meta, "annotations": {**ann, **reader}}
    return out


def _fastyaml() -> Any:
    """The fast reader and editor, imported on first use: a run that reads no item's values never loads it."""
    from krm_merge.krm import fastyaml  # start-up: see the docstring

    return fastyaml


def _rtedit() -> Any:
    """The round-trip editor, imported on first use: a run that changes no item never loads it."""
    from krm_merge.krm import rtedit  # start-up: see the docstring

    return rtedit


# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs them does not pay for compiling them at start-up (issue 24).
@functools.cache
def _anchor() -> re.Pattern[str]:
    return re.compile(r"(?:^|[\s\[{,])&([^\s,\[\]{}]+)", re.M)


@functools.cache
def _trailing_space() -> re.Pattern[str]:
    return re.compile(r"[ \t]$", re.M)


def keep_trailing_space(before: str, after: str) -> str:
    """``after`` with the trailing whitespace of its lines that are unchanged from ``before``.

    ruamel.yaml drops whitespace at the end of the lines it prints; an
    untouched line must keep its bytes.  Lines are paired by their text
    without trailing whitespace; callers check the result still reads back
    as the intended data (inside a literal block, trailing spaces are data).
    """
    if not _trailing_space().search(before):
        return after
    old, new = before.split("\n"), after.split("\n")
    out = list(new)
    for i, j in yamlio.matching_lines([line.rstrip(" \t") for line in old], [line.rstrip(" \t") for line in new]):
        out[j] = old[i]
    return "\n".join(out)


def keep_closing_comments(before: str, after: str) -> str:
    """Comment lines that closed the document (``# [END region]``) stay at its end.

    Both editors tie a comment line to the entry before it, so a key added
    after the last entry would be printed below the closing comments.  Only
    column-0 comment lines after the last content line count: they cannot be
    part of a value.
    """
    closing = _closing_block(before)
    if not closing or after.endswith(closing):
        return after
    at = after.rfind(closing)
    if at > 0 and after[at - 1] != "\n":
        return after
    rest = after if at < 0 else after[:at] + after[at + len(closing):]  # < 0: deleted with the last entry
    return rest + ("" if rest.endswith("\n") else "\n") + closing


def _closing_block(text: str) -> str:
    """The column-0 comment lines (and blank lines among them) after the last content line."""
    lines = text.split("\n")
    end = len(lines) - (1 if text.endswith("\n") else 0)
    start = end
    while start > 0 and (lines[start - 1].startswith("#") or not lines[start - 1].strip()):
        start -= 1
    while start < end and not lines[start].startswith("#"):
        start += 1  # blank lines before the comments stay with the content
    if start == end:
        return ""
    return "\n".join(lines[start:end]) + ("\n" if text.endswith("\n") else "")


def _copy_tracking(value: Any, origin: dict[int, Any]) -> Any:
    if isinstance(value, dict):
        return {k: _copy_tracking(v, origin) for k, v in value.items()}
    if isinstance(value, list):
        out = []
        for item in value:
            copy = _copy_tracking(item, origin)
            if isinstance(copy, (dict, list)):
                origin[id(copy)] = item
            out.append(copy)
        return out
    return value
