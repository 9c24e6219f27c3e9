""""Unchanged locally" on a ``kpt pkg get`` copy is decided as data (issue 24).

kpt's get re-prints every resource (indentation, quoting), drops an empty
``annotations: {}`` and adds its ``# kpt-merge`` comment and identifier
annotation: none of that is a local change, so such a resource takes
upstream's version without the round-trip merge.  A changed value, a new
comment or a moved key is a local change.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from krm_merge.outcomes.kinds import Action, ResourceOutcome
from krm_merge.update import planner
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.update import identity
from krm_merge.update import package_merge as package
from krm_merge.update.identity import content_text
from krm_merge.update import unchanged
from krm_merge.update.unchanged import comments_of, same_as_fetched
from tests.conftest import require_binary

from .world import World, read_tree

ORIGIN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations: {}
  name: web
  namespace: prod
spec:
  template:
    spec:
      containers:
      - name: app  # the only one
        image: "nginx:1"
        args: ["--port", '8080']
"""

# What `kpt pkg get` makes of ORIGIN: its comment and annotation, wide sequences, other quoting.
FETCHED = """\
apiVersion: apps/v1
kind: Deployment
metadata: # kpt-merge: prod/web
  name: web
  namespace: prod
  annotations:
    internal.kpt.dev/upstream-identifier: 'apps|Deployment|prod|web'
spec:
  template:
    spec:
      containers:
        - name: app # the only one
          image: nginx:1
          args:
            - --port
            - "8080"
"""


def test_kpts_reprint_with_its_comment_and_annotation_is_unchanged() -> None:
    assert same_as_fetched(KubeObject(FETCHED), KubeObject(ORIGIN))


@pytest.mark.parametrize("edit", [
    ("image: nginx:1", "image: nginx:2"),  # a value
    ('- "8080"', "- 8080"),  # a type: the string "8080" became a number
    ("          image: nginx:1\n", "          image: nginx:1  # pinned\n"),  # a comment added
    ("# the only one", "# the first one"),  # a comment changed
    ("  name: web\n  namespace: prod\n", "  namespace: prod\n  name: web\n"),  # keys moved
    ("    internal.kpt.dev", "    mine: x\n    internal.kpt.dev"),  # an annotation of the user's
])
def test_a_local_change_is_a_change(edit: tuple[str, str]) -> None:
    old, new = edit
    assert old in FETCHED
    assert not same_as_fetched(KubeObject(FETCHED.replace(old, new, 1)), KubeObject(ORIGIN))


def test_comments_skip_kpts_comment_and_keep_order() -> None:
    assert comments_of(FETCHED) == ["# the only one"]
    assert comments_of("a: 1 # x\n# y\nb: '#not' # z\n") == ["# x", "# y", "# z"]


def test_an_unreadable_document_is_not_unchanged() -> None:
    assert not same_as_fetched(KubeObject("a: [1\n"), KubeObject(ORIGIN))


def spy_full_merges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the resources the round-trip 3-way merge runs for, from now on."""
    merged: list[str] = []
    real = package.PackageMerger._full_merge

    def spy(self: package.PackageMerger, obj: KubeObject, *args: object) -> bool:
        merged.append(obj.name)
        return real(self, obj, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(package.PackageMerger, "_full_merge", spy)
    return merged


def test_package_update_takes_upstream_without_the_round_trip_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, up, local = (tmp_path / d for d in ("origin", "upstream", "local"))
    for root, text in ((base, ORIGIN), (up, ORIGIN.replace('"nginx:1"', '"nginx:2"')), (local, FETCHED)):
        root.mkdir()
        (root / "web.yaml").write_text(text)
    edited = local / "other.yaml"
    edited.write_text(FETCHED.replace("web", "other").replace("nginx:1", "mine"))
    (base / "other.yaml").write_text(ORIGIN.replace("web", "other"))
    (up / "other.yaml").write_text(ORIGIN.replace("web", "other").replace("  template:", "  replicas: 2\n  template:"))

    merged = spy_full_merges(monkeypatch)
    plan = planner.plan_update(local, base, up)
    assert merged == []  # "other" changed on both sides, but in different fields: no full merge either (issue 33)
    outcome = {o.resource.display(): o.action for o in plan.outcomes if isinstance(o, ResourceOutcome) and o.resource}
    assert outcome["Deployment/prod/web"] is Action.TAKEN
    written = {w.path: (w.data or b"").decode() for w in plan.writes}
    # local's (kpt-printed) text with upstream's one change: the image (issue 33; it was upstream's text)
    assert written["web.yaml"] == FETCHED.replace("image: nginx:1", "image: nginx:2")
    other = yaml.safe_load(written["other.yaml"])["spec"]
    assert (other["replicas"], other["template"]["spec"]["containers"][0]["image"]) == (2, "mine")


def test_kpt_fetched_package_updates_to_kpts_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: a resource kpt re-printed on get, changed upstream only, ends as kpt's file, byte for byte."""
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    origin = ORIGIN.replace("  # the", " # the")  # kpt re-spaces comments it prints: a rule of its own
    world.commit({"web.yaml": origin}, tag="v1")
    world.commit({"web.yaml": origin.replace('"nginx:1"', '"nginx:2"')}, tag="v2")
    world.get("v1")
    assert (world.our_pkg / "web.yaml").read_text() != origin  # kpt re-printed it
    assert world.both("v2") == (0, 0)
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    assert (world.our_pkg / "web.yaml").read_bytes() == (world.kpt_pkg / "web.yaml").read_bytes()


