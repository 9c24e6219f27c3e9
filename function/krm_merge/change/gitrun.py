"""Running the user's ``git`` for the pull-request steps.

The user's own git, environment and configuration: credential helpers, the SSH
agent, ``user.name``/``user.email``, signing keys and hooks all apply.  git is run
by :mod:`krm_merge.gitexec` under its :data:`~krm_merge.gitexec.USER` profile: git
never prompts (``GIT_TERMINAL_PROMPT=0``: a CI job fails at once instead of hanging
on a password prompt), messages are in English (``LC_ALL=C``: they are quoted in
our errors, and a refused credential is told by its words) and read-only commands
take no optional lock (``GIT_OPTIONAL_LOCKS=0``: ``git status`` does not rewrite the
index, so a dry run touches nothing).  What git says passes through the run's
redactor before anything keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from krm_merge import gitexec
from krm_merge.change.errors import ChangeError
from krm_merge.change.redact import Redactor

GIT_TIMEOUT = gitexec.GIT_TIMEOUT  # seconds; a push of a large repository over a slow link takes minutes


class GitResult:
    """What one git command returned: exit code, stdout (text), stderr (redacted text)."""

    __slots__ = ("code", "out", "err")

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def last_line(self) -> str:
        """git's last non-empty stderr line (its reason), or the exit code."""
        lines = [line.strip() for line in self.err.splitlines() if line.strip()]
        return lines[-1] if lines else f"git exited with {self.code}"


class Git:
    """git in one work tree (``cwd``), with the run's redactor applied to everything it says."""

    __slots__ = ("cwd", "redactor", "_git")

    def __init__(self, cwd: str, redactor: Redactor, environ: Mapping[str, str] | None = None) -> None:
        try:
            # stderr kept whole (max_message None): a bound could cut a secret in two, and half of it would
            # escape the redactor
            self._git = gitexec.Git(gitexec.USER, "git is not installed (or not on PATH); --pull-request needs it",
                                    environ=environ, max_message=None)
        except gitexec.GitError as err:
            raise ChangeError("work tree", err.words) from None
        self.cwd = cwd
        self.redactor = redactor

    def attempt(self, args: Sequence[str], *, stdin: str | None = None, stdin_bytes: bytes | None = None,
                env: Mapping[str, str] | None = None) -> GitResult:
        """Run ``git ARGS`` (``stdin`` text or bytes as its input); never raises for a non-zero exit (read ``code``)."""
        data = stdin.encode() if stdin is not None else stdin_bytes
        try:
            done = self._git.attempt(args, f"git {args[0]}", cwd=self.cwd, stdin=data, env=env, timeout=GIT_TIMEOUT)
        except gitexec.GitError as err:  # it did not run to its end: no words of git's to redact
            if err.timed_out:
                return GitResult(124, "", f"git {args[0]} timed out after {GIT_TIMEOUT} s")
            return GitResult(127, "", err.words)
        return GitResult(done.status, done.out.decode("utf-8", "replace"),
                         self.redactor.redact(done.err.decode("utf-8", "replace")))

    def run(self, args: Sequence[str], step: str, what: str, *, stdin: str | None = None,
            stdin_bytes: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        """Run ``git ARGS``; its stdout, stripped.  A failure is a :class:`ChangeError` of ``step``: ``what: reason``."""
        result = self.attempt(args, stdin=stdin, stdin_bytes=stdin_bytes, env=env)
        if result.code != 0:
            raise ChangeError(step, f"{what}: {result.last_line()}")
        return result.out.strip()
