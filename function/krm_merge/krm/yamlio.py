"""YAML reading and printing for items: the krm layer's face over :mod:`krm_merge.yaml`.

Every read goes through the bounded loader (:mod:`krm_merge.yaml.load`);
its errors become :class:`KrmError` here.  Two libraries, each where it is best:

* PyYAML with libyaml (``CSafeLoader``) reads plain data fast and safely; it
  keeps no comments, so it is only used for *reading* values.
* ruamel.yaml's round-trip mode keeps comments and formatting; it is the
  slow, general writer for items whose text must change and cannot be edited
  in place.

Plain data follows Kubernetes' YAML 1.1 reading (``yes`` is a bool, as
sigs.k8s.io/yaml reads it), except that timestamps stay strings: Kubernetes
objects hold no timestamps, only strings that look like them.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import io
import re

from krm_merge.krm.results import KrmError, Result
from krm_merge.krm.values import deep_equal
from krm_merge.yaml import load, scalars
from krm_merge.yaml.layout import COMPACT, WIDE, Layout, layout_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

MAX_DEPTH = load.MAX_DEPTH


class UnreadableYamlError(KrmError):
    """A text that is not valid YAML or breaks a bound of the loader (a reader that names every
    broken file of a package catches this class, not a message)."""


@contextlib.contextmanager
def _as_krm_error() -> Iterator[None]:
    """The loader's errors as :class:`UnreadableYamlError`, a :class:`KrmError` every caller above handles."""
    try:
        yield
    except load.YamlError as err:
        raise UnreadableYamlError(err.message) from None


def _load_all_fast(text: str) -> list[Any] | None:
    """The documents of ``text`` by the fast reader, or None if it declines any."""
    from krm_merge.krm import fastyaml

    if not text.strip():
        return None
    if not _DOCUMENT_MARKER.search(text):
        parsed = fastyaml.parse(text)
        return None if parsed is None or parsed.aliases else [parsed.data]  # the loader reads aliases itself
    pieces = _split_documents(text)
    if pieces is None:
        return None
    out: list[Any] = []
    for piece in pieces:
        if _only_comments(piece):
            out.append(None)  # an empty document between markers
            continue
        parsed = fastyaml.parse(piece)
        if parsed is None or parsed.aliases:
            return None
        out.append(parsed.data)
    return out


def _split_documents(text: str) -> list[str] | None:
    """The documents between bare ``---`` lines, as libyaml counts them.

    Many patches arrive as one ``---``-separated string; reading each piece
    with the fast reader keeps that linear and off PyYAML's Python
    constructor.  A marker that is not a bare ``---`` line (``--- |``,
    ``...``, directives) is left to libyaml: None.  Text before the first
    marker is a document only if it holds more than comments.
    """
    lines = text.split("\n")
    pieces: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.startswith(("---", "...", "%")):
            if line.rstrip() != "---":
                return None
            pieces.append("\n".join(current) + "\n")
            current = []
        else:
            current.append(line)
    pieces.append("\n".join(current) + "\n")
    if _only_comments(pieces[0]):
        pieces.pop(0)
    return pieces


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.split("\n"))


_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.M)


def load_data(text: str, what: str = "input") -> Any:
    """Load one YAML document as plain data through the bounded loader; errors become :class:`KrmError`."""
    with _as_krm_error():
        return load.load_data(text, what, _load_all_fast)


def load_all_data(text: str, what: str = "input", *, note_duplicates: bool = True) -> list[Any]:
    """Load every document of a YAML stream as plain data through the bounded loader.

    Documents in kyaml's block style are read by the fast reader (same data,
    no PyYAML import); anything else by libyaml.  ``note_duplicates=False``
    for a text whose duplicate keys an earlier read noted.
    """
    with _as_krm_error():
        return load.load_all_data(text, what, _load_all_fast, note_duplicates=note_duplicates)


def read_back_error(text: str, expected: Any, *, documents: bool = False) -> str | None:
    """The one read-back check of an edit: None when ``text`` reads as ``expected``, else why not.

    Every editor that writes text (the round-trip printer, promote's
    splicers) proves its output with it before the text is used: ``text`` is
    read by the bounded loader and compared with ``expected`` by the project's
    one equality (:func:`krm_merge.krm.values.deep_equal`).  ``expected`` is one
    document's data, or with ``documents`` the list of the stream's non-empty
    documents.  Duplicate keys are not noted again: the text's first read did.
    """
    try:
        docs = load.load_all_data(text, "the edited text", _load_all_fast, note_duplicates=False)
    except load.YamlError as err:
        return f"does not parse ({err.message})"
    got: Any  # the stream's documents, or the one document
    if documents:
        got = [doc for doc in docs if doc is not None]
    elif len(docs) > 1:
        return f"holds {len(docs)} YAML documents, expected one"
    else:
        got = docs[0] if docs else None
    return None if deep_equal(got, expected) else "does not read back as intended"


