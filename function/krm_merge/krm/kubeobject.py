"""KubeObject, the public face of one KRM resource, and Item, the internal class every object is.

``KubeObject`` is what an SDK function sees (``krm_merge.sdk.KubeObject``): identity,
values by path, typed getters, the object as data or YAML; ``tests/api/
kubeobject_members.txt`` pins its members.  ``Item`` adds the reader's and
writer's bookkeeping (input bytes, reader annotations, placing an item in a file,
the round-trip tree, the update's carried edits); krm-merge's own code uses it.

An item is kept as the exact text it arrived in.  Reading its identity
(apiVersion, kind, name, namespace, annotations) uses a cheap line scan of
the text; its values are parsed with libyaml only when asked for; a
round-trip tree is built only for items that must be rewritten.  An item no
mode touched is written back byte for byte.
"""

from __future__ import annotations

import functools
import re

from krm_merge.krm import splice, yamlio
from krm_merge.krm.itemviews import ItemViews, PendingReader
from krm_merge.krm.results import KrmError, ResourceRef
from krm_merge.krm.values import PathPart, format_path, get_path, parse_path
from krm_merge.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence, TypeAlias

PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
SEQ_INDENT_ANNOTATION = "internal.config.kubernetes.io/seqindent"
LOCAL_CONFIG = "config.kubernetes.io/local-config"

_MISSING: Any = object()


# A NamedTuple, not a dataclass: creating dataclasses cost a small ``update``'s start-up several milliseconds (issue 24).
class Header(Record):
    """What selection needs to know about an item, without parsing its values."""

    api_version: str
    kind: str
    name: str
    namespace: str
    annotations: dict[str, str]
    labels: dict[str, str]


