"""The fleet-at-scale bench (bench/cases_fleet_scale.py, issue 46) checks its answer and judges growth by count.

The whole command runs at two small sizes and prints each size's figures and the growth; a consumer that
differs from the single update's answer stops it (``bench: error:``) before anything is timed; growth is wall
time per consumer at the largest size over the smallest's.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import require_binary

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cases_fleet_scale", BENCH / "cases_fleet_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # it puts bench/ on sys.path for its sibling cases_fleet, as when run
    return module


scale = _load()


def test_the_command_checks_times_and_reports_growth_at_two_sizes() -> None:
    require_binary("git")
    require_binary("kpt")
    done = subprocess.run([sys.executable, str(BENCH / "cases_fleet_scale.py"), "--sizes", "10,20", "--jobs", "2"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "10 consumers: checked {'identical_to_single': 10, 'edited_locally': 1}" in lines
    assert "20 consumers: checked {'identical_to_single': 20, 'edited_locally': 2}" in lines
    assert lines[-1].startswith("growth 10 -> 20: wall per consumer x")


def test_a_consumer_unlike_the_single_update_s_answer_stops_the_bench(tmp_path: Path) -> None:
    require_binary("git")
    require_binary("kpt")
    env = scale.environment(tmp_path)
    mono = scale.build(tmp_path, 12, env)
    refs = scale.references(tmp_path, mono, env)
    report = tmp_path / "report.json"
    fleet = subprocess.run([scale.KRM_MERGE, "update", "clusters", "--upstream", f"file://{tmp_path / 'up'}.git/app",
                            "--ref", "v2", "--report", "json", str(report)], cwd=mono, env=env, capture_output=True,
                           text=True, timeout=600)
    assert fleet.returncode == 0, fleet.stderr
    assert scale.check(12, mono, report, refs) == {"identical_to_single": 12, "edited_locally": 2}
    deploy = mono / "clusters" / scale.name(10) / "deploy.yaml"  # an edited one loses its edit
    deploy.write_text(deploy.read_text().replace("replicas: 5", "replicas: 2"))
    with pytest.raises(SystemExit, match=r"bench: error: 1 consumer\(s\) differ .*c00010"):
        scale.check(12, mono, report, refs)


def test_growth_is_wall_time_per_consumer_at_the_largest_size_over_the_smallest_s() -> None:
    rows = [{"consumers": 1000, "wall": 10.0, "cpu": 8.0, "peak_mb": 100.0},
            {"consumers": 10000, "wall": 110.0, "cpu": 80.0, "peak_mb": 120.0}]
    grown = scale.growth(rows)
    assert (grown["wall_ratio"], grown["cpu_ratio"], grown["linear"], grown["peak_ratio"]) == (1.1, 1.0, True, 1.2)
    rows[1]["wall"], rows[1]["peak_mb"] = 200.0, 2000.0
    grown = scale.growth(rows)
    assert (grown["wall_ratio"], grown["linear"], grown["peak_within_target"]) == (2.0, False, False)
