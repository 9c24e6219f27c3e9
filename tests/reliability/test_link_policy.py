"""One symbolic-link policy for every command (krm/pkgio.py, docs/security.md "Symbolic links").

Reading: a link to a file is read wherever it points; a link to a folder is
not followed; a broken link is refused, named (promote warns and
goes on: it holds no marker).  Writing: a changed file
reached through a link is written to the link's target when the target is
inside the package; a link leading out is refused and nothing is written.
Each writer (run, the SDK on a directory, promote, resolve) and each reader
(conflicts) is checked both ways.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from tests.helpers import LOCK_COMMIT, locked_kptfile

from .harness import run_command

PIPE = ("apiVersion: pipelines.weave.works/v1alpha1\nkind: Pipeline\nmetadata:\n  name: app\n  namespace: default\n"
        "spec:\n  environments:\n  - name: staging\n  - name: prod\n")
MARKED = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  prod: "1.0" # {"$promotion": "default:app:prod"}\n'
CONFLICT = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 5  # krm-merge:conflict upstream=3 origin=2\n"


def _promote(pkg: Path) -> tuple[int, str, str]:
    from krm_merge.commands import promote

    return run_command(promote.main, [str(pkg), "--set", "default:app:prod=2.0"])


def _run(pkg: Path) -> tuple[int, str, str]:
    from krm_merge.commands import run

    return run_command(run.main, [str(pkg), "--", "mode=promote", "pipeline=default/app", "environment=prod",
                                  "value=2.0"])


def _sdk(pkg: Path) -> tuple[int, str, str]:
    from krm_merge import sdk

    def fn(rl: sdk.ResourceList) -> None:
        for obj in rl.items:
            if obj.kind == "ConfigMap":
                obj.set(("data", "prod"), "2.0")

    def call() -> int:
        try:
            sdk.run(fn, [str(pkg)], name="krm-merge link-test")
        except SystemExit as done:
            return int(done.code or 0)
        return 0

    return run_command(lambda _argv: call(), [])


def _resolve(pkg: Path) -> tuple[int, str, str]:
    from krm_merge.commands import resolve

    (pkg / "Kptfile").write_text(locked_kptfile("pkg"))  # the lock the ledger (_record) is bound to
    return run_command(resolve.main, [str(pkg), "--take", "upstream"])


WRITERS: dict[str, tuple[Callable[[Path], tuple[int, str, str]], str, str]] = {
    # name: (command, the file's text, a line the written file must hold)
    "promote": (_promote, MARKED, 'prod: "2.0"'),
    "run": (_run, MARKED, 'prod: "2.0"'),
    "sdk": (_sdk, MARKED, "prod: "),
    "resolve": (_resolve, CONFLICT, "replicas: 3"),
}


def _package(tmp_path: Path, text: str) -> Path:
    pkg = tmp_path / "pkg"
    (pkg / "base").mkdir(parents=True)
    (pkg / "pipeline.yaml").write_text(PIPE)
    (pkg / "base" / "real.yaml").write_text(text)
    _record(pkg, "base/real.yaml")  # resolve acts on recorded markers only: the ledger an update would write
    return pkg


def _record(pkg: Path, rel: str) -> None:
    """The conflict ledger recording CONFLICT's marker in ``rel``, as the update that wrote it would."""
    from krm_merge.krm.results import ResourceRef
    from krm_merge.update import ledger

    entries = (pkg / ledger.LEDGER_NAME).read_bytes() if (pkg / ledger.LEDGER_NAME).exists() else None
    found = ledger.decode(entries, "x")[1] if entries else []
    entry = ledger.Entry("field", rel, ResourceRef("apps/v1", "Deployment", CONFLICT.split("name: ")[1].split("\n")[0]),
                         "spec.replicas", ("spec", "replicas"), 5, 3, 2)
    (pkg / ledger.LEDGER_NAME).write_bytes(ledger.encode([*found, entry], LOCK_COMMIT))


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_link_to_a_file_inside_the_package_is_read_and_written_through(name: str, tmp_path: Path) -> None:
    command, text, written = WRITERS[name]
    pkg = _package(tmp_path, text)
    (pkg / "base" / "real.yaml").rename(pkg / "target.yaml")
    (pkg / "base" / "real.yaml").symlink_to("../target.yaml")  # the only path that reaches the content
    (pkg / ".krmignore").write_text("target.yaml\n")  # kpt fn source reads it through the link only
    code, out, err = command(pkg)
    assert code == 0, err + out
    assert (pkg / "base" / "real.yaml").is_symlink(), "the link itself is kept"
    assert written in (pkg / "target.yaml").read_text() and (pkg / "target.yaml").read_text() != text


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_link_leading_out_of_the_package_is_read_but_never_written(name: str, tmp_path: Path) -> None:
    command, text, _ = WRITERS[name]
    pkg = _package(tmp_path, "")
    (pkg / "base" / "real.yaml").unlink()
    victim = tmp_path / "victim.yaml"
    victim.write_text(text)
    (pkg / "base" / "real.yaml").symlink_to(victim)
    code, out, err = command(pkg)
    assert code == 1 and "symbolic link" in err + out and "outside the package" in err + out, err + out
    assert victim.read_text() == text


