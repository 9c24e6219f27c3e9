"""The one base class of krm-merge's errors.

Every failure the product expects (bad input, bad configuration, a merge it
refuses) is raised as a subclass of :class:`KrmMergeError`, carrying what a
KRM result needs to point at the problem: the resource, the field and the
file.  Nothing below the runner prints or exits; ``krm_merge.runner`` turns
these exceptions into error results in one place.

This module imports nothing of krm-merge, so every layer may raise from it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class KrmMergeError(Exception):
    """A problem to report as one error result.

    ``resource`` is the item it is about (a ``KubeObject`` or a display
    string), ``field`` a path inside it (``spec.containers[0].image``),
    ``file`` the file in the package (a path, or a ``File`` reference).
    """

    def __init__(self, message: str, *, resource: Any = None, field: str | None = None,
                 file: Any = None, tags: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.resource = resource
        self.field = field
        self.file = file
        self.tags = tags

    def one_line(self) -> str:
        """The message with its file and field in front (when the message does not name them)."""
        where = [w for w in (self.file if isinstance(self.file, str) else None, self.field) if w and w not in self.message]
        return f"{' '.join(where)}: {self.message}" if where else self.message


class ConfigError(KrmMergeError):
    """The functionConfig is wrong; ``key`` names the offending key.

    ``str()`` is the full sentence (``functionConfig patch: ...``), ``message``
    the part after the key.  Lives here, not in ``config``, so that the krm
    core (selectors) can raise it without importing upward.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"functionConfig {key}: {message}" if key else f"functionConfig: {message}",
                         tags={"key": key} if key else None)
        self.key = key
        self.message = message
