"""The one runner of git: found once, its environment set by profile, its failures one error.

Every git process krm-merge starts is started here (tests/architecture/test_one_home.py
holds every other module to it).  What git runs under is one of three profiles:

* :data:`USER` -- the user's own work tree (``--pull-request``): their environment
  and configuration (credential helpers, the SSH agent, ``user.name``, signing keys,
  hooks), plus ``GIT_TERMINAL_PROMPT=0`` (a CI job fails at once instead of hanging
  on a password prompt), ``GIT_OPTIONAL_LOCKS=0`` (``git status`` does not rewrite the
  index: a dry run touches nothing) and ``LC_ALL=C``.
* :data:`UPSTREAM` and :data:`UPSTREAM_CONTENT` -- fetching into the git cache.  A
  repository the user named (their package's Kptfile) is fetched with their
  environment and configuration as it is (credentials, proxies, ``protocol.*``), as
  kpt does.  One that only upstream content names gets git's rules for URLs that do
  not come from the user: ``GIT_PROTOCOL_FROM_USER=0`` (a local path or ``file://``
  needs the user's own ``protocol.file.allow=always``), ``-c protocol.ext.allow=never``
  (no ``ext::`` command), and ``LC_ALL=C``.  The cache's repositories are bare and
  made without the user's templates: no hook of theirs runs there.
* :data:`SCRATCH` -- a throw-away folder (``git merge-file``): no user or system
  configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no
  ``GIT_*`` variable of the caller's, ``HOME`` and the ceiling at the folder, and
  ``LC_ALL=C``: a conflict style or attribute of the user's cannot change a merge.

``LC_ALL=C`` is set wherever git's stderr is read for a reason: git offers no exit
status or porcelain output that tells a refused credential or a refused transport
from any other fatal error (all exit 128), so those two are recognised by their
English words, here and only here (:func:`refused_credentials`,
:func:`refused_transport`).  Everything else is told by exit status or by git's
machine-readable output.

git runs with a timeout (killed past it, never outliving krm-merge); its stderr is
read as it comes and kept bounded (a server relays its messages on it); a failure is
a :class:`GitError` carrying git's own words (one line, terminal controls escaped by
:func:`krm_merge.krm.display.escape_controls`) and its exit status.
"""

from __future__ import annotations

import os
import subprocess
import threading

from krm_merge.krm.display import escape_controls
from krm_merge.krm.results import KrmError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import IO, Any

    from krm_merge.krm.results import File

USER, UPSTREAM, UPSTREAM_CONTENT, SCRATCH = "user", "upstream", "upstream content", "scratch"
PROFILES = (USER, UPSTREAM, UPSTREAM_CONTENT, SCRATCH)
GIT_TIMEOUT = 600  # seconds; a push or a fetch of a large repository over a slow link takes minutes
# git's own words kept in an error: enough for every message git prints, bounded whatever a server sends.
MAX_MESSAGE = 4096
# How long a failed git's words are waited for once it exited (a child of it may hold its stderr open).
MESSAGE_WAIT = 10

# How git says a server refused its credentials (HTTP and SSH), and that a transport is not allowed.
# git has no exit status nor porcelain for either (both are exit 128, as any fatal error), so its
# English words (LC_ALL=C in the profiles that read them) are all there is to tell them by.
_AUTH_REFUSED = ("authentication failed", "could not read username", "could not read password", "permission denied",
                 "terminal prompts disabled", "invalid username or password", "access denied", "http 401",
                 "http 403", "returned error: 401", "returned error: 403", "403 forbidden")
_TRANSPORT_REFUSED = "not allowed"  # "fatal: transport 'file' not allowed"

_found: dict[str, str | None] = {}


class GitError(KrmError):
    """git failed: could not start (``status`` None), ran past its timeout (``timed_out``), or exited non-zero
    (``status``).  ``words`` is what git said (one line, controls escaped) or what happened; the message is
    ``what: words``."""

    def __init__(self, what: str, words: str, status: int | None = None, *, timed_out: bool = False,
                 file: File | None = None) -> None:
        super().__init__(f"{what}: {words}" if what else words, file=file)
        self.what = what
        self.words = words
        self.status = status
        self.timed_out = timed_out


