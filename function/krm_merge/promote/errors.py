"""The error type of the promote core."""

from __future__ import annotations

from krm_merge.errors import KrmMergeError


class PromoteError(KrmMergeError):
    """A promotion failed; carries the file, document index and field path when known.

    The mode turns it into an error result, the command into a one-line message.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        index: int | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message, file=file, field=field)
        self.index = index
        self.line = line

    def located(self, *, file: str | None = None, index: int | None = None) -> "PromoteError":
        """Return the same error with file/document information filled in where missing."""
        return PromoteError(
            self.message,
            file=self.file or file,
            index=self.index if self.index is not None else index,
            field=self.field,
            line=self.line,
        )

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file + (f":{self.line}" if self.line else ""))
        if self.field:
            where.append(f"field {self.field}")
        return f"{self.message} ({', '.join(where)})" if where else self.message


class UnreadableYaml(PromoteError):
    """A text to promote is not valid YAML: the command skips the file with ``--skip-unreadable``, else fails."""

    def __init__(self, problem: str, *, file: str | None = None, index: int | None = None, field: str | None = None,
                 line: int | None = None) -> None:
        super().__init__(f"not valid YAML: {problem}", file=file, index=index, field=field, line=line)
        self.problem = problem

    def located(self, *, file: str | None = None, index: int | None = None) -> "UnreadableYaml":
        """The same error with file/document information filled in where missing."""
        return UnreadableYaml(self.problem, file=self.file or file, index=self.index if self.index is not None else index,
                              field=self.field, line=self.line)


def describe(err: KrmMergeError) -> str:
    """A promote run's error in one line: a promotion's own error with where it is (:meth:`PromoteError.__str__`),
    any other as every command words it."""
    return str(err) if isinstance(err, PromoteError) else err.one_line()
