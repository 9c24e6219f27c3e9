"""The Kptfile ``status`` that ``kpt fn render`` writes, against real kpt (beta.56) and kpt's current rules.

Newer ``kpt fn render`` records ``status.conditions`` (type ``Rendered``) and
``status.renderStatus`` in the Kptfile.  kpt's current rules: that status is
not a local modification (beta.56 counts it, so a rendered package cannot
fast-forward: documented in docs/merge.md), and upstream's render status is
not carried into the local copy by fast-forward or force-delete-replace.
Values are drawn from fixed seeds.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import yaml

from krm_merge.kptfile.document import Strategy
from krm_merge.update import plan as update_plan, planner
from tests.conftest import require_binary

from .world import World, cm, kptfile, read_tree

pytestmark = pytest.mark.e2e

SEEDS = (31, 32)
RENDERED = 'status:\n  conditions:\n    - type: Rendered\n      status: "True"\n      reason: RenderSuccess\n'
RENDER_STATUS = "  renderStatus:\n    mutationSteps:\n      - image: ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2\n"


def history(world: World, rng: random.Random, upstream_status: str = "") -> None:
    """v1 and v2 of a package with a Kptfile; v2 changes every ConfigMap and may carry a render status."""
    files: dict[str, str | None] = {f"cm{i}.yaml": cm(f"cm{i}", str(rng.randint(0, 9))) for i in range(3)}
    files["Kptfile"] = kptfile("pkg", "info:\n  description: d\n")
    world.commit(files, tag="v1")
    files = {f"cm{i}.yaml": cm(f"cm{i}", f"v2-{rng.randint(0, 9)}") for i in range(3)}
    files["Kptfile"] = kptfile("pkg", "info:\n  description: d\n" + upstream_status)
    world.commit(files, tag="v2")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_rendered_package_fast_forwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    history(world, random.Random(seed))
    world.get("v1")
    ours = world.our_pkg / "Kptfile"
    ours.write_text(ours.read_text() + RENDERED + (RENDER_STATUS if seed % 2 else ""))
    # kpt beta.56 refuses the rendered copy (the deviation) ...
    rendered = world.tmp / "kpt" / "rendered"
    shutil.copytree(world.our_pkg, rendered)
    refused = world.kpt("pkg", "update", "rendered@v2", "--strategy", "fast-forward", check=False)
    # (beta.56 does not even know renderStatus: it cannot read such a Kptfile)
    expected = "field renderStatus not found" if seed % 2 else "local package files have been modified: [Kptfile]"
    assert refused.returncode == 1 and expected in refused.stderr
    # ... and updates the unrendered one to what we make of the rendered one
    assert world.update_kpt("v2", "fast-forward").returncode == 0
    assert world.update_ours("v2", "fast-forward") == 0
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    assert "status" not in yaml.safe_load(ours.read_text())


@pytest.mark.parametrize("strategy", ["fast-forward", "force-delete-replace"])
def test_upstream_render_status_is_not_carried_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strategy: str) -> None:
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    history(world, random.Random(SEEDS[0]), upstream_status=RENDERED)
    world.get("v1")
    assert world.both("v2", strategy) == (0, 0)
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    assert "status" not in yaml.safe_load((world.our_pkg / "Kptfile").read_text())


def test_other_conditions_stay_and_local_status_is_no_modification(tmp_path: Path) -> None:
    """Without kpt: a condition other than Rendered is upstream's data; local's status alone is no change."""
    base = tmp_path / "origin"
    up = tmp_path / "upstream"
    local = tmp_path / "local"
    for root, body in ((base, ""), (up, 'status:\n  conditions:\n    - type: Ready\n      status: "True"\n'
                                         '    - type: Rendered\n      status: "True"\n' + RENDER_STATUS), (local, RENDERED)):
        root.mkdir()
        (root / "Kptfile").write_text(kptfile("pkg", body))
        (root / "cm.yaml").write_text(cm("cm", "2" if root is up else "1"))
    plan = planner.plan_update(local, base, up, strategy=Strategy.FAST_FORWARD)
    update_plan.apply_plan(local, plan)
    assert yaml.safe_load((local / "Kptfile").read_text())["status"] == {"conditions": [{"type": "Ready", "status": "True"}]}
    assert yaml.safe_load((local / "cm.yaml").read_text())["data"] == {"a": "2"}
