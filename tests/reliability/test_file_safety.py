"""Files are written safely by ``run``, ``update`` and ``promote``.

Staged in the package's transaction folder + rename (a new inode, no
leftovers), the file mode kept, paths outside the package refused (``../``
and absolute path annotations, symbolic links, a promote path template
escaping the root), and all-or-nothing: a failure before the commit point
leaves every file as it was, one after it is finished by the next command
(every step: tests/reliability/test_transactions.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from krm_merge import txn
from tests import helpers

from .harness import ROOT, run_command

ENV_ORDER = ROOT / "examples" / "reorder-merge-env-order"
PROMOTE = ROOT / "examples" / "promote-helmrelease-from-environment"
UPDATE = ROOT / "examples" / "resource-merge-renamed-resource"


def _tree(root: Path) -> dict[str, bytes]:
    return helpers.read_tree(root)


def _copy(src: Path, tmp: Path) -> Path:
    dst = tmp / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".expected"))
    return dst


def _run(pkg: Path, *extra: str) -> tuple[int, str, str]:
    from krm_merge.commands import run

    return run_command(run.main, [str(pkg), "--fn-config", str(pkg / "patch.yaml"), *extra])


def _run_moving(pkg: Path, path: str) -> tuple[int, str, str]:
    """Run on ``pkg`` a function that moves the Deployment to ``path`` by its path annotation.

    A function may do so under kpt; a path annotation written in a file does not move anything
    (kpt fn source, and our reader, give the file's own path: tests/krm/test_reader_annotations.py).
    """
    from krm_merge import sdk

    def move(rl: sdk.ResourceList) -> None:
        for item in rl.items:
            if item.kind == "Deployment":
                item.set_path(path)

    return run_command(lambda argv: sdk.run(move, argv, name="krm-merge"), [str(pkg)])


def _promote(pkg: Path) -> tuple[int, str, str]:
    from krm_merge.commands import promote

    return run_command(promote.main, [str(pkg), "--pipeline", "default/podinfo", "--from-environment", "dev",
                                      "--value", "6.4.0"])


def _update(tmp: Path) -> tuple[int, str, str]:
    from krm_merge.commands import update

    return run_command(update.main, [str(tmp / "local"), "--origin", str(tmp / "origin"),
                                     "--upstream", str(tmp / "upstream")])


# --- temp + rename, mode kept ---------------------------------------------------


@pytest.mark.parametrize("command", ["run", "promote", "update"])
def test_rewrite_is_a_rename_and_keeps_the_mode(command: str, tmp_path: Path) -> None:
    if command == "run":
        pkg = _copy(ENV_ORDER, tmp_path)
        target = pkg / "deployment.yaml"
    elif command == "promote":
        pkg = _copy(PROMOTE, tmp_path)
        target = pkg / "apps" / "prod" / "podinfo.yaml"
    else:
        pkg = _copy(UPDATE, tmp_path)
        target = pkg / "local" / "deployment.yaml"
    os.chmod(target, 0o640)
    inode = os.stat(target).st_ino
    before = target.read_bytes()
    code, _, err = {"run": lambda: _run(pkg), "promote": lambda: _promote(pkg), "update": lambda: _update(pkg)}[command]()
    assert code == 0, err
    assert target.read_bytes() != before
    assert os.stat(target).st_ino != inode, "written in place, not through a rename"
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert not [p for p in pkg.rglob("*.tmp")], "temporary files left behind"


# --- all-or-nothing --------------------------------------------------------------


def _two_file_package(tmp: Path) -> Path:
    pkg = tmp / "pkg"
    pkg.mkdir()
    for name in ("a", "b", "c"):
        (pkg / f"{name}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name} # keep\n")
    patches = "---\n".join(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\ndata:\n  x: '1'\n"
                           for n in ("a", "b", "c"))
    (pkg / "fn.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
        "    config.kubernetes.io/local-config: 'true'\ndata:\n  mode: reorder-merge\n  patch: |\n"
        + "".join("    " + line + "\n" for line in patches.splitlines()))
    return pkg


class _FailOnNth:
    """Patch the transaction's swap of a file into place (``txn._exchange``) to fail on its n-th call
    (a full disk, a yanked mount...): after the commit point, with files before it swapped."""

    def __init__(self, n: int) -> None:
        self.n, self.calls, self.real = n, 0, txn._exchange

    def __call__(self, src: str, dst: str, out: str) -> None:
        self.calls += 1
        if self.calls == self.n:
            raise OSError(28, "No space left on device", str(dst))
        self.real(src, dst, out)


@pytest.mark.parametrize("nth", [1, 2, 3])
def test_run_is_all_or_nothing_when_a_write_fails_midway(nth: int, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename failing after the commit point: the command says so, the next one finishes the write."""
    from krm_merge.commands import run

    pkg = _two_file_package(tmp_path)
    monkeypatch.setattr(txn, "_exchange", _FailOnNth(nth))
    code, _, err = run_command(run.main, [str(pkg), "--fn-config", str(pkg / "fn.yaml")])
    assert code == 1 and "No space left on device" in err and "the next krm-merge command" in err
    monkeypatch.undo()
    code, _, err = run_command(run.main, [str(pkg), "--fn-config", str(pkg / "fn.yaml")])
    assert code == 0, err
    assert "finished an interrupted write" in err
    assert all("x: '1'" in (pkg / f"{n}.yaml").read_text() or 'x: "1"' in (pkg / f"{n}.yaml").read_text()
               for n in "abc")
    assert not [p for p in _tree(pkg) if ".krm-merge" in p]


def test_run_is_all_or_nothing_when_staging_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from krm_merge.commands import run

    pkg = _two_file_package(tmp_path)
    before = _tree(pkg)
    real, calls = os.write, []

    def failing(fd: int, data: bytes) -> int:
        calls.append(1)
        if len(calls) == 2:  # the second staged file
            raise OSError(30, "Read-only file system", str(pkg))
        return real(fd, data)

    monkeypatch.setattr(os, "write", failing)
    code, _, err = run_command(run.main, [str(pkg), "--fn-config", str(pkg / "fn.yaml")])
    assert code == 1 and "Read-only file system" in err and "no file was changed" in err
    assert _tree(pkg) == before


def test_promote_is_all_or_nothing_when_a_write_fails_midway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _copy(PROMOTE, tmp_path)
    (pkg / "apps" / "prod" / "second.yaml").write_text((pkg / "apps" / "prod" / "podinfo.yaml").read_text())
    monkeypatch.setattr(txn, "_exchange", _FailOnNth(2))
    code, _, err = _promote(pkg)
    assert code == 1 and "the next krm-merge command" in err
    monkeypatch.undo()
    code, _, err = _promote(pkg)
    assert code == 0 and "finished an interrupted write" in err
    assert all("6.4.0" in (pkg / "apps" / "prod" / name).read_text() for name in ("podinfo.yaml", "second.yaml"))
    assert not [p for p in _tree(pkg) if ".krm-merge" in p]


def test_update_is_all_or_nothing_when_a_write_fails_midway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _copy(UPDATE, tmp_path)
    (pkg / "upstream" / "extra.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
    monkeypatch.setattr(txn, "_exchange", _FailOnNth(1))  # the new file is linked into place, the changed one swapped
    code, _, err = _update(pkg)
    assert code == 1 and "the next krm-merge command" in err, err
    monkeypatch.undo()
    code, _, err = _update(pkg)
    assert code == 0 and "finished an interrupted write" in err, err
    assert (pkg / "local" / "extra.yaml").is_file()
    assert not [p for p in _tree(pkg) if ".krm-merge" in p]


# --- paths outside the package -------------------------------------------------


@pytest.mark.parametrize("path", ["../escaped.yaml", "/tmp/absolute.yaml", "sub/../../escaped.yaml"])
def test_run_refuses_path_annotations_leaving_the_package(path: str, tmp_path: Path) -> None:
    pkg = _copy(ENV_ORDER, tmp_path)
    before = _tree(pkg)
    code, _, err = _run_moving(pkg, path)
    assert code == 1 and "leaves the package" in err, err
    assert _tree(pkg) == before
    assert not (tmp_path / "escaped.yaml").exists() and not Path("/tmp/absolute.yaml").exists()


def test_run_refuses_to_write_through_a_symlinked_folder(tmp_path: Path) -> None:
    pkg = _copy(ENV_ORDER, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (pkg / "link").symlink_to(outside, target_is_directory=True)
    before = _tree(pkg)
    code, _, err = _run_moving(pkg, "link/dep.yaml")
    assert code == 1 and "leaves the package" in err, err
    assert list(outside.iterdir()) == [] and _tree(pkg) == before


def test_run_refuses_to_write_a_symlinked_file(tmp_path: Path) -> None:
    pkg = _copy(ENV_ORDER, tmp_path)
    outside = tmp_path / "victim.yaml"
    outside.write_text("precious: true\n")
    (pkg / "alias.yaml").symlink_to(outside)
    code, _, err = _run_moving(pkg, "alias.yaml")
    assert code == 1 and "symbolic link" in err, err
    assert outside.read_text() == "precious: true\n"


def test_promote_refuses_a_symlinked_file(tmp_path: Path) -> None:
    pkg = _copy(PROMOTE, tmp_path)
    victim = tmp_path / "victim.yaml"
    target = pkg / "apps" / "prod" / "podinfo.yaml"
    victim.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(victim)
    before = victim.read_bytes()
    code, _, err = _promote(pkg)
    assert code == 1 and "symbolic link" in err, err
    assert victim.read_bytes() == before


@pytest.mark.parametrize("template", ["../{environment.name}", "/tmp/{environment.name}",
                                      "apps/../../{environment.name}"])
def test_promote_path_template_cannot_leave_the_package(template: str, tmp_path: Path) -> None:
    from krm_merge.commands import run

    pkg = _copy(ROOT / "examples" / "promote-path-strategy", tmp_path)
    (tmp_path / "prod").mkdir()
    (tmp_path / "prod" / "release.yaml").write_text((pkg / "apps" / "prod" / "podinfo" / "release.yaml").read_text())
    before, outside = _tree(pkg), _tree(tmp_path / "prod")
    code, _, err = run_command(run.main, [str(pkg), "--", "mode=promote", "strategy=path", f"pathTemplate={template}",
                                          "pipeline=default/podinfo", "environment=prod", "value=9.9.9"])
    assert code == 1, err
    assert _tree(pkg) == before and _tree(tmp_path / "prod") == outside


def test_update_refuses_a_symlinked_local_file(tmp_path: Path) -> None:
    pkg = _copy(UPDATE, tmp_path)
    victim = tmp_path / "victim.yaml"
    local = pkg / "local" / "deployment.yaml"
    victim.write_bytes(local.read_bytes())
    local.unlink()
    local.symlink_to(victim)
    before = victim.read_bytes()
    code, _, err = _update(pkg)
    assert victim.read_bytes() == before and local.is_symlink()
    # Today update skips a symlinked file when reading (as kpt's reader does), so it is never a write target.
    assert code == 0 or "symbolic link" in err, err


@pytest.mark.parametrize("path", [".git/hooks/post-commit", "sub/.GIT/config", ".KRM-MERGE.TXN/journal"])
def test_run_refuses_path_annotations_under_git_or_krm_merges_own_names(path: str, tmp_path: Path) -> None:
    """The writer's path rule is the one recovery checks a journal by (docs/reliability.md, "Recovery: what is
    honoured"): nothing under .git, nothing under krm-merge's names, in any case."""
    pkg = _copy(ENV_ORDER, tmp_path)
    before = _tree(pkg)
    code, _, err = _run_moving(pkg, path)
    assert code == 1 and ("under .git" in err or "krm-merge keeps its lock and journal there" in err), err
    assert _tree(pkg) == before
