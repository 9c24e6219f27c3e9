"""Pipeline merge behaviour beyond the conformance data: comments, layout, conflicts, the mode."""

from __future__ import annotations

import pytest

from krm_merge.config import ConfigError
from krm_merge.kptfile.functions import BY_IDENTITY, BY_NAME, choose_function_rule, image_without_tag
from krm_merge.kptfile.merge import merge_kptfile_text
from krm_merge.krm.kubeobject import KubeObject
from krm_merge.krm.resourcelist import ResourceList
from krm_merge.merge3 import ConflictPolicy
from krm_merge.merge3.rules import PLAIN_LIST
from krm_merge.outcomes.kinds import Decision
from krm_merge.modes import pipeline_merge

ORIGIN = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
    - image: ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2
      configMap:
        image: nginx
        tag: 1.0.1
"""
UPSTREAM = ORIGIN.replace("tag: 1.0.1", "tag: 1.0.1\n        new-setter: new-setter-value")
LOCAL = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: my-pkg # renamed by kpt pkg get
upstream:
  type: git
# the pipeline of this package
pipeline:
  mutators:
    # setters for the image
    - image: ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2
      configMap:
        image: nginx
        tag: 1.2.0 # bumped locally
"""


@pytest.mark.parametrize(
    ("ref", "repo"),
    [
        ("gcr.io/fn/a:v1", "gcr.io/fn/a"),
        ("localhost:5000/fn:v1", "localhost:5000/fn"),
        ("localhost:5000/fn", "localhost:5000/fn"),
        ("repo@sha256:abc", "repo"),
        ("repo:v1@sha256:abc", "repo"),
        ("plain", "plain"),
    ],
)
def test_image_without_tag(ref: str, repo: str) -> None:
    assert image_without_tag(ref) == repo


def test_function_rule_choice() -> None:
    named = [{"image": "a", "name": "x"}, {"image": "a", "name": "y"}]
    assert choose_function_rule([named, named, None]) is BY_NAME
    assert choose_function_rule([[{"image": "a:1"}, {"exec": "./b"}], [{"image": "a:2"}], []]) is BY_IDENTITY
    assert choose_function_rule([[{"image": "a:1"}, {"image": "a:2"}], [], []]) is PLAIN_LIST
    assert choose_function_rule([[{"configPath": "x"}], [], []]) is PLAIN_LIST


def test_local_setter_kept_new_upstream_setter_pulled_and_comments_survive() -> None:
    out = merge_kptfile_text(LOCAL, ORIGIN, UPSTREAM).text
    assert "tag: 1.2.0 # bumped locally" in out
    assert "new-setter: new-setter-value" in out
    assert "# setters for the image" in out
    assert "# the pipeline of this package" in out
    assert "name: my-pkg # renamed by kpt pkg get" in out  # local keeps its name
    assert "upstream:\n  type: git\n" in out
    # wide sequence layout of the local file is kept
    assert "\n    - image: ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2\n" in out


def test_conflict_reported_upstream_wins() -> None:
    upstream = ORIGIN.replace("tag: 1.0.1", "tag: 1.1.0")
    result = merge_kptfile_text(LOCAL, ORIGIN, upstream)
    assert "tag: 1.1.0" in result.text
    (conflict,) = result.conflicts
    assert conflict.path.endswith("configMap.tag")
    assert (conflict.local, conflict.upstream, conflict.winner) == ("1.2.0", "1.1.0", Decision.UPSTREAM)


def test_conflict_local_wins() -> None:
    upstream = ORIGIN.replace("tag: 1.0.1", "tag: 1.1.0")
    result = merge_kptfile_text(LOCAL, ORIGIN, upstream, conflicts=ConflictPolicy.LOCAL_WINS)
    assert "tag: 1.2.0" in result.text
    assert result.conflicts[0].winner is Decision.LOCAL


def _item(text: str, path: str) -> KubeObject:
    """An item as kpt passes it: path/index annotations already in its text."""
    ann = "".join(
        f"    {k}: '{v}'\n"
        for k, v in (
            ("internal.config.kubernetes.io/path", path),
            ("config.kubernetes.io/path", path),
            ("internal.config.kubernetes.io/index", "0"),
            ("config.kubernetes.io/index", "0"),
        )
    )
    head, sep, rest = text.partition("metadata:\n")
    first, nl, tail = rest.partition("\n")
    return KubeObject(head + sep + first + nl + "  annotations:\n" + ann + tail)


def test_mode_with_kptfiles_in_config() -> None:
    rl = ResourceList()
    rl.items = [_item(LOCAL, "Kptfile")]
    config = pipeline_merge.config_from_configmap({"origin": ORIGIN, "upstream": UPSTREAM})
    pipeline_merge.run(rl, config)
    assert "new-setter: new-setter-value" in rl.items[0].text
    assert "tag: 1.2.0 # bumped locally" in rl.items[0].text
    assert not rl.results