def check_syntax(text: str, what: str) -> None:
    """Refuse ``text`` unless it is valid YAML, without building its values (:class:`KrmError`)."""
    with _as_krm_error():
        load.check_syntax(text, what)


def load_strings(text: str, what: str = "input") -> Any:
    """Load one document with every scalar kept as its string (no type resolution)."""
    with _as_krm_error():
        return load.load_strings(text, what)


def dump_data(data: Any) -> str:
    """Print plain data as block YAML (for new objects and results; no comments)."""
    lib = load.libyaml()
    Dumper, yaml = lib.Dumper, lib.yaml

    return yaml.dump(
        data,
        Dumper=Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
    )


def dump_results(results: Iterable[Result]) -> str:
    """KRM results in kpt's results format: ``results:`` and the list (a ResourceList's, or ``--results FILE``).

    The one home of the wire format; the commands reach it through
    :func:`krm_merge.outcomes.render.results_yaml`.  Printed here, byte for byte as
    :func:`dump_data` prints it, when every value is one this printer writes exactly so (the
    results a mode reports: words, names, paths, numbers); else by :func:`dump_data`.  A
    function run that reports results (promote's, every run) does not load PyYAML for them
    (~99M instructions to import; issue 45).
    """
    data = {"results": [r.to_dict() for r in results]}
    out: list[str] = []
    try:
        _block_mapping(data, 0, "", out)
    except _NotPrintedHere:
        return dump_data(data)
    return "".join(out)


class _NotPrintedHere(Exception):
    """A value :func:`dump_results` leaves to the dumper."""


def _block_mapping(mapping: dict[Any, Any], indent: int, first: str, out: list[str]) -> None:
    """The entries at column ``indent``, as the dumper writes a block mapping; the first line begins with
    ``first`` instead of spaces (``"- "`` for a mapping that is a sequence's element)."""
    pad = " " * indent
    lead = first or pad
    for key, value in mapping.items():
        text = _scalar(key) if type(key) is str else ""
        if not text or len(text) > 120 or any(c in key for c in "\r\x85\u2028\u2029"):
            raise _NotPrintedHere  # the emitter writes a long key, or one holding a line break, as ``? key``
        out.append(f"{lead}{text}:")
        lead = pad
        if type(value) is dict and value:
            out.append("\n")
            _block_mapping(value, indent + 2, "", out)
        elif type(value) is list and value:
            out.append("\n")
            _block_sequence(value, indent, out)  # indentless, as libyaml writes a mapping's sequence
        else:
            out.append(f" {_empty_or_scalar(value)}\n")


def _block_sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if type(item) is dict and item:
            _block_mapping(item, indent + 2, pad + "- ", out)
        elif type(item) is list and item:
            raise _NotPrintedHere  # a sequence in a sequence: left to the dumper
        else:
            out.append(f"{pad}- {_empty_or_scalar(item)}\n")


def _empty_or_scalar(value: Any) -> str:
    if type(value) is dict or type(value) is list:
        return "{}" if type(value) is dict else "[]"  # only empty ones come here
    return _scalar(value)


