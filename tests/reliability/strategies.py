"""Hypothesis generators of hostile-but-structured inputs for every entry point."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import strategies as st

# Strings chosen to break naive YAML writers and readers.
NASTY_STRINGS = [
    "", " ", "\n", "a\nb", "a\n---\nb: c", "---", "...", "# not a comment", "a # b", "a: b", "a:", ":",
    "-", "- a", "'", '"', "'\"", "\\", "\t", "a\tb", "yes", "no", "on", "null", "~", "1e3", "0o17", "0x1F",
    "012", "1_000", ".inf", "2001-01-01", "&a", "*a", "!tag", "!!python/object/apply:os.system", "%YAML",
    "@x", "`x`", "{a: b}", "[a]", "|", ">", "?", "\u2028", "\u0085", "\ufeff", "\x00", "\x1b[31m", "é😀",
    "a" * 300, "  leading", "trailing  ", "\r\n", "key: value\nother: 1", "$patch", "$patch: delete",
]

nasty_text = st.one_of(st.sampled_from(NASTY_STRINGS), st.text(max_size=40))
key_text = st.one_of(
    st.sampled_from(["name", "image", "value", "$patch", "$retainKeys", "$setElementOrder/containers",
                     "$deleteFromPrimitiveList/finalizers", "containers", "env", "ports", "<<", "?", "-"]),
    st.text(min_size=1, max_size=12),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), nasty_text)


def values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """JSON-ish nested values with hostile strings and keys."""
    return st.recursive(
        scalars,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(key_text, children, max_size=4)),
        max_leaves=max_leaves,
    )


@st.composite
def krm_objects(draw: st.DrawFn, kinds: tuple[str, ...] = ("ConfigMap", "Deployment", "Kptfile", "Widget")) -> dict:
    """A KRM-shaped object with arbitrary extra fields."""
    kind = draw(st.sampled_from(kinds))
    api = {"ConfigMap": "v1", "Deployment": "apps/v1", "Kptfile": "kpt.dev/v1"}.get(kind, "example.com/v1")
    meta: dict[str, Any] = {"name": draw(st.sampled_from(["web", "x", "a-b"]) | nasty_text)}
    if draw(st.booleans()):
        meta["namespace"] = draw(st.sampled_from(["ns", ""]) | nasty_text)
    if draw(st.booleans()):
        meta["annotations"] = draw(st.dictionaries(key_text, scalars | values(4), max_size=3))
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(key_text, scalars, max_size=3))
    obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta}
    if kind == "Deployment" and draw(st.booleans()):
        obj["spec"] = {"template": {"spec": {"containers": draw(st.lists(
            st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c"]) | nasty_text},
                                  optional={"image": nasty_text, "env": st.lists(values(4), max_size=3),
                                            "ports": values(6)}), max_size=3))}}}
    extra = draw(st.dictionaries(key_text, values(), max_size=3))
    for k, v in extra.items():
        obj.setdefault(k, v)
    return obj


@st.composite
def yaml_text(draw: st.DrawFn, value: Any) -> str:
    """``value`` printed in one of several styles (block, flow, JSON, canonical)."""
    style = draw(st.sampled_from(["block", "flow", "json", "canonical", "default"]))
    if style == "json":
        return json.dumps(value, indent=draw(st.sampled_from([None, 2]))) + "\n"
    kwargs: dict[str, Any] = {"Dumper": yaml.CSafeDumper, "allow_unicode": draw(st.booleans()), "sort_keys": False}
    if style == "block":
        kwargs["default_flow_style"] = False
    elif style == "flow":
        kwargs["default_flow_style"] = True
    elif style == "canonical":
        kwargs["canonical"] = True
    return yaml.dump(value, **kwargs)


def patch_bodies() -> st.SearchStrategy[dict]:
    """Strategic merge patches with directives in random places."""
    directive = st.sampled_from([
        {"$patch": "delete"}, {"$patch": "replace"}, {"$patch": "merge"}, {"$patch": "bogus"},
        {"$retainKeys": ["a", "spec"]}, {"$retainKeys": "x"},
        {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]},
        {"$setElementOrder/finalizers": ["x", 1, None]},
        {"$deleteFromPrimitiveList/finalizers": ["x"]}, {"$deleteFromPrimitiveList/env": 5},
    ])
    return st.builds(lambda obj, ds, inner: _merge_dirs(obj, ds, inner), krm_objects(),
                     st.lists(directive, max_size=3), st.lists(directive, max_size=2))


def _merge_dirs(obj: dict, top: list[dict], inner: list[dict]) -> dict:
    for d in top:
        obj.update(d)
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for d in inner:
            spec.update(d)
        containers = spec.get("template", {}).get("spec", {}).get("containers") if isinstance(
            spec.get("template"), dict) else None
        if isinstance(containers, list) and inner:
            containers.append(dict(inner[0]))
    return obj


def kptfiles() -> st.SearchStrategy[dict]:
    """Kptfiles with pipelines of functions, some malformed."""
    fn = st.fixed_dictionaries(
        {},
        optional={
            "image": st.sampled_from(["gcr.io/a/set:v1", "set-labels:v0.1", "set-labels", "x@sha256:ab"]) | nasty_text,
            "name": st.sampled_from(["a", "b"]) | nasty_text,
            "exec": nasty_text,
            "configMap": st.dictionaries(key_text, scalars, max_size=3) | values(3),
            "configPath": nasty_text,
            "selectors": values(4),
        },
    )
    fns = st.lists(fn | values(3), max_size=4)
    pipeline = st.fixed_dictionaries({}, optional={"mutators": fns | values(3), "validators": fns | values(3)}) | values(3)
    return st.builds(
        lambda name, pipe, extra: {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": name},
                                   "pipeline": pipe, **extra},
        st.sampled_from(["pkg", "x"]), pipeline,
        st.dictionaries(st.sampled_from(["upstream", "upstreamLock", "info", "inventory", "zzz"]), values(4), max_size=2),
    )


def promotion_comments() -> st.SearchStrategy[str]:
    """Comments that mention the promotion marker, well-formed or not."""
    good = st.sampled_from(['{"$promotion": "default:podinfo:prod"}', '{"$promotion": "default:podinfo:dev"}',
                            '{"$imagepolicy": "flux-system:podinfo"}', '{"$imagepolicy": "flux-system:podinfo:tag"}'])
    bad = st.one_of(
        st.builds(lambda v: json.dumps({"$promotion": v}), values(3)),
        st.builds(lambda s: '{"$promotion": ' + s, nasty_text),
        st.builds(lambda v: json.dumps({"$imagepolicy": v}), values(3)),
        st.just('{"$promotion": "default:podinfo:prod", "$promotion": "x:y:z"}'),
    )
    return st.builds(lambda body, pad: "#" + pad + body, good | bad, st.sampled_from(["", " ", "   "]))


@st.composite
def marked_documents(draw: st.DrawFn) -> str:
    """A YAML document with promotion markers placed on random lines."""
    obj = draw(krm_objects(("Deployment", "HelmRelease", "Kustomization", "Widget")))
    text = yaml.dump(obj, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=draw(st.sampled_from([False, None])),
                     allow_unicode=True, width=1 << 30)
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        comment = draw(promotion_comments())
        if draw(st.booleans()) and lines[at].strip():
            lines[at] = lines[at] + " " + comment
        else:
            indent = len(lines[at]) - len(lines[at].lstrip(" "))
            lines.insert(at, " " * indent + comment)
    return "\n".join(lines)


PIPELINE = """apiVersion: pipelines.weave.works/v1alpha1
kind: Pipeline
metadata:
  name: podinfo
  namespace: default
spec:
  appRef:
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    name: podinfo
  environments:
  - name: dev
    targets:
    - namespace: podinfo-dev
  - name: prod
    targets:
    - namespace: podinfo-prod
"""
