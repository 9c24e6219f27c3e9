"""The one HTTP client of the forges: JSON over ``urllib.request``, bounded in time and size, redacted errors.

Why the standard library (docs/pull-requests.md has the figures): the adapters need
five or six JSON calls each, which ``urllib.request`` does with TLS verification, proxies
from the environment (``HTTPS_PROXY``, ``NO_PROXY``) and no new package in the image;
httpx (with httpcore, h11, anyio, sniffio, idna, certifi) or one official client per forge
would add megabytes to the image, tens of milliseconds to start-up and a release cadence to
follow, for no feature these calls use.  It is imported only when a pull request is opened.

Time: a request (connect, TLS, send, the whole answer read) has a deadline,
:data:`REQUEST_TIMEOUT` seconds (``KRM_MERGE_FORGE_REQUEST_TIMEOUT``), and all the requests
and retry waits of one client (one run's pull request) share a budget, :data:`RUN_TIMEOUT`
seconds (``KRM_MERGE_FORGE_RUN_TIMEOUT``).  A socket timeout alone bounds each read, not
the answer: a forge sending one byte every few seconds would hold the run (and the
package's lock) for ever.  So every read and write of the connection is given the time
the request has left (:class:`_DeadlineSocket`), and the answer is read in chunks with the
deadline checked between them.

Pacing: before it is sent, every request takes its place in the forge's request budget
(:mod:`.pacing`: the forge's documented limits, or ``KRM_MERGE_FORGE_BUDGET``; shared by
every process of the same API host and identity through a state file), waiting until there
is one, so a fleet keeps under the forge's limits instead of running into them.  The wait
is part of the run's time: one the run's budget cannot afford is an error saying how long
the forge's budget needs.

Rate limits: a 429, a 503, or a 403 that says it is a rate limit (``Retry-After``,
``X-RateLimit-Remaining: 0``) is retried after the wait the forge asks for
(``Retry-After`` seconds or date, else ``X-RateLimit-Reset``, else 1, 2, 4 s), at most
:data:`ATTEMPTS` times and never waiting longer than :data:`MAX_WAIT` at once, nor longer
than the run's budget has left: a longer wait is an error saying how long.  The wait is
written to the pacing state, so every process of the identity waits it too, and what the
headers of any answer say is left until the reset (``X-RateLimit-Remaining``/``-Reset``,
GitLab's ``RateLimit-Remaining``/``-Reset``) is kept there as well.  Redirects are
not followed (the token would go to wherever they point); the token travels only in the
header the forge documents.

Whatever the forge answers, a failure is one :class:`HttpError`: the HTTP stack's
exceptions (a bad status line, more than 100 headers, a header line over 64 KiB, an answer
cut short, a broken chunk), an answer over :data:`MAX_RESPONSE` bytes, JSON nested deeper
than :data:`MAX_DEPTH` levels (refused before it is parsed: the parser would recurse), and
rate-limit headers that are not ASCII digits (or an HTTP date).  The forge's words in a
message are redacted and their terminal controls escaped (:func:`krm_merge.krm.display.escape_controls`).
"""

from __future__ import annotations

import email.utils
import functools
import http.client
import io
import json
import math
import os
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, Optional
from urllib.parse import urlencode, urlsplit

from krm_merge import __version__, files, numbers
from krm_merge.change.errors import ChangeError
from krm_merge.change.forges.pacing import WRITES, Pacer, Rate, Tally, budget_from, default_budget
from krm_merge.change.redact import Redactor
from krm_merge.krm.display import escape_controls
from krm_merge.records import Record

ATTEMPTS = 4
MAX_WAIT = 60.0  # seconds one wait may last; the forge asking for more is an error
REQUEST_TIMEOUT = 60.0  # seconds one request may take in all: connect, send, the whole answer read
RUN_TIMEOUT = 300.0  # seconds all the requests and waits of one run's pull request may take
REQUEST_TIMEOUT_ENV = "KRM_MERGE_FORGE_REQUEST_TIMEOUT"
RUN_TIMEOUT_ENV = "KRM_MERGE_FORGE_RUN_TIMEOUT"
MAX_RESPONSE = 16 * 1024 * 1024  # bytes of one answer; more is an error
MAX_DEPTH = 64  # levels of JSON nesting in an answer (the forges' answers nest fewer than 10)
CHUNK = 64 * 1024  # bytes read at once, the deadline checked between reads
MAX_SHOWN = 120  # characters of a forge's status line or header quoted in a message
USER_AGENT = f"krm-merge/{__version__}"