def _scalar(value: Any) -> str:
    """A scalar as the dumper writes it (its representers: kyaml's quoting of strings, then libyaml's styles)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is str and "\n" not in value:  # a text of lines is a literal block
        if scalars.needs_double_quotes(value):
            if not value or max(value) <= "\uffff":  # libyaml escapes what lies beyond U+FFFF
                return scalars.double_quoted(value)
        elif scalars.dumper_writes_plain(value):
            return value
    raise _NotPrintedHere


# --- ruamel.yaml round trip -----------------------------------------------------


new_rt_yaml = load.new_rt_yaml


def load_rt(text: str, what: str = "input", heads_on_elements: bool = False) -> Any:
    """Load one document as a ruamel round-trip tree (comments kept) through the bounded loader.

    ``heads_on_elements``: the comment lines above a sequence element are put
    in that element's own slot (:func:`_heads_to_elements`), so they move with
    it when an edit reorders the list.  The 3-way merges keep ruamel's own
    slots, which their comment rules are written for.
    """
    with _as_krm_error():
        node = load.load_rt(text, what)
    try:
        _move_seq_item_comments(node)
        if heads_on_elements:
            _heads_in_tree(node, 0)
    except KrmError as err:
        raise KrmError(f"{what}: {err.message}") from None
    return node


def _move_seq_item_comments(node: Any) -> None:
    """Attach a ``- # comment`` to the item's first key, not to the sequence.

    ruamel keeps such a comment as a pre-comment of the sequence item and
    prints it *before* the dash, where kpt reads it as the previous item's
    foot comment (see notes/krm-conventions.md §3.3).  Moved onto the first
    key it prints as ``-`` / ``  # c``, which :func:`dump_rt` joins back.
    """
    _each_sequence(node, _comments_to_first_key)


def _heads_in_tree(node: Any, depth: int) -> None:
    """:func:`_heads_to_elements` on every sequence; a key holding a sequence forgets
    the first element's head (ruamel keeps it on the key too)."""
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    if depth > MAX_DEPTH:
        return
    if isinstance(node, CommentedMap):
        for key, value in node.items():
            if isinstance(value, CommentedSeq):
                moved = _heads_to_elements(value)
                slot = node.ca.items.get(key)
                if moved and slot and len(slot) > 3 and slot[3]:
                    slot[3] = [t for t in slot[3] if not any(t is m for m in moved)] or None
            _heads_in_tree(value, depth + 1)
    elif isinstance(node, CommentedSeq):
        for value in node:
            if isinstance(value, CommentedSeq):
                _heads_to_elements(value)
            _heads_in_tree(value, depth + 1)


def _heads_to_elements(seq: Any) -> list[Any]:
    """Give each element of a sequence the comment lines above its dash (its head comments).

    ruamel keeps the comment lines between two elements as the tail of the
    earlier one (on its last scalar) and those above the first element on
    the sequence; an edit that moves elements would leave them behind.  The
    lines at the dash's column or left of it move to the element's own slot,
    printed above its dash; deeper-indented lines stay: the earlier
    element's foot.
    """
    if not len(seq):
        return []
    column = dash_column(seq)
    if column is None:
        return []
    moved: list[Any] = []
    first = seq.ca.comment[1] if seq.ca.comment and len(seq.ca.comment) > 1 else None
    lead = 0
    while first and lead < len(first) and not first[lead].value.strip():
        lead += 1  # blank lines before the head stay where they are
    if first and lead < len(first) and all(
        not t.value.strip() or (t.column <= column and t.value.lstrip(" ").startswith("#")) for t in first
    ):
        moved = list(first[lead:])
        seq.ca.comment[1] = list(first[:lead]) or None
        slot = seq.ca.items.setdefault(0, [None, None, None, None])
        slot[1] = moved + list(slot[1] or [])
    key_comment = seq.ca.comment[0] if seq.ca.comment else None
    if key_comment is not None and "\n" in key_comment.value.rstrip("\n"):
        # `key: # c` followed by head lines of the first element: one token for both (shared with the key).
        keep, head = _split_tail(key_comment.value, column)
        if head:
            key_comment.value = keep
            slot = seq.ca.items.setdefault(0, [None, None, None, None])
            slot[1] = [_head_token(line) for line in head] + list(slot[1] or [])
    for k in range(1, len(seq)):
        tail = _tail_slot(seq[k - 1])
        if tail is None:
            continue
        holder, index = tail
        token = holder[index]
        keep, head = _split_tail(token.value, column)
        if not head:
            continue
        holder[index] = _comment_token(keep, token.column) if keep.strip(" \n") or keep.count("\n") > 1 else None
        slot = seq.ca.items.setdefault(k, [None, None, None, None])
        slot[1] = [_head_token(line) for line in head] + list(slot[1] or [])
    return moved


