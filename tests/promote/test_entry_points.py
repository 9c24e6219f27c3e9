"""The ``promote`` command and ``krm-merge run -- mode=promote`` share one engine and agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.commands import promote as promote_command
from krm_merge.commands import run as run_command

from .harness import read_tree

M = '# {"$promotion": "default:podinfo:prod"}'
RELEASE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n"
           "spec:\n  chart:\n    spec:\n      version: 6.2.0 {m}\n")


def _tree(root: Path) -> None:
    (root / "apps").mkdir(parents=True)
    (root / "apps" / "a.yaml").write_text(RELEASE.format(name="a", m=M))
    (root / "apps" / "latin1.yaml").write_bytes(RELEASE.format(name="caf\xe9", m=M).encode("latin-1"))
    (root / "apps" / "b.yaml").write_text(RELEASE.format(name="b", m=M))


def _command(root: Path) -> int:  # a marked file that is not UTF-8 is an error unless skipped
    return promote_command.main([str(root), "--set", "default:podinfo:prod=6.3.0", "--skip-unreadable"])


def _run(root: Path) -> int:
    return run_command.main([str(root), "--", "mode=promote", "pipeline=default/podinfo", "environment=prod",
                             "value=6.3.0"])


@pytest.mark.parametrize("entry", [_command, _run], ids=["promote-command", "run-mode-promote"])
def test_non_utf8_file_is_skipped_with_a_warning_naming_it(entry, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _tree(tmp_path)
    before = read_tree(tmp_path)
    assert entry(tmp_path) == 0
    err = capsys.readouterr().err
    assert "apps/latin1.yaml: not UTF-8 text" in err and "skipped" in err
    after = read_tree(tmp_path)
    assert after["apps/latin1.yaml"] == before["apps/latin1.yaml"]
    for name in ("apps/a.yaml", "apps/b.yaml"):
        assert after[name] == before[name].replace(b"6.2.0", b"6.3.0")


def test_both_entry_points_write_the_same_bytes(tmp_path: Path) -> None:
    trees = []
    for entry in (_command, _run):
        root = tmp_path / entry.__name__
        _tree(root)
        (root / "apps" / "multi.yaml").write_text(
            "# lead\n---\n" + RELEASE.format(name="x", m=M) + "---\n" + RELEASE.format(name="y", m="")
            + "---\n" + RELEASE.format(name="z", m=M).replace("6.2.0", "'6.2.0'"))
        assert entry(root) == 0
        trees.append(read_tree(root))
    assert trees[0] == trees[1]
    assert b"version: '6.3.0'" in trees[0]["apps/multi.yaml"]


def test_run_says_when_a_marked_file_was_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "clusters").mkdir()
    flux = tmp_path / "clusters" / "Kustomization"
    flux.write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nimages:\n- name: app\n"
                    '  newTag: v1 # {"$imagepolicy": "flux-system:app:tag"}\n')
    (tmp_path / "a.yaml").write_text(RELEASE.format(name="a", m=M))
    assert _run(tmp_path) == 0
    err = capsys.readouterr().err
    assert "clusters/Kustomization holds a promotion marker" in err and "krm-merge promote" in err
    # The promote command reads it, as Flux does.
    assert promote_command.main([str(tmp_path), "--image-policy", "flux-system:app=ghcr.io/a/app:v2"]) == 0
    assert "newTag: v2 #" in flux.read_text()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_multi_document_files_only_marked_documents_change(newline: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    docs = [RELEASE.format(name=f"r{i}", m=M if i in (1, 3) else "") for i in range(5)]
    text = ("# lead\n---\n" + "---\n".join(docs) + "...\n") if newline == "\n" else "---\n".join(docs)
    text = text.replace("\n", newline)
    path = tmp_path / "all.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert _command(tmp_path) == 0
    lines = [line.split("set: ", 1)[1] for line in capsys.readouterr().err.splitlines() if " set: " in line]
    expected = text.replace(f"version: 6.2.0 {M}", f"version: 6.3.0 {M}")
    assert path.read_bytes() == b"\xef\xbb\xbf" + expected.encode()
    # Line numbers count from the top of the file, whichever document holds the marker.
    marked = [n + 1 for n, line in enumerate(text.split(newline)) if M in line]
    assert [line.split(":")[1] for line in lines if "->" in line] == [str(n) for n in marked]
