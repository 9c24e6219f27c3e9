"""The ``kustomize-image`` strategy: set ``images[name=X]`` in a kustomization, byte-exactly.

``kustomize edit set image`` re-prints the whole file (comments move, quoting changes).
Here only the entry's values change: an existing ``newName``/``newTag``/``digest`` is
replaced in place, a missing one is added as a new line in the entry's own indentation, a
missing entry is appended to ``images:`` in the style of its last item, and a missing
``images:`` is appended to the document.  The result is parsed again and compared, as data,
with the expected kustomization; any difference is an error and nothing is written.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from krm_merge.krm import yamlio
from krm_merge.krm.values import PathPart, format_path
from krm_merge.promote import scalars
from krm_merge.promote.changes import Change
from krm_merge.promote.document import Document, Entry
from krm_merge.promote.edit import Splice, api_version, plan_scalar_edit, resource_name, splice, with_sources
from krm_merge.promote.errors import PromoteError
from krm_merge.promote.imagepolicy import ImageRef
from krm_merge.promote.request import Resolved, is_kustomization_in
from krm_merge.records import Record

KUSTOMIZE_GROUP = "kustomize.config.k8s.io"
FIELD_ORDER = ("newName", "newTag", "digest")


class ImageEdit(Record):
    """A text insertion (a new key, entry or ``images:`` list) and what it adds."""

    pos: int
    text: str
    doc: int
    path: tuple[PathPart, ...]  # of the added value (a key), for the report
    new: str
    update: Callable[[Any], None]  # applies the addition to the document's data, for verification
    source: str = ""


class Plan(Record):
    """Existing scalars to set and insertions to make for one kustomization document."""

    scalars: list[tuple[Entry, str]]
    inserts: list[ImageEdit]


def wanted_fields(image: str, ref: ImageRef, has_new_name: bool) -> dict[str, str]:
    """The entry fields that make kustomize build ``ref`` for images named ``image``.

    Parts the reference does not give (a tag, a digest) are left as they are.
    """
    fields: dict[str, str] = {}
    if ref.name != image or has_new_name:
        fields["newName"] = ref.name
    if ref.tag:
        fields["newTag"] = ref.tag
    if ref.digest:
        fields["digest"] = ref.digest
    return fields


def _value_entry(doc: Document, parent: Entry, key: str) -> Entry | None:
    for entry in doc.entries:
        if entry.role == "value" and entry.doc == parent.doc and entry.path == parent.path + (key,):
            return entry
    return None


def _kustomization_roots(doc: Document) -> list[Entry]:
    roots = []
    for entry in doc.entries:
        if entry.path != () or entry.role != "value" or not isinstance(entry.node, yaml.MappingNode):
            continue
        api_version = _value_entry(doc, entry, "apiVersion")
        kind = _value_entry(doc, entry, "kind")
        group = str(api_version.node.value).rpartition("/")[0] if api_version is not None else KUSTOMIZE_GROUP
        if group == KUSTOMIZE_GROUP and (kind is None or kind.node.value == "Kustomization"):
            roots.append(entry)
    return roots


def plan(doc: Document, resolved: Resolved) -> Plan | None:
    """What to change in ``doc`` for one kustomize-image promotion; None if it is no kustomization."""
    roots = _kustomization_roots(doc)
    if not roots:
        return None
    image = resolved.promotion.image or ""
    ref = ImageRef.parse(resolved.promotion.value)
    result = Plan([], [])
    for root in roots:
        _plan_root(doc, root, image, ref, result)
    return Plan(result.scalars, [i._replace(source=resolved.label) for i in result.inserts])


def _line_break(doc: Document) -> str:
    return "\r\n" if "\r\n" in doc.text else "\n"


def _column(doc: Document, index: int) -> int:
    return index - doc.line_starts[doc.line_of(index)]


def _plan_root(doc: Document, root: Entry, image: str, ref: ImageRef, result: Plan) -> None:
    images = _value_entry(doc, root, "images")
    if images is None:
        result.inserts.append(_append_images_key(doc, root, image, wanted_fields(image, ref, False)))
        return
    node = images.node
    if not isinstance(node, yaml.SequenceNode) or images.alias:
        raise PromoteError("images is not a list; cannot add an image entry", field=format_path(images.path))
    for i, item in enumerate(node.value):
        name = _value_entry(doc, _item_entry(doc, images, i), "name") if isinstance(item, yaml.MappingNode) else None
        if name is not None and name.is_scalar and name.node.value == image:
            _plan_entry(doc, _item_entry(doc, images, i), image, ref, result)
            return
    result.inserts.append(_append_entry(doc, images, image, wanted_fields(image, ref, False)))


def _item_entry(doc: Document, seq: Entry, i: int) -> Entry:
    for entry in doc.entries:
        if entry.role == "value" and entry.doc == seq.doc and entry.path == seq.path + (i,):
            return entry
    raise PromoteError("internal error: sequence item not indexed", field=format_path(seq.path + (i,)))


def _plan_entry(doc: Document, item: Entry, image: str, ref: ImageRef, result: Plan) -> None:
    existing = {key: _value_entry(doc, item, key) for key in FIELD_ORDER}
    fields = wanted_fields(image, ref, existing["newName"] is not None)
    missing: dict[str, str] = {}
    for key, value in fields.items():
        entry = existing[key]
        if entry is None:
            missing[key] = value
        elif not entry.is_scalar:
            raise PromoteError(f"{key} is not a scalar", field=format_path(entry.path))
        else:
            result.scalars.append((entry, value))
    if missing:
        result.inserts.extend(_add_keys(doc, item, missing))


def _render(value: str, in_flow: bool) -> str:
    return scalars.render_inline(value, scalars.PLAIN, in_flow=in_flow)


def _at(data: Any, path: tuple[PathPart, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _set_keys(path: tuple[PathPart, ...], values: dict[str, str]) -> Callable[[Any], None]:
    return lambda data: _at(data, path).update(values)


def _add_keys(doc: Document, item: Entry, values: dict[str, str]) -> list[ImageEdit]:
    """One insertion per missing key, in the entry's own style (block or flow)."""
    node = item.node
    if node.flow_style:
        pos = doc.text.rfind("}", item.start, item.end)
        return [ImageEdit(pos, f", {k}: {_render(v, True)}", item.doc, item.path + (k,), v,
                          _set_keys(item.path, {k: v})) for k, v in values.items()]
    last_key, last_value = node.value[-1]
    value_entry = _value_entry(doc, item, last_key.value)
    if value_entry is None or not value_entry.is_scalar or last_value.style in ("|", ">"):
        raise PromoteError("cannot add a key after a nested or block value", field=format_path(item.path))
    indent = " " * _column(doc, last_key.start_mark.index)
    _, line_end = doc.line_span(doc.line_of(value_entry.end))
    nl = _line_break(doc)
    return [ImageEdit(line_end, f"{nl}{indent}{k}: {_render(v, False)}", item.doc, item.path + (k,), v,
                      _set_keys(item.path, {k: v})) for k, v in values.items()]


