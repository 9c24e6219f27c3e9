"""``bench/run.py --only CASES --merge``: only those cases' rows change in the recorded full run (issue 24)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def load_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def row(case: str, size: str, cpu: float) -> dict[str, Any]:
    return {"case": case, "size": size, "ours": {"cpu": cpu}}


def test_only_the_chosen_cases_rows_and_growth_are_replaced_in_place() -> None:
    run = load_run()
    full = {
        "mode": "full", "date": "then",
        "rows": [row("startup", "1", 1.0), row("resource-merge", "500", 2.0), row("resource-merge", "2,000", 3.0),
                 row("promote", "5,000", 4.0)],
        "growth": [{"case": "patches", "steps": [1]}, {"case": "resource-merge", "steps": [2]}],
        "remeasured": [{"cases": ["update"], "date": "earlier"}, {"cases": ["startup"], "date": "kept"}],
    }
    new_rows = [row("resource-merge", "500", 20.0), row("resource-merge", "2,000", 30.0)]
    partial = {"cases": ["update"], "date": "now"}
    merged = run.merge_rows(full, new_rows, [{"case": "resource-merge", "steps": [22]}], partial)
    assert [(r["case"], r["size"], r["ours"]["cpu"]) for r in merged["rows"]] == [
        ("startup", "1", 1.0), ("resource-merge", "500", 20.0), ("resource-merge", "2,000", 30.0),
        ("promote", "5,000", 4.0)]
    assert merged["growth"] == [{"case": "patches", "steps": [1]}, {"case": "resource-merge", "steps": [22]}]
    assert merged["remeasured"] == [{"cases": ["startup"], "date": "kept"}, partial]
    assert merged["date"] == "then" and merged["mode"] == "full"
    assert full["rows"][1]["ours"]["cpu"] == 2.0  # the recorded run read is not modified


def test_a_case_the_full_run_lacked_is_added_at_the_end() -> None:
    run = load_run()
    full = {"mode": "full", "rows": [row("startup", "1", 1.0)], "growth": []}
    merged = run.merge_rows(full, [row("resource-merge", "500", 2.0)], [{"case": "resource-merge", "steps": []}],
                            {"cases": ["update"]})
    assert [r["case"] for r in merged["rows"]] == ["startup", "resource-merge"]
    assert merged["growth"] == [{"case": "resource-merge", "steps": []}]


def test_a_run_of_more_cases_replaces_the_entries_it_measured_again() -> None:
    run = load_run()
    full = {"mode": "full", "rows": [row("startup", "1", 1.0), row("resource-merge", "500", 2.0)], "growth": [],
            "remeasured": [{"cases": ["update"], "date": "older"}, {"cases": ["promote", "update"], "date": "kept"}]}
    partial = {"cases": ["startup", "update"], "date": "now"}
    merged = run.merge_rows(full, [row("startup", "1", 0.5), row("resource-merge", "500", 1.5)], [], partial)
    # "update" alone is measured again; "promote" is not, so that entry still names promote's rows
    assert merged["remeasured"] == [{"cases": ["promote", "update"], "date": "kept"}, partial]
