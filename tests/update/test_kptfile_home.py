"""The Kptfile rules of an update live in kptfile/: the update's strategies call them, none repeats them."""

from __future__ import annotations

import ast
from pathlib import Path

from krm_merge.kptfile import document
from krm_merge.krm.values import same

UPDATE = Path(document.__file__).resolve().parents[1] / "update"
LOCAL = {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "mine"},
         "upstream": {"type": "git", "git": {"ref": "v1"}}, "upstreamLock": {"git": {"commit": "a"}}}
UPSTREAM = {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "theirs"},
            "info": {"description": "new"}, "upstream": {"type": "git", "git": {"ref": "v2"}},
            "status": {"renderStatus": {}, "conditions": [{"type": "Rendered"}, {"type": "Ready"}]}}


def test_force_delete_replace_keeps_locals_name_and_upstream_info_right_after_metadata() -> None:
    taken = document.with_local_upstream(dict(UPSTREAM), LOCAL)
    assert list(taken) == ["apiVersion", "kind", "metadata", "upstream", "upstreamLock", "info", "status"]
    assert taken["metadata"] == {"name": "mine"} and taken["upstream"] == LOCAL["upstream"]
    assert taken["status"] == {"conditions": [{"type": "Ready"}]}  # upstream's render is not this copy's


def test_copies_compare_without_name_upstream_lock_and_status() -> None:
    base = {k: v for k, v in UPSTREAM.items() if k != "status"}
    assert same(document.comparable(UPSTREAM), document.comparable({**base, "metadata": {"name": "x"}}))
    assert not same(document.comparable(UPSTREAM), document.comparable({**base, "info": {}}))


def test_a_nested_kptfile_unchanged_upstream_stays_locals_only_with_upstreams_upstream_info() -> None:
    assert document.unchanged_upstream_keeps_local(LOCAL, UPSTREAM, nested=False)
    assert not document.unchanged_upstream_keeps_local(LOCAL, UPSTREAM, nested=True)
    assert document.unchanged_upstream_keeps_local(LOCAL, {**UPSTREAM, "upstream": LOCAL["upstream"]}, nested=True)


def test_no_update_module_reads_or_writes_a_kptfiles_lock_or_render_status_itself() -> None:
    """``upstreamLock`` and ``renderStatus`` are kptfile/'s words; in update/ they may only appear in prose."""
    found = []
    for path in sorted(UPDATE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Subscript, ast.Call, ast.Compare, ast.Tuple, ast.Dict)):
                found += [f"{path.name}:{c.lineno}" for c in ast.walk(node) if isinstance(c, ast.Constant)
                          and c.value in ("upstreamLock", "renderStatus", "status")]
    assert not found
