"""The error of a pull-request step: which step failed, and what was kept for a rerun."""

from __future__ import annotations

from krm_merge.errors import KrmMergeError

STEPS = ("work tree", "remote", "base", "branch", "commit", "push", "pull request")
"""The steps, in the order a run takes them; every :class:`ChangeError` names one."""


class ChangeError(KrmMergeError):
    """A step of ``--pull-request`` failed.

    ``step`` is one of :data:`STEPS`; the message starts with it.  ``kept`` says
    what stays for a rerun to continue from (``commit 1a2b3c4 on local branch X``),
    empty when the step failed before anything was made.  The message must already
    be redacted (:mod:`krm_merge.change.redact`): it is printed as it is.
    """

    def __init__(self, step: str, detail: str, *, kept: str = "") -> None:
        if step not in STEPS:
            raise ValueError(f"unknown step {step!r}")
        message = f"{step}: {detail}" + (f" ({kept}; rerun the command to continue)" if kept else "")
        super().__init__(message, tags={"step": step})
        self.step = step
        self.detail = detail
        self.kept = kept

    def keeping(self, kept: str) -> ChangeError:
        """The same error, saying what a rerun continues from."""
        return ChangeError(self.step, self.detail, kept=kept)
