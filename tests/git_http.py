"""A git smart-HTTP server on 127.0.0.1 for tests and the bench: ``git http-backend`` behind Python's http.server.

    with serve(root, latency=0.05) as server:
        url = server.url("catalog.git")   # http://127.0.0.1:PORT/catalog.git
        ...
        server.requests                   # [(method, path, service)], in order

Each request runs ``git http-backend`` as a CGI program (protocol v2 passes
through the ``Git-Protocol`` header).  ``latency`` is slept before each answer
and ``connect_latency`` once per new connection: a deliberately simple model
of a distant server (one round trip a request, a TCP+TLS set-up a connection),
so that round trips and connections show in wall time as they do against a
real forge; with both at 0 it measures the local cost only.  Python's
``CGIHTTPRequestHandler`` is not used: it is deprecated (removed in Python
3.13) and cannot pass request bodies sent chunked, as git sends large ones.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


class GitHttpServer(ThreadingHTTPServer):
    """The server; ``requests`` and ``connections`` count what clients asked."""

    daemon_threads = True

    def __init__(self, root: Path, latency: float, connect_latency: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.latency = latency
        self.connect_latency = connect_latency
        self.requests: list[tuple[str, str, str]] = []
        self.connections = 0
        self._count = threading.Lock()
        self.backend = [shutil.which("git") or "git", "http-backend"]

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{name}"

    def record(self, method: str, path: str, service: str) -> None:
        with self._count:
            self.requests.append((method, path, service))

    def connected(self) -> None:
        with self._count:
            self.connections += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as git's curl uses it
    server: GitHttpServer

    def setup(self) -> None:
        super().setup()
        self.server.connected()
        time.sleep(self.server.connect_latency)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:
        self._backend(b"")

    def do_POST(self) -> None:
        self._backend(self._body())

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _backend(self, body: bytes) -> None:
        parts = urlsplit(self.path)
        service = parts.query.removeprefix("service=") if "service=" in parts.query else parts.path.rsplit("/", 1)[-1]
        self.server.record(self.command, parts.path, service)
        env = {
            "PATH": os.environ.get("PATH", ""), "GIT_PROJECT_ROOT": str(self.server.root), "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null",
            "REQUEST_METHOD": self.command, "PATH_INFO": parts.path, "QUERY_STRING": parts.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for header, var in (("Git-Protocol", "GIT_PROTOCOL"), ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if self.headers.get(header):
                env[var] = self.headers[header]
        proc = subprocess.run(self.server.backend, input=body, capture_output=True, env=env, timeout=300)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        time.sleep(self.server.latency)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def serve(root: Path, latency: float = 0.0, connect_latency: float = 0.0) -> Iterator[GitHttpServer]:
    """Serve the repositories below ``root`` over smart HTTP until the block ends."""
    server = GitHttpServer(root, latency, connect_latency)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