def reference_content_text(text: str) -> str:
    """content_text as the plain pattern substitutions over the whole text (what the fast version must equal)."""
    out = identity._BOOKKEEPING_LINE.sub("", text)
    out = identity._EMPTY_ANNOTATIONS.sub("", out)
    return identity._KPT_MERGE_COMMENT.sub(r"\1", out)


def test_content_text_equals_the_patterns_over_the_whole_text() -> None:
    lines = [
        "metadata: # kpt-merge: ns/n", "metadata:", "  annotations:", "    internal.kpt.dev/upstream-identifier: 'a|B|c|d'",
        "    'config.kubernetes.io/index': '0'", "    config.kubernetes.io/path: x.yaml", "    config.k8s.io/id: '1'",
        "    internal.config.kubernetes.io/annotations-migration-resource-id: '0'", "    mine: keep",
        "  name: n", "  labels:", "    a: config.kubernetes.io/path", "spec:", "  template:", "    metadata:",
        "      annotations:", "        config.kubernetes.io/index: '3'", "  x: kpt-merge: no", "# kpt-merge: c", "",
    ]
    rng = random.Random(24)
    for _ in range(2000):
        text = "\n".join(rng.choice(lines) for _ in range(rng.randint(1, 12))) + rng.choice(["", "\n"])
        assert content_text(text) == reference_content_text(text), text


# A ConfigMap holding a configuration file whose own comments are text of the block scalar, as
# free5gc-cp's do (issue 33).  A line ending in blanks makes kpt's get re-print the scalar as one
# double-quoted string, so the `#` text moves onto other lines of another scalar style.
CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: ausf
data:
  ausfcfg.yaml: |
    configuration:
      sbi:
        registerIPv4: ausf # IP used to register to NRF  
        bindingIPv4: 0.0.0.0  # IP used to bind the service
      # not a comment either
  motd: 'one # two
    three # four'
  note: "five #
    six"
  list: ['seven # eight', "nine", {ten: 'a # b'}]
  "quoted # key": x # a real comment
"""


def test_hash_text_inside_scalars_is_not_a_comment() -> None:
    assert comments_of(CONFIG) == ["# a real comment"]
    after_block = CONFIG.replace("  motd:", "  # after the block\n  motd:")
    assert comments_of(after_block) == ["# after the block", "# a real comment"]
    sequence = "a:\n- |\n  # text\n  more\n# real\n- >-\n    # text\n  # real too\n"
    assert comments_of(sequence) == ["# real", "# real too"]


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=" \t\n#ab:-'\"", max_size=40))
def test_the_quick_look_for_a_comment_start_agrees_with_the_pattern(text: str) -> None:
    # comments_of skips its scanner when no '#' can start a comment: found by str.find, as the pattern finds it
    assert unchanged._may_start_comment(text) == bool(unchanged._any_hash().search(text))


@pytest.mark.parametrize("edit", [
    ("  motd:", "  # added by hand\n  motd:"),  # a comment line between entries
    ("        bindingIPv4: 0.0.0.0  # IP used to bind the service\n      # not", None),  # the block's text changed
    ("  list:", "  list: # mine\n   "),  # after a key
])
def test_a_comment_added_around_block_scalars_is_a_change(edit: tuple[str, str | None]) -> None:
    old, new = edit
    assert old in CONFIG
    local = CONFIG.replace(old, new if new is not None else old.replace("the service", "the service!"), 1)
    assert not same_as_fetched(KubeObject(local), KubeObject(CONFIG))


def test_kpts_reprint_of_block_scalars_holding_hash_text_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: kpt's get re-prints the scalars; the resource is still unchanged locally, and
    taking upstream's change needs no 3-way merge; the result is kpt's, byte for byte."""
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    world.commit({"cm.yaml": CONFIG}, tag="v1")
    world.commit({"cm.yaml": CONFIG.replace("key\": x #", "key\": z #")}, tag="v2")
    world.get("v1")
    fetched = (world.our_pkg / "cm.yaml").read_text()
    assert "ausfcfg.yaml: |" not in fetched and "motd: 'one # two three" in fetched  # kpt re-printed the scalars
    assert same_as_fetched(KubeObject(fetched), KubeObject(CONFIG))
    assert not same_as_fetched(KubeObject(fetched.replace("data:", "# mine\ndata:")), KubeObject(CONFIG))

    merged = spy_full_merges(monkeypatch)
    assert world.both("v2") == (0, 0)
    assert merged == []
    assert (world.our_pkg / "cm.yaml").read_bytes() == (world.kpt_pkg / "cm.yaml").read_bytes()


