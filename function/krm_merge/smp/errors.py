"""Errors raised by the strategic merge patch engine.

Messages follow the Kubernetes wording (``apimachinery`` ``strategicpatch`` and
``mergepatch`` packages) so users can search for them; every error also
carries the field path where it happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from krm_merge.errors import KrmMergeError


class SmpError(KrmMergeError):
    """A strategic merge patch could not be applied or created.

    ``message`` is the Kubernetes-worded text, ``path`` the field path where the
    problem was found (``spec.template.spec.containers[name=nginx].env``;
    empty for the document root).
    """

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message, field=path or None)
        self.message = message
        self.path = path


class MissingMergeKeyError(SmpError):
    """A patch needs a merge key for list ``field`` but the schema declares none.

    Raised for ``$patch`` list elements, ``$setElementOrder`` and merge lists of
    maps on fields without ``x-kubernetes-patch-merge-key`` (every list of a
    kind without schema).  Callers may append how to declare a key.
    """

    def __init__(self, message: str, path: str, field: str) -> None:
        super().__init__(message, path)
        self.field = field


class ConflictError(SmpError):
    """A 3-way patch would overwrite changes made from original to current.

    ``patch_yaml`` and ``changed_yaml`` are the two documents of the Kubernetes
    message; ``conflicts`` lists the field paths that conflict.
    """

    def __init__(self, patch_yaml: str, changed_yaml: str, conflicts: Sequence[str]) -> None:
        self.patch_yaml = patch_yaml
        self.changed_yaml = changed_yaml
        self.conflicts = tuple(conflicts)
        message = (
            f"patch:\n{patch_yaml}\nconflicts with changes made from original to current:\n"
            f"{changed_yaml}\n"
        )
        super().__init__(message, "")

    def summary(self) -> str:
        """One line naming the conflicting fields (for command-line output)."""
        fields = ", ".join(p or "<root>" for p in self.conflicts)
        return f"patch conflicts with changes made from original to current at: {fields}"
