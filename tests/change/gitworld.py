"""Real git for the pull-request tests: a bare remote, a clone holding a package, and a smart-HTTP server.

``GitWorld(tmp)`` makes ``remote.git`` (bare, branch ``main`` holding ``apps/podinfo``: a
HelmRelease with a ``$promotion`` marker and a Pipeline), and ``work`` cloned from it over
``file://``; ``env`` isolates git (its own HOME and global config with an identity, no system
config).  ``GitHttpServer(root)`` (``tests/git_http.py``, shared with the update tests and the
bench) serves the bare repositories under ``root`` over git's smart HTTP protocol on 127.0.0.1
by running ``git http-backend`` as a CGI program for each request (optionally behind HTTP Basic
authentication, and with a hook that runs before a push is answered, to make a concurrent push
land at the right moment).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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

    def tagged_upstream(self) -> Path:
        """An upstream repository beside the world: package ``pkg`` (two ConfigMaps) tagged v1, then v2
        changing both values; its path (``file://PATH.git/pkg`` names the package, as kpt spells it)."""
        from tests.update.world import cm, kptfile

        up = self.tmp / "upstream"
        (up / "pkg").mkdir(parents=True)
        self.git("init", "--quiet", "-b", "main", str(up), cwd=self.tmp)
        for tag, files in (("v1", {"Kptfile": kptfile("pkg"), "a.yaml": cm("a", "1"), "b.yaml": cm("b", "1")}),
                           ("v2", {"a.yaml": cm("a", "2"), "b.yaml": cm("b", "2")})):
            for rel, text in files.items():
                (up / "pkg" / rel).write_text(text)
            self.git("add", "-A", cwd=up)
            self.git("commit", "--quiet", "-m", tag, cwd=up)
            self.git("tag", tag, cwd=up)
        return up

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
