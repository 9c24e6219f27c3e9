"""The shipped fleet templates (issue 36) checked and run: a Kubernetes Indexed Job and a GitHub Actions matrix.

Kubernetes: every field of the manifests exists in the Kubernetes API, checked
against the API table the project ships (``function/krm_merge/schema/
k8s_patchmeta.json.gz``: each kind's fields, their nesting, lists and maps;
it holds no scalar types, so a scalar is only checked to be a scalar).
``kubectl create --dry-run=client`` cannot check them: it needs a server's
OpenAPI.  The image and the arguments are ours, and the Job's shard count
agrees with its completions.  Then each pod's command is run here as the pod
would run it (``$(VAR)`` expanded from its env, ``JOB_COMPLETION_INDEX`` set,
the volume a folder) for every index, and the merge Job after them.

GitHub Actions: the workflow is run job by job and step by step as the runner
does: each ``run:`` with ``bash --noprofile --norc -eo pipefail``, the
workflow's, job's and step's ``env``, the runner's variables, and the
``${{ }}`` expressions the workflow uses (``strategy.job-index``,
``strategy.job-total``, ...) substituted per matrix job; an expression or an
action the test does not know fails it.  The actions are played by the test
(checkout: a clone of the consumers' repository; artifacts: folders).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import krm_merge
from tests.conftest import require_binary

from .world import KRM_MERGE, Fleet, report_of, spread

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "examples" / "fleet-update"
TABLE = ROOT / "function" / "krm_merge" / "schema" / "k8s_patchmeta.json.gz"
IMAGE = f"localhost/krm-merge:{krm_merge.__version__}"
CONSUMERS = ["eu/web", "eu/api", "us/web", "us/api", "ap/web", "ap/edge"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    require_binary("git")
    require_binary("kpt")
    return spread(Fleet(tmp_path_factory.mktemp("templates")), CONSUMERS)


# --- Kubernetes ------------------------------------------------------------------------------------------


def manifests() -> list[dict[str, Any]]:
    return [doc for path in sorted((TEMPLATES / "kubernetes").glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def problems(value: Any, spec: Any, defs: dict[str, Any], where: str) -> list[str]:
    """Where ``value`` does not fit the table's ``spec`` (fields that do not exist, a list for a scalar...)."""
    if isinstance(spec, str):
        return problems(value, defs[spec], defs, where)
    if isinstance(spec, dict) and "r" in spec:
        return problems(value, defs[spec["r"]], defs, where)
    if isinstance(spec, dict) and "p" in spec:
        if not isinstance(value, dict):
            return [f"{where}: an object expected, not {value!r}"]
        found = [f"{where}.{key}: no such field" for key in value if key not in spec["p"]]
        return found + [p for key, sub in value.items() if key in spec["p"]
                        for p in problems(sub, spec["p"][key], defs, f"{where}.{key}")]
    if isinstance(spec, dict) and "m" in spec:
        if not isinstance(value, dict):
            return [f"{where}: a map expected"]
        return [p for key, sub in value.items() for p in problems(sub, spec["m"], defs, f"{where}.{key}")]
    if isinstance(spec, dict) and "a" in spec:
        if not isinstance(value, list):
            return [f"{where}: a list expected, not {value!r}"]
        return [p for n, item in enumerate(value) for p in problems(item, spec["a"], defs, f"{where}[{n}]")]
    kind = spec.get("k", 1) if isinstance(spec, dict) else spec
    if kind == 0 and isinstance(value, (dict, list)):
        return [f"{where}: a scalar expected"]
    return []


