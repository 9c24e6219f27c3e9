"""The Kubernetes Indexed Job template run whole, pod by pod, under podman (issue 46).

``examples/fleet-update/kubernetes/`` is read as Kubernetes would read it and each pod of the Job is run as
the kubelet would run it: its init containers, then its container, in the fleet image (``$KRM_MERGE_FLEET_IMAGE``)
as the pod's user and group, with ``JOB_COMPLETION_INDEX`` set as the Job controller sets it, the env built
from the manifest (``envFrom`` the ConfigMap, ``valueFrom`` the Secret, ``$(VAR)`` expanded), an emptyDir of
its own, the shared volume (given to ``fsGroup``) and the Secret's files mounted read-only.  The consumers'
repository and a private upstream are bare repositories behind ``git http-backend`` (tests/git_http.py)
demanding the Secret's git credentials, and the forge is the stand-in GitHub built from GitHub's OpenAPI
description, both on 127.0.0.1, which the containers reach over the host's network.

Six consumers, one of them with a local edit that conflicts with the new version and one with a broken
Kptfile, in four shards: each index clones, updates its share, commits and pushes it to its own branch and
opens its pull request; the index with the conflict exits 3, the one with the failed package 1 (the Job's
podFailurePolicy marks both failed, not retried); then the merge Job's pod merges the reports.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from krm_merge.fleet.shard import owner
from tests.change.forge_server import ForgeServer
from tests.fleet.world import Fleet, configmap, deployment
from tests.git_http import GitHttpServer

from .tools import Orchestrators, run

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "examples" / "fleet-update" / "kubernetes"
TOKEN = "ghp_FleetJobT0kenThatMustNeverBeSeen"
GIT_USER, GIT_PASSWORD = "fleet-bot", "gitPassw0rdThatMustNeverBeSeen"
SECRET = "krm-merge-fleet-credentials"
CLEAN = ["eu-web", "us-web", "ap-web", "sa-web"]


def _documents() -> dict[tuple[str, str], dict[str, Any]]:
    return {(doc["kind"], doc["metadata"]["name"]): doc for path in sorted(MANIFESTS.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc}


def _expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion (a variable not defined stays as written)."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


def _env(container: dict[str, Any], index: int | None, maps: dict[str, dict[str, str]],
         secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """A container's environment as the kubelet builds it: the Job controller's index, envFrom, then env."""
    env = {} if index is None else {"JOB_COMPLETION_INDEX": str(index)}
    for source in container.get("envFrom", []):
        env.update(maps[source["configMapRef"]["name"]])
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = _expand(item["value"], env)
            continue
        ref = item["valueFrom"]
        if "secretKeyRef" in ref:
            env[item["name"]] = secrets[ref["secretKeyRef"]["name"]][ref["secretKeyRef"]["key"]]
        else:
            env[item["name"]] = maps[ref["configMapKeyRef"]["name"]][ref["configMapKeyRef"]["key"]]
    return env


def _give_to_group(folder: Path, group: int) -> None:
    """What the kubelet does for fsGroup: the folder is the group's, group-writable, new files inherit it."""
    if os.geteuid() == 0:
        os.chown(folder, 0, group)
        folder.chmod(0o2775)
    else:  # rootless podman maps the container's users elsewhere: open the folder to all
        folder.chmod(0o777)


