"""Differential test: ``kpt pkg get`` + local edits + ``kpt pkg update`` vs ``krm-merge update`` on generated git repos.

Each seed generates an upstream history (several commits and tags; resources
changed, added, deleted; a subpackage; with or without a root Kptfile), the
package is fetched with the real ``kpt pkg get`` at the first tag, edited
locally (resources changed and renamed through the ``kpt-merge`` comment,
local resources and a local subpackage added), and updated to the last tag
by kpt and by krm-merge, with every strategy.  The two packages must be equal
as data, Kptfiles (``upstream``/``upstreamLock``) included.  Edits avoid the
documented deviations (docs/merge.md), which have their own tests.
Seeds are fixed so CI is repeatable.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import require_binary

from .world import World, kptfile, read_tree

pytestmark = pytest.mark.e2e

SEEDS = (11, 12, 13)
STRATEGIES = ("resource-merge", "fast-forward", "force-delete-replace")


def deployment(name: str, image: str, replicas: int, env: dict[str, str]) -> str:
    env_text = "".join(f"            - name: {k}\n              value: \"{v}\"\n" for k, v in env.items())
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: {name}\n"
        f"spec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n        - name: main\n"
        f"          image: {image}\n          env:\n{env_text}"
    )


def config_map(name: str, data: dict[str, str]) -> str:
    body = "".join(f"  {k}: \"{v}\"\n" for k, v in data.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{body}"


class History:
    """An upstream package and its next versions, drawn from one seed."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.root_kptfile = rng.random() < 0.5
        self.apps = [f"app{i}" for i in range(rng.randint(2, 4))]
        self.files: dict[str, str | None] = {}
        for i, app in enumerate(self.apps):
            self.files[f"{app}.yaml"] = deployment(app, f"img/{app}:1.0", rng.randint(1, 3), {"A": str(i), "B": "b"})
            self.files[f"{app}-cm.yaml"] = config_map(f"{app}-cm", {"x": "1", "y": str(rng.randint(0, 9))})
        self.files["sub/Kptfile"] = kptfile("sub")
        self.files["sub/s.yaml"] = config_map("s", {"k": "1"})
        self.files["README.md"] = "upstream\n"
        if self.root_kptfile:
            self.files["Kptfile"] = kptfile("pkg", "info:\n  description: generated\n")

    def next_version(self, n: int) -> dict[str, str | None]:
        """Upstream changes for version ``n``: images, env, data, one resource added and one deleted."""
        rng, changes = self.rng, {}
        for app in self.apps:
            if rng.random() < 0.7:
                changes[f"{app}.yaml"] = deployment(app, f"img/{app}:{n}.0", 1, {"A": "0", "B": f"b{n}", f"N{n}": "new"})
        victim = self.apps[-1]
        if n == 3 and len(self.apps) > 2:
            changes[f"{victim}-cm.yaml"] = None  # deleted upstream (unchanged locally)
        changes[f"added{n}.yaml"] = config_map(f"added{n}", {"v": str(n)})
        changes["sub/s.yaml"] = config_map("s", {"k": str(n)})
        changes["README.md"] = f"upstream v{n}\n"
        self.files.update(changes)
        return changes


def local_edits(files: dict[str, str], rng: random.Random) -> dict[str, str | None]:
    """Edits a user makes to the fetched package (text edits: kpt's comments and annotations stay)."""
    edits: dict[str, str | None] = {}
    deploy = sorted(p for p in files if p.startswith("app") and p.endswith(".yaml") and "-cm" not in p)
    first = deploy[0]
    edits[first] = files[first].replace("labels:\n", "labels:\n    team: mine\n", 1)
    renamed = deploy[1]
    name = renamed[:-5]
    edits[renamed] = files[renamed].replace(f"\n  name: {name}\n", f"\n  name: {name}-renamed\n", 1)
    edits["mine.yaml"] = config_map("mine", {"local": "yes"})
    edits["localsub/Kptfile"] = kptfile("localsub")
    edits["localsub/l.yaml"] = config_map("l", {"z": "1"})
    edits["notes.txt"] = "local notes\n"
    if rng.random() < 0.5:
        cm = sorted(p for p in files if p.endswith("-cm.yaml"))[0]
        edits[cm] = files[cm].replace("  x: \"1\"\n", "  x: \"1\"\n  extra: \"local\"\n")
    return edits


CASES = [(seed, "resource-merge") for seed in SEEDS] + [(SEEDS[0], s) for s in STRATEGIES[1:]] + [(SEEDS[1], STRATEGIES[2])]


@pytest.mark.parametrize(("seed", "strategy"), CASES)
def test_update_agrees_with_kpt_on_a_git_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, strategy: str) -> None:
    require_binary("kpt")
    require_binary("git")
    world = World(tmp_path, monkeypatch)
    rng = random.Random(seed)
    history = History(rng)
    world.commit(history.files, tag="v1")
    world.commit(history.next_version(2), tag="v2")
    world.commit(history.next_version(3))  # untagged commit in between
    world.commit(history.next_version(4), tag="v4")
    world.get("v1")
    if strategy != "fast-forward":  # fast-forward needs an unmodified package
        fetched = {p: (world.our_pkg / p).read_text() for p in ("app0.yaml", "app1.yaml", "app0-cm.yaml")}
        world.edit_local(local_edits(fetched, rng))
    kpt_rc, our_rc = world.both("v4", strategy)
    assert (kpt_rc, our_rc) == (0, 0)
    ours, theirs = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    assert ours == theirs
    assert ours["Kptfile"][0]["upstreamLock"]["git"]["ref"] == "v4"
    assert ours["added4.yaml"][0]["data"] == {"v": "4"} and ours["sub/s.yaml"][0]["data"] == {"k": "4"}
    if strategy == "resource-merge":
        assert ours["app1.yaml"][0]["metadata"]["name"] == "app1-renamed"
        assert "localsub/l.yaml" in ours and "mine.yaml" in ours
