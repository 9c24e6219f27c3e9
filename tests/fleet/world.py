"""A fleet of kpt packages: one upstream repository with tagged versions, consumers fetched with the real
``kpt pkg get`` at different versions, each with its own local edits, in a monorepo of clusters.

Every command runs as a real process (``krm-merge`` and ``kpt``) with an
isolated ``HOME``, git configuration and cache (``XDG_CACHE_HOME``), from the
folder :attr:`Fleet.tmp`, so a fleet run and single runs on a copy of the
monorepo name every package by the same relative path and say the same words.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import helpers

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
UPSTREAM_DIR = "pkg"


def deployment(image: str, replicas: int = 1, extra: str = "") -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n{extra}spec:\n  replicas: {replicas}\n"
            f"  template:\n    spec:\n      containers:\n      - name: web\n        image: {image}\n")


def configmap(value: str, name: str = "settings") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  level: \"{value}\"\n"


KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: web\ninfo:\n  description: the web app\n"
# What each tag of the upstream holds (path below pkg/ -> text; None deletes).
VERSIONS: dict[str, dict[str, str | None]] = {
    "v1": {"Kptfile": KPTFILE, "deploy.yaml": deployment("web:1.0"), "settings.yaml": configmap("1")},
    "v2": {"deploy.yaml": deployment("web:2.0"), "settings.yaml": configmap("2")},
    "v3": {"deploy.yaml": deployment("web:3.0"), "settings.yaml": configmap("3"), "extra.yaml": configmap("x", "extra")},
    "v4": {"deploy.yaml": deployment("web:4.0"), "settings.yaml": configmap("4")},
}


class Fleet:
    """``up`` (the upstream repository: ``pkg/`` and ``other/``), ``up2`` (another one), ``mono`` (the consumers)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.up, self.up2, self.mono = tmp / "up", tmp / "up2", tmp / "mono"
        self.env = dict(
            os.environ, HOME=str(tmp / "home"), TMPDIR=str(tmp / "tmp"), XDG_CACHE_HOME=str(tmp / "cache"),
            GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e",
            GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null",
        )
        self.env.pop("JOB_COMPLETION_INDEX", None)
        self.env.pop("KRM_MERGE_SHARDS", None)
        for d in ("home", "tmp", "cache", "up", "up2", "mono", "kpt"):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        self._fetched: dict[tuple[str, str], Path] = {}
        self.tags: dict[str, str] = {}
        for repo in (self.up, self.up2):
            self.git(["init", "-q", "-b", "main"], repo)
        for tag, files in VERSIONS.items():
            write_files(self.up / UPSTREAM_DIR, files)
            write_files(self.up / "other", {"Kptfile": KPTFILE.replace("web", "other"), "o.yaml": configmap(tag, "o")})
            self.git(["add", "-A"], self.up)
            self.git(["commit", "-qm", tag], self.up)
            self.git(["tag", tag], self.up)
            self.tags[tag] = self.git(["rev-parse", "HEAD"], self.up)
        write_files(self.up2 / UPSTREAM_DIR, VERSIONS["v1"])
        self.git(["add", "-A"], self.up2)
        self.git(["commit", "-qm", "v1"], self.up2)
        self.git(["tag", "v1"], self.up2)

    @property
    def spec(self) -> str:
        """``--upstream`` as kpt's own form spells the package: ``REPO.git/DIRECTORY``."""
        return f"file://{self.up}.git/{UPSTREAM_DIR}"

    def git(self, args: list[str], cwd: Path) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"git {args}: {proc.stderr}"
        return proc.stdout.strip()

    def consumer(self, rel: str, ref: str, *, repo: Path | None = None, directory: str = UPSTREAM_DIR,
                 edits: dict[str, str | None] | None = None) -> Path:
        """``mono/REL``: the package fetched by ``kpt pkg get`` at ``ref`` (once per version, then copied), edited."""
        source = repo or self.up
        key = (f"{source}/{directory}", ref)
        if key not in self._fetched:
            name = f"{source.name}-{directory}-{ref}"
            proc = subprocess.run(["kpt", "pkg", "get", f"file://{source}.git/{directory}@{ref}", name],
                                  cwd=self.tmp / "kpt", env=self.env, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
            self._fetched[key] = self.tmp / "kpt" / name
        target = self.mono / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self._fetched[key], target)
        if edits:
            write_files(target, edits)
        return target

    def copy(self, name: str) -> Path:
        """A copy of the monorepo as it is, beside it (for single runs)."""
        where = self.tmp / name
        shutil.copytree(self.mono, where / "mono", symlinks=True)
        return where

    def krm_merge(self, args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
                  ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KRM_MERGE, *args], cwd=cwd or self.tmp, env=env or self.env, capture_output=True,
                              text=True, timeout=300)

    def fleet(self, *extra: str, ref: str = "v3", cwd: Path | None = None, env: dict[str, str] | None = None,
              roots: tuple[str, ...] = ("mono",)) -> subprocess.CompletedProcess[str]:
        return self.krm_merge(["update", *roots, "--upstream", self.spec, "--ref", ref, *extra], cwd, env)


def spread(fleet: Fleet, names: list[str]) -> Fleet:
    """Consumers ``clusters/NAME``, at v1 and v2 in turn, each with a local ConfigMap of its own."""
    for n, name in enumerate(names):
        fleet.consumer(f"clusters/{name}", ("v1", "v2")[n % 2], edits={"mine.yaml": configmap(name, "mine")})
    return fleet


def write_files(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        target = root / rel
        if text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root``, byte for byte."""
    return helpers.read_tree(root)


def report_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