# Retry-After is seconds or an HTTP date (RFC 9110 10.2.3; senders use IMF-fixdate);
# [0-9], not \d: str.isdigit() and \d take '²' and other digits int() and float() refuse.
_SECONDS = re.compile(r"[0-9]{1,10}")
_HTTP_DATE = re.compile(r"[A-Za-z]{3}, [0-9]{2} [A-Za-z]{3} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT")
# JSON nesting, counted on the bytes: brackets outside strings, both kinds as one
_BRACKETS_ONLY = bytes(range(256)).translate(None, b'"[]{}')
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


class HttpError(ChangeError):
    """A forge answered with an error status, or not at all, or not readably; ``status`` is 0 without a status."""

    def __init__(self, detail: str, status: int) -> None:
        super().__init__("pull request", detail)
        self.status = status


class Limits(Record):
    """How long one request may take in all, and all the requests and retry waits of one run (seconds); the
    request budget (None: the forge's documented one) and the folder of the pacing state ('': the cache's)."""

    request: float = REQUEST_TIMEOUT
    run: float = RUN_TIMEOUT
    budget: Optional[tuple[Rate, ...]] = None
    state: str = ""


def limits_from(environ: Mapping[str, str]) -> Limits:
    """The limits, from ``KRM_MERGE_FORGE_REQUEST_TIMEOUT``, ``KRM_MERGE_FORGE_RUN_TIMEOUT`` and
    ``KRM_MERGE_FORGE_BUDGET`` when set; the pacing state under ``environ``'s cache folder.

    A value that is not a positive number of seconds, or not a budget, is a ``pull request`` error naming the
    variable.
    """
    return Limits(_seconds(environ, REQUEST_TIMEOUT_ENV, REQUEST_TIMEOUT),
                  _seconds(environ, RUN_TIMEOUT_ENV, RUN_TIMEOUT), budget_from(environ),
                  files.cache_folder("forge", environ))


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    # numbers.decimal, not float(): float() takes '1e3', '1_0' and Arabic-Indic digits
    try:
        value = numbers.decimal(raw, name)
    except numbers.NumberError:
        value = 0.0
    if value <= 0:
        raise ChangeError("pull request", f"{name} must be a number of seconds above 0, got {numbers.shown(raw)}")
    return value


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None  # urllib then raises HTTPError with the 3xx status


class Response:
    """A forge's answer: status, headers, and the JSON body (None when empty)."""

    __slots__ = ("status", "headers", "data")

    def __init__(self, status: int, headers: Mapping[str, str], data: Any) -> None:
        self.status = status
        self.headers = headers
        self.data = data


class _Unreadable(Exception):
    """The forge's answer cannot be read; the argument says why, in words fit for a message."""