class Done:
    """What one git process returned: its exit ``status``, its stdout and its stderr (bounded), as bytes."""

    __slots__ = ("status", "out", "_said")

    def __init__(self, status: int, out: bytes, said: _Said) -> None:
        self.status = status
        self.out = out
        self._said = said

    @property
    def err(self) -> bytes:
        """What git said on stderr; waited for only when asked (a child of git may hold the pipe open a while)."""
        return self._said.words()


def find_git(missing: str, *, file: File | None = None) -> str:
    """The first executable ``git`` on ``PATH``, looked up once per ``PATH``; else a :class:`GitError` saying
    ``missing`` (what needs git, and what to do without it)."""
    path = os.environ.get("PATH", os.defpath)
    if path not in _found:
        # Not shutil.which: shutil (with bz2 and lzma) was ~3 ms of every update's start-up, for this loop.
        _found[path] = next((git for folder in os.get_exec_path() for git in (os.path.join(folder, "git"),)
                             if os.access(git, os.X_OK) and not os.path.isdir(git)), None)
    git = _found[path]
    if git is None:
        raise GitError("", missing, file=file)
    return git


def environment(profile: str, *, environ: Mapping[str, str] | None = None, home: str | None = None) -> dict[str, str]:
    """The environment git runs with under ``profile`` (``environ``: the caller's, ``os.environ`` when None;
    ``home``: the scratch folder of :data:`SCRATCH`)."""
    base = os.environ if environ is None else environ
    if profile == USER:
        return {**base, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
    if profile == UPSTREAM:
        return dict(base)
    if profile == UPSTREAM_CONTENT:
        return {**base, "GIT_PROTOCOL_FROM_USER": "0", "LC_ALL": "C"}
    if profile == SCRATCH:
        if home is None:
            raise ValueError("the scratch profile needs its folder")
        env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=home, GIT_CEILING_DIRECTORIES=home,
                   LC_ALL="C")
        return env
    raise ValueError(f"unknown git profile {profile!r}")


def options(profile: str) -> list[str]:
    """git's own options (before the subcommand) under ``profile``."""
    return ["-c", "protocol.ext.allow=never"] if profile == UPSTREAM_CONTENT else []


