"""Real git for the pull-request tests: a bare remote, a clone holding a package, and a smart-HTTP server.

``GitWorld(tmp)`` makes ``remote.git`` (bare, branch ``main`` holding ``apps/podinfo``: a
HelmRelease with a ``$promotion`` marker and a Pipeline), and ``work`` cloned from it over
``file://``; ``env`` isolates git (its own HOME and global config with an identity, no system
config).  ``GitHttpServer(root)`` serves the bare repositories under ``root`` over git's smart
HTTP protocol on 127.0.0.1 by running ``git http-backend`` as a CGI program for each request
(optionally behind HTTP Basic authentication, and with a hook that runs before a push is
answered, to make a concurrent push land at the right moment).
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HELMRELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: prod
spec:
  chart:
    spec:
      chart: podinfo
      version: 6.2.0 # {"$promotion": "flux-system:podinfo:prod"}
"""
PIPELINE = """\
apiVersion: pipelines.weave.works/v1alpha1
kind: Pipeline
metadata:
  name: podinfo
  namespace: flux-system
spec:
  appRef:
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    name: podinfo
  environments:
  - name: dev
    targets:
    - namespace: dev
  - name: prod
    targets:
    - namespace: prod
"""
UNRELATED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  a: '1'\n"


class GitWorld:
    """A bare remote and a work tree cloned from it, in ``tmp``, with git isolated from the machine's config."""

    def __init__(self, tmp: Path, files: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        home = tmp / "home"
        home.mkdir(parents=True, exist_ok=True)
        gitconfig = home / ".gitconfig"
        gitconfig.write_text("[user]\n\tname = Release Bot\n\temail = bot@example.com\n"
                             "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
        self.env = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig),
                    "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": str(home / ".config"),
                    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        for name in ("GITHUB_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "GITEA_TOKEN", "BITBUCKET_TOKEN",
                     "KRM_MERGE_FORGE_TOKEN", "KRM_MERGE_SECRETS_DIR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                     "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
            self.env.pop(name, None)
        self.remote = tmp / "repos" / "acme" / "deploy.git"
        self.remote.parent.mkdir(parents=True)
        self.git("init", "--quiet", "--bare", "-b", "main", str(self.remote), cwd=tmp)
        seed = tmp / "seed"
        self.git("clone", "--quiet", self.remote.as_uri(), str(seed), cwd=tmp)
        for rel, text in (files or {"apps/podinfo/release.yaml": HELMRELEASE, "apps/podinfo/pipeline.yaml": PIPELINE,
                                    "apps/podinfo/notes.yaml": UNRELATED}).items():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            (seed / rel).write_text(text)
        self.git("add", "-A", cwd=seed)
        self.git("commit", "--quiet", "-m", "initial", cwd=seed)
        self.git("push", "--quiet", "origin", "main", cwd=seed)
        self.work = tmp / "work"
        self.git("clone", "--quiet", self.remote.as_uri(), str(self.work), cwd=tmp)
        self.package = self.work / "apps" / "podinfo"

    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd or self.work, env=self.env, capture_output=True, text=True,
                              timeout=120)
        if check:
            assert proc.returncode == 0, f"git {args}: {proc.stderr}"
        return proc.stdout.strip()

    def remote_git(self, *args: str) -> str:
        return self.git("--git-dir", str(self.remote), *args, cwd=self.tmp)

    def remote_branch(self, name: str) -> str | None:
        out = self.remote_git("for-each-ref", "--format=%(objectname)", f"refs/heads/{name}")
        return out or None

    def remote_file(self, ref: str, path: str) -> str:
        return self.remote_git("show", f"{ref}:{path}")

    def changed_files(self, ref: str) -> list[str]:
        """The files the tip commit of ``ref`` on the remote changes."""
        return self.remote_git("diff-tree", "-r", "--no-commit-id", "--name-only", ref).split()

    def push_from_elsewhere(self, branch: str, text: str = "someone else's change\n") -> str:
        """Another clone pushes a commit to ``branch`` (created from main if missing); its commit id."""
        other = self.tmp / f"other-{len(list(self.tmp.glob('other-*')))}"
        self.git("clone", "--quiet", self.remote.as_uri(), str(other), cwd=self.tmp)
        if self.remote_branch(branch):
            self.git("checkout", "--quiet", branch, cwd=other)
        else:
            self.git("checkout", "--quiet", "-b", branch, cwd=other)
        (other / "elsewhere.txt").write_text(text)
        self.git("add", "-A", cwd=other)
        self.git("commit", "--quiet", "-m", "a human's commit", cwd=other)
        self.git("push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", cwd=other)
        return self.git("rev-parse", "HEAD", cwd=other)


class GitHttpServer:
    """git's smart HTTP protocol for the bare repositories under ``root``, served by ``git http-backend``.

    ``credentials`` (``user:password``) turns on HTTP Basic authentication for every request,
    ``push_credentials`` for pushes only (reading stays open); ``before_push`` runs once when a client starts a push (its ``info/refs?service=git-receive-pack``).
    """

    def __init__(self, root: Path, env: dict[str, str], *, credentials: str | None = None,
                 push_credentials: str | None = None, before_push: Callable[[], None] | None = None) -> None:
        self.root = root
        self.env = env
        self.credentials = credentials
        self.push_credentials = push_credentials
        self.before_push = before_push
        self.requests: list[str] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _git_handler(self))
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, repo: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{repo}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _git_handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            server.requests.append(f"{self.command} {self.path}")
            path, _, query = self.path.partition("?")
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
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else _read_chunked(self) if self.headers.get(
                "Transfer-Encoding") == "chunked" else b""
            env = {**server.env, "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                   "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                   "REMOTE_USER": "tester", "REMOTE_ADDR": "127.0.0.1", "GIT_HTTP_RECEIVE_PACK": "1"}
            if self.headers.get("Content-Encoding"):
                env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            proc = subprocess.run(["git", "-c", "http.receivepack=true", "http-backend"], input=body,
                                  capture_output=True, env=env, timeout=120)
            head, _, payload = proc.stdout.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _read_chunked(handler: BaseHTTPRequestHandler) -> bytes:
    data = b""
    while True:
        size = int(handler.rfile.readline().strip(), 16)
        if size == 0:
            handler.rfile.readline()
            return data
        data += handler.rfile.read(size)
        handler.rfile.readline()
