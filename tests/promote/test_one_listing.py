"""`run DIR` (every mode) and the `promote` command list the package once each (issue 32).

In the style of tests/update/test_one_listing.py: every directory listing the
process makes (``os.scandir``, ``os.listdir``, ``os.walk``) is recorded by the
folder it lists while the command runs in-process; each folder of the package
must be listed exactly once.  `run DIR` in promote mode listed the tree twice
(the package read, then the unread-marker check for Flux's ``Kustomization``).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from krm_merge.commands import promote as promote_command
from krm_merge.commands import run as run_command
from tests.update.test_one_listing import listings  # noqa: F401  (the fixture counting listings)

from .test_entry_points import M, RELEASE

PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v2\n"


def package(root: Path) -> None:
    """Marked resources in folders, Flux's extension-less Kustomization with a marker, a hidden folder, a
    .krmignore'd file and a non-KRM file: every filter of the one listing has work."""
    for rel, text in {"a.yaml": RELEASE.format(name="a", m=M), "apps/b.yaml": RELEASE.format(name="b", m=M),
                      "apps/deep/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v1\n",
                      "clusters/Kustomization": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                      'images:\n- name: app\n  newTag: v1 # {"$imagepolicy": "flux-system:app:tag"}\n',
                      ".hidden/x.yaml": RELEASE.format(name="h", m=M), "ignored/c.yaml": RELEASE.format(name="c", m=M),
                      ".krmignore": "ignored\n", "README.md": "notes\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def listed_more_than_once(root: Path, seen: Counter[str]) -> dict[str, int]:
    real = os.path.realpath(root)
    mine = {d: n for d, n in seen.items() if d == real or d.startswith(real + os.sep)}
    assert {os.path.relpath(d, real) for d in mine} >= {".", "apps", "apps/deep", "clusters"}
    return {os.path.relpath(d, real): n for d, n in mine.items() if n != 1}


def test_run_in_promote_mode_lists_the_package_once(tmp_path: Path, listings: Counter[str],  # noqa: F811
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    package(tmp_path)
    listings.clear()
    assert run_command.main([str(tmp_path), "--", "mode=promote", "pipeline=default/podinfo",
                             "environment=prod", "value=6.3.0"]) == 0
    assert listed_more_than_once(tmp_path, listings) == {}
    # the one listing still finds the marked Kustomization the read leaves out, and nothing hidden
    err = capsys.readouterr().err
    assert "clusters/Kustomization holds a promotion marker" in err and ".hidden" not in err
    assert b"6.3.0" in (tmp_path / "apps" / "b.yaml").read_bytes()


def test_run_in_another_mode_lists_the_package_once(tmp_path: Path, listings: Counter[str]) -> None:  # noqa: F811
    package(tmp_path)
    listings.clear()
    assert run_command.main([str(tmp_path), "--", "mode=reorder-merge", f"patch={PATCH}"]) == 0
    assert listed_more_than_once(tmp_path, listings) == {}
    assert "k: v2" in (tmp_path / "apps" / "deep" / "cm.yaml").read_text()


def test_the_promote_command_lists_the_package_once(tmp_path: Path, listings: Counter[str]) -> None:  # noqa: F811
    package(tmp_path)
    listings.clear()
    assert promote_command.main([str(tmp_path), "--set", "default:podinfo:prod=6.3.0"]) == 0
    assert listed_more_than_once(tmp_path, listings) == {}
    assert b"6.3.0" in (tmp_path / "apps" / "b.yaml").read_bytes()