class JsonClient:
    """JSON requests to one forge API (``base_url``), with its auth headers and the run's redactor.

    ``headers`` are sent with every request (an API version, an ``Accept`` type); ``sleep``,
    ``clock`` and ``wall`` are the waits, the time and the wall clock the pacing state
    shares with other processes (a test may hand in its own); ``forge`` names the forge in
    messages and picks its documented budget; ``limits`` are the deadlines and budget
    (default: :func:`limits_from` the process's environment); ``tally`` counts the requests
    sent and the time waited for the budget (a fleet hands one to all its clients).  The
    run's time is this client's: one per pull request; the request budget is the API
    host's and identity's, whoever sends.
    """

    def __init__(self, base_url: str, auth_headers: Mapping[str, str], redactor: Redactor, *, forge: str,
                 headers: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, limits: Limits | None = None,
                 wall: Callable[[], float] = time.time, tally: Tally | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ChangeError("pull request", f"the forge API URL must be http(s)://HOST/..., got "
                              f"{redactor.redact(base_url)!r}")
        self.base_url = base_url.rstrip("/")
        self.host = parts.netloc.rpartition("@")[2]
        self.auth_headers = dict(auth_headers)
        self.headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
        self.redactor = redactor
        self.forge = forge
        self.sleep = sleep
        self.clock = clock
        self.limits = limits or limits_from(os.environ)
        self.left = self.limits.run  # seconds of the run's budget not yet spent
        self.wall = wall
        self.tally = tally if tally is not None else Tally()
        identity = "\n".join(f"{name.lower()}: {value}" for name, value in sorted(self.auth_headers.items()))
        self.pacer = Pacer(self.limits.state or files.cache_folder("forge"), self.host, identity,
                           default_budget(forge) if self.limits.budget is None else self.limits.budget,
                           wall=wall, warn=self.tally.warn)

    def call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
             what: str) -> Response:
        """``METHOD base_url/path?query`` with ``body`` as JSON; the JSON answer.  ``what`` words errors."""
        url = self.base_url + path + (("?" + urlencode(query, doseq=True)) if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {**self.headers, **({"Content-Type": "application/json"} if data is not None else {})}
        for attempt in range(1, ATTEMPTS + 1):
            status, answer_headers, raw = self._exchange(method, url, data, headers, what)
            wait = self._rate_limit_wait(status, answer_headers, attempt)
            if wait is None:
                break
            self.pacer.block(self.wall() + wait)  # every process of this identity waits too, this one included
            if wait > MAX_WAIT:
                raise HttpError(f"{what}: {self.forge} is rate limiting (HTTP {status}) and asks to wait "
                                f"{wait:.0f} s (more than {MAX_WAIT:.0f}); retry later", status)
            if attempt == ATTEMPTS:
                raise HttpError(f"{what}: {self.forge} is still rate limiting (HTTP {status}) after "
                                f"{ATTEMPTS} attempts; retry later", status)
            if wait >= self.left:
                raise HttpError(f"{what}: {self.forge} is rate limiting (HTTP {status}) and asks to wait "
                                f"{wait:.0f} s, more than this run's {self.limits.run:g} s for the forge have left "
                                f"({RUN_TIMEOUT_ENV}); retry later", status)
        if status >= 300 or status < 200:
            raise HttpError(f"{what}: {self._describe(status, raw)}", status)
        try:
            parsed = bounded_json(raw) if raw.strip() else None
        except _Unreadable as err:
            raise HttpError(f"{what}: {self.forge}'s answer (HTTP {status}) {err}", status) from None
        return Response(status, answer_headers, parsed)

    # --- the one exchange ------------------------------------------------------------------

    def _exchange(self, method: str, url: str, data: bytes | None, headers: Mapping[str, str],
                  what: str) -> tuple[int, dict[str, str], bytes]:
        """Send one request and read its whole answer: the one place the forge is spoken to.

        First its place in the forge's request budget (:meth:`_paced`), then, within the
        request's deadline (the smaller of :attr:`Limits.request` and what the run's budget has
        left), whatever the server sends; the time it took is taken from the run's budget, and
        the place is settled with what the answer's headers say is left.
        """
        ticket = self._paced(method.upper() in WRITES, what)
        answer_headers: dict[str, str] = {}
        try:
            status, answer_headers, raw = self._send(method, url, data, headers, what)
        finally:
            self.pacer.settle(ticket, _remaining(answer_headers, self.wall()))
        return status, answer_headers, raw

    def _paced(self, writes: bool, what: str) -> str:
        """Wait for a place in the forge's request budget (``writes``: a content-creating request) and take it.

        The waits are the run's time: one longer than the run's budget has left is an error
        saying how long the forge's budget needs, and no request is sent.
        """
        while True:
            if self.left <= 0:
                raise HttpError(f"{what}: the requests to {self.forge} took this run's {self.limits.run:g} s "
                                f"({RUN_TIMEOUT_ENV}); retry later", 0)
            ticket, wait, why = self.pacer.reserve(writes, min(self.left, self.limits.request))
            if ticket is not None:
                self.tally.sent(self.forge, self.host)
                return ticket
            if wait >= self.left:
                raise self._error(f"{what}: {self.forge} at {self.host}: its request budget ({why}) needs "
                                  f"{_duration(wait)} more, longer than the {self.left:.3g} s left of this run's "
                                  f"{self.limits.run:g} s for the forge ({RUN_TIMEOUT_ENV}); retry later")
            self.sleep(wait)
            self.left -= wait
            self.tally.waited(self.forge, self.host, wait)

    def _send(self, method: str, url: str, data: bytes | None, headers: Mapping[str, str],
              what: str) -> tuple[int, dict[str, str], bytes]:
        """The request on the wire and its whole answer, within the request's deadline."""
        by_run = self.left < self.limits.request
        seconds = self.left if by_run else self.limits.request
        deadline = _Deadline(seconds, self.clock)
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
        for name, value in self.auth_headers.items():
            request.add_unredirected_header(name, value)  # never sent on to another URL
        opener = urllib.request.build_opener(_NoRedirect(), _HTTPHandler(deadline), _HTTPSHandler(deadline))
        start = self.clock()
        try:
            try:
                with opener.open(request, timeout=seconds) as answer:
                    return answer.status, _headers(answer.headers), _read(answer, deadline)
            except urllib.error.HTTPError as err:
                with err:
                    return err.code, _headers(err.headers), _read(err, deadline)
        except TimeoutError:
            raise self._timed_out(what, seconds, by_run) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise self._timed_out(what, seconds, by_run) from None
            raise self._error(f"{what}: {self.forge} at {self.host} is unreachable: {err.reason}") from None
        except http.client.RemoteDisconnected:  # an HTTPException and an OSError: the forge dropped the line
            raise self._error(f"{what}: {self.forge} at {self.host} is unreachable: it closed the connection "
                              "without answering") from None
        except http.client.HTTPException as err:
            raise self._error(f"{what}: {self.forge}'s answer cannot be read: {_http_failure(err)}") from None
        except _Unreadable as err:
            raise self._error(f"{what}: {self.forge}'s answer cannot be read: {err}") from None
        except OSError as err:  # a reset or TLS failure while reading
            raise self._error(f"{what}: {self.forge} at {self.host} broke the connection: {_shown(str(err))}") from None
        except ValueError as err:  # a chunk size that is not hex (before 3.12); UnicodeError: bytes no codec takes
            raise self._error(f"{what}: {self.forge}'s answer cannot be read: {type(err).__name__}: "
                              f"{_shown(str(err))}") from None
        finally:
            self.left -= self.clock() - start

    def _timed_out(self, what: str, seconds: float, by_run: bool) -> HttpError:
        if by_run:
            return self._error(f"{what}: {self.forge} at {self.host} did not answer in full within the "
                               f"{seconds:.3g} s left of this run's {self.limits.run:g} s for the forge "
                               f"({RUN_TIMEOUT_ENV})")
        return self._error(f"{what}: {self.forge} at {self.host} did not answer in full within {seconds:g} s "
                           f"({REQUEST_TIMEOUT_ENV})")

    def _error(self, message: str) -> HttpError:
        """An error without a status; the text redacted, its terminal controls escaped."""
        return HttpError(escape_controls(self.redactor.redact(message)), 0)

    def _rate_limit_wait(self, status: int, headers: Mapping[str, str], attempt: int) -> float | None:
        """Seconds to wait before retrying, or None when the answer is not a rate limit or overload."""
        retry_after = headers.get("retry-after")
        limited = status in (429, 503) or (status == 403 and (
            retry_after is not None or headers.get("x-ratelimit-remaining") == "0"))
        if not limited:
            return None
        if retry_after is not None:
            seconds = _retry_after_seconds(retry_after)
            if seconds is not None:
                return seconds
        reset = (headers.get("x-ratelimit-reset") or "").strip()
        if _SECONDS.fullmatch(reset):
            return max(0.0, float(reset) - self.wall())
        return float(2 ** (attempt - 1))

    def _describe(self, status: int, raw: bytes) -> str:
        message = _error_message(raw)
        if status in (401, 403):
            head = f"authentication refused by {self.forge} (HTTP {status}); check the token and its scopes"
        elif 300 <= status < 400:
            head = f"{self.forge} answered with a redirect (HTTP {status}), not followed: give the current --forge-api"
        elif status == 404:
            head = (f"not found on {self.forge} (HTTP 404): check the repository (--forge-repo) and --forge-api; "
                    "a token without access to a private repository gets 404 too")
        else:
            head = f"{self.forge} answered HTTP {status}"
        return escape_controls(self.redactor.redact(head + (f": {message}" if message else "")))


# --- the connection, bounded by the request's deadline ---------------------------------------


class _Deadline:
    """When a request must be over; :meth:`left` raises ``TimeoutError`` once it is."""

    __slots__ = ("end", "clock")

    def __init__(self, seconds: float, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.end = clock() + seconds

    def left(self) -> float:
        """Seconds left (above 0); ``TimeoutError`` when none are."""
        left = self.end - self.clock()
        if left <= 0:
            raise TimeoutError("the request's deadline passed")
        return left


class _DeadlineSocket:
    """A connected socket (plain or TLS) whose every read and write gets only the time its request has left.

    http.client reads the status line, headers and body through :meth:`makefile`'s stream,
    which reads through this object: a server sending a byte at a time is cut off at the
    deadline, where a timeout per read would wait for ever.  The reference count of open
    streams is kept as :class:`socket.socket` keeps it (urllib closes the connection while
    the answer's stream still reads from it).
    """

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self._sock = sock
        self._deadline = deadline
        self._io_refs = 0
        self._closed = False

    def recv_into(self, buffer: Any, *args: Any) -> int:
        self._sock.settimeout(self._deadline.left())
        return self._sock.recv_into(buffer, *args)

    def recv(self, size: int, *args: Any) -> bytes:
        self._sock.settimeout(self._deadline.left())
        return self._sock.recv(size, *args)

    def send(self, data: Any, *args: Any) -> int:
        self._sock.settimeout(self._deadline.left())
        return self._sock.send(data, *args)

    def sendall(self, data: Any, *args: Any) -> None:
        self._sock.settimeout(self._deadline.left())
        self._sock.sendall(data, *args)

    def makefile(self, mode: str = "rb", buffering: int | None = None, **_: Any) -> io.BufferedReader:
        """A binary reader of the answer (http.client asks for ``rb`` only)."""
        self._io_refs += 1
        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]  # reads through recv_into above
        return io.BufferedReader(raw, buffering or io.DEFAULT_BUFFER_SIZE)

    def _decref_socketios(self) -> None:
        if self._io_refs > 0:
            self._io_refs -= 1
        if self._closed:
            self.close()

    def close(self) -> None:
        self._closed = True
        if self._io_refs <= 0:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _HTTPConnection(http.client.HTTPConnection):
    """http.client's connection, connected within the deadline, then used through a :class:`_DeadlineSocket`."""

    def __init__(self, host: str, *, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._deadline = deadline
        self._create_connection = self._connect_by_deadline

    def _connect_by_deadline(self, address: Any, timeout: Any = None, source_address: Any = None) -> socket.socket:
        sock = socket.create_connection(address, self._deadline.left(), source_address)
        sock.settimeout(self._deadline.left())  # the TLS handshake (one deadline in ssl) gets what is left
        return sock

    def connect(self) -> None:
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)


class _HTTPSConnection(_HTTPConnection, http.client.HTTPSConnection):
    """The same over TLS: the handshake wraps the plain socket, the deadline wraps the TLS one."""


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(functools.partial(_HTTPConnection, deadline=self._deadline), req, **kwargs)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(functools.partial(_HTTPSConnection, deadline=self._deadline), req, **kwargs)


def _read(answer: Any, deadline: _Deadline) -> bytes:
    """The whole body, chunk by chunk, the deadline checked between chunks; past :data:`MAX_RESPONSE`, refused."""
    chunks: list[bytes] = []
    size = 0
    while True:
        deadline.left()
        chunk = answer.read(CHUNK)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_RESPONSE:
            raise _Unreadable(f"it is larger than {MAX_RESPONSE:,} bytes")
        chunks.append(chunk)
    missing = getattr(answer, "length", None)  # what Content-Length announced and never came
    if isinstance(missing, int) and missing > 0:
        raise _Unreadable(f"it ended after {size} bytes of its body, {missing} more announced")
    return b"".join(chunks)


def _http_failure(err: http.client.HTTPException) -> str:
    """What was wrong with an answer http.client refused, in words; the forge's bytes quoted escaped and cut."""
    if isinstance(err, http.client.BadStatusLine):
        return f"its status line is '{_shown(str(err.args[0]) if err.args else '')}'"
    if isinstance(err, http.client.IncompleteRead):  # a chunked body cut short, or a chunk size that is not hex
        return "its body ended early or its chunks are malformed"
    if type(err) in (http.client.HTTPException, http.client.LineTooLong):  # their words say it all
        return _shown(str(err))  # 'got more than 100 headers', 'got more than 65536 bytes when reading header line'
    return f"{type(err).__name__}: {_shown(str(err))}"


def _shown(text: str) -> str:
    """A forge's text as a message quotes it: terminal controls escaped, cut at :data:`MAX_SHOWN` characters."""
    shown = escape_controls(text.strip())
    return shown if len(shown) <= MAX_SHOWN else shown[:MAX_SHOWN] + f"… ({len(text)} characters)"


def _headers(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()} if headers is not None else {}


def _remaining(headers: Mapping[str, str], now: float) -> tuple[int, float] | None:
    """What an answer's rate-limit headers say is left until when (requests, epoch seconds), ASCII digits only:
    GitHub's and Gitea's ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``, GitLab's ``RateLimit-*``."""
    for prefix in ("x-ratelimit-", "ratelimit-"):
        left = (headers.get(prefix + "remaining") or "").strip()
        reset = (headers.get(prefix + "reset") or "").strip()
        if _SECONDS.fullmatch(left) and _SECONDS.fullmatch(reset) and float(reset) > now:
            return int(left), float(reset)
    return None


def _duration(seconds: float) -> str:
    """``42 s``, ``17 min``, ``1.5 h``: how long a budget needs, for a person."""
    if seconds < 120:
        return f"{math.ceil(seconds)} s"
    return f"{math.ceil(seconds / 60)} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _retry_after_seconds(value: str) -> float | None:
    """``Retry-After`` in seconds: ASCII digits, or an HTTP date; None for anything else."""
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    if not _HTTP_DATE.fullmatch(value):
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError, OSError):  # a date no calendar has (Feb 31, year 0)
        return None


