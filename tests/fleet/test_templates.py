"""The shipped fleet templates (issue 36) checked and run: a Kubernetes Indexed Job and a GitHub Actions matrix.

Kubernetes: every field of the manifests exists in the Kubernetes API, checked
against the API table the project ships (``function/krm_merge/schema/
k8s_patchmeta.json.gz``: each kind's fields, their nesting, lists and maps;
it holds no scalar types, so a scalar is only checked to be a scalar).
``kubectl create --dry-run=client`` cannot check them: it needs a server's
OpenAPI.  The image and the arguments are ours, and the Job's shard count
agrees with its completions, the clone's and the pull request's credentials
come from the Secret.  The pods themselves are run whole, under podman, by
``tests/e2e_image/test_fleet_job.py``.

GitHub Actions: the workflow is run job by job and step by step as the runner
does: each ``run:`` with ``bash --noprofile --norc -eo pipefail``, the
workflow's, job's and step's ``env``, the runner's variables, and the
``${{ }}`` expressions the workflow uses (``strategy.job-index``,
``strategy.job-total``, ...) substituted per matrix job; an expression or an
action the test does not know fails it; a step that fails fails its job, and
only the steps marked ``if: always()`` run after it.  The actions are played by
the test (checkout: a clone of the consumers' repository; artifacts: folders);
the forge is the stand-in GitHub (``tests/change/forge_server.py``) at
``GITHUB_API_URL``.  One consumer's local edit conflicts with the new version,
one's Kptfile is broken: the shard holding the conflict passes with a warning
annotation, the one holding the failure fails, every shard opens its pull
request, and the merged report is the run's summary.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

import krm_merge
from tests.conftest import require_binary

from krm_merge.fleet.shard import owner
from tests.change.forge_server import ForgeServer

from .world import Fleet, deployment, report_of, spread

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "examples" / "fleet-update"
TABLE = ROOT / "function" / "krm_merge" / "schema" / "k8s_patchmeta.json.gz"
IMAGE = f"localhost/krm-merge:{krm_merge.__version__}"
FLEET_IMAGE = f"localhost/krm-merge-fleet:{krm_merge.__version__}"  # Dockerfile's fleet target: IMAGE plus git
CONSUMERS = ["eu/web", "eu/api", "us/web", "us/api", "ap/web", "ap/edge"]
CONFLICTED, BROKEN = "us/shop", "ap/broken"  # shards 1 and 0 of 4: each shard's status is told apart
TOKEN = "ghp_ActionsFleetT0kenNeverSeen"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    require_binary("git")
    require_binary("kpt")
    world = spread(Fleet(tmp_path_factory.mktemp("templates")), CONSUMERS)
    world.consumer(f"clusters/{CONFLICTED}", "v1", edits={"deploy.yaml": deployment("web:mine")})  # v3: web:3.0
    kptfile = world.consumer(f"clusters/{BROKEN}", "v1") / "Kptfile"
    kptfile.write_text(kptfile.read_text() + "  : [unclosed\n")  # still names the upstream: selected, then failed
    return world


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
    assert {d["kind"] for d in docs} == {"ConfigMap", "Job", "PersistentVolumeClaim"}
    for doc in docs:
        definition = table["gvks"][f"{doc['apiVersion']}|{doc['kind']}"]
        assert problems(doc, definition, table["defs"], f"{doc['kind']}/{doc['metadata']['name']}") == []
    jobs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Job"}
    fleet_job = jobs["krm-merge-fleet"]["spec"]
    pod = fleet_job["template"]["spec"]
    (checkout,) = pod["initContainers"]
    (update,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in update["env"]}
    assert fleet_job["completionMode"] == "Indexed"
    assert fleet_job["completions"] == fleet_job["parallelism"] == int(env["KRM_MERGE_SHARDS"])
    assert fleet_job["podFailurePolicy"]["rules"][0]["onExitCodes"]["containerName"] == update["name"]
    # the clone and the push use git's credentials from the Secret, the pull request the forge's token
    secret = next(v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v)
    token = next(e["valueFrom"]["secretKeyRef"] for e in update["env"] if e["name"] == "GITHUB_TOKEN")
    assert token["name"] == secret
    assert "--pull-request" in update["args"] and "$(JOB_COMPLETION_INDEX)" in " ".join(update["args"])
    images = {"krm-merge-fleet": FLEET_IMAGE, "krm-merge-fleet-report": IMAGE}  # report merge needs no git
    assert set(jobs) == set(images)
    assert checkout["image"] == FLEET_IMAGE and checkout["command"] == ["sh", "-c"]
    for name, job in jobs.items():
        for container in job["spec"]["template"]["spec"]["containers"]:
            assert container["image"] == images[name] and "command" not in container  # the entrypoint: krm-merge
            assert container["args"][0] in ("update", "report")
        claims = [v["persistentVolumeClaim"]["claimName"] for v in job["spec"]["template"]["spec"]["volumes"]
                  if "persistentVolumeClaim" in v]
        assert claims == [next(d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolumeClaim")]


# The Job's pods are run whole (clone, update, push, pull request) under podman by
# tests/e2e_image/test_fleet_job.py: the image test, since its init container runs the image's git and sh.


# --- GitHub Actions --------------------------------------------------------------------------------------

WORKFLOW = TEMPLATES / "github-actions" / "fleet-update.yml"


class Job(NamedTuple):
    """A job's result as GitHub shows it: ``success`` or ``failure``, and its steps' annotations."""

    result: str
    annotations: list[str]


class Runner:
    """Plays GitHub's runner for the workflow: one workspace, temp folder and files per job."""

    def __init__(self, tmp: Path, fleet: Fleet, origin: Path, inputs: dict[str, str], secrets: dict[str, str],
                 variables: dict[str, str]) -> None:
        self.tmp, self.fleet, self.origin, self.inputs = tmp, fleet, origin, inputs
        self.secrets, self.variables = secrets, variables  # the repository's secrets; the runner's GITHUB_* variables
        self.artifacts = tmp / "artifacts"
        self.home = tmp / "home"  # shared by the jobs: as a restored actions/cache would share the git cache
        self.home.mkdir()
        self.workflow = yaml.safe_load(WORKFLOW.read_text())
        self.summaries: list[str] = []
        self.outputs: list[str] = []  # every step's stdout and stderr

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

    def runs(self, step: dict[str, Any], failed: bool) -> bool:
        """Whether a step runs: by default only while no step failed; ``always()`` always."""
        condition = re.sub(r"^\$\{\{\s*(.*?)\s*\}\}$", r"\1", str(step.get("if", "success()")).strip())
        known = {"success()": not failed, "failure()": failed, "always()": True}
        if condition not in known:
            raise AssertionError(f"the test runner does not know the condition {condition!r}")
        return known[condition]

    def run_job(self, name: str, index: int, total: int, matrix: dict[str, Any]) -> Job:
        """Run one job (a matrix entry) step by step; its result and the annotations its steps printed."""
        job = self.workflow["jobs"][name]
        where = self.tmp / f"{name}-{index}"
        workspace, temp = where / "workspace", where / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        context = {"inputs": self.inputs, "matrix": matrix, "strategy": {"job-index": index, "job-total": total},
                   "runner": {"temp": str(temp), "os": "Linux"}, "github": {"run_id": "36", "workspace": str(workspace)},
                   "env": {}, "secrets": self.secrets}
        env = {**self.fleet.env, **self.variables, "HOME": str(self.home), "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(where / "output"),
               "GITHUB_ENV": str(where / "env"), "GITHUB_STEP_SUMMARY": str(where / "summary")}
        for level in (self.workflow.get("env", {}), job.get("env", {})):
            resolved = self.substitute(level, context)
            env.update(resolved)
            context["env"].update(resolved)
        failed = False
        annotations: list[str] = []
        for step in job["steps"]:
            if not self.runs(step, failed):
                continue
            step_env = {**env, **self.substitute(step.get("env", {}), {**context, "env": {**context["env"]}})}
            if "run" in step:
                script = self.substitute(step["run"], context)
                proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                                      cwd=workspace, env=step_env, capture_output=True, text=True, timeout=300)
                self.outputs.append(proc.stdout + proc.stderr)
                annotations += [line for line in proc.stdout.splitlines() if line.startswith("::")]
                failed = failed or proc.returncode != 0
            else:
                self.action(step["uses"], self.substitute(step.get("with", {}), context), workspace)
        if (where / "summary").exists():
            self.summaries.append((where / "summary").read_text())
        return Job("failure" if failed else "success", annotations)

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
            if source.exists():  # else the action's default (if-no-files-found: warn) uploads nothing
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
    forge = ForgeServer("github", TOKEN, repo="acme/deploy",
                        branch_exists=lambda b: bool(fleet.git(["branch", "--list", b], origin)))
    try:
        runner = Runner(tmp_path, fleet, origin, {"ref": "v3"}, {"GITHUB_TOKEN": TOKEN},
                        {"GITHUB_API_URL": forge.api, "GITHUB_REPOSITORY": "acme/deploy",
                         "GITHUB_SERVER_URL": forge.origin})
        assert runner.workflow["env"]["UPSTREAM"]
        runner.workflow["env"]["UPSTREAM"] = fleet.spec  # what the user sets: our test upstream
        matrix = runner.workflow["jobs"]["update"]["strategy"]["matrix"]["shard"]
        shards = len(matrix)
        assert (owner(CONFLICTED, shards), owner(BROKEN, shards)) == (1, 0)
        jobs = [runner.run_job("update", index, shards, {"shard": value}) for index, value in enumerate(matrix)]
        report = runner.run_job("report", 0, 1, {})
        pulls, violations = list(forge.pulls), list(forge.violations)
    finally:
        forge.close()
    # a failed package fails its shard's job; a conflict leaves it green with a visible warning
    assert [job.result for job in jobs] == ["failure", "success", "success", "success"]
    assert [len(job.annotations) for job in jobs] == [1, 1, 0, 0]
    assert jobs[0].annotations[0].startswith("::error title=krm-merge failed (shard 0)::exit 1")
    assert jobs[1].annotations[0].startswith("::warning title=krm-merge: conflicts left (shard 1)::")
    # each shard pushed its own branch and opened its pull request; together they hold every written consumer once
    changed: list[str] = []
    for index in range(shards):
        branch = f"krm-merge/fleet/up/pkg/shard-{index}"
        files = fleet.git(["diff", "--name-only", f"main..{branch}"], origin).splitlines()
        changed.extend(sorted({"/".join(f.split("/")[1:3]) for f in files}))
    assert sorted(changed) == sorted([*CONSUMERS, CONFLICTED])
    assert sorted(p["head"] for p in pulls) == [f"krm-merge/fleet/up/pkg/shard-{i}" for i in range(shards)]
    assert {p["title"] for p in pulls} == {f"krm-merge fleet update: {fleet.spec} to v3"}
    assert "krm-merge:conflict" in fleet.git(["show", f"krm-merge/fleet/up/pkg/shard-1:clusters/{CONFLICTED}/deploy.yaml"], origin)
    assert violations == []
    # the merged report is the run's summary; the report job fails as the fleet did
    assert report.result == "failure" and report.annotations[0].startswith("::error title=krm-merge fleet update failed::exit 1")
    (summary,) = runner.summaries
    total = len(CONSUMERS) + 2
    assert summary.startswith("## krm-merge fleet update:")
    assert f"{total} package(s): {len(CONSUMERS)} updated, 0 current, 1 conflicted, 1 failed" in summary
    assert f"clusters/{CONFLICTED}" in summary and f"clusters/{BROKEN}" in summary
    merged = report_of(runner.tmp / "report-0" / "workspace" / "fleet-report.json")
    assert merged["shards"] == {"count": shards, "reported": list(range(shards))}
    assert all(TOKEN not in output for output in runner.outputs)
