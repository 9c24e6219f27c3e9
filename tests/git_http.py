"""git's smart HTTP protocol on 127.0.0.1 for the tests and the bench: ``git http-backend`` behind http.server.

    with GitHttpServer(root, latency=0.05) as server:
        url = server.url("catalog.git")   # http://127.0.0.1:PORT/catalog.git
        ...
        server.requests                   # ["GET /catalog.git/info/refs?service=git-upload-pack", ...]
        server.connections                # how many connections clients opened

Each request runs ``git http-backend`` as a CGI program over the bare
repositories below ``root`` (protocol v2 passes through the ``Git-Protocol``
header; pushes are allowed).  ``credentials`` (``user:password``) turns on
HTTP Basic authentication for every request, ``push_credentials`` for pushes
only; ``before_push`` runs once when a client starts a push (its
``info/refs?service=git-receive-pack``), to make a concurrent push land at
the right moment.  ``latency`` is slept before each answer and
``connect_latency`` once per new connection: a deliberately simple model of
a distant server (a round trip per request, a TCP+TLS set-up per
connection), so that round trips and connections show in wall time as they
do against a real forge.  Python's ``CGIHTTPRequestHandler`` is not used: it
is deprecated (removed in Python 3.13) and cannot pass a request body sent
chunked, as git sends large ones.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class GitHttpServer:
    """The server, serving from construction until :meth:`close` (or the end of its ``with`` block)."""

    def __init__(self, root: Path, env: dict[str, str] | None = None, *, credentials: str | None = None,
                 push_credentials: str | None = None, before_push: Callable[[], None] | None = None,
                 latency: float = 0.0, connect_latency: float = 0.0) -> None:
        self.root = root
        self.env = env if env is not None else {
            "PATH": os.environ.get("PATH", ""), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
        self.credentials = credentials
        self.push_credentials = push_credentials
        self.before_push = before_push
        self.latency = latency
        self.connect_latency = connect_latency
        self.requests: list[str] = []
        self.connections = 0
        self._count = threading.Lock()
        self.git = shutil.which("git") or "git"
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _git_handler(self))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, repo: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{repo}"

    def reset_counts(self) -> None:
        """Forget the requests and connections counted so far."""
        with self._count:
            self.requests.clear()
            self.connections = 0

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> GitHttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connected(self) -> None:
        with self._count:
            self.connections += 1

    def _requested(self, line: str) -> None:
        with self._count:
            self.requests.append(line)


def _git_handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as git's curl uses it: one connection per git process

        def setup(self) -> None:
            super().setup()
            server._connected()
            time.sleep(server.connect_latency)

        def _serve(self) -> None:
            server._requested(f"{self.command} {self.path}")
            path, _, query = self.path.partition("?")
            body = _body(self)
            pushing = "git-receive-pack" in self.path
            needed = server.credentials or (server.push_credentials if pushing else None)
            if needed is not None:
                expected = "Basic " + base64.b64encode(needed.encode()).decode()
                if self.headers.get("Authorization") != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            if query == "service=git-receive-pack" and server.before_push is not None:
                hook, server.before_push = server.before_push, None
                hook()
            env = {**server.env, "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                   "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                   "REMOTE_USER": "tester", "REMOTE_ADDR": "127.0.0.1", "GIT_HTTP_RECEIVE_PACK": "1"}
            for header, var in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
                if self.headers.get(header):
                    env[var] = self.headers[header]
            proc = subprocess.run([server.git, "-c", "http.receivepack=true", "http-backend"], input=body,
                                  capture_output=True, env=env, timeout=300)
            head, _, payload = proc.stdout.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            time.sleep(server.latency)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request's body, sent with a length or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() != "chunked":
        length = int(handler.headers.get("Content-Length") or 0)
        return handler.rfile.read(length) if length else b""
    chunks = []
    while True:
        size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        chunks.append(handler.rfile.read(size))
        handler.rfile.readline()
