"""``--strategy force-delete-replace``: the root Kptfile is the one kpt makes, against real kpt (issue 33).

kpt 1.0.0-beta.56 deletes every file but the root Kptfile and copies
upstream's: the local Kptfile keeps its ``info`` and its pipeline (image
names included), only ``upstream``/``upstreamLock`` are recorded anew.
krm-merge took upstream's Kptfile instead (on 3 of the issue's 7 real
packages the result differed from kpt's).  Resources are upstream's, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import require_binary

from .world import World, cm, kptfile, read_tree

pytestmark = pytest.mark.e2e

PIPELINE = "pipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:{v}\n      configMap:\n        namespace: ns\n"


def package(version: str, description: str) -> dict[str, str | None]:
    body = f"info:\n  description: {description}\n" + PIPELINE.format(v=version)
    return {"Kptfile": kptfile("pkg", body), "cm.yaml": cm("cm", version)}


@pytest.mark.parametrize("local_edit", [False, True])
def test_the_root_kptfile_is_kpts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_edit: bool) -> None:
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    world.commit(package("v0.1", "upstream's first"), tag="v1")
    world.commit(package("v0.2", "upstream's second"), tag="v2")
    world.get("v1")
    if local_edit:  # the user's own description and function version
        text = (world.our_pkg / "Kptfile").read_text()
        world.edit_local({"Kptfile": text.replace("upstream's first", "ours").replace("v0.1", "v0.1-patched")})
    before = yaml.safe_load((world.our_pkg / "Kptfile").read_text())
    assert world.both("v2", "force-delete-replace") == (0, 0)
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    ours = yaml.safe_load((world.our_pkg / "Kptfile").read_text())
    assert ours["info"] == before["info"] and ours["pipeline"] == before["pipeline"]  # local's, as kpt keeps them
    assert ours["upstreamLock"]["git"]["ref"] == "v2"
    assert yaml.safe_load((world.our_pkg / "cm.yaml").read_text())["data"] == {"a": "v0.2"}
