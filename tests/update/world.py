"""A throw-away upstream git repository, a package fetched from it with the real ``kpt pkg get``,
and the same update done by ``kpt pkg update`` and by ``krm-merge update`` on two copies.

Recipe from the kpt-oracle notes: HOME/TMPDIR point into the test's temp
directory (kpt's clone cache and litter stay there), the upstream package
lives in ``pkg/`` of a non-bare repository on branch ``main``, and the
argument to ``kpt pkg get`` spells ``.git`` to split repository and directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from krm_merge.commands import update
from tests import helpers
from tests.conftest import require_binary

Files = dict[str, "str | None"]  # relative path -> text (None: delete)
KPT_ANNOTATIONS = ("internal.kpt.dev/upstream-identifier",)


class World:
    """Upstream repo ``up``, kpt's workspace ``kpt/`` and ours ``ours/`` (each holds package ``local``)."""

    def __init__(self, tmp: Path, monkeypatch: Any = None) -> None:
        self.tmp = tmp
        self.up = tmp / "up"
        self.env = dict(
            os.environ, HOME=str(tmp / "home"), TMPDIR=str(tmp / "tmp"),
            GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e",
            GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null",
            XDG_CACHE_HOME=str(tmp / "cache"),
        )
        for d in ("home", "tmp", "up/pkg", "kpt", "ours"):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        if monkeypatch is not None:  # our in-process update uses the same isolated cache and git identity
            for key in ("XDG_CACHE_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
                monkeypatch.setenv(key, self.env[key])
        self.git("init", "-q", "-b", "main")

    # -- upstream -----------------------------------------------------------------

    def git(self, *args: str, cwd: Path | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd or self.up, env=self.env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"git {args}: {proc.stderr}"
        return proc.stdout.strip()

    def commit(self, files: Files, tag: str | None = None, message: str = "change") -> str:
        """Change upstream's package files and commit (optionally tag); returns the commit id."""
        write_tree(self.up / "pkg", files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        if tag:
            self.git("tag", tag)
        return self.git("rev-parse", "HEAD")

    # -- the two local copies -----------------------------------------------------------

    @property
    def kpt_pkg(self) -> Path:
        return self.tmp / "kpt" / "local"

    @property
    def our_pkg(self) -> Path:
        return self.tmp / "ours" / "local"

    def kpt(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["kpt", *args], cwd=cwd or self.tmp / "kpt", env=self.env, capture_output=True, text=True, timeout=120)
        if check:
            assert proc.returncode == 0, f"kpt {args}: {proc.stdout}\n{proc.stderr}"
        return proc

    def get(self, ref: str = "main", directory: str = "pkg") -> None:
        """``kpt pkg get`` into kpt's workspace; ours starts as an identical copy."""
        self.kpt("pkg", "get", f"file://{self.up}.git/{directory}@{ref}", "local")
        shutil.copytree(self.kpt_pkg, self.our_pkg)

    def edit_local(self, files: Files) -> None:
        """The same local edits in both copies."""
        write_tree(self.kpt_pkg, files)
        write_tree(self.our_pkg, files)

    def update_kpt(self, ref: str | None = None, strategy: str = "resource-merge") -> subprocess.CompletedProcess[str]:
        target = "local" if ref is None else f"local@{ref}"
        return self.kpt("pkg", "update", target, "--strategy", strategy, check=False)

    def update_ours(self, ref: str | None = None, strategy: str = "resource-merge", *extra: str) -> int:
        target = str(self.our_pkg) if ref is None else f"{self.our_pkg}@{ref}"
        return update.main([target, "--strategy", strategy, *extra])

    def both(self, ref: str | None = None, strategy: str = "resource-merge") -> tuple[int, int]:
        """Run both updates; returns (kpt's exit code, ours)."""
        return self.update_kpt(ref, strategy).returncode, self.update_ours(ref, strategy)


def filtering_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A ``World`` (real git required) whose upstream serves partial fetches (``uploadpack.allowFilter``), as
    GitHub's does."""
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    world.git("config", "uploadpack.allowFilter", "true")
    return world


def fetched_by_hand(world: World, commit: str, repo: str | None = None, ref: str = "v1", directory: str = "/pkg") -> None:
    """``world``'s package locked at ``commit`` as ``kpt pkg get`` leaves it, written by hand (no kpt needed):
    a Kptfile with ``upstream`` and ``upstreamLock`` (``repo`` default: ``file://`` of the upstream) and one
    ConfigMap."""
    world.our_pkg.mkdir(parents=True)
    git = f"    repo: {repo or f'file://{world.up}'}\n    directory: {directory}\n    ref: {ref}\n"
    (world.our_pkg / "Kptfile").write_text(kptfile("local", (
        f"upstream:\n  type: git\n  git:\n{git}  updateStrategy: resource-merge\n"
        f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {commit}\n"
    )))
    (world.our_pkg / "cm.yaml").write_text(cm("cm", "1"))


def spy_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record every process the git cache starts (they still run), ``subprocess.run`` and ``Popen`` alike:
    the list fills as the update goes."""
    calls: list[list[str]] = []
    real_popen = subprocess.Popen

    class Spy(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, cmd: list[str], *a: object, **k: object) -> None:
            calls.append(list(cmd))
            super().__init__(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", Spy)  # subprocess.run starts its process through it too
    return calls


def write_tree(root: Path, files: Files) -> None:
    for rel, text in files.items():
        target = root / rel
        if text is None:
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def read_tree(root: Path) -> dict[str, Any]:
    """Every file of a package: KRM files as normalised data (Kptfiles included), others as text."""
    return helpers.read_tree(root, skip_dirs=(".git",), krm=normalise)


def normalise(data: Any) -> Any:
    """Drop kpt's upstream-identifier annotation (its place is checked byte for byte in test_kpt_identity_markers)."""
    return helpers.normalise(data, annotations=KPT_ANNOTATIONS)


def cm(name: str, value: str, extra: str = "") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"{value}\"\n{extra}"


def kptfile(name: str, body: str = "") -> str:
    return f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{body}"