def test_disjoint_changes_meet_on_a_common_field_or_list() -> None:
    from krm_merge.update.unchanged import disjoint_changes

    origin = {"a": {"b": 1, "c": 2}, "l": [1, 2], "d": {"e": 1}}
    assert disjoint_changes({**origin, "a": {"b": 9, "c": 2}}, origin, {**origin, "a": {"b": 1, "c": 9}})
    assert disjoint_changes({**origin, "new": 1}, origin, {"d": {"e": 1}, "l": [1, 2], "a": {"c": 2, "b": 1}, "x": 2})
    assert not disjoint_changes({**origin, "a": {"b": 9, "c": 2}}, origin, {**origin, "a": {"b": 8, "c": 2}})  # one field
    assert not disjoint_changes({**origin, "a": {"b": 9, "c": 2}}, origin, {**origin, "a": 5})  # inside upstream's
    assert not disjoint_changes({**origin, "d": None}, origin, {**origin, "d": {"e": 2}})  # upstream's inside local's
    assert not disjoint_changes({**origin, "l": [0, 2]}, origin, {**origin, "l": [1, 3]})  # a list is one field
    assert not disjoint_changes({**origin, "x": 1}, origin, {**origin, "x": 1})  # both added the same key
    assert not disjoint_changes({**origin, "x": {"y": []}}, origin, {**origin, "l": []})  # local wrote an empty list
    assert not disjoint_changes({"a": origin["a"], "l": [1, 2]}, origin, {**origin, "l": [3]})  # local deleted "d"
    assert disjoint_changes({**origin, "x": 1}, origin, {"a": origin["a"], "l": [1, 2]})  # upstream deleted it
    assert disjoint_changes({**origin, "x": {"y": [1]}}, origin, {**origin, "l": []})  # upstream's: its change
    nulls = {**origin, "n": None}
    assert disjoint_changes({**nulls, "x": 1}, nulls, {**nulls, "l": [3]})  # a null nobody changed
    assert not disjoint_changes({**origin, "x": None}, origin, {**origin, "l": [3]})  # local wrote a null
    assert not disjoint_changes({**nulls, "x": 1}, nulls, {**nulls, "n": 1})  # upstream replaced one
    assert not disjoint_changes({**origin, "x": 1}, origin, {**origin, "d": {"e": None}})  # upstream wrote one


def test_changes_on_both_sides_of_different_fields_take_no_3_way_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against real kpt: local changed some fields, upstream others: upstream's change is applied to local's
    text as data (no ruamel, no engine), and the result is kpt's; where both changed one field the 3-way
    merge still decides (issue 33)."""
    require_binary("git")
    require_binary("kpt")
    world = World(tmp_path, monkeypatch)
    origin = ORIGIN.replace("  # the", " # the")
    other = origin.replace("name: web", "name: other")
    world.commit({"web.yaml": origin, "other.yaml": other}, tag="v1")
    world.commit({"web.yaml": origin.replace('"nginx:1"', '"nginx:2"').replace("spec:\n  template", "spec:\n  replicas: 3\n  template"),
                  "other.yaml": other.replace('"nginx:1"', '"nginx:2"')}, tag="v2")
    world.get("v1")
    for name in ("web.yaml", "other.yaml"):  # local: an annotation on both, and other's image too
        text = (world.our_pkg / name).read_text().replace("  annotations:\n", "  annotations:\n    team: shop\n", 1)
        world.edit_local({name: text.replace("nginx:1", "nginx:mine") if name == "other.yaml" else text})
    before = (world.our_pkg / "web.yaml").read_text()
    script = ("import sys\nfrom krm_merge.update import context\nfrom krm_merge.commands import update\n"
              "merged = []\nreal = context.MergeContext._full_merge\n"
              "def spy(self, obj, *a):\n    merged.append(obj.name)\n    return real(self, obj, *a)\n"
              "context.MergeContext._full_merge = spy\n"
              f"code = update.main([{str(world.our_pkg) + '@v2'!r}])\n"
              "print(code, merged)\n")
    proc = subprocess.run([sys.executable, "-c", script], env=world.env, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "0 ['other']", proc.stdout + proc.stderr
    assert world.update_kpt("v2").returncode == 0
    assert read_tree(world.our_pkg) == read_tree(world.kpt_pkg)
    after = (world.our_pkg / "web.yaml").read_text()
    assert after == before.replace("nginx:1", "nginx:2").replace("spec:\n  template", "spec:\n  replicas: 3\n  template")
