"""``krm-merge promote DIR --event FILE|-``: a Flux event promoted as pipeline-controller would, with no cluster.

The scenario is Flux's staging -> production one: a HelmRelease ``podinfo`` upgraded in
staging (namespace ``podinfo-staging``) sends an event; the production HelmRelease's chart
version, marked for ``flux-system:podinfo:production``, takes the event's revision.  The
recorded bodies under ``events/`` are the three shapes the event arrives in: the generic
webhook's body (the Flux event), the ``githubdispatch`` provider's repository_dispatch
request, and the GitHub Actions event file of that dispatch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EVENTS = Path(__file__).parent / "events"
SHAPES = ["flux-webhook.json", "repository-dispatch.json", "github-event.json"]

PIPELINE = """\
apiVersion: pipelines.weave.works/v1alpha1
kind: Pipeline
metadata:
  name: podinfo
  namespace: flux-system
spec:
  appRef:
    apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    name: podinfo
  environments:
    - name: staging
      targets:
        - namespace: podinfo-staging
    - name: production
      targets:
        - namespace: podinfo-production
"""


def release(env: str, version: str, eol: str = "\n") -> str:
    text = f"""\
# podinfo in {env}: upgraded by the pipeline
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: podinfo-{env}

spec:
  interval: 5m
  chart:
    spec:
      chart: podinfo
      version: "{version}"   # {{"$promotion": "flux-system:podinfo:{env}"}}
      sourceRef:
        kind: HelmRepository
        name: podinfo
  values:
    replicaCount:    2
"""
    return text.replace("\n", eol)


def tree(root: Path, pipeline: str | None = PIPELINE) -> dict[str, Path]:
    files = {"staging": ("apps/staging/podinfo.yaml", release("staging", "6.5.4")),
             "production": ("apps/production/podinfo.yaml", release("production", "6.4.0", "\r\n"))}
    if pipeline is not None:
        files["pipeline"] = ("pipelines/podinfo.yaml", pipeline)
    paths = {}
    for key, (rel, text) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        paths[key] = path
    return paths


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def promote(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "krm-merge"
    return subprocess.run([str(exe), "promote", str(root), *args], input=stdin.decode() if stdin else None,
                          capture_output=True, text=True, timeout=120)


def event(**changes: object) -> dict[str, object]:
    """The recorded Flux event with fields changed (``metadata`` and ``involvedObject`` merged)."""
    data = json.loads((EVENTS / "flux-webhook.json").read_text())
    for key, value in changes.items():
        if key in ("metadata", "involvedObject") and isinstance(value, dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def write_event(tmp_path: Path, data: object, name: str = "event.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    tree(root)
    return root


# --- the scenario, in each shape --------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_a_staging_upgrade_promotes_production_byte_exactly(repo: Path, shape: str) -> None:
    before = snapshot(repo)
    done = promote(repo, "--pipeline", "flux-system/podinfo", "--event", str(EVENTS / shape))
    assert done.returncode == 0, done.stderr
    after = snapshot(repo)
    rel = "apps/production/podinfo.yaml"
    assert after[rel] == before[rel].replace(b'version: "6.4.0"', b'version: "6.5.4"')
    assert {k: v for k, v in after.items() if k != rel} == {k: v for k, v in before.items() if k != rel}
    assert "spec.chart.spec.version: '6.4.0' -> '6.5.4'" in done.stderr


def test_the_event_may_come_on_standard_input(repo: Path) -> None:
    done = promote(repo, "--pipeline", "flux-system/podinfo", "--event", "-",
                   stdin=(EVENTS / "repository-dispatch.json").read_bytes())
    assert done.returncode == 0, done.stderr
    assert b'version: "6.5.4"' in (repo / "apps/production/podinfo.yaml").read_bytes()


def test_the_pipeline_may_come_from_a_file_outside_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    paths = tree(root, pipeline=None)
    other = tmp_path / "pipelines.yaml"
    other.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n"
                     + PIPELINE.replace("name: podinfo\n  namespace", "name: other\n  namespace").replace(
                         "    name: podinfo\n", "    name: other\n") + "---\n" + PIPELINE)
    done = promote(root, "--pipeline-file", str(other), "--event", str(EVENTS / "github-event.json"))
    assert done.returncode == 0, done.stderr
    assert b'version: "6.5.4"' in paths["production"].read_bytes()


def test_a_pipeline_file_without_the_pipeline_or_its_namespace_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    tree(root, pipeline=None)
    before = snapshot(root)
    other = tmp_path / "p.yaml"
    other.write_text(PIPELINE.replace("  namespace: flux-system\n", ""))
    event_file = str(EVENTS / "flux-webhook.json")
    done = promote(root, "--pipeline-file", str(other), "--pipeline", "a/b", "--event", event_file)
    assert done.returncode == 1 and done.stderr.splitlines() == [f"krm-merge promote: error: {other}: no Pipeline a/b in it"]
    done = promote(root, "--pipeline-file", str(other), "--event", event_file)
    assert done.returncode == 1 and "needs metadata.name and metadata.namespace" in done.stderr
    done = promote(root, "--pipeline-file", str(other), "--pipeline", "flux-system/podinfo", "--event", event_file)
    assert done.returncode == 0, done.stderr  # --pipeline names what the file leaves out
    assert snapshot(root) != before


def test_a_cluster_named_by_the_event_picks_the_environment(tmp_path: Path) -> None:
    """The same namespace in two clusters: the Alert's eventMetadata.cluster tells the environments apart."""
    root = tmp_path / "fleet"
    pipeline = PIPELINE.replace("- namespace: podinfo-staging", "- namespace: podinfo\n          clusterRef:\n"
                                "            kind: GitopsCluster\n            name: staging-eu").replace(
        "- namespace: podinfo-production", "- namespace: podinfo\n          clusterRef:\n"
        "            kind: GitopsCluster\n            name: production-eu")
    paths = tree(root, pipeline)
    ev = event(involvedObject={"namespace": "podinfo"}, metadata={"cluster": "staging-eu"})
    done = promote(root, "--pipeline", "flux-system/podinfo", "--event", str(write_event(tmp_path, ev)))
    assert done.returncode == 0, done.stderr
    assert b'version: "6.5.4"' in paths["production"].read_bytes()
    # Without the cluster the namespace is in both environments: an error naming the field, nothing written.
    before = snapshot(root)
    ev = event(involvedObject={"namespace": "podinfo"})
    done = promote(root, "--pipeline", "flux-system/podinfo", "--event", str(write_event(tmp_path, ev)))
    assert done.returncode == 1
    assert "involvedObject.namespace" in done.stderr and "staging, flux-system/podinfo production" in done.stderr
    assert "eventMetadata.cluster" in done.stderr and "Traceback" not in done.stderr
    assert snapshot(root) == before