def _entry_lines(image: str, values: dict[str, str], dash: str, indent: str, nl: str) -> str:
    lines = [f"{dash}- name: {_render(image, False)}"]
    lines.extend(f"{indent}{k}: {_render(v, False)}" for k, v in values.items())
    return nl.join(lines)


def _append_to(path: tuple[PathPart, ...], value: dict[str, str]) -> Callable[[Any], None]:
    return lambda data: _at(data, path).append(value)


def _append_entry(doc: Document, images: Entry, image: str, values: dict[str, str]) -> ImageEdit:
    node = images.node
    path = images.path + (len(node.value),)
    entry_data = {"name": image, **values}
    if node.flow_style:
        close = doc.text.rfind("]", images.start, images.end)
        body = ", ".join(f"{k}: {_render(v, True)}" for k, v in entry_data.items())
        text = ("" if not node.value else ", ") + "{" + body + "}"
        return ImageEdit(close, text, images.doc, path, _describe(entry_data), _append_to(images.path, entry_data))
    if not node.value:
        raise PromoteError("images is empty; cannot tell its style", field=format_path(images.path))
    last = _item_entry(doc, images, len(node.value) - 1)
    if last.dash is None or not isinstance(last.node, yaml.MappingNode) or not last.node.value:
        raise PromoteError("cannot add an entry after this images item", field=format_path(last.path))
    dash_col = _column(doc, last.dash)
    key_col = _column(doc, last.start)
    if last.node.flow_style:
        end = last.end
    else:
        last_key = last.node.value[-1][0]
        last_value = _value_entry(doc, last, last_key.value)
        if last_value is None or not last_value.is_scalar or last_value.node.style in ("|", ">"):
            raise PromoteError("cannot add an entry after a nested or block value", field=format_path(last.path))
        end = last_value.end
    _, line_end = doc.line_span(doc.line_of(end))
    nl = _line_break(doc)
    text = nl + _entry_lines(image, values, " " * dash_col, " " * key_col, nl)
    return ImageEdit(line_end, text, images.doc, path, _describe(entry_data), _append_to(images.path, entry_data))


