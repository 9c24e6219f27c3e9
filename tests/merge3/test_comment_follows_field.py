"""A field's comments follow their own rule, also when upstream's value replaces local's (issue 33).

docs/merge.md: comments follow the values' rule — upstream's comment change
is taken unless local edited that comment.  The value taken from upstream
used to bring upstream's line comment along, so a comment local wrote on the
line (a ``$promotion`` marker: promote finds the field by it) was dropped
whenever upstream changed the value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from krm_merge.commands import update
from krm_merge.merge3 import MergeOptions, merge3

from .rt import dump, load

ORIGIN = """\
kind: Deployment
spec:
  replicas: 1 # how many
  template:
    spec:
      containers:
      - name: app
        image: nginx:1
"""
UPSTREAM = ORIGIN.replace("replicas: 1", "replicas: 2").replace("nginx:1", "nginx:2")
MARKER = '# {"$promotion": "prod:app"}'
LOCAL = ORIGIN.replace("image: nginx:1", f"image: nginx:1 {MARKER}").replace("# how many", "# mine")


def merged(local: str, origin: str, upstream: str) -> str:
    return dump(merge3(load(local), load(origin), load(upstream), None, MergeOptions()).result)


def test_a_local_line_comment_stays_when_upstream_changes_the_value() -> None:
    out = merged(LOCAL, ORIGIN, UPSTREAM)
    assert f"image: nginx:2 {MARKER}\n" in out  # the promotion marker stays on its field
    assert "replicas: 2 # mine\n" in out  # local's edited comment wins over upstream's unchanged one


@pytest.mark.parametrize("local, origin, upstream, comment", [
    # upstream changed the comment, local left it: upstream's (kyaml "Update comment")
    ("a: 1 # o\n", "a: 1 # o\n", "a: 2 # u\n", "# u"),
    # upstream deleted the comment, local left it: gone
    ("a: 1 # o\n", "a: 1 # o\n", "a: 2\n", None),
    # local deleted the comment, upstream changed the value only: stays deleted (kyaml "Don't add local deleted")
    ("a: 1\n", "a: 1 # o\n", "a: 2 # o\n", None),
    # both changed value and comment: the comment goes with upstream's winning value (kyaml "Change an updated field")
    ("a: 3 # l\n", "a: 1 # o\n", "a: 2 # u\n", "# u"),
])
def test_the_comment_rule(local: str, origin: str, upstream: str, comment: str | None) -> None:
    out = merged(local, origin, upstream)
    assert out.startswith("a: 2")
    assert (out.split("#", 1)[1].strip() if "#" in out else None) == (comment[1:].strip() if comment else None)


def test_update_keeps_a_promotion_marker_upstream_knows_nothing_of(tmp_path: Path) -> None:
    for name, text in (("origin", ORIGIN), ("upstream", UPSTREAM), ("local", LOCAL)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "d.yaml").write_text("apiVersion: apps/v1\nmetadata:\n  name: web\n" + text)
    assert update.main([str(tmp_path / "local"), "--origin", str(tmp_path / "origin"),
                        "--upstream", str(tmp_path / "upstream")]) == 0
    out = (tmp_path / "local" / "d.yaml").read_text()
    assert f"        image: nginx:2 {MARKER}\n" in out and "  replicas: 2 # mine\n" in out
