"""The one bounded YAML loader: every YAML read of krm-merge goes through here.

Bounds, checked before a library builds anything large:

* size: a text longer than ``KRM_MERGE_MAX_INPUT_MB`` megabytes (default
  512) is refused;
* aliases: anchors are legal YAML, but a handful of aliases can expand to
  gigabytes ("billion laughs", or a thousand aliases of one 100 KB string);
  the expansion is bounded instead of forbidding them, in nodes
  (:data:`MAX_ALIAS_EXPANSION`) and in bytes: the characters of the scalars
  reached through aliases, counted once per use, at most
  ``KRM_MERGE_MAX_ALIAS_MB`` megabytes (default 16) per text;
* depth: nesting deeper than :data:`MAX_DEPTH` is refused, with one message
  whichever libyaml is underneath: libyaml 0.2.6 (in PyYAML 6.0.4's wheels)
  refuses 1,000 flow or block levels itself, and its scanner runs ahead of
  the events counted here, so it often says so first; its refusal is
  reported as this bound's, at the line and column where libyaml stopped.

Duplicate mapping keys are read last-wins, as kubectl and kpt read them
(real manifests have them), and each repeat is reported: the readers note it
in the collection opened by :func:`collecting_duplicate_keys` (the runner
opens one per run and turns each into a warning result, and names them in
any error result).

Plain data follows Kubernetes' YAML 1.1 reading (see :mod:`krm_merge.yaml.scalars`).
PyYAML and ruamel.yaml are imported on first use only: a run whose items the
fast reader handles never pays for them.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from types import ModuleType

from krm_merge import numbers
from krm_merge.errors import KrmMergeError
from krm_merge.records import Record
from krm_merge.yaml import scalars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, TypeAlias
    import yaml

MAX_ALIAS_EXPANSION = 1_000_000
MAX_DEPTH = 1_000
DEFAULT_MAX_INPUT_MB = 512
MAX_INPUT_ENV = "KRM_MERGE_MAX_INPUT_MB"
DEFAULT_MAX_ALIAS_MB = 16
MAX_ALIAS_ENV = "KRM_MERGE_MAX_ALIAS_MB"

FastReader: TypeAlias = "Callable[[str], list[Any] | None]"


class YamlError(KrmMergeError):
    """A text that is not valid YAML, or that breaks one of the bounds."""


class DuplicateKey(Record):
    """A mapping key written twice; the later value is the one read.

    A NamedTuple, not a dataclass: importing ``dataclasses`` (which imports
    ``inspect``, ``ast``, ``dis``...) costs the commands several milliseconds.
    """

    key: str
    what: str
    line: int

    def message(self) -> str:
        return (
            f"{self.what}: key {self.key!r} appears twice in one mapping (line {self.line}); "
            "the last one is used, as kubectl reads it"
        )


# The keys collected, in order, and the same as a set: an upstream file can repeat a key a
# hundred thousand times, and a membership test on the list alone made noting them quadratic.
_DUPLICATES: contextvars.ContextVar[tuple[list[DuplicateKey], set[DuplicateKey]] | None] = contextvars.ContextVar(
    "krm_merge_duplicate_keys", default=None
)


@contextlib.contextmanager
def collecting_duplicate_keys() -> Iterator[list[DuplicateKey]]:
    """Collect the duplicate keys every read inside the ``with`` block finds (each once)."""
    found: list[DuplicateKey] = []
    token = _DUPLICATES.set((found, set()))
    try:
        yield found
    finally:
        _DUPLICATES.reset(token)


def _note_duplicates(found: list[tuple[str, int]], what: str) -> None:
    collecting = _DUPLICATES.get()
    if collecting is None:
        return
    collected, seen = collecting
    for key, line in found:
        dup = DuplicateKey(str(key), what, line)
        if dup not in seen:
            seen.add(dup)
            collected.append(dup)


# --- bounds -----------------------------------------------------------------------


def libyaml() -> ModuleType:
    """:mod:`krm_merge.yaml.libyaml` (PyYAML with Kubernetes' rules), imported on first use.

    The one door to PyYAML: a run whose items the fast reader serves never pays its import.
    """
    from krm_merge.yaml import libyaml as module  # start-up: see the docstring

    return module


def ruamel() -> ModuleType:
    """``ruamel.yaml`` (with its comments, tokens, error, resolver and constructor modules), imported on first use.

    The one door to ruamel.yaml: only an item that needs a round-trip tree pays its import.
    """
    import ruamel.yaml  # start-up: see the docstring

    return ruamel.yaml


def max_input_bytes() -> int:
    """The size limit of one input, from ``KRM_MERGE_MAX_INPUT_MB`` (default 512 MB)."""
    return _megabytes(MAX_INPUT_ENV, DEFAULT_MAX_INPUT_MB)


def max_alias_bytes() -> int:
    """How many characters of scalars one text may reach through aliases, from ``KRM_MERGE_MAX_ALIAS_MB`` (default 16 MB)."""
    return _megabytes(MAX_ALIAS_ENV, DEFAULT_MAX_ALIAS_MB)


def _megabytes(variable: str, default: float) -> int:
    # A value that is not a number is refused like an input above the limit (never a silent default:
    # KRM_MERGE_MAX_INPUT_MB=1e400 or '２' would otherwise leave the default in force, or raise OverflowError).
    try:
        return numbers.megabytes(variable, default)
    except numbers.NumberError as err:
        raise YamlError(err.message) from None


def check_size(size: int, what: str) -> None:
    """Refuse an input of ``size`` bytes (or characters) above the limit."""
    limit = max_input_bytes()
    if size > limit:
        raise YamlError(
            f"{what} is too large ({size / 1048576:.1f} MB, the limit is {limit / 1048576:g} MB; "
            f"set {MAX_INPUT_ENV} to raise it)"
        )


def check_bounds(text: str, what: str) -> None:
    """Refuse ``text`` if it is too large, nested deeper than :data:`MAX_DEPTH`, or its aliases
    expand beyond :data:`MAX_ALIAS_EXPANSION` nodes.

    Cheap tests decide whether the text could break a bound at all: more flow
    brackets than :data:`MAX_DEPTH` or a line indented that deep (then libyaml's
    event stream is read until the depth is known, stopping at the first level
    too deep: parsing a deep flow collection to its end takes libyaml
    quadratic time), an anchor and an alias (then the node tree is composed
    and its expanded size counted).
    """
    check_size(len(text), what)
    # A line indented MAX_DEPTH levels holds at least MAX_DEPTH characters: a shorter text (a document a marker
    # is in, most often) is not searched, a search that tries the pattern at every character (issue 45).
    if text.count("[") + text.count("{") > MAX_DEPTH or (len(text) >= MAX_DEPTH
                                                         and _deep_line().search(text) is not None):
        _check_depth(text, what)
    if "&" in text and "*" in text:
        through_aliases, limit = 0, max_alias_bytes()
        for node in _compose_unbounded(text, what):
            if node is not None:
                through_aliases += _check_tree(node, what)
                if through_aliases > limit:
                    raise YamlError(
                        f"{what} uses YAML aliases that expand to more than {limit / 1048576:g} MB of values "
                        f"({through_aliases / 1048576:.1f} MB reached through aliases; set {MAX_ALIAS_ENV} to raise "
                        "the limit); refusing to load it")


# Compiled on first use (functools.cache), not at import: an update or a function run that
# never needs it does not pay for compiling it at start-up (issue 24).
@functools.cache
def _deep_line() -> re.Pattern[str]:
    return re.compile(r"^(?:[ \t]|- ){%d}" % MAX_DEPTH, re.M)


def _check_depth(text: str, what: str) -> None:
    lib = libyaml()
    Loader, yaml = lib.Loader, lib.yaml

    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=Loader):
            if isinstance(event, opening):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlError(_too_deep_message(what, event.start_mark))
            elif isinstance(event, closing):
                depth -= 1
    except yaml.YAMLError as err:
        raise YamlError(_yaml_error_message(err, what)) from None


def check_syntax(text: str, what: str) -> None:
    """Refuse ``text`` unless it is a valid YAML stream within the bounds; build nothing.

    For readers that take only each document's header: libyaml parses the whole
    stream in C (``raw_parse``: no Python object per event, about a sixth of the
    cost of reading the events), so a broken file is never passed on silently.
    """
    check_bounds(text, what)
    lib = libyaml()
    Loader, yaml = lib.Loader, lib.yaml

    loader = Loader(text)
    try:
        loader.raw_parse()
    except yaml.YAMLError as err:
        raise YamlError(_yaml_error_message(err, what)) from None
    finally:
        loader.dispose()


def _compose_unbounded(text: str, what: str) -> list[Any]:
    lib = libyaml()
    Loader, yaml = lib.Loader, lib.yaml

    try:
        return list(yaml.compose_all(text, Loader=Loader))
    except yaml.YAMLError as err:
        raise YamlError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise YamlError(f"{what} is nested too deeply to process") from None


def _check_tree(root: Any, what: str) -> int:
    """Refuse a node tree deeper than MAX_DEPTH or larger than MAX_ALIAS_EXPANSION nodes once expanded;
    return how many characters of scalars it reaches through aliases (each use of a shared subtree
    but its first, which is the text itself).

    Iterative (a deep tree must not exhaust Python's stack); a subtree shared
    through aliases is counted once per use but walked once.
    """
    lib = libyaml()
    yaml = lib.yaml

    expanded: dict[int, tuple[int, int]] = {}  # id -> (nodes, characters of scalars) once expanded
    once = 0  # characters of the scalars, each counted once: what the text itself holds
    stack: list[tuple[Any, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, children_done = stack.pop()
        if depth > MAX_DEPTH:
            raise YamlError(_too_deep_message(what, node.start_mark))
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            if id(node) not in expanded:
                expanded[id(node)] = (1, len(node.value))
                once += len(node.value)
            continue
        if not children_done:
            if id(node) in expanded:
                continue
            stack.append((node, depth, True))
            stack.extend((child, depth + 1, False) for child in children if id(child) not in expanded)
            continue
        total, size = 1, 0
        for child in children:
            nodes, chars = expanded[id(child)]
            total, size = total + nodes, size + chars
        expanded[id(node)] = (total, size)
        if total > MAX_ALIAS_EXPANSION:
            raise YamlError(
                f"{what} uses YAML aliases that expand to more than {MAX_ALIAS_EXPANSION} nodes; refusing to load it"
            )
    return expanded[id(root)][1] - once


# libyaml 0.2.6's own depth limit (1,000 flow or block levels; 0.2.5 has none).
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _too_deep_message(what: str, mark: Any) -> str:
    return f"{what} is nested deeper than {MAX_DEPTH} levels{_at(mark)}"


def _at(mark: Any) -> str:
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _yaml_error_message(err: Any, what: str) -> str:
    """``what is not valid YAML at line L, column C: problem``, with kpt's line.

    A scanner error (an unfinished key, a stray conflict marker) is placed
    where the construct it could not finish starts, as kpt (go-yaml) places
    it: ``<<<<<<< HEAD`` on line 6 is "line 6", not the line where libyaml
    gave up.  Other errors are placed where the parser stopped.  libyaml's
    own depth limit reads as the depth bound's message, so that a depth bomb
    gets the same answer whichever libyaml refused it first.
    """
    problem_mark = getattr(err, "problem_mark", None)
    context_mark = getattr(err, "context_mark", None)
    if getattr(err, "problem", None) == _LIBYAML_TOO_DEEP:
        return _too_deep_message(what, problem_mark or context_mark)
    scanner = type(err).__name__ == "ScannerError"
    mark = (context_mark or problem_mark) if scanner else (problem_mark or context_mark)
    problem = getattr(err, "problem", None) or getattr(err, "context", None) or type(err).__name__
    context = getattr(err, "context", None)
    if scanner and context_mark is not None and context and context != problem:
        problem = f"{problem} ({context})"
    return f"{what} is not valid YAML{_at(mark)}: {problem}"


# --- plain data (libyaml) -------------------------------------------------------------


def load_all_data(
    text: str, what: str = "input", fast: FastReader | None = None, *, note_duplicates: bool = True
) -> list[Any]:
    """Every document of a YAML stream as plain data (YAML 1.1, timestamps as strings).

    ``fast``, when given, is tried first (it returns None to decline); it must
    read exactly what libyaml reads, and decline aliases and duplicate keys.
    ``note_duplicates=False`` for a second read of a text whose duplicate keys
    were noted when it was first read (a read-back check), so none is reported twice.
    """
    check_size(len(text), what)
    if fast is not None:
        docs = fast(text)
        if docs is not None:
            return docs
    check_bounds(text, what)
    lib = libyaml()
    Loader, yaml = lib.Loader, lib.yaml

    loader = Loader(text)
    try:
        docs = []
        while loader.check_data():
            docs.append(loader.get_data())
    except yaml.YAMLError as err:
        raise YamlError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise YamlError(f"{what} is nested too deeply to process") from None
    except (TypeError, ValueError) as err:  # e.g. a list used as a mapping key
        raise YamlError(f"{what} is not valid Kubernetes YAML: {err}") from None
    finally:
        loader.dispose()
    if note_duplicates:
        _note_duplicates(loader.duplicates, what)
    return docs


def load_data(text: str, what: str = "input", fast: FastReader | None = None) -> Any:
    """One YAML document as plain data (None for an empty text)."""
    docs = load_all_data(text, what, fast)
    if len(docs) > 1:
        raise YamlError(f"{what} holds {len(docs)} YAML documents, expected one")
    return docs[0] if docs else None


def load_strings(text: str, what: str = "input") -> Any:
    """One document with every scalar kept as its string (no type resolution)."""
    check_bounds(text, what)
    lib = libyaml()
    StringLoader, yaml = lib.StringLoader, lib.yaml

    loader = StringLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as err:
        raise YamlError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise YamlError(f"{what} is nested too deeply to process") from None
    finally:
        loader.dispose()
    _note_duplicates(loader.duplicates, what)
    return data


def compose_all(text: str, what: str = "input") -> list[Any]:
    """The node trees (with marks) of every document, bounded like the other reads.

    Duplicate keys are noted as by the other reads (the trees keep both).
    """
    check_bounds(text, what)
    roots = _compose_unbounded(text, what)
    note_duplicate_keys(roots, what)
    return roots


def compose_marked(text: str) -> list[Any]:
    """The node trees of every document with PyYAML's own resolver (timestamps keep their tag).

    For promote's byte splicer, which indexes nodes by their marks and checks
    a splice by comparing node trees: both reads must resolve tags alike.  The
    caller checks the bounds first (:func:`check_bounds`), notes duplicate
    keys (:func:`note_duplicate_keys`) and turns ``yaml.YAMLError`` into its
    own message (with the line).
    """
    lib = libyaml()
    yaml = lib.yaml

    return list(yaml.compose_all(text, Loader=yaml.CSafeLoader))


def note_duplicate_keys(roots: list[Any], what: str, line_offset: int = 0) -> None:
    """Note the duplicate mapping keys of composed node trees, as every read notes them.

    For readers that compose with libyaml themselves (promote's index): the keys go to the
    collection of :func:`collecting_duplicate_keys`, their lines shifted by ``line_offset``
    (the document's first line in its file).
    """
    lib = libyaml()
    Loader, yaml = lib.Loader, lib.yaml

    noter = Loader("")
    stack = [root for root in roots if root is not None]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            noter.note_duplicates(node)
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    noter.dispose()
    _note_duplicates([(key, line + line_offset) for key, line in noter.duplicates], what)


# --- round-trip trees (ruamel.yaml) ---------------------------------------------------


def new_rt_yaml(wide: bool = False) -> Any:
    """A ruamel.yaml round-trip instance that reads and prints as kyaml does.

    2-space mappings, compact sequences (``- `` at the parent key's column;
    ``wide`` indents them by two, kpt's other style), no line folding,
    original quotes kept, timestamps read as strings, duplicate keys
    last-wins (noted in ``.constructor.duplicates``).
    """
    YAML = ruamel().YAML

    rt = YAML(typ="rt")
    rt.Resolver = _no_timestamp_resolver()
    rt.Constructor = _last_wins_constructor()
    if wide:
        rt.indent(mapping=2, sequence=4, offset=2)
    else:
        rt.indent(mapping=2, sequence=2, offset=0)
    rt.width = 2**31 - 1
    rt.preserve_quotes = True
    return rt


@functools.cache
def _no_timestamp_resolver() -> Any:
    """ruamel's resolver without timestamps: such scalars stay strings, printed as written.

    Kubernetes objects hold no timestamps, and ruamel re-prints the ones it
    constructs (``2001-12-14t21:59:43.10-05:00`` comes back with a ``T`` and
    six decimals), which would change an untouched value.
    """
    VersionedResolver = ruamel().resolver.VersionedResolver

    # ruamel is imported on first use: its class arrives as a value, a base mypy cannot check
    class NoTimestampResolver(VersionedResolver):  # type: ignore[misc,valid-type]
        @property
        def versioned_resolver(self) -> Any:
            # ruamel asks for the table once per scalar: filtered once per table (per YAML version) of this
            # resolver instead (about a tenth of a round-trip read).  Not with a ``None`` entry: ruamel's
            # resolve() extends the list it gets with that entry's, in place.
            table = super().versioned_resolver
            kept = self.__dict__.get("_without_timestamps")
            if kept is None or kept[0] is not table:
                kept = (table, scalars.without_timestamps(table))
                if None not in table:
                    self._without_timestamps = kept
            return kept[1]

    return NoTimestampResolver


@functools.cache
def _last_wins_constructor() -> Any:
    """ruamel's round-trip constructor reading a repeated key last-wins (ruamel keeps the first, or fails)."""
    RoundTripConstructor = ruamel().constructor.RoundTripConstructor

    # ruamel is imported on first use: its class arrives as a value, a base mypy cannot check
    class LastWinsConstructor(RoundTripConstructor):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.duplicates: list[tuple[str, int]] = []

        def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
            if key in mapping:
                self.duplicates.append((str(key), key_node.start_mark.line + 1))
                del mapping[key]
            return True

    return LastWinsConstructor


def load_rt(text: str, what: str = "input") -> Any:
    """One document as a ruamel round-trip tree (comments kept)."""
    RtError = ruamel().error.YAMLError

    check_bounds(text, what)
    rt = new_rt_yaml()
    try:
        node = rt.load(text)
    except RtError as err:
        raise YamlError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise YamlError(f"{what} is nested too deeply to process") from None
    except (TypeError, ValueError) as err:  # e.g. a mapping used as a mapping key
        raise YamlError(f"{what} is not valid Kubernetes YAML: {err}") from None
    _note_duplicates(rt.constructor.duplicates, what)
    return node