def test_mode_with_prefix_folders_and_fail_policy() -> None:
    upstream = ORIGIN.replace("tag: 1.0.1", "tag: 1.1.0")
    items = [_item(LOCAL, "local/Kptfile"), _item(ORIGIN, "origin/Kptfile"), _item(upstream, "upstream/Kptfile")]
    before = [o.text for o in items]
    rl = ResourceList()
    rl.items = list(items)
    pipeline_merge.run(rl, pipeline_merge.config_from_configmap({"conflicts": "fail"}))
    assert rl.results.has_errors
    (err,) = rl.results
    assert err.field is not None and err.field.path.endswith("configMap.tag")
    assert [o.text for o in rl.items] == before  # all or nothing


def test_mode_prefix_folders_merge() -> None:
    rl = ResourceList()
    rl.items = [_item(LOCAL, "local/Kptfile"), _item(ORIGIN, "origin/Kptfile"), _item(UPSTREAM, "upstream/Kptfile")]
    pipeline_merge.run(rl, pipeline_merge.config_from_configmap({}))
    local = rl.items[0]
    assert "new-setter: new-setter-value" in local.text
    assert local.path == "local/Kptfile"
    assert not rl.items[2].changed and not rl.items[1].changed
    assert "annotations:\n    internal.config.kubernetes.io/path: 'local/Kptfile'" in local.text


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="valid keys"):
        pipeline_merge.config_from_configmap({"bogus": "1"})
    with pytest.raises(ConfigError, match="conflicts"):
        pipeline_merge.config_from_configmap({"conflicts": "maybe"})
    with pytest.raises(ConfigError, match="Kptfile"):
        pipeline_merge.config_from_configmap({"origin": "kind: ConfigMap\n", "upstream": UPSTREAM})
    with pytest.raises(ConfigError, match="differ"):
        pipeline_merge.config_from_configmap({"localPrefix": "a", "originPrefix": "a"})


def test_pipeline_merge_does_not_import_a_sibling_mode() -> None:
    """Shared helpers live below the modes (merge3), not in resource_merge."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(pipeline_merge))
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any("resource_merge" in m for m in imported), imported


KF_ORIGIN = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
    - image: gcr.io/kpt-fn/set-labels:v0.1
      configMap:
        app: web
        tier: front
    - image: gcr.io/kpt-fn/set-namespace:v0.1
      configMap:
        namespace: prod
"""
KF_UPSTREAM = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.1
      configMap:
        namespace: prod
"""
# the same functions as origin, only re-ordered keys, flow style, quotes and comments
KF_LOCAL_REFORMATTED = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
    # labels
    - configMap: {tier: "front", app: 'web'}
      image: "gcr.io/kpt-fn/set-labels:v0.1"  # pinned
    - configMap:
        namespace: prod
      image: gcr.io/kpt-fn/set-namespace:v0.1
"""


def test_function_deleted_upstream_goes_when_local_differs_only_in_form() -> None:
    """Issue #11 item 4: "unchanged locally" means equal as data."""
    out = merge_kptfile_text(KF_LOCAL_REFORMATTED, KF_ORIGIN, KF_UPSTREAM).text
    assert "set-labels" not in out and "# labels" not in out  # its comment goes with it
    assert "set-namespace" in out
    changed = KF_LOCAL_REFORMATTED.replace("tier: \"front\"", "tier: back")
    kept = merge_kptfile_text(changed, KF_ORIGIN, KF_UPSTREAM).text
    assert "set-labels" in kept and "tier: back" in kept  # a real local change keeps it


@pytest.mark.parametrize("mode", ["pipeline-merge", "resource-merge"])
def test_function_deleted_upstream_goes_in_both_modes(mode: str) -> None:
    from krm_merge.modes import resource_merge

    rl = ResourceList()
    rl.items = [
        KubeObject.from_text(KF_LOCAL_REFORMATTED, path="local/Kptfile"),
        KubeObject.from_text(KF_ORIGIN, path="origin/Kptfile"),
        KubeObject.from_text(KF_UPSTREAM, path="upstream/Kptfile"),
    ]
    if mode == "pipeline-merge":
        pipeline_merge.run(rl, pipeline_merge.config_from_configmap({}))
    else:
        resource_merge.run(rl, resource_merge.config_from_configmap({}))
    (local,) = [o for o in rl.items if (o.path or "").startswith("local/")]
    fns = local.data["pipeline"]["mutators"]
    assert [f["image"] for f in fns] == ["gcr.io/kpt-fn/set-namespace:v0.1"]