class KubeObject:
    """One Kubernetes resource of a ResourceList, edited with its comments and formatting kept.

    The public face of an item, as kpt's Go SDK's ``fn.KubeObject``:

    * identity: :attr:`api_version`, :attr:`kind`, :attr:`group`, :attr:`version`,
      :attr:`name`, :attr:`namespace`, :attr:`labels`, :attr:`annotations`,
      :attr:`is_local_config`, :meth:`ref`; :attr:`path` and :attr:`index` are the
      file and document it came from (kpt's path/index annotations);
    * values by path: ``"spec.template.spec.containers[0].image"`` or, for keys
      holding dots, a tuple (``("metadata", "labels", "app.kubernetes.io/name")``):
      :meth:`get`, :meth:`has` and the typed getters (:meth:`get_str`,
      :meth:`get_int`, :meth:`get_float`, :meth:`get_bool`, :meth:`get_list`,
      :meth:`get_map`, which raise :class:`KrmError` on a wrong type) read;
      :meth:`set`, :meth:`remove`, :meth:`set_label` and :meth:`set_annotation`
      edit, changing as few bytes of the text as possible (comments stay, also
      on the edited field);
    * the whole object: :attr:`data` as plain data (read-only; edit a
      :meth:`copy_data` and hand it to :meth:`set_data`), :attr:`text` as YAML,
      :attr:`changed` once an edit changed it.

    New objects: ``KubeObject.from_data({...})`` or ``KubeObject.from_text("...")``,
    then ``ResourceList.add``.  Everything else an item carries (its input
    bytes, the reader's annotations, the round-trip tree) is krm-merge's
    internal :class:`Item`, which every object is.
    """

    __slots__ = {
        "_views": "the text and its cached views (krm/itemviews.py)",
        "what": "How messages name the object when it has no identity yet (``item 3``, ``deploy.yaml (document 2 of 3)``).",
    }

    def __new__(cls, *_args: Any, **_kwargs: Any) -> KubeObject:
        # Every object is the internal Item: the reader, the writer and the modes need its bookkeeping,
        # also for objects an SDK function creates.
        return object.__new__(Item if cls is KubeObject else cls)

    def __init__(self, text: str, *, source_block: str | None = None, what: str = "item") -> None:
        # The text and every view of it (header, data, positions, round-trip tree) live in one place.
        self._views = ItemViews(text, source_block, self)
        self.what = what

    # --- construction -----------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, *, path: str | None = None, index: int | None = None) -> Item:
        """A new object from YAML text, in file ``path`` (document ``index``) if given."""
        if not text.endswith("\n"):
            text += "\n"
        obj = Item(text)
        obj._views.changed = True
        if path is not None:
            obj.set_path(path, index)
        return obj

    @classmethod
    def from_data(cls, data: dict[str, Any], *, path: str | None = None, index: int | None = None) -> Item:
        """A new object from plain data (block style, quoted as kpt quotes), in file ``path`` if given."""
        return cls.from_text(yamlio.dump_data(data), path=path, index=index)

    # --- the whole object -------------------------------------------------------

    @property
    def text(self) -> str:
        """The object's YAML text as it is now (a standalone document at column 0)."""
        return self._views.text

    @property
    def changed(self) -> bool:
        """True once any edit changed the text."""
        return self._views.changed

    @property
    def data(self) -> Any:
        """The object as plain data (read-only: use :meth:`copy_data` to edit)."""
        return self._views.item_data

    def copy_data(self) -> Any:
        """A deep copy of :attr:`data` to edit and hand back to :meth:`set_data`.

        The copy remembers which element of the original each of its list
        elements is, so :meth:`set_data` keeps their comments even when the
        elements move.
        """
        return self._views.copy_data()

    def set_data(self, new: Any) -> None:
        """Make the object hold ``new``, changing as few bytes of its text as possible.

        Unchanged values keep their bytes and comments; list elements that
        came from :meth:`copy_data` keep theirs wherever they move.
        """
        self._views.set_data(new, None)

    # --- identity ---------------------------------------------------------------

    @property
    def api_version(self) -> str:
        """``apiVersion`` (``apps/v1``)."""
        # Identity reads the text's own header: only `annotations` needs the reader's composed in.
        return self._text_header().api_version

    @property
    def kind(self) -> str:
        """``kind`` (``Deployment``)."""
        return self._text_header().kind

    @property
    def group(self) -> str:
        """The API group of :attr:`api_version` (``apps``; empty for the core group)."""
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        """The version of :attr:`api_version` (``v1``)."""
        return self.api_version.rpartition("/")[2]

    @property
    def name(self) -> str:
        """``metadata.name`` (empty when absent)."""
        return self._text_header().name

    @property
    def namespace(self) -> str:
        """``metadata.namespace`` (empty when absent)."""
        return self._text_header().namespace

    @property
    def labels(self) -> dict[str, str]:
        """``metadata.labels`` as strings (read-only: edit with :meth:`set_label`)."""
        return self._text_header().labels

    @property
    def annotations(self) -> dict[str, str]:
        """``metadata.annotations`` as strings, kpt's path/index annotations included (read-only)."""
        return self._header().annotations

    @property
    def is_local_config(self) -> bool:
        """Whether the object is annotated ``config.kubernetes.io/local-config: "true"`` (not deployed)."""
        # The text's own: the reader's annotations never include this one, and composing them costs.
        return self._text_header().annotations.get(LOCAL_CONFIG, "").lower() == "true"

    @property
    def path(self) -> str | None:
        """The file the object came from, relative to the package (kpt's path annotation), if known."""
        location = self._views.location()
        if location is not None:
            return location[0]
        ann = self._views.reader or self.annotations
        for key in PATH_ANNOTATIONS:
            if ann.get(key):
                return ann[key]
        return None

    @property
    def index(self) -> int:
        """The object's document index within its file (kpt's index annotation; 0 when unknown)."""
        location = self._views.location()
        if location is not None:
            return location[1]
        ann = self._views.reader or self.annotations
        for key in INDEX_ANNOTATIONS:
            value = ann.get(key, "")
            if value.isdigit():
                return int(value)
        return 0

    def ref(self) -> ResourceRef:
        """The object's identity as a result's ``resourceRef``."""
        return ResourceRef(self.api_version, self.kind, self.name, self.namespace)

    # --- values -----------------------------------------------------------------

    def get(self, path: str | Sequence[PathPart], default: Any = None) -> Any:
        """The value at ``path`` (``"spec.containers[0].image"`` or a tuple); ``default`` when absent."""
        return get_path(self.data, parse_path(path), default)

    def has(self, path: str | Sequence[PathPart]) -> bool:
        """Whether a field exists at ``path`` (also when its value is ``null``)."""
        return self.get(path, _MISSING) is not _MISSING

    def set(self, path: str | Sequence[PathPart], value: Any) -> None:
        """Set the value at ``path``, creating maps on the way."""
        parts = parse_path(path)
        data = self.copy_data()
        node = data
        for i, part in enumerate(parts[:-1]):
            nxt = node[part] if _has(node, part) else None
            if not isinstance(nxt, (dict, list)):
                if isinstance(part, int):
                    raise KrmError(f"no list element at {format_path(parts[: i + 1])}", self, format_path(parts))
                nxt = node[part] = {}
            node = nxt
        last = parts[-1]
        if isinstance(last, int) and not _has(node, last):
            raise KrmError(f"no list element at {format_path(parts)}", self, format_path(parts))
        node[last] = value
        self.set_data(data)

    def remove(self, path: str | Sequence[PathPart]) -> bool:
        """Delete the field at ``path``; ``False`` when it was not there."""
        parts = parse_path(path)
        data = self.copy_data()
        parent = get_path(data, parts[:-1])
        if not _has(parent, parts[-1]):
            return False
        del parent[parts[-1]]
        self.set_data(data)
        return True

    def set_label(self, key: str, value: str) -> None:
        """Set ``metadata.labels[key]`` (a string, as Kubernetes requires)."""
        self.set(("metadata", "labels", key), str(value))

    def set_annotation(self, key: str, value: str) -> None:
        """Set ``metadata.annotations[key]`` (a string, as Kubernetes requires)."""
        self.set(("metadata", "annotations", key), str(value))

    # --- typed getters ---------------------------------------------------------------

    def get_str(self, path: str | Sequence[PathPart], default: str | None = None) -> str | None:
        """The string at ``path``; ``default`` when absent; :class:`KrmError` when not a string."""
        return self._typed(path, default, (str,), "a string")

    def get_int(self, path: str | Sequence[PathPart], default: int | None = None) -> int | None:
        """The integer at ``path`` (``true`` is not one); ``default`` when absent."""
        value = self._typed(path, default, (int,), "an integer")
        if isinstance(value, bool) and value is not default:
            raise self._wrong_type(path, value, "an integer")
        return value

    def get_float(self, path: str | Sequence[PathPart], default: float | None = None) -> float | None:
        """The number at ``path`` as a float (integers accepted); ``default`` when absent."""
        value = self._typed(path, default, (int, float), "a number")
        if isinstance(value, bool) and value is not default:
            raise self._wrong_type(path, value, "a number")
        return float(value) if value is not None else None

    def get_bool(self, path: str | Sequence[PathPart], default: bool | None = None) -> bool | None:
        """The boolean at ``path`` (YAML ``true``/``false``, not the string); ``default`` when absent."""
        return self._typed(path, default, (bool,), "a boolean")

    def get_list(self, path: str | Sequence[PathPart], default: list[Any] | None = None) -> list[Any] | None:
        """The list at ``path`` (read-only view); ``default`` when absent."""
        return self._typed(path, default, (list,), "a list")

    def get_map(
        self, path: str | Sequence[PathPart], default: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The mapping at ``path`` (read-only view); ``default`` when absent."""
        return self._typed(path, default, (dict,), "a mapping")

    # --- helpers of the above ------------------------------------------------------------

    def _typed(self, path: str | Sequence[PathPart], default: Any, types: tuple[type, ...], what: str) -> Any:
        value = self.get(path, _MISSING)
        if value is _MISSING or value is None:
            return default
        if not isinstance(value, types):
            raise self._wrong_type(path, value, what)
        return value

    def _wrong_type(self, path: str | Sequence[PathPart], value: Any, what: str) -> KrmError:
        where = format_path(parse_path(path))
        return KrmError(f"{where} must be {what}, got {value!r}", self, where, current=_shown(value))

    def _header(self) -> Header:
        """Identity fields (annotations include the reader's), scanned from the text once."""
        views = self._views
        if views.reader is not None:
            composed: Header | None = views.composed_header
            if composed is None:
                base = self._text_header()
                composed = views.composed_header = Header(
                    base.api_version, base.kind, base.name, base.namespace,
                    {**base.annotations, **views.reader}, base.labels,
                )
            return composed
        return self._text_header()

    def _text_header(self) -> Header:
        """The header of the text alone (without the reader's annotations)."""
        views = self._views
        if views.header is None:
            views.header = scan_header(views.text) or self._header_from_data()
        header: Header = views.header
        return header

    def _header_from_data(self) -> Header:
        data = self._views.data  # the text's own values: the reader's annotations are added by `_header`
        if not isinstance(data, dict):
            raise KrmError(f"{self.what} is not a KRM object (not a mapping)")
        meta = data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        return Header(
            _str(data.get("apiVersion")),
            _str(data.get("kind")),
            _str(meta.get("name")),
            _str(meta.get("namespace")),
            _str_map(meta.get("annotations")),
            _str_map(meta.get("labels")),
        )

    def __repr__(self) -> str:
        where = f" ({self.path})" if self.path else ""
        return f"<KubeObject {self.ref().display()}{where}>"


class Item(KubeObject):
    """krm-merge's internal item: a :class:`KubeObject` plus the bookkeeping the reader, writer and modes use.

    Every :class:`KubeObject` is one (``KubeObject(...)`` makes an Item), so
    internal code may use these on any item, also one an SDK function made.

    An item read from a package directory carries the annotations ``kpt fn
    source`` gives it (``reader_annotations``) beside its text: ``annotations``,
    ``data`` and ``copy_data`` include them, ``text`` is the file's text
    without them (so the writer never has them to strip), and
    ``text_with_reader_annotations`` is the item as a ResourceList prints it.
    ``source_block``, when given, is the exact text the item had inside the
    ResourceList it was read from; it is written back verbatim while the item
    is unchanged.
    """

    __slots__ = ()

    # --- text -------------------------------------------------------------------

    @property
    def source_block(self) -> str | None:
        """The exact input bytes of this item, while it is unchanged."""
        views = self._views
        return None if views.changed else views.input_bytes

    def set_text(self, new_text: str) -> None:
        """Replace the item's whole text (for modes that edit bytes directly)."""
        self._views.set_text(new_text)

    def set_commented_text(self, new_text: str) -> None:
        """:meth:`set_text` for a text that differs only by comments added at the end of lines (conflict markers
        after a one-line scalar): it reads as the same data, which is not read again."""
        self._views.set_commented_text(new_text)

    @property
    def has_tree(self) -> bool:
        """True once a round-trip tree was built for the current text (the slow editor ran)."""
        return self._views.has_tree

    @property
    def rt_repaired(self) -> bool:
        """True once the ruamel printer needed its comment repair (for tests)."""
        return self._views.rt_repaired

    @rt_repaired.setter
    def rt_repaired(self, value: bool) -> None:
        self._views.rt_repaired = value

    # --- identity ---------------------------------------------------------------

    @property
    def header(self) -> Header:
        """Identity fields (annotations include the reader's), scanned from the text once."""
        return self._header()

    @property
    def text_header(self) -> Header:
        """The header of the text alone (without the reader's annotations)."""
        return self._text_header()

    def cache_header(self, header: Header) -> None:
        """Remember a header the reader already scanned (it is not scanned twice)."""
        self._views.header = header
        self._views.composed_header = None

    @property
    def text_annotations(self) -> dict[str, str]:
        """The annotations the item's text holds (without the reader's)."""
        return self._text_header().annotations

    @property
    def reader_annotations(self) -> dict[str, str]:
        """kpt's reader annotations held beside the text (empty for an item not read from a directory)."""
        return dict(self._views.reader or {})

    def set_reader_annotations(self, annotations: dict[str, str] | PendingReader) -> None:
        """Hold ``annotations`` beside the text, as the package reader does (they replace any held before).

        The mapping is held as given, not copied; a :class:`PendingReader`
        builds it on first use (the package reader defers the work).
        """
        self._views.set_reader(annotations if isinstance(annotations, PendingReader) else annotations or None)

    def place(self, path: str, index: int) -> None:
        """Record the item's file and document index as kpt's reader annotations, beside the text.

        The package writer puts the item there; the text is not touched (an
        item without reader annotations gets them, its text keeps its own).
        """
        reader = dict(self._views.reader or {})
        for key in INDEX_ANNOTATIONS:
            reader[key] = str(index)
        for key in PATH_ANNOTATIONS:
            reader[key] = path
        self._views.set_reader(dict(sorted(reader.items())))  # kyaml's order: the keys sorted

    @property
    def text_with_reader_annotations(self) -> str:
        """The text with the reader's annotations in it, as a ResourceList prints the item (kpt's lines)."""
        views = self._views
        if views.reader is None:
            return views.text
        own = self.text_annotations
        if not any(key in own for key in views.reader):
            text = splice.with_annotations(views.text, views.reader)
            if text is not None:
                return text
        return yamlio.dump_data(self.data)

    def display(self) -> str:
        """``Kind/[ns/]name`` plus the file, for messages."""
        where = f" ({self.path})" if self.path else ""
        return self.ref().display() + where

    def set_path(self, path: str, index: int | None = None) -> None:
        """Move the item to another file: sets the internal and legacy annotations."""
        data = self.copy_data()
        meta = data.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise KrmError("metadata is not a mapping", self, "metadata")
        ann = meta.get("annotations")
        if not isinstance(ann, dict):
            ann = meta["annotations"] = {}
        for key in PATH_ANNOTATIONS:
            ann[key] = path
        if index is not None:
            for key in INDEX_ANNOTATIONS:
                ann[key] = str(index)
        self.set_data(data)

    # --- values -----------------------------------------------------------------

    @property
    def text_data(self) -> Any:
        """The item's text as plain data (without the reader's annotations; read-only)."""
        return self._views.data

    def parsed(self) -> Any:
        """The fast reader's parse of the text (``fastyaml.Parsed``: data and positions), read once per text;
        None when the text is outside the fast reader's subset."""
        return self._views.parsed()

    def forget_data(self) -> None:
        """Drop the parsed views of the text (data, positions); :attr:`data` re-reads it on demand.

        A mode that edits thousands of items once each calls this after each
        edit, so only the items' texts stay in memory, not their parsed trees.
        """
        self._views.forget_data()

    def delete(self, path: str | Sequence[PathPart]) -> bool:
        """Delete the field at ``path``; False when it was not there (:meth:`remove`)."""
        return self.remove(path)

    def set_data(self, new: Any, *, change: tuple[str, str] | None = None) -> None:
        """:meth:`KubeObject.set_data`, with the update's carried change.

        ``change``: two texts (before, after) whose changed lines make the
        edit, tried when the fast editor declines (an update passes origin's
        and upstream's versions of the resource).
        """
        self._views.set_data(new, change)

    @property
    def rt(self) -> Any:
        """The round-trip tree (comments kept); call :meth:`commit_rt` after editing it."""
        return self._views.rt

    def commit_rt(self) -> None:
        """Re-print the item from its (edited) round-trip tree."""
        self._views.commit_rt()


def _shown(value: Any) -> Any:
    """A scalar as a result's ``current`` value; a collection is left out (it would flood the result)."""
    return value if isinstance(value, (str, int, float, bool)) else None


def _has(node: Any, part: PathPart) -> bool:
    if isinstance(part, int):
        return isinstance(node, list) and -len(node) <= part < len(node)
    return isinstance(node, dict) and part in node


def _str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): _str(v) for k, v in value.items()}


