"""``--shard I/N`` (issue 36): N shard runs together update exactly the selected packages, each once.

Shards run one after the other on one monorepo, as pods of an Indexed Job
sharing a volume would, for N = 1, 2 and 7; their reports merge into the
report of the whole fleet, and the tree equals an unsharded run's.  A
package's shard depends on the package alone: adding packages moves none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from krm_merge.fleet import shard
from tests.conftest import require_binary

from .world import KRM_MERGE, Fleet, report_of, spread, tree

pytestmark = pytest.mark.e2e

NAMES = [f"{region}/{name}" for region in ("eu", "us", "ap") for name in ("web", "api", "batch", "edge", "db")]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    require_binary("git")
    require_binary("kpt")
    return spread(Fleet(tmp_path_factory.mktemp("shards")), NAMES)


def fresh(fleet: Fleet, name: str) -> Path:
    where = fleet.tmp / name
    shutil.rmtree(where, ignore_errors=True)
    return fleet.copy(name)


@pytest.mark.parametrize("count", [1, 2, 7])
def test_shards_together_update_every_package_once(fleet: Fleet, count: int) -> None:
    whole = fresh(fleet, f"whole-{count}")
    assert fleet.fleet(cwd=whole).returncode == 0
    where = fresh(fleet, f"sharded-{count}")
    reports = []
    for index in range(count):
        out = where / f"shard-{index}.json"
        if index == 1:  # as an Indexed Job's pod: the index from JOB_COMPLETION_INDEX, N from KRM_MERGE_SHARDS
            env = {**fleet.env, "JOB_COMPLETION_INDEX": str(index), "KRM_MERGE_SHARDS": str(count)}
            proc = fleet.fleet("--report", "json", str(out), cwd=where, env=env)
        else:
            proc = fleet.fleet("--shard", f"{index}/{count}", "--report", "json", str(out), cwd=where)
        assert proc.returncode == 0, proc.stderr
        reports.append(report_of(out))
    paths = [p["path"] for r in reports for p in r["packages"]]
    assert sorted(paths) == sorted(f"mono/clusters/{name}" for name in NAMES)  # every package, each once
    assert all(p["status"] == "updated" for r in reports for p in r["packages"])
    assert all(r["selected"] == len(NAMES) and r["shards"]["count"] == count for r in reports)
    assert tree(where / "mono") == tree(whole / "mono")
    merged = fleet.krm_merge(["report", "merge", *(f"shard-{i}.json" for i in range(count)), "--report", "json", "-"],
                             cwd=where)
    assert merged.returncode == 0, merged.stderr
    data = json.loads(merged.stdout)
    assert data["totals"] == {"packages": len(NAMES), "updated": len(NAMES), "current": 0, "conflicted": 0, "failed": 0}
    assert data["shards"] == {"count": count, "reported": list(range(count))}
    if count > 1:  # a shard's report missing: the merge says which and fails
        partial = fleet.krm_merge(["report", "merge", *(f"shard-{i}.json" for i in range(1, count))], cwd=where)
        assert partial.returncode == 1 and "shard 0 of" in partial.stderr and "not reported" in partial.stderr


def test_adding_packages_moves_no_package_to_another_shard(fleet: Fleet) -> None:
    where = fresh(fleet, "growing")

    def shards_of() -> dict[str, int]:
        found = {}
        for index in range(3):
            proc = fleet.fleet("--dry-run", "--shard", f"{index}/3", "--report", "json", "-", cwd=where)
            found.update({p["path"]: index for p in json.loads(proc.stdout)["packages"]})
        return found

    before = shards_of()
    for name in ("eu/new", "aa/first", "zz/last"):
        shutil.copytree(where / "mono" / "clusters" / "eu" / "web", where / "mono" / "clusters" / name)
    after = shards_of()
    assert len(after) == len(before) + 3
    assert {path: after[path] for path in before} == before
    assert len(set(before.values())) == 3  # the 15 packages do spread over the three shards


def test_the_share_is_rendezvous_hashing_of_the_path() -> None:
    keys = [f"clusters/{n}" for n in range(3000)]
    counts = [sum(shard.owner(k, 7) == i for k in keys) for i in range(7)]
    assert min(counts) > 3000 / 7 * 0.8  # even enough
    moved = sum(shard.owner(k, 7) != shard.owner(k, 8) for k in keys)
    assert moved < 3000 * (1 / 8) * 1.3  # one more shard moves about 1/8, not most, of the packages
    assert all(shard.owner(k, 8) == 7 for k in keys if shard.owner(k, 7) != shard.owner(k, 8))  # only to the new one
    assert shard.parse("0/1") == (0, 1) and str(shard.parse("3/7")) == "3/7"
    for bad in ("7/7", "-1/3", "1/0", "1", "a/b", "1/3/4"):
        with pytest.raises(shard.ShardError):
            shard.parse(bad)
    assert shard.from_options(None, None, {}) is None
    assert shard.from_options(None, 4, {"JOB_COMPLETION_INDEX": "3"}) == (3, 4)
    assert shard.from_options(None, None, {"JOB_COMPLETION_INDEX": "0", "KRM_MERGE_SHARDS": "2"}) == (0, 2)
    assert shard.from_options("1/2", None, {"JOB_COMPLETION_INDEX": "0", "KRM_MERGE_SHARDS": "2"}) == (1, 2)
    for env in ({"JOB_COMPLETION_INDEX": "0"}, {"KRM_MERGE_SHARDS": "2"}, {"JOB_COMPLETION_INDEX": "2", "KRM_MERGE_SHARDS": "2"}):
        with pytest.raises(shard.ShardError):
            shard.from_options(None, None, env)


@pytest.mark.parametrize(("args", "env", "words", "value"), [
    (["--shard", "\u00b2/3"], {}, "--shard '\u00b2/3': I: expected a whole number from 0 to 9999", "got '\u00b2'"),
    (["--shard", "1/" + "9" * 5000], {}, ": N: expected a whole number from 1 to 10000", "(5000 characters)"),
    ([], {"JOB_COMPLETION_INDEX": "\u00b2", "KRM_MERGE_SHARDS": "3"},
     "JOB_COMPLETION_INDEX: expected a whole number from 0 to 9999", "got '\u00b2'"),
    ([], {"JOB_COMPLETION_INDEX": "1", "KRM_MERGE_SHARDS": "\u0663"},  # Arabic-Indic three: int() takes it
     "KRM_MERGE_SHARDS: expected a whole number from 1 to 10000", "got '\u0663'"),
    (["--shard-count", "9" * 5000], {"JOB_COMPLETION_INDEX": "1"},
     "argument --shard-count: expected a whole number of at least 1", "(5000 characters)"),
    (["--jobs", "\u0661"], {}, "argument --jobs: expected a whole number from 1 to 1024", "got '\u0661'"),
    (["--jobs", "1_0"], {}, "argument --jobs: expected a whole number from 1 to 1024", "got '1_0'"),
])
def test_a_number_that_is_not_ascii_digits_is_one_usage_error(tmp_path: Path, args: list[str], env: dict[str, str],
                                                               words: str, value: str) -> None:
    """``--shard ²/3`` and ``JOB_COMPLETION_INDEX=²`` were tracebacks (``isdigit()`` takes '²', ``int()`` refuses
    it), so was an N of 5,000 digits (Python's 4,300-digit limit); ``int()`` took Arabic-Indic digits and '1_0'.
    Each is now one usage error naming the option or variable and the value, cut when long."""
    proc = subprocess.run([KRM_MERGE, "update", "mono", "--upstream", "https://example.com/blueprints", "--ref", "v1",
                           *args], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**{k: v for k, v in os.environ.items() if k not in (shard.INDEX_VARIABLE,
                                                                                  shard.COUNT_VARIABLE)}, **env})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("krm-merge update: error: ") and words in proc.stderr and value in proc.stderr, \
        proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr) < 1000, proc.stderr
