"""kpt 1.0.0-beta.56's ``kpt pkg update`` command tests (local and remote subpackages), run as data.

``data/kpt-update-command-tables.beta56.yaml`` was generated from kpt's Go
tables (``TestCommand_Run_local_subpackages``, ``TestRun_remote_subpackages``,
``TestCmd_output``) by ``tools/port_kpt_update_tables.py`` (licence:
data/NOTICE.md).  As kpt's TestSetupManager does, each case builds the test
git repositories (first commit of each), fetches ``upstream@master`` with the
real ``kpt pkg get``, commits the rest, replaces the local package with the
case's local changes, and then runs ``krm-merge update`` with each strategy;
the result must equal kpt's expectation as data.  A case where we
deliberately differ is in ``DEVIATIONS`` with the reason (and in docs/merge.md).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.commands import update
from tests.conftest import require_binary

from .world import World, read_tree, write_tree

pytestmark = pytest.mark.e2e

DATA = Path(__file__).parent / "data" / "kpt-update-command-tables.beta56.yaml"
CASES = yaml.safe_load(DATA.read_text())["cases"]
_PLACEHOLDER = re.compile(r"\{\{(repo|commit):([^:}]+)(?::([0-9]+))?\}\}")

# "case name [strategy]" -> why krm-merge deliberately differs (each also in docs/merge.md)
DEVIATIONS: dict[str, str] = {
    "Kptfile in the nested package is merged [Kptfile]":
        "pipeline function deleted locally and changed upstream stays deleted (kpt re-adds it; docs/merge.md E4)",
    "remote subpackage has gone from fetched to unfetched state in upstream [Kptfile]":
        "a resource upstream deleted from a remote subpackage, unchanged locally, is deleted (kpt keeps it there)",
}


def runs() -> list[Any]:
    out = []
    for case in CASES:
        for result in case.get("results", [{"strategies": [None]}]):
            for strategy in result["strategies"]:
                name = f"{case['name']} [{strategy or 'Kptfile'}]"
                marks = [pytest.mark.skip(reason=case["skip"])] if "skip" in case else []
                if name in DEVIATIONS:
                    marks.append(pytest.mark.xfail(reason=DEVIATIONS[name], strict=True))
                out.append(pytest.param(case, result, strategy, id=name, marks=marks))
    return out


class Repos:
    """kpt's test repositories: one git repo per name, commits recorded in order."""

    def __init__(self, world: World, case: dict[str, Any]) -> None:
        self.world, self.case = world, case
        self.dirs = {name: world.tmp / "repos" / name for name in case["repos"]}
        self.commits: dict[str, list[str]] = {name: [] for name in case["repos"]}

    def resolve(self, text: str, strategy: str | None = None) -> str:
        def sub(m: re.Match[str]) -> str:
            kind, name, index = m.groups()
            return f"file://{self.dirs[name]}" if kind == "repo" else self.commits[name][int(index)]

        text = _PLACEHOLDER.sub(sub, text)
        return text.replace("PLACEHOLDER", strategy) if strategy else text

    def order(self) -> list[str]:
        """Repositories referenced by another come first (kpt's findRepoOrdering)."""
        deps = {name: {m.group(2) for c in commits for t in c["files"].values() for m in _PLACEHOLDER.finditer(t)} - {name}
                for name, commits in self.case["repos"].items()}
        done: list[str] = []
        while len(done) < len(deps):
            done += sorted(n for n, d in deps.items() if n not in done and d <= set(done))
        return done

    def commit(self, name: str, content: dict[str, Any]) -> None:
        repo = self.dirs[name]
        git = lambda *a: self.world.git(*a, cwd=repo)  # noqa: E731
        if not (repo / ".git").exists():
            repo.mkdir(parents=True)
            git("init", "-q", "-b", content.get("branch") or "main")
        elif content.get("branch"):
            git("checkout", "-q", *(["-b"] if content.get("createBranch") else []), content["branch"])
        replace_data(repo, {p: self.resolve(t) for p, t in content["files"].items()})
        git("add", "-A")
        git("commit", "-q", "--allow-empty", "-m", "initializing data")
        self.commits[name].append(git("rev-parse", "HEAD"))
        if content.get("tag"):
            git("tag", content["tag"])


