"""Running the user's ``git`` for the pull-request steps.

The user's own git, environment and configuration: credential helpers, the SSH
agent, ``user.name``/``user.email``, signing keys and hooks all apply.  Three
settings are added: git never prompts (``GIT_TERMINAL_PROMPT=0``: a CI job fails
at once instead of hanging on a password prompt), messages are in English
(``LC_ALL=C``: they are quoted in our errors) and read-only commands take no
optional lock (``GIT_OPTIONAL_LOCKS=0``: ``git status`` does not rewrite the index,
so a dry run touches nothing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from krm_merge.change.errors import ChangeError
from krm_merge.change.redact import Redactor

GIT_TIMEOUT = 600  # seconds; a push of a large repository over a slow link takes minutes
# How git says a server refused its credentials (HTTP and SSH), in its English messages.
_AUTH_REFUSED = ("authentication failed", "could not read username", "could not read password", "permission denied",
                 "terminal prompts disabled", "invalid username or password", "access denied", "http 401",
                 "http 403", "returned error: 401", "returned error: 403", "403 forbidden")


def refused_credentials(text: str) -> bool:
    """True when git's message says the remote refused (or could not be given) credentials."""
    lowered = text.lower()
    return any(marker in lowered for marker in _AUTH_REFUSED)


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

    __slots__ = ("cwd", "redactor", "executable", "_env")

    def __init__(self, cwd: str, redactor: Redactor, environ: Mapping[str, str] | None = None) -> None:
        executable = shutil.which("git")
        if executable is None:
            raise ChangeError("work tree", "git is not installed (or not on PATH); --pull-request needs it")
        self.cwd = cwd
        self.redactor = redactor
        self.executable = executable
        self._env = {**(os.environ if environ is None else environ),
                     "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}

    def attempt(self, args: Sequence[str], *, stdin: str | None = None, stdin_bytes: bytes | None = None,
                env: Mapping[str, str] | None = None) -> GitResult:
        """Run ``git ARGS`` (``stdin`` text or bytes as its input); never raises for a non-zero exit (read ``code``)."""
        data = stdin.encode() if stdin is not None else stdin_bytes
        try:
            proc = subprocess.run([self.executable, *args], cwd=self.cwd, input=data,
                                  stdin=None if data is not None else subprocess.DEVNULL, capture_output=True,
                                  timeout=GIT_TIMEOUT, env={**self._env, **(env or {})})
        except subprocess.TimeoutExpired:
            return GitResult(124, "", f"git {args[0]} timed out after {GIT_TIMEOUT} s")
        except OSError as err:
            return GitResult(127, "", f"cannot run git: {err}")
        return GitResult(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                         self.redactor.redact(proc.stderr.decode("utf-8", "replace")))

    def run(self, args: Sequence[str], step: str, what: str, *, stdin: str | None = None,
            stdin_bytes: bytes | None = None, env: Mapping[str, str] | None = None) -> str:
        """Run ``git ARGS``; its stdout, stripped.  A failure is a :class:`ChangeError` of ``step``: ``what: reason``."""
        result = self.attempt(args, stdin=stdin, stdin_bytes=stdin_bytes, env=env)
        if result.code != 0:
            raise ChangeError(step, f"{what}: {result.last_line()}")
        return result.out.strip()
