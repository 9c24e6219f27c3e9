"""Two writers at once: the second is refused or waits, never silently overwritten.

Two promotions of different environments on one checkout (every file holds a
prod and a staging marker), a person's edit made while a command runs, and
two updates sharing one git cache.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from krm_merge import txn
from krm_merge.commands import promote
from tests.conftest import require_binary

from .harness import KRM_MERGE

FILES = 1000
TWO_MARKERS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{n}
data:
  prod: "1.0" # {{"$promotion": "default:app:prod"}}
  staging: "1.0" # {{"$promotion": "default:app:staging"}}
"""


def _two_env_package(root: Path) -> Path:
    for n in range(FILES):
        path = root / f"d{n % 10}" / f"cm-{n}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TWO_MARKERS.format(n=n))
    return root


def _promote(root: Path, env: str, value: str) -> subprocess.Popen[str]:
    return subprocess.Popen([KRM_MERGE, "promote", str(root), "--set", f"default:app:{env}={value}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_two_promotions_at_once_never_lose_one(tmp_path: Path) -> None:
    """Either both changes are in every file, or the refused run says so and changed nothing."""
    root = _two_env_package(tmp_path / "pkg")
    first, second = _promote(root, "prod", "2.0"), _promote(root, "staging", "3.0")
    (_, err1), (_, err2) = first.communicate(timeout=600), second.communicate(timeout=600)
    texts = [p.read_text() for p in sorted(root.rglob("*.yaml"))]
    prod = sum('prod: "2.0"' in t for t in texts)
    staging = sum('staging: "3.0"' in t for t in texts)
    for proc, err, done in ((first, err1, prod), (second, err2, staging)):
        if proc.returncode == 0:
            assert done == FILES, err
        else:
            assert proc.returncode == 1 and "is locked by another krm-merge command" in err, err
            assert "krm-merge promote" in err and "process " in err
            assert done == 0
    assert first.returncode == 0 or second.returncode == 0
    assert not list(root.glob(".krm-merge*"))


def test_a_second_command_is_refused_while_one_holds_the_package(tmp_path: Path) -> None:
    root = _two_env_package(tmp_path / "pkg")
    with txn.PackageLock(root, "krm-merge update"):
        for argv in (["promote", str(root), "--set", "default:app:prod=2.0"],
                     ["run", str(root), "--", "mode=promote", "pipeline=default/app", "environment=prod", "value=2.0"],
                     ["recover", str(root)]):
            proc = subprocess.run([KRM_MERGE, *argv], capture_output=True, text=True, timeout=300)
            assert proc.returncode == 1, (argv, proc.stderr)
            assert "is locked by another krm-merge command" in proc.stderr and "krm-merge update" in proc.stderr
            assert "Traceback" not in proc.stderr
    assert 'prod: "1.0"' in (root / "d0" / "cm-0.yaml").read_text()


def test_an_edit_made_while_promote_runs_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = _two_env_package(tmp_path / "pkg")
    real = txn._check_unchanged

    def edit_then_check(pkg: str, changes: list[txn.Change]) -> None:
        (root / "d3" / "cm-3.yaml").write_text("# a person's edit\n" + TWO_MARKERS.format(n=3))
        real(pkg, changes)

    monkeypatch.setattr(txn, "_check_unchanged", edit_then_check)
    assert promote.main([str(root), "--set", "default:app:prod=2.0"]) == 1
    err = capsys.readouterr().err
    assert "d3/cm-3.yaml was edited by someone else" in err and "nothing was written" in err
    texts = [p.read_text() for p in root.rglob("*.yaml")]
    assert not any('prod: "2.0"' in t for t in texts)
    assert not list(root.glob(".krm-merge*"))


@pytest.mark.parametrize("ref", ["main", "v2"])
def test_two_updates_sharing_the_git_cache_both_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       ref: str) -> None:
    """Three updates at once on an empty cache: to the ref the packages are at (``main``: the refs listed first),
    and to another (``v2``: each resolves it inside its fetch of the trees, in the one repository the first of
    them created, one fetch at a time)."""
    require_binary("git")
    from tests.update.world import World, cm, kptfile

    world = World(tmp_path, monkeypatch)
    c1 = world.commit({f"cm{i}.yaml": cm(f"cm{i}", "1") for i in range(50)})
    world.commit({f"cm{i}.yaml": cm(f"cm{i}", "2") for i in range(50)}, tag="v2")
    git = f"    repo: file://{world.up}\n    directory: /pkg\n    ref: main\n"
    copies = []
    for name in ("a", "b", "c"):
        pkg = tmp_path / "ours" / name
        shutil.copytree(world.up / "pkg", pkg)
        (pkg / "Kptfile").write_text(kptfile(name, (
            f"upstream:\n  type: git\n  git:\n{git}  updateStrategy: resource-merge\n"
            f"upstreamLock:\n  type: git\n  git:\n{git}    commit: {c1}\n"
        )))
        for i in range(50):
            (pkg / f"cm{i}.yaml").write_text(cm(f"cm{i}", "1"))
        copies.append(pkg)
    procs = [subprocess.Popen([KRM_MERGE, "update", f"{pkg}@{ref}"], env=world.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for pkg in copies]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    for pkg in copies:
        assert (pkg / "cm7.yaml").read_text().endswith('data:\n  a: "2"\n')
    cache = Path(world.env["XDG_CACHE_HOME"]) / "krm-merge" / "git"
    assert not [p for p in cache.iterdir() if ".cloning." in p.name or p.name.endswith(".lock")]
    (mirror,) = cache.glob("*.git")
    assert world.git("--git-dir", str(mirror), "for-each-ref", "refs/krm-merge/probe/") == ""
