"""kustomize (``kubectl kustomize --enable-alpha-plugins``) runs the image as a
containerised transformer. kustomize always calls ``docker``; a ``docker``
shim that forwards to podman (and records what the container saw) is put
first on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from krm_merge.config import MODES

from .invocations import UNKNOWN_MODE
from .packages import write_kustomization
from .tools import Completed, DockerShim, Orchestrators, kpt_env, run, write_docker_shim

pytestmark = pytest.mark.image

MODE_NAMES = [*MODES, UNKNOWN_MODE]


def _kustomize(tools: Orchestrators, directory: Path, shim: DockerShim) -> Completed:
    env = kpt_env(path_prefix=[shim.directory])
    return run([tools.kubectl, "kustomize", "--enable-alpha-plugins", str(directory)], env=env)


@pytest.fixture()
def shim(orchestrators: Orchestrators, tmp_path: Path) -> DockerShim:
    """A docker->podman shim in a fresh directory."""
    return write_docker_shim(tmp_path / "shim", orchestrators.podman)


def test_container_transformer_runs_image(image: str, orchestrators: Orchestrators,
                                          shim: DockerShim, tmp_path: Path) -> None:
    """kustomize starts the image as nobody without network; its error result fails the build."""
    directory = tmp_path / "kustomization"
    write_kustomization(directory, {"container": {"image": image}}, {"mode": UNKNOWN_MODE})
    done = _kustomize(orchestrators, directory, shim)
    assert done.returncode != 0, done.describe()
    # kustomize prints only "exit status 1"; the error result travels in the
    # ResourceList the container wrote.
    answer = yaml.safe_load(shim.stdout_copy.read_text())
    messages = [r["message"] for r in answer.get("results") or []]
    assert any(UNKNOWN_MODE in m for m in messages), messages
    runs = [c for c in shim.calls.read_text().splitlines() if c.startswith("run ")]
    assert len(runs) == 1, runs
    assert image in runs[0] and "--network none" in runs[0] and "--user nobody" in runs[0], runs[0]


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_container_output_matches_host(mode: str, image: str, orchestrators: Orchestrators,
                                       host_function: Path, shim: DockerShim, tmp_path: Path) -> None:
    """For the exact ResourceList kustomize sends, the container answers like the host function."""
    directory = tmp_path / "kustomization"
    write_kustomization(directory, {"container": {"image": image}}, {"mode": mode})
    done = _kustomize(orchestrators, directory, shim)
    sent = shim.stdin_copy.read_text()
    assert "kind: ResourceList" in sent, done.describe()
    host = run([str(host_function)], stdin=sent)
    assert shim.stdout_copy.read_text() == host.stdout, done.describe()
    assert (done.returncode == 0) == (host.returncode == 0), f"{done.describe()}\n{host.describe()}"


def test_kubectl_kustomize_silently_skips_exec(orchestrators: Orchestrators, host_function: Path,
                                               shim: DockerShim, tmp_path: Path) -> None:
    """Documented pitfall: ``kubectl kustomize`` has no --enable-exec and skips exec functions.

    The config that fails the container build passes here untouched,
    because the function never runs.
    """
    directory = tmp_path / "kustomization"
    write_kustomization(directory, {"exec": {"path": str(host_function)}}, {"mode": UNKNOWN_MODE})
    done = _kustomize(orchestrators, directory, shim)
    assert done.returncode == 0, done.describe()
    names = sorted(doc["metadata"]["name"] for doc in yaml.safe_load_all(done.stdout) if doc)
    assert names == ["settings", "web"], done.stdout
    assert not shim.calls.exists(), "no container may have been started"
