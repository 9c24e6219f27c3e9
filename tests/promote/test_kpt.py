"""The conformance cases through the real orchestrator: ``kpt fn eval DIR --exec krm-merge``.

kpt re-serialises every item it reads (kyaml), so here the comparison is by values and
comments, as the suite's README allows; byte fidelity is checked by the other tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import require_binary

from .harness import Case, copy_tree, load_cases, read_tree

pytestmark = pytest.mark.e2e
KRM_MERGE = str(Path(sys.executable).parent / "krm-merge")
CASES = load_cases()
_COMMENT = re.compile(r"(?:^|\s)(#.*)$")


def _comments(data: bytes) -> list[str]:
    return [m.group(1).rstrip() for line in data.decode().replace("\r\n", "\n").splitlines()
            if (m := _COMMENT.search(line))]


def _values(data: bytes) -> list[object]:
    docs = [d for d in yaml.safe_load_all(data.decode()) if d is not None]
    for doc in docs:
        # kpt drops an empty `annotations: {}` when it removes its own path annotations.
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        if isinstance(meta, dict) and meta.get("annotations") == {}:
            del meta["annotations"]
    return docs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_through_kpt(case: Case, tmp_path: Path) -> None:
    require_binary("kpt")
    work = copy_tree(case.input, tmp_path / "pkg")
    for config in case.runs():
        done = subprocess.run(["kpt", "fn", "eval", str(work), "--exec", KRM_MERGE, "--truncate-output=false",
                               "--", "mode=promote", *(f"{k}={v}" for k, v in config.items())],
                              capture_output=True, text=True, timeout=120)
        if case.error:
            assert done.returncode != 0
            assert case.error in done.stdout + done.stderr
            assert read_tree(work) == read_tree(case.input)
            return
        assert done.returncode == 0, done.stderr
    got, expected = read_tree(work), read_tree(case.expected)
    for rel, want in expected.items():
        if not rel.endswith((".yaml", ".yml")):
            continue  # not a kpt package resource (Flux's extension-less Kustomization)
        assert _values(got[rel]) == _values(want), rel
        assert _comments(got[rel]) == _comments(want), rel
