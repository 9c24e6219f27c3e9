"""Injection: a hostile value becomes exactly one scalar holding that value.

Promoted values and patch values with newlines, ``#``, quotes, ``---``,
``: ``, anchors, tags... must never add keys, documents or comments.
Checked through the promote function mode, the ``promote`` command on files,
and a strategic merge patch.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import examples
from .harness import check_function, comment_texts, configmap, load_output, resource_list, run_command
from .strategies import NASTY_STRINGS, PIPELINE

INJECTIONS = NASTY_STRINGS + [
    "6.3.1\nkind: Secret", "x\n---\nkind: Secret", "x # injected comment", "x\n# injected comment",
    "'; kind: Secret", '"\nkind: Secret\n"', "x: y: z", "- a\n- b", "{a: 1}", "&anchor x", "*alias",
    "!!python/object/apply:os.system [id]", "|\n  literal", "> folded", "x\r\nkind: Secret", "\u2028kind: Secret",
]
values = st.sampled_from(INJECTIONS) | st.text(min_size=1, max_size=30) | st.builds(
    lambda a, b: a + b, st.sampled_from(INJECTIONS), st.sampled_from(INJECTIONS))
SETTINGS = settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

RELEASE = """\
# Release of podinfo in prod
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo # app name
  namespace: podinfo-prod
spec:
  chart:
    spec:
      chart: podinfo
      # {"$promotion": "default:podinfo:prod"}
      version: "6.3.0"
  values:
    tag: 6.3.0 # {"$promotion": "default:podinfo:prod"}
    replicas: 2 # not promoted
"""


def _expected(value: str) -> dict:
    data = load_output(RELEASE)
    out = copy.deepcopy(data)
    out["spec"]["chart"]["spec"]["version"] = value
    out["spec"]["values"]["tag"] = value
    return out


def _check_promoted(text: str, value: str) -> None:
    docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    assert len(docs) == 1, text
    assert docs[0] == _expected(value), text
    assert comment_texts(text) == comment_texts(RELEASE), text


@SETTINGS
@given(values)
def test_promote_mode_value_is_one_scalar(value: str) -> None:
    out = check_function(resource_list([PIPELINE, RELEASE], configmap(
        {"mode": "promote", "pipeline": "default/podinfo", "environment": "prod", "value": value})))
    if out.code == 1:
        # Refusing a value (e.g. one YAML cannot hold) is allowed; it must say why.
        assert out.errors
        return
    assert len(out.items) == 2
    assert out.items[1] == _expected(value)
    item_block = out.text.split("\n- ", 2)[2].split("\nfunctionConfig:")[0]
    assert comment_texts(item_block) == comment_texts(RELEASE), item_block


@SETTINGS
@given(values)
def test_promote_command_value_is_one_scalar(tmp_path_factory, value: str) -> None:  # type: ignore[no-untyped-def]
    from krm_merge.commands import promote

    pkg: Path = tmp_path_factory.mktemp("pkg")
    (pkg / "pipeline.yaml").write_text(PIPELINE)
    (pkg / "release.yaml").write_text(RELEASE)
    code, _, err = run_command(promote.main, [str(pkg), "--pipeline", "default/podinfo", "--environment", "prod",
                                              "--value", value])
    text = (pkg / "release.yaml").read_text(encoding="utf-8")
    if code != 0:
        assert "error" in err and text == RELEASE  # refused, nothing written
        return
    _check_promoted(text, value)


ITEM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: web # the app
data:
  # head comment
  keep: "1"
"""


@SETTINGS
@given(values, st.sampled_from(["value", "key"]))
def test_patch_value_is_one_scalar(value: str, where: str) -> None:
    # Known bug test_known_bugs.py::test_new_key_yes_is_quoted (new YAML 1.1 bool-word keys unquoted).
    assume(not (where == "key" and value in ("y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                              "on", "On", "ON", "off", "Off", "OFF")))
    assume(not (where == "key" and "\x85" in value))  # known bug test_new_key_with_nel_reads_back
    field = {"new": value} if where == "value" else {value: "v"}
    patch = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": field})
    out = check_function(resource_list([ITEM], configmap({"mode": "reorder-merge", "patch": patch})))
    if out.code == 1:
        assert out.errors
        return
    item = out.items[0]
    expected = load_output(ITEM)
    expected["data"].update(field)
    if where == "key" and value.startswith("$"):
        return  # `$...` keys are patch directives, not data
    assert item == expected
    block = out.text.split("\nfunctionConfig:")[0]
    assert comment_texts(block)[-2:] == ["# the app", "# head comment"]
    assert len(comment_texts(block)) == 2, block
