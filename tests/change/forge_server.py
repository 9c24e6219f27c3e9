"""A local forge built from its published API description: the operations krm-merge uses, checked and answered.

``ForgeServer("github", token)`` serves, on 127.0.0.1, the operations of
``tests/change/openapi/github.json`` (the vendored subset of GitHub's description) and
**rejects** (HTTP 400, and a :attr:`ForgeServer.violations` entry) any request whose method
and path are not a described operation, whose path or query parameters do not validate
(an undescribed query parameter included), whose auth header is not the forge's documented
one, or whose JSON body does not validate against the described request schema (a
top-level property the schema does not declare included).  A request with the documented
header but another token gets 401, as the forge would.

Answers are built from the described response schema of the operation's success status
(:meth:`~tests.change.schema_check.Description.build`) with the pull request's state
placed in it, and checked against that schema before they are sent.  The state is a list
of pull requests with the forge's rules that matter here: one open pull request per head
and base (a second is refused as the forge refuses it), the head branch must exist on the
git remote (``branch_exists``), labels and reviewers accumulate.

``limits`` makes it enforce rate limits as GitHub documents them ("Rate limits for the
REST API": :data:`GITHUB_LIMITS`, scaled down by :func:`scaled` for a test's time): a
request past a content-creating (``writes``: POST, PATCH, PUT, DELETE) limit, counted
over a sliding window, the strictest reading, is answered 403 with ``Retry-After`` as
GitHub's secondary limit is; the requests of an ``all`` limit are counted in fixed
windows announced on every answer (``X-RateLimit-Limit``, ``-Remaining``, ``-Reset``,
``-Used``; GitLab's ``RateLimit-*``), and one past it is answered 403 with
``X-RateLimit-Remaining: 0``.  Each such answer is recorded in :attr:`ForgeServer.tripped`:
a client that paces itself never appears there.

``fail(...)`` makes the next matching requests answer an error (a 429 with
``Retry-After``, a 401, a 503) or drop the connection (the forge unreachable);
``fail_raw(...)`` answers them with bytes that need not be HTTP at all (a hostile or
broken forge: a bad status line, a thousand headers, nested JSON, an answer sent a
byte at a time); ``exchanges`` records every request and answer, the token masked.
"""

from __future__ import annotations

import base64
import json
import math
import re
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.change.schema_check import Description

OPENAPI = Path(__file__).parent / "openapi"
# Where each forge's API lives on the server (the description's own paths go after it).
PREFIX = {"github": "/api/v3", "gitea": "/api/v1", "forgejo": "/api/v1", "gitlab": "", "bitbucket": "/2.0"}
API_SUFFIX = {"gitlab": "/api/v4"}  # GitLab's description spells /api/v4 in every path
# Top-level body properties a forge documents in an operation's prose but not in its schema.
PROSE_PROPERTIES = {"bitbucket": {"description"}}
# Query parameters a forge documents outside the operation: Bitbucket's `next` links carry the page
# (its pagination documentation, and the `page` field of every paginated answer).
PROSE_QUERY = {"bitbucket": {"page"}}
# GitLab's grape-swagger output loses is_array: these operations answer a JSON array of the described schema.
ARRAY_ANSWERS = {("gitlab", "get", "/api/v4/projects/{id}/merge_requests"), ("gitlab", "get", "/api/v4/users")}
MASK = "<token>"
GITHUB_LIMITS = (("all", 5000, 3600.0), ("writes", 80, 60.0), ("writes", 500, 3600.0))
"""GitHub's documented limits per token ("Rate limits for the REST API"): 5,000 requests an hour (primary),
80 content-generating requests a minute and 500 an hour (secondary)."""
WRITES = {"post", "patch", "put", "delete"}