# --- the cheap header scan ---------------------------------------------------------

# Compiled on first use (functools.cache), not at import: a run that scans no item's header (a no-op update) does not compile them (issue 45).
@functools.cache
def _top_line() -> re.Pattern[str]:
    return re.compile(r"^([A-Za-z][A-Za-z0-9]*):(?:[ \t]+(.*))?$", re.M)


@functools.cache
def _entry() -> re.Pattern[str]:
    return re.compile(r"^(\s*)([A-Za-z0-9_./-]+):(?:[ \t]+(.*?))?[ \t]*$")


@functools.cache
def _plain() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_./+=~$()@^%-][^#'\"]*?")


def scan_header(text: str) -> Header | None:
    """Read apiVersion/kind/metadata of a kyaml-formatted item by lines.

    Returns None whenever the text is not in the simple shape this scan
    understands; the caller then parses the item fully.
    """
    top: dict[str, str | None] = {}
    meta_start = -1
    lines = text.split("\n")
    top_line = _top_line()
    for i, line in enumerate(lines):
        if not line or line[0] in " #" or line == "-" or line.startswith("- "):
            continue  # a value's lines (a compact sequence under a top-level key included: `rules:` / `- ...`)
        m = top_line.match(line)
        if m is None:
            return None
        key, rest = m.group(1), m.group(2)
        if key in ("apiVersion", "kind"):
            value = _simple_value(rest)
            if value is None:
                return None
            top[key] = value
        elif key == "metadata":
            if rest and not rest.lstrip().startswith("#"):
                return None
            meta_start = i + 1
    if "apiVersion" not in top or "kind" not in top or meta_start < 0:
        return None
    meta = _scan_metadata(lines, meta_start)
    if meta is None:
        return None
    name, namespace, annotations, labels = meta
    return Header(top["apiVersion"] or "", top["kind"] or "", name, namespace, annotations, labels)


def _scan_metadata(lines: list[str], start: int) -> tuple[str, str, dict[str, str], dict[str, str]] | None:
    """name, namespace, annotations and labels from the lines under ``metadata:``.

    Any indentation: metadata's own keys sit at the column of its first
    entry, a map's entries at the column of that map's first entry.
    """
    fields: dict[str, str] = {}
    maps: dict[str, dict[str, str]] = {"annotations": {}, "labels": {}}
    current: dict[str, str] | None = None
    base = -1  # column of metadata's keys
    child = -1  # column of the entries of the current map (labels, annotations)
    other = False  # inside a metadata field the header does not need (finalizers, ...)
    entry = _entry()
    for line in lines[start:]:
        stripped = line.lstrip()
        if not line.strip(" ") or stripped.startswith("#"):
            continue  # a blank line, spaces only included (upstream's own: a field removed by hand)
        if line[0] != " ":
            break
        m = entry.match(line)
        if m is None:
            if other and len(line) - len(stripped) >= base and (stripped.startswith("- ") or stripped == "-"):
                continue  # a list item of that field (compact style puts it at metadata's column)
            return None
        indent, key, rest = len(m.group(1)), m.group(2), m.group(3)
        if base < 0:
            base = indent
        if indent == base:
            current, child = None, -1
            other = key not in maps and key not in ("name", "namespace")
            if key in maps:
                if rest and not rest.startswith("#"):
                    if rest.strip() == "{}":
                        continue
                    return None
                current = maps[key]
            elif key in ("name", "namespace"):
                value = _simple_value(rest)
                if value is None:
                    return None
                fields[key] = value
        elif indent < base:
            return None
        elif current is not None:
            if child < 0:
                child = indent
            if indent != child:
                return None  # nested or multi-line values: let the full parser read them
            value = _simple_value(rest)
            if value is None:
                return None
            current[key] = value
    return fields.get("name", ""), fields.get("namespace", ""), maps["annotations"], maps["labels"]


def _simple_value(rest: str | None) -> str | None:
    """The string value of a one-line scalar, or None if it is not that simple."""
    if rest is None:
        return None
    rest = rest.strip()
    if rest.startswith("'"):
        end = _end_single(rest)
        if end < 0 or not _only_comment(rest[end + 1 :]):
            return None
        return rest[1:end].replace("''", "'")
    if rest.startswith('"'):
        end = rest.find('"', 1)
        if end < 0 or "\\" in rest[:end] or not _only_comment(rest[end + 1 :]):
            return None
        return rest[1:end]
    value, _, comment = rest.partition(" #")
    value = value.rstrip()
    if not value or not _plain().fullmatch(value) or ": " in value:
        return None
    return value


def _end_single(text: str) -> int:
    i = 1
    while True:
        j = text.find("'", i)
        if j < 0:
            return -1
        if j + 1 < len(text) and text[j + 1] == "'":
            i = j + 2
            continue
        return j


def _only_comment(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


Selector: TypeAlias = "Callable[[Item], bool]"