# --- nothing to promote: one line, exit 0, nothing written ------------------------------------


NOTHING = [
    (event(severity="error", reason="UpgradeFailed"), "not a successful upgrade (severity error, reason UpgradeFailed)"),
    (event(reason="Progressing"), "not a successful upgrade (severity info, reason Progressing)"),
    (event(involvedObject={"name": "frontend"}), "no Pipeline tracks HelmRelease podinfo-staging/frontend"),
    (event(involvedObject={"kind": "Kustomization"}), "no Pipeline tracks Kustomization podinfo-staging/podinfo"),
    (event(involvedObject={"apiVersion": "kustomize.toolkit.fluxcd.io/v1"}), "no Pipeline tracks"),
    (event(involvedObject={"namespace": "elsewhere"}),
     "no environment of Pipeline flux-system/podinfo has a target in namespace elsewhere"),
    (event(involvedObject={"namespace": "podinfo-production"}),
     "production is the last environment of Pipeline flux-system/podinfo"),
]


@pytest.mark.parametrize("body, said", NOTHING, ids=["failed", "progressing", "other name", "other kind",
                                                      "other group", "no environment", "last environment"])
def test_nothing_to_promote_is_one_line_and_exit_zero(repo: Path, tmp_path: Path, body: dict[str, object],
                                                      said: str) -> None:
    before = snapshot(repo)
    dispatch = {"event_type": "x", "client_payload": body}
    done = promote(repo, "--pipeline", "flux-system/podinfo", "--event", str(write_event(tmp_path, dispatch)))
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()  # one line: no summary after it
    assert line.startswith("krm-merge promote: nothing to promote: ") and said in line
    assert done.stdout == "" and snapshot(repo) == before


def test_a_version_only_change_of_the_api_still_matches(repo: Path, tmp_path: Path) -> None:
    """helm-controller's v2beta2 and v2 serve one HelmRelease: the group decides, not the version."""
    ev = event(involvedObject={"apiVersion": "helm.toolkit.fluxcd.io/v2beta2"})
    done = promote(repo, "--pipeline", "flux-system/podinfo", "--event", str(write_event(tmp_path, ev)))
    assert done.returncode == 0, done.stderr
    assert b'version: "6.5.4"' in (repo / "apps/production/podinfo.yaml").read_bytes()


