"""kpt 1.0.0-beta.56's own Updater table tests (resource-merge, fast-forward, force-delete-replace), run as data.

``data/kpt-updater-tables.beta56.yaml`` was generated from kpt's Go tables by
``tools/port_kpt_update_tables.py`` (licence: data/NOTICE.md).  Each case
builds origin, local and updated packages, updates local at
``relPackagePath`` with the case's strategy through ``krm-merge update``'s
planning code, and compares the result with kpt's expectation as data.
A case where we deliberately differ is listed in ``DEVIATIONS`` with the
reason (and in docs/merge.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.kptfile.document import Strategy
from krm_merge.update import plan as update_plan, planner

from .world import read_tree, write_tree

DATA = Path(__file__).parent / "data" / "kpt-updater-tables.beta56.yaml"
CASES = yaml.safe_load(DATA.read_text())["cases"]

# case name -> why krm-merge deliberately differs (each also in docs/merge.md)
DEVIATIONS: dict[str, str] = {}
PARENT_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: parent\n"


def case_id(case: dict[str, Any]) -> str:
    return f"{case['strategy']}: {case['name']}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_kpt_updater_table(tmp_path: Path, case: dict[str, Any]) -> None:
    if case_id(case) in DEVIATIONS:
        pytest.xfail(DEVIATIONS[case_id(case)])
    # kpt's isRoot=false: the package is a subpackage met while updating its parent; here it
    # becomes the subpackage `sub/` of a parent whose own Kptfile is the same in all three copies.
    nest = "" if case["isRoot"] else "sub/"
    roots = {}
    for key in ("origin", "local", "updated", "expected"):
        roots[key] = tmp_path / key
        roots[key].mkdir()
        files = {f"{nest}{p}": t for p, t in (case.get(key) or {}).items()}
        if nest:
            files["Kptfile"] = PARENT_KPTFILE
        write_tree(roots[key], files)
    rel = case["relPackagePath"].strip("/")
    at = {k: (v / rel if rel else v) for k, v in roots.items()}
    for key in ("origin", "updated"):
        at[key].mkdir(parents=True, exist_ok=True)
    plan = planner.plan_update(at["local"], at["origin"], at["updated"], strategy=Strategy(case["strategy"]))
    update_plan.apply_plan(at["local"], plan)
    assert read_tree(roots["local"]) == read_tree(roots["expected"])
