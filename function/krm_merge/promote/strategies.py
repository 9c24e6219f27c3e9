"""The RFC's alternatives to markers: select resources by file path or by labels.

Both select resources without a marker; the field to set then comes from the built-in table
of known kinds (``KNOWN_FIELDS``) or from an explicit ``fieldPath``.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Mapping
from typing import Any, Final, Protocol

from krm_merge.krm.values import PathPart, parse_path
from krm_merge.promote.document import Document, Entry
from krm_merge.promote.errors import PromoteError
from krm_merge.records import Record

# (API group, kind) -> the field a promotion sets.
KNOWN_FIELDS: Final[dict[tuple[str, str], str]] = {
    ("helm.toolkit.fluxcd.io", "HelmRelease"): "spec.chart.spec.version",
    ("source.toolkit.fluxcd.io", "HelmChart"): "spec.version",
    ("source.toolkit.fluxcd.io", "OCIRepository"): "spec.ref.tag",
    ("source.toolkit.fluxcd.io", "GitRepository"): "spec.ref.tag",
    ("argoproj.io", "Application"): "spec.source.targetRevision",
}

_PLACEHOLDER: Final = re.compile(r"\{([^{}]*)\}")
TEMPLATE_VARIABLES: Final = ("environment.name", "application.name", "pipeline.name", "pipeline.namespace")


def render_template(template: str, variables: Mapping[str, str]) -> str:
    """Replace ``{environment.name}``-style placeholders; an unknown one is an error."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in variables:
            raise PromoteError(f"unknown placeholder {{{name}}} in {template!r}; "
                               f"known: {', '.join('{' + v + '}' for v in TEMPLATE_VARIABLES)}")
        return variables[name]

    return _PLACEHOLDER.sub(replace, template)


def path_selected(item_path: str, pattern: str) -> bool:
    """True when a file path lies in directory ``pattern`` (or is that file, or matches its glob)."""
    path = posixpath.normpath(item_path.replace("\\", "/")).lstrip("/")
    pat = posixpath.normpath(pattern.replace("\\", "/")).lstrip("/")
    if pat in (".", ""):
        return True
    if any(c in pat for c in "*?["):
        parts = path.split("/")
        # A glob selects the files it matches and everything under directories it matches.
        return any(fnmatch.fnmatchcase("/".join(parts[:n]), pat) for n in range(1, len(parts) + 1))
    return path == pat or path.startswith(pat + "/")


class Requirement(Record):
    """One term of a label selector: ``k=v``, ``k!=v``, ``k`` (exists) or ``!k``."""

    key: str
    op: str  # "=", "!=", "exists", "!exists"
    value: str = ""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when ``labels`` satisfy this term."""
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        if self.op == "=":
            return labels.get(self.key) == self.value
        return labels.get(self.key) != self.value


def parse_selector(text: str) -> tuple[Requirement, ...]:
    """Parse ``a=b,c!=d,e,!f`` (Kubernetes equality-based selector syntax)."""
    terms: list[Requirement] = []
    for raw in text.split(","):
        term = raw.strip()
        if not term:
            continue
        if "!=" in term:
            key, _, value = term.partition("!=")
            terms.append(Requirement(key.strip(), "!=", value.strip()))
        elif "=" in term:
            key, _, value = term.partition("==") if "==" in term else term.partition("=")
            terms.append(Requirement(key.strip(), "=", value.strip()))
        elif term.startswith("!"):
            terms.append(Requirement(term[1:].strip(), "!exists"))
        else:
            terms.append(Requirement(term, "exists"))
        if not terms[-1].key:
            raise PromoteError(f"bad selector term {term!r}")
    if not terms:
        raise PromoteError(f"empty selector {text!r}")
    return tuple(terms)


def selector_matches(selector: tuple[Requirement, ...], labels: Mapping[str, str]) -> bool:
    """True when every term matches."""
    return all(term.matches(labels) for term in selector)


def field_for(group: str, kind: str, field_path: str | None) -> str | None:
    """The field to set on a resource: the explicit path, else the built-in one, else None."""
    return field_path or KNOWN_FIELDS.get((group, kind))


def parse_field_path(path: str) -> tuple[PathPart, ...]:
    """``spec.containers[0].image`` / ``metadata.annotations["a.b/c"]`` -> parts (the one grammar, :mod:`krm_merge.krm.values`)."""
    try:
        parts = parse_path(path)
    except ValueError:
        raise PromoteError(f"bad field path {path!r}") from None
    if not parts:
        raise PromoteError("empty field path")
    if any(isinstance(part, int) and part < 0 for part in parts):
        raise PromoteError(f"bad field path {path!r}")  # a marker names one element, never one from the end
    return parts


def find_field(doc: Document, doc_index: int, path: tuple[PathPart, ...]) -> Entry | None:
    """The value entry at ``path`` in document ``doc_index``, or None if absent."""
    for entry in doc.entries:
        if entry.role == "value" and entry.doc == doc_index and entry.path == path:
            return entry
    return None


def _scalar_at(doc: Document, index: int, path: tuple[PathPart, ...]) -> str:
    entry = find_field(doc, index, path)
    return str(entry.node.value) if entry is not None and entry.is_scalar else ""


def _string_map_at(doc: Document, index: int, path: tuple[PathPart, ...]) -> dict[str, str]:
    entry = find_field(doc, index, path)
    if entry is None or not isinstance(entry.node.value, list):
        return {}
    out: dict[str, str] = {}
    for pair in entry.node.value:
        if isinstance(pair, tuple) and all(isinstance(n.value, str) for n in pair):
            out[pair[0].value] = pair[1].value
    return out


class Resolved(Protocol):
    """What the strategies read of a resolved promotion (``request.Resolved``; not imported: no cycle)."""

    @property
    def promotion(self) -> Any: ...

    @property
    def variables(self) -> dict[str, str]: ...


def selectors(resolved: Resolved) -> tuple[tuple[Requirement, ...], tuple[Requirement, ...]]:
    """The rendered label and annotation selectors of a labels promotion (raises PromoteError)."""
    p = resolved.promotion
    labels = parse_selector(render_template(p.label_selector, resolved.variables)) if p.label_selector else ()
    annotations = (parse_selector(render_template(p.annotation_selector, resolved.variables))
                   if p.annotation_selector else ())
    return labels, annotations


def select_fields(doc: Document, resolved: Resolved) -> list[Entry]:
    """The fields a path/labels promotion sets in ``doc`` (the unit was selected by path already).

    Local-config resources and Pipelines are never changed; kinds without a known field (and
    no ``fieldPath``) and resources without the field are skipped.
    """
    p = resolved.promotion
    found: list[Entry] = []
    for index in range(len(doc.roots)):
        api_version, kind = _scalar_at(doc, index, ("apiVersion",)), _scalar_at(doc, index, ("kind",))
        annotations = _string_map_at(doc, index, ("metadata", "annotations"))
        if kind == "Pipeline" or annotations.get("config.kubernetes.io/local-config") == "true":
            continue
        if p.strategy == "labels":
            labels_sel, annotations_sel = selectors(resolved)
            if not (selector_matches(labels_sel, _string_map_at(doc, index, ("metadata", "labels")))
                    and selector_matches(annotations_sel, annotations)):
                continue
        group = api_version.rpartition("/")[0]
        path = field_for(group, kind, p.field_path)
        if path is None:
            continue
        entry = find_field(doc, index, parse_field_path(path))
        if entry is not None:
            found.append(entry)
    return found
