"""The promote functionConfig's ``pullRequest`` block: ``krm-merge run DIR`` acts on it; a kpt-run function says so."""

from __future__ import annotations

import subprocess
import sys

from tests.change.conftest import TOKEN
from tests.change.forge_server import ForgeServer
from tests.change.gitworld import GitWorld
from tests.change.helpers import BRANCH, krm_merge

CONFIG = """\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Promote
metadata:
  name: release
spec:
  pipeline: flux-system/podinfo
  fromEnvironment: dev
  value: 6.3.0
  pullRequest:
    forge: github
    forgeApi: {api}
    forgeRepo: acme/deploy
    labels: [promotion]
"""


def test_krm_merge_run_opens_the_pull_request_its_config_asks_for(world: GitWorld, github: ForgeServer) -> None:
    config = world.tmp / "promote.yaml"
    config.write_text(CONFIG.format(api=github.api))
    result = krm_merge(world, "run", str(world.package), "--fn-config", str(config), env={"GITHUB_TOKEN": TOKEN})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "https://forge.example/acme/deploy/pull/1"
    [pull] = github.pulls
    assert (pull["head"], pull["labels"]) == (BRANCH, ["promotion"])  # the same branch as the promote command's
    assert pull["title"] == "promote: flux-system/podinfo after dev=6.3.0 (1 field in 1 file)"
    assert "| release.yaml | - | HelmRelease/prod/podinfo | `spec.chart.spec.version` | `6.2.0` | `6.3.0` |" \
        in pull["body"]
    assert world.changed_files(BRANCH) == ["apps/podinfo/release.yaml"] and github.violations == []
    # the change is on the branch, not in the checkout (docs/pull-requests.md): git status is as clean as before
    assert world.git("status", "--porcelain", "--untracked-files=all") == ""
    assert "6.3.0 #" in world.remote_file(BRANCH, "apps/podinfo/release.yaml")


def test_krm_merge_run_refuses_before_writing_when_the_file_has_uncommitted_changes(
        world: GitWorld, github: ForgeServer) -> None:
    release = world.package / "release.yaml"
    release.write_text(release.read_text() + "# edited\n")
    config = world.tmp / "promote.yaml"
    config.write_text(CONFIG.format(api=github.api))
    result = krm_merge(world, "run", str(world.package), "--fn-config", str(config), env={"GITHUB_TOKEN": TOKEN})
    assert result.returncode == 1
    assert "krm-merge run: error: work tree: uncommitted changes" in result.stderr
    assert "6.2.0 #" in release.read_text() and github.pulls == []


def test_a_bad_pull_request_block_is_a_config_error_naming_the_key(world: GitWorld) -> None:
    config = world.tmp / "promote.yaml"
    config.write_text(CONFIG.format(api="x").replace("labels:", "lables:"))
    result = krm_merge(world, "run", str(world.package), "--fn-config", str(config))
    assert result.returncode == 1
    assert "functionConfig spec.pullRequest.lables: unknown key; valid keys: branch, base" in result.stderr


def test_under_kpt_the_function_says_who_opens_the_pull_request(world: GitWorld) -> None:
    release = (world.package / "release.yaml").read_text()
    config = CONFIG.format(api="https://api.github.com").replace("\n", "\n  ")
    resource_list = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "
                     + release.replace("\n", "\n  ").rstrip() + "\n- " + (world.package / "pipeline.yaml").read_text()
                     .replace("\n", "\n  ").rstrip() + "\nfunctionConfig:\n  " + config.rstrip() + "\n")
    proc = subprocess.run([sys.executable, "-m", "krm_merge"], input=resource_list, capture_output=True, text=True,
                          timeout=60, env=world.env)
    assert proc.returncode == 0, proc.stderr
    assert "6.3.0 #" in proc.stdout
    assert "pullRequest: the pull request is opened by `krm-merge run DIR` after it writes the files" in proc.stdout
