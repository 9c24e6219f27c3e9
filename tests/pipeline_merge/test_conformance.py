"""Kptfile pipeline merge against kpt's tests, the design doc and kpt's observed output.

Data (copied, provenance in tests/merge3/data/PROVENANCE.md):
* kptfileutil TestMerge / TestUpdateKptfile (kpt v1.0.0-beta.56 and HEAD);
* design doc 03-pipeline-merge.md examples 1-9 with kpt 1.0.0-beta.56's observed output;
* hand-written probes E1-E21 with kpt's observed output.

Where kpt disagrees with the design doc's rules we follow the doc; every such
case is listed in DEVIATIONS with the output we produce instead and the reason
(also in docs/merge.md).  Comparison is structural (kpt re-serialises Kptfiles).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.kptfile.merge import merge_kptfile_text
from krm_merge.krm.yamlio import load_data

DATA = Path(__file__).parents[1] / "merge3" / "data" / "pipeline-merge"
IMG = "ghcr.io/kptdev/krm-functions-catalog/ensure-name-substring:latest"


def wrap(text: str | None) -> str | None:
    """A ``pipeline:`` fragment becomes a Kptfile named ``example``."""
    if text is None:
        return None
    text = text.strip("\n\t ")
    if not text or text.startswith("pipeline"):
        return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: example\n" + text + "\n"
    return text + "\n"


def merged(case: dict[str, Any]) -> dict[str, Any]:
    result = merge_kptfile_text(
        wrap(case["local"]), wrap(case["original"]), wrap(case["updated"]), update_upstream=case.get("update_upstream", False)
    )
    return load_data(result.text)


def mutators(*fns: dict[str, Any]) -> dict[str, Any]:
    return {"mutators": list(fns)}


# case name -> (reason, the pipeline (or whole Kptfile for kptfileutil cases) we produce)
DEVIATIONS: dict[str, tuple[str, Any]] = {
    "doc-example-9": (
        "design doc prose: selectors have no identity, so upstream's changed selector list replaces local's "
        "(kpt merges them by `name` and loses both the local Service and the upstream Foo selector)",
        mutators({"image": IMG, "selectors": [
            {"kind": "Deployment", "name": "wordpress"},
            {"kind": "Service", "name": "wordpress"},
            {"kind": "Foo", "name": "wordpress"},
        ]}),
    ),
    "E1 local all named, upstream/origin unnamed": (
        "doc rule 2: not every function is named, no duplicate images -> merge by image (kpt: `conflicting merge keys` error)",
        mutators({"image": "gcr.io/fn/a:v2", "name": "a"}, {"image": "gcr.io/fn/b:v1", "name": "b"}),
    ),
    "E2 origin+updated all named, local one unnamed": (
        "doc rule 2: merge by image, local order kept (kpt moves the unnamed local function to the front)",
        mutators({"image": "gcr.io/fn/a:v2", "name": "a"}, {"image": "gcr.io/fn/b:v1", "name": "b"}, {"image": "gcr.io/fn/c:v1"}),
    ),
    "E3 registry with port (split on first colon)": (
        "image refs parsed properly: localhost:5000/fn/a is not a duplicate of localhost:5000/fn/b (kpt cuts at the "
        "first ':', sees duplicates, falls back to upstream's list and loses local's function c)",
        mutators({"image": "localhost:5000/fn/a:v2"}, {"image": "localhost:5000/fn/b:v1"}, {"image": "localhost:5000/fn/c:v1"}),
    ),
    "E4 function deleted locally, changed upstream": (
        "a function deleted locally stays deleted (kpt appends a fragment `{configPath: a2.yaml}` without image)",
        mutators({"image": "gcr.io/fn/b:v1"}),
    ),
    "E5 function deleted upstream, changed and extended locally": (
        "a function deleted upstream but changed locally is kept whole (kpt keeps a fragment without image)",
        mutators({"image": "gcr.io/fn/a:v1", "configMap": {"k": "changed", "added": "x"}}, {"image": "gcr.io/fn/b:v1"}),
    ),
    "E11 selectors with distinct names, both add": (
        "selectors are a plain list (doc example 9 prose): upstream's changed list wins",
        mutators({"image": "gcr.io/fn/a:v1", "selectors": [{"name": "x"}, {"name": "up"}]}),
    ),
    "E13 exec and image with same key": (
        "an exec function is identified by its exec path, an image function by its image: different functions; the "
        "image function was deleted locally and stays deleted",
        mutators({"exec": "gcr.io/fn/a"}),
    ),
    "E16 function with configMap deleted upstream, unchanged locally": (
        "deleted upstream and unchanged locally -> deleted (kpt leaves an empty `- {}` function)",
        mutators({"image": "gcr.io/fn/b:v1"}),
    ),
    "E17 whole pipeline removed upstream, local added function": (
        "functions added locally are kept when upstream deletes the pipeline (kpt empties it to `pipeline: {}`)",
        mutators({"image": "gcr.io/fn/b:v1"}),
    ),
    "pipeline in local is emptied if it is gone from upstream": (
        "same as E17: the locally added function survives",
        {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "foo"}, "pipeline": {"mutators": [{"image": "my:image"}]}},
    ),
    "readinessGate added removed in upstream": (
        "maps emptied because upstream deleted them disappear (kpt prints `info: {}` and `status: {}`)",
        {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "foo"}},
    ),
}


def _load(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((DATA / name).read_text())["cases"]


def _params(name: str) -> list[Any]:
    return [pytest.param(c, id=c["name"]) for c in _load(name)]


@pytest.mark.parametrize("case", _params("design-doc-examples.kpt-oracle.yaml"))
def test_design_doc_examples(case: dict[str, Any]) -> None:
    got = merged(case).get("pipeline")
    if case["name"] in DEVIATIONS:
        assert got == DEVIATIONS[case["name"]][1]
        assert got != case["observed"]["pipeline"]
        return
    assert case["observed"]["update_rc"] == 0
    assert got == case["observed"]["pipeline"]
    assert got == load_data(case["doc_expected"])["pipeline"]


@pytest.mark.parametrize("case", _params("kpt-oracle-edge-cases.yaml"))
def test_kpt_observed_edge_cases(case: dict[str, Any]) -> None:
    got = merged(case).get("pipeline")
    if case["name"] in DEVIATIONS:
        assert got == DEVIATIONS[case["name"]][1]
        return
    assert case["observed"]["update_rc"] == 0
    assert got == case["observed"]["pipeline"]


KPTFILEUTIL = [
    "kptfileutil-TestMerge.beta56.yaml",
    "kptfileutil-TestMerge.head.yaml",
    "kptfileutil-TestUpdateKptfile.beta56.yaml",
    "kptfileutil-TestUpdateKptfile.head.yaml",
]


@pytest.mark.parametrize("case", [p for f in KPTFILEUTIL for p in [pytest.param(c, id=f"{f}:{c['name']}") for c in _load(f)]])
def test_kptfileutil_cases(case: dict[str, Any]) -> None:
    got = merged(case)
    if case["name"] in DEVIATIONS:
        assert got == DEVIATIONS[case["name"]][1]
        return
    assert got == load_data(case["expected"].strip())


def test_every_deviation_is_used() -> None:
    names = {c["name"] for f in ["design-doc-examples.kpt-oracle.yaml", "kpt-oracle-edge-cases.yaml", *KPTFILEUTIL] for c in _load(f)}
    assert set(DEVIATIONS) <= names