def _sequence_indent(doc: Document, root: Entry) -> str:
    """Spaces before ``-`` for a top-level list: kept from the document's other lists."""
    for entry in doc.entries:
        if entry.doc == root.doc and len(entry.path) == 2 and isinstance(entry.path[1], int) and entry.dash is not None:
            return " " * (_column(doc, entry.dash) - _column(doc, root.start))
    return ""


def _append_images_key(doc: Document, root: Entry, image: str, values: dict[str, str]) -> ImageEdit:
    if root.node.flow_style:
        raise PromoteError("the kustomization is a flow mapping; cannot add images")
    nl = _line_break(doc)
    base = " " * _column(doc, root.start)
    dash = base + _sequence_indent(doc, root)
    end = len(doc.text)
    text = "" if doc.text.endswith("\n") or not doc.text else nl
    text += f"{base}images:{nl}" + _entry_lines(image, values, dash, dash + "  ", nl) + nl
    entry_data = {"name": image, **values}

    def update(data: Any) -> None:
        data["images"] = [entry_data]
    return ImageEdit(end, text, root.doc, ("images", 0), _describe(entry_data), update)


def _describe(entry: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in entry.items()) + "}"


def apply(doc: Document, targets: Sequence[Any], inserts: list[ImageEdit]) -> tuple[str, list[Change]]:
    """Set ``targets`` (engine targets: entry, value, ...) and make ``inserts``; verified as data."""
    splices = []
    changes: list[Change] = []
    expected = [d for d in yamlio.load_all_data(doc.text, "the kustomization", note_duplicates=False) if d is not None]
    for target in targets:
        planned = plan_scalar_edit(doc, target.entry, target.value)
        _set_path(expected[target.entry.doc], target.entry.path, target.value)
        if planned is None:
            continue
        splices.append(planned)
        changes.append(Change(target.entry.doc, format_path(target.entry.path), doc.line_of(target.entry.start) + 1,
                              target.entry.node.value, target.value, target.marker))
    changes = with_sources(doc, targets, changes)
    for edit in inserts:
        splices.append(Splice(edit.pos, edit.pos, edit.text))
        edit.update(expected[edit.doc])
        changes.append(Change(edit.doc, format_path(edit.path), doc.line_of(edit.pos) + 2, None, edit.new,
                              None, edit.source, _resource(doc, edit.doc), api_version(doc, edit.doc)))
    if not splices:
        return doc.text, []
    new_text = splice(doc.text, splices)
    wrong = yamlio.read_back_error(new_text, expected, documents=True)
    if wrong is not None:
        raise PromoteError(f"internal error: the edited kustomization {wrong}; nothing written")
    return new_text, changes


def _resource(doc: Document, index: int) -> str:
    return resource_name(doc, index) or "Kustomization"


def _set_path(data: Any, path: tuple[PathPart, ...], value: str) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value
