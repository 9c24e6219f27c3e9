"""The performance tables are generated from the recorded bench run, never typed by hand (issue 15)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_and_docs_tables_are_what_report_generates_from_results_json() -> None:
    report = load_report()
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    for path, text in report.rendered(results).items():
        assert path.read_text() == text, f"{path.name} is stale: run python bench/report.py"


def test_results_json_is_a_full_checked_run_with_machine_and_date() -> None:
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    assert results["mode"] == "full" and results["date"] and results["machine"]["cpus"]
    cases = {row["case"] for row in results["rows"]}
    assert {"startup", "reorder-merge", "patches", "offline apply", "pass-through", "resource-merge"} <= cases
    assert any(case.startswith("promote") for case in cases)
    for row in results["rows"]:
        assert row["check"], f"{row['case']} {row['size']} was timed without a recorded check"
        assert row["ours"] and row["ours"]["cpu"] > 0
    assert {g["case"] for g in results["growth"]} >= {"reorder-merge", "patches", "offline apply"}


def test_the_real_package_update_run_is_recorded_checked_and_shown_first() -> None:
    """Issue 24: the kpt-fetched packages' run is in results.json, every answer checked, its row first in the README."""
    report = load_report()
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    real = results["real_update"]
    assert real["date"] and real["machine"]["kpt"] and real["runs"] >= 3
    assert len(real["rows"]) >= 7
    for row in real["rows"]:
        assert row["wrong"] == [], f"{row['package']}: krm-merge's answer differed from kpt's as data"
        assert row["kpt"] > 0 and row["ours"] > 0 and row["noop"] > 0
    summary = report.render_summary(results).splitlines()
    first_row = next(line for line in summary if line.startswith("| ") and "---" not in line and "| case |" not in line)
    assert first_row.startswith("| update, real packages |")


def test_a_section_is_replaced_between_its_markers_only() -> None:
    report = load_report()
    text = "a\n<!-- bench:rows begin -->\nold\n<!-- bench:rows end -->\nb\n"
    assert report.replace_section(text, "rows", "new") == "a\n<!-- bench:rows begin -->\nnew\n<!-- bench:rows end -->\nb\n"
