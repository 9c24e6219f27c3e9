"""The one HTTP client of the forges: JSON over ``urllib.request``, bounded retries, redacted errors.

Why the standard library (docs/pull-requests.md has the figures): the adapters need
five or six JSON calls each, which ``urllib.request`` does with TLS verification, proxies
from the environment (``HTTPS_PROXY``, ``NO_PROXY``) and no new package in the image;
httpx (with httpcore, h11, anyio, sniffio, idna, certifi) or one official client per forge
would add megabytes to the image, tens of milliseconds to start-up and a release cadence to
follow, for no feature these calls use.  It is imported only when a pull request is opened.

Rate limits: a 429, a 503, or a 403 that says it is a rate limit (``Retry-After``,
``X-RateLimit-Remaining: 0``) is retried after the wait the forge asks for
(``Retry-After`` seconds or date, else ``X-RateLimit-Reset``, else 1, 2, 4 s), at most
:data:`ATTEMPTS` times and never waiting longer than :data:`MAX_WAIT` at once: a longer
wait is an error saying how long.  Redirects are not followed (the token would go to
wherever they point); the token travels only in the header the forge documents.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from krm_merge import __version__
from krm_merge.change.errors import ChangeError
from krm_merge.change.redact import Redactor

ATTEMPTS = 4
MAX_WAIT = 60.0  # seconds one wait may last; the forge asking for more is an error
TIMEOUT = 30.0  # seconds per request
MAX_RESPONSE = 16 * 1024 * 1024  # bytes read of one answer
USER_AGENT = f"krm-merge/{__version__}"


class HttpError(ChangeError):
    """A forge answered with an error status (or not at all); ``status`` is 0 when it was unreachable."""

    def __init__(self, detail: str, status: int) -> None:
        super().__init__("pull request", detail)
        self.status = status


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


class JsonClient:
    """JSON requests to one forge API (``base_url``), with its auth headers and the run's redactor.

    ``headers`` are sent with every request (an API version, an ``Accept`` type); ``sleep``
    and ``opener`` are the clock and the network (a test may hand in its own); ``forge``
    names the forge in messages.
    """

    def __init__(self, base_url: str, auth_headers: Mapping[str, str], redactor: Redactor, *, forge: str,
                 headers: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep,
                 opener: Any = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ChangeError("pull request", f"the forge API URL must be http(s)://HOST/..., got "
                              f"{redactor.redact(base_url)!r}")
        self.base_url = base_url.rstrip("/")
        self.auth_headers = dict(auth_headers)
        self.headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
        self.redactor = redactor
        self.forge = forge
        self.sleep = sleep
        self.opener = opener or urllib.request.build_opener(_NoRedirect())

    def call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
             what: str) -> Response:
        """``METHOD base_url/path?query`` with ``body`` as JSON; the JSON answer.  ``what`` words errors."""
        url = self.base_url + path + (("?" + urlencode(query, doseq=True)) if query else "")
        data = None if body is None else json.dumps(body).encode()
        headers = {**self.headers, **({"Content-Type": "application/json"} if data is not None else {})}
        for attempt in range(1, ATTEMPTS + 1):
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            for name, value in self.auth_headers.items():
                request.add_unredirected_header(name, value)  # never sent on to another URL
            status, answer_headers, raw = self._send(request, what)
            wait = self._rate_limit_wait(status, answer_headers, attempt)
            if wait is None:
                break
            if wait > MAX_WAIT:
                raise HttpError(f"{what}: {self.forge} is rate limiting (HTTP {status}) and asks to wait "
                                f"{wait:.0f} s (more than {MAX_WAIT:.0f}); retry later", status)
            if attempt == ATTEMPTS:
                raise HttpError(f"{what}: {self.forge} is still rate limiting (HTTP {status}) after "
                                f"{ATTEMPTS} attempts; retry later", status)
            self.sleep(wait)
        if status >= 300:
            raise HttpError(f"{what}: {self._describe(status, raw)}", status)
        try:
            parsed = json.loads(raw) if raw.strip() else None
        except ValueError:
            raise HttpError(f"{what}: {self.forge} answered HTTP {status} with a body that is not JSON", status) from None
        return Response(status, answer_headers, parsed)

    def _send(self, request: urllib.request.Request, what: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with self.opener.open(request, timeout=TIMEOUT) as answer:
                return answer.status, _headers(answer.headers), answer.read(MAX_RESPONSE)
        except urllib.error.HTTPError as err:
            with err:
                return err.code, _headers(err.headers), err.read(MAX_RESPONSE)
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            host = urlsplit(self.base_url).netloc
            raise HttpError(self.redactor.redact(f"{what}: {self.forge} at {host} is unreachable: {reason}"),
                            0) from None

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
        reset = headers.get("x-ratelimit-reset")
        if reset is not None and reset.isdigit():
            return max(0.0, float(reset) - time.time())
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
        return self.redactor.redact(head + (f": {message}" if message else ""))


def _headers(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()} if headers is not None else {}


def _retry_after_seconds(value: str) -> float | None:
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_message(raw: bytes) -> str:
    """The forge's own words from an error body (``message``, ``error``, ``errors``), one line, bounded."""
    try:
        data = json.loads(raw)
    except ValueError:
        text = raw.decode("utf-8", "replace").strip()
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
