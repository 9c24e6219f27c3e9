"""All YAML parsing and printing of krm-merge lives here.

Two libraries, each where it is best:

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

import io
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from krm_merge.krm.results import KrmError

if TYPE_CHECKING:
    import yaml

# Anchors are legal YAML but a handful of aliases can expand to gigabytes
# ("billion laughs").  Bound the expanded size instead of forbidding them.
MAX_ALIAS_EXPANSION = 1_000_000
MAX_DEPTH = 1_000


def _yaml_error_message(err: yaml.YAMLError, what: str) -> str:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or getattr(err, "context", None) or str(err)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{what} is not valid YAML{where}: {problem}"


def _check_aliases(text: str, what: str) -> None:
    """Refuse documents whose aliases would expand beyond MAX_ALIAS_EXPANSION nodes."""
    if "&" not in text or "*" not in text:
        return
    from krm_merge.krm._pyyaml import Loader, yaml

    try:
        nodes = list(yaml.compose_all(text, Loader=Loader))
    except yaml.YAMLError as err:
        raise KrmError(_yaml_error_message(err, what)) from None
    memo: dict[int, int] = {}

    def size(node: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise KrmError(f"{what} is nested deeper than {MAX_DEPTH} levels")
        key = id(node)
        if key in memo:
            return memo[key]
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                total += size(v, depth + 1)
        memo[key] = total
        if total > MAX_ALIAS_EXPANSION:
            raise KrmError(
                f"{what} uses YAML aliases that expand to more than "
                f"{MAX_ALIAS_EXPANSION} nodes; refusing to load it"
            )
        return total

    for node in nodes:
        if node is not None:
            size(node, 0)


_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.M)


def _load_all_fast(text: str) -> list[Any] | None:
    """The documents of ``text`` by the fast reader, or None if it declines any."""
    from krm_merge.krm import fastyaml

    if not text.strip():
        return None
    if not _DOCUMENT_MARKER.search(text):
        parsed = fastyaml.parse(text)
        return None if parsed is None else [parsed.data]
    pieces = _split_documents(text)
    if pieces is None:
        return None
    out: list[Any] = []
    for piece in pieces:
        if _only_comments(piece):
            out.append(None)  # an empty document between markers
            continue
        parsed = fastyaml.parse(piece)
        if parsed is None:
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


def load_data(text: str, what: str = "input") -> Any:
    """Load one YAML document as plain data; errors become :class:`KrmError`."""
    docs = load_all_data(text, what)
    if len(docs) > 1:
        raise KrmError(f"{what} holds {len(docs)} YAML documents, expected one")
    return docs[0] if docs else None


def load_all_data(text: str, what: str = "input") -> list[Any]:
    """Load every document of a YAML stream as plain data.

    Documents in kyaml's block style are read by the fast reader (same data,
    no PyYAML import); anything else by libyaml.
    """
    fast = _load_all_fast(text)
    if fast is not None:
        return fast
    _check_aliases(text, what)
    from krm_merge.krm._pyyaml import Loader, yaml

    try:
        return list(yaml.load_all(text, Loader=Loader))
    except yaml.YAMLError as err:
        raise KrmError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise KrmError(f"{what} is nested too deeply to process") from None
    except (TypeError, ValueError) as err:  # e.g. a list used as a mapping key
        raise KrmError(f"{what} is not valid Kubernetes YAML: {err}") from None


def load_strings(text: str, what: str = "input") -> Any:
    """Load one document with every scalar kept as its string (no type resolution)."""
    _check_aliases(text, what)
    from krm_merge.krm._pyyaml import yaml

    try:
        return yaml.load(text, Loader=yaml.CBaseLoader)
    except yaml.YAMLError as err:
        raise KrmError(_yaml_error_message(err, what)) from None
    except RecursionError:
        raise KrmError(f"{what} is nested too deeply to process") from None


def dump_data(data: Any) -> str:
    """Print plain data as block YAML (for new objects and results; no comments)."""
    from krm_merge.krm._pyyaml import Dumper, yaml

    return yaml.dump(
        data,
        Dumper=Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
    )


# --- how a new scalar is written (kyaml's rules) -------------------------------

# Strings that a YAML 1.1 reader (Kubernetes, go-yaml v2) would not read back
# as strings.  kyaml double-quotes exactly these.
_YAML11_NON_STRING = re.compile(
    r"""^(?:
        y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
      | ~|null|Null|NULL|
      | [-+]?0b[0-1_]+
      | [-+]?0o?[0-7_]+
      | [-+]?(?:0|[1-9][0-9_]*)
      | [-+]?0x[0-9a-fA-F_]+
      | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
      | [-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
      | [-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)
      | [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
      | \d{4}-\d{1,2}-\d{1,2}(?:[Tt ].*)?
    )$""",
    re.X,
)
# Characters that cannot start a plain scalar, or sequences that end one early.
_PLAIN_BAD_START = set("-?:,[]{}#&*!|>'\"%@`")
_INDICATOR_ONLY = {"-", "?", ":"}


def _needs_double_quotes(value: str) -> bool:
    """True when kyaml would double-quote a new string value."""
    if value == "" or _YAML11_NON_STRING.match(value):
        return True
    return not _plain_is_safe(value)


def _plain_is_safe(value: str) -> bool:
    """Whether ``value`` can be written as a plain block scalar that reads back as itself."""
    if value != value.strip() or "\n" in value or "\t" in value:
        return False
    if value in _INDICATOR_ONLY:
        return False
    first = value[0]
    if first in _PLAIN_BAD_START:
        # `-x`, `?x`, `:x` are fine when not followed by a space.
        if first in "-?:" and len(value) > 1 and value[1] not in " \t":
            pass
        else:
            return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    return all(ch.isprintable() for ch in value)


def format_scalar(value: Any) -> str:
    """The YAML text of a new scalar value, as kyaml would write it.

    Strings a YAML 1.1 reader would take for another type are double-quoted,
    strings plain YAML cannot hold are double-quoted with escapes; multi-line
    strings are not handled here (callers write literal blocks).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return _format_number(value)
    if not isinstance(value, str):
        raise TypeError(f"not a scalar: {type(value).__name__}")
    if _needs_double_quotes(value):
        return double_quote(value)
    return value


def _format_number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    return text


_DQ_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\0": "\\0",
    "\x07": "\\a",
    "\b": "\\b",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\xa0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def double_quote(value: str) -> str:
    """A double-quoted YAML scalar that reads back as exactly ``value``."""
    out = []
    for ch in value:
        esc = _DQ_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif not ch.isprintable() or ch in "\ufeff":
            code = ord(ch)
            if code <= 0xFF:
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def single_quote(value: str) -> str | None:
    """A single-quoted scalar for ``value``, or None if one cannot hold it."""
    if "\n" in value or not all(ch.isprintable() for ch in value):
        return None
    return "'" + value.replace("'", "''") + "'"


# --- ruamel.yaml round trip -----------------------------------------------------


def new_rt_yaml(wide: bool = False) -> Any:
    """A ruamel.yaml round-trip instance printing what kyaml prints.

    2-space mappings, compact sequences (``- `` at the parent key's column;
    ``wide`` indents them by two, kpt's other style), no line folding,
    original quotes kept.
    """
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.Resolver = _no_timestamp_resolver()
    if wide:
        rt.indent(mapping=2, sequence=4, offset=2)
    else:
        rt.indent(mapping=2, sequence=2, offset=0)
    rt.width = 2**31 - 1
    rt.preserve_quotes = True
    return rt


def _no_timestamp_resolver() -> Any:
    """ruamel's resolver without timestamps: such scalars stay strings, printed as written.

    Kubernetes objects hold no timestamps, and ruamel re-prints the ones it
    constructs (``2001-12-14t21:59:43.10-05:00`` comes back with a ``T`` and
    six decimals), which would change an untouched value.
    """
    from ruamel.yaml.resolver import VersionedResolver

    class NoTimestampResolver(VersionedResolver):  # type: ignore[misc]
        @property
        def versioned_resolver(self) -> Any:
            table = super().versioned_resolver
            return {
                first: [(tag, rx) for tag, rx in entries if tag != "tag:yaml.org,2002:timestamp"]
                for first, entries in table.items()
            }

    return NoTimestampResolver


def load_rt(text: str, what: str = "input") -> Any:
    """Load one document as a ruamel round-trip tree (comments kept)."""
    from ruamel.yaml.error import YAMLError as RtError

    _check_aliases(text, what)
    try:
        node = new_rt_yaml().load(text)
    except RtError as err:
        # Some ruamel errors carry only a context (no problem, no problem mark).
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or getattr(err, "context", None) or type(err).__name__
        raise KrmError(f"{what} is not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise KrmError(f"{what} is nested too deeply to process") from None
    except (TypeError, ValueError) as err:  # e.g. a mapping used as a mapping key
        raise KrmError(f"{what} is not valid Kubernetes YAML: {err}") from None
    try:
        _move_seq_item_comments(node)
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


def restore_seq_item_comments(node: Any) -> None:
    """Undo :func:`_move_seq_item_comments`: put the comments back in ruamel's slot."""
    _each_sequence(node, _comments_to_sequence_slot)


def _each_sequence(node: Any, visit: Callable[[Any], None], depth: int = 0) -> None:
    """Call ``visit`` on every sequence of a round-trip tree, refusing what cannot round-trip."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

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
    from ruamel.yaml.comments import CommentedMap

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
    from ruamel.yaml.comments import CommentedMap

    for idx, item in enumerate(seq):
        if isinstance(item, CommentedMap) and len(item):
            slot = item.ca.items.get(next(iter(item)))
            if slot and len(slot) > 1 and slot[1]:
                entry = seq.ca.items.setdefault(idx, [None, None, None, None])
                entry[1] = list(slot[1]) + list(entry[1] or [])
                slot[1] = None


_BARE_DASH_COMMENT = re.compile(r"^( *)-\n\1  (#[^\n]*)$", re.M)


def dump_rt(node: Any, wide: bool = False) -> str:
    """Print a round-trip tree the way kyaml would (``- # comment`` form)."""
    buf = io.StringIO()
    new_rt_yaml(wide).dump(node, buf)
    return _BARE_DASH_COMMENT.sub(r"\1- \2", buf.getvalue())


# A block sequence under a key: the dash indented deeper than the key means
# kpt's "wide" style (its seqindent annotation), level with it "compact".
_FIRST_BLOCK_SEQUENCE = re.compile(r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", re.M)


def uses_wide_sequences(text: str) -> bool:
    """True when the first block sequence of ``text`` is indented under its key."""
    m = _FIRST_BLOCK_SEQUENCE.search(text)
    return m is not None and len(m.group(2)) > len(m.group(1))


# --- files ----------------------------------------------------------------------


def read_text_file(path: Path) -> str:
    """Read a file as UTF-8 text, keeping CRLF line ends as they are."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def write_files_atomic(writes: Sequence[tuple[Path, str | bytes]]) -> None:
    """Write several files all-or-nothing.

    Every file is first staged as a temporary file in its own folder (so a
    full disk or a read-only folder fails before anything is replaced), then
    all are renamed into place; if a rename fails, the files already replaced
    get their previous bytes back.  Modes are kept.  Raises ``OSError``.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in writes:
            staged.append((_stage(Path(path), data), Path(path)))
    except BaseException:
        for tmp, _ in staged:
            _unlink_quietly(tmp)
        raise
    originals: list[tuple[Path, bytes | None]] = []
    try:
        for tmp, path in staged:
            try:
                before: bytes | None = path.read_bytes()
            except FileNotFoundError:
                before = None
            os.replace(tmp, path)
            originals.append((path, before))
    except BaseException:
        for tmp, _ in staged[len(originals):]:
            _unlink_quietly(tmp)
        for path, before in reversed(originals):  # put the previous bytes back
            if before is None:
                _unlink_quietly(str(path))
            else:
                os.replace(_stage(path, before), path)
        raise


def _stage(path: Path, data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    import tempfile  # only when writing files: keeps the function's start-up light

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, mode)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_file_atomic(path: Path, data: str | bytes) -> None:
    """Write ``path`` through a temporary file in the same folder and a rename.

    A reader never sees a half-written file; the file's mode is kept.
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    mode = None
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        pass
    import tempfile  # only when writing files: keeps the function's start-up light

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
