"""resource-merge against kpt 1.0.0-beta.56's observed output and kpt/kyaml package goldens.

Data (copied, provenance in tests/merge3/data/PROVENANCE.md):
* resource-merge/kpt-oracle-edge-cases.yaml: probes R1-R23, S1-S5 with kpt's observed files;
* resource-merge/kpt-update-datasets.beta56.yaml: kpt's TestCommand_Run_localPackageChanges;
* resource-merge/kyaml-filters-merge3-packages.yaml: kyaml filters.Merge3 directory goldens.

Comparison is per file, as data, after dropping what only kpt adds (see
harness.normalise).  Deliberate deviations are in DEVIATIONS with the files
we produce instead (docs/merge.md explains each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from krm_merge.krm.results import KrmError
from krm_merge.kptfile.document import Strategy

from .harness import expected_files, run_mode

DATA = Path(__file__).parents[1] / "merge3" / "data" / "resource-merge"


def _cm(name: str, data: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data}


KPTFILE = {"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {}}

# case name -> (reason, {file: [docs]} we produce for the files that differ from kpt's)
DEVIATIONS: dict[str, tuple[str, dict[str, list[Any]]]] = {
    "R3 CRD list of maps with name (no schema => non-associative)": (
        "lists without schema use kpt's documented key list (here `name`), so local's and upstream's items merge; "
        "kpt 1.0.0-beta.56 never infers keys and replaces the list with upstream's",
        {"f.yaml": [{"apiVersion": "example.com/v1", "kind": "Fruit", "metadata": {"name": "f"},
                     "spec": {"items": [{"name": "apple", "n": 2}, {"name": "pear", "n": 5}]}}]},
    ),
    "R9 service ports (keys port+protocol)": (
        "multi-key list elements match only on equal key tuples; kpt unifies {port: 80} with {port: 80, protocol: UDP} "
        "and loses upstream's targetPort change of port 80",
        {"s.yaml": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [
            {"port": 80, "targetPort": 9090, "name": "http"},
            {"port": 80, "protocol": "UDP", "targetPort": 53},
            {"port": 443, "targetPort": 8443}]}}]},
    ),
    "R11 resource moved to another file locally": (
        "identity is group+kind+namespace+name without the file path: a resource moved locally keeps getting "
        "upstream's changes (kpt treats it as a different resource)",
        {"b.yaml": [_cm("cm", {"a": "2"})]},
    ),
    "R15 map field deleted locally, unchanged upstream": (
        "a map deleted locally stays deleted (kpt brings it back as `labels: {}`)",
        {"cm.yaml": [_cm("cm", {"a": "2"})]},
    ),
    "R20 value style: local single-quoted, upstream plain changes value": (
        "local unmodified -> upstream's resource byte for byte (`n: on` stays as upstream wrote it; kpt re-quotes "
        "it as \"on\" and re-styles `a`)",
        {"c.yaml": [_cm("c", {"a": "2", "b": True, "n": True})]},
    ),
    # S1 is kpt's (issue 33): force-delete-replace keeps the root Kptfile local's, as kpt does.
    "S3 fast-forward without local change": (
        "fast-forward over an unmodified package takes upstream's pipeline (kpt runs force-delete-replace, which "
        "keeps the root Kptfile: upstream's pipeline change would be silently dropped)",
        {"Kptfile": [dict(KPTFILE, pipeline={"mutators": [{"image": "a:v2"}]})]},
    ),
}


def _cases() -> list[Any]:
    cases = yaml.safe_load((DATA / "kpt-oracle-edge-cases.yaml").read_text())["cases"]
    return [pytest.param(c, id=c["name"]) for c in cases]


@pytest.mark.parametrize("case", _cases())
def test_kpt_observed(case: dict[str, Any]) -> None:
    observed = case["observed"]
    strategy = Strategy(case.get("strategy") or "resource-merge")
    if observed["update_rc"] != 0:
        with pytest.raises(KrmError) as err:
            run_mode(case, strategy=strategy)
        kpt_words = observed["error"].removeprefix("Error: ").split(":")[0]
        assert kpt_words.split()[:3] == str(err.value.message).split(":")[0].split()[:3]
        return
    _, got = run_mode(case, strategy=strategy)
    expected = expected_files(observed["files"])
    if case["name"] in DEVIATIONS:
        ours = DEVIATIONS[case["name"]][1]
        for path, docs in ours.items():
            assert got.pop(path) == docs
            assert expected.pop(path) != docs
    assert got == expected


def _dataset_cases(name: str) -> list[dict[str, Any]]:
    cases = yaml.safe_load((DATA / name).read_text())["cases"]
    full = cases[0]
    refs = {"=dataset1": "original", "=dataset2": "updated", "=dataset3": "local"}
    out = []
    for case in cases:
        case = dict(case)
        for key in ("original", "updated", "local", "expected"):
            value = case[key]
            if isinstance(value, str):
                case[key] = full[refs[value.split(" ")[0]]]
        out.append(case)
    return out


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c["name"]) for f in ("kpt-update-datasets.beta56.yaml", "kyaml-filters-merge3-packages.yaml") for c in _dataset_cases(f)],
)
def test_package_goldens(case: dict[str, Any]) -> None:
    strategy = Strategy(case.get("strategy", "resource-merge"))
    if case.get("error"):
        with pytest.raises(KrmError, match=case["error"]):
            run_mode(case, strategy=strategy)
        return
    _, got = run_mode(case, strategy=strategy)
    expected = expected_files(case["expected"])
    got.pop("Kptfile", None)
    expected.pop("Kptfile", None)
    assert got == expected


def test_null_semantics_follow_beta56_not_kpt_head() -> None:
    """kpt HEAD keeps upstream's value where a side wrote an explicit null; beta.56 (and we) delete."""
    (case,) = yaml.safe_load((DATA / "kpt-head-keep-tagged-null.yaml").read_text())["cases"]
    _, got = run_mode(case)
    data = got["configmap.yaml"][0]["data"]
    assert data["deletedInOrigin"] == {"emptyStringKey1": "something", "emptyStringKey2": "something"}
    assert data["deletedInDest"] == {"emptyStringKey1": "something", "emptyStringKey2": "something", "missKey": "something"}
    assert data["addedInUpdated"] == {"unchange": "origin", "addedKey": "something"}
    assert got["configmap.yaml"] != expected_files(case["expected"])["configmap.yaml"]