def detach_foot(node: Any) -> list[str]:
    """Take the comment lines after a collection's last entry that belong to the collection
    (at its dash's or keys' column or left of it: a closing ``# [END x]``), so they stay at its end."""
    ry = load.ruamel()
    CommentedMap = ry.comments.CommentedMap

    if not len(node):
        return []
    if isinstance(node, CommentedMap):
        column = _key_column(node)
    else:
        column = dash_column(node)
    tail = _tail_slot(node)
    if column is None:
        return []
    if tail is None:
        return []
    holder, index = tail
    token = holder[index]
    keep, foot = _split_tail(token.value, column or 0)
    if foot:
        holder[index] = _comment_token(keep, token.column) if keep.strip(" \n") or keep.count("\n") > 1 else None
    return foot


def attach_foot(seq: Any, lines: list[str]) -> None:
    """Put comment lines (from :func:`detach_foot`) after a sequence's last element."""
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    node = seq
    for _ in range(MAX_DEPTH):
        if isinstance(node, CommentedMap) and len(node):
            key = next(reversed(node))
            slot, index, child = node.ca.items.setdefault(key, [None, None, None, None]), 2, node[key]
        elif isinstance(node, CommentedSeq) and len(node):
            slot, index, child = node.ca.items.setdefault(len(node) - 1, [None, None, None, None]), 0, node[-1]
        else:
            return
        if not isinstance(child, (CommentedMap, CommentedSeq)) or not len(child):
            break
        node = child
    token = slot[index]
    text = "\n".join(lines) + "\n"
    slot[index] = _comment_token((token.value if token else "\n") + text, token.column if token else 0)


def _key_column(node: Any) -> int | None:
    try:
        col = node.lc.key(next(iter(node)))[1]
    except (AttributeError, KeyError, TypeError, IndexError, StopIteration):
        return None
    return col if isinstance(col, int) else None


def dash_column(seq: Any) -> int | None:
    """The column of a block sequence's dashes (ruamel records it as the sequence's position)."""
    col = getattr(getattr(seq, "lc", None), "col", None)
    return col if isinstance(col, int) else None


def last_slot(node: Any) -> tuple[Any, Any, int] | None:
    """(container, key, slot index) of the comment after ``node``'s last scalar.

    ruamel keeps the comment lines that follow a collection on its last
    scalar's entry (``ca.items[key][2]`` in a map, ``[0]`` in a sequence); a
    flow collection counts as one scalar: the lines after it sit on its key.
    """
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    for _ in range(MAX_DEPTH + 1):
        if isinstance(node, CommentedMap) and len(node):
            key: Any = next(reversed(node))
            pos = 2
        elif isinstance(node, CommentedSeq) and len(node):
            key, pos = len(node) - 1, 0
        else:
            return None
        value = node[key]
        if not (_nonempty_collection(value) and not value.fa.flow_style()):
            return node, key, pos
        node = value
    return None


def _tail_slot(node: Any) -> tuple[list[Any], int] | None:
    """Where ruamel keeps the comment lines that follow ``node``, when it holds some."""
    found = last_slot(node)
    if found is None:
        return None
    container, key, pos = found
    slot = container.ca.items.get(key)
    return (slot, pos) if slot and len(slot) > pos and slot[pos] is not None else None


def _nonempty_collection(value: Any) -> bool:
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    return isinstance(value, (CommentedMap, CommentedSeq)) and len(value) > 0


def split_token(value: str) -> tuple[str, list[str]]:
    """A trailing-comment token's text: (the comment on the node's own line, the lines after it)."""
    parts = value.split("\n")
    return parts[0], (parts[1:-1] if value.endswith("\n") else parts[1:])


def join_token(first: str, lines: list[str]) -> str:
    """The inverse of :func:`split_token`."""
    return first + "\n" + "".join(line + "\n" for line in lines)


def token_column(token: Any) -> int:
    """The column a comment token starts at (0 when ruamel kept none)."""
    col = getattr(getattr(token, "start_mark", None), "column", None)
    return col if isinstance(col, int) else 0


def token_lines(token: Any) -> list[str]:
    """A full-line comment token as the lines it was, indentation included."""
    value = token.value[:-1] if token.value.endswith("\n") else token.value
    lines = value.split("\n")
    lines[0] = " " * token_column(token) + lines[0] if lines[0].strip() else ""
    return lines


def line_tokens(lines: list[str]) -> list[Any]:
    """One comment token per line (a blank line is an empty token), at the line's own column."""
    out = []
    for line in lines:
        text = line.lstrip()
        out.append(_comment_token(text + "\n", len(line) - len(text) if text else 0))
    return out


