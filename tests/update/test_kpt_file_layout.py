"""The file layout merged 3-way, against real kpt: upstream moves resources to other files and splits a
multi-document file into one file per resource.

Rule (docs/merge.md): a resource local did not move follows upstream to its
new file (with local's changes merged in); one local moved stays where local
put it; a file left empty is removed; a file local created stays.  kpt agrees
for resources local did not change; for one local changed, kpt keeps local's
copy in the old file and adds upstream's in the new one, a duplicate
(asserted below: that is the documented improvement).  Fixed seeds.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_binary

from .world import World, cm, read_tree

pytestmark = pytest.mark.e2e

SEEDS = (51, 52, 53)


def where(tree: dict[str, Any]) -> dict[str, list[str]]:
    """ConfigMap name -> the files holding it."""
    out: dict[str, list[str]] = {}
    for rel, docs in tree.items():
        for doc in docs if isinstance(docs, list) else []:
            if isinstance(doc, dict) and doc.get("kind") == "ConfigMap":
                out.setdefault(doc["metadata"]["name"], []).append(rel)
    return out


def doc_of(tree: dict[str, Any], rel: str, name: str) -> dict[str, Any]:
    return next(d for d in tree[rel] if d["metadata"]["name"] == name)


@pytest.mark.parametrize("seed", SEEDS)
def test_resources_follow_upstream_to_their_new_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    require_binary("kpt")
    require_binary("git")
    rng = random.Random(seed)
    world = World(tmp_path, monkeypatch)
    names = [f"r{i}" for i in range(rng.randint(4, 6))]
    world.commit({"all.yaml": "---\n".join(cm(n, "1") for n in names), "single.yaml": cm("single", "1")}, tag="v1")
    # v2: the multi-document file split one file per resource (some values changed), single.yaml moved
    changed = set(rng.sample(names, 2))
    split: dict[str, str | None] = {f"{n}.yaml": cm(n, "2" if n in changed else "1") for n in names}
    world.commit({"all.yaml": None, "single.yaml": None, "moved/single.yaml": cm("single", "1"), **split}, tag="v2")
    world.get("v1")
    edited = rng.sample(names, 2)  # changed locally, left in their file
    mover = next(n for n in names if n not in edited)  # moved locally to a file of its own
    text = (world.kpt_pkg / "all.yaml").read_text()
    docs = text.split("---\n")
    kept = []
    for doc in docs:
        name = next(n for n in names if f"kpt-merge: /{n}\n" in doc)
        if name in edited:
            doc = doc.replace(f"  name: {name}\n", f"  name: {name}\n  labels:\n    mine: \"yes\"\n", 1)
        if name == mover:
            mine = doc
            continue
        kept.append(doc)
    world.edit_local({"all.yaml": "---\n".join(kept), "mine.yaml": mine})
    assert world.both("v2") == (0, 0)
    ours, theirs = read_tree(world.our_pkg), read_tree(world.kpt_pkg)
    placed = where(ours)
    assert placed.pop(mover) == ["mine.yaml"]  # local's move wins
    assert placed == {n: [f"{n}.yaml"] for n in names if n != mover} | {"single": ["moved/single.yaml"]}
    assert "all.yaml" not in ours and "single.yaml" not in ours  # emptied: removed
    for name in names:
        rel = "mine.yaml" if name == mover else f"{name}.yaml"
        got = doc_of(ours, rel, name)
        assert got["data"] == {"a": "2" if name in changed else "1"}
        assert got["metadata"].get("labels") == ({"mine": "yes"} if name in edited else None)
    # kpt: the same where local changed nothing; a duplicate where it did
    for name in names:
        if name in edited:
            assert sorted(where(theirs)[name]) == ["all.yaml", f"{name}.yaml"]
        elif name != mover:
            assert doc_of(theirs, f"{name}.yaml", name) == doc_of(ours, f"{name}.yaml", name)
    assert doc_of(theirs, "moved/single.yaml", "single") == doc_of(ours, "moved/single.yaml", "single")
