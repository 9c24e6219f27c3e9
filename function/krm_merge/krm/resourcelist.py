"""Reading and writing a ResourceList without re-printing what did not change.

kpt and kustomize hand the function a ResourceList in kyaml's canonical
shape: top-level keys at column 0, ``items:`` followed by column-0 ``- ``
blocks indented by two.  The fast reader cuts that text into one block per
item and keeps each block's exact bytes; nothing is parsed until a mode asks.
Any input not in that shape (JSON, other indentation, column-0 comments
inside ``items``) goes through the general reader, which parses the whole
list with ruamel.yaml and prints each item on its own.
"""

from __future__ import annotations

import functools
import re

from krm_merge.krm import yamlio
from krm_merge.krm.kubeobject import Item, scan_header
from krm_merge.krm.results import KrmError, Results
from krm_merge.yaml.scalars import ONE_LINE_QUOTED, closing_quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")


class ResourceList:
    """A function's input and output: items, functionConfig and results.

    ``ResourceList(items=None, function_config=None, results=None, api_version=..., kind=...)``:
    ``items`` and ``results`` default to new empty lists.  A plain class, with the equality
    and repr a dataclass would give it: creating a dataclass costs every command start-up
    (issue 24).
    """

    _FIELDS = ("items", "function_config", "results", "api_version", "kind")

    def __init__(self, items: list[Item] | None = None, function_config: Item | None = None,
                 results: Results | None = None, api_version: str = "config.kubernetes.io/v1",
                 kind: str = "ResourceList") -> None:
        self.items: list[Item] = [] if items is None else items
        self.function_config = function_config
        self.results: Results = Results() if results is None else results
        self.api_version = api_version
        self.kind = kind

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__qualname__}({fields})"

    def add(self, obj: Item) -> None:
        """Append a new item."""
        self.items.append(obj)

    def remove(self, obj: Item) -> None:
        """Drop an item from the output."""
        self.items = [item for item in self.items if item is not obj]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)


# --- reading ----------------------------------------------------------------------

# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs them does not pay for compiling them at start-up (issue 24).
@functools.cache
def _top_key() -> re.Pattern[str]:
    return re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):[ \t]*(.*?)[ \t]*(?:#.*)?$")


def read_resource_list(text: str) -> ResourceList:
    """Parse a ResourceList (or a ``v1`` ``List``) from its text."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise KrmError("no input: expected a ResourceList on standard input")
    fast = _read_fast(text)
    rl = fast if fast is not None else _read_general(text)
    _check_items(rl)
    return rl


# The only lines the reader looks at one by one: column-0 lines outside item
# blocks (top-level keys, comments, markers).  Splitting the whole input into
# lines would hold a string per line of every item at once (3× the input).
@functools.cache
def _column0() -> re.Pattern[str]:
    return re.compile(r"^[^ \n-].*", re.M)


@functools.cache
def _item_start() -> re.Pattern[str]:
    return re.compile(r"^-(?: |$)", re.M)


# libyaml does not ask the lines of a quoted scalar or flow collection to be
# indented, so a line of one may start at column 0, where the fast reader cuts
# items and sections.  Each block it cuts must therefore close everything it
# opens.  Lines of the common closed shapes (a quoted scalar or flat flow
# collection as the whole value; no quote or bracket where a node starts) are
# told by a regular expression; the others are scanned by :func:`_scan_line`.
_QUOTED = ONE_LINE_QUOTED
_FLOW_ITEM = rf"(?:{_QUOTED}|[\w./=@+-]+)"
_FLOW_ENTRY = rf"(?:(?:[\w./-]+:[ ]+)?{_FLOW_ITEM})"
_FLOW = (rf"(?:\[[ ]*(?:{_FLOW_ITEM}(?:[ ]*,[ ]*{_FLOW_ITEM})*)?[ ]*\]"
         rf"|\{{[ ]*(?:{_FLOW_ENTRY}(?:[ ]*,[ ]*{_FLOW_ENTRY})*)?[ ]*\}})")


@functools.cache
def _closed_value() -> re.Pattern[str]:
    return re.compile(rf"[ ]*(?:- )*(?:[\w./-]+:[ ]+)?(?:{_QUOTED}|{_FLOW})(?:[ ]+#.*)?[ ]*$")


# The characters after which a quote or bracket opens a node (or a line's start).
_OPENS_AFTER = " \t[{,:"


@functools.cache
def _node_opener() -> re.Pattern[str]:
    return re.compile(rf"(?:^|[{re.escape(_OPENS_AFTER)}])[\"'\[{{]")


@functools.cache
def _sequence_entries() -> re.Pattern[str]:
    return re.compile(r"[ ]*(?:-[ ]+)*-?")


def _quote_opens(line: str, at: int, depth: int) -> bool | None:
    """Whether the quote at ``line[at]`` opens a quoted scalar: True where a node surely starts (the line's
    indentation, ``- ``, ``key: ``, ``? ``, or in a flow after ``[``, ``{``, ``,``), False where it cannot,
    None where only a full reader can tell (in a plain scalar's text, or ``key:"v"``)."""
    if at and line[at - 1] not in _OPENS_AFTER:
        return False
    before = line[:at].rstrip(" \t")
    if _sequence_entries().fullmatch(before) or (before.endswith(("?", ":")) and len(before) < at):
        return True
    if depth and before[-1:] in "[{,:":
        return True
    return None


def _scan_line(line: str, quote: str, depth: int, doubt_opens: bool) -> tuple[str, int]:
    """The (open quote, flow depth) after ``line``, starting from those before it; a quote that may or may
    not open a scalar (``say "hi``, ``a:"b"``) is taken as ``doubt_opens`` says.

    A bracket after a space counts as opening a flow even in a plain scalar (``say [hi``).
    """
    prev, i, n = " ", 0, len(line)
    while i < n:
        if quote:
            k = closing_quote(line, i, quote)
            if k < 0:
                return quote, depth
            quote, prev, i = "", quote, k + 1
            continue
        c = line[i]
        if c == "#" and prev in " \t":
            break
        if c in "\"'":
            opens = _quote_opens(line, i, depth)
            if opens or (opens is None and doubt_opens):
                quote = c
        elif c in "[{" and prev in _OPENS_AFTER:
            depth += 1
        elif c in "]}" and depth:
            depth -= 1
        prev = c
        i += 1
    return quote, depth


def _left_open(lines: list[str]) -> bool:
    """Whether ``lines`` (one cut block) end inside a quoted scalar or flow collection they opened.

    Read twice, a doubtful quote taken as opening and then as not: either reading left open sends the text to
    the general reader.  One reading alone is not conservative: a quote in a plain scalar taken as opening
    pairs with the next real one and hides it (found by the fuzzer)."""
    return _ends_open(lines, True) or _ends_open(lines, False)


def _ends_open(lines: list[str], doubt_opens: bool) -> bool:
    quote, depth = "", 0
    closed, opener = _closed_value().match, _node_opener().search
    for line in lines:
        if not (quote or depth):
            if '"' not in line and "'" not in line and "[" not in line and "{" not in line:
                continue
            if closed(line) is not None or opener(line) is None:
                continue
        quote, depth = _scan_line(line, quote, depth, doubt_opens)
    return bool(quote or depth)


def _read_fast(text: str) -> ResourceList | None:
    """Split kyaml-shaped text into item blocks; None if the shape is different.

    A scalar or collection running over lines (``"a`` then ``b: c"`` at column 0)
    is a different shape: its column-0 lines are not keys nor items.
    """
    if "\r" in text or "\t" in text[:1]:
        return None
    sections: dict[str, tuple[int, int]] = {}  # key -> character range of its block
    scalars: dict[str, str] = {}
    current: str | None = None
    start = 0
    for m in _column0().finditer(text):
        line, at = m.group(), m.start()
        if line[0] == "#":
            if current == "items":
                return None  # a column-0 comment between items: cannot tell whose
            continue
        if line in ("---", "..."):
            if at == 0 or (line == "..." and not text[m.end():].strip("\n")):
                continue
            return None
        km = _top_key().match(line)
        if km is None:
            return None
        if current is not None:
            sections[current] = (start, at)
        key, value = km.group(1), km.group(2)
        if key in sections or key in scalars or _left_open([value]):
            return None
        if value:
            if key in ("items", "functionConfig", "results"):
                if key == "items" and value == "[]":
                    scalars[key] = value
                    current = None
                    continue
                if key == "functionConfig" and value in ("{}", "null", "~"):
                    scalars[key] = value
                    current = None
                    continue
                return None
            scalars[key] = value
            current = None
            continue
        current, start = key, m.end() + 1
    if current is not None:
        sections[current] = (start, len(text))
    if any(_left_open(text[a:b].split("\n")) for key, (a, b) in sections.items() if key != "items"):
        return None
    api_version = _unquote(scalars.get("apiVersion", ""))
    kind = _unquote(scalars.get("kind", ""))
    if not _is_list_kind(api_version, kind):
        return None
    rl = ResourceList(api_version=api_version, kind=kind)
    if "items" in sections:
        a, b = sections["items"]
        blocks = _split_items(text, a, b)
        if blocks is None:
            return None
        rl.items = [
            Item(block_text, source_block=block, what=f"item {n + 1}")
            for n, (block, block_text) in enumerate(blocks)
        ]
    if "functionConfig" in sections:
        a, b = sections["functionConfig"]
        body = _dedent_block(text[a:b].split("\n"))
        if body is None:
            return None
        rl.function_config = Item(body, what="functionConfig")
    return rl


def _split_items(text: str, start: int, end: int) -> list[tuple[str | None, str]] | None:
    """Cut ``text[start:end]``, the lines of ``items:``, into (exact block, dedented text) pairs.

    The block is None when indenting the text again gives it back (the
    writer does that): most items then hold one copy of their bytes, not two.
    """
    starts = [m.start() for m in _item_start().finditer(text, start, end)]
    if not starts:
        return [] if not text[start:end].strip() else None
    if text[start: starts[0]].strip():
        return None
    out = []
    bounds = starts + [end]
    for a, b in zip(bounds, bounds[1:]):
        chunk = text[a:b].split("\n")
        while len(chunk) > 1 and chunk[-1] == "":
            chunk.pop()
        if _left_open(chunk):
            return None
        block = "\n".join(chunk) + "\n"
        first = chunk[0][2:] if len(chunk[0]) > 1 else ""
        body = _dedent_block(chunk[1:])
        if body is None:
            return None
        # `- # comment` makes the comment the item's head comment.
        item_text = first + "\n" + body if first else body
        out.append((None if indent_item(item_text) == block else block, item_text))
    return out


def _dedent_block(lines: list[str]) -> str | None:
    """Remove two spaces of indentation; None when a line has less."""
    out: list[str] = []
    for line in lines:
        if not line:
            out.append(line)
        elif line.startswith("  "):
            out.append(line[2:])
        else:
            return None
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _is_list_kind(api_version: str, kind: str) -> bool:
    return (kind == "ResourceList" and api_version in RESOURCE_LIST_VERSIONS) or (
        kind == "List" and api_version == "v1"
    )


def _read_general(text: str) -> ResourceList:
    """Any YAML or JSON: parse the whole list, print each item separately."""
    data = yamlio.load_data(text, "the input")
    if not isinstance(data, dict):
        raise KrmError("the input is not a ResourceList: expected a mapping with `kind: ResourceList`")
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    if not _is_list_kind(api_version, kind):
        raise KrmError(
            f"the input is not a ResourceList: got apiVersion {api_version!r}, kind {kind!r}; "
            "expected apiVersion config.kubernetes.io/v1, kind ResourceList (or v1 List)"
        )
    items = data.get("items")
    if items is not None and not isinstance(items, list):
        raise KrmError("`items` of the ResourceList must be a list", field="items")
    # Refuse non-object items before the (much slower) round-trip parse of the whole input.
    for n, item in enumerate(items or []):
        if not isinstance(item, dict):
            shown = type(item).__name__ if item is not None else "empty"
            raise KrmError(f"item {n + 1} of the ResourceList is not an object (got {shown})", field=f"items[{n}]")
    rt = yamlio.load_rt(text, "the input")
    rt_items = (rt.get("items") if isinstance(rt, dict) else None) or []
    plain_items = items or []
    if len(rt_items) != len(plain_items):
        raise KrmError(_DISAGREE.format(what="the input"))
    rl = ResourceList(api_version=api_version, kind=kind)
    for n, item in enumerate(rt_items):
        rl.items.append(Item(_dump_item(item, plain_items[n], f"item {n + 1}"), what=f"item {n + 1}"))
    fc = rt.get("functionConfig")
    if fc:
        rl.function_config = Item(_dump_item(fc, data.get("functionConfig"), "functionConfig"),
                                        what="functionConfig")
    return rl


_DISAGREE = (
    "{what} cannot be re-printed without changing it: YAML parsers read it differently "
    "(e.g. an anchor name holding ':'); write it in plain block YAML"
)


def _dump_item(node: Any, plain: Any, what: str) -> str:
    """An item's own text; non-mappings are printed plainly so the check can name them.

    The text must read back as the data libyaml read from the input: where
    ruamel and libyaml disagree (``&a: b``), re-printing would change the item.
    """
    if not isinstance(plain, dict):
        return yamlio.dump_data(plain) if plain is not None else "null\n"
    text = yamlio.dump_rt(node)
    try:
        same = repr(yamlio.load_data(text, what)) == repr(plain)  # repr: NaN equals NaN
    except KrmError:
        same = False
    if not same:
        raise KrmError(_DISAGREE.format(what=what))
    return text


def _check_items(rl: ResourceList) -> None:
    """Every item must be a mapping; the header scan proves most without parsing."""
    for n, item in enumerate(rl.items):
        header = scan_header(item.text) or _header_from_metadata(item.text)
        if header is not None:
            item.cache_header(header)
            continue
        data = item.data
        if not isinstance(data, dict):
            shown = type(data).__name__ if data is not None else "empty"
            raise KrmError(f"item {n + 1} of the ResourceList is not an object (got {shown})", field=f"items[{n}]")
    if rl.function_config is not None:
        fc = rl.function_config.data
        if fc is not None and not isinstance(fc, dict):
            raise KrmError("functionConfig must be an object", field="functionConfig")


def _header_from_metadata(text: str) -> Any:
    """The item's header read from its apiVersion, kind and metadata lines only.

    The line scan gives up on metadata with other nested fields (finalizers,
    ownerReferences, ...); parsing just these top-level entries is still much
    cheaper than parsing the whole item (its spec is skipped).  Top-level
    block entries are independent, so they read exactly as in the full item.
    None when the text does not have that shape.
    """
    keep: list[str] = []
    inside = False
    for line in text.split("\n"):
        if line and line[0] != " " and line[0] != "#":
            key = line.partition(":")[0]
            inside = key == "metadata"
            if not inside and key not in ("apiVersion", "kind"):
                continue
        elif not inside:
            continue
        keep.append(line)
    if not inside and not keep:
        return None
    try:
        header = Item("\n".join(keep) + "\n").header
    except KrmError:
        return None
    return header if header.kind else None


# --- writing ----------------------------------------------------------------------

@functools.cache
def _indent_nonempty() -> re.Pattern[str]:
    return re.compile(r"\n(?=[^\n])")


def write_resource_list(rl: ResourceList, *, include_function_config: bool = True) -> str:
    """Print the ResourceList; unchanged items are their original bytes."""
    return "".join(resource_list_parts(rl, include_function_config=include_function_config))


def resource_list_parts(rl: ResourceList, *, include_function_config: bool = True) -> Iterator[str]:
    """The printed ResourceList piece by piece, for writing without one big copy of it."""
    yield f"apiVersion: {rl.api_version}\nkind: {rl.kind}\n"
    if rl.items:
        yield "items:\n"
        for item in rl.items:
            block = item.source_block
            # An item read from a directory prints with kpt's reader annotations, as kpt fn source prints it.
            yield block if block is not None else indent_item(item.text_with_reader_annotations)
    else:
        yield "items: []\n"
    if include_function_config and rl.function_config is not None:
        yield "functionConfig:\n"
        yield _indent(rl.function_config.text)
    if rl.results:
        yield yamlio.dump_results(rl.results)


def indent_item(text: str) -> str:
    """An item's text as a ``- `` block of a sequence at column 0."""
    return "- " + _indent_nonempty().sub("\n  ", _nestable(text))


def _indent(text: str) -> str:
    return "  " + _indent_nonempty().sub("\n  ", _nestable(text))


def _nestable(text: str) -> str:
    """The document's text without a closing ``...`` marker (legal alone, not nested).

    Printers close a document whose last scalar keeps trailing newlines
    (``|+``) with ``...``; inside the list the next item or key ends it anyway.
    """
    body = text if text.endswith("\n") else text + "\n"
    if body.endswith("\n...\n"):
        body = body[:-4]
    return body