def _split_tail(value: str, column: int) -> tuple[str, list[str]]:
    """A tail comment's text split into what stays (end-of-line comment, deeper lines) and head lines."""
    body = value[:-1] if value.endswith("\n") else value
    parts = body.split("\n")
    first, others = parts[0], parts[1:]
    for j, line in enumerate(others):
        stripped = line.lstrip(" ")
        if stripped and len(line) - len(stripped) <= column:
            if not stripped.startswith("#"):
                return value, []
            head = others[j:]
            if any(part.strip() and not part.lstrip(" ").startswith("#") for part in head):
                return value, []
            return "\n".join([first] + others[:j]) + "\n", head
    return value, []


def _head_token(line: str) -> Any:
    stripped = line.lstrip(" ")
    return _comment_token(stripped + "\n", len(line) - len(stripped))


def _comment_token(value: str, column: int) -> Any:
    ry = load.ruamel()
    CommentMark, CommentToken = ry.error.CommentMark, ry.tokens.CommentToken

    return CommentToken(value, CommentMark(column), None)


def restore_seq_item_comments(node: Any) -> None:
    """Undo :func:`_move_seq_item_comments`: put the comments back in ruamel's slot."""
    _each_sequence(node, _comments_to_sequence_slot)


def _each_sequence(node: Any, visit: Callable[[Any], None], depth: int = 0) -> None:
    """Call ``visit`` on every sequence of a round-trip tree, refusing what cannot round-trip."""
    ry = load.ruamel()
    CommentedMap, CommentedSeq = ry.comments.CommentedMap, ry.comments.CommentedSeq

    if depth > MAX_DEPTH:
        raise KrmError(f"input is nested deeper than {MAX_DEPTH} levels")
    anchor = getattr(getattr(node, "anchor", None), "value", None)
    if anchor and ":" in anchor:
        # ruamel reads `&a: b` as anchor `a:`, libyaml as anchor `a` on `{null: b}`;
        # re-printing such a node would change it or break the YAML.
        raise KrmError(f"the anchor &{anchor} holds ':', which YAML parsers read differently; rename it")
    if isinstance(node, CommentedSeq):
        visit(node)
        for value in node:
            _each_sequence(value, visit, depth + 1)
    elif isinstance(node, CommentedMap):
        for value in node.values():
            _each_sequence(value, visit, depth + 1)


def _comments_to_first_key(seq: Any) -> None:
    ry = load.ruamel()
    CommentedMap = ry.comments.CommentedMap

    for idx, entry in list(seq.ca.items.items()):
        if not (isinstance(entry, list) and len(entry) > 1 and entry[1]):
            continue
        if not isinstance(idx, int) or idx >= len(seq):
            continue
        item = seq[idx]
        if isinstance(item, CommentedMap) and len(item):
            slot = item.ca.items.setdefault(next(iter(item)), [None, None, None, None])
            slot[1] = list(entry[1]) + list(slot[1] or [])
            entry[1] = None


def _comments_to_sequence_slot(seq: Any) -> None:
    ry = load.ruamel()
    CommentedMap = ry.comments.CommentedMap

    for idx, item in enumerate(seq):
        if isinstance(item, CommentedMap) and len(item):
            slot = item.ca.items.get(next(iter(item)))
            if slot and len(slot) > 1 and slot[1]:
                entry = seq.ca.items.setdefault(idx, [None, None, None, None])
                entry[1] = list(slot[1]) + list(entry[1] or [])
                slot[1] = None


def dump_rt(node: Any, layout: bool | Layout = False) -> str:
    """Print a round-trip tree the way kyaml would (``- # comment`` form).

    ``layout``: kyaml's wide sequence style when True, or a :class:`Layout`
    read from the item's own text by :func:`layout_of` (its indentation only:
    the final newlines are :func:`dump_in`'s).
    """
    if not isinstance(layout, Layout):
        layout = WIDE if layout else COMPACT
    rt = new_rt_yaml()
    rt.indent(mapping=layout.mapping, sequence=layout.sequence, offset=layout.offset)
    buf = io.StringIO()
    rt.dump(node, buf)
    return _join_dash_comments(buf.getvalue(), layout.dash_width)


# --- printing in a text's own layout ---------------------------------------------------


def dump_in(node: Any, layout: Layout) -> str:
    """Print ``node`` with ``layout``'s indentation and final newlines."""
    return dump_rt(node, layout).rstrip("\n") + layout.ending