class Git:
    """git under one profile: the executable found once, the environment set once."""

    __slots__ = ("executable", "profile", "env", "git_dir", "max_message")

    def __init__(self, profile: str, missing: str, *, executable: str | None = None,
                 environ: Mapping[str, str] | None = None, home: str | None = None, git_dir: str | None = None,
                 file: File | None = None, max_message: int | None = MAX_MESSAGE) -> None:
        """``missing``: the error's words when there is no git; ``git_dir``: the repository (``--git-dir``);
        ``max_message``: the bytes of stderr kept (None: all of it)."""
        self.executable = executable or find_git(missing, file=file)
        self.profile = profile
        self.env = environment(profile, environ=environ, home=home)
        self.git_dir = git_dir
        self.max_message = max_message

    def command(self, args: Sequence[str]) -> list[str]:
        """The whole command line of ``git ARGS``."""
        return [self.executable, *(["--git-dir", self.git_dir] if self.git_dir else []), *options(self.profile), *args]

    def attempt(self, args: Sequence[str], what: str = "git", *, cwd: str | None = None, stdin: bytes | None = None,
                env: Mapping[str, str] | None = None, timeout: float = GIT_TIMEOUT,
                during: Callable[[], Any] | None = None) -> Done:
        """Run ``git ARGS``; what it returned, whatever its exit status.  A :class:`GitError` only when it could not
        start or ran past ``timeout`` (then killed).  ``env``: variables added for this one run.

        ``during()`` is called while git runs (the caller's work overlaps git's); with ``stdin`` too, only for a git
        that reads all its input before it writes (``fetch --stdin``): the input is handed over first.
        """
        run_env = {**self.env, **env} if env else self.env
        try:
            proc = subprocess.Popen(self.command(args), cwd=cwd, env=run_env,
                                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as err:
            raise GitError(what, f"cannot run git: {err}") from None
        # stderr is read as it comes, and only its beginning and its end are kept: a server's messages are
        # relayed on it, and they are not bounded.  communicate() reads stdout only.
        said, proc.stderr = _Said(proc.stderr, self.max_message), None
        with proc:
            try:
                if during is not None:
                    if stdin is not None:  # git reads its input before it answers: hand it over first
                        _hand_over(proc, stdin)
                        stdin = None
                    during()
                out, _ = proc.communicate(stdin, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise GitError(what, f"git timed out after {timeout} s", timed_out=True) from None
            finally:
                if proc.poll() is None:  # stopped by a timeout or by an error in during(): no git outlives us
                    proc.kill()
                    proc.communicate()
        return Done(proc.returncode, out, said)

    def run(self, args: Sequence[str], what: str = "git", *, cwd: str | None = None, stdin: bytes | None = None,
            env: Mapping[str, str] | None = None, timeout: float = GIT_TIMEOUT,
            during: Callable[[], Any] | None = None, ok: Callable[[int], bool] | None = None,
            file: File | None = None) -> bytes:
        """Run ``git ARGS`` (as :meth:`attempt`); its stdout.  An exit status that is not 0 (or that ``ok`` does not
        accept) is a :class:`GitError`: ``what: git's words`` (``file``: the file it is about)."""
        done = self.attempt(args, what, cwd=cwd, stdin=stdin, env=env, timeout=timeout, during=during)
        if not (ok(done.status) if ok is not None else done.status == 0):
            raise GitError(what, git_words(done.err) or f"git exited with {done.status}", done.status, file=file)
        return done.out

    def start(self, args: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start ``git ARGS`` talking through pipes (``cat-file --batch``): stdin and stdout the caller's to use,
        stderr dropped.  The caller ends it."""
        try:
            return subprocess.Popen(self.command(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=self.env)
        except OSError as err:
            raise GitError("", f"cannot run git: {err}") from None


def git_words(stderr: bytes) -> str:
    """What git said on stderr, for an error message: its lines on one line (``; ``), terminal control characters
    escaped (a server's text reaches the user's terminal, and reports written to files: the one escaping,
    :func:`krm_merge.krm.display.escape_controls`)."""
    lines = [escape_controls(line.strip()) for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return "; ".join(line[:-1] if line.endswith(".") and n < len(lines) - 1 else line for n, line in enumerate(lines))


def refused_credentials(text: str) -> bool:
    """True when git's message says the remote refused (or could not be given) credentials."""
    lowered = text.lower()
    return any(marker in lowered for marker in _AUTH_REFUSED)


def refused_transport(err: GitError) -> bool:
    """True when git refused the transport of a URL (``protocol.<name>.allow``)."""
    return err.status is not None and _TRANSPORT_REFUSED in err.words


def _hand_over(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Write ``data`` to ``proc``'s stdin and close it (a git that stopped reading fails on its own)."""
    stdin, proc.stdin = proc.stdin, None  # communicate() then only reads
    assert stdin is not None, "started with a pipe for its input"
    try:
        stdin.write(data)
    except BrokenPipeError:
        pass
    finally:
        try:
            stdin.close()
        except BrokenPipeError:
            pass


class _Said(threading.Thread):
    """What a git process says on ``pipe`` (its stderr), read in a thread as it comes, and kept bounded: all of it,
    or past ``limit`` bytes the first two thirds and the last third of ``limit`` (None: no limit)."""

    def __init__(self, pipe: IO[bytes] | None, limit: int | None) -> None:
        super().__init__(daemon=True)  # a git's child still holding the pipe never holds this process up
        self.pipe, self.limit = pipe, limit
        self.first, self.last, self.size = bytearray(), bytearray(), 0
        self.start()

    def run(self) -> None:
        if self.pipe is None:
            return
        try:
            while chunk := self.pipe.read1(65536):  # type: ignore[attr-defined]
                self.size += len(chunk)
                if self.limit is None:
                    self.first += chunk
                    continue
                self.first += chunk[:max(0, self.limit - len(self.first))]
                self.last += chunk
                del self.last[:max(0, len(self.last) - self.limit // 3)]
        except (OSError, ValueError):
            pass
        finally:
            self.pipe.close()

    def words(self) -> bytes:
        """What git said (the process has exited): waited for a moment at most."""
        self.join(MESSAGE_WAIT)
        if self.limit is None or self.size <= self.limit:
            return bytes(self.first)
        left_out = f"\n[... {self.size - self.limit} bytes left out ...]\n".encode()
        return bytes(self.first[:self.limit * 2 // 3] + left_out + self.last)


__all__ = ["GIT_TIMEOUT", "PROFILES", "SCRATCH", "UPSTREAM", "UPSTREAM_CONTENT", "USER", "Done", "Git", "GitError",
           "environment", "find_git", "git_words", "options", "refused_credentials", "refused_transport"]