class Kubelet:
    """Runs a Job's pods under podman: one per index, its containers in order, as Kubernetes would."""

    def __init__(self, podman: str, tmp: Path, images: dict[str, str], maps: dict[str, dict[str, str]],
                 secrets: dict[str, dict[str, str]], claims: dict[str, Path]) -> None:
        self.podman, self.tmp, self.images, self.maps, self.secrets, self.claims = (
            podman, tmp, images, maps, secrets, claims)
        self.outputs: list[str] = []

    def volumes(self, pod: dict[str, Any], name: str) -> dict[str, Path]:
        where: dict[str, Path] = {}
        group = pod.get("securityContext", {}).get("fsGroup")
        for volume in pod.get("volumes", []):
            if "emptyDir" in volume:
                path = self.tmp / f"{name}-{volume['name']}"
                path.mkdir(parents=True)
            elif "persistentVolumeClaim" in volume:
                path = self.claims[volume["persistentVolumeClaim"]["claimName"]]
            else:
                secret = self.secrets[volume["secret"]["secretName"]]
                path = self.tmp / f"{name}-{volume['name']}"
                path.mkdir(parents=True)
                for item in volume["secret"].get("items") or [{"key": k, "path": k} for k in secret]:
                    (path / item["path"]).write_text(secret[item["key"]])
                    (path / item["path"]).chmod(0o644)
            if group is not None and "secret" not in volume:
                _give_to_group(path, group)
            where[volume["name"]] = path
        return where

    def run_pod(self, job: dict[str, Any], index: int | None) -> dict[str, int]:
        """Each container's exit status, by name; an init container that fails ends the pod, as it would."""
        pod = job["spec"]["template"]["spec"]
        name = f"{job['metadata']['name']}-{'x' if index is None else index}"
        volumes = self.volumes(pod, name)
        security = pod.get("securityContext", {})
        statuses: dict[str, int] = {}
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            env = _env(container, index, self.maps, self.secrets)
            argv = [self.podman, "run", "--rm", "--network", "host", "--pull", "never",
                    "--security-opt=no-new-privileges", "--user", f"{security['runAsUser']}:{security['runAsGroup']}",
                    "--group-add", str(security["fsGroup"])]
            for mount in container.get("volumeMounts", []):
                argv += ["-v", f"{volumes[mount['name']]}:{mount['mountPath']}{':ro' if mount.get('readOnly') else ''}"]
            for key, value in env.items():
                argv += ["-e", f"{key}={value}"]
            if "command" in container:
                argv += ["--entrypoint", json.dumps(container["command"])]
            argv += [self.images[container["image"]], *(_expand(a, env) for a in container.get("args", []))]
            done = run(argv)
            self.outputs.append(done.stdout + done.stderr)
            statuses[container["name"]] = done.returncode
            if done.returncode != 0 and container in pod.get("initContainers", []):
                raise AssertionError(f"{name}: init container {container['name']} failed: {done.describe()}")
        return statuses


def _consumers(fleet: Fleet, conflicted: str, broken: str) -> None:
    for name in CLEAN:
        fleet.consumer(f"clusters/{name}", "v1", edits={"mine.yaml": configmap(name, "mine")})
    fleet.consumer(f"clusters/{conflicted}", "v1", edits={"deploy.yaml": deployment("web:mine")})  # v3: web:3.0
    kptfile = fleet.consumer(f"clusters/{broken}", "v1") / "Kptfile"
    kptfile.write_text(kptfile.read_text() + "  : [unclosed\n")  # its upstream still named: selected, then failed


def _apart(shards: int) -> tuple[str, str]:
    """Names for the conflicted and the broken consumer that fall in two different shards."""
    names = [f"{region}-api" for region in ("eu", "us", "ap", "sa", "af", "me", "oc", "an")]
    conflicted = names[0]
    broken = next(n for n in names[1:] if owner(n, shards) != owner(conflicted, shards))
    return conflicted, broken