def _join_dash_comments(text: str, width: int) -> str:
    """``-`` / ``  # c`` (how ruamel prints a ``- # c`` element comment) back on one line."""
    return re.sub(r"^( *)-\n\1" + " " * width + r"(#[^\n]*)$", r"\1- \2", text, flags=re.M)


def dump_like(node: Any, reference_text: str | None, reference_tree: Any = None,
              change: tuple[str, str] | None = None) -> str:
    """Print ``node`` in ``reference_text``'s layout, changing only the lines the edit changed.

    ``reference_tree``: an unedited tree of ``reference_text`` the caller
    already has (it spares reading the text again).  ``change``: two texts
    (before, after) whose changed lines, carried onto the reference text,
    may make ``node``'s data too (:func:`carried_edit`; a 3-way merge
    passes origin's and upstream's texts).  When ruamel prints the
    reference text differently from how it is written (long plain scalars
    wrapped over lines, spacing ruamel normalises), only the lines that the
    edit changes in ruamel's print are carried onto the reference text.
    Of these answers and the whole print, the one that changes the fewest
    lines of the reference text is returned (``change``'s on a tie: those
    are the lines as upstream wrote them).  Nothing changed: the reference
    text itself.
    """
    if reference_text is None:
        return dump_rt(node)
    layout = layout_of(reference_text)
    text = dump_in(node, layout)
    if text == reference_text:
        return text
    before = dump_in(load_rt(reference_text) if reference_tree is None else reference_tree, layout)
    if before == text:
        return reference_text  # the merge changed nothing ruamel can see: keep local's bytes
    expected = load_data(text, "the printed merge")
    answers = [carried_edit(reference_text, *change, expected) if change is not None else None]
    # ruamel printing the reference as written: its print of the edit is already minimal
    answers.append(text if before == reference_text else carried_edit(reference_text, before, text, expected) or text)
    return min((a for a in answers if a is not None), key=lambda a: changed_lines(reference_text, a))


def changed_lines(a: str, b: str) -> int:
    """How many lines a line diff of two texts shows (removed plus added)."""
    mine, theirs = _lines(a), _lines(b)
    return len(mine) + len(theirs) - 2 * len(matching_lines(mine, theirs))


def carried_edit(text: str, before: str, after: str, expected: Any) -> str | None:
    """:func:`carry_edits`, when the result reads back as ``expected`` (the one read-back check); else None."""
    carried = carry_edits(text, before, after)
    return carried if carried is not None and read_back_error(carried, expected) is None else None


def carry_edits(text: str, before: str, after: str) -> str | None:
    """``text`` with the line changes that turn ``before`` into ``after``, or None.

    ``before`` is a print of ``text``'s data that may be laid out differently
    in places (a long string on one line instead of several); ``after`` is
    the same print of the edited data.  Each changed block of lines of
    ``before`` is found in ``text`` by a line alignment and replaced there, so
    every line of ``text`` the edit did not touch keeps its bytes.  None when a
    change touches a line ``text`` writes differently (the caller then prints
    the whole edit), or lands between two lines that are not neighbours in
    ``text``.  The caller proves the result by reading it back.  The text
    keeps its own final newline (or its lack of one).
    """
    mine, printed, edited = (_lines(t) for t in (text, before, after))
    where = dict(matching_lines([_as_printed(line) for line in printed], [_as_printed(line) for line in mine]))
    out: list[str] = []
    done = 0  # lines of ``text`` already copied to ``out``
    for i1, i2, j1, j2 in _changed_blocks(matching_lines(printed, edited), len(printed), len(edited)):
        if i1 < i2:  # lines replaced or deleted: each must be in ``text``, one after the other
            start = where.get(i1)
            if start is None or any(where.get(i) != start + i - i1 for i in range(i1, i2)):
                return None
            stop = start + i2 - i1
        else:  # lines inserted between two neighbours of ``text``
            start = stop = _between(where, i1, len(printed), len(mine))
            if start < 0:
                return None
        if start < done:
            return None
        out.extend(mine[done:start])
        out.extend(edited[j1:j2])
        done = stop
    out.extend(mine[done:])
    carried = "".join(out)
    return carried if text.endswith("\n") or not carried.endswith("\n") else carried[:-1]


def _as_printed(line: str) -> str:
    """``line`` as ruamel would print it, for the alignment only: no blanks at its end, an explicit null as nothing."""
    line = line.rstrip(" \t\n")
    m = _value_after_indicator().search(line)
    if m is None or not scalars.NULL_RX.fullmatch(m.group(2)):
        return line
    return line[: m.start(2)].rstrip(" ") + line[m.end(2):]