@pytest.mark.parametrize("name", sorted(set(WRITERS) - {"promote"}))
def test_a_broken_link_is_refused_by_name(name: str, tmp_path: Path) -> None:
    command, text, _ = WRITERS[name]
    pkg = _package(tmp_path, text)
    (pkg / "gone.yaml").symlink_to(tmp_path / "nothing-here.yaml")
    before = (pkg / "base" / "real.yaml").read_text()
    code, out, err = command(pkg)
    assert code == 1 and "gone.yaml is a broken symbolic link" in err + out, err + out
    assert (pkg / "base" / "real.yaml").read_text() == before


def test_promote_warns_about_a_broken_link_and_goes_on(tmp_path: Path) -> None:
    """A link to nothing holds no marker: Flux's setters skip it, and so does promote, saying so (issue 34)."""
    pkg = _package(tmp_path, MARKED)
    (pkg / "gone.yaml").symlink_to(tmp_path / "nothing-here.yaml")
    code, out, err = _promote(pkg)
    assert code == 0, err + out
    assert "warning: gone.yaml: a broken symbolic link" in err
    assert 'prod: "2.0"' in (pkg / "base" / "real.yaml").read_text()


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_link_to_a_folder_is_not_followed(name: str, tmp_path: Path) -> None:
    command, text, _ = WRITERS[name]
    pkg = _package(tmp_path, "")
    (pkg / "base" / "real.yaml").unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "marked.yaml").write_text(text)
    os.symlink(outside, pkg / "linked", target_is_directory=True)
    command(pkg)
    assert (outside / "marked.yaml").read_text() == text


def test_conflicts_reads_markers_through_a_link_to_a_file_as_it_reads_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from krm_merge.commands import conflicts

    from krm_merge.update import ledger

    pkg = _package(tmp_path, CONFLICT)
    (tmp_path / "shared.yaml").write_text(CONFLICT.replace("name: d", "name: e"))
    (pkg / "shared.yaml").symlink_to(tmp_path / "shared.yaml")
    found = ledger.decode((pkg / ledger.LEDGER_NAME).read_bytes(), "x")[1]
    entries = [*found, found[0]._replace(file="shared.yaml", resource=found[0].resource._replace(name="e")),
               ledger.Entry("text", "notes.txt", None, "", (), "a\n", "c\n", "b\n")]
    (pkg / ledger.LEDGER_NAME).write_bytes(ledger.encode(entries, LOCK_COMMIT))
    (pkg / "Kptfile").write_text(locked_kptfile("pkg"))
    notes = tmp_path / "notes.txt"
    notes.write_text("<<<<<<< local\na\n||||||| origin\nb\n=======\nc\n>>>>>>> upstream\n")
    (pkg / "notes.txt").symlink_to(notes)
    code = conflicts.main([str(pkg)])
    out, err = capsys.readouterr()
    assert code == conflicts.CONFLICTS_LEFT, err
    assert "base/real.yaml:6: Deployment/d spec.replicas" in out and "shared.yaml:6: Deployment/e" in out
    assert "notes.txt:1:" in out
