"""What the command line says, through the real ``krm-merge`` executable (issue 34 item 7).

Each test is one complaint of a newcomer: a marked file that is not UTF-8 passed silently,
a summary naming an unfilled ``{environment.name}``, "by krm-merge krm-merge promote", an
unknown flag without a suggestion, a command's ``--help`` without examples.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from krm_merge import cli, txn

KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
IMAGE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  image: app:1 # {{"$imagepolicy": "ns:app"}}\n'


def krm_merge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRM_MERGE, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_a_marked_file_that_is_not_utf8_fails_like_a_malformed_one(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(IMAGE.format(name="good"))
    latin1 = IMAGE.format(name="caf\xe9").encode("latin-1")
    (tmp_path / "latin1.yaml").write_bytes(latin1)
    done = krm_merge("promote", str(tmp_path), "--image-policy", "ns:app=app:2")
    assert done.returncode == 1, done.stderr
    assert "error: latin1.yaml: not UTF-8 text (byte 52) (use --skip-unreadable to skip it)" in done.stderr
    assert "nothing written" in done.stderr and "app:1" in (tmp_path / "good.yaml").read_text()
    skipped = krm_merge("promote", str(tmp_path), "--image-policy", "ns:app=app:2", "--skip-unreadable")
    assert skipped.returncode == 0, skipped.stderr
    assert "warning: latin1.yaml: not UTF-8 text (byte 52); skipped" in skipped.stderr
    assert (tmp_path / "latin1.yaml").read_bytes() == latin1 and "app:2" in (tmp_path / "good.yaml").read_text()


def test_the_summary_names_the_filled_in_kustomization_folder(tmp_path: Path) -> None:
    (tmp_path / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "overlays" / "prod" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: app\n  newTag: '1'\n")
    done = krm_merge("promote", str(tmp_path), "--kustomize-image", "overlays/{environment.name}:app=app:2",
                     "--environment", "prod")
    assert done.returncode == 0, done.stderr
    summary = done.stderr.splitlines()[-1]
    assert summary == "krm-merge promote: kustomize image app in overlays/prod=app:2 (1 field in 1 file)", done.stderr


def test_recovery_names_the_interrupted_command_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(IMAGE.format(name=name))
    real = txn._exchange
    calls: list[str] = []

    def full_disk_at_the_second_swap(source: str, target: str, out: str) -> None:
        calls.append(target)
        if len(calls) == 2:  # after the commit point: the next command finishes the write
            raise OSError(28, "No space left on device", target)
        real(source, target, out)

    monkeypatch.setattr(txn, "_exchange", full_disk_at_the_second_swap)
    assert cli.main(["promote", str(tmp_path), "--image-policy", "ns:app=app:2"]) == 1
    monkeypatch.undo()
    done = krm_merge("recover", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "finished an interrupted write" in done.stderr
    assert ", by krm-merge promote, process " in done.stderr, done.stderr
    assert all("app:2" in (tmp_path / f"{name}.yaml").read_text() for name in ("a", "b"))


@pytest.mark.parametrize(("command", "typo", "meant"), [
    ("update", "--dryrun", "--dry-run"), ("promote", "--dry_run", "--dry-run"),
    ("promote", "--image-polcy", "--image-policy"), ("conflicts", "--outptu", "--output"),
    ("run", "--dry-rnu", "--dry-run"),
])
def test_an_unknown_flag_gets_the_nearest_known_one(command: str, typo: str, meant: str, tmp_path: Path) -> None:
    done = krm_merge(command, typo, str(tmp_path))
    assert done.returncode == 2
    assert f"krm-merge {command}: error: unrecognized arguments: {typo}" in done.stderr
    assert f"krm-merge {command}: did you mean {meant}? (not {typo})\n" in done.stderr, done.stderr


def test_a_flag_far_from_any_gets_no_guess(tmp_path: Path) -> None:
    done = krm_merge("run", "--frobnicate", str(tmp_path))
    assert done.returncode == 2 and "did you mean" not in done.stderr


# -- issue 48: documents counted from 1, every broken file named, the Markdown report's title once ----------------


def _broken_package(root: Path) -> None:
    root.mkdir()
    (root / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n")
    (root / "two.yaml").write_text("a: 1\n---\nfoo: bar: baz\n")  # its second document, line 3 of the file
    (root / "values.yaml").write_text("replicas: {{ .Values.replicas }}\n")  # a Helm template, not YAML


def test_run_names_every_broken_file_at_its_line_in_the_file(tmp_path: Path) -> None:
    _broken_package(tmp_path / "pkg")
    done = krm_merge("run", str(tmp_path / "pkg"), "--dry-run", "--", "mode=promote", "pipeline=a/b",
                     "environment=prod", "value=1")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0] == (
        "krm-merge run: error: 2 files are not valid YAML: two.yaml at line 3, column 9: mapping values are not "
        "allowed in this context; values.yaml at line 1, column 12: found unhashable key"), done.stderr


def test_update_names_every_broken_file_of_the_three_copies(tmp_path: Path) -> None:
    for copy in ("local", "origin", "upstream"):
        _broken_package(tmp_path / copy)
    (tmp_path / "upstream" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '2'\n")
    (tmp_path / "upstream" / "new.yaml").write_text("x: [\n")
    done = krm_merge("update", str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
                     "--upstream", str(tmp_path / "upstream"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0] == (
        "krm-merge update: error: 3 files are not valid YAML: new.yaml at line 2, column 1: did not find expected "
        "node content (upstream); two.yaml at line 3, column 9: mapping values are not allowed in this context "
        "(local, origin, upstream); values.yaml at line 1, column 12: found unhashable key (local, origin, upstream)"
    ), done.stderr


def test_one_broken_file_is_said_as_before_and_many_are_bounded(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.yaml").write_text("kind: ConfigMap\n---\nx: [\n")
    one = krm_merge("run", str(pkg), "--dry-run", "--", "mode=promote", "pipeline=a/b", "environment=p", "value=1")
    assert "krm-merge run: error: a.yaml is not valid YAML at line 4, column 1: did not find expected node content" \
        in one.stderr, one.stderr
    for n in range(12):
        (pkg / f"b{n:02}.yaml").write_text("x: [\n")
    many = krm_merge("run", str(pkg), "--dry-run", "--", "mode=promote", "pipeline=a/b", "environment=p", "value=1")
    first = many.stderr.splitlines()[0]
    assert first.startswith("krm-merge run: error: 13 files are not valid YAML: a.yaml at line 4") and \
        first.endswith("b08.yaml at line 2, column 1: did not find expected node content; and 3 more"), first


def test_a_document_is_counted_from_one_out_of_the_files_documents(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.yaml").write_text("kind: ConfigMap\nmetadata:\n  name: a\n---\njust a string\n---\nkind: Secret\n")
    done = krm_merge("run", str(pkg), "--dry-run", "--", "mode=promote", "pipeline=a/b", "environment=p", "value=1")
    assert "error: a.yaml (document 2 of 3) is not a KRM object (not a mapping)" in done.stderr, done.stderr


def test_the_markdown_report_says_its_title_once_and_names_a_nameless_kustomization_by_its_file(
        tmp_path: Path) -> None:
    overlay = tmp_path / "overlays" / "prod"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: app\n  newTag: '1'\n")
    args = ["promote", str(tmp_path), "--kustomize-image", "overlays/{environment.name}:app=app:2",
            "--environment", "prod", "--report", "markdown", "-"]
    dry = krm_merge(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("## promote: kustomize image app in overlays/prod=app:2 (1 field in 1 file)\n\n"
                                 "Dry run: nothing written.\n\n### Files\n"), dry.stdout
    assert "| Kustomization (overlays/prod/kustomization.yaml) | `images[0].newTag` |" in dry.stdout
    assert "/?" not in dry.stdout
    written = krm_merge(*args)
    assert written.returncode == 0, written.stderr
    assert written.stdout.startswith("## promote: kustomize image app in overlays/prod=app:2 (1 field in 1 file)\n\n"
                                     "### Files\n"), written.stdout


def test_a_reader_that_goes_away_stops_the_command_without_a_traceback(tmp_path: Path) -> None:
    """`krm-merge update PKG@REF --dry-run | head` printed a BrokenPipeError traceback once head had read enough."""
    example = Path(__file__).resolve().parents[2] / "examples" / "reorder-merge-env-order"
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write to stdout fails with EPIPE
    try:
        done = subprocess.run([KRM_MERGE, "run", str(example), "--fn-config", str(example / "patch.yaml"), "--dry-run"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == 141, done.stderr