def bounded_json(raw: bytes) -> Any:
    """``raw`` parsed as JSON (UTF-8), nested at most :data:`MAX_DEPTH` levels; :class:`_Unreadable` otherwise.

    The depth is counted before parsing: Python's parser recurses once per level and
    raises RecursionError past about a thousand.
    """
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unreadable("is not JSON (not UTF-8)") from None
    depth_ok = _nesting_within(raw, MAX_DEPTH)
    if depth_ok is None:
        raise _Unreadable("is not JSON")
    if not depth_ok:
        raise _Unreadable(f"nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(raw)
    except ValueError:
        raise _Unreadable("is not JSON") from None


def _nesting_within(raw: bytes, limit: int) -> bool | None:
    """Whether the brackets of JSON text ``raw`` nest at most ``limit`` deep; None when they do not pair up.

    Linear passes in C: escaped backslashes and quotes are dropped, then everything but
    quotes and brackets (multi-byte UTF-8 never holds those bytes), then strings (between
    quotes); ``{}`` count as ``[]``.  Each pass of ``replace('[]', '')`` then removes the
    innermost level everywhere, so a text ``limit`` deep is empty after ``limit`` passes;
    a run of ``limit + 1`` openers ends it at once.  Where the text stops being JSON the
    parser stops too, so what it would recurse into is what is counted here.
    """
    text = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_ONE_KIND, _BRACKETS_ONLY).replace(b'""', b"")
    brackets = b"".join(text.split(b'"')[::2])
    too_deep = b"[" * (limit + 1)
    for _ in range(limit):
        if not brackets:
            return True
        if too_deep in brackets:
            return False
        fewer = brackets.replace(b"[]", b"")
        if len(fewer) == len(brackets):
            return None
        brackets = fewer
    return not brackets


def _error_message(raw: bytes) -> str:
    """The forge's own words from an error body (``message``, ``error``, ``errors``), one line, bounded."""
    try:
        data = bounded_json(raw)
    except _Unreadable:
        text = raw[:4096].decode("utf-8", "replace").strip()
        return " ".join(text.split())[:300] if text and not text.lstrip().startswith("<") else ""
    parts: list[str] = []
    if isinstance(data, dict):
        for key in ("message", "error", "error_description", "errors"):
            value = data.get(key)
            if isinstance(value, dict):  # Bitbucket: {"error": {"message": ..., "detail": ...}}
                value = "; ".join(str(v) for k, v in value.items() if k in ("message", "detail") and v)
            if value:
                parts.append(value if isinstance(value, str) else json.dumps(value))
    text = "; ".join(parts) or json.dumps(data)
    return " ".join(text.split())[:500]