@functools.cache
def _value_after_indicator() -> re.Pattern[str]:
    """A one-token plain value after a key's colon or a dash, up to an end-of-line comment."""
    return re.compile(r"([:-]) +([^\s'\"#][^\s]*)(?=[ \t]*(?:#.*)?$)")


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its newline (the last one too, so a missing final newline is no change)."""
    return (text if text.endswith("\n") or not text else text + "\n").splitlines(True)


def _between(where: dict[int, int], at: int, printed: int, mine: int) -> int:
    """Where lines inserted before line ``at`` of the print go in the text; -1 when that is not one place.

    Next to a line both share: right after the line above, or right before
    the line below (when the other neighbour is written differently in the
    text, the insertion goes on the shared line's side, outside that block).
    """
    above = where.get(at - 1) if at > 0 else -1
    below = where.get(at) if at < printed else mine
    if above is not None and below is not None:
        return below if below == above + 1 else -1
    if above is not None:
        return above + 1
    return below if below is not None else -1


def _changed_blocks(pairs: list[tuple[int, int]], n: int, m: int) -> Iterator[tuple[int, int, int, int]]:
    """The (i1, i2, j1, j2) blocks between matched line pairs where the two sequences differ."""
    i = j = 0
    for a, b in [*pairs, (n, m)]:
        if a > i or b > j:
            yield i, a, j, b
        i, j = a + 1, b + 1


ALIGNMENT_WORK = 16
"""Lines :func:`matching_lines` may scan for anchors, per line of its input."""


def matching_lines(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of equal lines ``a[i] == b[j]``, increasing in both: a patience alignment.

    Equal leading and trailing lines pair first; between them, the lines that
    occur once in each side anchor the alignment (their longest increasing
    run), and the gaps between anchors are aligned the same way.  Two versions
    of one document share most lines, so this finds nearly all of them in
    about linear time (a line-by-line dynamic programme would be quadratic on
    a large CRD), and never pairs a repeated line (``type: string``) by guess.
    The lines scanned for anchors are bounded by a multiple of the input's
    (texts from upstream are untrusted: a version that reverses the lines of
    the other would cost quadratic time); past it, gaps stay unpaired.
    """
    pairs: list[tuple[int, int]] = []
    ranges = [(0, len(a), 0, len(b))]
    budget = ALIGNMENT_WORK * (len(a) + len(b)) + 1000
    while ranges:
        alo, ahi, blo, bhi = ranges.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        if alo == ahi or blo == bhi or budget < 0:
            continue
        budget -= (ahi - alo) + (bhi - blo)
        pa, pb = alo, blo
        for i, j in _unique_anchors(a, alo, ahi, b, blo, bhi):
            ranges.append((pa, i, pb, j))
            pairs.append((i, j))
            pa, pb = i + 1, j + 1
        if pa > alo:  # anchors found: align what follows the last one too
            ranges.append((pa, ahi, pb, bhi))
    pairs.sort()
    return pairs


def _unique_anchors(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """The longest run, increasing in both, of lines that occur exactly once in ``a[alo:ahi]`` and in ``b[blo:bhi]``."""
    count_a: dict[str, int] = {}
    for i in range(alo, ahi):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    where_b: dict[str, int] = {}
    count_b: dict[str, int] = {}
    for j in range(blo, bhi):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    candidates = [(i, where_b[a[i]]) for i in range(alo, ahi) if count_a[a[i]] == 1 and count_b.get(a[i]) == 1]
    # Patience sorting: the longest increasing subsequence of the b-positions.
    tails: list[int] = []  # tails[k]: the smallest b-position ending an increasing run of length k + 1
    ends: list[int] = []  # ends[k]: the candidate index of that tail
    back: list[int] = []  # for each candidate, the candidate before it in its run (-1: none)
    for k, (_, j) in enumerate(candidates):
        at = bisect.bisect_left(tails, j)
        back.append(ends[at - 1] if at else -1)
        if at == len(tails):
            tails.append(j)
            ends.append(k)
        else:
            tails[at], ends[at] = j, k
    run: list[tuple[int, int]] = []
    k = ends[-1] if ends else -1
    while k >= 0:
        run.append(candidates[k])
        k = back[k]
    run.reverse()
    return run