def scaled(limits: Sequence[tuple[str, int, float]], factor: int) -> tuple[tuple[str, int, float], ...]:
    """``limits`` ``factor`` times smaller and faster (GitHub's 80 a minute by 10: 8 every 6 s)."""
    return tuple((kind, requests // factor, seconds / factor) for kind, requests, seconds in limits)


def budget(limits: Sequence[tuple[str, int, float]]) -> str:
    """``limits`` as ``KRM_MERGE_FORGE_BUDGET`` spells them: ``all:500/360s,writes:8/6s,...``."""
    return ",".join(f"{kind}:{requests}/{seconds:g}s" for kind, requests, seconds in limits)


class Failure:
    """An error to answer instead of the operation: ``status`` (0: drop the connection), headers, body, how often.

    ``raw``: bytes sent as the whole answer instead (then the connection is closed), the
    first ``at_once`` of them at once and the rest one byte every ``drip`` seconds.
    """

    def __init__(self, method: str | None, path_part: str, status: int, headers: dict[str, str] | None,
                 body: Any, times: int, raw: bytes | None = None, drip: float = 0.0, at_once: int = 0) -> None:
        self.method, self.path_part, self.status = method, path_part, status
        self.headers, self.body, self.times = headers or {}, body, times
        self.raw, self.drip, self.at_once = raw, drip, at_once


class ForgeServer:
    """One forge's described API on 127.0.0.1, for one repository, with one valid token."""

    def __init__(self, forge: str, token: str, *, repo: str = "acme/deploy", job_token: str | None = None,
                 branch_exists: Callable[[str], bool] | None = None, users: dict[str, int] | None = None,
                 tls: ssl.SSLContext | None = None, limits: Sequence[tuple[str, int, float]] = ()) -> None:
        self.forge = forge
        self.api_kind = "gitea" if forge == "forgejo" else forge
        self.token = token
        self.job_token = job_token
        self.repo = repo
        self.branch_exists = branch_exists or (lambda name: True)
        self.users = users or {"alice": 11, "bob": 12}
        self.doc = json.loads((OPENAPI / f"{forge}.json").read_text(encoding="utf-8"))
        self.description = Description(self.doc)
        self.operations = [(method, path, op) for path, item in self.doc["paths"].items()
                           for method, op in item.items() if method != "parameters"]
        self.pulls: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.exchanges: list[dict[str, Any]] = []
        self.failures: list[Failure] = []
        self.limits = tuple(limits)
        self.tripped: list[str] = []  # each answer a limit gave: what it was, which request
        self.arrivals: list[tuple[float, bool]] = []  # (time.monotonic(), content-creating) of each request let in
        self.windows: dict[int, list[float]] = {}  # an ``all`` limit's fixed window: [start (epoch seconds), count]
        self.lock = threading.Lock()
        self.closing = threading.Event()  # ends a drip still running when the test is over
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.scheme = "https" if tls is not None else "http"
        if tls is not None:  # HTTPS: each accepted connection's handshake with the server's certificate
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def api(self) -> str:
        """What ``--forge-api`` is for this server."""
        return self.origin + PREFIX[self.forge] + API_SUFFIX.get(self.forge, "")

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, status: int, *, method: str | None = None, path_part: str = "", headers: dict[str, str] | None = None,
             body: Any = None, times: int = 1) -> None:
        """Answer the next ``times`` requests matching ``method`` and containing ``path_part`` with ``status``."""
        self.failures.append(Failure(method, path_part, status, headers, body, times))

    def fail_raw(self, raw: bytes, *, method: str | None = None, path_part: str = "", times: int = 1,
                 drip: float = 0.0, at_once: int | None = None) -> None:
        """Answer the next ``times`` matching requests with ``raw`` as it is, then close the connection.

        With ``drip``: ``at_once`` bytes (default all) at once, then one byte every ``drip``
        seconds until all are sent, the client hangs up or the server closes.
        """
        self.failures.append(Failure(method, path_part, 0, None, None, times, raw, drip,
                                     len(raw) if at_once is None else at_once))

    def raw_failure(self, method: str, raw_path: str, headers: dict[str, str]) -> Failure | None:
        """The raw answer the request gets, if one is due (recorded in :attr:`exchanges` as ``raw``)."""
        path = urlsplit(raw_path).path
        with self.lock:
            for failure in self.failures:
                if failure.raw is not None and failure.times > 0 and failure.method in (None, method.lower()) \
                        and failure.path_part in path:
                    failure.times -= 1
                    self.exchanges.append({"request": {"method": method.upper(), "path": self._masked(raw_path),
                                                       "auth": self._auth_form(headers)},
                                           "response": {"raw": len(failure.raw), "drip": failure.drip}})
                    return failure
        return None

    def open_pulls(self) -> list[dict[str, Any]]:
        return [p for p in self.pulls if p["state"] == "open"]

    # --- one request ---------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], Any]:
        split = urlsplit(raw_path)
        record: dict[str, Any] = {"request": {"method": method.upper(), "path": self._masked(raw_path),
                                              "auth": self._auth_form(headers)}}
        if body:
            record["request"]["body"] = _json_or_text(body)
        with self.lock:
            self.exchanges.append(record)
            limited = self._limited(method.lower(), f"{method.upper()} {split.path}")
            if limited is not None:
                status, answer_headers, answer = limited
            else:
                status, answer_headers, answer = self._answer(method.lower(), split.path, split.query, headers, body)
                answer_headers = {**self._limit_headers(), **answer_headers}
            record["response"] = {"status": status, "body": answer}
        return status, answer_headers, answer

    def _limited(self, method: str, what: str) -> tuple[int, dict[str, str], Any] | None:
        """The answer of a request past a limit (recorded in :attr:`tripped`), or None: it is let in and counted."""
        now, wall, writes = time.monotonic(), time.time(), method in WRITES
        for index, (kind, requests, seconds) in enumerate(self.limits):
            if kind == "writes" and writes:
                inside = [t for t, w in self.arrivals if w and t > now - seconds]
                if len(inside) >= requests:
                    wait = math.ceil(min(inside) + seconds - now)
                    self.tripped.append(f"{what}: over {requests} content-creating requests per {seconds:g} s")
                    return 403, {"Retry-After": str(max(wait, 1))}, {
                        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you "
                                   "try again.", "documentation_url": "https://docs.github.com/rest"}
            elif kind == "all":
                window = self._window(index, wall)
                if window[1] >= requests:
                    self.tripped.append(f"{what}: over {requests} requests in the window of {seconds:g} s")
                    return 403, self._limit_headers(), {"message": "API rate limit exceeded"}
        self.arrivals.append((now, writes))
        for index, (kind, _, _) in enumerate(self.limits):
            if kind == "all":
                self._window(index, wall)[1] += 1
        return None

    def _window(self, index: int, wall: float) -> list[float]:
        """An ``all`` limit's current fixed window (a new one once the last is over)."""
        seconds = self.limits[index][2]
        window = self.windows.get(index)
        if window is None or wall >= window[0] + seconds:
            window = self.windows[index] = [wall, 0]
        return window

    def _limit_headers(self) -> dict[str, str]:
        """The first ``all`` limit's window, as GitHub (``X-RateLimit-*``) or GitLab (``RateLimit-*``) say it."""
        found = [(i, requests, seconds) for i, (kind, requests, seconds) in enumerate(self.limits) if kind == "all"]
        if not found:
            return {}
        index, requests, seconds = found[0]
        start, used = self._window(index, time.time())
        prefix = "RateLimit-" if self.api_kind == "gitlab" else "X-RateLimit-"
        return {prefix + "Limit": str(requests), prefix + "Remaining": str(max(0, requests - int(used))),
                prefix + "Reset": str(math.ceil(start + seconds)), prefix + "Used": str(int(used))}

    def _answer(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes
                ) -> tuple[int, dict[str, str], Any]:
        for failure in self.failures:
            if failure.raw is None and failure.times > 0 and failure.method in (None, method) \
                    and failure.path_part in path:
                failure.times -= 1
                return failure.status, failure.headers, failure.body
        if not path.startswith(PREFIX[self.forge]):
            return self._violation(f"{method.upper()} {path}: not under the API prefix {PREFIX[self.forge]}")
        found = self._operation(method, path[len(PREFIX[self.forge]):])
        if found is None:
            return self._violation(f"{method.upper()} {path}: no such operation in the description")
        template, op, params = found
        problems = self._check_parameters(template, op, params, parse_qs(query, keep_blank_values=True))
        auth = self._check_auth(headers)
        if auth == "violation":
            problems.append(f"auth header is not {self.forge}'s documented form: {self._auth_form(headers)}")
        data = None
        schema = self._body_schema(template, op)
        if body:
            if not headers.get("content-type", "").startswith("application/json"):
                problems.append("a body without Content-Type: application/json")
            try:
                data = json.loads(body)
            except ValueError:
                problems.append("the body is not JSON")
            if schema is None:
                problems.append("a body where the operation takes none")
            elif data is not None:
                problems += self.description.errors(data, schema, "body")
                declared = self.description.property_names(schema)
                if isinstance(data, dict) and declared is not None:
                    allowed = declared | PROSE_PROPERTIES.get(self.forge, set())
                    problems += [f"body: property {k!r} is not in the description" for k in data if k not in allowed]
        elif schema is not None and self._body_required(template, op):
            problems.append("the operation needs a body")
        if problems:
            return self._violation(f"{method.upper()} {template}: " + "; ".join(problems))
        if auth != "ok":
            return 401, {}, {"message": "Bad credentials"}
        status, given = _MODELS[self.api_kind](self, method, template, params, parse_qs(query), data or {})
        if status >= 400:
            return status, {}, given
        return status, {}, self._shaped(method, template, op, status, given)

    def _violation(self, message: str) -> tuple[int, dict[str, str], Any]:
        self.violations.append(message)
        return 400, {}, {"message": f"request does not match the API description: {message}"}

    def operation_of(self, method: str, raw_path: str) -> tuple[str, dict[str, Any], dict[str, str]] | None:
        """The described operation an HTTP method and path (as sent, query and all) ask for."""
        path = urlsplit(raw_path).path
        if not path.startswith(PREFIX[self.forge]):
            return None
        return self._operation(method.lower(), path[len(PREFIX[self.forge]):])

    def body_schema(self, template: str, op: dict[str, Any]) -> Any:
        """The described schema of an operation's JSON body (None: it takes none)."""
        return self._body_schema(template, op)

    def answer_schema(self, method: str, template: str, op: dict[str, Any], status: int) -> Any:
        """The described schema of an operation's answer with ``status``."""
        response = self.description.resolve(op["responses"].get(str(status)) or op["responses"].get(status))
        schema = response.get("schema") or response.get("content", {}).get("application/json", {}).get("schema")
        if (self.api_kind, method, template) in ARRAY_ANSWERS:
            schema = {"type": "array", "items": schema}
        return schema

    def _operation(self, method: str, path: str) -> tuple[str, dict[str, Any], dict[str, str]] | None:
        segments = path.split("/")
        for op_method, template, op in self.operations:
            if op_method != method:
                continue
            parts = template.split("/")
            if len(parts) != len(segments):
                continue
            params: dict[str, str] = {}
            for part, segment in zip(parts, segments):
                name = re.fullmatch(r"\{(\w+)\}", part)
                if name:
                    params[name.group(1)] = unquote(segment)
                elif part != segment:
                    break
            else:
                return template, op, params
        return None

    def _parameters(self, template: str, op: dict[str, Any]) -> list[dict[str, Any]]:
        shared = self.doc["paths"][template].get("parameters", [])
        return [self.description.resolve(p) for p in [*shared, *op.get("parameters", [])]]

    def _check_parameters(self, template: str, op: dict[str, Any], params: dict[str, str],
                          query: dict[str, list[str]]) -> list[str]:
        problems = []
        declared = {p["name"]: p for p in self._parameters(template, op) if p.get("in") in ("path", "query")}
        for name, value in [*params.items(), *((k, v[-1]) for k, v in query.items())]:
            spec = declared.get(name)
            if spec is None and name in PROSE_QUERY.get(self.forge, set()) and name not in params:
                spec = {"name": name, "in": "query", "type": "integer", "minimum": 1}
            if spec is None:
                problems.append(f"parameter {name!r} is not in the description")
                continue
            schema = spec.get("schema", spec)  # OpenAPI 3 nests it; Swagger 2 inlines it
            problems += self.description.errors(_typed(value, self.description.resolve(schema)), schema, name)
        for name, spec in declared.items():
            if spec.get("required") and spec["in"] == "query" and name not in query:
                problems.append(f"required query parameter {name!r} missing")
        return problems

    def _body_schema(self, template: str, op: dict[str, Any]) -> Any:
        if "requestBody" in op:
            content = self.description.resolve(op["requestBody"]).get("content", {})
            return content.get("application/json", {}).get("schema")
        for p in self._parameters(template, op):
            if p.get("in") == "body":
                return p.get("schema")
        return None

    def _body_required(self, template: str, op: dict[str, Any]) -> bool:
        if "requestBody" in op:
            return bool(self.description.resolve(op["requestBody"]).get("required"))
        return any(p.get("in") == "body" and p.get("required") for p in self._parameters(template, op))

    def _check_auth(self, headers: dict[str, str]) -> str:
        """``ok``, ``refused`` (the documented header, another token) or ``violation`` (not the documented header)."""
        if self.api_kind == "gitlab":
            if "private-token" in headers:
                return "ok" if headers["private-token"] == self.token else "refused"
            if "job-token" in headers:
                return "ok" if headers["job-token"] == (self.job_token or self.token) else "refused"
            return "violation"
        value = headers.get("authorization", "")
        scheme, _, credential = value.partition(" ")
        expected = {"github": ("Bearer",), "gitea": ("token",), "bitbucket": ("Bearer", "Basic")}[self.api_kind]
        if scheme not in expected or not credential:
            return "violation"
        if scheme == "Basic":
            credential = base64.b64decode(credential).decode()
        return "ok" if credential == self.token else "refused"

    def _auth_form(self, headers: dict[str, str]) -> str:
        for name in ("authorization", "private-token", "job-token"):
            if name in headers:
                value = headers[name]
                scheme = value.split(" ", 1)[0] if name == "authorization" and " " in value else ""
                return f"{name}: {scheme + ' ' if scheme else ''}{MASK}"
        return "(none)"

    def _masked(self, text: str) -> str:
        return text.replace(self.token, MASK)

    def _shaped(self, method: str, template: str, op: dict[str, Any], status: int, given: Any) -> Any:
        """``given`` in the described response schema of ``status``, checked against it."""
        schema = self.answer_schema(method, template, op, status)
        answer = self.description.build(schema, given)
        problems = self.description.errors(answer, schema, "answer")
        if problems:
            raise AssertionError(f"the fake {self.forge} built an answer its description refuses: {problems}")
        return answer


def _typed(value: str, schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    if kind == "array":
        return value.split(",")
    return value


def _json_or_text(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def _handler(server: ForgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            raw = server.raw_failure(self.command, self.path, headers)
            if raw is not None:
                self._send_raw(raw)
                return
            status, answer_headers, answer = server.handle(self.command, self.path, headers, body)
            if status == 0:  # the forge unreachable: the connection drops without an answer
                self.close_connection = True
                self.connection.shutdown(2)
                return
            data = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            for name, value in answer_headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_raw(self, failure: Failure) -> None:
            """``failure.raw`` as the whole answer (its first ``at_once`` bytes at once, then dripped), then close."""
            self.close_connection = True
            data = failure.raw or b""
            try:
                self.wfile.write(data[:failure.at_once])
                self.wfile.flush()
                for i in range(failure.at_once, len(data)):
                    if server.closing.wait(failure.drip):
                        return
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
            except OSError:  # the client hung up: the drip is over
                return

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


# --- each forge's pull requests -----------------------------------------------------------------


def _new_pull(server: ForgeServer, head: str, base: str, title: str, body: str) -> tuple[int, dict[str, Any]]:
    if not server.branch_exists(head):
        return 422, {"message": f"head branch {head} does not exist on the repository"}
    if any(p["head"] == head and p["base"] == base for p in server.open_pulls()):
        return 422, {"message": f"A pull request already exists for {head} into {base}"}
    pull = {"number": len(server.pulls) + 1, "head": head, "base": base, "title": title, "body": body,
            "state": "open", "labels": [], "reviewers": []}
    server.pulls.append(pull)
    return 201, pull


def _pull(server: ForgeServer, number: Any) -> dict[str, Any] | None:
    return next((p for p in server.pulls if str(p["number"]) == str(number)), None)


def _github(server: ForgeServer, method: str, template: str, params: dict[str, str], query: dict[str, list[str]],
            data: dict[str, Any]) -> tuple[int, Any]:
    if method == "get" and f"{params.get('owner')}/{params.get('repo')}" == server.repo:
        owner, head, base = server.repo.split("/")[0], query.get("head", [""])[0], query.get("base", [None])[0]
        found = [p for p in server.open_pulls() if f"{owner}:{p['head']}" == head and base in (None, p["base"])]
        return 200, [_github_shape(server, p) for p in found]
    return _github_like(server, method, template, params, data, number=params.get("pull_number")
                        or params.get("issue_number"), edited=200, reviewers=lambda pull: _github_shape(server, pull))


def _gitea(server: ForgeServer, method: str, template: str, params: dict[str, str], query: dict[str, list[str]],
           data: dict[str, Any]) -> tuple[int, Any]:
    if method == "get" and f"{params.get('owner')}/{params.get('repo')}" == server.repo:
        page, limit = int(query.get("page", ["1"])[0]), int(query.get("limit", ["30"])[0])
        return 200, [_github_shape(server, p) for p in server.open_pulls()[(page - 1) * limit: page * limit]]
    return _github_like(server, method, template, params, data, number=params.get("index"), edited=201,
                        reviewers=lambda pull: [{"state": "REQUEST_REVIEW"} for _ in pull["reviewers"]])


def _github_like(server: ForgeServer, method: str, template: str, params: dict[str, str], data: dict[str, Any], *,
                 number: str | None, edited: int, reviewers: Callable[[dict[str, Any]], Any]) -> tuple[int, Any]:
    """GitHub's pull requests, which Gitea's follow: the two differ in listing, an edit's status and one answer."""
    if f"{params.get('owner')}/{params.get('repo')}" != server.repo:
        return 404, {"message": "Not Found"}
    if method == "post" and template.endswith("/pulls"):
        status, pull = _new_pull(server, data["head"], data["base"], data.get("title", ""), data.get("body", ""))
        return status, _github_shape(server, pull) if status < 400 else pull
    pull = _pull(server, number)
    if pull is None:
        return 404, {"message": "Not Found"}
    if template.endswith("/labels"):
        pull["labels"] += [name for name in data["labels"] if name not in pull["labels"]]
        return 200, [{"name": name} for name in pull["labels"]]
    if template.endswith("/requested_reviewers"):
        pull["reviewers"] += [r for r in [*data.get("reviewers", []), *data.get("team_reviewers", [])]
                              if r not in pull["reviewers"]]
        return 201, reviewers(pull)
    pull.update({k: data[k] for k in ("title", "body") if k in data})
    return edited, _github_shape(server, pull)


def _github_shape(server: ForgeServer, pull: dict[str, Any]) -> dict[str, Any]:
    return {"number": pull["number"], "html_url": f"https://forge.example/{server.repo}/pull/{pull['number']}",
            "title": pull["title"], "body": pull["body"], "state": pull["state"],
            "head": {"ref": pull["head"]}, "base": {"ref": pull["base"]}}


def _gitlab(server: ForgeServer, method: str, template: str, params: dict[str, str], query: dict[str, list[str]],
            data: dict[str, Any]) -> tuple[int, Any]:
    if template == "/api/v4/users":
        name = query.get("username", [""])[0]
        return 200, ([{"id": server.users[name], "username": name}] if name in server.users else [])
    if params.get("id") != server.repo:
        return 404, {"message": "404 Project Not Found"}
    if method == "get" and "merge_request_iid" not in params:
        found = [p for p in server.open_pulls() if p["head"] == query.get("source_branch", [""])[0]
                 and p["base"] == query.get("target_branch", [""])[0]]
        return 200, [_gitlab_shape(server, p) for p in found]
    if method == "post":
        status, pull = _new_pull(server, data["source_branch"], data["target_branch"], data["title"],
                                 data.get("description", ""))
        pull.setdefault("labels", [])
        if status < 400:
            pull["labels"] += data.get("labels", [])
        return status, _gitlab_shape(server, pull) if status < 400 else pull
    pull = _pull(server, params.get("merge_request_iid"))
    if pull is None:
        return 404, {"message": "404 Not found"}
    if method == "put":
        if "title" in data:
            pull["title"] = data["title"]
        if "description" in data:
            pull["body"] = data["description"]
        pull["labels"] += [name for name in data.get("add_labels", []) if name not in pull["labels"]]
        if "reviewer_ids" in data:
            pull["reviewers"] = list(data["reviewer_ids"])
    return 200, _gitlab_shape(server, pull)


def _gitlab_shape(server: ForgeServer, pull: dict[str, Any]) -> dict[str, Any]:
    shape = {"iid": pull["number"], "web_url": f"https://forge.example/{server.repo}/-/merge_requests/{pull['number']}",
             "title": pull["title"], "description": pull["body"], "state": "opened",
             "source_branch": pull["head"], "target_branch": pull["base"]}
    if pull["reviewers"]:  # described as one UserBasic (grape-swagger's is_array loss); the first one
        shape["reviewers"] = {"id": pull["reviewers"][0]}
    return shape


def _bitbucket(server: ForgeServer, method: str, template: str, params: dict[str, str], query: dict[str, list[str]],
               data: dict[str, Any]) -> tuple[int, Any]:
    if f"{params.get('workspace')}/{params.get('repo_slug')}" != server.repo:
        return 404, {"type": "error", "error": {"message": "Repository not found"}}
    if method == "get" and "pull_request_id" not in params:
        state = query.get("state", ["OPEN"])[0]
        found = [p for p in server.pulls if state == "OPEN" and p["state"] == "open"]
        return 200, {"values": [_bitbucket_shape(server, p) for p in found], "pagelen": 50, "size": len(found),
                     "page": 1}
    if method == "post":
        status, pull = _new_pull(server, data["source"]["branch"]["name"], data["destination"]["branch"]["name"],
                                 data.get("title", ""), data.get("description", ""))
        if status < 400:
            pull["reviewers"] = [r.get("uuid") or r.get("account_id") for r in data.get("reviewers", [])]
        return status, _bitbucket_shape(server, pull) if status < 400 else pull
    pull = _pull(server, params.get("pull_request_id"))
    if pull is None:
        return 404, {"type": "error", "error": {"message": "Pull request not found"}}
    if method == "put":
        if "title" in data:
            pull["title"] = data["title"]
        if "description" in data:
            pull["body"] = data["description"]
        if "reviewers" in data:
            pull["reviewers"] = [r.get("uuid") or r.get("account_id") for r in data["reviewers"]]
    return 200, _bitbucket_shape(server, pull)


def _bitbucket_shape(server: ForgeServer, pull: dict[str, Any]) -> dict[str, Any]:
    return {"type": "pullrequest", "id": pull["number"], "title": pull["title"], "description": pull["body"],
            "summary": {"raw": pull["body"]}, "state": "OPEN",
            "links": {"html": {"href": f"https://forge.example/{server.repo}/pull-requests/{pull['number']}"}},
            "source": {"branch": {"name": pull["head"]}}, "destination": {"branch": {"name": pull["base"]}},
            "reviewers": [({"type": "user", "uuid": r} if str(r).startswith("{") else {"type": "user", "account_id": r})
                          for r in pull["reviewers"]]}


_MODELS: dict[str, Callable[..., tuple[int, Any]]] = {
    "github": _github, "gitea": _gitea, "gitlab": _gitlab, "bitbucket": _bitbucket}