def replace_data(root: Path, files: dict[str, str]) -> None:
    """kpt's testutil.replaceData: the directory becomes ``files``, except that an existing
    Kptfile keeps its name, and its upstream/upstreamLock unless the new one has them, and
    the root Kptfile is never deleted."""
    for rel, text in files.items():
        target = root / rel
        if target.name == "Kptfile" and target.exists():
            old, new = yaml.safe_load(target.read_text()) or {}, yaml.safe_load(text)
            for key in ("upstream", "upstreamLock"):
                if not new.get(key) and old.get(key):
                    new[key] = old[key]
            new.setdefault("metadata", {})["name"] = (old.get("metadata") or {}).get("name")
            text = yaml.safe_dump(new, sort_keys=False)
        write_tree(root, {rel: text})
    wanted_dirs = {str(Path(rel).parent) for rel in files} | {"."}
    wanted_dirs |= {str(p) for rel in files for p in Path(rel).parents}
    for path in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git") or rel == "Kptfile" or not path.exists():
            continue
        if path.is_dir():
            if rel not in wanted_dirs:
                shutil.rmtree(path)
        elif rel not in files:
            path.unlink()


_PREPARED: dict[str, tuple[Path, Repos]] = {}


def prepare(case: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Repos]:
    """Repositories, ``kpt pkg get`` and the local changes, once per case (kpt is slow); each run copies the package."""
    if case["name"] not in _PREPARED:
        world = World(tmp_path_factory.mktemp("case"))
        repos = Repos(world, case)
        order = repos.order()
        for name in order:
            repos.commit(name, case["repos"][name][0])
        pkg = world.tmp / "ws" / "base"  # ExpandPkgWithName(PackageDir): the root Kptfile is named after the directory
        pkg.parent.mkdir()
        world.kpt("pkg", "get", f"file://{repos.dirs['upstream']}.git@master", "base", cwd=pkg.parent)
        for name in order:
            for content in case["repos"][name][1:]:
                repos.commit(name, content)
        if "localChanges" in case:
            replace_data(pkg, {p: repos.resolve(t) for p, t in case["localChanges"].items()})
        _PREPARED[case["name"]] = (pkg, repos)
    World(tmp_path_factory.mktemp("env"), monkeypatch)  # isolated git cache and config for our update
    # kpt's tables add remote subpackages whose repos are local paths; the user allows that
    # transport for URLs from upstream content explicitly (docs/security.md).
    for key, value in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "protocol.file.allow"), ("GIT_CONFIG_VALUE_0", "always")):
        monkeypatch.setenv(key, value)
    return _PREPARED[case["name"]]


@pytest.mark.parametrize(("case", "result", "strategy"), runs())
def test_kpt_update_command_table(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                                  case: dict[str, Any], result: dict[str, Any], strategy: str | None,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    require_binary("kpt")
    require_binary("git")
    prepared, repos = prepare(case, tmp_path_factory, monkeypatch)
    pkg = tmp_path / "base"
    shutil.copytree(prepared, pkg)
    before = read_tree(pkg)
    rc = update.main([str(pkg), *(["--strategy", strategy] if strategy else [])])
    if "expectedErr" in result:
        assert rc == 1
        assert result["expectedErr"] in capsys.readouterr().err
        assert read_tree(pkg) == before
        return
    assert rc == 0, capsys.readouterr().err
    expected = tmp_path / "expected"
    write_tree(expected, {p: repos.resolve(t, strategy) for p, t in result["expected"].items()})
    got, want = read_tree(pkg), read_tree(expected)
    if strategy is None:  # kpt's Go API keeps the Kptfile's strategy; the expectation spells it
        got["Kptfile"][0].get("upstream", {}).pop("updateStrategy", None)
        want["Kptfile"][0].get("upstream", {}).pop("updateStrategy", None)
    assert got == want