def test_the_indexed_job_clones_updates_and_opens_a_pull_request_per_index(
        fleet_image: str, image: str, orchestrators: Orchestrators, tmp_path: Path) -> None:
    docs = _documents()
    job = docs[("Job", "krm-merge-fleet")]
    spec = job["spec"]
    shards = spec["completions"]
    conflicted, broken = _apart(shards)
    fleet = Fleet(tmp_path / "world")
    _consumers(fleet, conflicted, broken)
    served = tmp_path / "served"
    fleet.git(["clone", "-q", "--bare", str(fleet.up), str(served / "up.git")], tmp_path)
    (served / "up").symlink_to("up.git")  # kpt's REPO.git/DIRECTORY names the repository with or without .git
    remote = served / "acme" / "deploy.git"
    with GitHttpServer(served, credentials=f"{GIT_USER}:{GIT_PASSWORD}") as git_server:
        upstream = git_server.url("up")
        for kptfile in (fleet.mono / "clusters").glob("*/Kptfile"):
            kptfile.write_text(kptfile.read_text().replace(f"file://{fleet.up}", upstream))
        seed = tmp_path / "seed"
        shutil.copytree(fleet.mono, seed)
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "consumers at v1"]):
            fleet.git(args, seed)
        fleet.git(["clone", "-q", "--bare", str(seed), str(remote)], tmp_path)
        base = fleet.git(["rev-parse", "main"], remote)

        def branch_exists(name: str) -> bool:
            return bool(fleet.git(["for-each-ref", f"refs/heads/{name}"], remote))

        forge = ForgeServer("github", TOKEN, repo="acme/deploy", branch_exists=branch_exists)
        try:
            settings = docs[("ConfigMap", "krm-merge-fleet-settings")]["data"]
            ours = {"CONSUMERS_REPO": git_server.url("acme/deploy.git"), "CONSUMERS_BRANCH": "main", "ROOT": "clusters",
                    "UPSTREAM": f"{upstream}.git/pkg", "REF": "v3", "FORGE": "github", "FORGE_API": forge.api,
                    "FORGE_REPO": "acme/deploy"}
            assert set(settings) == set(ours)  # every setting the template asks for is one the test gives
            port = git_server.url("").rsplit(":", 1)[1].strip("/")
            secrets = {SECRET: {"token": TOKEN,
                                "git-credentials": f"http://{GIT_USER}:{GIT_PASSWORD}@127.0.0.1:{port}\n"}}
            volume = tmp_path / "volume"
            volume.mkdir()
            kubelet = Kubelet(orchestrators.podman, tmp_path / "pods", {
                "localhost/krm-merge-fleet:0.1.0": fleet_image, "localhost/krm-merge:0.1.0": image},
                {"krm-merge-fleet-settings": ours}, secrets, {"krm-merge-fleet": volume})
            exits = {index: kubelet.run_pod(job, index)["update"] for index in range(shards)}
            merged = kubelet.run_pod(docs[("Job", "krm-merge-fleet-report")], None)
            reports = {index: json.loads((volume / "reports" / f"shard-{index}.json").read_text())
                       for index in range(shards)}
            pulls = list(forge.pulls)
            violations = list(forge.violations)
        finally:
            forge.close()

    # each index's report is in the report folder, and its exit status is what its report says
    where = {owner(n, shards): n for n in (conflicted, broken)}
    for index, report in reports.items():
        statuses = {Path(p["path"]).name: p["status"] for p in report["packages"]}
        assert all(owner(name, shards) == index for name in statuses)
        expected = 1 if "failed" in statuses.values() else 3 if "conflicted" in statuses.values() else 0
        assert exits[index] == expected, (index, statuses, kubelet.outputs)
    assert exits[owner(conflicted, shards)] == 3 and exits[owner(broken, shards)] == 1, where
    assert set(spec["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"]) == {1, 3}  # both: the index failed

    # each index that wrote packages pushed its own branch, holding exactly them, and opened its pull request
    written = {index: sorted(Path(p["path"]).name for p in report["packages"] if p["status"] in ("updated", "conflicted"))
               for index, report in reports.items()}
    heads = {p["head"]: p for p in pulls}
    for index, names in written.items():
        branch = f"krm-merge/fleet/up/pkg/shard-{index}"
        if not names:
            assert branch not in heads
            continue
        files = fleet.git(["diff", "--name-only", f"{base}..{branch}"], remote).splitlines()
        assert sorted({f.split("/")[1] for f in files}) == names
        assert heads[branch]["base"] == "main" and heads[branch]["title"] == f"krm-merge fleet update: {upstream}.git/pkg to v3"
    assert sorted(n for names in written.values() for n in names) == sorted([*CLEAN, conflicted])
    assert len(pulls) == sum(1 for names in written.values() if names)
    conflict_branch = f"krm-merge/fleet/up/pkg/shard-{owner(conflicted, shards)}"
    deploy = fleet.git(["show", f"{conflict_branch}:clusters/{conflicted}/deploy.yaml"], remote)
    assert "krm-merge:conflict" in deploy and "web:mine" in deploy and "web:3.0" in deploy
    for name in CLEAN:
        clean_branch = f"krm-merge/fleet/up/pkg/shard-{owner(name, shards)}"
        assert "image: web:3.0" in fleet.git(["show", f"{clean_branch}:clusters/{name}/deploy.yaml"], remote)

    # the merge Job: one report, the conflict and the failure in it, exit 1 (a package failed)
    assert merged == {"merge": 1}, kubelet.outputs[-1]
    fleet_report = json.loads((volume / "fleet.json").read_text())
    statuses = {Path(p["path"]).name: p["status"] for p in fleet_report["packages"]}
    assert statuses == {**dict.fromkeys(CLEAN, "updated"), conflicted: "conflicted", broken: "failed"}
    assert fleet_report["shards"]["reported"] == list(range(shards))
    assert violations == []
    for output in kubelet.outputs:
        assert TOKEN not in output and GIT_PASSWORD not in output