# --- untrusted input: each refused shape one error naming the field ----------------------------


REFUSED = [
    ("[]", "event: must be a JSON object"),
    ("{", "event: is not JSON"),
    ('{"involvedObject": {}, "involvedObject": {}}', "event: involvedObject: appears twice"),
    ('{"severity": NaN, "involvedObject": {}}', "event: is not strict JSON (NaN)"),
    ('{"hello": 1}', "event: involvedObject: missing: not a Flux event"),
    ('{"client_payload": "x"}', "event: client_payload: must be an object"),
    (json.dumps({"client_payload": event(involvedObject="HelmRelease")}),
     "event: client_payload.involvedObject: missing or not an object"),
    (json.dumps(event(involvedObject={"kind": 3})), "event: involvedObject.kind: must be a string, got int"),
    (json.dumps(event(involvedObject={"name": ""})), "event: involvedObject.name: missing"),
    (json.dumps(event(severity=None)), "event: severity: missing"),
    (json.dumps(event(metadata=["6.5.4"])), "event: metadata: must be an object of strings"),
    (json.dumps(event(metadata={"revision": 6.5})), "event: metadata.revision: must be a string, got float"),
    (json.dumps(event(metadata={"revision": "6.5.4\x1b[2J"})),
     "event: metadata.revision: holds a control character: '6.5.4\\x1b[2J'"),
    (json.dumps(event(metadata={"revision": "6" * 2000})), "event: metadata.revision: longer than 1024 characters"),
    (json.dumps({"client_payload": event(metadata={"token": "t"} | {"revision": ""})}),
     "event: client_payload.metadata.revision: missing: the event has no revision to promote"),
    ("[" * 100_000 + "]" * 100_000, "event: nests too deep"),
]


@pytest.mark.parametrize("body, said", REFUSED, ids=[
    "array", "truncated", "duplicate key", "NaN", "not an event", "payload not object", "object not object",
    "kind int", "name empty", "severity missing", "metadata list", "revision float", "control character",
    "too long", "no revision", "deep nesting"])
def test_a_refused_event_is_one_error_naming_the_field(repo: Path, tmp_path: Path, body: str, said: str) -> None:
    before = snapshot(repo)
    done = promote(repo, "--pipeline", "flux-system/podinfo", "--event", str(write_event(tmp_path, body)))
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and said in errors[0], done.stderr
    assert "Traceback" not in done.stderr and "\x1b" not in done.stderr
    assert snapshot(repo) == before


def test_an_event_file_past_the_input_limit_is_refused_unread(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (2 * 1024 * 1024))
    exe = Path(sys.executable).parent / "krm-merge"
    done = subprocess.run([str(exe), "promote", str(repo), "--pipeline", "flux-system/podinfo", "--event", str(path)],
                          capture_output=True, text=True, env={"KRM_MERGE_MAX_INPUT_MB": "1", "PATH": ""}, timeout=120)
    assert done.returncode == 1 and "big.json" in done.stderr and "Traceback" not in done.stderr


def test_a_pipeline_not_in_the_tree_is_an_error(repo: Path) -> None:
    done = promote(repo, "--pipeline", "flux-system/frontend", "--event", str(EVENTS / "flux-webhook.json"))
    assert done.returncode == 1
    assert "Pipeline flux-system/frontend not found" in done.stderr


@pytest.mark.parametrize("args, said", [
    (["--event", "e.json"], "--event: give --pipeline NS/NAME or --pipeline-file FILE"),
    (["--event", "e.json", "--pipeline", "a/b", "--value", "1"], "--value: does not go with --event"),
    (["--event", "e.json", "--pipeline", "a/b", "--from-environment", "dev"], "--from-environment: does not go"),
    (["--event", "e.json", "--pipeline", "a/b", "--set", "a:b:c=1"], "--set: does not go with --event"),
    (["--pipeline-file", "p.yaml", "--set", "a:b:c=1"], "--pipeline-file: goes with --event"),
])
def test_options_that_do_not_fit_with_an_event_are_usage_errors(repo: Path, args: list[str], said: str) -> None:
    done = promote(repo, *args)
    assert done.returncode == 2 and said in done.stderr


def test_help_documents_the_exit_statuses() -> None:
    exe = Path(sys.executable).parent / "krm-merge"
    text = subprocess.run([str(exe), "promote", "--help"], capture_output=True, text=True).stdout
    assert "--event FILE|-" in text and "--pipeline-file FILE" in text
    assert "exit status: 0" in " ".join(text.split()) and "nothing to promote" in " ".join(text.split())
