"""Promotions racing on one repository: N clones of one bare repository served over ``git http-backend``.

Shared by ``tests/change/test_promote_race.py`` and ``bench/cases_race.py``: the repository holds
``apps/appI/release.yaml`` (a HelmRelease whose chart version carries the marker
``flux-system:appI:prod``) for each I, and ``apps/shared/release.yaml`` (marker
``flux-system:shared:prod``); every racer is a clone of its own over HTTP, and all the
``krm-merge promote apps --set ... --push`` processes are started before any is waited for.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.git_http import GitHttpServer

START = "1.0.0"


def release(name: str, version: str) -> str:
    """A HelmRelease whose chart version is marked for ``flux-system:NAME:prod``."""
    return (f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n"
            f"  namespace: prod\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: {name}\n"
            f'      version: {version} # {{"$promotion": "flux-system:{name}:prod"}}\n')


class RaceWorld:
    """The bare repository, its HTTP server, and a git environment of its own (identity, no system config)."""

    def __init__(self, tmp: Path, apps: int) -> None:
        self.tmp = tmp
        home = tmp / "home"
        home.mkdir(parents=True, exist_ok=True)
        config = home / ".gitconfig"
        config.write_text("[user]\n\tname = Promoter\n\temail = promoter@example.com\n"
                          "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
        self.env = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1",
                    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        self.bare = tmp / "repos" / "fleet.git"
        self.bare.parent.mkdir(parents=True)
        self.git("init", "--quiet", "--bare", "-b", "main", str(self.bare))
        seed = tmp / "seed"
        self.git("clone", "--quiet", self.bare.as_uri(), str(seed))
        for name in [f"app{i}" for i in range(apps)] + ["shared"]:
            (seed / "apps" / name).mkdir(parents=True)
            (seed / "apps" / name / "release.yaml").write_text(release(name, START))
        self.git("add", "-A", cwd=seed)
        self.git("commit", "--quiet", "-m", "initial", cwd=seed)
        self.git("push", "--quiet", "origin", "main", cwd=seed)
        self.initial = self.git("rev-parse", "HEAD", cwd=seed)
        self.server = GitHttpServer(tmp / "repos", self.env)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.tmp, env=self.env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, f"git {args}: {done.stderr}"
        return done.stdout.strip()

    def clone(self, name: str) -> Path:
        """A clone of its own over HTTP."""
        path = self.tmp / "clones" / name
        self.git("clone", "--quiet", self.server.url("fleet.git"), str(path))
        return path

    def on_main(self, rel: str) -> str:
        return self.git("--git-dir", str(self.bare), "show", f"main:{rel}") + "\n"

    def commits_since_initial(self) -> int:
        return int(self.git("--git-dir", str(self.bare), "rev-list", "--count", f"{self.initial}..main"))

    def close(self) -> None:
        self.server.close()


class Racer:
    """One ``promote --push`` run: its exit code, stderr, whether its commit landed and how many pushes that took
    (from its report; 0 when it stood aside)."""

    def __init__(self, code: int, stderr: str) -> None:
        self.code = code
        self.stderr = stderr
        found = re.search(r"\((\d+) push\(es\)\)", stderr)
        self.landed = found is not None  # else nothing was left to push: another writer's value stood
        self.pushes = int(found.group(1)) if found else 0


def race(world: RaceWorld, sets: list[str], *, hang_guard: float = 900.0) -> tuple[list[Racer], float]:
    """One clone per ``--set`` value, then every ``promote apps --set S --push`` started at once; the runs, the wall
    time from the first start to the last end."""
    clones = [world.clone(f"racer-{i}") for i in range(len(sets))]
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-m", "krm_merge", "promote", str(clone / "apps"), "--set", text,
                               "--push"], cwd=clone, env=world.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for clone, text in zip(clones, sets)]
    runs = []
    for proc in procs:
        _, err = proc.communicate(timeout=hang_guard)
        runs.append(Racer(proc.returncode, err))
    return runs, time.monotonic() - started


def different_markers(world: RaceWorld, count: int) -> tuple[list[Racer], float]:
    """``count`` racers, each promoting its own app to 2.0.0."""
    return race(world, [f"flux-system:app{i}:prod=2.0.0" for i in range(count)])


def one_field(world: RaceWorld, versions: list[str]) -> tuple[list[Racer], float]:
    """One racer per version, all promoting the shared app's one field."""
    return race(world, [f"flux-system:shared:prod={v}" for v in versions])


def check_different_markers(world: RaceWorld, runs: list[Racer], count: int) -> None:
    """All landed (exit 0), ``count`` commits on main, each app at 2.0.0 byte-exactly, the shared one untouched."""
    failed = [r.stderr for r in runs if r.code != 0]
    assert not failed, f"{len(failed)} of {len(runs)} promotions failed: {failed[0]}"
    assert world.commits_since_initial() == count, world.commits_since_initial()
    for i in range(count):
        assert world.on_main(f"apps/app{i}/release.yaml") == release(f"app{i}", "2.0.0"), i
    assert world.on_main("apps/shared/release.yaml") == release("shared", START)


def check_one_field(world: RaceWorld, runs: list[Racer], versions: list[str], winner: str) -> None:
    """All ended 0, the field holds ``winner`` byte-exactly, and every runs' report names the value that stood."""
    failed = [r.stderr for r in runs if r.code != 0]
    assert not failed, f"{len(failed)} of {len(runs)} promotions failed: {failed[0]}"
    assert world.on_main("apps/shared/release.yaml") == release("shared", winner)
    assert 1 <= world.commits_since_initial() <= len(versions)
