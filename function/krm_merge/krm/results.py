"""KRM function results (the ``results`` list of a ResourceList, spec v1).

A mode reports findings through :class:`Results`; fatal problems are raised
as :class:`KrmError`, which the runner turns into one error result.  Results
are emitted only in the v1 shape kpt and kustomize read.
"""

from __future__ import annotations

from collections.abc import Callable

from krm_merge.errors import KrmMergeError
from krm_merge.krm.values import resource_label
from krm_merge.records import Record

# typing's names for type checkers and the API docs (pdoc reads this block): not imported at start-up
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object  # protocols are for type checkers: plain base classes at run time (issue 45)


class ResultSubject(Protocol):
    """What a result needs of the item it is about (``krm.kubeobject.KubeObject`` has it).

    A protocol, not an import: results sit below the item class, which raises them.
    """

    @property
    def path(self) -> str | None: ...

    @property
    def index(self) -> int: ...

    def ref(self) -> "ResourceRef": ...


SEVERITIES = ("error", "warning", "info")

# The records below are NamedTuples, not dataclasses: every command that reports anything
# loads this module, and creating a dataclass (and importing ``dataclasses``, which imports
# ``inspect``) cost a small ``update`` several milliseconds (issue 24).  They keep the
# public constructors, field names, immutability, equality and repr they had.


class ResourceRef(Record):
    """Identifies the resource a result is about (flat, as the spec wants)."""

    api_version: str
    kind: str
    name: str
    namespace: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        return out

    def display(self) -> str:
        """``Kind/[namespace/]name``, the form used in messages."""
        return resource_label(self.kind, self.name, self.namespace)


class Field(Record):
    """The field a result is about, with its current and proposed values."""

    path: str
    current_value: Any = None
    proposed_value: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.current_value is not None:
            out["currentValue"] = self.current_value
        if self.proposed_value is not None:
            out["proposedValue"] = self.proposed_value
        return out


class File(Record):
    """The file (relative to the package) and document index a result is about."""

    path: str
    index: int = 0  # type: ignore[assignment]  # a field named as a tuple method: the record's attribute wins

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.index:
            out["index"] = self.index
        return out


class _ResultFields(Record):
    message: str
    severity: str
    resource_ref: ResourceRef | None
    field: Field | None
    file: File | None
    tags: dict[str, str]


class Result(_ResultFields):
    """One result, serialised with :meth:`to_dict` in the KRM v1 shape.

    ``Result(message, severity="error", resource_ref=None, field=None, file=None, tags=None)``;
    ``tags`` defaults to a new empty dict of its own (a NamedTuple default would be one
    dict shared by every result).  A NamedTuple, as ``ResourceRef``, ``Field`` and ``File``:
    immutable; ``result._replace(severity="warning")`` is a changed copy.
    """

    __slots__ = ()

    def __new__(cls, message: str, severity: str = "error", resource_ref: ResourceRef | None = None,
                field: Field | None = None, file: File | None = None, tags: dict[str, str] | None = None) -> "Result":
        return super().__new__(cls, message, severity, resource_ref, field, file, {} if tags is None else tags)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "severity": self.severity}
        if self.resource_ref is not None:
            out["resourceRef"] = self.resource_ref.to_dict()
        if self.field is not None:
            out["field"] = self.field.to_dict()
        if self.file is not None:
            out["file"] = self.file.to_dict()
        if self.tags:
            out["tags"] = dict(self.tags)
        return out

    def display(self) -> str:
        """One line, the way kpt prints results: ``[sev] Kind/ns/name field: msg``."""
        where = ""
        if self.resource_ref is not None:
            where = " " + self.resource_ref.display()
        if self.field is not None:
            where += f" {self.field.path}"
        if self.file is not None and self.resource_ref is None:
            where += f" {self.file.path}"
        return f"[{self.severity}]{where}: {self.message}"


def make_result(
    severity: str,
    message: str,
    obj: ResultSubject | None = None,
    *,
    field: str | None = None,
    current: Any = None,
    proposed: Any = None,
    file: File | None = None,
    tags: dict[str, str] | None = None,
) -> Result:
    """Build a result about ``obj`` (its ref and file are filled in from it)."""
    ref = obj.ref() if obj is not None else None
    if file is None and obj is not None and obj.path:
        file = File(obj.path, obj.index)
    fld = Field(field, current, proposed) if field is not None else None
    return Result(message, severity, ref, fld, file, dict(tags or {}))


def result_of(err: KrmMergeError) -> Result:
    """The error result of any krm-merge error (the runner's one conversion)."""
    if isinstance(err, KrmError):
        return err.to_result()
    obj = err.resource if hasattr(err.resource, "ref") else None
    file = err.file if isinstance(err.file, File) or err.file is None else File(str(err.file))
    return make_result("error", str(err), obj, field=err.field, file=file, tags=err.tags)


class Results(list[Result]):
    """The results of one run; builders mirror the Go SDK's ``Results``."""

    def error(self, message: str, obj: ResultSubject | None = None, **kw: Any) -> Result:
        return self._add("error", message, obj, **kw)

    def warning(self, message: str, obj: ResultSubject | None = None, **kw: Any) -> Result:
        return self._add("warning", message, obj, **kw)

    def info(self, message: str, obj: ResultSubject | None = None, **kw: Any) -> Result:
        return self._add("info", message, obj, **kw)

    def _add(self, severity: str, message: str, obj: ResultSubject | None, **kw: Any) -> Result:
        result = make_result(severity, message, obj, **kw)
        self.append(result)
        return result

    @property
    def has_errors(self) -> bool:
        return any(r.severity == "error" for r in self)

    def exit_code(self) -> int:
        """1 when any error was reported (kpt decides pass/fail by exit code only)."""
        return 1 if self.has_errors else 0


class KrmError(KrmMergeError):
    """A fatal problem, naming the resource and field it is about.

    Raised anywhere below the runner; the runner reports it as one error
    result.  ``obj`` may be a :class:`~krm_merge.krm.kubeobject.KubeObject` or omitted.
    """

    def __init__(
        self,
        message: str,
        obj: ResultSubject | None = None,
        field: str | None = None,
        *,
        current: Any = None,
        proposed: Any = None,
        file: File | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, resource=obj, field=field, file=file)
        self.obj = obj
        self.current = current
        self.proposed = proposed
        self.tags = tags

    def to_result(self) -> Result:
        return make_result(
            "error",
            self.message,
            self.obj,
            field=self.field,
            current=self.current,
            proposed=self.proposed,
            file=self.file,
            tags=self.tags,
        )

    def __str__(self) -> str:
        return self.to_result().display()

    def one_line(self) -> str:
        """The message with its location (resource, field, file), for a CLI's ``error:`` line."""
        result = self.to_result()
        where = []
        if result.resource_ref is not None:
            where.append(result.resource_ref.display())
        elif result.file is not None and result.file.path not in self.message:
            where.append(result.file.path)
        if result.field is not None and result.field.path not in self.message:
            where.append(result.field.path)
        return f"{' '.join(where)}: {self.message}" if where else self.message


def failure(err: KrmMergeError | OSError, describe: Callable[[KrmMergeError], str] | None = None) -> Result:
    """The error result of what stopped a command: the error's one line, its resource, field and file kept."""
    if isinstance(err, OSError):
        where = f"{err.filename}: " if err.filename else ""
        return Result(f"{where}{err.strerror or err}", "error", file=File(str(err.filename)) if err.filename else None)
    found = result_of(err)
    message = describe(err) if describe is not None else err.one_line()
    return Result(message, "error", found.resource_ref, found.field, found.file, found.tags)