def test_the_validation_catches_what_kubernetes_would_refuse() -> None:
    table = json.loads(gzip.decompress(TABLE.read_bytes()))
    job = table["gvks"]["batch/v1|Job"]
    good = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"completions": 2, "template": {"spec": {
        "containers": [{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"}]}]}}}}
    assert problems(good, job, table["defs"], "Job") == []
    bad = {"spec": {"completion": 2, "template": {"spec": {"containers": {"name": "a"}, "volumes": [{"name": ["x"]}]}}}}
    assert problems(bad, job, table["defs"], "Job") == [
        "Job.spec.completion: no such field", "Job.spec.template.spec.containers: a list expected, not {'name': 'a'}",
        "Job.spec.template.spec.volumes[0].name: a scalar expected"]


def test_the_kubernetes_templates_fit_the_api_and_run_our_image() -> None:
    table = json.loads(gzip.decompress(TABLE.read_bytes()))
    docs = manifests()
    assert {d["kind"] for d in docs} == {"Job", "PersistentVolumeClaim"}
    for doc in docs:
        definition = table["gvks"][f"{doc['apiVersion']}|{doc['kind']}"]
        assert problems(doc, definition, table["defs"], f"{doc['kind']}/{doc['metadata']['name']}") == []
    jobs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Job"}
    fleet_job = jobs["krm-merge-fleet"]["spec"]
    (update,) = fleet_job["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in update["env"]}
    assert fleet_job["completionMode"] == "Indexed"
    assert fleet_job["completions"] == fleet_job["parallelism"] == int(env["KRM_MERGE_SHARDS"])
    assert fleet_job["podFailurePolicy"]["rules"][0]["onExitCodes"]["containerName"] == update["name"]
    for job in jobs.values():
        for container in job["spec"]["template"]["spec"]["containers"]:
            assert container["image"] == IMAGE and "command" not in container  # the image's entrypoint: krm-merge
            assert container["args"][0] in ("update", "report")
        volume = job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
        assert volume == next(d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolumeClaim")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion of a container's args and env values."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


def pod_command(container: dict[str, Any], index: int | None, volume: Path, settings: dict[str, str],
                base: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The process a pod runs: the entrypoint (krm-merge) and the args, with the env Kubernetes gives it."""
    env = dict(base)
    if index is not None:
        env["JOB_COMPLETION_INDEX"] = str(index)
    for item in container.get("env", []):
        value = settings.get(item["name"], item["value"])
        env[item["name"]] = expand(value, env).replace("/work", str(volume))
    args = [expand(a, env).replace("/work", str(volume)) for a in container["args"]]
    return [KRM_MERGE, *args], env


def test_the_indexed_job_and_the_merge_job_run_as_their_pods_would(fleet: Fleet, tmp_path: Path) -> None:
    volume = tmp_path / "work"
    for d in ("cache", "reports"):
        (volume / d).mkdir(parents=True)
    shutil.copytree(fleet.mono, volume / "repo")  # the checkout, cloned before the Job runs
    jobs = {d["metadata"]["name"]: d["spec"] for d in manifests() if d["kind"] == "Job"}
    shards = jobs["krm-merge-fleet"]
    (update,) = shards["template"]["spec"]["containers"]
    settings = {"UPSTREAM": fleet.spec, "REF": "v3"}  # what the user sets: our test upstream
    for index in range(shards["completions"]):
        argv, env = pod_command(update, index, volume, settings, fleet.env)
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    reports = sorted(p.name for p in (volume / "reports").iterdir())
    assert reports == [f"shard-{i}.json" for i in range(shards["completions"])]
    (merge,) = jobs["krm-merge-fleet-report"]["template"]["spec"]["containers"]
    argv, env = pod_command(merge, None, volume, {}, fleet.env)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = report_of(volume / "fleet.json")
    assert data["totals"]["updated"] == len(CONSUMERS) and data["shards"]["reported"] == [0, 1, 2, 3]
    assert proc.stdout.startswith("## krm-merge fleet update:")
    for name in CONSUMERS:
        assert "commit: " + fleet.tags["v3"] in (volume / "repo" / "clusters" / name / "Kptfile").read_text()


# --- GitHub Actions --------------------------------------------------------------------------------------

WORKFLOW = TEMPLATES / "github-actions" / "fleet-update.yml"


class Runner:
    """Plays GitHub's runner for the workflow: one workspace, temp folder and files per job."""

    def __init__(self, tmp: Path, fleet: Fleet, origin: Path, inputs: dict[str, str]) -> None:
        self.tmp, self.fleet, self.origin, self.inputs = tmp, fleet, origin, inputs
        self.artifacts = tmp / "artifacts"
        self.home = tmp / "home"  # shared by the jobs: as a restored actions/cache would share the git cache
        self.home.mkdir()
        self.workflow = yaml.safe_load(WORKFLOW.read_text())
        self.summaries: list[str] = []

    def expression(self, expr: str, context: dict[str, Any]) -> str:
        value: Any = context
        if expr == "always()":
            return "true"
        for part in expr.split("."):
            if not isinstance(value, dict) or part not in value:
                raise AssertionError(f"the test runner does not know the expression ${{{{ {expr} }}}}")
            value = value[part]
        return str(value)

    def substitute(self, value: Any, context: dict[str, Any]) -> Any:
        if isinstance(value, dict):
            return {k: self.substitute(v, context) for k, v in value.items()}
        if isinstance(value, str):
            return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: self.expression(m.group(1), context), value)
        return value

    def run_job(self, name: str, index: int, total: int, matrix: dict[str, Any]) -> None:
        job = self.workflow["jobs"][name]
        where = self.tmp / f"{name}-{index}"
        workspace, temp = where / "workspace", where / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        context = {"inputs": self.inputs, "matrix": matrix, "strategy": {"job-index": index, "job-total": total},
                   "runner": {"temp": str(temp), "os": "Linux"}, "github": {"run_id": "36", "workspace": str(workspace)},
                   "env": {}}
        env = {**self.fleet.env, "HOME": str(self.home), "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(where / "output"),
               "GITHUB_ENV": str(where / "env"), "GITHUB_STEP_SUMMARY": str(where / "summary")}
        for level in (self.workflow.get("env", {}), job.get("env", {})):
            resolved = self.substitute(level, context)
            env.update(resolved)
            context["env"].update(resolved)
        for step in job["steps"]:
            step_env = {**env, **self.substitute(step.get("env", {}), {**context, "env": {**context["env"]}})}
            if "run" in step:
                script = self.substitute(step["run"], context)
                proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                      cwd=workspace, env=step_env, capture_output=True, text=True, timeout=300)
                assert proc.returncode == 0, (name, index, step.get("name"), proc.stdout, proc.stderr)
            else:
                self.action(step["uses"], self.substitute(step.get("with", {}), context), workspace)
        if (where / "summary").exists():
            self.summaries.append((where / "summary").read_text())

    def action(self, uses: str, given: dict[str, Any], workspace: Path) -> None:
        action = uses.split("@")[0]
        if action == "actions/checkout":  # a clone of the repository, with push access to its origin
            subprocess.run(["git", "clone", "-q", str(self.origin), str(workspace)], check=True, env=self.fleet.env)
        elif action in ("actions/setup-python", "actions/cache"):
            pass  # Python is on PATH; the git cache lives in the shared HOME
        elif action == "actions/upload-artifact":
            target = self.artifacts / given["name"]
            target.mkdir(parents=True)
            source = Path(given["path"]) if os.path.isabs(given["path"]) else workspace / given["path"]
            shutil.copy(source, target)
        elif action == "actions/download-artifact":
            target = workspace / given["path"]
            target.mkdir(parents=True)
            assert given.get("merge-multiple") is True
            for folder in sorted(self.artifacts.glob(given["pattern"])):
                for file in folder.iterdir():
                    shutil.copy(file, target)
        else:
            raise AssertionError(f"the test runner does not know the action {uses}")


def test_the_github_actions_matrix_runs_step_by_step(fleet: Fleet, tmp_path: Path) -> None:
    origin = tmp_path / "consumers.git"  # the repository holding the consumers, as GitHub hosts it
    seed = tmp_path / "seed"
    shutil.copytree(fleet.mono, seed)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "consumers"]):
        fleet.git(args, seed)
    fleet.git(["clone", "-q", "--bare", str(seed), str(origin)], tmp_path)
    runner = Runner(tmp_path, fleet, origin, {"ref": "v3"})
    assert runner.workflow["env"]["UPSTREAM"]
    runner.workflow["env"]["UPSTREAM"] = fleet.spec  # what the user sets: our test upstream
    matrix = runner.workflow["jobs"]["update"]["strategy"]["matrix"]["shard"]
    for index, value in enumerate(matrix):
        runner.run_job("update", index, len(matrix), {"shard": value})
    runner.run_job("report", 0, 1, {})
    # each shard pushed its own branch; together they update every consumer exactly once
    changed: list[str] = []
    for index in range(len(matrix)):
        branch = f"krm-merge/fleet-v3-shard-{index}"
        if not fleet.git(["branch", "--list", branch], origin):
            continue
        files = fleet.git(["diff", "--name-only", f"main..{branch}"], origin).splitlines()
        changed.extend(sorted({"/".join(f.split("/")[1:3]) for f in files}))
    assert sorted(changed) == sorted(CONSUMERS)
    (summary,) = runner.summaries
    assert summary.startswith("## krm-merge fleet update:") and f"{len(CONSUMERS)} package(s): {len(CONSUMERS)} updated" in summary
    merged = report_of(runner.tmp / "report-0" / "workspace" / "fleet-report.json")
    assert merged["shards"] == {"count": len(matrix), "reported": list(range(len(matrix)))}
